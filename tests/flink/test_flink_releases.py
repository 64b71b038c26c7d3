"""The one live older release `make test` runs: Flink 1.20.0, the release on the registry that
shipped the most catalogued bugs a real job can show (FLINK-25920 and FLINK-37605,
docs/reference/fix-versions.md). `flipcheck flink matrix` installs it into the release cache on
first use (pip, network access), compiles the job builder with its 1.x adapters, runs both
scenarios on local Spark and must flag both, as JIRA's versions predict; the bugs' own variants
explain the logs. Every other release is held to the model through stored runs
(tests/cover/test_conform.py, tests/cover/test_flink_matrix.py)."""

import json

import pytest

from flipcheck.cli import main

pytestmark = pytest.mark.flink

RELEASE = "1.20.0"


def test_the_release_with_the_most_catalogued_bugs_is_flagged_for_each(tmp_path, capsys):
    out = tmp_path / "matrix"
    code = main(["flink", "matrix", "--bugs", "FLINK-25920,FLINK-37605", "--releases", RELEASE,
                 "--out", str(out), "--master", "local[2]"])
    printed = capsys.readouterr()
    document = json.loads((out / "matrix.json").read_text())
    cells = {cell["bug"]: cell for cell in document["cells"]}
    assert code == 0, (printed.out, [c["why"] for c in document["cells"]])
    assert document["releases"] == [RELEASE] and set(cells) == {"FLINK-25920", "FLINK-37605"}
    assert cells["FLINK-25920"]["verdict"] == "flagged" and cells["FLINK-25920"]["why"].startswith("job-finished")
    run = out / cells["FLINK-25920"]["run"]
    assert "FLINK-25920" in json.loads((run / "run.json").read_text())["cause"]  # Flink's own exception names it
    assert cells["FLINK-37605"]["verdict"] == "flagged" and cells["FLINK-37605"]["why"].startswith("committed-output")
    assert all(cell["variant_conforms"] is True and cell["expected"] == "flagged" for cell in cells.values())
    for cell in cells.values():
        run = out / cell["run"]
        assert json.loads((run / "run.json").read_text())["flink"]["version"] == RELEASE
    assert "2 cells as JIRA's versions predict, 0 not" in printed.out

"""`flipcheck flink run --flink 1.14.6`: FLIP-147's first release, from the release cache (installed
by pip on first use, which needs network access), running the chain with the job builder's 1.x
adapters: it finishes, FLIP-147 is on (1.14 defaults it to off), and the final checkpoint
commits every record."""

import json
from pathlib import Path

import pytest

from flipcheck.cli import main

pytestmark = pytest.mark.flink

RELEASE = "1.14.6"
CHAIN = str(Path(__file__).resolve().parents[2] / "examples" / "graphs" / "flink" / "chain.json")


def test_the_chain_runs_on_flink_1_14_6(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["flink", "run", CHAIN, "--out", str(out), "--records", "10",
                 "--flink", RELEASE]) == 0, capsys.readouterr().err
    summary = json.loads((out / "run.json").read_text())
    assert summary["flink"]["version"] == RELEASE and summary["flink"]["source"] in ("cache", "downloaded")
    assert summary["status"] == "FINISHED" and summary["checkpoints_completed"] >= 1
    # Every record committed exactly once: the sinks' last transactions are committed by the final
    # checkpoint the finishing tasks wait for, which only FLIP-147 (switched on by 1.14's key)
    # takes. With it off, the same run committed nothing: no checkpoint completed before the end.
    assert summary["records_committed"] == summary["records_expected"] == 20
    spec = json.loads((out / "spec.json").read_text())
    assert spec["configuration"]["execution.checkpointing.checkpoints-after-tasks-finish.enabled"] == "true"
    log = (out / "flink.log").read_text()
    assert "Finished operators for task Source: src" in log and "Completed checkpoint" in log
    # The job vertices of the plan are the ones run.json names.
    plan = json.loads((out / "plan.json").read_text())
    assert {node["id"] for node in plan["plan"]["nodes"]} == set(summary["vertices"].values())

"""Task-local recovery on real Flink 2.3 (issue 25 item 2): one `--lose-taskmanager` run (about
15 s), the richest of the three scenarios: one subtask restores from its local copy in its own
slot, the other from the primary in the new TaskManager's slot. The other scenarios are stored
runs (tests/cover/test_conform_local_recovery.py)."""

import json
import re

import pytest

from flipcheck.cli import main
from flipcheck.flink.conform import conform_files, read_run_directory
from flipcheck.flink.conform_local_recovery import conform_local_recovery
from flipcheck.flink.logs import read_logs

pytestmark = pytest.mark.flink


@pytest.fixture(scope="module")
def lost(tmp_path_factory):
    out = tmp_path_factory.mktemp("local-recovery") / "out"
    code = main(["flink", "run", "examples/graphs/flink/keyed.json", "--out", str(out), "--local-recovery",
                 "--interval-ms", "200", "--lose-taskmanager", "count:1@120"])
    return code, out


def test_a_lost_taskmanager_run_conforms_to_local_recovery_and_flip_147(lost):
    code, out = lost
    assert code == 0, (out / "jvm.out").read_text()[-2000:]
    run = json.loads((out / "run.json").read_text())
    assert run["designs"] == ["protocol", "local-recovery"] and run["failure_injected"]
    assert json.loads((out / "plan.json").read_text())["plan"]["nodes"], "the plan was fetched while INITIALIZING"
    result = conform_local_recovery(read_logs([str(out / "flink.log")]), read_run_directory(out))
    assert result.conforms, (result.first_unexplained, [c for c in result.checks if not c.ok])
    detail = next(c.detail for c in result.checks if c.name == "local-recovery-model")
    # count[1]'s TaskManager took its local copies with it: it can only read the primary.
    assert re.search(r"count\[1\] checkpoint \d+ primary", detail), detail
    protocol = conform_files(str(out / "plan.json"), [str(out / "flink.log")])
    assert protocol.conforms, (protocol.first_unexplained, [c for c in protocol.checks if not c.ok])

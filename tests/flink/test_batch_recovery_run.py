"""`flipcheck flink run --batch --jm-failover map:1 --lose-task-manager` on real Flink 2.3: one
BATCH job whose JobManager fails over while map subtask 1 is held and whose TaskManager is
replaced meanwhile (about 12 s: the recovering JobManager waits out the 5 s partition timeout).
What it logs conforms to model/batch_recovery.py, its output equals a run without failover, and
FLIP-147's validation gives it a verdict without checkpoints."""

import json
from pathlib import Path

import pytest

from flipcheck.cli import main
from flipcheck.flink.conform import conform_files, read_run_directory
from flipcheck.flink.conform_batch_recovery import conform_batch_recovery, model_config, observations
from flipcheck.flink.logs import read_logs

pytestmark = pytest.mark.flink

GRAPH = Path(__file__).resolve().parents[2] / "examples" / "graphs" / "flink" / "batch-recovery.json"


@pytest.fixture(scope="module")
def lost_task_manager(tmp_path_factory):
    out = tmp_path_factory.mktemp("batch") / "out"
    code = main(["flink", "run", str(GRAPH), "--out", str(out), "--batch", "--jm-failover", "map:1",
                 "--lose-task-manager"])
    return code, out


def test_the_batch_job_recovers_and_conforms(lost_task_manager):
    code, out = lost_task_manager
    assert code == 0, (out / "jvm.out").read_text()[-2000:]
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "FINISHED" and run["designs"] == ["protocol", "batch-recovery"]
    assert run["checkpoints_completed"] == 0 and run["records_committed"] == run["records_expected"] == 40
    reading = read_logs([str(out / "flink.log")])
    verdict = conform_batch_recovery(reading, read_run_directory(out))
    assert verdict.conforms, (verdict.first_unexplained, [c for c in verdict.checks if not c.ok])
    seen = [o for o, _ in observations(reading, model_config(json.loads((out / "plan.json").read_text()), reading))]
    # The replaced TaskManager took the sources' partitions with it: both missed, both sources rerun.
    reconcile = next(o for o in seen if o[0] == "reconcile")
    assert reconcile[2] == frozenset({(0, 1), (1, 1)}) and ("start", 0, 2) in seen and ("start", 1, 2) in seen
    protocol = conform_files(str(out / "plan.json"), [str(out / "flink.log")])
    assert protocol.conforms and protocol.checkpoints == 0

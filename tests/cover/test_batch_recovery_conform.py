"""Batch job recovery (FLIP-383) against real Flink 2.3, on stored runs (no JVM here): the three
`flipcheck flink run --batch --jm-failover ...` runs conform to model/batch_recovery.py, each
altered log is rejected naming the rule, FLIP-147's validation gives a batch run a verdict, and
bad options are one line with exit code 2."""

import json
import shutil
from pathlib import Path

import pytest

from flipcheck.cli import main
from flipcheck.flink.conform import conform_files, read_run_directory
from flipcheck.flink.conform_batch_recovery import conform_batch_recovery, model_config, observations
from flipcheck.flink.engine import BatchRun, flink_configuration, job_spec
from flipcheck.flink.logs import read_logs
from flipcheck.model import batch_recovery as spec
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs"
SOME, NONE, LOST = "batch-failover-some-finished", "batch-failover-none-finished", "batch-failover-lost-taskmanager"
DELETED = "batch-failover-deleted-shuffle-files"
GRAPH = Path(__file__).resolve().parents[2] / "examples" / "graphs" / "flink" / "batch-recovery.json"


def _verdict(folder: Path):
    run = read_run_directory(folder)
    return conform_batch_recovery(read_logs([str(folder / "flink.log")]), run)


@pytest.mark.parametrize("name", [SOME, NONE, LOST])
def test_a_stored_batch_run_conforms_to_the_batch_recovery_model(name):
    verdict = _verdict(RUNS / name)
    assert verdict.conforms, (verdict.first_unexplained, [c for c in verdict.checks if not c.ok])
    assert [c.name for c in verdict.checks] == ["model", "events-written", "failure-free-output", "job-finished"]
    assert all("not checked" not in c.detail for c in verdict.checks)
    assert verdict.as_json()["first_unexplained"] is None
    assert "batch-recovery" in json.loads((RUNS / name / "run.json").read_text())["designs"]


def test_the_scenarios_show_what_their_names_say():
    """some-finished: the sources are restored FINISHED and their partitions reserved, map 0's
    finish without a snapshot is dropped (it runs again); none-finished: the start's initialised
    events alone make the JobManager recover, nothing is restored; lost-taskmanager: both source
    partitions are missed and the sources run again."""
    def seen(name):
        folder = RUNS / name
        reading = read_logs([str(folder / "flink.log")])
        config = model_config(json.loads((folder / "plan.json").read_text()), reading)
        return [o for o, _ in observations(reading, config)]

    some = seen(SOME)
    assert ("replayed", frozenset({(0, 1), (1, 1)})) in some and ("finish", 2, None) in some
    assert ("reconcile", frozenset(), frozenset(), frozenset({(0, 1), (1, 1)})) in some and ("start", 2, 2) in some
    none = seen(NONE)
    assert ("replayed", frozenset()) in none and not any(o[0] == "finish" for o in none[:none.index(("crash",))])
    lost = seen(LOST)
    assert ("reconcile", frozenset(), frozenset({(0, 1), (1, 1)}), frozenset()) in lost and ("start", 0, 2) in lost


def _altered(tmp_path: Path, name: str, change) -> Path:
    folder = tmp_path / name
    shutil.copytree(RUNS / name, folder)
    lines = (folder / "flink.log").read_text().splitlines(keepends=True)
    (folder / "flink.log").write_text("".join(change(lines)))
    return folder


def _drop_first(text: str, after: str = ""):
    def change(lines):
        start = next(k for k, line in enumerate(lines) if after in line)
        k = next(k for k in range(start, len(lines)) if text in lines[k])
        return lines[:k] + lines[k + 1:]
    return change


def _drop_all(text: str, after: str):
    def change(lines):
        start = next(k for k, line in enumerate(lines) if after in line)
        return lines[:start] + [line for line in lines[start:] if text not in line]
    return change


def _replace(old: str, new: str):
    return lambda lines: [line.replace(old, new) for line in lines]


def _insert_after(anchor: str, new_line):
    def change(lines):
        k = next(k for k, line in enumerate(lines) if anchor in line)
        return lines[:k + 1] + [new_line(lines[k])] + lines[k + 1:]
    return change


_SRC0 = "1332df94f7a1546ce1e5ff1496b1bb27_f362c87ffabe89c8a91fa7d0a523ba6c_0_0"
_MAP0 = "1332df94f7a1546ce1e5ff1496b1bb27_23ab3a59b17e9c45f95cff4c728611fc_0_0"
_HANDLER = "org.apache.flink.runtime.scheduler.adaptivebatch.DefaultBatchJobRecoveryHandler [] - "
# Each alteration of a stored run, and the rule the model's search must name.
ALTERATIONS = {
    # src finished as a job vertex, so its finish must snapshot the coordinators (B3).
    "vertex-finish-without-snapshot": (SOME, _drop_first("Snapshot operator coordinators of Source: src", after=(
        "Source: src (2/2) (1332df94f7a1546ce1e5ff1496b1bb27_f362c87ffabe89c8a91fa7d0a523ba6c_1_0) switched from RUNNING "
        "to FINISHED")), "B3"),
    # map 0's finish had no snapshot and trailed: the replay must not restore it (B8).
    "trailing-finish-restored": (SOME, _insert_after(
        "Source: src (2/2) (1332df94f7a1546ce1e5ff1496b1bb27_f362c87ffabe89c8a91fa7d0a523ba6c_1_0) switched from CREATED to FINISHED",
        lambda line: line.replace("Source: src (2/2)", "map (1/2)").replace(
            "1332df94f7a1546ce1e5ff1496b1bb27_f362c87ffabe89c8a91fa7d0a523ba6c_1_0", _MAP0)), "B8"),
    # A partition a running consumer needs, released instead of reserved (B10).
    "needed-partition-released": (SOME, _replace(f"Partitions to be released: [], missed partitions: [], "
                                                 f"partitions to be reserved: [a91fa7d0caf37aeff362c880208e4a4b#0@{_SRC0}, ",
                                                 f"Partitions to be released: [a91fa7d0caf37aeff362c880208e4a4b#0@{_SRC0}], "
                                                 "missed partitions: [], partitions to be reserved: ["), "B10"),
    # The new JobMaster skips the recovery although the event file holds the sources' finishes:
    # its tasks are not what the replay restores (B8).
    "recovery-skipped": (SOME, _drop_first("Try to recover status from previously failed job master."), "B8"),
    # A missed partition whose producer never runs again: map starts without source 0's input (B1).
    "missed-producer-not-restarted": (LOST, _drop_all("ExecutionGraph       [] - Source: src (1/2) (",
                                                      after="successfully recovered"), "B1"),
    # Flink 2.3's missing `return` (docs/batch-recovery.md): the partition recovery throws, "recover
    # failed", and then "successfully recovered" all the same.
    "recovered-after-failed-recovery": (SOME, lambda lines: [
        line.split(" - ")[0].replace("INFO ", "WARN ") + " - Job f25fbfa4f08cc023191bc1862b2ebd25 recover failed "
        "from JM failover, fail global.\n" if "Partitions to be released" in line else line for line in lines],
        "B10"),
}


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
def test_an_altered_batch_log_is_rejected_naming_the_rule(tmp_path, alteration):
    name, change, rule = ALTERATIONS[alteration]
    verdict = _verdict(_altered(tmp_path, name, change))
    assert not verdict.conforms
    assert verdict.first_unexplained is not None and verdict.first_unexplained["rule"] == rule, verdict.first_unexplained
    assert f"rule {rule}" in verdict.first_unexplained["why"]


def test_a_job_event_never_written_fails_events_written(tmp_path):
    verdict = _verdict(_altered(tmp_path, SOME, _drop_first("Write job event ExecutionVertexFinishedEvent")))
    failed = [c for c in verdict.checks if not c.ok]
    assert not verdict.conforms and [c.name for c in failed] == ["events-written"]


def test_a_record_committed_twice_fails_the_failure_free_output(tmp_path):
    folder = tmp_path / SOME
    shutil.copytree(RUNS / SOME, folder)
    committed = next((folder / "output" / "sink" / "committed").iterdir())
    committed.write_text(committed.read_text() + committed.read_text().split()[0] + "\n")
    failed = [c.name for c in _verdict(folder).checks if not c.ok]
    assert failed == ["failure-free-output"]


def test_deleted_shuffle_files_are_reported_kept_and_fail_their_readers():
    """Divergence B-2 (docs/batch-recovery.md): the TaskManager reports the partitions whose files
    were deleted (TaskExecutor.getAndRetainPartitionWithMetrics reads its partition tracker, not the
    files), so they are reserved, not missed; map's reads fail and ordinary task failovers rerun
    the sources. The model has no task failure while a JobManager runs: the run's first task
    failover is what it cannot show, and the output is still that of a run without failover."""
    verdict = _verdict(RUNS / DELETED)
    assert not verdict.conforms and verdict.first_unexplained["rule"] == "not modelled"
    assert verdict.first_unexplained["event"].startswith("task-failover a task failover after task 3 failed")
    assert [c.name for c in verdict.checks if not c.ok] == ["model"]
    reading = read_logs([str(RUNS / DELETED / "flink.log")])
    config = model_config(json.loads((RUNS / DELETED / "plan.json").read_text()), reading)
    seen = [o for o, _ in observations(reading, config)]
    assert ("reconcile", frozenset(), frozenset(), frozenset({(0, 1), (1, 1)})) in seen
    assert sum(1 for o in seen if o[0] == "task_failover") == 2


def test_a_streaming_log_has_no_batch_recovery_to_validate():
    assert _verdict(RUNS / "join-failover") is None


def test_flip_147_gives_a_batch_run_a_verdict_without_checkpoints():
    result = conform_files(str(RUNS / SOME / "plan.json"), [str(RUNS / SOME / "flink.log")])
    assert result.conforms and result.checkpoints == 0 and result.first_unexplained is None
    assert "BATCH job takes no checkpoints" in result.checks[0].detail


def test_a_start_whose_events_were_flushed_makes_the_next_job_master_recover():
    """Recovery facts §4.8: each JobMaster that starts scheduling writes an
    ExecutionJobVertexInitializedEvent per job vertex, and needRecover() counts every event."""
    graph = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
    flink = spec.Config(graph, initialized_events=True)
    assert spec.run(flink, [("flush",), ("crash",), ("restart",)]).phase == "reconciling"
    assert spec.run(flink, [("crash",), ("restart",)]).phase == "running"       # never flushed: a fresh start
    assert spec.run(spec.Config(graph), [("crash",), ("restart",)]).phase == "running"


def test_a_batch_spec_configures_the_cluster_for_job_recovery(tmp_path):
    from flipcheck.model.graph_json import load_graph

    graph = load_graph(str(GRAPH))
    spec_ = job_spec(graph, out=tmp_path, batch=BatchRun(hold=(("map", 1),), failover=True))
    assert spec_["batch"] == {"hold": ["map:1"], "failover": True, "lose_task_manager": False,
                              "delete_shuffle_files": False, "tmp_dir": str(tmp_path.resolve() / "tmp")}
    conf = flink_configuration(spec_, "2.3.0")
    assert conf["execution.runtime-mode"] == "BATCH" and conf["execution.batch.job-recovery.enabled"] == "true"
    assert conf["high-availability.storageDir"] == str(tmp_path.resolve() / "ha")
    assert "execution.checkpointing.interval" not in conf
    assert "execution.runtime-mode" not in flink_configuration(job_spec(graph, out=tmp_path), "2.3.0")


@pytest.mark.parametrize("options, message", [
    (["--jm-failover", "map:1"], "--jm-failover: only with --batch"),
    (["--lose-task-manager"], "--lose-task-manager: only with --batch"),
    (["--batch", "--lose-task-manager"], "--lose-task-manager: only with --jm-failover"),
    (["--batch", "--delete-shuffle-files"], "--delete-shuffle-files: only with --jm-failover"),
    (["--delete-shuffle-files"], "--delete-shuffle-files: only with --batch"),
    (["--batch", "--jm-failover", "sink:0"], "--jm-failover: 'sink' is a sink v2, not a source or operator"),
    (["--batch", "--jm-failover", "map:7"], "--jm-failover: subtask 7 is outside 0..1"),
    (["--batch", "--jm-failover", "map"], "is not VERTEX:SUBTASK"),
    (["--batch", "--fail", "map:0@3"], "--fail: not with --batch"),
])
def test_a_bad_batch_option_is_one_line_and_exit_2(tmp_path, capsys, options, message):
    code = main(["flink", "run", str(GRAPH), "--out", str(tmp_path / "out"), *options])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err

"""Divergences 26 and 27 (docs/conformance.md), settled by correcting the model.

26: a source whose snapshot of a checkpoint its trigger RPC started throws declines that
checkpoint itself (rule F0, ``failed_snapshot_declines``; flip147 facts §4.12). 27: one failover
may use up as many ids as the log shows triggers failed without an id (rule F1b bounded by
``Job.ids_per_failover``, and the ``ids-in-order`` check; flip147 facts §4.6). The third cause
the same run showed: the coordinator accepts an old attempt's acknowledgement until the restore,
so those JobManager lines are read while the failover runs. Each correction switched off
rejects what it explains, naming the rule. No JVM, no long search."""

import dataclasses
from pathlib import Path

import pytest

from flipcheck.flink import conform as conform_module
from flipcheck.flink.conform import ids_check, ids_per_failover
from flipcheck.flink.logs import read_logs
from flipcheck.flink.observations import OBSERVERS, Follow
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.model.protocol import FAILED, TASK_FAILURE, Job, machine, rules_of, run, successors
from flipcheck.model.protocol.failover import failed_snapshot_declines, failover
from flipcheck.properties.protocol_trace_validation import validate

RUN = Path(__file__).parents[1] / "fixtures" / "flink_runs" / "faults-join-end-of-input"


def _job(**more) -> Job:
    graph = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
    return Job(graph, **{"records": 1, "checkpoints": 2, "failures": 1, **more})


# -- divergence 26: rule F0, the failed snapshot's own decline --------------------------------

def test_a_source_whose_snapshot_threw_declines_that_checkpoint_itself():
    job = _job(periodic_timer=True)
    s = run(job, [("trigger", 1), ("rpc", 0, 1), ("fail", 0)])
    assert s.tasks[0].phase == FAILED and s.tasks[0].outbox and s.coordinator.pending.id == 1
    label, after, notes = next(step for step in successors(job, s) if step[0][0] == "fail-decline")
    assert label == ("fail-decline", 0, 1)
    assert after.coordinator.pending is None and ("aborted", 1, TASK_FAILURE, 0) in notes
    assert after.tasks[0].outbox == () and failed_snapshot_declines(job, after) == []   # once
    assert rules_of(job, s, label, notes, after) == ("F0", "C5")


def test_a_task_with_inputs_whose_barrier_snapshot_threw_declines_nothing():
    job = _job(periodic_timer=True)
    s = run(job, [("trigger", 1), ("rpc", 0, 1), ("receive", 1, 0, ("B", 1)), ("fail", 1)])
    assert s.tasks[1].phase == FAILED and s.tasks[1].outbox   # its snapshot was taken, not acknowledged
    assert failed_snapshot_declines(job, s) == []
    acknowledged = run(job, [("trigger", 1), ("rpc", 0, 1), ("ack", 0, 1), ("fail", 0)])
    assert failed_snapshot_declines(job, acknowledged) == []   # its snapshot was done: nothing threw


_SNAPSHOT_THEN_FAILURE = [("trigger", 1), ("trigger-task", 0, 1), ("snapshot", 0, 1), ("failover",),
                          ("decline", 0, 1), ("failed", 1), ("failover-known",)]


def test_a_run_where_the_failed_snapshot_declines_conforms_and_not_without_the_rule(monkeypatch):
    """The source took the RPC and snapshotted (its lines), then failed: only F0's own decline
    explains its decline; the decline of an RPC reaching the failed task (C4) needs an RPC still
    on its way."""
    job = _job(records=0, checkpoints=0, periodic_timer=True)
    assert validate(job, _SNAPSHOT_THEN_FAILURE).conforms
    monkeypatch.setattr(machine, "COORDINATOR_ACTIONS",
                        tuple(a for a in machine.COORDINATOR_ACTIONS if a is not failed_snapshot_declines))
    verdict = validate(job, _SNAPSHOT_THEN_FAILURE)
    assert not verdict.conforms and verdict.first_unexplained == 4
    assert verdict.why.startswith("C4/C5/J6/F0:") and "no reason to decline checkpoint 1" in verdict.why


def test_a_task_failure_decline_shows_the_failure_when_it_comes_before_the_failed_line():
    """Task.triggerCheckpointBarrier declines on the task's thread before Task.doRun switches it
    to FAILED (flip147 facts §4.12): the decline's line may come first, and shows the failure."""
    observe = OBSERVERS["protocol", "decline"].observe
    event = read_logs([str(RUN / "flink.log")]).events
    decline = next(e for e in event if e.kind == "decline" and e.detail == "Task has failed.")
    follow = Follow()
    assert observe(decline, 0, follow) == [("failover",), ("decline", 0, 1)] and follow.failing
    assert observe(decline, 0, follow) == [("decline", 0, 1)]        # the failure is shown once
    closing = dataclasses.replace(decline, detail="Checkpoint was declined (task is closing)")
    assert observe(closing, 0, Follow()) == [("decline", 0, 1)]      # any other reason shows no failure


# -- divergence 27: rule F1b and the ids-in-order check ---------------------------------------

def test_a_failover_uses_up_at_most_its_bound_of_ids():
    for bound in (0, 1, 3):
        job = _job(periodic_timer=True, ids_per_failover=bound)
        s = run(job, [])
        used_up = sorted(n.coordinator.last_id for label, n, _ in successors(job, s) if label == ("failover",))
        assert used_up == list(range(bound + 1))
        _, notes = next((step, step.notes) for label, step in failover(job, s) if step.coord.last_id == bound)
        assert [n for n in notes if n[0] == "id-burned"] == [("id-burned", k) for k in range(1, bound + 1)]
    with pytest.raises(ValueError, match="ids_per_failover"):
        _job(ids_per_failover=-1)


def test_three_ids_used_up_conform_with_a_bound_of_three_and_not_of_two():
    observations = [("failover",), ("failover-known",), ("trigger", 4)]
    job = _job(records=0, checkpoints=0, periodic_timer=True, ids_per_failover=3)
    assert validate(job, observations).conforms
    verdict = validate(_job(records=0, checkpoints=0, periodic_timer=True, ids_per_failover=2), observations)
    assert not verdict.conforms and verdict.first_unexplained == 2
    assert verdict.why.startswith("C2: the next checkpoint id is ") and verdict.why.endswith(
        ", not 4 (F1b: a failover uses up at most 2 ids)"), verdict.why


def test_the_stored_run_shows_three_failed_triggers_for_the_three_ids_it_used_up():
    """After join[1]'s failover: four queued requests ran, one failed its plan (no id), three
    drew ids 11-13 and failed without a pending checkpoint (UNKNOWN_CHECKPOINT_ID); only two
    "time in queue" lines (logged for a wait over 100 ms), so those do not count them."""
    reading = read_logs([str(RUN / "flink.log")])
    assert ids_per_failover(reading) == 3
    text = (RUN / "flink.log").read_text()
    assert text.count("UNKNOWN_CHECKPOINT_ID") == 4 and text.count("checkpoint request time in queue") == 10


def _observed(reading):
    from flipcheck.flink.conform import Tasks, model_job, vertex_names
    import json

    plan = json.loads((RUN / "plan.json").read_text())
    _, job = model_job(plan, failures=3)
    return conform_module.observations_of(reading, Tasks(plan, job.graph, job))[0]


def test_the_ids_check_allows_the_used_up_ids_the_log_shows_and_no_more(tmp_path):
    reading = read_logs([str(RUN / "flink.log")])
    observed = _observed(reading)
    check = ids_check(observed, reading)
    assert check.ok and "4 ids used up by failovers" in check.detail
    # one failed trigger line taken out: ids 11-13 are no longer all shown used up
    lines = (RUN / "flink.log").read_text().splitlines(keepends=True)
    first = next(n for n, line in enumerate(lines) if "UNKNOWN_CHECKPOINT_ID" in line and n > 1900)
    altered = tmp_path / "flink.log"
    altered.write_text("".join(lines[:first] + lines[first + 1:]))
    fewer = read_logs([str(altered)])
    check = ids_check(_observed(fewer), fewer)
    assert not check.ok and "checkpoint 14 triggered after 10 (2 failed triggers without an id logged since)" in check.detail
    # without the reading each failover allows one id, as before the correction
    assert not ids_check(observed).ok and "checkpoint 14 triggered after 10" in ids_check(observed).detail


# -- the third cause: an old attempt's acknowledgement accepted until the restore -------------

def test_an_old_attempts_acknowledgement_is_read_until_the_restore(monkeypatch):
    """The sink's acknowledgement of checkpoint 10 (line 1820) came after the JobManager's FAILED
    line of join[1] (1780) and completed checkpoint 10 (1831), which the job then restored:
    SchedulerBase.restoreState aborts pending checkpoints only at the restore (flip147 facts §4.6)."""
    reading = read_logs([str(RUN / "flink.log")])
    observed = _observed(reading)
    lines = [(o, e.line) for o, e in observed]
    assert (("ack", 6, 10), 1820) in lines and lines.index((("ack", 6, 10), 1820)) > lines.index((("failover-known",), 1780))
    monkeypatch.setitem(OBSERVERS, ("protocol", "ack"), OBSERVERS["protocol", "ack"]._replace(until_restart=False))
    assert (("ack", 6, 10), 1820) not in [(o, e.line) for o, e in _observed(reading)]

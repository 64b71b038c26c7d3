"""Rule F0 (model/protocol/failover.py): a task that failed but that the JobManager has not yet
handled stops, declines every trigger RPC, and F1 follows (flip147 facts §4.10)."""

from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.model.protocol import FAILED, RUNNING, TASK_NOT_READY, Job, initial_state, rules_of, run, successors
from flipcheck.model.protocol.failover import failover, task_failure
from flipcheck.render.protocol_labels import chart_lane_of, describe_label


def _job(failures: int = 1, periodic_timer: bool = False) -> Job:
    graph = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
    return Job(graph, records=1, checkpoints=2, failures=failures, periodic_timer=periodic_timer)


def test_a_failed_task_takes_no_step_and_declines_the_trigger_rpc():
    job = _job(periodic_timer=True)   # Flink's timer fires whatever the failed source holds
    s = run(job, [("fail", 0), ("trigger", 1)])
    assert s.tasks[0].phase == FAILED and s.coordinator.pending.id == 1
    labels = [label for label, _, _ in successors(job, s)]
    assert ("emit", 0, 0) not in labels and ("rpc", 0, 1) in labels
    after, notes = next((nxt, notes) for label, nxt, notes in successors(job, s) if label == ("rpc", 0, 1))
    assert after.coordinator.pending is None and ("aborted", 1, TASK_NOT_READY, 0) in notes
    assert rules_of(job, s, ("rpc", 0, 1), notes, after) == ("C4", "C5")
    # the coordinator triggers again before the failover, as in the real run of divergence 24
    assert ("trigger", 2) in [label for label, _, _ in successors(job, after)]


def test_the_failover_follows_and_restarts_the_failed_task():
    job = _job()
    s = run(job, [("fail", 1)])
    assert not task_failure(job, s)            # one failure waits for the JobManager at a time
    restarted = run(job, [("failover",)], s)
    assert all(ts.phase == RUNNING for ts in restarted.tasks) and restarted.coordinator.failovers == 1
    assert not task_failure(job, restarted)    # the bound is used up: F0 counts against it


def test_no_task_fails_without_a_failure_to_spend():
    job = _job(failures=0)
    assert task_failure(job, initial_state(job)) == [] and failover(job, initial_state(job)) == []


def test_the_step_is_named_f0_and_drawn_on_the_failed_tasks_lane():
    job = _job()
    s = initial_state(job)
    label, nxt, notes = next(step for step in successors(job, s) if step[0] == ("fail", 1))
    assert rules_of(job, s, label, notes, nxt) == ("F0",)
    assert chart_lane_of(job, label) == job.name(1) and "fails" in describe_label(job, label)

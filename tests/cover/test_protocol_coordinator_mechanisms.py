"""The coordinator's end-of-data view (C6), the input gate's released channels (J3),
stop-with-savepoint without drain (C7, J9) and the ids a failover uses up (F1b) of the whole-job
model, step by step."""

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import (
    CANCELED, END_OF_DATA, RUNNING, SHARED_CHANNEL_STATE, STOPPED, TASK_NOT_READY, Job, is_end, run, successors,
)
from flipcheck.properties.protocol_explore import explore_job
from flipcheck.reference_impl.protocol_variants import make_job

SRC, SINK = 0, 1  # the pair graph's tasks
BOTH_ENDED = [("end-of-data", SRC), ("receive", SINK, 0, ("EOD",))]


def _labels(job, state):
    return [label for label, _, _ in successors(job, state)]


def _notes(job, state, label):
    return next(notes for candidate, _, notes in successors(job, state) if candidate == label)


@pytest.mark.parametrize("variant, view_after_failover", [("flip-147", 0), ("end-of-data-view-kept-on-failover", 0b11)])
def test_failover_clears_the_end_of_data_view(variant, view_after_failover):
    job = make_job(example_graph("pair"), variant, records=0, failures=1)
    state = run(job, BOTH_ENDED)
    assert state.coordinator.known_end_of_data == 0b11
    assert run(job, [("failover",)], state).coordinator.known_end_of_data == view_after_failover


@pytest.mark.parametrize("periodic_timer", [False, True])
def test_only_flinks_own_timer_lets_a_failover_use_up_a_checkpoint_id(periodic_timer):
    """F1b (flip147 facts §4.6): a trigger that drew its id when the failover stopped the
    scheduler; the next checkpoint skips that id. With a checkpoint pending too (divergence 42):
    the failover aborts it, and a queued request, or the timer the failover left running
    (flip147 facts §4.15), then draws an id for a plan that waits for no task."""
    job = make_job(example_graph("pair"), records=1, failures=1, periodic_timer=periodic_timer)
    state = run(job, [])
    after = sorted(n.coordinator.last_id for label, n, _ in successors(job, state) if label == ("failover",))
    assert after == ([0, 1] if periodic_timer else [0])
    if periodic_timer:
        burned = next(n for label, n, _ in successors(job, state) if label == ("failover",) and n.coordinator.last_id)
        assert [label for label, _, _ in successors(job, burned) if label[0] == "trigger"] == [("trigger", 2)]
    pending = run(job, [("trigger", 1)], state)
    assert [n.coordinator.last_id for label, n, _ in successors(job, pending) if label == ("failover",)] == (
        [1, 2] if periodic_timer else [1])


def test_with_flip_147_off_a_finishing_task_drops_its_snapshot_without_declining():
    """J7 with FLIP-147 off (flip147 facts §4.7): the checkpoint stays pending, waiting for an
    acknowledgement that never comes, until the job's end suspends it (C8)."""
    job = make_job(example_graph("pair"), "pre-flip-147", records=1)
    ended = run(job, [("trigger", 1), ("rpc", SRC, 1), ("emit", SRC, 0), ("end-of-data", SRC)])
    assert ended.tasks[SRC].outbox
    notes = _notes(job, ended, ("finish", SRC))
    assert ("cancelled", SRC, (1,)) in notes and not [n for n in notes if n[0] == "aborted"]
    finished = run(job, [("finish", SRC)], ended)
    assert finished.coordinator.pending.id == 1 and finished.tasks[SRC].outbox == ()
    assert ("ack", SRC, 1) not in _labels(job, finished)


@pytest.mark.parametrize("variant", ["flip-147", "cancel-pending-on-finish"])
def test_a_task_finishes_once_its_acknowledgement_was_sent_not_handled(variant):
    """J7 (flip147 facts §4.4, §4.13; divergence 36): a task whose only wait is the
    acknowledgement in its outbox finishes with it on its way; the coordinator takes it later
    (C5), or never when the job ends first. A variant that does not wait cancels it."""
    job = make_job(example_graph("pair"), variant, records=0, periodic_timer=True)
    waiting = run(job, BOTH_ENDED + [("trigger", 1), ("rpc", SRC, 1), ("ack", SRC, 1), ("receive", SINK, 0, ("B", 1)),
                                     ("ack", SINK, 1), ("notify", SRC, 1), ("trigger", 2), ("rpc", SRC, 2)])
    assert [k for k, _ in waiting.tasks[SRC].outbox] == [2]
    notes = _notes(job, waiting, ("finish", SRC))
    finished = run(job, [("finish", SRC)], waiting)
    if variant == "flip-147":
        assert not [n for n in notes if n[0] in ("cancelled", "aborted")]
        assert [k for k, _ in finished.tasks[SRC].outbox] == [2]
        handled = run(job, [("ack", SRC, 2)], finished)
        assert handled.coordinator.pending.acked == 1 << SRC and handled.tasks[SRC].outbox == ()
    else:
        assert ("cancelled", SRC, (2,)) in notes and finished.tasks[SRC].outbox == ()
        assert ("ack", SRC, 2) not in _labels(job, finished)


def test_the_trigger_believing_every_task_ended_is_noted():
    job = make_job(example_graph("pair"), records=0)
    state = run(job, BOTH_ENDED)
    assert ("end-of-data-trigger", 0b11) in _notes(job, state, ("trigger", 1))


@pytest.mark.parametrize("variant, polls_again", [("flip-147", False), ("released-channel-stays-queued", True)])
def test_a_released_channel_is_polled_again_only_by_the_variant(variant, polls_again):
    job = make_job(example_graph("pair"), variant, records=0)
    state = run(job, BOTH_ENDED + [("trigger", 1), ("rpc", SRC, 1), ("ack", SRC, 1), ("receive", SINK, 0, ("B", 1)),
                                   ("ack", SINK, 1), ("notify", SRC, 1), ("finish", SRC),
                                   ("receive", SINK, 0, ("EOP",))])
    assert (("poll-released", SINK, 0) in _labels(job, state)) == polls_again
    if polls_again:
        cancelled = run(job, [("poll-released", SINK, 0)], state)
        assert cancelled.tasks[SINK].phase == CANCELED
        assert not [label for label in _labels(job, cancelled) if label[0] != "report-finished"]


@pytest.mark.parametrize("options", [{"mode": "unaligned"}, {"failures": 1}])
def test_stop_with_savepoint_needs_aligned_mode_without_failures(options):
    with pytest.raises(ValueError, match="stop_with_savepoint"):
        Job(example_graph("pair"), stop_with_savepoint=True, **options)


def test_a_task_past_end_of_data_declines_the_stop_and_triggering_resumes():
    job = make_job(example_graph("pair"), records=0, stop_with_savepoint=True)
    state = run(job, [("end-of-data", SRC), ("stop-with-savepoint", 1)])
    notes = _notes(job, state, ("rpc", SRC, 1))
    assert ("savepoint-declined", SRC, 1) in notes
    assert ("aborted", 1, TASK_NOT_READY, SRC) in notes
    state = run(job, [("rpc", SRC, 1)], state)
    assert state.coordinator.pending is None and state.tasks[SRC].sync_savepoint == 0
    assert ("trigger", 2) in _labels(job, state)
    assert ("stop-with-savepoint", 2) not in _labels(job, state)  # once


def test_a_completed_stop_stops_the_tasks_without_end_of_data():
    job = make_job(example_graph("pair"), records=1, stop_with_savepoint=True)
    state = run(job, [("stop-with-savepoint", 1), ("rpc", SRC, 1)])
    assert state.tasks[SRC].sync_savepoint == 1
    assert not [label for label in _labels(job, state) if label[0] in ("emit", "end-of-data")]  # synchronous savepoint
    state = run(job, [("ack", SRC, 1), ("receive", SINK, 0, ("B", 1)), ("ack", SINK, 1), ("notify", SRC, 1)], state)
    assert state.tasks[SRC].sync_savepoint == STOPPED and state.tasks[SRC].phase == RUNNING
    assert state.tasks[SRC].notified == 0  # the savepoint is not the final checkpoint
    assert ("trigger", 2) not in _labels(job, state)
    state = run(job, [("finish", SRC), ("notify", SINK, 1), ("receive", SINK, 0, ("EOP",)), ("finish", SINK)], state)
    assert is_end(job, state) and state.committed == ((), ())  # r0 was never emitted: it resumes from the savepoint


def test_with_the_variant_a_stopped_task_past_end_of_data_waits_forever():
    job = make_job(example_graph("pair"), "stop-without-drain-after-end-of-data", records=0, stop_with_savepoint=True)
    state = run(job, BOTH_ENDED + [("stop-with-savepoint", 1), ("rpc", SRC, 1), ("ack", SRC, 1),
                                   ("receive", SINK, 0, ("B", 1)), ("ack", SINK, 1), ("notify", SRC, 1),
                                   ("notify", SINK, 1)])
    assert [ts.phase for ts in state.tasks] == [END_OF_DATA, END_OF_DATA]
    assert _labels(job, state) == []


def test_the_correct_protocol_keeps_every_property_when_stopped_with_a_savepoint():
    result = explore_job(make_job(example_graph("chain"), records=1, stop_with_savepoint=True))
    assert result.complete and result.counterexamples == []
    stopped_ends = [s for s in result.graph.states if is_end(result.job, s) and s.coordinator.stop_id]
    drained_ends = [s for s in result.graph.states if is_end(result.job, s) and not s.coordinator.stop_id]
    assert stopped_ends and drained_ends


def test_a_checkpoint_completed_without_a_running_tasks_snapshot_breaks_the_cut():
    """A plan that waits only for the tasks it triggers completes checkpoint 1 on the source's
    acknowledgement alone: consistent_cut names the task the cut has no state for (the user
    protocol of docs/api.md; before, the property crashed on the missing snapshot)."""
    from dataclasses import replace

    from flipcheck.model.jobgraph import POINTWISE, JobGraph
    from flipcheck.model.plan import CheckpointPlan
    from flipcheck.model.protocol import Job, Protocol

    class WaitForTriggeredOnly(Protocol):
        def plan(self, graph):
            plan = super().plan(graph)
            return replace(plan, tasks_to_wait_for=plan.tasks_to_trigger) if isinstance(plan, CheckpointPlan) else plan

    graph = JobGraph.build([("src", 1), ("map", 1), ("sink", 1)], [("src", "map", POINTWISE), ("map", "sink", POINTWISE)])
    found = explore_job(Job(graph, protocol=WaitForTriggeredOnly(), records=1), stop_at_first=True)
    (cex,) = found.counterexamples
    assert cex.property == "consistent_cut" and "without a snapshot of map[0]" in cex.message
    assert [label[0] for label in cex.labels] == ["trigger", "rpc", "ack"]
    assert not explore_job(Job(graph, records=1), stop_at_first=True).counterexamples


@pytest.mark.parametrize("mode", ["unaligned", "aligned"])
def test_a_task_sharing_the_channel_state_file_of_a_failed_snapshot_may_decline(mode):
    """F0 (flip147 facts §4.14; divergence 39): since Flink 1.17 subtasks write unaligned channel
    state into shared files, and one subtask's aborted snapshot fails the others' writes of that
    checkpoint; their asynchronous parts decline it. Only once a task failed with its own snapshot
    of the checkpoint under way, only in unaligned mode, only a task whose snapshot is under way."""
    job = make_job(example_graph("pair"), mode=mode, records=1, failures=1)
    both_snapshotted = run(job, [("trigger", 1), ("rpc", SRC, 1), ("receive", SINK, 0, ("B", 1))])
    assert [k for k, _ in both_snapshotted.tasks[SINK].outbox] == [1]
    assert not [label for label in _labels(job, both_snapshotted) if label[0] == "shared-decline"]   # nobody failed
    failed = run(job, [("fail", SRC)], both_snapshotted)
    shared = [label for label in _labels(job, failed) if label[0] == "shared-decline"]
    if mode == "aligned":
        assert shared == []          # aligned checkpoints write no channel state
        return
    assert shared == [("shared-decline", SINK, 1)]
    assert ("aborted", 1, SHARED_CHANNEL_STATE, SINK) in _notes(job, failed, shared[0])
    declined = run(job, shared, failed)
    assert declined.coordinator.pending is None and declined.tasks[SINK].outbox == ()
    # a failed task whose snapshot had already left (acknowledged) aborts nobody else's
    acknowledged = run(job, [("ack", SRC, 1), ("fail", SRC)], both_snapshotted)
    assert not [label for label in _labels(job, acknowledged) if label[0] == "shared-decline"]


def test_an_unaligned_snapshot_waiting_for_barriers_is_under_way_for_the_shared_file():
    """Divergence 40: an unaligned snapshot is taken at the first barrier and writes the in-flight
    data until the last (J5u), so a task whose snapshot threw there, or that shares the file of
    one that did, has its snapshot under way before any acknowledgement is ready. The declining
    task's snapshot ends: its last barrier makes no acknowledgement."""
    from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph

    graph = JobGraph.build([("src", 2), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
    job = make_job(graph, mode="unaligned", records=1, failures=1)
    src0, src1, sink = 0, 1, 2
    first_barrier = run(job, [("trigger", 1), ("rpc", src0, 1), ("rpc", src1, 1), ("receive", sink, 0, ("B", 1))])
    assert first_barrier.tasks[sink].snapshot[0] == 1 and first_barrier.tasks[sink].outbox == ()
    # the sink's snapshot threw at its first barrier: the sources' snapshots shared its file
    sink_failed = run(job, [("fail", sink)], first_barrier)
    assert sorted(label for label in _labels(job, sink_failed) if label[0] == "shared-decline") == [
        ("shared-decline", src0, 1), ("shared-decline", src1, 1)]
    # a source failed with its acknowledgement not yet left: the waiting sink may decline
    src_failed = run(job, [("fail", src0)], first_barrier)
    assert ("shared-decline", sink, 1) in _labels(job, src_failed)
    declined = run(job, [("shared-decline", sink, 1)], src_failed)
    assert declined.tasks[sink].snapshot is None and declined.coordinator.pending is None
    assert run(job, [("receive", sink, 1, ("B", 1))], declined).tasks[sink].outbox == ()


@pytest.mark.parametrize("coordinator_failures", [False, True])
def test_a_coordinators_failing_snapshot_fails_the_checkpoint_before_any_task_hears_of_it(coordinator_failures):
    """C2f (flip147 facts §4.16): only with ``coordinator_failures`` (trace validation), a trigger
    may take its id and fail at once, with no trigger RPC sent; the next trigger takes the next id."""
    from flipcheck.model.protocol import Job
    from flipcheck.model.protocol.state import COORDINATOR_FAILURE

    job = Job(example_graph("pair"), records=1, periodic_timer=True, coordinator_failures=coordinator_failures)
    state = run(job, [])
    failing = [label for label in _labels(job, state) if label[0] == "trigger-fails"]
    if not coordinator_failures:
        assert failing == []
        return
    assert failing == [("trigger-fails", 1)]
    assert ("aborted", 1, COORDINATOR_FAILURE, None) in _notes(job, state, failing[0])
    failed = run(job, failing, state)
    assert failed.coordinator.pending is None and failed.rpcs == state.rpcs and failed.coordinator.last_id == 1
    assert ("trigger", 2) in _labels(job, failed)

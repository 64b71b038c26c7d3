"""Flink's own unit tests of FLIP-27 source coordination (recovery facts §3.7 "Tests"), ported to the
reference implementation (reference_impl/split_assignment.py)."""

import pytest

from flipcheck.model.split_assignment import Config
from flipcheck.reference_impl.split_assignment import (
    IllegalArgumentException, IllegalStateException, SourceJob, SplitAssignmentTracker,
)
from flipcheck.reference_impl.split_assignment_variants import CORRECT_VARIANTS, MUTANTS, VARIANTS, make_job

# -- SplitAssignmentTrackerTest ------------------------------------------------------------------


def test_record_incremental_split_assignment():
    tracker = SplitAssignmentTracker()
    tracker.record_split_assignment({0: ["a", "b"], 1: ["c"]})
    tracker.record_split_assignment({0: ["b", "d"]})
    assert tracker.uncheckpointed_assignments == {0: ["a", "b", "d"], 1: ["c"]}


def test_on_checkpoint():
    tracker = SplitAssignmentTracker()
    tracker.record_split_assignment({0: ["a"]})
    tracker.on_checkpoint(123)
    assert tracker.uncheckpointed_assignments == {} and tracker.assignments_by_checkpoint_id == {123: {0: ["a"]}}


def test_on_checkpoint_complete():
    tracker = SplitAssignmentTracker()
    tracker.record_split_assignment({0: ["a"]})
    tracker.on_checkpoint(100)
    tracker.record_split_assignment({0: ["b"]})
    tracker.on_checkpoint(101)
    tracker.on_checkpoint_complete(100)
    assert tracker.assignments_by_checkpoint_id == {101: {0: ["b"]}}


def _two_epochs() -> SplitAssignmentTracker:
    tracker = SplitAssignmentTracker()
    tracker.record_split_assignment({0: ["a"]})
    tracker.on_checkpoint(100)
    tracker.record_split_assignment({0: ["b"]})
    tracker.on_checkpoint(101)
    return tracker


def test_get_and_remove_uncheckpointed_assignment():
    assert _two_epochs().get_and_remove_uncheckpointed_assignment(0, 99) == ["a", "b"]


def test_get_and_remove_splits_after_some_checkpoint():
    tracker = _two_epochs()
    assert tracker.get_and_remove_uncheckpointed_assignment(0, 100) == ["b"]
    assert tracker.assignments_by_checkpoint_id == {100: {0: ["a"]}, 101: {}}


def test_snapshot_state_and_restore_state_batch():
    tracker = SplitAssignmentTracker()
    tracker.record_split_assignment({0: ["a"], 2: ["c", "d"]})
    restored = SplitAssignmentTracker()
    restored.restore_state(tracker.snapshot_state())
    assert restored.uncheckpointed_assignments == {0: ["a"], 2: ["c", "d"]}


# -- SourceCoordinatorTest / SourceCoordinatorContextTest -------------------------------------------


def test_subtask_failed_and_revert_uncompleted_assignments():
    job = SourceJob(Config(readers=1, splits=6, checkpoints=3, failures=1))
    for action in [("register", 0), ("assign", 0), ("assign", 0), ("trigger",)]:
        job.apply(action)
    for action in [("deliver", 0), ("deliver", 0), ("trigger_tasks",), ("deliver", 0), ("assign", 0)]:
        job.apply(action)
    job.apply(("expire",))   # checkpoint 100 of the test: taken, never completed
    job.apply(("fail", 0))
    assert job.holder.coordinator.context.registered_readers == {}
    coordinator = job.holder.coordinator
    coordinator.subtask_reset(0, -1)   # subtaskReset(0, 99): before every tracked epoch
    assert all(0 not in m for m in coordinator.tracker.assignments_by_checkpoint_id.values())
    assert 0 not in coordinator.tracker.uncheckpointed_assignments
    assert coordinator.enumerator.unassigned == [0, 1, 2, 3, 4, 5]


def test_failed_subtask_do_not_revert_completed_checkpoint():
    job = SourceJob(Config(readers=1, splits=6, checkpoints=3, failures=1))
    for action in [("register", 0), ("assign", 0), ("assign", 0), ("deliver", 0), ("deliver", 0), ("trigger",),
                   ("trigger_tasks",), ("deliver", 0), ("notify",), ("fail", 0)]:
        job.apply(action)
    coordinator = job.holder.coordinator
    assert coordinator.enumerator.unassigned == [2, 3, 4, 5]
    assert coordinator.tracker.state() == ((), ())


def test_assign_split_to_unregistered_reader_fails():
    job = SourceJob(Config(readers=2, splits=2))
    with pytest.raises(IllegalArgumentException):
        job.holder.coordinator.context.assign_splits({1: [0]})


def test_reset_to_checkpoint_after_start_fails():
    job = SourceJob(Config(readers=1, splits=1))
    with pytest.raises(IllegalStateException):
        job.holder.coordinator.reset_to_checkpoint(1, (0,))


# -- SubtaskGatewayImplTest / OperatorCoordinatorHolderTest -----------------------------------------


def _job_with_reader():
    job = SourceJob(Config(readers=1, splits=3, checkpoints=2, failures=1))
    job.apply(("register", 0))
    return job


def test_events_pass_through_open_gateway():
    job = _job_with_reader()
    job.apply(("assign", 0))
    assert job.transport[0] == [("split", 0)]


def test_closing_marked_gateway_and_not_closing_unmarked_gateway():
    job = _job_with_reader()
    gateway = job.holder.gateways[0]
    assert not gateway.try_close_gateway(7)
    gateway.mark_for_checkpoint(7)
    assert gateway.try_close_gateway(7) and gateway.blocked_events == {7: []}


def test_events_are_blocked_after_checkpoint_future_completes():
    job = _job_with_reader()
    job.apply(("trigger",))
    job.apply(("assign", 0))
    assert job.transport[0] == [] and job.holder.gateways[0].blocked_events == {1: [0]}


def test_acknowledge_checkpoint_event_releases_blocked_events():
    job = _job_with_reader()
    for action in [("trigger",), ("assign", 0), ("trigger_tasks",)]:
        job.apply(action)
    job.holder.acknowledge_checkpoint_event(0, 1)
    assert job.transport[0] == [("barrier", 1), ("split", 0)]


def test_aborted_checkpoint_releases_blocked_events():
    job = _job_with_reader()
    for action in [("trigger",), ("assign", 0), ("expire",)]:
        job.apply(action)
    assert job.transport[0] == [("split", 0)]


def test_restore_opens_gateway_events():
    job = SourceJob(Config(readers=1, splits=3, checkpoints=2, failures=1))
    for action in [("register", 0), ("trigger",), ("assign", 0)]:
        job.apply(action)
    job.holder.reset_to_checkpoint(-1, None)
    assert all(not g.blocked_events for g in job.holder.gateways.values())


def test_checkpoint_completion_waits_for_event_futures():
    job = _job_with_reader()
    for action in [("assign", 0), ("trigger",)]:
        job.apply(action)
    assert job.holder.done is None and job.holder.checkpoint[2] == ((0, 0),)
    job.apply(("deliver", 0))
    assert job.holder.done == (1, (1, 2))


def test_checkpoint_fails_if_sending_event_failed_before_trigger():
    job = _job_with_reader()
    for action in [("assign", 0), ("lose", 0), ("trigger",), ("detect", 0)]:
        job.apply(action)
    assert job.checkpoints.pending is None and not job.tasks[0].alive


def test_regressing_checkpoint_ids_are_refused():
    gateway = _job_with_reader().holder.gateways[0]
    gateway.mark_for_checkpoint(5)
    with pytest.raises(IllegalStateException):
        gateway.mark_for_checkpoint(4)
    gateway.mark_for_checkpoint(-1)   # BATCH_CHECKPOINT_ID may go back


# -- the registry ---------------------------------------------------------------------------------------


def test_snapshot_and_restore_round_trip():
    job = _job_with_reader()
    for action in [("assign", 0), ("trigger",), ("assign", 0)]:
        job.apply(action)
    snapshot = job.snapshot()
    other = SourceJob(job.config).restore(snapshot)
    assert other.view() == job.view() and other.enabled() == job.enabled() and other.snapshot() == snapshot


def test_registry_names_engine_correct_alternatives_and_mutants():
    assert set(VARIANTS) == set(CORRECT_VARIANTS) | set(MUTANTS)
    assert len(MUTANTS) >= 3
    for name, (issue, description) in MUTANTS.items():
        assert description and (issue is None or issue.startswith("FLINK-")), name
    with pytest.raises(ValueError, match="unknown variant"):
        make_job(Config(), "nope")
    with pytest.raises(ValueError, match="coordinator design"):
        SourceJob(Config(design="task-reconnect"))

"""Named variants of Flink's source coordination: historical bugs and rejected designs.

Each variant is a :class:`~flipcheck.reference_impl.split_assignment.SourceJob` whose one class
has one method overridden; ``source`` names the Flink issue or seed text, the docstring's first
line says the mechanism. The suite must catch every mutant
(``tests/quality/test_split_assignment_mutants_caught.py``); ``valve-2021`` is a correct
alternative (the pre-FLINK-28606 valve) and must pass everything.

* ``reset-returns-all-epochs`` — FLINK-20413 (umbrella FLINK-20290).
* ``return-splits-on-failure`` — before FLINK-20396: splits go back when the attempt fails.
* ``no-event-gateway`` — events after the coordinator snapshot are not held (seed: "careful
  coordination between split assignment and checkpoint triggering"; FLINK-28606's gateways).
* ``checkpoint-ignores-event-futures`` — FLINK-21996 / FLINK-23233.
* ``tasks-before-coordinator`` — FLINK-18641.
* ``add-splits-back-dropped`` — a connector enumerator that ignores ``addSplitsBack``.
* ``tracker-survives-global-reset`` — the coordinator is reset in place, not recreated.

Example
-------
>>> from flipcheck.model.split_assignment import Config
>>> job = make_job(Config(readers=1, splits=1), "reset-returns-all-epochs")
>>> for action in [("register", 0), ("assign", 0), ("deliver", 0), ("trigger",), ("trigger_tasks",),
...                ("deliver", 0), ("fail", 0), ("reset", 0)]:
...     job.apply(action)
>>> job.view().pool, job.view().splits       # split 0 is restored by the reader and returned too
(frozenset({0}), (frozenset({0}),))
>>> sorted(MUTANTS)[:3]
['add-splits-back-dropped', 'checkpoint-ignores-event-futures', 'no-event-gateway']
"""

from __future__ import annotations

from flipcheck.model.split_assignment import BARRIER, Config

from .split_assignment import (
    CheckpointCoordinator, OperatorCoordinatorHolder, PendingCheckpoint, SourceCoordinator, SourceJob,
    SplitAssignmentTracker, StaticSplitEnumerator, SubtaskGatewayImpl,
)
from .user_variants import lookup_variant

__all__ = ["ENGINE", "VARIANTS", "MUTANTS", "CORRECT_VARIANTS", "make_job", "variant_class"]

ENGINE = "flink"


# -- FLINK-20413 -----------------------------------------------------------------------------


class _AllEpochsTracker(SplitAssignmentTracker):
    def returned_epochs(self, restored_checkpoint_id: int) -> list[int]:
        return sorted(self.assignments_by_checkpoint_id)


class _AllEpochsCoordinator(SourceCoordinator):
    def __init__(self, holder, splits):
        super().__init__(holder, splits, tracker_class=_AllEpochsTracker)


class _AllEpochsHolder(OperatorCoordinatorHolder):
    coordinator_class = _AllEpochsCoordinator


class ResetReturnsAllEpochs(SourceJob):
    """``getAndRemoveUncheckpointedAssignment`` returns the splits of every tracked epoch, so a
    split from a checkpoint that completed but was not yet notified goes back to the enumerator
    although the reader restores it from that checkpoint: assigned twice."""

    name = "reset-returns-all-epochs"
    flink_issue = 'FLINK-20413'
    source = "FLINK-20413 (umbrella FLINK-20290 'split duplication'); recovery facts §3.2 SplitAssignmentTracker"
    holder_class = _AllEpochsHolder


# -- before FLINK-20396 ----------------------------------------------------------------------


class _ReturnOnFailureCoordinator(SourceCoordinator):
    def execution_attempt_failed(self, subtask: int, attempt: int) -> None:
        super().execution_attempt_failed(subtask, attempt)
        # subtaskFailed(): no restored checkpoint known yet, so everything not known to be
        # covered by a notified checkpoint goes back now.
        splits = self.tracker.get_and_remove_uncheckpointed_assignment(subtask, self.holder_notified())
        if splits:
            self.enumerator.add_splits_back(splits, subtask)

    def holder_notified(self) -> int:
        return self.context.holder.job.notified

    def subtask_reset(self, subtask: int, checkpoint_id: int) -> None:
        self.context.subtask_reset(subtask)


class _ReturnOnFailureHolder(OperatorCoordinatorHolder):
    coordinator_class = _ReturnOnFailureCoordinator


class ReturnSplitsOnFailure(SourceJob):
    """Splits go back in ``subtaskFailed`` (when the attempt fails), before the restored
    checkpoint is known: a checkpoint the failed reader had acknowledged can still complete and
    be restored, with the returned splits in it."""

    name = "return-splits-on-failure"
    flink_issue = 'FLINK-20396'
    source = "FLINK-20396 (subtaskReset with the restored checkpoint id replaced subtaskFailed)"
    holder_class = _ReturnOnFailureHolder


# -- the gateway -------------------------------------------------------------------------------


class _OpenGateway(SubtaskGatewayImpl):
    def try_close_gateway(self, checkpoint_id: int) -> bool:
        return checkpoint_id in self.current_marked  # "closed", but nothing is ever blocked


class _OpenGatewayHolder(OperatorCoordinatorHolder):
    gateway_class = _OpenGateway


class NoEventGateway(SourceJob):
    """Events sent after the coordinator snapshot are not held: one can reach the reader before
    that checkpoint's barrier, so the split is both unassigned in the enumerator's snapshot and
    in the reader's."""

    name = "no-event-gateway"
    flink_issue = None
    source = ("seed 003 comparison table: 'Careful coordination between split assignment and checkpoint "
              "triggering'; recovery facts §3.5 SubtaskGatewayImpl (FLINK-28606), the older OperatorEventValve")
    holder_class = _OpenGatewayHolder


class _Valve2021Holder(OperatorCoordinatorHolder):
    def acknowledge_checkpoint_event(self, subtask: int, checkpoint_id: int) -> None:
        pass  # no AcknowledgeCheckpointEvent yet

    def after_source_barrier_injection(self, checkpoint_id: int) -> None:
        for gateway in self.gateways.values():
            gateway.open_gateway_and_unmark_checkpoint(checkpoint_id)


class Valve2021(SourceJob):
    """One valve per coordinator, reopened right after the barriers were injected
    (``afterSourceBarrierInjection``): correct as long as event RPCs are FIFO with the trigger."""

    name = "valve-2021"
    flink_issue = None
    source = "recovery facts §3.5: 'Old (2021–2022): one valve per coordinator, reopened at afterSourceBarrierInjection(id)'"
    holder_class = _Valve2021Holder


# -- FLINK-21996 / FLINK-23233 -----------------------------------------------------------------


class _NoWaitHolder(OperatorCoordinatorHolder):
    def waiting_futures(self) -> tuple:
        return ()


class CheckpointIgnoresEventFutures(SourceJob):
    """The coordinator checkpoint completes without waiting for the events sent before it: a lost
    AddSplitEvent is noticed only after the reader acknowledged the checkpoint, which completes
    without the split anywhere; restoring it loses the split."""

    name = "checkpoint-ignores-event-futures"
    flink_issue = 'FLINK-21996'
    source = "FLINK-21996 (lost operator-event RPCs), FLINK-23233 (checkpoint confirmed before failed events were processed)"
    holder_class = _NoWaitHolder


# -- FLINK-18641 --------------------------------------------------------------------------------


class _TasksFirst(CheckpointCoordinator):
    def trigger(self) -> None:
        checkpoint_id = self.next_id
        self.next_id += 1
        self.pending = PendingCheckpoint(checkpoint_id, None, True, (None,) * self.parallelism)
        for subtask in range(self.parallelism):
            if self.job.tasks[subtask].alive:
                self.job.transport[subtask].append((BARRIER, checkpoint_id))

    def can_trigger_tasks(self) -> bool:
        """(Here: the coordinator checkpoint can start, or its result can be collected.)"""
        holder = self.job.holder
        return (self.pending is not None and self.pending.coordinator_state is None
                and (holder.checkpoint is None or holder.done is not None))

    def trigger_tasks(self) -> None:
        """The coordinator checkpoint, after the tasks were triggered."""
        holder = self.job.holder
        if holder.checkpoint is None and holder.done is None:
            holder.checkpoint_coordinator(self.pending.id)
        if self.pending is not None and holder.done is not None and holder.done[0] == self.pending.id:
            self.pending = self.pending._replace(coordinator_state=holder.done[1])
            self.maybe_complete()


class _TasksFirstHolder(OperatorCoordinatorHolder):
    def acknowledge_checkpoint_event(self, subtask: int, checkpoint_id: int) -> None:
        if checkpoint_id <= self.gateways[subtask].latest_attempted:  # no gateway was marked yet
            super().acknowledge_checkpoint_event(subtask, checkpoint_id)


class TasksBeforeCoordinator(SourceJob):
    """The source tasks are triggered before the coordinator checkpoint is taken: a split
    assigned in between is in neither the reader's snapshot nor the enumerator's."""

    name = "tasks-before-coordinator"
    flink_issue = 'FLINK-18641'
    source = "FLINK-18641 (tasks are triggered only after all coordinator checkpoints complete); recovery facts §3.5 Ordering"
    checkpoint_coordinator_class = _TasksFirst
    holder_class = _TasksFirstHolder


# -- connector bug ----------------------------------------------------------------------------------


class _DroppingEnumerator(StaticSplitEnumerator):
    def add_splits_back(self, splits: list, subtask: int) -> None:
        pass


class _DroppingCoordinator(SourceCoordinator):
    def __init__(self, holder, splits):
        super().__init__(holder, splits, enumerator_class=_DroppingEnumerator)


class _DroppingHolder(OperatorCoordinatorHolder):
    coordinator_class = _DroppingCoordinator


class AddSplitsBackDropped(SourceJob):
    """The enumerator ignores ``addSplitsBack``: splits of a failed reader are silently skipped."""

    name = "add-splits-back-dropped"
    flink_issue = None
    source = ("recovery facts §3.8 Known issues: a review comment (StarRocks connector PR #503): 'addSplitsBack must lead to "
              "re-assignment, or the splits are silently skipped'")
    holder_class = _DroppingHolder


# -- RecreateOnResetOperatorCoordinator --------------------------------------------------------------


class _KeepTrackerHolder(OperatorCoordinatorHolder):
    def recreate_coordinator(self) -> SourceCoordinator:
        fresh = super().recreate_coordinator()
        fresh.tracker = fresh.context.tracker = self.coordinator.tracker   # the old epochs survive
        return fresh


class TrackerSurvivesGlobalReset(SourceJob):
    """On a global failover the split tracker is carried over instead of starting empty: it keeps
    assignments made after the restored checkpoint, and a later reader reset returns them
    although the restored enumerator already holds them."""

    name = "tracker-survives-global-reset"
    flink_issue = None
    source = ("recovery facts §3: 'the tracker starts empty after a global reset, because the coordinator is recreated' "
              "(RecreateOnResetOperatorCoordinator)")
    holder_class = _KeepTrackerHolder


class FlinkJob(SourceJob):
    """Flink as shipped (recovery facts §3, the current per-subtask gateways)."""

    name = ENGINE
    flink_issue = None
    source = "recovery facts §3"


VARIANTS: dict[str, type[SourceJob]] = {
    cls.name: cls
    for cls in (
        FlinkJob, Valve2021, ResetReturnsAllEpochs, ReturnSplitsOnFailure, NoEventGateway,
        CheckpointIgnoresEventFutures, TasksBeforeCoordinator, AddSplitsBackDropped, TrackerSurvivesGlobalReset,
    )
}
CORRECT_VARIANTS = (ENGINE, "valve-2021")


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


# name -> (Flink issue or None, one-line description)
MUTANTS: dict[str, tuple[str | None, str]] = {
    name: (cls.flink_issue, _first_line(cls.__doc__))
    for name, cls in VARIANTS.items() if name not in CORRECT_VARIANTS
}


def make_job(config: Config, variant: str = ENGINE) -> SourceJob:
    """A fresh job of ``variant``; ValueError naming the known ones otherwise."""
    return variant_class(variant)(config)


def variant_class(variant: str) -> type[SourceJob]:
    """The class of ``variant``, or the user's class a spec names (:mod:`.user_variants`);
    ValueError naming the known ones otherwise."""
    return lookup_variant(variant, VARIANTS, SourceJob, "variant")

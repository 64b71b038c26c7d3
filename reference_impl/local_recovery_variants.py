"""Named variants of task-local recovery: historical Flink bugs and designs the seed rejects.

Each variant is a :class:`~flipcheck.reference_impl.local_recovery.TaskLocalRecovery` whose
bundle swaps one class for a subclass overriding one method; ``part`` names the part of the
design it changes (``write``, ``store``, ``restore``, ``scheduling``). :data:`LOCAL_RECOVERY_ENGINES`
maps every name (the engine ``flink`` first) to its class.

Example
-------
>>> from flipcheck.model.local_recovery import Slot, SlotRequest
>>> requests = [SlotRequest(0, previous=10, location=1), SlotRequest(1, previous=11, location=1)]
>>> engine("flink-before-9635").assign_slots(requests, free=[Slot(11, 1), Slot(12, 2)], fresh=1).slots
(Slot(allocation=11, tm=1), Slot(allocation=12, tm=2))
"""

from __future__ import annotations

from flipcheck.model.local_recovery import Assignment

from .local_recovery import (
    AsyncCheckpointRunnable,
    BackendRestorerProcedure,
    CheckpointStreamWithResultProvider,
    DuplicatingCheckpointOutputStream,
    LocationPreferenceSlotSelectionStrategy,
    PreviousAllocationSlotSelectionStrategy,
    PrimaryAndSecondaryStream,
    PrioritizedOperatorSubtaskStateBuilder,
    SlotSharingExecutionSlotAllocator,
    StreamFailure,
    TaskLocalRecovery,
    TaskLocalStateStoreImpl,
)
from .user_variants import lookup_variant

__all__ = ["LOCAL_RECOVERY_ENGINES", "VARIANTS", "engine", "variant_class"]


# -- writing -----------------------------------------------------------------------------------


class _RethrowSecondary(PrimaryAndSecondaryStream):
    def secondary_failed(self, primary):
        raise StreamFailure("secondary stream failed")


class _DuplicatingRethrows(CheckpointStreamWithResultProvider):
    primary_and_secondary_class = _RethrowSecondary


class _RunnableRethrowingSecondary(AsyncCheckpointRunnable):
    stream_provider = _DuplicatingRethrows


class SecondaryFailureFailsCheckpoint(TaskLocalRecovery):
    """A failed local write fails the whole snapshot, so the checkpoint is declined although its
    primary copy is complete."""

    name = "secondary-failure-fails-checkpoint"
    source = "seed: 'a failure to produce the secondary, local copy will not fail the checkpoint'"
    part = "write"
    snapshot_runnable_class = _RunnableRethrowingSecondary


class _PrimaryFailureTolerated(DuplicatingCheckpointOutputStream):
    primary_failure = None

    def write(self, length):
        try:
            self.primary.write(length)
        except StreamFailure as failure:
            self.primary_failure = failure
        if self.secondary_failure is None:
            try:
                self.secondary.write(length)
            except StreamFailure as failure:
                self.handle_secondary_failure(failure)
        if self.primary_failure is not None and self.secondary_failure is not None:
            raise self.primary_failure

    def close_and_get_primary_handle(self):
        if self.primary_failure is not None:
            return self.close_and_get_secondary_handle()  # the local file stands in for the primary
        return super().close_and_get_primary_handle()


class _ToleratingProvider(CheckpointStreamWithResultProvider):
    duplicating_stream_class = _PrimaryFailureTolerated


class _RunnableToleratingPrimaryFailure(AsyncCheckpointRunnable):
    stream_provider = _ToleratingProvider


class LocalCopyRescuesPrimary(TaskLocalRecovery):
    """When the primary write fails but the local copy is complete, the task acknowledges anyway
    (the local copy "is the checkpoint"): the checkpoint completes without a durable copy."""

    name = "local-copy-rescues-primary"
    source = "seed: 'A checkpoint will fail if the primary copy could not be created, even if the secondary copy was successfully created'"
    part = "write"
    snapshot_runnable_class = _RunnableToleratingPrimaryFailure


# -- the local store ----------------------------------------------------------------------------


class _NoPruneOnRestore(TaskLocalStateStoreImpl):
    def prune_after_restore(self, checkpoint_id):
        pass


class FlinkBefore8777(TaskLocalRecovery):
    """A restore keeps every other local copy, so repeated failures pile up local state."""

    name = "flink-before-8777"
    flink_issue = "FLINK-8777"
    source = "recovery facts §2.4 Retention: prune(id != restoreId) on restore (FLINK-8777, eager cleanup)"
    part = "store"
    local_store_class = _NoPruneOnRestore


class _AbortKeepsUnregisteredDirectory(TaskLocalStateStoreImpl):
    def abort_checkpoint(self, aborted):
        if aborted in self.stored:
            super().abort_checkpoint(aborted)


class FlinkBefore28515(TaskLocalRecovery):
    """Aborting a checkpoint whose local copy was never registered leaves its directory on disk."""

    name = "flink-before-28515"
    flink_issue = "FLINK-28515"
    source = "recovery facts §2.4 Retention: abortCheckpoint deletes the directory of a never-registered id (FLINK-28515)"
    part = "store"
    local_store_class = _AbortKeepsUnregisteredDirectory


class _ConfirmDiscardsConfirmed(TaskLocalStateStoreImpl):
    def discarded_on_confirm(self, checkpoint_id, confirmed):
        return checkpoint_id <= confirmed


class ConfirmDiscardsConfirmed(TaskLocalRecovery):
    """``confirm(n)`` discards ``n`` too, so the latest completed checkpoint has no local copy
    and no task ever recovers locally."""

    name = "confirm-discards-confirmed"
    source = "recovery facts §2.4 Retention: 'discard ids < n, stopping at the first id >= n'"
    part = "store"
    local_store_class = _ConfirmDiscardsConfirmed


class _RetrieveLatest(TaskLocalStateStoreImpl):
    def retrieve_local_state(self, checkpoint_id):
        older = [i for i in self.stored if i <= checkpoint_id]
        return (max(older), self.stored[max(older)]) if older else None


class RetrieveLatestBefore(TaskLocalRecovery):
    """The store answers a request for checkpoint ``n`` with its latest copy at or before ``n``,
    so a task can restore a local copy of an older checkpoint than the primary's."""

    name = "retrieve-latest-before"
    source = "recovery facts §2.7 Invariants: 'The local store returns a snapshot for a checkpoint id other than the one requested' (never)"
    part = "store"
    local_store_class = _RetrieveLatest


class _AbortIgnored(TaskLocalStateStoreImpl):
    def abort_checkpoint(self, aborted):
        pass


class AbortNotForwarded(TaskLocalRecovery):
    """The local store ignores aborts: a local copy of an aborted checkpoint stays until a later
    confirmation happens to discard it."""

    name = "abort-not-forwarded"
    source = "recovery facts §2.4 Retention: abortCheckpoint(n) discards exactly n"
    part = "store"
    local_store_class = _AbortIgnored


class _StoresAfterDispose(TaskLocalStateStoreImpl):
    def store_local_state(self, checkpoint_id, snapshot=None):
        self.stored[checkpoint_id] = snapshot
        self.directories.directories.add(checkpoint_id)


class DisposeKeepsAccepting(TaskLocalRecovery):
    """A disposed store still registers snapshots stored later (an asynchronous snapshot finishing
    after the task was released), so their files are never deleted."""

    name = "dispose-keeps-accepting"
    source = "recovery facts §2.3 Write path 6: 'A store after dispose() discards the snapshot immediately'"
    part = "store"
    local_store_class = _StoresAfterDispose


# -- restoring ----------------------------------------------------------------------------------


class _ApproveOneToOne(PrioritizedOperatorSubtaskStateBuilder):
    def build(self):
        """2021: an alternative is approved only when the JM state is one handle and the
        alternative is one handle of the same key-group range (``resolvePrioritizedAlternatives``)."""
        approved = [tuple(a) for a in self.alternatives
                    if len(self.jm) == 1 and len(a) == 1 and self.matches(a[0], self.jm[0])]
        return (*approved, self.jm)


class FlinkBefore33341(TaskLocalRecovery):
    """Keyed state uses a local copy only when primary and local are one handle each with the same
    range, so partial local copies (or several handles) are never used."""

    name = "flink-before-33341"
    flink_issue = "FLINK-33341"
    source = "recovery facts §2.5 Restore path: 2021 approve rule vs FLINK-33341 mixed alternative; seed 'recover local parts locally'"
    part = "restore"
    prioritized_builder_class = _ApproveOneToOne


class _FirstOptionOnly(BackendRestorerProcedure):
    def try_next(self, attempt):
        return False


class NoFallbackToPrimary(TaskLocalRecovery):
    """The restore gives up after the first (local) alternative fails instead of retrying from
    the primary copy."""

    name = "no-fallback-to-primary"
    source = "seed: 'If any problem occurs during the recovery from the secondary copy, Flink will transparently retry to recover the task from the primary copy'"
    part = "restore"
    backend_restorer_class = _FirstOptionOnly


class _LocalAsWholeState(PrioritizedOperatorSubtaskStateBuilder):
    def build(self):
        locals_ = [tuple(a) for a in self.alternatives if a]
        return (*locals_, self.jm)


class LocalCopyAsWholeState(TaskLocalRecovery):
    """A local copy is restored as the whole state, so the key groups it lacks (a failed local
    file) come back empty instead of from the primary."""

    name = "local-copy-as-whole-state"
    source = "seed: 'It is possible that the task-local copy contains only parts of the full task state'"
    part = "restore"
    prioritized_builder_class = _LocalAsWholeState


class _MatchOverlapping(PrioritizedOperatorSubtaskStateBuilder):
    def matches(self, local, remote):
        return local.start < remote.end and remote.start < local.end


class MatchOverlappingRanges(TaskLocalRecovery):
    """A local handle replaces every primary handle its key-group range overlaps, so after a
    change of the handle layout key groups are restored twice or from the wrong handle."""

    name = "match-overlapping-ranges"
    source = "recovery facts §2.5 FLINK-33341: local handles replace primary ones by equal KeyGroupRange"
    part = "restore"
    prioritized_builder_class = _MatchOverlapping


class _DropPrimaryWhenLocalComplete(PrioritizedOperatorSubtaskStateBuilder):
    def build(self):
        alternatives = super().build()
        mixed = alternatives[0]
        if len(alternatives) > 1 and all(h.location == "local" for h in mixed):
            return (mixed,)  # "the local copy is complete, the primary is not needed"
        return alternatives


class DropPrimaryWhenLocalComplete(TaskLocalRecovery):
    """When the local copy covers every key group, the primary is left out of the alternatives,
    so an unreadable local file fails the restore although the primary reads."""

    name = "drop-primary-when-local-complete"
    source = "recovery facts §2.7 Invariants: 'JM state is missing from the restore alternatives or is not last' (never)"
    part = "restore"
    prioritized_builder_class = _DropPrimaryWhenLocalComplete


# -- scheduling ---------------------------------------------------------------------------------


class _NoReservedAllocations(PreviousAllocationSlotSelectionStrategy):
    def candidates(self, free, profile):
        return list(free)


class _AllocatorWithoutBlacklist(SlotSharingExecutionSlotAllocator):
    strategy_class = _NoReservedAllocations


class FlinkBefore9635(TaskLocalRecovery):
    """The fallback may pick a free slot that is another recovering task's previous slot, which
    then steals a third one's: cascading steals, fewer local recoveries."""

    name = "flink-before-9635"
    flink_issue = "FLINK-9635"
    source = "seed: 'avoid the cascading effect of tasks stealing their previous slots from one another'"
    part = "scheduling"
    slot_allocator_class = _AllocatorWithoutBlacklist


class _AllocatorByLocation(SlotSharingExecutionSlotAllocator):
    strategy_class = LocationPreferenceSlotSelectionStrategy


class LocationPreferenceOnly(TaskLocalRecovery):
    """Slots are chosen by location preference alone (the batch-job strategy), ignoring previous
    allocations: tasks on one TaskManager swap slots and lose their local state."""

    name = "location-preference-only"
    flink_issue = "FLINK-19142"
    source = "recovery facts §2.1 Configuration: a BATCH job uses the plain location-preference strategy (FLINK-19142)"
    part = "scheduling"
    slot_allocator_class = _AllocatorByLocation


class _FreshSlotOnly(PreviousAllocationSlotSelectionStrategy):
    def candidates(self, free, profile):
        return []


class _AllocatorFreshOnly(SlotSharingExecutionSlotAllocator):
    strategy_class = _FreshSlotOnly


class SeedFreshSlotOnly(TaskLocalRecovery):
    """The seed as written: a task whose previous slot is gone always requests a fresh slot from
    the resource manager, so free slots nobody had before stay idle and, when the resource
    manager has too few, tasks stay unscheduled."""

    name = "seed-fresh-slot-only"
    source = "seed: 'If this slot is not available, the task will request a new, fresh slot from the resource manager'"
    part = "scheduling"
    slot_allocator_class = _AllocatorFreshOnly


class _AllocatorKeepsChosenSlots(SlotSharingExecutionSlotAllocator):
    def allocate(self, requests, free, resource_manager):
        retriever = self.profile_retriever_class(requests)
        strategy = self.strategy_class()
        slots = []
        for request in requests:  # the chosen slot is not taken out of the pool
            slot = strategy.select_best_slot_for_profile(list(free), retriever.get_slot_profile(request))
            slots.append(slot if slot is not None else resource_manager.request_new_slot())
        return Assignment(tuple(slots))


class SlotNotRemovedFromPool(TaskLocalRecovery):
    """A slot chosen for one request stays in the free pool, so a later request of the bulk gets
    the same slot."""

    name = "slot-not-removed-from-pool"
    source = "recovery facts §2.6 Allocation-preserving scheduling (a free slot is allocated once)"
    part = "scheduling"
    slot_allocator_class = _AllocatorKeepsChosenSlots


VARIANTS = {
    cls.name: cls
    for cls in (
        SecondaryFailureFailsCheckpoint, LocalCopyRescuesPrimary,
        FlinkBefore8777, FlinkBefore28515, ConfirmDiscardsConfirmed, RetrieveLatestBefore, AbortNotForwarded,
        DisposeKeepsAccepting,
        FlinkBefore33341, NoFallbackToPrimary, LocalCopyAsWholeState, MatchOverlappingRanges,
        DropPrimaryWhenLocalComplete,
        FlinkBefore9635, LocationPreferenceOnly, SeedFreshSlotOnly, SlotNotRemovedFromPool,
    )
}
LOCAL_RECOVERY_ENGINES = {TaskLocalRecovery.name: TaskLocalRecovery, **VARIANTS}


def engine(name: str = "flink") -> TaskLocalRecovery:
    """An instance of the engine or variant ``name``; ValueError naming the known ones."""
    return variant_class(name)()


def variant_class(name: str) -> type[TaskLocalRecovery]:
    """The class of variant ``name``, or the user's class a spec names
    (:mod:`.user_variants`); ValueError naming the known ones otherwise."""
    return lookup_variant(name, LOCAL_RECOVERY_ENGINES, TaskLocalRecovery, "local-recovery variant")

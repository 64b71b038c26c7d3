"""Named variants of the approximate-recovery engine: Flink as shipped, historical bugs, and the
designs the seed rejects or postpones.

Each variant is an :class:`~flipcheck.reference_impl.approximate_recovery.ApproximateLocalRecovery`
whose bundle swaps one class for a subclass overriding one method; ``part`` says which part of
the design it changes (``failover``, ``subpartition``, ``barriers``, ``dataflow``), ``flink_issue`` the Flink
issue it re-creates, ``source`` where it comes from. :data:`APPROXIMATE_RECOVERY_ENGINES` maps
every name (the engine ``flip135`` first) to its class.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
>>> sorted(engine("flink-before-28701").restart_set(g, {("sink", 0)}))   # the source restarts too
[('sink', 0), ('src', 0)]
>>> [name for name, cls in APPROXIMATE_RECOVERY_ENGINES.items() if cls.part == "barriers"]
['flink-no-barrier-drop', 'drop-below-restore-id', 'drop-strictly-below', 'no-abort-on-restart']
"""

from __future__ import annotations

from .approximate_recovery import (
    ApproximateBarrierFilter,
    ApproximateLocalRecovery,
    ApproximateRecoveryRun,
    ApproximateRecoveryScheduler,
    BufferWritingResultPartition,
    PipelinedApproximateSubpartition,
    PipelinedRegionComputeUtil,
    PipelinedSubpartition,
    RegionFailoverResultPartitionAvailabilityChecker,
    RestartPipelinedRegionFailoverStrategy,
    TaskDeploymentDescriptor,
)
from .user_variants import lookup_variant

__all__ = ["APPROXIMATE_RECOVERY_ENGINES", "VARIANTS", "SHIPPED", "engine", "variant_class"]


# -- failover ----------------------------------------------------------------------------------


class _MergeEveryPipelinedEdge(PipelinedRegionComputeUtil):
    def merges_across(self, partition_type):
        return True


class _RegionsOfPipelinedEdges(RestartPipelinedRegionFailoverStrategy):
    region_util_class = _MergeEveryPipelinedEdge


class FlinkBefore19693(ApproximateLocalRecovery):
    """Regions merge across the approximate edges as across PIPELINED ones, so a failure restarts
    the whole connected region (the seed's "regional failover strategy" and Flink before
    downstream failover)."""

    name = "flink-before-19693"
    flink_issue = "FLINK-19693"
    source = "seed Milestone One: 'If a non-sink vertex fails, a regional failover strategy takes place'"
    part = "failover"
    failover_strategy_class = _RegionsOfPipelinedEdges


class _CheckerBefore28701(RegionFailoverResultPartitionAvailabilityChecker):
    def is_available(self, producer, partition_type, failed_partitions):
        return producer not in failed_partitions and self.is_tracked(partition_type) and partition_type.reconsumable


class _StrategyBefore28701(RestartPipelinedRegionFailoverStrategy):
    checker_class = _CheckerBefore28701


class FlinkBefore28701(ApproximateLocalRecovery):
    """The availability checker accepts only re-consumable partitions, so every approximate input
    partition looks unavailable and the producer of a restarted task restarts too."""

    name = "flink-before-28701"
    flink_issue = "FLINK-28701"
    source = "recovery facts §1.2 Key classes: FLINK-28701 added the explicit PIPELINED_APPROXIMATE case"
    part = "failover"
    failover_strategy_class = _StrategyBefore28701


class _CurrentPartitionTracker(RegionFailoverResultPartitionAvailabilityChecker):
    def is_tracked(self, partition_type):
        return partition_type.release_by_scheduler


class _StrategyWithCurrentTracker(RestartPipelinedRegionFailoverStrategy):
    checker_class = _CurrentPartitionTracker


class UntrackedApproximatePartitions(ApproximateLocalRecovery):
    """The current JM partition tracker tracks only partitions the scheduler releases; approximate
    ones are released upstream, so the production checker calls them unavailable and restarts
    their producers."""

    name = "untracked-approximate-partitions"
    flink_issue = None
    source = "recovery facts §1.3 Partition tracking [obs]: current JobMasterPartitionTrackerImpl"
    part = "failover"
    failover_strategy_class = _StrategyWithCurrentTracker


class _FailedTaskOnly(RestartPipelinedRegionFailoverStrategy):
    restarts_consumer_regions = False


class SingleTaskRecovery(ApproximateLocalRecovery):
    """Only the failed task restarts; its consumers keep running and must reconnect downstream,
    which milestone one does not support (and a restarted source replays into them)."""

    name = "single-task-recovery"
    flink_issue = None
    source = "seed Milestone Three: 'a failed task leads itself to restart'"
    part = "failover"
    failover_strategy_class = _FailedTaskOnly


class _EveryFailureLosesInputs(RestartPipelinedRegionFailoverStrategy):
    def get_tasks_needing_restart(self, failed, failed_partitions=frozenset()):
        return super().get_tasks_needing_restart(failed, failed_partitions | set(self.producer_tasks[failed]))


class EveryFailureIsPartitionFailure(ApproximateLocalRecovery):
    """Every failure is handled as if its cause held a PartitionException for the failed task's
    inputs, so the failed task's producers restart too (and lose what they read since the
    checkpoint from the tasks that keep running)."""

    name = "every-failure-is-partition-failure"
    flink_issue = None
    source = "recovery facts §1.3 rule (b): a producer restarts only when its partition is marked failed"
    part = "failover"
    failover_strategy_class = _EveryFailureLosesInputs


# -- the subpartition ---------------------------------------------------------------------------


class _NoAttemptCheck(PipelinedApproximateSubpartition):
    def check_attempt(self, attempt):
        pass


class FlinkNoAttemptCheck(ApproximateLocalRecovery):
    """Flink's createReadView as shipped: any request replaces the current view, so a zombie
    attempt connecting late takes the subpartition from the newer attempt."""

    name = "flink-no-attempt-check"
    flink_issue = None
    source = "recovery facts §1.4 createReadView (no attempt check) vs seed Point 1 Orphan/Zombie Tasks"
    part = "subpartition"
    subpartition_class = _NoAttemptCheck


class _WriterWithoutPartialLength(BufferWritingResultPartition):
    def partial_record_length(self, partial_bytes):
        return 0


class FlinkBefore19547(ApproximateLocalRecovery):
    """Buffers carry no partial-record length, so a reconnected consumer's first data is the rest
    of the record its predecessor was reading."""

    name = "flink-before-19547"
    flink_issue = "FLINK-19547"
    source = "seed Partial Records; recovery facts §1.4 FLINK-19547 adds partialRecordLength"
    part = "subpartition"
    partition_writer_class = _WriterWithoutPartialLength


class _CleanupOneBuffer(PipelinedApproximateSubpartition):
    def build_slice_buffer(self, consumer):
        if self.is_partial_buffer_cleanup_required:
            consumer.cleanup_partial_record()
            self.is_partial_buffer_cleanup_required = False
        return consumer.buffer.build()


class CleanupFirstBufferOnly(ApproximateLocalRecovery):
    """The cleanup flag clears after one buffer even when the partial record fills it, so the
    rest of a record spanning three buffers reaches the new consumer."""

    name = "cleanup-first-buffer-only"
    flink_issue = None
    source = "recovery facts §1.4 cleanupPartialRecord returns false for a whole-buffer continuation (testSkipPartialDataLongRecordOccupyEntireBuffer)"
    part = "subpartition"
    subpartition_class = _CleanupOneBuffer


class ReleaseOnConsumption(ApproximateLocalRecovery):
    """Plain PIPELINED partitions: a subpartition is consumed once and releasing the view releases
    the partition, so a restarted consumer cannot find its input."""

    name = "release-on-consumption"
    flink_issue = None
    source = "seed Reconnects to Upstream: 'upstream tasks release produced partitions upon all of its subpartitions consumed'"
    part = "subpartition"
    subpartition_class = PipelinedSubpartition


class _KeepBlocked(PipelinedApproximateSubpartition):
    def release_view(self):
        blocked = self.is_blocked
        super().release_view()
        self.is_blocked = blocked


class KeepBlockedOnReconnect(ApproximateLocalRecovery):
    """Releasing the old view keeps the subpartition blocked by the failed consumer's barrier
    alignment, so the restarted consumer never receives data."""

    name = "keep-blocked-on-reconnect"
    flink_issue = None
    source = "seed Missing Events: 'the upstream subpartition has to reset isBlockedByCheckpoint'"
    part = "subpartition"
    subpartition_class = _KeepBlocked


class _KeepSequence(PipelinedApproximateSubpartition):
    def release_view(self):
        sequence = self.sequence_number
        super().release_view()
        self.sequence_number = sequence


class KeepSequenceNumber(ApproximateLocalRecovery):
    """The sequence number is not reset for the new view, so the restarted consumer's first buffer
    does not carry 0 and its input channel rejects it as reordered."""

    name = "keep-sequence-number"
    flink_issue = None
    source = "seed Point4 Credits: 'Upstream credits are reset to the initial state'"
    part = "subpartition"
    subpartition_class = _KeepSequence


class _KeepOldView(PipelinedApproximateSubpartition):
    def release_view(self):
        if self.read_view is not None:
            self.read_view = None  # forgotten, never released
            self.is_partial_buffer_cleanup_required = True
            self.is_blocked = False
            self.sequence_number = 0


class OldViewKept(ApproximateLocalRecovery):
    """A new view is created without releasing the old one, so two views of one subpartition are
    alive when the failed consumer could not release its own (broken TM connection)."""

    name = "old-view-kept"
    flink_issue = None
    source = "seed Point2: 'the old view will be released before a new one can be created'"
    part = "subpartition"
    subpartition_class = _KeepOldView


class _DiscardOnReconnect(ApproximateRecoveryRun):
    def reconnect(self, items, half_read):
        return ()


class DiscardBuffersOnReconnect(ApproximateLocalRecovery):
    """A restarted consumer's input subpartitions drop every buffer emitted before it reconnects,
    not just the partial record, so data the failed task never read is lost too."""

    name = "discard-buffers-on-reconnect"
    flink_issue = None
    source = "seed Partial Records option 2: 'all emitted buffers before the downstream side reconnects are discarded'"
    part = "dataflow"
    recovery_class = _DiscardOnReconnect


# -- barriers after the restart --------------------------------------------------------------------


class _DropNothing(ApproximateBarrierFilter):
    def drops(self, checkpoint_id):
        return False


class FlinkNoBarrierDrop(ApproximateLocalRecovery):
    """Flink as shipped: no barrier filter; an old barrier blocks a channel of the restarted task
    until a newer checkpoint's barrier subsumes it (the seed's option 2)."""

    name = "flink-no-barrier-drop"
    flink_issue = None
    source = "recovery facts §1.5 'Not found in Flink code'; seed Missing Events option 2"
    part = "barriers"
    barrier_filter_class = _DropNothing


class _DeployRestoreId(ApproximateRecoveryScheduler):
    def deployment(self, coordinator, restore_id):
        return TaskDeploymentDescriptor(restore_id, restore_id)


class DropBelowRestoreId(ApproximateLocalRecovery):
    """The descriptor carries the restored checkpoint's id (the only id Flink deploys), so
    barriers of checkpoints triggered after it still block the restarted task."""

    name = "drop-below-restore-id"
    flink_issue = None
    source = "recovery facts §1: JobManagerTaskRestore.restoreCheckpointId is the only id passed in deployment"
    part = "barriers"
    scheduler_class = _DeployRestoreId


class _DropStrictlyBelow(ApproximateBarrierFilter):
    def drops(self, checkpoint_id):
        return checkpoint_id < self.deployment.max_checkpoint_id


class DropStrictlyBelow(ApproximateLocalRecovery):
    """Off by one: barriers strictly below the max id are dropped, so the newest pre-restart
    checkpoint's barrier still blocks the restarted task."""

    name = "drop-strictly-below"
    flink_issue = None
    source = "seed Missing Events option 1: 'drop any barrier that is no-bigger than the id'"
    part = "barriers"
    barrier_filter_class = _DropStrictlyBelow


class _KeepPending(ApproximateRecoveryScheduler):
    def restore_state(self, coordinator):
        pass


class NoAbortOnRestart(ApproximateLocalRecovery):
    """Pending checkpoints survive the restart; the restarted task drops their barriers, so the
    pending one never completes and (one concurrent checkpoint) no new one is ever triggered."""

    name = "no-abort-on-restart"
    flink_issue = None
    source = "seed Checkpoint Coordinator: 'all pending checkpoints are aborted' on restart; option 1's caveat"
    part = "barriers"
    scheduler_class = _KeepPending


# -- Flink as shipped ------------------------------------------------------------------------------


class FlinkShipped(ApproximateLocalRecovery):
    """Flink as shipped: neither the seed's zombie rule nor its barrier dropping."""

    name = "flink-shipped"
    flink_issue = None
    source = "recovery facts §1 (lirui-apache/flink 2021): FLINK-19632, FLINK-19693"
    part = "shipped"
    subpartition_class = _NoAttemptCheck
    barrier_filter_class = _DropNothing


VARIANTS = {
    cls.name: cls
    for cls in (
        FlinkBefore19693, FlinkBefore28701, UntrackedApproximatePartitions, SingleTaskRecovery,
        EveryFailureIsPartitionFailure, DiscardBuffersOnReconnect,
        FlinkNoAttemptCheck, FlinkBefore19547, CleanupFirstBufferOnly, ReleaseOnConsumption,
        KeepBlockedOnReconnect, KeepSequenceNumber, OldViewKept,
        FlinkNoBarrierDrop, DropBelowRestoreId, DropStrictlyBelow, NoAbortOnRestart,
    )
}
# Flink as shipped differs from the seed on purpose (recovery facts §1): checked, with its differences expected.
SHIPPED = {FlinkShipped.name: FlinkShipped}
APPROXIMATE_RECOVERY_ENGINES = {ApproximateLocalRecovery.name: ApproximateLocalRecovery, **VARIANTS, **SHIPPED}


def engine(name: str = "flip135") -> ApproximateLocalRecovery:
    """An instance of the engine or variant ``name``; ValueError naming the known ones."""
    return variant_class(name)()


def variant_class(name: str) -> type[ApproximateLocalRecovery]:
    """The class of variant ``name``, or the user's class a spec names
    (:mod:`.user_variants`); ValueError naming the known ones otherwise."""
    return lookup_variant(name, APPROXIMATE_RECOVERY_ENGINES, ApproximateLocalRecovery, "approximate-recovery variant")

"""Named variants of the task's barrier handling: the seed's rejected design and historical bugs.

Each variant is a :class:`~flipcheck.reference_impl.barriers.task.Task` subclass that overrides
one method of Flink's implementation (most through a handler subclass); everything else is
Flink's. ``modes(config)`` says in which configurations the variant differs from Flink at all
(elsewhere it behaves exactly like it), ``source`` where it comes from.

Example
-------
>>> from flipcheck.model.barriers import Config, barrier, end_of_partition
>>> cfg = Config(channels=2)
>>> task = VARIANTS["eop-not-aligned"](cfg)
>>> task.process(barrier(1, 0)), task.process(end_of_partition(1))
((('alignment_start', 1), ('blocked', 0)), ())
>>> task.view().pending                        # waits for channel 1 forever
1
"""

from __future__ import annotations

from flipcheck.model.barriers import (
    AT_LEAST_ONCE, INPUT_END_OF_STREAM, SUBSUMED, UNALIGNED, UNBLOCKED, Config,
)

from .handler import InputChannels, SingleCheckpointBarrierHandler
from .task import Task
from .tracker import CheckpointBarrierTracker

__all__ = ["VARIANTS", "BarrierVariant"]


def _exactly_once(config: Config) -> bool:
    return config.mode != AT_LEAST_ONCE


def _flag_on(config: Config) -> bool:
    return config.after_finished


class BarrierVariant(Task):
    """A named variant of :class:`Task`; ``modes`` says where it can differ from Flink at all."""

    source = ""


# -- the seed's rejected alternative ---------------------------------------------------------------


class _InsertBarrierHandler(SingleCheckpointBarrierHandler):
    def process_end_of_partition(self, channel):
        if not self.after_finished:
            return super().process_end_of_partition(channel)
        # The channel inserts the pending checkpoint's barrier right before its EndOfPartition;
        # the handler itself is unmodified and only excludes the channel from later checkpoints.
        if self.is_checkpoint_pending() and channel not in self.aligned_channels:
            self.process_barrier(self.pending_checkpoint_barrier, channel, False)
        self.num_open_channels -= 1


class InsertBarrierBeforeEop(BarrierVariant):
    """Seed, Rejected Alternatives, "Insert Barriers On Received EndOfPartition at the Task Side":
    "when received EndOfPartition from one channel, CheckpointBarrierHandler inserts the barriers
    for the pending checkpoints into this channel, right before the EndOfPartition event. These
    barriers would be processed the same as normal barriers received." An inserted barrier
    blocks its (ending) channel like any aligned barrier, and an RPC-triggered checkpoint can
    insert barriers only into channels that already ended, so it waits for the EndOfPartition of
    every open channel: the seed's "could not support unaligned checkpoints before the
    EndOfPartition event has transferred to the downstream tasks"."""

    name = "insert-barrier-before-eop"
    source = "FLIP-147 seed, rejected alternative; FLINK-21086 first attempt (PR #14831)"
    modes = staticmethod(lambda config: _exactly_once(config) and config.after_finished)
    single_handler_class = _InsertBarrierHandler

    def trigger_checkpoint_async(self, checkpoint_id):
        if not self.open_channels or self.config.mode == AT_LEAST_ONCE:
            return super().trigger_checkpoint_async(checkpoint_id)
        self.handler.check_new_checkpoint(self.barrier(checkpoint_id))  # nothing to insert yet


# -- EndOfPartition and alignment ------------------------------------------------------------------


class _EopNotAlignedHandler(SingleCheckpointBarrierHandler):
    def process_end_of_partition(self, channel):
        if not self.after_finished:
            return super().process_end_of_partition(channel)
        self.num_open_channels -= 1  # later checkpoints target one channel less, that's all


class _EopNotAlignedTracker(CheckpointBarrierTracker):
    def check_alignment_on_end_of_partition(self, channel):
        pass


class EopNotAligned(BarrierVariant):
    """EndOfPartition lowers the target of later checkpoints but does not count as the pending
    checkpoint's barrier: the pending checkpoint never completes (flip147 facts §2.1 flag ON branch
    missing; invariant I6)."""

    name = "eop-not-aligned"
    source = "flip147 facts §2.1 processEndOfPartition, FLINK-21086"
    modes = staticmethod(_flag_on)
    single_handler_class = _EopNotAlignedHandler
    tracker_class = _EopNotAlignedTracker


class _EopAbortsHandler(SingleCheckpointBarrierHandler):
    def process_end_of_partition(self, channel):
        self.num_open_channels -= 1
        if self.is_checkpoint_pending():
            self.abort_internal(self.current_checkpoint_id, INPUT_END_OF_STREAM)


class _EopAbortsTracker(CheckpointBarrierTracker):
    def process_end_of_partition(self, channel):
        self.num_open_channels -= 1
        self.abort_pending_checkpoints(INPUT_END_OF_STREAM)


class EopAbortsPending(BarrierVariant):
    """The behaviour before FLIP-147, kept with the feature on: a finishing input cancels the
    pending checkpoint (seed: "Currently when a task finish, all the pending checkpoints would be
    canceled ... we would change the behavior to waiting")."""

    name = "eop-aborts-pending"
    source = 'FLIP-147 seed "Do Not Cancel Pending Checkpoint on Finish"'
    modes = staticmethod(_flag_on)
    single_handler_class = _EopAbortsHandler
    tracker_class = _EopAbortsTracker


class _TargetAllChannelsHandler(SingleCheckpointBarrierHandler):
    def check_new_checkpoint(self, barrier):
        started = self.current_checkpoint_id < barrier.id
        super().check_new_checkpoint(barrier)
        if started:
            self.target_channel_count = self.channels


class TargetCountsEndedChannels(BarrierVariant):
    """A new checkpoint waits for every channel, ended or not (seed step 4: "it would stop
    watching this channel and decrease the total number of barriers required for each
    checkpoint" left out)."""

    name = "target-counts-ended-channels"
    source = 'FLIP-147 seed "Extend the task Barrier Alignment" step 4; flip147 facts §2.1 target := numOpenChannels'
    modes = staticmethod(_exactly_once)
    single_handler_class = _TargetAllChannelsHandler


class _NoAlignmentStartOnEopHandler(SingleCheckpointBarrierHandler):
    in_end_of_partition = False

    def process_end_of_partition(self, channel):
        self.in_end_of_partition = True
        try:
            super().process_end_of_partition(channel)
        finally:
            self.in_end_of_partition = False

    def mark_alignment_start(self, checkpoint_id):
        if not self.in_end_of_partition:
            super().mark_alignment_start(checkpoint_id)


class AnnouncementEopNoAlignmentStart(BarrierVariant):
    """FLINK-24068: when an announcement started the pending checkpoint and the first aligned
    channel was an EndOfPartition, ``markAlignmentStart`` was skipped (the check lived only in
    the barrier path)."""

    name = "announcement-eop-no-alignment-start"
    source = "FLINK-24068 (PR #17131)"
    # With pure unaligned checkpoints a channel can send its barrier and then end; Flink then
    # marks the alignment start a second time, which this variant does not (only refinement sees it).
    modes = staticmethod(lambda config: config.mode == UNALIGNED and config.after_finished)
    single_handler_class = _NoAlignmentStartOnEopHandler


class _NeverCompleteWhenAllEndedHandler(SingleCheckpointBarrierHandler):
    def get_all_barriers_received_future(self, checkpoint_id):
        if checkpoint_id < self.current_checkpoint_id:
            return True
        return checkpoint_id == self.current_checkpoint_id and self.all_barriers_received_done


class NoCompleteWhenAllEnded(BarrierVariant):
    """FLINK-23771: ``getAllBarriersReceivedFuture`` did not complete for an unaligned checkpoint
    RPC-triggered on a task whose channels had all ended, so the checkpoint waited forever."""

    name = "no-complete-when-all-ended"
    source = "FLINK-23771 (PR #16827)"
    modes = staticmethod(lambda config: config.mode == UNALIGNED and not config.alignment_timeout
                         and config.after_finished)
    single_handler_class = _NeverCompleteWhenAllEndedHandler


# -- RPC trigger -------------------------------------------------------------------------------------


class RpcBlocksChannels(BarrierVariant):
    """RPC-triggered barriers mark their channels blocked (and resume them on completion), which
    the network never blocked: Flink's fix passes ``isRpcTriggered`` so that nothing is blocked
    (PR #16977 "Do not resume channels if the barrier is received via RPC"; flip147 facts §2.5,
    StreamTaskFinalCheckpointsTest asserts the resume count stays 0)."""

    name = "rpc-blocks-channels"
    source = "flip147 facts §2.5; apache/flink PR #16977"
    modes = staticmethod(lambda config: config.barriers_block and config.after_finished)

    def process_rpc_barrier(self, checkpoint_id, channel):
        if self.config.mode == AT_LEAST_ONCE:
            return super().process_rpc_barrier(checkpoint_id, channel)  # the tracker never blocks
        self.handler.process_barrier(self.barrier(checkpoint_id), channel, False)


# -- blocking and obsolete barriers -------------------------------------------------------------------


class NoBlocking(BarrierVariant):
    """Exactly-once without blocking: every barrier is processed as if RPC-triggered
    (``markChannelBlocked = false``), so records behind a barrier overtake the snapshot."""

    name = "no-blocking"
    source = "flip147 facts §2.2 (block ch), §2.5 (markChannelBlocked = !isRpcTriggered)"
    modes = staticmethod(lambda config: config.barriers_block)

    def deliver_barrier(self, checkpoint_id, channel):
        if self.config.mode == AT_LEAST_ONCE:
            return super().deliver_barrier(checkpoint_id, channel)
        self.handler.process_barrier(self.barrier(checkpoint_id), channel, True)


class _KeepBlockedOnAbortHandler(SingleCheckpointBarrierHandler):
    def abort_internal(self, checkpoint_id, reason):
        blocked, start = set(self.current_state.state.blocked), len(self.out)
        super().abort_internal(checkpoint_id, reason)
        self.out[start:] = [o for o in self.out[start:] if o[0] != UNBLOCKED]
        self.current_state.state.blocked |= blocked


class AbortKeepsChannelsBlocked(BarrierVariant):
    """An abort leaves the blocked channels blocked (``BarrierHandlerState.abort`` without
    ``unblockAllChannels``): the task stalls on those inputs."""

    name = "abort-keeps-channels-blocked"
    source = "flip147 facts §2.2 (any aligned | abort | unblock all)"
    modes = staticmethod(lambda config: config.barriers_block)
    single_handler_class = _KeepBlockedOnAbortHandler


class _NoObsoleteCheckHandler(SingleCheckpointBarrierHandler):
    def process_barrier(self, barrier, channel, is_rpc_triggered):
        self.check_new_checkpoint(barrier)
        self.mark_checkpoint_aligned_and_transform_state(
            channel, barrier, lambda state: state.barrier_received(self, channel, barrier, not is_rpc_triggered))


class NoObsoleteCheck(BarrierVariant):
    """``processBarrier`` without the obsolete-barrier check: a late barrier of an older (or
    already aborted) checkpoint is counted for the current one (flip147 facts §2.1)."""

    name = "no-obsolete-check"
    source = "flip147 facts §2.1 processBarrier (current > id or (current == id and not pending) -> obsolete)"
    modes = staticmethod(_exactly_once)
    single_handler_class = _NoObsoleteCheckHandler


# -- unaligned in-flight data ------------------------------------------------------------------------


class _CaptureEverything(InputChannels):
    def checkpoint_started(self, barrier):
        self.persisting = [barrier.id] * len(self.persisting)

    def barrier_arrived(self, channel, checkpoint_id):
        self.last_barrier[channel] = max(self.last_barrier[channel], checkpoint_id)


class _CaptureEverythingHandler(SingleCheckpointBarrierHandler):
    input_channels_class = _CaptureEverything


class UnalignedCapturesAlignedChannels(BarrierVariant):
    """Channels persist records as in-flight data even after their own barrier arrived (records
    that belong after the checkpoint would be replayed twice after a restore)."""

    name = "unaligned-captures-aligned-channels"
    source = "flip147 facts §2.2 checkpointStarted/checkpointStopped; channel state persister"
    # With an alignment timeout every channel whose barrier arrived is blocked until completion,
    # so the extra capture cannot happen there.
    modes = staticmethod(lambda config: config.mode == UNALIGNED and not config.alignment_timeout)
    single_handler_class = _CaptureEverythingHandler


# -- at-least-once -----------------------------------------------------------------------------------


class _SubsumingTracker(CheckpointBarrierTracker):
    def process_barrier(self, checkpoint_id, channel, is_rpc_triggered=False):
        if checkpoint_id > self.latest_pending_checkpoint_id:
            while self.pending_checkpoints:
                older = self.pending_checkpoints.popleft()
                if older.mark_aborted():
                    self.notify_abort(older.checkpoint_id, SUBSUMED)
        super().process_barrier(checkpoint_id, channel, is_rpc_triggered)


class TrackerSubsumes(BarrierVariant):
    """The at-least-once tracker aborting older pending checkpoints when a newer one starts, as
    the exactly-once handler does (flip147 facts §2.3: "A newer barrier does not subsume older pending
    entries")."""

    name = "tracker-subsumes"
    source = "flip147 facts §2.3"
    modes = staticmethod(lambda config: config.mode == AT_LEAST_ONCE)
    tracker_class = _SubsumingTracker


class _TriggersCancelledTracker(CheckpointBarrierTracker):
    def process_barrier(self, checkpoint_id, channel, is_rpc_triggered=False):
        for count in self.pending_checkpoints:
            if count.checkpoint_id == checkpoint_id:
                count.aborted = False  # forget the cancellation: complete it like any other
        super().process_barrier(checkpoint_id, channel, is_rpc_triggered)


class TrackerTriggersCancelled(BarrierVariant):
    """The tracker triggers a checkpoint whose cancellation marker it already saw once all its
    barriers arrived (flip147 facts §2.3: "trigger it unless aborted")."""

    name = "tracker-triggers-cancelled"
    source = "flip147 facts §2.3 CheckpointBarrierCount.isAborted"
    modes = staticmethod(lambda config: config.mode == AT_LEAST_ONCE)
    tracker_class = _TriggersCancelledTracker


VARIANTS: dict[str, type[BarrierVariant]] = {v.name: v for v in (
    InsertBarrierBeforeEop, EopNotAligned, NoCompleteWhenAllEnded, AnnouncementEopNoAlignmentStart,
    EopAbortsPending, TargetCountsEndedChannels, RpcBlocksChannels, NoBlocking, AbortKeepsChannelsBlocked,
    NoObsoleteCheck, UnalignedCapturesAlignedChannels, TrackerSubsumes, TrackerTriggersCancelled,
)}

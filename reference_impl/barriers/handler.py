"""Flink's exactly-once barrier handler, engine style: ``SingleCheckpointBarrierHandler`` and one
class per ``BarrierHandlerState`` (flip147 facts §2.1, §2.2).

The classes keep Flink's names, fields and call order; each state method is a transition that
returns the next state object. Side effects Flink performs on the task and the network (trigger
a checkpoint, notify an abort, block / resume a channel, mark the alignment start, complete the
"all barriers received" future) are appended to an output list as the model's output tuples, so
a run can be compared with :func:`flipcheck.model.barriers.step` output for output.

Not modelled: wall-clock time (``isTimedOut`` is always false; the alignment timer fires on the
``TIMEOUT`` event instead), announcement sequence numbers and priority-event conversion, alignment
duration metrics other than the start mark, exceptions thrown by state transitions.

Example
-------
>>> out = []
>>> h = SingleCheckpointBarrierHandler.aligned(2, True, out)
>>> h.process_barrier(Barrier(1), 0, False); type(h.current_state).__name__
'CollectingBarriers'
>>> h.process_end_of_partition(1); out
[('alignment_start', 1), ('blocked', 0), ('triggered', 1, 'aligned'), ('unblocked', 0), ('completed', 1)]
"""

from __future__ import annotations

from typing import NamedTuple

from flipcheck.model.barriers import (
    ABORTED, ALIGNED, ALIGNMENT_START, BLOCKED, COMPLETED, IN_FLIGHT, INPUT_END_OF_STREAM, ON_CANCELLATION_BARRIER,
    SUBSUMED, TRIGGERED, UNALIGNED, UNBLOCKED,
)

__all__ = [
    "Barrier", "ChannelState", "InputChannels", "BarrierHandlerState",
    "WaitingForFirstBarrier", "CollectingBarriers", "AlternatingWaitingForFirstBarrier",
    "AlternatingCollectingBarriers", "AlternatingWaitingForFirstBarrierUnaligned",
    "AlternatingCollectingBarriersUnaligned", "SingleCheckpointBarrierHandler", "STATE_CLASSES",
]


class Barrier(NamedTuple):
    """A ``CheckpointBarrier`` with the two options that matter here."""

    id: int
    unaligned: bool = False
    timeoutable: bool = False

    def as_unaligned(self) -> "Barrier":
        return Barrier(self.id, True, False)


class ChannelState:
    """Blocked-channel bookkeeping and the inputs, shared by the states (Flink's ``ChannelState``)."""

    def __init__(self, out: list, inputs: "InputChannels", blocked=()):
        self.out = out
        self.inputs = inputs
        self.blocked: set[int] = set(blocked)

    def block_channel(self, channel: int) -> None:
        self.blocked.add(channel)
        self.out.append((BLOCKED, channel))

    def channel_finished(self, channel: int) -> None:
        self.blocked.discard(channel)

    def unblock_all_channels(self) -> None:
        for channel in sorted(self.blocked):
            self.out.append((UNBLOCKED, channel))
        self.blocked.clear()


class InputChannels:
    """The input channels' side of unaligned checkpoints (``checkpointStarted`` /
    ``checkpointStopped`` and the channel state persister): a channel persists the records it
    receives for a started checkpoint until its own barrier of that checkpoint arrives."""

    def __init__(self, out: list, channels: int, last_barrier=None, persisting=None):
        self.out = out
        self.last_barrier = list(last_barrier or [-1] * channels)
        self.persisting = list(persisting or [None] * channels)

    def checkpoint_started(self, barrier: Barrier) -> None:
        for ch, last in enumerate(self.last_barrier):
            if last < barrier.id:
                self.persisting[ch] = barrier.id

    def checkpoint_stopped(self, checkpoint_id: int) -> None:
        self.persisting = [None if p is not None and p <= checkpoint_id else p for p in self.persisting]

    def barrier_arrived(self, channel: int, checkpoint_id: int) -> None:
        self.last_barrier[channel] = max(self.last_barrier[channel], checkpoint_id)
        if self.persisting[channel] is not None and self.persisting[channel] <= checkpoint_id:
            self.persisting[channel] = None

    def record_arrived(self, channel: int) -> None:
        if self.persisting[channel] is not None:
            self.out.append((IN_FLIGHT, self.persisting[channel], channel))

    def released(self, channel: int) -> None:
        self.persisting[channel] = None


# ----------------------------------------------------------------------------------------------
# BarrierHandlerState classes (flip147 facts §2.2). ``ctx`` is the handler (Flink's Controller).


class BarrierHandlerState:
    def __init__(self, state: ChannelState):
        self.state = state

    def announcement_received(self, ctx, channel):
        return self

    def barrier_received(self, ctx, channel, barrier, mark_channel_blocked):
        raise NotImplementedError

    def end_of_partition_received(self, ctx, channel):
        raise NotImplementedError

    def aligned_checkpoint_timeout(self, ctx, barrier):
        raise NotImplementedError

    def abort(self, checkpoint_id):
        raise NotImplementedError

    def key(self) -> tuple:
        return (type(self).__name__,)


class _AbstractAligned(BarrierHandlerState):
    """AbstractAlignedBarrierHandlerState: block, and trigger once every channel aligned."""

    def barrier_received(self, ctx, channel, barrier, mark_channel_blocked):
        assert not barrier.unaligned
        if mark_channel_blocked:
            self.state.block_channel(channel)
        if ctx.all_barriers_received():
            ctx.trigger_global_checkpoint(barrier)
            return self.finish_checkpoint()
        return CollectingBarriers(self.state)

    def aligned_checkpoint_timeout(self, ctx, barrier):
        raise AssertionError("Alignment should not be timed out if we are not alternating.")

    def abort(self, checkpoint_id):
        return self.finish_checkpoint()

    def finish_checkpoint(self):
        self.state.unblock_all_channels()
        return WaitingForFirstBarrier(self.state)


class WaitingForFirstBarrier(_AbstractAligned):
    def end_of_partition_received(self, ctx, channel):
        self.state.channel_finished(channel)
        return self  # no barrier of the pending checkpoint seen yet


class CollectingBarriers(_AbstractAligned):
    def end_of_partition_received(self, ctx, channel):
        self.state.channel_finished(channel)
        if ctx.all_barriers_received():
            ctx.trigger_global_checkpoint(ctx.pending_checkpoint_barrier)
            return self.finish_checkpoint()
        return self


class _AbstractAlternatingAligned(BarrierHandlerState):
    """AbstractAlternatingAlignedBarrierHandlerState: aligned, switching to unaligned on timeout."""

    def barrier_received(self, ctx, channel, barrier, mark_channel_blocked):
        if barrier.unaligned:
            return self.aligned_checkpoint_timeout(ctx, barrier).barrier_received(
                ctx, channel, barrier, mark_channel_blocked)
        if mark_channel_blocked:
            self.state.block_channel(channel)
        if ctx.all_barriers_received():
            ctx.trigger_global_checkpoint(barrier)
            return self.finish_checkpoint()
        if ctx.is_timed_out(barrier):
            return self.aligned_checkpoint_timeout(ctx, barrier).barrier_received(
                ctx, channel, barrier.as_unaligned(), mark_channel_blocked)
        return self.after_barrier_received()

    def after_barrier_received(self):
        raise NotImplementedError

    def abort(self, checkpoint_id):
        return self.finish_checkpoint()

    def finish_checkpoint(self):
        self.state.unblock_all_channels()
        return AlternatingWaitingForFirstBarrier(self.state)


class AlternatingWaitingForFirstBarrier(_AbstractAlternatingAligned):
    def aligned_checkpoint_timeout(self, ctx, barrier):
        return AlternatingWaitingForFirstBarrierUnaligned(True, self.state)

    def end_of_partition_received(self, ctx, channel):
        self.state.channel_finished(channel)
        return self

    def after_barrier_received(self):
        return AlternatingCollectingBarriers(self.state)


class AlternatingCollectingBarriers(_AbstractAlternatingAligned):
    def aligned_checkpoint_timeout(self, ctx, barrier):
        unaligned = barrier.as_unaligned()
        self.state.inputs.checkpoint_started(unaligned)
        ctx.trigger_global_checkpoint(unaligned)
        return AlternatingCollectingBarriersUnaligned(True, self.state)

    def end_of_partition_received(self, ctx, channel):
        self.state.channel_finished(channel)
        pending = ctx.pending_checkpoint_barrier
        if ctx.all_barriers_received():
            ctx.trigger_global_checkpoint(pending)
            return self.finish_checkpoint()
        if ctx.is_timed_out(pending):
            return self.aligned_checkpoint_timeout(ctx, pending).end_of_partition_received(ctx, channel)
        return self

    def after_barrier_received(self):
        return self


class _AbstractUnaligned(BarrierHandlerState):
    def __init__(self, alternating: bool, state: ChannelState):
        super().__init__(state)
        self.alternating = alternating

    def aligned_checkpoint_timeout(self, ctx, barrier):
        return self  # already unaligned

    def stop_checkpoint(self):
        self.state.unblock_all_channels()
        if self.alternating:
            return AlternatingWaitingForFirstBarrier(self.state)
        return AlternatingWaitingForFirstBarrierUnaligned(False, self.state)

    def key(self) -> tuple:
        return (type(self).__name__, self.alternating)


class AlternatingWaitingForFirstBarrierUnaligned(_AbstractUnaligned):
    def barrier_received(self, ctx, channel, barrier, mark_channel_blocked):
        # An aligned barrier that arrives now still blocked its channel in the network.
        if mark_channel_blocked and not barrier.unaligned:
            self.state.block_channel(channel)
        unaligned = barrier.as_unaligned()
        self.state.inputs.checkpoint_started(unaligned)
        ctx.trigger_global_checkpoint(unaligned)
        if ctx.all_barriers_received():
            self.state.inputs.checkpoint_stopped(unaligned.id)
            return self.stop_checkpoint()
        return AlternatingCollectingBarriersUnaligned(self.alternating, self.state)

    def end_of_partition_received(self, ctx, channel):
        self.state.channel_finished(channel)
        return self

    def abort(self, checkpoint_id):
        return self.stop_checkpoint()


class AlternatingCollectingBarriersUnaligned(_AbstractUnaligned):
    def barrier_received(self, ctx, channel, barrier, mark_channel_blocked):
        if mark_channel_blocked and not barrier.unaligned:
            self.state.block_channel(channel)
        if ctx.all_barriers_received():
            return self.finish_checkpoint(barrier.id)
        return self

    def end_of_partition_received(self, ctx, channel):
        self.state.channel_finished(channel)
        if ctx.all_barriers_received():
            return self.finish_checkpoint(ctx.pending_checkpoint_barrier.id)
        return self

    def abort(self, checkpoint_id):
        return self.finish_checkpoint(checkpoint_id)

    def finish_checkpoint(self, checkpoint_id):
        self.state.inputs.checkpoint_stopped(checkpoint_id)
        return self.stop_checkpoint()


STATE_CLASSES = {cls.__name__: cls for cls in (
    WaitingForFirstBarrier, CollectingBarriers, AlternatingWaitingForFirstBarrier, AlternatingCollectingBarriers,
    AlternatingWaitingForFirstBarrierUnaligned, AlternatingCollectingBarriersUnaligned)}


# ----------------------------------------------------------------------------------------------


class SingleCheckpointBarrierHandler:
    """One checkpoint at a time (flip147 facts §2.1). Build with :meth:`aligned` or :meth:`alternating`."""

    input_channels_class = InputChannels

    def __init__(self, channels: int, initial_state_class, alternating: bool, after_finished: bool, out: list):
        self.out = out
        self.channels = channels
        self.after_finished = after_finished
        self.alternating = alternating
        self.current_checkpoint_id = -1
        self.last_cancelled_or_completed_checkpoint_id = -1
        self.pending_checkpoint_barrier: Barrier | None = None
        self.aligned_channels: set[int] = set()
        self.target_channel_count = 0
        self.num_open_channels = channels
        self.all_barriers_received_done = False
        self.alignment_timer: Barrier | None = None
        self.current_state = initial_state_class(ChannelState(out, self.input_channels_class(out, channels)))

    @classmethod
    def aligned(cls, channels: int, after_finished: bool, out: list) -> "SingleCheckpointBarrierHandler":
        return cls(channels, WaitingForFirstBarrier, False, after_finished, out)

    @classmethod
    def alternating_handler(cls, channels: int, after_finished: bool, out: list) -> "SingleCheckpointBarrierHandler":
        return cls(channels, AlternatingWaitingForFirstBarrier, True, after_finished, out)

    # -- controller (BarrierHandlerState.Controller) ----------------------------------------

    def trigger_global_checkpoint(self, barrier: Barrier) -> None:
        self.out.append((TRIGGERED, barrier.id, UNALIGNED if barrier.unaligned else ALIGNED))

    def all_barriers_received(self) -> bool:
        return len(self.aligned_channels) == self.target_channel_count

    def is_timed_out(self, barrier: Barrier) -> bool:
        return False  # no wall clock: the TIMEOUT event fires the alignment timer instead

    def mark_alignment_start(self, checkpoint_id: int) -> None:
        self.out.append((ALIGNMENT_START, checkpoint_id))

    def notify_abort(self, checkpoint_id: int, reason: str) -> None:
        self.out.append((ABORTED, checkpoint_id, reason))

    # -- CheckpointBarrierHandler ------------------------------------------------------------

    def is_checkpoint_pending(self) -> bool:
        return (self.current_checkpoint_id != self.last_cancelled_or_completed_checkpoint_id
                and self.current_checkpoint_id >= 0)

    def process_barrier(self, barrier: Barrier, channel: int, is_rpc_triggered: bool) -> None:
        if self.current_checkpoint_id > barrier.id or (
                self.current_checkpoint_id == barrier.id and not self.is_checkpoint_pending()):
            return  # obsolete: an aligned one is resumed in the network at once
        self.check_new_checkpoint(barrier)
        self.mark_checkpoint_aligned_and_transform_state(
            channel, barrier,
            lambda state: state.barrier_received(self, channel, barrier, not is_rpc_triggered))

    def mark_checkpoint_aligned_and_transform_state(self, channel: int, barrier: Barrier, transform) -> None:
        self.aligned_channels.add(channel)
        if len(self.aligned_channels) == 1:
            self.mark_alignment_start(barrier.id)
        self.current_state = transform(self.current_state)
        if len(self.aligned_channels) == self.target_channel_count:
            self.aligned_channels.clear()
            self.last_cancelled_or_completed_checkpoint_id = self.current_checkpoint_id
            self.alignment_timer = None
            self.all_barriers_received_done = True
            self.out.append((COMPLETED, self.current_checkpoint_id))

    def process_barrier_announcement(self, barrier: Barrier, channel: int) -> None:
        self.check_new_checkpoint(barrier)
        if self.current_checkpoint_id > barrier.id or (
                self.current_checkpoint_id == barrier.id and not self.is_checkpoint_pending()):
            return
        self.current_state = self.current_state.announcement_received(self, channel)

    def check_new_checkpoint(self, barrier: Barrier) -> None:
        if self.current_checkpoint_id >= barrier.id:
            return
        if self.is_checkpoint_pending():
            self.abort_internal(self.current_checkpoint_id, SUBSUMED)
        self.current_checkpoint_id = barrier.id
        self.pending_checkpoint_barrier = barrier
        self.aligned_channels.clear()
        self.target_channel_count = self.num_open_channels
        self.all_barriers_received_done = False
        if self.alternating and barrier.timeoutable:
            self.alignment_timer = barrier

    def fire_alignment_timer(self) -> None:
        """The registered alignment timer fires (the TIMEOUT event)."""
        barrier, self.alignment_timer = self.alignment_timer, None
        if barrier is None:
            return
        if self.current_checkpoint_id == barrier.id and not self.get_all_barriers_received_future(barrier.id):
            self.current_state = self.current_state.aligned_checkpoint_timeout(self, barrier)

    def process_cancellation_barrier(self, checkpoint_id: int, channel: int) -> None:
        if checkpoint_id > self.current_checkpoint_id or (
                checkpoint_id == self.current_checkpoint_id and self.aligned_channels):
            self.abort_internal(checkpoint_id, ON_CANCELLATION_BARRIER)

    def abort_internal(self, checkpoint_id: int, reason: str) -> None:
        self.current_checkpoint_id = max(checkpoint_id, self.current_checkpoint_id)
        self.last_cancelled_or_completed_checkpoint_id = max(self.last_cancelled_or_completed_checkpoint_id,
                                                             checkpoint_id)
        self.pending_checkpoint_barrier = None
        self.aligned_channels.clear()
        self.target_channel_count = 0
        self.alignment_timer = None
        self.current_state = self.current_state.abort(checkpoint_id)
        self.notify_abort(checkpoint_id, reason)

    def process_end_of_partition(self, channel: int) -> None:
        self.num_open_channels -= 1
        if not self.after_finished:
            if self.is_checkpoint_pending():
                self.abort_internal(self.current_checkpoint_id, INPUT_END_OF_STREAM)
            return
        if not self.is_checkpoint_pending():
            return
        self.mark_checkpoint_aligned_and_transform_state(
            channel, self.pending_checkpoint_barrier,
            lambda state: state.end_of_partition_received(self, channel))

    def get_all_barriers_received_future(self, checkpoint_id: int) -> bool:
        """Whether ``getAllBarriersReceivedFuture(id)`` is complete (FLINK-23771: also when every
        channel already ended)."""
        if checkpoint_id < self.current_checkpoint_id or self.num_open_channels == 0:
            return True
        if checkpoint_id > self.current_checkpoint_id:
            raise AssertionError(f"Checkpoint {checkpoint_id} has not been started at all")
        return self.all_barriers_received_done

    def pending_id(self) -> int | None:
        return self.current_checkpoint_id if self.is_checkpoint_pending() else None

    def blocked_mask(self) -> int:
        return sum(1 << ch for ch in self.current_state.state.blocked)

    @property
    def inputs(self) -> InputChannels:
        return self.current_state.state.inputs

    # -- snapshots, for exhaustive exploration ---------------------------------------------

    def snapshot(self) -> tuple:
        return (self.current_state.key(), self.current_checkpoint_id, self.last_cancelled_or_completed_checkpoint_id,
                self.pending_checkpoint_barrier, tuple(sorted(self.aligned_channels)), self.target_channel_count,
                self.num_open_channels, self.all_barriers_received_done, self.alignment_timer,
                tuple(sorted(self.current_state.state.blocked)), tuple(self.inputs.last_barrier),
                tuple(self.inputs.persisting))

    def restore(self, snapshot: tuple) -> None:
        (key, self.current_checkpoint_id, self.last_cancelled_or_completed_checkpoint_id,
         self.pending_checkpoint_barrier, aligned, self.target_channel_count, self.num_open_channels,
         self.all_barriers_received_done, self.alignment_timer, blocked, last_barrier, persisting) = snapshot
        self.aligned_channels = set(aligned)
        inputs = self.input_channels_class(self.out, self.channels, last_barrier, persisting)
        state = ChannelState(self.out, inputs, blocked)
        cls = STATE_CLASSES[key[0]]
        self.current_state = cls(key[1], state) if len(key) > 1 else cls(state)

"""Flink's at-least-once barrier handler, engine style: ``CheckpointBarrierTracker`` (flip147 facts §2.3).

It never blocks a channel and tracks up to 50 pending checkpoints in a deque of
``CheckpointBarrierCount`` objects; a checkpoint that completes takes every older pending one
with it, silently.

Example
-------
>>> out = []
>>> t = CheckpointBarrierTracker(2, True, out)
>>> t.process_barrier(1, 0); t.process_end_of_partition(1); out
[('triggered', 1, 'at-least-once'), ('completed', 1)]
"""

from __future__ import annotations

from collections import deque

from flipcheck.model.barriers import (
    ABORTED, AT_LEAST_ONCE, COMPLETED, INPUT_END_OF_STREAM, MAX_CHECKPOINTS_TO_TRACK, ON_CANCELLATION_BARRIER,
    TRIGGERED,
)

__all__ = ["CheckpointBarrierCount", "CheckpointBarrierTracker"]


class CheckpointBarrierCount:
    def __init__(self, checkpoint_id: int, channel: int, target_channel_count: int, aborted: bool = False):
        self.checkpoint_id = checkpoint_id
        self.aligned_channels = {channel}
        self.target_channel_count = target_channel_count
        self.aborted = aborted

    def mark_channel_aligned(self, channel: int) -> int:
        self.aligned_channels.add(channel)
        return len(self.aligned_channels)

    def mark_aborted(self) -> bool:
        """True the first time (so the abort is notified once)."""
        first, self.aborted = not self.aborted, True
        return first

    def key(self) -> tuple:
        return (self.checkpoint_id, tuple(sorted(self.aligned_channels)), self.target_channel_count, self.aborted)


class CheckpointBarrierTracker:
    def __init__(self, channels: int, after_finished: bool, out: list):
        self.out = out
        self.after_finished = after_finished
        self.num_open_channels = channels
        self.pending_checkpoints: deque[CheckpointBarrierCount] = deque()
        self.latest_pending_checkpoint_id = -1

    def notify_checkpoint(self, checkpoint_id: int) -> None:
        self.out.append((TRIGGERED, checkpoint_id, AT_LEAST_ONCE))
        self.out.append((COMPLETED, checkpoint_id))

    def notify_abort(self, checkpoint_id: int, reason: str) -> None:
        self.out.append((ABORTED, checkpoint_id, reason))

    def process_barrier(self, checkpoint_id: int, channel: int, is_rpc_triggered: bool = False) -> None:
        if checkpoint_id > self.latest_pending_checkpoint_id and self.num_open_channels == 1:
            self.notify_checkpoint(checkpoint_id)  # fast path for a single open channel
            return
        for pos, count in enumerate(self.pending_checkpoints):
            if count.checkpoint_id == checkpoint_id:
                if count.mark_channel_aligned(channel) == count.target_channel_count:
                    for _ in range(pos + 1):
                        self.pending_checkpoints.popleft()
                    if not count.aborted:
                        self.trigger_checkpoint_on_aligned(count)
                return
        if checkpoint_id > self.latest_pending_checkpoint_id:
            self.latest_pending_checkpoint_id = checkpoint_id
            self.pending_checkpoints.append(CheckpointBarrierCount(checkpoint_id, channel, self.num_open_channels))
            if len(self.pending_checkpoints) > MAX_CHECKPOINTS_TO_TRACK:
                self.pending_checkpoints.popleft()

    def trigger_checkpoint_on_aligned(self, count: CheckpointBarrierCount) -> None:
        self.notify_checkpoint(count.checkpoint_id)

    def process_cancellation_barrier(self, checkpoint_id: int, channel: int) -> None:
        if checkpoint_id > self.latest_pending_checkpoint_id and self.num_open_channels == 1:
            self.notify_abort(checkpoint_id, ON_CANCELLATION_BARRIER)
            return
        count = None
        while self.pending_checkpoints and self.pending_checkpoints[0].checkpoint_id < checkpoint_id:
            count = self.pending_checkpoints.popleft()
            if count.mark_aborted():
                self.notify_abort(count.checkpoint_id, ON_CANCELLATION_BARRIER)
        count = self.pending_checkpoints[0] if self.pending_checkpoints else None
        if count is not None and count.checkpoint_id == checkpoint_id:
            if count.mark_aborted():
                self.notify_abort(checkpoint_id, ON_CANCELLATION_BARRIER)
            if count.mark_channel_aligned(channel) == count.target_channel_count:
                self.pending_checkpoints.popleft()
        elif checkpoint_id > self.latest_pending_checkpoint_id:
            self.notify_abort(checkpoint_id, ON_CANCELLATION_BARRIER)
            self.latest_pending_checkpoint_id = checkpoint_id
            self.pending_checkpoints.appendleft(
                CheckpointBarrierCount(checkpoint_id, channel, self.num_open_channels, aborted=True))

    def process_end_of_partition(self, channel: int) -> None:
        self.num_open_channels -= 1
        if not self.after_finished:
            self.abort_pending_checkpoints(INPUT_END_OF_STREAM)
            return
        self.check_alignment_on_end_of_partition(channel)

    def abort_pending_checkpoints(self, reason: str) -> None:
        while self.pending_checkpoints:
            count = self.pending_checkpoints.popleft()
            if count.mark_aborted():
                self.notify_abort(count.checkpoint_id, reason)

    def check_alignment_on_end_of_partition(self, channel: int) -> None:
        """The newest pending checkpoint that only waited for this channel completes."""
        found, pos = None, len(self.pending_checkpoints)
        for count in reversed(self.pending_checkpoints):
            pos -= 1
            if count.mark_channel_aligned(channel) == count.target_channel_count:
                found = count
                break
        if found is not None:
            for _ in range(pos + 1):
                self.pending_checkpoints.popleft()
            if not found.aborted:
                self.trigger_checkpoint_on_aligned(found)

    def get_all_barriers_received_future(self, checkpoint_id: int) -> bool:
        return True  # CheckpointBarrierHandler's default: already complete

    def pending_id(self) -> int | None:
        live = [c.checkpoint_id for c in self.pending_checkpoints if not c.aborted]
        return max(live) if live else None

    def blocked_mask(self) -> int:
        return 0

    def snapshot(self) -> tuple:
        return (self.num_open_channels, self.latest_pending_checkpoint_id,
                tuple(c.key() for c in self.pending_checkpoints))

    def restore(self, snapshot: tuple) -> None:
        self.num_open_channels, self.latest_pending_checkpoint_id, counts = snapshot
        self.pending_checkpoints = deque()
        for checkpoint_id, aligned, target, aborted in counts:
            count = CheckpointBarrierCount(checkpoint_id, aligned[0], target, aborted)
            count.aligned_channels = set(aligned)
            self.pending_checkpoints.append(count)

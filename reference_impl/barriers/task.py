"""A task's input side as an engine wires it: ``CheckpointedInputGate`` routing events to the
barrier handler, and ``StreamTask.triggerCheckpointAsync`` for RPC-triggered checkpoints
(flip147 facts §2, §2.5). This is the object tests and the CLI drive: ``process(event) -> outputs``.

Handler choice follows ``InputProcessorUtil``: aligned mode -> ``SingleCheckpointBarrierHandler
.aligned``; unaligned mode -> ``.alternating`` (barriers are unaligned, or aligned and
timeoutable with an alignment timeout); at-least-once -> ``CheckpointBarrierTracker``.

Example
-------
>>> from flipcheck.model.barriers import Config, barrier, end_of_partition, rpc_trigger
>>> task = Task(Config(channels=2))
>>> task.process(end_of_partition(0)), task.process(end_of_partition(1))
((), ())
>>> task.process(rpc_trigger(1))                       # every input finished: like a source
(('triggered', 1, 'aligned'), ('completed', 1))
>>> task.view()
View(pending=None, blocked=0, open=0)
"""

from __future__ import annotations

from flipcheck.model.barriers import (
    ALIGNED, ANNOUNCE, AT_LEAST_ONCE, BARRIER, CANCEL, COMPLETED, DATA, END, RPC, TIMEOUT, TRIGGERED, UNALIGNED,
    Config, View, channels_of,
)

from .handler import Barrier, SingleCheckpointBarrierHandler
from .tracker import CheckpointBarrierTracker

__all__ = ["Task"]


class Task:
    """One task's input gate and barrier handler: ``flipcheck.BarrierHandler``; subclasses are
    the named variants (:mod:`flipcheck.reference_impl.barriers.variants`) and yours.

    :meth:`process` takes one input event (the constructors of :mod:`flipcheck.model.barriers`)
    and returns the outputs it caused. What to override: :meth:`trigger_checkpoint_async` (a
    trigger RPC), :meth:`deliver_barrier` and :meth:`process_rpc_barrier` (a barrier from the
    network or from an RPC), :meth:`trigger_checkpoint_like_source` (every input ended),
    :meth:`create_handler`, or the handler's own classes (``single_handler_class``: Flink's
    ``SingleCheckpointBarrierHandler``; ``tracker_class``: ``CheckpointBarrierTracker``). Check
    yours with ``flipcheck.replay_barriers(events, channels, handler="FILE.py:Mine")`` or
    ``flipcheck verify --suite barriers --variant FILE.py:Mine``.

    >>> import flipcheck
    >>> from flipcheck.model.barriers import Config, end_of_partition, rpc_trigger
    >>> class IgnoresTriggerRpcs(flipcheck.BarrierHandler):
    ...     def trigger_checkpoint_async(self, checkpoint_id):
    ...         pass                              # a trigger RPC reaching this task is lost
    >>> flink, mine = flipcheck.BarrierHandler(Config(channels=1)), IgnoresTriggerRpcs(Config(channels=1))
    >>> [task.process(end_of_partition(0)) for task in (flink, mine)]     # its input ended
    [(), ()]
    >>> [task.process(rpc_trigger(1)) for task in (flink, mine)]          # triggered like a source
    [(('triggered', 1, 'aligned'), ('completed', 1)), ()]
    """

    name = "flink"
    source: str | None = None   # where a variant comes from: reports only

    @staticmethod
    def modes(config) -> bool:
        """Whether this handler can differ from Flink's in ``config`` at all: a variant narrows
        it so that exhaustive checks skip the configurations where it cannot."""
        return True
    single_handler_class = SingleCheckpointBarrierHandler
    tracker_class = CheckpointBarrierTracker

    def __init__(self, config: Config):
        self.config = config
        self.out: list = []
        self.open_channels = config.all_channels
        # An unaligned checkpoint whose "all barriers received" never completed (FLINK-23771).
        self.waiting_for_channel_state: int | None = None
        self.handler = self.create_handler()

    # -- wiring ---------------------------------------------------------------------------------

    def create_handler(self):
        cfg = self.config
        if cfg.mode == AT_LEAST_ONCE:
            return self.tracker_class(cfg.channels, cfg.after_finished, self.out)
        if cfg.mode == ALIGNED:
            return self.single_handler_class.aligned(cfg.channels, cfg.after_finished, self.out)
        return self.single_handler_class.alternating_handler(cfg.channels, cfg.after_finished, self.out)

    def barrier(self, checkpoint_id: int) -> Barrier:
        """The barrier the configured checkpoints carry (CheckpointOptions)."""
        cfg = self.config
        if cfg.mode == UNALIGNED and not cfg.alignment_timeout:
            return Barrier(checkpoint_id, unaligned=True)
        return Barrier(checkpoint_id, unaligned=False, timeoutable=cfg.alignment_timeout)

    # -- events ---------------------------------------------------------------------------------

    def process(self, event: tuple) -> tuple:
        """Handle one input event; return the outputs it caused."""
        self.out.clear()
        kind = event[0]
        handler = self.handler
        exactly_once = self.config.mode != AT_LEAST_ONCE
        if kind == BARRIER:
            checkpoint_id, channel = event[1], event[2]
            if exactly_once:
                handler.inputs.barrier_arrived(channel, checkpoint_id)
            self.deliver_barrier(checkpoint_id, channel)
        elif kind == DATA:
            if exactly_once:
                handler.inputs.record_arrived(event[1])
        elif kind == END:
            self.open_channels &= ~(1 << event[1])
            if exactly_once:
                handler.inputs.released(event[1])
            handler.process_end_of_partition(event[1])
        elif kind == CANCEL:
            handler.process_cancellation_barrier(event[1], event[2])
        elif kind == RPC:
            self.trigger_checkpoint_async(event[1])
        elif kind == TIMEOUT:
            if exactly_once:
                handler.fire_alignment_timer()
        elif kind == ANNOUNCE:
            if exactly_once:
                handler.process_barrier_announcement(self.barrier(event[1]), event[2])
        else:
            raise ValueError(f"unknown event {event!r}")
        return tuple(self.out)

    def trigger_checkpoint_async(self, checkpoint_id: int) -> None:
        """StreamTask.triggerCheckpointAsync on a task with network inputs (flip147 facts §2.5)."""
        if not self.open_channels:
            self.trigger_checkpoint_like_source(checkpoint_id)
            return
        # triggerUnfinishedChannelsCheckpoint: an RPC barrier for every unfinished channel.
        for channel in channels_of(self.open_channels):
            self.process_rpc_barrier(checkpoint_id, channel)

    def deliver_barrier(self, checkpoint_id: int, channel: int) -> None:
        """A barrier from the network: CheckpointedInputGate -> processBarrier(b, ch, false)."""
        if self.config.mode == AT_LEAST_ONCE:
            self.handler.process_barrier(checkpoint_id, channel, False)
        else:
            self.handler.process_barrier(self.barrier(checkpoint_id), channel, False)

    def process_rpc_barrier(self, checkpoint_id: int, channel: int) -> None:
        if self.config.mode == AT_LEAST_ONCE:
            self.handler.process_barrier(checkpoint_id, channel, True)
        else:
            self.handler.process_barrier(self.barrier(checkpoint_id), channel, True)

    def trigger_checkpoint_like_source(self, checkpoint_id: int) -> None:
        """triggerCheckpointAsyncInMailbox: every input gate finished; an unaligned snapshot then
        waits for ``getAllBarriersReceivedFuture`` before its channel state is complete."""
        barrier = self.barrier(checkpoint_id)
        self.out.append((TRIGGERED, checkpoint_id, UNALIGNED if barrier.unaligned else self.trigger_kind()))
        if not barrier.unaligned or self.handler.get_all_barriers_received_future(checkpoint_id):
            self.out.append((COMPLETED, checkpoint_id))
        else:
            self.waiting_for_channel_state = checkpoint_id

    def trigger_kind(self) -> str:
        return AT_LEAST_ONCE if self.config.mode == AT_LEAST_ONCE else ALIGNED

    # -- observation ----------------------------------------------------------------------------

    def view(self) -> View:
        pending = self.handler.pending_id()
        if pending is None:
            pending = self.waiting_for_channel_state
        return View(pending=pending, blocked=self.handler.blocked_mask(), open=self.open_channels)

    def snapshot(self) -> tuple:
        return (self.open_channels, self.waiting_for_channel_state, self.handler.snapshot())

    def restore(self, snapshot: tuple) -> "Task":
        self.open_channels, self.waiting_for_channel_state, handler = snapshot
        self.handler.restore(handler)
        return self

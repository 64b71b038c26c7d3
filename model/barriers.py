"""Specification of task-side barrier alignment with finished input channels (FLIP-147).

One task with ``channels`` input channels sees a sequence of input events and answers each with
a tuple of outputs. :func:`step` is the whole specification: a pure function
``(config, state, event) -> (state, outputs)``. States are small named tuples of ints and bools
(channel sets are bit masks), so they hash cheaply and can be explored exhaustively.

Seed sections encoded: "Extend the task Barrier Alignment", "Make CheckpointBarrierHandler
Support EndOfPartition on TM Side", "Do Not Cancel Pending Checkpoint on Finish". Where the seed
and Flink differ, the rules follow Flink as shipped (flip147 facts §2); each rule names its source.

Modes (flip147 facts §2, handler choice in ``InputProcessorUtil``):

* ``aligned``: exactly-once, ``SingleCheckpointBarrierHandler.aligned``. A barrier blocks its
  channel until every channel delivered the barrier (or ended); then the checkpoint triggers.
* ``unaligned``: exactly-once with unaligned checkpoints. Without ``alignment_timeout`` the
  checkpoint triggers at the first barrier and every record that arrives afterwards on a channel
  whose barrier has not arrived yet is persisted as in-flight data. With ``alignment_timeout``
  (Flink's ``alternating`` handler) a checkpoint starts aligned and switches to unaligned when
  the alignment timer fires (the ``TIMEOUT`` event).
* ``at-least-once``: ``CheckpointBarrierTracker``; never blocks, several pending checkpoints,
  an older pending checkpoint is dropped silently when a newer one completes.

Events (tuples): ``("B", id, ch)`` barrier, ``("C", id, ch)`` cancellation marker, ``("E", ch)``
EndOfPartition, ``("D", ch)`` data record, ``("T", id)`` RPC trigger (a task whose upstream
tasks all finished, flip147 facts §2.5), ``("TIMEOUT",)`` the alignment timer fires, ``("A", id, ch)``
barrier announcement (aligned-with-timeout only: the announcement overtakes the records in front
of the barrier). Which sequences are *valid* (FIFO channels, nothing after EndOfPartition, ...)
is the environment's business: :mod:`flipcheck.generators.channel_events`.

Outputs (tuples): ``("blocked", ch)``, ``("unblocked", ch)``, ``("alignment_start", id)``,
``("triggered", id, kind)`` with kind ``aligned``/``unaligned``/``at-least-once``,
``("in_flight", id, ch)`` (the record just received on ``ch`` is persisted as in-flight data of
unaligned checkpoint ``id``), ``("completed", id)`` (every channel delivered its barrier or ended:
Flink's ``allBarriersReceivedFuture`` completes) and ``("aborted", id, reason)``.

Example
-------
>>> cfg = Config(channels=2)
>>> trace = run(cfg, [barrier(1, 0), data(1), end_of_partition(1)])
>>> [s.outputs for s in trace]        # EndOfPartition aligns channel 1 (flip147 facts §2.1)
[(('alignment_start', 1), ('blocked', 0)), (), (('triggered', 1, 'aligned'), ('unblocked', 0), ('completed', 1))]
>>> off = Config(channels=2, after_finished=False)
>>> run(off, [barrier(1, 0), end_of_partition(1)])[-1].outputs
(('unblocked', 0), ('aborted', 1, 'CHECKPOINT_DECLINED_INPUT_END_OF_STREAM'))
>>> view(off, final_state(off, [barrier(1, 0), end_of_partition(1)]))
View(pending=None, blocked=0, open=1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence, Union

__all__ = [
    "ALIGNED", "UNALIGNED", "AT_LEAST_ONCE", "MODES",
    "SUBSUMED", "ON_CANCELLATION_BARRIER", "INPUT_END_OF_STREAM", "ABORT_REASONS",
    "BARRIER", "CANCEL", "END", "DATA", "RPC", "TIMEOUT", "ANNOUNCE",
    "BLOCKED", "UNBLOCKED", "ALIGNMENT_START", "TRIGGERED", "IN_FLIGHT", "COMPLETED", "ABORTED",
    "WAITING", "COLLECTING", "UNALIGNED_WAITING", "UNALIGNED_COLLECTING", "PHASE_NAMES",
    "MAX_CHECKPOINTS_TO_TRACK", "MAX_CHECKPOINT_ID",
    "Config", "HandlerState", "TrackerState", "Entry", "State", "View", "Step",
    "barrier", "cancel", "end_of_partition", "data", "rpc_trigger", "timeout", "announce",
    "initial_state", "step", "view", "run", "final_state", "channels_of", "parse_event", "format_event",
]

ALIGNED = "aligned"
UNALIGNED = "unaligned"
AT_LEAST_ONCE = "at-least-once"
MODES = (ALIGNED, UNALIGNED, AT_LEAST_ONCE)

# Flink's CheckpointFailureReason names (flip147 facts §2.4).
SUBSUMED = "CHECKPOINT_DECLINED_SUBSUMED"
ON_CANCELLATION_BARRIER = "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER"
INPUT_END_OF_STREAM = "CHECKPOINT_DECLINED_INPUT_END_OF_STREAM"
ABORT_REASONS = (SUBSUMED, ON_CANCELLATION_BARRIER, INPUT_END_OF_STREAM)

# Event kinds.
BARRIER, CANCEL, END, DATA, RPC, TIMEOUT, ANNOUNCE = "B", "C", "E", "D", "T", "TIMEOUT", "A"

# Output kinds.
BLOCKED, UNBLOCKED = "blocked", "unblocked"
ALIGNMENT_START, TRIGGERED, IN_FLIGHT, COMPLETED, ABORTED = (
    "alignment_start", "triggered", "in_flight", "completed", "aborted")

# Phases of the exactly-once handler, named after Flink's BarrierHandlerState classes (flip147 facts §2.2).
WAITING = 0               # (Alternating)WaitingForFirstBarrier: no barrier of the pending checkpoint yet
COLLECTING = 1            # (Alternating)CollectingBarriers: aligned, some barriers received
UNALIGNED_WAITING = 2     # AlternatingWaitingForFirstBarrierUnaligned
UNALIGNED_COLLECTING = 3  # AlternatingCollectingBarriersUnaligned: triggered, persisting in-flight data
PHASE_NAMES = ("WaitingForFirstBarrier", "CollectingBarriers",
               "WaitingForFirstBarrierUnaligned", "CollectingBarriersUnaligned")

MAX_CHECKPOINTS_TO_TRACK = 50  # CheckpointBarrierTracker keeps at most 50 pending checkpoints


@dataclass(frozen=True)
class Config:
    """What a task is configured with.

    ``after_finished`` is Flink's ``ENABLE_CHECKPOINTS_AFTER_TASKS_FINISH`` (on by default since
    1.15). ``alignment_timeout`` (unaligned mode only) makes checkpoints start aligned and switch
    to unaligned on ``TIMEOUT`` (Flink's ``aligned-checkpoint-timeout`` > 0).
    """

    channels: int
    mode: str = ALIGNED
    after_finished: bool = True
    alignment_timeout: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r} (expected one of {', '.join(MODES)})")
        if self.channels < 1:
            raise ValueError("a task with network inputs has at least one channel")
        if self.alignment_timeout and self.mode != UNALIGNED:
            raise ValueError("an alignment timeout needs unaligned checkpoints (mode 'unaligned')")

    @property
    def alternating(self) -> bool:
        """Flink's alternating handler: aligned first, unaligned after the timeout."""
        return self.alignment_timeout

    @property
    def base_phase(self) -> int:
        """The phase of an idle handler: pure unaligned waits for an unaligned first barrier."""
        return UNALIGNED_WAITING if self.mode == UNALIGNED and not self.alignment_timeout else WAITING

    @property
    def barriers_block(self) -> bool:
        """Barriers on the wire are aligned ones (so the network blocks their channel)."""
        return self.mode == ALIGNED or self.alignment_timeout

    @property
    def all_channels(self) -> int:
        return (1 << self.channels) - 1


class HandlerState(NamedTuple):
    """SingleCheckpointBarrierHandler (flip147 facts §2.1), channel sets as bit masks.

    ``pending`` is ``currentCheckpointId != lastCancelledOrCompletedCheckpointId``; ``target``
    is the number of channels open when the pending checkpoint started. When nothing is pending,
    ``aligned``, ``target`` and ``blocked`` are 0 and ``phase`` is the idle phase.
    """

    open: int
    current: int
    pending: bool
    aligned: int
    target: int
    blocked: int
    phase: int


class Entry(NamedTuple):
    """One pending checkpoint of the tracker (``CheckpointBarrierCount``)."""

    id: int
    aligned: int
    target: int
    aborted: bool


class TrackerState(NamedTuple):
    """CheckpointBarrierTracker (flip147 facts §2.3): pending entries oldest first."""

    open: int
    latest: int
    entries: tuple


State = Union[HandlerState, TrackerState]


class View(NamedTuple):
    """What an observer sees of a handler: the JSON fields of ``flipcheck barriers``."""

    pending: int | None
    blocked: int
    open: int


class Step(NamedTuple):
    """One step of a trace: the event, the outputs it caused and the view afterwards."""

    event: tuple
    outputs: tuple
    view: View


# ----------------------------------------------------------------------------------------------
# Events


def barrier(checkpoint_id: int, channel: int) -> tuple:
    return (BARRIER, checkpoint_id, channel)


def cancel(checkpoint_id: int, channel: int) -> tuple:
    return (CANCEL, checkpoint_id, channel)


def end_of_partition(channel: int) -> tuple:
    return (END, channel)


def data(channel: int) -> tuple:
    return (DATA, channel)


def rpc_trigger(checkpoint_id: int) -> tuple:
    return (RPC, checkpoint_id)


def timeout() -> tuple:
    return (TIMEOUT,)


def announce(checkpoint_id: int, channel: int) -> tuple:
    return (ANNOUNCE, checkpoint_id, channel)


# ASCII digits only (``\d`` would take other scripts' digits too).
_TOKEN = re.compile(r"(?:(?P<kind>[BCA])(?P<id>[0-9]+)@(?P<ch>[0-9]+)|E@(?P<end>[0-9]+)|D@(?P<data>[0-9]+)"
                    r"|T(?P<rpc>[0-9]+)|TIMEOUT)")
# The properties keep sets of checkpoint ids as bit masks (an id costs id bits), and only the
# order of ids matters to the handler, so ids beyond this bound add nothing but memory.
MAX_CHECKPOINT_ID = 1_000_000
# Far above any channel count a task can have; keeps int() of a token instant.
_MAX_CHANNEL = 10**12 - 1


def _number(text: str, high: int, what: str) -> int:
    if len(text) > len(str(high)) or int(text) > high:
        raise ValueError(f"{what} {text[:24]}{'...' if len(text) > 24 else ''} is above {high:,}")
    return int(text)


def parse_event(token: str) -> tuple:
    """The event a CLI token stands for: ``B<id>@<ch>``, ``C<id>@<ch>``, ``A<id>@<ch>``,
    ``E@<ch>``, ``D@<ch>``, ``T<id>``, ``TIMEOUT`` (ids 1..MAX_CHECKPOINT_ID).

    >>> [parse_event(t) for t in ("B3@1", "E@0", "T4", "TIMEOUT")]
    [('B', 3, 1), ('E', 0), ('T', 4), ('TIMEOUT',)]
    >>> parse_event("B0@1")
    Traceback (most recent call last):
    ValueError: checkpoint ids start at 1
    >>> parse_event("B9223372036854775808@0")
    Traceback (most recent call last):
    ValueError: checkpoint id 9223372036854775808 is above 1,000,000
    """
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise ValueError("expected B<id>@<ch>, C<id>@<ch>, A<id>@<ch>, E@<ch>, D@<ch>, T<id> or TIMEOUT")
    checkpoint = lambda text: _number(text, MAX_CHECKPOINT_ID, "checkpoint id")  # noqa: E731
    channel = lambda text: _number(text, _MAX_CHANNEL, "channel")  # noqa: E731
    if match["kind"]:
        event = (match["kind"], checkpoint(match["id"]), channel(match["ch"]))
    elif match["end"] is not None:
        event = (END, channel(match["end"]))
    elif match["data"] is not None:
        event = (DATA, channel(match["data"]))
    elif match["rpc"] is not None:
        event = (RPC, checkpoint(match["rpc"]))
    else:
        event = (TIMEOUT,)
    if event[0] in (BARRIER, CANCEL, ANNOUNCE, RPC) and event[1] < 1:
        raise ValueError("checkpoint ids start at 1")
    return event


def format_event(event: tuple) -> str:
    """The CLI token of an event (inverse of :func:`parse_event`).

    >>> format_event(("C", 2, 0)), format_event(("D", 1))
    ('C2@0', 'D@1')
    """
    kind = event[0]
    if kind in (BARRIER, CANCEL, ANNOUNCE):
        return f"{kind}{event[1]}@{event[2]}"
    if kind in (END, DATA):
        return f"{kind}@{event[1]}"
    if kind == RPC:
        return f"T{event[1]}"
    return TIMEOUT


def channels_of(mask: int) -> list[int]:
    """The channels in a bit mask, ascending.

    >>> channels_of(0b101)
    [0, 2]
    """
    return [ch for ch in range(mask.bit_length()) if mask >> ch & 1]


# ----------------------------------------------------------------------------------------------
# The transition function


def initial_state(config: Config) -> State:
    if config.mode == AT_LEAST_ONCE:
        return TrackerState(open=config.all_channels, latest=-1, entries=())
    return HandlerState(open=config.all_channels, current=-1, pending=False, aligned=0, target=0,
                        blocked=0, phase=config.base_phase)


def step(config: Config, state: State, event: tuple) -> tuple[State, tuple]:
    """Apply one input event; return the next state and the outputs, in the order Flink emits them."""
    out: list = []
    if config.mode == AT_LEAST_ONCE:
        state = _tracker_step(config, state, event, out)
    else:
        state = _handler_step(config, state, event, out)
    return state, tuple(out)


def view(config: Config, state: State) -> View:
    if config.mode == AT_LEAST_ONCE:
        live = [e.id for e in state.entries if not e.aborted]
        return View(pending=max(live) if live else None, blocked=0, open=state.open)
    return View(pending=state.current if state.pending else None, blocked=state.blocked, open=state.open)


def run(config: Config, events: Iterable[tuple], state: State | None = None) -> list[Step]:
    """The :class:`Step` s of a whole sequence."""
    state = initial_state(config) if state is None else state
    trace = []
    for event in events:
        state, outputs = step(config, state, event)
        trace.append(Step(event, outputs, view(config, state)))
    return trace


def final_state(config: Config, events: Sequence[tuple]) -> State:
    state = initial_state(config)
    for event in events:
        state, _ = step(config, state, event)
    return state


# ----------------------------------------------------------------------------------------------
# Exactly-once: SingleCheckpointBarrierHandler with its BarrierHandlerState (flip147 facts §2.1, §2.2)


def _handler_step(cfg: Config, s: HandlerState, event: tuple, out: list) -> HandlerState:
    kind = event[0]
    if kind == BARRIER:
        return _barrier(cfg, s, event[1], event[2], out, rpc=False)
    if kind == DATA:
        return _record(s, event[1], out)
    if kind == END:
        return _end_of_partition(cfg, s, event[1], out)
    if kind == CANCEL:
        return _cancellation(cfg, s, event[1], out)
    if kind == RPC:
        return _rpc_trigger(cfg, s, event[1], out)
    if kind == TIMEOUT:
        return _alignment_timeout(s, out)
    if kind == ANNOUNCE:
        # processBarrierAnnouncement: an announcement can start (and subsume) a checkpoint; what
        # the state does with it (remember or prioritise the barrier) is not observable here.
        return _check_new_checkpoint(cfg, s, event[1], out)
    raise ValueError(f"unknown event {event!r}")


def _unblock_all(blocked: int, out: list) -> int:
    for ch in channels_of(blocked):
        out.append((UNBLOCKED, ch))
    return 0


def _abort(cfg: Config, s: HandlerState, checkpoint_id: int, reason: str, out: list) -> HandlerState:
    """abortInternal: the state unblocks every channel, then the task is notified (flip147 facts §2.1)."""
    _unblock_all(s.blocked, out)
    out.append((ABORTED, checkpoint_id, reason))
    return s._replace(current=max(checkpoint_id, s.current), pending=False, aligned=0, target=0,
                      blocked=0, phase=cfg.base_phase)


def _check_new_checkpoint(cfg: Config, s: HandlerState, checkpoint_id: int, out: list) -> HandlerState:
    """checkNewCheckpoint: a newer id subsumes the pending checkpoint (SUBSUMED); the target is
    the number of channels open now (flip147 facts §2.1)."""
    if s.current >= checkpoint_id:
        return s
    if s.pending:
        s = _abort(cfg, s, s.current, SUBSUMED, out)
    return s._replace(current=checkpoint_id, pending=True, aligned=0, target=s.open.bit_count())


def _complete_if_aligned(s: HandlerState, out: list) -> HandlerState:
    """After every alignment step: all channels aligned -> the checkpoint is done on this task."""
    if s.pending and s.aligned.bit_count() == s.target:
        out.append((COMPLETED, s.current))
        return s._replace(pending=False, aligned=0, target=0)
    return s


def _mark_aligned(s: HandlerState, channel: int, out: list) -> tuple[int, bool]:
    """markCheckpointAlignedAndTransformState, first half: the aligned set is a set (a channel
    that sent its barrier and then ended counts once); the first aligned channel starts the
    alignment, whether it came with a barrier or with EndOfPartition (FLINK-24068)."""
    aligned = s.aligned | (1 << channel)
    if aligned.bit_count() == 1:
        out.append((ALIGNMENT_START, s.current))
    return aligned, aligned.bit_count() == s.target


def _barrier(cfg: Config, s: HandlerState, checkpoint_id: int, channel: int, out: list,
             rpc: bool) -> HandlerState:
    """processBarrier (flip147 facts §2.1) and BarrierHandlerState.barrierReceived (flip147 facts §2.2)."""
    if s.current > checkpoint_id or (s.current == checkpoint_id and not s.pending):
        return s  # obsolete barrier: the channel is resumed at once, nothing observable
    s = _check_new_checkpoint(cfg, s, checkpoint_id, out)
    aligned, everything = _mark_aligned(s, channel, out)
    blocked, phase = s.blocked, s.phase
    # An RPC-triggered barrier never blocks (flip147 facts §2.5: markChannelBlocked = !isRpcTriggered).
    if cfg.barriers_block and not rpc:
        blocked |= 1 << channel
        out.append((BLOCKED, channel))
    if phase in (WAITING, COLLECTING):
        if everything:
            out.append((TRIGGERED, checkpoint_id, ALIGNED))
            blocked, phase = _unblock_all(blocked, out), cfg.base_phase
        else:
            phase = COLLECTING
    elif phase == UNALIGNED_WAITING:
        # The first barrier triggers an unaligned checkpoint at once.
        out.append((TRIGGERED, checkpoint_id, UNALIGNED))
        if everything:
            blocked, phase = _unblock_all(blocked, out), cfg.base_phase
        else:
            phase = UNALIGNED_COLLECTING
    elif everything:  # UNALIGNED_COLLECTING
        blocked, phase = _unblock_all(blocked, out), cfg.base_phase
    return _complete_if_aligned(s._replace(aligned=aligned, blocked=blocked, phase=phase), out)


def _record(s: HandlerState, channel: int, out: list) -> HandlerState:
    """A record that arrives while an unaligned checkpoint collects barriers, on a channel whose
    barrier has not arrived yet, belongs to the checkpoint as in-flight data."""
    if s.phase == UNALIGNED_COLLECTING and not s.aligned >> channel & 1:
        out.append((IN_FLIGHT, s.current, channel))
    return s


def _end_of_partition(cfg: Config, s: HandlerState, channel: int, out: list) -> HandlerState:
    """processEndOfPartition: the channel always closes first (flip147 facts §2.1)."""
    s = s._replace(open=s.open & ~(1 << channel))
    if not cfg.after_finished:
        # Before FLIP-147 a finishing input cancelled the pending checkpoint.
        return _abort(cfg, s, s.current, INPUT_END_OF_STREAM, out) if s.pending else s
    if not s.pending:
        return s  # later checkpoints simply target one channel less
    # FLIP-147 / FLINK-21086: EndOfPartition counts as this channel's barrier for the pending
    # checkpoint ("Do Not Cancel Pending Checkpoint on Finish").
    aligned, everything = _mark_aligned(s, channel, out)
    blocked, phase = s.blocked & ~(1 << channel), s.phase
    if everything and phase == COLLECTING:
        out.append((TRIGGERED, s.current, ALIGNED))
        blocked, phase = _unblock_all(blocked, out), cfg.base_phase
    elif everything and phase == UNALIGNED_COLLECTING:
        blocked, phase = _unblock_all(blocked, out), cfg.base_phase
    # In the two waiting phases no barrier of the pending checkpoint was seen, so EndOfPartition
    # triggers nothing (with valid inputs it cannot be the last channel there).
    return _complete_if_aligned(s._replace(aligned=aligned, blocked=blocked, phase=phase), out)


def _cancellation(cfg: Config, s: HandlerState, checkpoint_id: int, out: list) -> HandlerState:
    """processCancellationBarrier: a newer id, or the current one once alignment started."""
    if checkpoint_id > s.current or (checkpoint_id == s.current and s.aligned):
        return _abort(cfg, s, checkpoint_id, ON_CANCELLATION_BARRIER, out)
    return s


def _rpc_trigger(cfg: Config, s: HandlerState, checkpoint_id: int, out: list) -> HandlerState:
    """StreamTask.triggerCheckpointAsync on a task with network inputs (flip147 facts §2.5)."""
    if not s.open:
        # Every input finished: checkpoint like a source; the handler is not involved and all
        # barriers count as received at once (FLINK-23771).
        kind = UNALIGNED if cfg.base_phase == UNALIGNED_WAITING else ALIGNED
        out.append((TRIGGERED, checkpoint_id, kind))
        out.append((COMPLETED, checkpoint_id))
        return s
    # triggerUnfinishedChannelsCheckpoint: one RPC barrier per unfinished channel, none blocked.
    for channel in channels_of(s.open):
        s = _barrier(cfg, s, checkpoint_id, channel, out, rpc=True)
    return s


def _alignment_timeout(s: HandlerState, out: list) -> HandlerState:
    """The alignment timer fires (alternating handler only): switch the pending checkpoint to
    unaligned. Channels already blocked stay blocked until it completes (FLINK-22638)."""
    if not s.pending:
        return s
    if s.phase == WAITING:
        return s._replace(phase=UNALIGNED_WAITING)  # triggers at its first barrier
    if s.phase == COLLECTING:
        out.append((TRIGGERED, s.current, UNALIGNED))
        return s._replace(phase=UNALIGNED_COLLECTING)
    return s  # already unaligned


# ----------------------------------------------------------------------------------------------
# At-least-once: CheckpointBarrierTracker (flip147 facts §2.3)


def _trigger(checkpoint_id: int, out: list) -> None:
    out.append((TRIGGERED, checkpoint_id, AT_LEAST_ONCE))
    out.append((COMPLETED, checkpoint_id))


def _tracker_step(cfg: Config, s: TrackerState, event: tuple, out: list) -> TrackerState:
    kind = event[0]
    if kind == BARRIER:
        return _tracker_barrier(s, event[1], event[2], out)
    if kind == DATA:
        return s
    if kind == END:
        return _tracker_end_of_partition(cfg, s, event[1], out)
    if kind == CANCEL:
        return _tracker_cancellation(s, event[1], event[2], out)
    if kind == RPC:
        if not s.open:
            _trigger(event[1], out)  # like a source (flip147 facts §2.5)
            return s
        for channel in channels_of(s.open):
            s = _tracker_barrier(s, event[1], channel, out)
        return s
    if kind in (TIMEOUT, ANNOUNCE):
        return s  # the tracker has no timer and ignores announcements
    raise ValueError(f"unknown event {event!r}")


def _tracker_barrier(s: TrackerState, checkpoint_id: int, channel: int, out: list) -> TrackerState:
    if checkpoint_id > s.latest and s.open.bit_count() == 1:
        _trigger(checkpoint_id, out)  # single open channel: fast path, not tracked
        return s
    entries = s.entries
    for pos, entry in enumerate(entries):
        if entry.id == checkpoint_id:
            aligned = entry.aligned | (1 << channel)
            if aligned.bit_count() == entry.target:
                # Complete: drop it and every older entry, silently (no abort notification).
                if not entry.aborted:
                    _trigger(checkpoint_id, out)
                return s._replace(entries=entries[pos + 1:])
            return s._replace(entries=entries[:pos] + (entry._replace(aligned=aligned),) + entries[pos + 1:])
    if checkpoint_id > s.latest:
        entries += (Entry(checkpoint_id, 1 << channel, s.open.bit_count(), False),)
        return s._replace(latest=checkpoint_id, entries=entries[-MAX_CHECKPOINTS_TO_TRACK:])
    return s  # an id not newer than the latest cannot complete any more


def _tracker_cancellation(s: TrackerState, checkpoint_id: int, channel: int, out: list) -> TrackerState:
    if checkpoint_id > s.latest and s.open.bit_count() == 1:
        out.append((ABORTED, checkpoint_id, ON_CANCELLATION_BARRIER))
        return s
    entries = list(s.entries)
    while entries and entries[0].id < checkpoint_id:
        older = entries.pop(0)
        if not older.aborted:
            out.append((ABORTED, older.id, ON_CANCELLATION_BARRIER))
    latest = s.latest
    if entries and entries[0].id == checkpoint_id:
        head = entries[0]
        if not head.aborted:
            out.append((ABORTED, checkpoint_id, ON_CANCELLATION_BARRIER))
        aligned = head.aligned | (1 << channel)
        if aligned.bit_count() == head.target:
            entries.pop(0)
        else:
            entries[0] = Entry(checkpoint_id, aligned, head.target, True)
    elif checkpoint_id > latest:
        out.append((ABORTED, checkpoint_id, ON_CANCELLATION_BARRIER))
        latest = checkpoint_id
        entries.insert(0, Entry(checkpoint_id, 1 << channel, s.open.bit_count(), True))
    return s._replace(latest=latest, entries=tuple(entries))


def _tracker_end_of_partition(cfg: Config, s: TrackerState, channel: int, out: list) -> TrackerState:
    s = s._replace(open=s.open & ~(1 << channel))
    if not cfg.after_finished:
        for entry in s.entries:
            if not entry.aborted:
                out.append((ABORTED, entry.id, INPUT_END_OF_STREAM))
        return s._replace(entries=())
    # Newest to oldest: the channel counts for every pending checkpoint; the newest one that
    # becomes complete triggers and takes every older one with it.
    entries = list(s.entries)
    for pos in range(len(entries) - 1, -1, -1):
        entry = entries[pos]
        aligned = entry.aligned | (1 << channel)
        if aligned.bit_count() == entry.target:
            if not entry.aborted:
                _trigger(entry.id, out)
            return s._replace(entries=tuple(entries[pos + 1:]))
        entries[pos] = entry._replace(aligned=aligned)
    return s._replace(entries=tuple(entries))

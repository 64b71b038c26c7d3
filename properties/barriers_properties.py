"""Properties of task-side barrier alignment with finished channels (FLIP-147; flip147 facts §2).

Every property is a plain function ``(config, trace) -> list[Violation]`` over a trace of
:class:`~flipcheck.model.barriers.Step` s (event, outputs, view afterwards), produced by the
model or by any implementation. Each one is written as a small *monitor*: a hashable state
folded over the steps, so exhaustive exploration can carry the monitors along with the explored
states (like history variables in TLA+) and check every path, not just one trace.
:func:`refines_model` compares an implementation's trace with the model's instead.

:data:`BARRIER_PROPERTIES` lists them with their meaning and the seed sentence or Flink fact
they encode; :func:`check_trace` runs them all.

Example
-------
>>> from flipcheck.model.barriers import Config, run, barrier, data, end_of_partition, rpc_trigger
>>> cfg = Config(channels=2)
>>> check_trace(cfg, run(cfg, [barrier(1, 0), end_of_partition(1), end_of_partition(0), rpc_trigger(2)]))
[]
>>> from flipcheck.model.barriers import Step, View
>>> forgot = [Step(barrier(1, 0), (("alignment_start", 1),), View(1, 0, 3)), Step(data(0), (), View(1, 0, 3))]
>>> [v.property for v in check_trace(cfg, forgot)]
['aligned_holds_records_after_barrier', 'refines_model']
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from flipcheck.model.barriers import (
    ABORT_REASONS, ABORTED, ALIGNED, ALIGNMENT_START, ANNOUNCE, AT_LEAST_ONCE, BARRIER, BLOCKED, CANCEL,
    COMPLETED, DATA, END, IN_FLIGHT, INPUT_END_OF_STREAM, ON_CANCELLATION_BARRIER, RPC, SUBSUMED, TRIGGERED,
    UNALIGNED, UNBLOCKED, Config, Step, View, channels_of, initial_state, run, view,
)

from .violation import Property, Violation

__all__ = [
    "Monitor", "MONITORS", "BARRIER_PROPERTIES", "PROPERTY_NAMES",
    "triggered_ids_increase", "trigger_abort_exclusive", "aligned_holds_records_after_barrier",
    "completed_checkpoint_leaves_no_channel_blocked", "blocked_channels_are_open", "in_flight_exact",
    "end_of_partition_alignment", "rpc_trigger_completes_at_once", "abort_reasons",
    "alignment_start_recorded", "refines_model", "check_trace", "initial_view",
]


def initial_view(config: Config) -> View:
    return view(config, initial_state(config))


class Monitor:
    """A property as an observer automaton: ``start`` gives its initial (hashable) state,
    ``step`` folds one trace step and returns the next state and a message when violated."""

    name = ""
    applies: Callable[[Config], bool] = staticmethod(lambda config: True)

    def start(self, config: Config):
        return None

    def step(self, config: Config, m, event: tuple, outputs: tuple, before: View, after: View):
        raise NotImplementedError

    def check(self, config: Config, trace: Sequence[Step]) -> list[Violation]:
        """Fold the whole trace; every violating step is reported (with its index)."""
        if not self.applies(config):
            return []
        m, before, found = self.start(config), initial_view(config), []
        for index, s in enumerate(trace):
            m, message = self.step(config, m, s.event, s.outputs, before, s.view)
            if message:
                found.append(Violation(self.name, f"step {index + 1}: {message}", witness=index))
            before = s.view
        return found


def _exactly_once(config: Config) -> bool:
    return config.mode != AT_LEAST_ONCE


def _bit(i: int) -> int:
    return 1 << i


class _TriggeredIdsIncrease(Monitor):
    name = "triggered_ids_increase"

    def start(self, config):
        return -1

    def step(self, config, last, event, outputs, before, after):
        for o in outputs:
            if o[0] == TRIGGERED:
                if o[1] <= last:
                    return max(last, o[1]), f"checkpoint {o[1]} triggered after checkpoint {last}"
                last = o[1]
        return last, None


class _TriggerAbortExclusive(Monitor):
    name = "trigger_abort_exclusive"

    def start(self, config):
        return (0, 0)  # completed ids, aborted ids (bit masks)

    def step(self, config, m, event, outputs, before, after):
        completed, aborted = m
        for o in outputs:
            kind = o[0]
            if kind == ABORTED and completed >> o[1] & 1:
                return m, f"checkpoint {o[1]} aborted after it completed"
            if kind in (TRIGGERED, COMPLETED) and aborted >> o[1] & 1:
                return m, f"checkpoint {o[1]} {kind} after it was aborted"
            if kind == COMPLETED:
                completed |= _bit(o[1])
            elif kind == ABORTED:
                aborted |= _bit(o[1])
        return (completed, aborted), None


def _close(pairs: tuple, checkpoint_id: int) -> tuple:
    return tuple(p for p in pairs if p[0] != checkpoint_id)


class _RecordsHeld(Monitor):
    """Per checkpoint neither triggered nor aborted yet: the channels that delivered its barrier.
    A checkpoint older than the newest one started is given up (subsumed or obsolete)."""

    name = "aligned_holds_records_after_barrier"
    applies = staticmethod(_exactly_once)

    def start(self, config):
        return (0, -1, ())  # closed ids (bit mask), newest id started, ((id, channel mask), ...)

    def step(self, config, m, event, outputs, before, after):
        closed, newest, pairs = m
        message = None
        kind = event[0]
        if kind == DATA:
            ch = event[1]
            for checkpoint_id, mask in pairs:
                if mask >> ch & 1:
                    message = (f"record on channel {ch} processed after its barrier {checkpoint_id} "
                               f"but before checkpoint {checkpoint_id} was taken")
        elif kind in (BARRIER, ANNOUNCE, RPC, CANCEL) and event[1] >= newest:
            newest = event[1]
            pairs = tuple(p for p in pairs if p[0] >= newest)
            if kind == BARRIER and not closed >> newest & 1:
                mask = next((mk for i, mk in pairs if i == newest), 0) | _bit(event[2])
                pairs = ((newest, mask),)
        for o in outputs:
            if o[0] in (TRIGGERED, ABORTED):
                closed |= _bit(o[1])
                pairs = _close(pairs, o[1])
        return (closed, newest, pairs), message


class _CompletionUnblocks(Monitor):
    name = "completed_checkpoint_leaves_no_channel_blocked"

    def start(self, config):
        return 0  # blocked channels according to the outputs so far

    def step(self, config, blocked, event, outputs, before, after):
        for o in outputs:
            kind = o[0]
            if kind == BLOCKED:
                blocked |= _bit(o[1])
            elif kind == UNBLOCKED:
                blocked &= ~_bit(o[1])
            elif kind in (COMPLETED, ABORTED) and blocked:
                return blocked, f"checkpoint {o[1]} {kind} with channels {channels_of(blocked)} still blocked"
        if blocked != after.blocked:
            return blocked, (f"outputs leave channels {channels_of(blocked)} blocked, "
                             f"the handler reports {channels_of(after.blocked)}")
        if after.blocked and after.pending is None:
            return blocked, f"channels {channels_of(after.blocked)} blocked while no checkpoint is pending"
        return blocked, None


class _BlockedChannelsAreOpen(Monitor):
    name = "blocked_channels_are_open"

    def step(self, config, m, event, outputs, before, after):
        stuck = after.blocked & ~after.open
        return m, (f"channels {channels_of(stuck)} ended but are still blocked" if stuck else None)


class _Answered(Monitor):
    """Shared bookkeeping: per checkpoint still open on this task, the channels that delivered its
    barrier (an RPC trigger answers for every open channel)."""

    def start(self, config):
        return (0, ())  # closed ids, ((id, mask), ...)

    @staticmethod
    def answer(m, event, before: View):
        closed, pairs = m
        if event[0] in (BARRIER, RPC) and not closed >> event[1] & 1:
            checkpoint_id = event[1]
            mask = before.open if event[0] == RPC else _bit(event[2])
            mask |= next((mk for i, mk in pairs if i == checkpoint_id), 0)
            pairs = tuple(sorted(_close(pairs, checkpoint_id) + ((checkpoint_id, mask),)))
        return closed, pairs

    @staticmethod
    def close(config, m, outputs):
        """Completed and aborted ids are closed; exactly-once handlers track one checkpoint, so
        there every older id is closed too (the tracker can keep older ones pending)."""
        closed, pairs = m
        for o in outputs:
            if o[0] in (COMPLETED, ABORTED):
                closed |= _bit(o[1])
                if config.mode == AT_LEAST_ONCE:
                    pairs = _close(pairs, o[1])
                else:
                    pairs = tuple(p for p in pairs if p[0] > o[1])
        return closed, pairs

    @staticmethod
    def answered(m, checkpoint_id: int) -> int:
        return next((mk for i, mk in m[1] if i == checkpoint_id), 0)


class _InFlightExact(Monitor):
    name = "in_flight_exact"
    applies = staticmethod(lambda config: config.mode == UNALIGNED)

    def start(self, config):
        return (0, _Answered().start(config))  # checkpoint capturing in-flight data (0: none)

    def step(self, config, m, event, outputs, before, after):
        capturing, answers = m
        message = None
        answers = _Answered.answer(answers, event, before)
        if event[0] == DATA:
            ch = event[1]
            expected = ((IN_FLIGHT, capturing, ch),) if capturing and not _Answered.answered(answers, capturing) >> ch & 1 else ()
            actual = tuple(o for o in outputs if o[0] == IN_FLIGHT)
            if actual != expected:
                message = (f"record on channel {ch}: in-flight outputs {list(actual)}, expected {list(expected)} "
                           f"(unaligned checkpoint capturing: {capturing or 'none'})")
        elif any(o[0] == IN_FLIGHT for o in outputs):
            message = "in-flight data recorded for an event that is not a record"
        for o in outputs:
            if o[0] == TRIGGERED and o[2] == UNALIGNED and event[0] != RPC:
                capturing = o[1]
            elif o[0] in (COMPLETED, ABORTED) and capturing and o[1] >= capturing:
                capturing = 0  # one checkpoint at a time: a newer abort ends the capture too
        return (capturing, _Answered.close(config, answers, outputs)), message


class _EndOfPartitionAlignment(Monitor):
    name = "end_of_partition_alignment"

    def start(self, config):
        return _Answered().start(config)

    def step(self, config, m, event, outputs, before, after):
        m = _Answered.answer(m, event, before)
        aborts = [o for o in outputs if o[0] == ABORTED]
        message = None
        if event[0] == END and config.after_finished and aborts:
            message = f"EndOfPartition on channel {event[1]} aborted checkpoint {aborts[0][1]} ({aborts[0][2]})"
        elif event[0] == END and not config.after_finished and before.pending is not None and not any(
                o[1] == before.pending and o[2] == INPUT_END_OF_STREAM for o in aborts):
            message = (f"EndOfPartition on channel {event[1]} did not abort pending checkpoint "
                       f"{before.pending} with {INPUT_END_OF_STREAM}")
        for o in outputs:
            # Completion through the handler needs every still open channel's barrier; a task whose
            # inputs all ended completes an RPC-triggered checkpoint at once.
            if o[0] == COMPLETED and not (event[0] == RPC and not before.open):
                missing = after.open & ~_Answered.answered(m, o[1])
                if missing:
                    message = f"checkpoint {o[1]} completed without the barriers of open channels {channels_of(missing)}"
        m = _Answered.close(config, m, outputs)
        if message is None and after.pending is not None:
            if not after.open & ~_Answered.answered(m, after.pending):
                ended = channels_of(config.all_channels & ~after.open)
                message = (f"checkpoint {after.pending} still pending although every open channel delivered "
                           f"its barrier (ended channels: {ended})")
        return m, message


class _RpcTriggerCompletesAtOnce(Monitor):
    name = "rpc_trigger_completes_at_once"

    def step(self, config, m, event, outputs, before, after):
        if event[0] != RPC:
            return m, None
        checkpoint_id = event[1]
        triggered = any(o[0] == TRIGGERED and o[1] == checkpoint_id for o in outputs)
        completed = any(o[0] == COMPLETED and o[1] == checkpoint_id for o in outputs)
        blocked = [o[1] for o in outputs if o[0] == BLOCKED]
        if not (triggered and completed):
            missing = " and ".join(k for k, ok in (("triggered", triggered), ("completed", completed)) if not ok)
            return m, (f"RPC trigger {checkpoint_id} with {before.open.bit_count()} open channels was not {missing} "
                       "at once")
        if blocked:
            return m, f"RPC trigger {checkpoint_id} blocked channels {blocked}"
        return m, None


_ABORTING_EVENTS = {BARRIER: SUBSUMED, ANNOUNCE: SUBSUMED, RPC: SUBSUMED, CANCEL: ON_CANCELLATION_BARRIER,
                    END: INPUT_END_OF_STREAM}


class _AbortReasons(Monitor):
    name = "abort_reasons"

    def step(self, config, m, event, outputs, before, after):
        for o in outputs:
            if o[0] != ABORTED:
                continue
            reason, expected = o[2], _ABORTING_EVENTS.get(event[0])
            if reason not in ABORT_REASONS:
                return m, f"checkpoint {o[1]} aborted with unknown reason {reason}"
            if expected is None:
                return m, f"checkpoint {o[1]} aborted by a {event[0]} event"
            if reason != expected:
                return m, f"checkpoint {o[1]} aborted by a {event[0]} event with {reason}, expected {expected}"
            if reason == SUBSUMED and (config.mode == AT_LEAST_ONCE or o[1] >= event[1]):
                return m, f"checkpoint {o[1]} subsumed by {event[0]}{event[1]} in {config.mode} mode"
            if reason == INPUT_END_OF_STREAM and config.after_finished:
                return m, f"checkpoint {o[1]} aborted on EndOfPartition although checkpoints after tasks finished are on"
        return m, None


class _AlignmentStartRecorded(Monitor):
    name = "alignment_start_recorded"
    applies = staticmethod(_exactly_once)

    def start(self, config):
        return 0  # ids whose alignment started

    def step(self, config, started, event, outputs, before, after):
        for o in outputs:
            if o[0] == ALIGNMENT_START:
                started |= _bit(o[1])
            elif o[0] == COMPLETED and not (event[0] == RPC and not before.open) and not started >> o[1] & 1:
                return started, f"checkpoint {o[1]} completed but its alignment never started"
        return started, None


MONITORS: tuple[Monitor, ...] = (
    _TriggeredIdsIncrease(), _TriggerAbortExclusive(), _RecordsHeld(), _CompletionUnblocks(),
    _BlockedChannelsAreOpen(), _InFlightExact(), _EndOfPartitionAlignment(), _RpcTriggerCompletesAtOnce(),
    _AbortReasons(), _AlignmentStartRecorded(),
)
_BY_NAME = {mon.name: mon for mon in MONITORS}


def triggered_ids_increase(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """Checkpoints are triggered in strictly increasing id order (flip147 facts §5 note I7)."""
    return _BY_NAME["triggered_ids_increase"].check(config, trace)


def trigger_abort_exclusive(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """No checkpoint is aborted after it completed, nor triggered or completed after its abort."""
    return _BY_NAME["trigger_abort_exclusive"].check(config, trace)


def aligned_holds_records_after_barrier(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """Exactly-once: no record that arrived after a channel's barrier is processed before the
    checkpoint of that barrier was taken (triggered) or given up (aborted)."""
    return _BY_NAME["aligned_holds_records_after_barrier"].check(config, trace)


def completed_checkpoint_leaves_no_channel_blocked(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """When a checkpoint completes or aborts on the task no channel is blocked any more, and no
    channel is blocked while nothing is pending; the blocked/unblocked outputs agree with the
    blocked set the handler reports."""
    return _BY_NAME["completed_checkpoint_leaves_no_channel_blocked"].check(config, trace)


def blocked_channels_are_open(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """A channel that delivered EndOfPartition is never blocked."""
    return _BY_NAME["blocked_channels_are_open"].check(config, trace)


def in_flight_exact(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """Unaligned: the in-flight data of a checkpoint is exactly the records received after it was
    triggered on channels whose barrier had not arrived yet."""
    return _BY_NAME["in_flight_exact"].check(config, trace)


def end_of_partition_alignment(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """A checkpoint completes exactly when every still open channel delivered its barrier:
    EndOfPartition counts as the pending checkpoint's barrier and removes the channel from later
    ones; it never aborts with the feature on, and aborts the pending checkpoint with it off."""
    return _BY_NAME["end_of_partition_alignment"].check(config, trace)


def rpc_trigger_completes_at_once(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """An RPC trigger (all upstream tasks finished) triggers and completes its checkpoint in the
    same step, blocking nothing, whether or not EndOfPartition already arrived everywhere."""
    return _BY_NAME["rpc_trigger_completes_at_once"].check(config, trace)


def abort_reasons(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """Aborts carry Flink's reasons: a newer barrier subsumes (exactly-once only), a cancellation
    marker gives ON_CANCELLATION_BARRIER, EndOfPartition (feature off) INPUT_END_OF_STREAM."""
    return _BY_NAME["abort_reasons"].check(config, trace)


def alignment_start_recorded(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """Exactly-once: every checkpoint completed through alignment recorded its alignment start."""
    return _BY_NAME["alignment_start_recorded"].check(config, trace)


def refines_model(config: Config, trace: Sequence[Step]) -> list[Violation]:
    """The implementation's outputs and view equal the model's at every step (first difference)."""
    expected = run(config, [s.event for s in trace])
    for index, (got, want) in enumerate(zip(trace, expected)):
        if got.outputs != want.outputs or got.view != want.view:
            return [Violation("refines_model",
                              f"step {index + 1} {got.event}: outputs {list(got.outputs)} {got.view}, "
                              f"model {list(want.outputs)} {want.view}", witness=index)]
    return []


_SEED_ALIGNMENT = ('Seed "Make CheckpointBarrierHandler Support EndOfPartition on TM Side": "EndOfPartition '
                   'from one input channel would mark this channel as aligned for all the pending and '
                   'following checkpoints"')

BARRIER_PROPERTIES: tuple[Property, ...] = (
    Property("triggered_ids_increase", triggered_ids_increase,
             "checkpoints are triggered in strictly increasing id order, each at most once",
             "flip147 facts §5 notes, invariant I7: the aligned handler never triggers the same id twice and "
             "triggers ids in increasing order"),
    Property("trigger_abort_exclusive", trigger_abort_exclusive,
             "no checkpoint is aborted after it completed, triggered or completed after it was aborted",
             "flip147 facts §2.1: abortInternal and completion both set lastCancelledOrCompletedCheckpointId"),
    Property("aligned_holds_records_after_barrier", aligned_holds_records_after_barrier,
             "exactly-once: a record behind a barrier waits until the checkpoint is taken",
             "flip147 facts §2.2: WaitingForFirstBarrier/CollectingBarriers block the channel of each barrier "
             "until all arrived"),
    Property("completed_checkpoint_leaves_no_channel_blocked", completed_checkpoint_leaves_no_channel_blocked,
             "completion and abort unblock every channel; nothing pending, nothing blocked",
             "flip147 facts §2.2: trigger -> unblock all; abort -> unblock all"),
    Property("blocked_channels_are_open", blocked_channels_are_open,
             "a channel that ended is never blocked",
             "flip147 facts §2.2: EndOfPartition -> channelFinished(ch)"),
    Property("in_flight_exact", in_flight_exact,
             "unaligned in-flight data = records received after the trigger on channels still "
             "waiting for their barrier",
             'Seed "Extend the task Barrier Alignment": unaligned barriers "could jump over the pending '
             'records"; flip147 facts §2.2 checkpointStarted/checkpointStopped'),
    Property("end_of_partition_alignment", end_of_partition_alignment,
             "EndOfPartition aligns the pending checkpoint and lowers the target of later ones; "
             "never aborts (feature on) / aborts with INPUT_END_OF_STREAM (feature off)",
             _SEED_ALIGNMENT + '; "Do Not Cancel Pending Checkpoint on Finish"; flip147 facts §2.1 processEndOfPartition, '
             "invariant I6"),
    Property("rpc_trigger_completes_at_once", rpc_trigger_completes_at_once,
             "an RPC-triggered checkpoint triggers and completes at once without blocking",
             'Seed: "After CheckpointBarrierHandler has processed EndOfPartition from all the channels, it '
             'would only received checkpoint notification of case 1 and would directly trigger snapshot"; '
             "flip147 facts §2.5, FLINK-23771"),
    Property("abort_reasons", abort_reasons,
             "SUBSUMED / ON_CANCELLATION_BARRIER / INPUT_END_OF_STREAM exactly where Flink uses them",
             "flip147 facts §2.4"),
    Property("alignment_start_recorded", alignment_start_recorded,
             "exactly-once: every aligned completion had an alignment start",
             "flip147 facts §2.1 markCheckpointAlignedAndTransformState, FLINK-24068"),
    Property("refines_model", refines_model,
             "the implementation's outputs and views equal the model's for the same inputs",
             "flip147 facts §2.2 transition tables (model/barriers.py)"),
)
PROPERTY_NAMES = tuple(p.name for p in BARRIER_PROPERTIES)


def check_trace(config: Config, trace: Sequence[Step], properties: Iterable[Property] | None = None) -> list[Violation]:
    """Run every property (or the given ones) over a trace; all violations, property order."""
    found: list[Violation] = []
    for prop in BARRIER_PROPERTIES if properties is None else properties:
        found.extend(prop(config, trace))
    return found

"""The task rules: sources and tasks (J1–J9) and Sink V2 (S1–S4).

Each *action* is one kind of step a task ``t`` can take — :func:`emit` and :func:`end_of_data`
a source, :func:`receive` and :func:`poll_released` a task with inputs, :func:`finish`,
:func:`receive_notification` and :func:`receive_trigger_rpc` every task (the tables of
:mod:`.machine` say which). ``action(job, state, t)`` returns ``(label, step)`` for every such
step enabled in ``state`` (an empty list when none is). The functions after them are the rule
bodies the actions share; they change a :class:`~.step.Step` in place. The rule texts are in the
package docstring (:mod:`flipcheck.model.protocol`); each function cites the rules it encodes.

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> [(label, step.freeze().queues) for label, step in emit(job, initial_state(job), 0)]
[(('emit', 0, 0), ((('D', 0),),))]
>>> list(end_of_data(job, initial_state(job), 0))     # J1: records first
[]
"""

from __future__ import annotations

from typing import Sequence

from .. import barriers as bar
from .coordinator import decline
from .state import (
    BARRIER, CANCEL, CANCELED, DATA, END_OF_DATA, END_OF_DATA_MSG, END_OF_PARTITION_MSG, EOD, EOI, EOP, FAILED, FINISHED,
    FINISHED_TASK, RUNNING, STOPPED, TASK_CLOSING, TASK_NOT_READY, JobState, Snapshot, TaskState,
)
from .step import Step, Steps, replaced
from .structure import Job

__all__ = [
    "emit", "end_of_data", "receive", "poll_released", "finish", "receive_notification", "receive_trigger_rpc",
    "fresh_task", "send_barrier", "commit",
]

# ----------------------------------------------------------------------------------------------
# The actions of a task


def emit(job: Job, s: JobState, t: int) -> Steps:
    """J1/J2: a running source emits its next record (J9: nothing during or after its synchronous
    savepoint)."""
    ts, info = s.tasks[t], job.tasks[t]
    if not (ts.phase == RUNNING and not ts.sync_savepoint and ts.emitted < len(info.records)):
        return []
    n = Step(job, s)
    record = info.records[ts.emitted]
    _forward(n, t, record)
    n.tasks[t] = ts._replace(emitted=ts.emitted + 1)
    return [(("emit", t, record), n)]


def end_of_data(job: Job, s: JobState, t: int) -> Steps:
    """J1: a running source that emitted every record ends its data (J9: not during or after its
    synchronous savepoint)."""
    ts, info = s.tasks[t], job.tasks[t]
    if not (ts.phase == RUNNING and not ts.sync_savepoint and ts.emitted >= len(info.records)):
        return []
    n = Step(job, s)
    _end_data(n, t)
    return [(("end-of-data", t), n)]


def receive(job: Job, s: JobState, t: int) -> Steps:
    """J3: a task with inputs polls the head of an input channel its barrier handler does not
    block (flip147 facts §2.2); J9: none while it waits for its synchronous savepoint to complete."""
    ts, info = s.tasks[t], job.tasks[t]
    if not ts.active:
        return []
    blocked = getattr(ts.handler, "blocked", 0) | (-1 if ts.sync_savepoint > 0 else 0)
    steps = []
    for local, c in enumerate(info.inputs):
        if s.queues[c] and not blocked >> local & 1:
            n = Step(job, s)
            message = n.queues[c][0]
            n.queues[c] = n.queues[c][1:]
            _ON_MESSAGE[message[0]](n, t, local, message)
            steps.append((("receive", t, local, message), n))
    return steps


def poll_released(job: Job, s: JobState, t: int) -> Steps:
    """J3, FLINK-22368 (variant only): the gate polls an input although its EndOfPartition
    released it; the channel throws ``CancelTaskException`` and the task is cancelled."""
    ts, info = s.tasks[t], job.tasks[t]
    if not ts.active or job.protocol.dequeue_released_channels:
        return []
    released = ~ts.handler.open & ((1 << len(info.inputs)) - 1)
    steps = []
    for local in range(len(info.inputs)):
        if released >> local & 1:
            n = Step(job, s)
            n.tasks[t] = ts._replace(phase=CANCELED)
            n.notes.append(("polled-released", t, local))
            steps.append((("poll-released", t, local), n))
    return steps


def finish(job: Job, s: JobState, t: int) -> Steps:
    """J7: a running task its protocol allows to finish
    (:meth:`~.switches.Protocol.may_finish`) cancels the checkpoints it still takes part in
    (none unless FLIP-147 is off or a variant: off, it drops them without a decline,
    flip147 facts §4.7; a variant declines them), sends EndOfPartition downstream and its
    FINISHED report to the coordinator (C1: it arrives later). A sink's ``close()`` aborts its
    open transaction; the pre-committed ones stay pending: a finished task is never notified
    again. A task that waits for nothing but the acknowledgements in its outbox finishes once
    they were sent: it waits for its snapshots' asynchronous parts, which send them without
    waiting for the coordinator (flip147 facts §4.4, §4.13); they stay on their way (C5 may
    take them later, or never: C8)."""
    if not s.tasks[t].active:
        return []
    sent = _sent_when_finishing(job, s, t)
    if sent is None:
        return []
    n = Step(job, s)
    ts = n.tasks[t]
    cancelled = () if sent else tuple(k for k, _ in ts.outbox)
    cancelled += (ts.snapshot[0],) if ts.snapshot is not None else ()
    if cancelled:
        n.notes.append(("cancelled", t, cancelled))
        if job.after_finished:  # a variant cancels; FLIP-147 off drops silently (flip147 facts §4.7)
            for k in cancelled:
                decline(n, t, k, TASK_CLOSING)
    left = ts.precommitted + ts.recovered
    n.tasks[t] = FINISHED_TASK._replace(precommitted=left, outbox=sent) if left or sent else FINISHED_TASK
    n.broadcast(t, END_OF_PARTITION_MSG)
    n.coord = n.coord._replace(finished_reports=n.coord.finished_reports | 1 << t)
    n.notifications = replaced(n.notifications, t, 0)  # notifications to a finished task are dropped
    n.notes.append(("finished", t))
    return [(("finish", t), n)]


def _sent_when_finishing(job: Job, s: JobState, t: int) -> tuple | None:
    """J7: None when running task ``t`` may not finish; else the acknowledgements it sends first:
    none when its protocol lets it finish as it is, its whole outbox when the protocol would once
    they had left (FLIP-147's ``waitForPendingCheckpoints`` waits until the asynchronous parts
    sent them, flip147 facts §4.4)."""
    if job.protocol.may_finish(job, s, t):
        return ()
    ts = s.tasks[t]
    if not ts.outbox:
        return None
    left = s._replace(tasks=replaced(s.tasks, t, ts._replace(outbox=())))
    return ts.outbox if job.protocol.may_finish(job, left, t) else None


def receive_notification(job: Job, s: JobState, t: int) -> Steps:
    """J8 (flip147 facts §3.1 ``notifyCheckpointComplete``): a completion notification commits a sink's
    pre-committed transactions up to its id; S3: a Sink V2 committer whose input ended also
    commits the ``EOI`` committables (``CommitterOperator``); J9: the notification of the
    task's synchronous savepoint stops it instead of completing its final checkpoint."""
    ts, k = s.tasks[t], s.notifications[t]
    if not ts.active or not k:
        return []
    n = Step(job, s)
    n.notifications = replaced(n.notifications, t, 0)
    if k > ts.notified:
        eoi_due = ts.phase == END_OF_DATA
        due = tuple(txn for txn in ts.precommitted if txn[0] <= k or (eoi_due and txn[0] == EOI))
        left = tuple(txn for txn in ts.precommitted if txn not in due)
        recovered = () if eoi_due else ts.recovered
        if k == ts.sync_savepoint:
            n.tasks[t] = ts._replace(sync_savepoint=STOPPED, precommitted=left, recovered=recovered)
            n.notes.append(("stopped", t, k))
        else:
            n.tasks[t] = ts._replace(notified=k, precommitted=left, recovered=recovered)
        if eoi_due and ts.recovered:
            commit(n, t, ts.recovered, recovered=True)
        if due:
            commit(n, t, due)
    return [(("notify", t, k), n)]


def receive_trigger_rpc(job: Job, s: JobState, t: int) -> Steps:
    """C4 and flip147 facts §2.5: a trigger RPC reaches task ``t`` (the oldest one on its way). A FINISHED task
    declines it (FLINK-23741, :meth:`~.switches.Protocol.finished_task_declines_trigger`; a CANCELED one is
    unknown, flip147 facts §3.2; a FAILED one is not RUNNING, F0, §4.10); a source takes its snapshot
    at once (J5, or J9 for a synchronous savepoint); a task with inputs hands it to its barrier
    handler (its upstream tasks all finished)."""
    if not s.rpcs[t]:
        return []
    n = Step(job, s)
    k = s.rpcs[t][0]
    n.rpcs = replaced(n.rpcs, t, s.rpcs[t][1:])
    phase = s.tasks[t].phase
    if phase == CANCELED:
        decline(n, t, k, TASK_NOT_READY)  # "checkpoint request for unknown task" (flip147 facts §3.2)
    elif phase == FAILED:
        decline(n, t, k, TASK_NOT_READY)  # F0: not RUNNING (flip147 facts §4.10)
    elif phase == FINISHED:
        if job.protocol.finished_task_declines_trigger(job, s, t, k):
            n.notes.append(("trigger-declined", t, k))
            decline(n, t, k, TASK_NOT_READY)
        else:
            n.notes.append(("trigger-lost", t, k))
    elif job.tasks[t].is_source:
        if _start_checkpoint(n, t, k):
            _snapshot_complete(n, t, k)
    else:
        _handler_event(n, t, (bar.RPC, k))
    return [(("rpc", t, k), n)]


# ----------------------------------------------------------------------------------------------
# J3/J4: what a task does with each message it polls


def _poll_record(n: Step, t: int, local: int, message: tuple) -> None:
    """J2/J3: the handler sees the record (it may capture it, J5u); the task processes it."""
    c = n.job.tasks[t].inputs[local]
    n.received = replaced(n.received, c, n.received[c] + 1)
    _handler_event(n, t, (bar.DATA, local), message[1])
    _process_record(n, t, message[1])


def _poll_barrier(n: Step, t: int, local: int, message: tuple) -> None:
    """J3: barriers go to the barrier handler (flip147 facts §2, event routing)."""
    _handler_event(n, t, (bar.BARRIER, message[1], local))


def _poll_cancellation_marker(n: Step, t: int, local: int, message: tuple) -> None:
    """J3: cancellation markers go to the barrier handler (flip147 facts §2, event routing)."""
    _handler_event(n, t, (bar.CANCEL, message[1], local))


def _poll_end_of_data(n: Step, t: int, local: int, message: tuple) -> None:
    """J4: EndOfData is acknowledged to the upstream at once (flip147 facts §2:
    ``acknowledgeAllRecordsProcessed``); once every input delivered it, the task ends its data."""
    channel = n.job.channels[n.job.tasks[t].inputs[local]]
    upstream = n.tasks[channel.source]
    if upstream.phase != FINISHED:
        n.tasks[channel.source] = upstream._replace(acked=upstream.acked | 1 << channel.position)
    ts = n.tasks[t]
    n.tasks[t] = ts = ts._replace(end_of_data_in=ts.end_of_data_in | 1 << local)
    if ts.end_of_data_in == (1 << len(n.job.tasks[t].inputs)) - 1:
        _end_data(n, t)


def _poll_end_of_partition(n: Step, t: int, local: int, message: tuple) -> None:
    """J3: EndOfPartition goes to the barrier handler, which releases the channel (flip147 facts §2)."""
    _handler_event(n, t, (bar.END, local))


_ON_MESSAGE = {DATA: _poll_record, BARRIER: _poll_barrier, CANCEL: _poll_cancellation_marker,
               EOD: _poll_end_of_data, EOP: _poll_end_of_partition}


# ----------------------------------------------------------------------------------------------
# The rule bodies


def fresh_task(job: Job, t: int, emitted: int = 0) -> TaskState:
    """Task ``t`` when it starts (or restarts, F1): a handler for its inputs, and J2: a sink
    begins a transaction when it starts (``TwoPhaseCommitSinkFunction.initializeState``)."""
    config = job.handler_configs[t]
    handler = bar.initial_state(config) if config is not None else None
    txn = () if job.tasks[t].two_phase_commit else None
    return TaskState(emitted=emitted, handler=handler, txn=txn)


def _forward(n: Step, t: int, record: int) -> None:
    """J2: a record goes to one channel per output job edge (``record % consumers``)."""
    for route in n.job.tasks[t].routes:
        n.send(route[record % len(route)], (DATA, record))


def _process_record(n: Step, t: int, record: int) -> None:
    """J2: operators forward every record; a two-phase-commit sink adds it to its open transaction."""
    if n.job.tasks[t].two_phase_commit:
        ts = n.tasks[t]
        n.tasks[t] = ts._replace(txn=ts.txn + (record,))
    _forward(n, t, record)


def _end_data(n: Step, t: int) -> None:
    """J1/J4: endData — EndOfData on every output, end of data reported to the coordinator (C1:
    the report arrives at once; C6: it sets the task's bit in the end-of-data view)."""
    n.tasks[t] = n.tasks[t]._replace(phase=END_OF_DATA)
    if n.job.tasks[t].sink_v2:
        _end_input_v2(n, t)
    n.broadcast(t, END_OF_DATA_MSG)
    c = n.coord
    n.coord = c._replace(known_end_of_data=c.known_end_of_data | 1 << t, learned=True)
    n.notes.append(("end-of-data", t))


def _end_input_v2(n: Step, t: int) -> None:
    """S1/S4: a Sink V2 writer's ``endInput`` flushes into a committable for its committer
    (its id: :meth:`~.switches.Protocol.end_of_input_checkpoint_id`), unless it was restored after
    its endInput already ran."""
    ts = n.tasks[t]
    if not ts.input_ended_before:
        _emit_committable(n, t, n.job.protocol.end_of_input_checkpoint_id(n.job, ts), ts.txn or ())
    n.tasks[t] = n.tasks[t]._replace(txn=None)  # no record may follow end of input


def _emit_committable(n: Step, t: int, k: int, records: tuple) -> None:
    """S1/S2: the writer's ``prepareCommit``: one committable (with its summary) for checkpoint ``k``."""
    ts = n.tasks[t]
    n.tasks[t] = ts._replace(precommitted=ts.precommitted + ((k, records),))
    n.notes.append(("committable", t, k))


def _prepare_snapshot_pre_barrier(n: Step, t: int, k: int) -> None:
    """S2: a Sink V2 writer flushes into a committable of ``k`` (empty ones too), but no longer
    once ``endInput`` flushed (FLINK-24131); S1: it remembers ``k``."""
    ts = n.tasks[t]
    if ts.phase != END_OF_DATA or not n.job.protocol.no_pre_barrier_commit_after_end_of_input:
        _emit_committable(n, t, k, ts.txn or ())
        n.tasks[t] = n.tasks[t]._replace(txn=None if ts.phase == END_OF_DATA else ())
    n.tasks[t] = n.tasks[t]._replace(last_checkpoint=k)


def _perform_checkpoint(n: Step, t: int, k: int) -> None:
    """J5/J6: snapshot (sources: the offset; two-phase-commit sinks pre-commit the open
    transaction and begin a new one only while their input has not ended: flip147 facts §5 FLINK-23473),
    then the barrier on every output. J6: the first checkpoint performed after end of data is the
    final one (flip147 facts §3.1 ``finalCheckpointMinId``)."""
    job, info = n.job, n.job.tasks[t]
    final_min = n.tasks[t].final_min
    if not final_min and n.tasks[t].phase == END_OF_DATA and job.after_finished:
        final_min = k  # flip147 facts §3.1: the first checkpoint performed after end of data
    if info.sink_v2:
        _prepare_snapshot_pre_barrier(n, t, k)
    ts = n.tasks[t]
    txn, precommitted = ts.txn, ts.precommitted
    if txn is not None and not info.sink_v2:
        precommitted = precommitted + ((k, txn),)
        finished = ts.phase == END_OF_DATA and job.protocol.no_transaction_after_finish
        txn = None if finished else ()
    sent = tuple(n.received[c] + sum(1 for m in n.queues[c] if m[0] == DATA) for c in info.outputs)
    overtaken = send_barrier(n, t, k)
    snapshot = Snapshot(finished_operators=ts.phase == END_OF_DATA, offset=ts.emitted, sent=sent,
                        received=tuple(n.received[c] for c in info.inputs), in_flight=((),) * len(info.inputs),
                        output_in_flight=overtaken, transactions=precommitted)
    n.tasks[t] = ts._replace(final_min=final_min, snapshot=(k, snapshot), txn=txn, precommitted=precommitted)
    n.notes.append(("snapshot", t, k))


def send_barrier(n: Step, t: int, k: int) -> tuple:
    """J5/J5u: barrier ``k`` on every output of ``t``; per output channel, the records it
    overtook (always none unless unaligned: then the barrier is a priority event that goes
    behind the priority events already at the head and ahead of everything else).

    >>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
    >>> from flipcheck.model.protocol import Job, initial_state
    >>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), mode="unaligned")
    >>> n = Step(job, initial_state(job))
    >>> n.queues[0] = (("B", 1), ("D", 0))
    >>> send_barrier(n, 0, 2), n.queues[0]
    (((0,),), (('B', 1), ('B', 2), ('D', 0)))
    """
    outputs = n.job.tasks[t].outputs
    if n.job.mode != bar.UNALIGNED:
        n.broadcast(t, (BARRIER, k))
        return ((),) * len(outputs)
    overtaken = []
    for c in outputs:
        queue = n.queues[c]
        head = 0
        while head < len(queue) and queue[head][0] == BARRIER:  # earlier priority events stay ahead
            head += 1
        n.queues[c] = queue[:head] + ((BARRIER, k),) + queue[head:]
        overtaken.append(tuple(m[1] for m in queue[head:] if m[0] == DATA))
    return tuple(overtaken)


def _start_checkpoint(n: Step, t: int, k: int) -> bool:
    """J5 or, for the stop-with-savepoint's synchronous savepoint, J9 (FLINK-24161's fix: a task
    that reached end of data declines it; otherwise it waits for the savepoint to complete);
    False: declined."""
    if k != n.coord.stop_id:
        _perform_checkpoint(n, t, k)
        return True
    if n.tasks[t].phase == END_OF_DATA and n.job.protocol.decline_stop_without_drain_after_end_of_data:
        n.notes.append(("savepoint-declined", t, k))
        _abort_on_task(n, t, k, TASK_NOT_READY)
        return False
    _perform_checkpoint(n, t, k)
    pending = n.coord.pending
    if pending is not None and pending.id == k:  # else its abort notification ends it at once
        n.tasks[t] = n.tasks[t]._replace(sync_savepoint=k)
    return True


def _capture(n: Step, t: int, k: int, local: int, record: int | None) -> None:
    """J5 (unaligned): the record just polled on input ``local`` is in-flight data of ``k``."""
    ts = n.tasks[t]
    if ts.snapshot is not None and ts.snapshot[0] == k:
        snap = ts.snapshot[1]
        in_flight = replaced(snap.in_flight, local, snap.in_flight[local] + (record,))
        n.tasks[t] = ts._replace(snapshot=(k, snap._replace(in_flight=in_flight)))


def _snapshot_complete(n: Step, t: int, k: int) -> None:
    """J5: the acknowledgement is ready; its async part still has to reach the coordinator."""
    ts = n.tasks[t]
    if ts.snapshot is not None and ts.snapshot[0] == k:
        n.tasks[t] = ts._replace(snapshot=None, outbox=ts.outbox + (ts.snapshot,))


def _abort_on_task(n: Step, t: int, k: int, reason: str) -> None:
    """J6: the handler aborted ``k``: decline it and tell the downstream tasks (flip147 facts §2.1
    ``abortInternal``)."""
    ts = n.tasks[t]
    if ts.snapshot is not None and ts.snapshot[0] == k:
        n.tasks[t] = ts._replace(snapshot=None)
    n.broadcast(t, (CANCEL, k))
    decline(n, t, k, reason)


def _handler_event(n: Step, t: int, event: tuple, record: int | None = None) -> None:
    """J3: the barrier-handler spec (:func:`flipcheck.model.barriers.step`) takes ``event``;
    the task does what its outputs say (J5 trigger and complete, J6 abort)."""
    ts = n.tasks[t]
    handler, outputs = n.job.handler_step(t, ts.handler, event)
    n.tasks[t] = ts._replace(handler=handler)
    for out in outputs:
        kind = out[0]
        if kind == bar.TRIGGERED:
            _start_checkpoint(n, t, out[1])
        elif kind == bar.COMPLETED:
            _snapshot_complete(n, t, out[1])
        elif kind == bar.IN_FLIGHT:
            _capture(n, t, out[1], out[2], record)
        elif kind == bar.ABORTED:
            _abort_on_task(n, t, out[1], out[2])


def commit(n: Step, t: int, transactions: Sequence, recovered: bool = False) -> None:
    """J8/S3/F1: commit transactions externally; committing one twice changes nothing
    (recover-and-commit is idempotent), and an empty one leaves nothing in the external system.
    An ``EOI`` committable is a new transaction in every attempt, so only a ``recovered`` one
    (restored from a checkpoint) may already be committed."""
    done = n.committed[t]
    ids = {k for k, _ in done}
    new = tuple(txn for txn in transactions
                if (txn[0] not in ids or (txn[0] == EOI and not recovered)) and txn[1])
    if new:
        n.committed = replaced(n.committed, t, tuple(sorted(done + new)))
        n.notes.append(("committed", t, tuple(k for k, _ in new)))

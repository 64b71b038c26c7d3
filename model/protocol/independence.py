"""Which steps of the whole job commute: the independence relation partial-order reduction uses.

Every step belongs to a *transition*: one action of one task (``("emit", t)``, ``("receive", t,
input)``, ``("ack", t)``, ...) or of the coordinator (``("trigger",)``, ...); :func:`transition`
names it from the step's label. A transition is described by its *footprint*: the parts of a
:class:`~.state.JobState` it reads, writes, or only *sets* in a way that commutes with every other
such set (``learned := True``). Two footprints **conflict** when one writes what the other reads,
writes or sets, or one sets what the other reads; transitions whose footprints do not conflict are
independent: in any state where both are enabled, neither disables the other and taking them in
either order ends in the same state.

The parts, and the rules that touch them (each footprint below cites its rules):

* ``("active", t)`` whether the task still takes steps (J7, J3's cancellation); ``("phase", t)``
  running or at end of data (J1/J4); ``("emitted", t)`` J1; ``("has-data", t)`` whether source ``t`` still
  has a record (C3 reads it); ``("work", t)`` the handler, snapshot under way, open transaction and
  inputs ended (J3/J5/J6, S1/S2); ``("final-min", t)`` J6; ``("outbox", t)`` J5;
  ``("acked", t)`` J4/J7; ``("commit-state", t)`` notified and pre-committed (J8, S3/S4);
  ``("sync", t)`` J9;
* ``("head", c)`` the consumer's end of channel ``c`` and its ``received`` count; ``("tail", c)``
  the producer's end. A FIFO append and a poll of a non-empty queue commute, so only the producer
  writes the tail and only the consumer the head — except an unaligned barrier, a priority event
  that goes in at the head and captures what it overtook (J5u): it writes the head too. The
  producer's snapshot counts ``received[c]`` plus the records queued on ``c``, a sum the consumer's
  polls leave unchanged, so it reads only the tail;
* ``("rpcs", t)`` the oldest trigger RPC (C4) and ``("rpc-tail", t)`` where the coordinator appends;
  ``("notification", t)`` J8; ``("committed", t)`` the external system;
* ``("reports", t)`` task ``t``'s FINISHED report and the view's bit (C1); ``("eod-view", t)`` C6;
  ``("learned",)`` C3; ``("pending",)`` the pending checkpoint, the ids and counters of C2/C3/C7;
  ``("pending-acks",)`` which tasks acknowledged it (C5); ``("outcome",)`` the newest completed and
  aborted ids and the restore point (C5) — what the after-abort property reads (:data:`VISIBLE`).

A failover (F1) touches everything, and so does a task's failure (F0: it stops the task and
changes what every trigger RPC to it does); both happen only while a failover can, and the
explorer reduces only states where none can happen any more. Two footprints exist per transition: the *general* one, covering every form it can take in
any later state, and the *instance* footprint of the one step enabled now, which is narrower for
the steps that are most often interleaved: a record polled (J3 with a record at the head), a
source's record that is not its last (J1), an acknowledgement that neither completes nor is
awaited any more (C5), a notification of an id already notified (J8).

:func:`enabling_transitions` gives, for a disabled transition, a set of transitions one of which
must be taken before it can be enabled (a *necessary enabling set*), or None when no small one is
known.

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=2)
>>> s = initial_state(job)
>>> transition(("emit", 0, 0)), transition(("receive", 1, 0, ("D", 0)))
(('emit', 0), ('receive', 1, 0))
>>> emit_first = instance_footprint(job, s, ("emit", 0, 0))      # not the last record
>>> conflict(emit_first, footprint(job, ("trigger",)))            # C3 reads has-data only
False
>>> conflict(emit_first, footprint(job, ("rpc", 0)))              # J5: the snapshot reads the offset
True
>>> enabling_transitions(job, s, ("rpc", 0))                      # C4: only a trigger sends an RPC
(('trigger',), ('stop-with-savepoint',))
"""

from __future__ import annotations

from typing import NamedTuple

from .. import barriers as bar
from .state import DATA, EOD, RUNNING, STOPPED, JobState
from .structure import Job

__all__ = ["Footprint", "VISIBLE", "transition", "transitions", "footprint", "instance_kind", "instance_footprint",
           "kind_footprint", "conflict", "enabling_transitions"]


class Footprint(NamedTuple):
    reads: frozenset
    writes: frozenset
    sets: frozenset = frozenset()   # writes that commute with each other (learned := True)


# What the properties read between steps: the after-abort marks (completed and aborted ids). A
# step that writes it is *visible*; reductions never leave one out.
VISIBLE = frozenset({("outcome",)})

_LEARNED = frozenset({("learned",)})
_NONE: frozenset = frozenset()


def conflict(a: Footprint, b: Footprint) -> bool:
    """True when the two footprints may not commute."""
    return bool(a.writes & (b.reads | b.writes | b.sets) or b.writes & (a.reads | a.sets)
                or a.sets & b.reads or b.sets & a.reads)


def transition(label: tuple) -> tuple:
    """The transition a step's label belongs to (the label without its checkpoint id, record or
    message)."""
    kind = label[0]
    if kind in ("receive", "poll-released"):
        return (kind, label[1], label[2])
    if kind in ("emit", "end-of-data", "finish", "ack", "notify", "rpc", "report-finished"):
        return (kind, label[1])
    return (kind,)


def transitions(job: Job) -> tuple:
    """Every transition of ``job`` but a task's failure and the failover (F0, F1)."""
    found: list[tuple] = []
    for t, info in enumerate(job.tasks):
        if info.is_source:
            found += [("emit", t), ("end-of-data", t)]
        else:
            found += [("receive", t, local) for local in range(len(info.inputs))]
            found += [("poll-released", t, local) for local in range(len(info.inputs))]
        found += [("finish", t), ("ack", t), ("notify", t), ("rpc", t), ("report-finished", t)]
    return tuple(found) + (("trigger",), ("stop-with-savepoint",))


def _all(job: Job, part: str) -> frozenset:
    return frozenset((part, t) for t in range(len(job.tasks)))


def _ends(job: Job, part: str, channels) -> frozenset:
    return frozenset((part, c) for c in channels)


def _own(t: int, *parts: str) -> frozenset:
    return frozenset((part, t) for part in parts)


def _task_parts(t: int) -> frozenset:
    return _own(t, "active", "phase", "emitted", "has-data", "work", "final-min", "outbox", "acked", "commit-state", "sync")


def _abort_writes(job: Job) -> tuple[frozenset, frozenset]:
    """What a decline or abort writes (C5 ``abort_pending``): the pending checkpoint and the
    outcome; aborting a stop-with-savepoint also ends every task's synchronous savepoint (J9) and
    sets ``learned`` (C7)."""
    writes = frozenset({("pending",), ("outcome",)})
    if job.stop_with_savepoint:
        return writes | _all(job, "sync"), _LEARNED
    return writes, _NONE


def _checkpoint_on_task(job: Job, t: int) -> Footprint:
    """J5/J6/J9 run on task ``t`` (a trigger RPC or a barrier, cancellation marker or
    EndOfPartition through its handler): snapshot, pre-commit, barriers or cancellation markers
    on every output (unaligned: at the head, J5u), the acknowledgement, or a decline."""
    info = job.tasks[t]
    outputs = info.outputs
    abort, abort_sets = _abort_writes(job)
    reads = _own(t, "active", "phase", "sync", "work", "final-min", "outbox", "emitted")
    reads |= _ends(job, "tail", outputs) | {("pending",)}
    writes = _own(t, "work", "final-min", "outbox", "sync") | _ends(job, "tail", outputs) | abort
    if info.sink_v2:  # S2: the committable goes to the committer it shares the task with
        reads |= _own(t, "commit-state")
        writes |= _own(t, "commit-state")
    elif info.two_phase_commit:  # J5: pre-commit appends a transaction newer than any notified
        writes |= _own(t, "precommit-tail")
    if job.mode == bar.UNALIGNED:
        writes |= _ends(job, "head", outputs)
    return Footprint(reads, writes, abort_sets)


def _once_per_job(job: Job, table: str, key: tuple, compute) -> Footprint:
    memo = job.__dict__.setdefault(table, {})
    found = memo.get(key)
    if found is None:
        found = memo[key] = compute(job, key)
    return found


def footprint(job: Job, group: tuple) -> Footprint:
    """The general footprint of a transition: every form it can take in any state."""
    return _once_per_job(job, "_footprints", group, _footprint)


def _footprint(job: Job, group: tuple) -> Footprint:
    kind = group[0]
    if kind == "emit":  # J1/J2
        t = group[1]
        outputs = _ends(job, "tail", job.tasks[t].outputs)
        return Footprint(_own(t, "phase", "sync", "emitted"), _own(t, "emitted", "has-data") | outputs)
    if kind == "end-of-data":  # J1 (S1 for a Sink V2 never: it has inputs), C1/C6
        t = group[1]
        outputs = _ends(job, "tail", job.tasks[t].outputs)
        return Footprint(_own(t, "phase", "sync", "emitted"),
                         _own(t, "phase", "has-data", "work", "commit-state", "eod-view") | outputs, _LEARNED)
    if kind == "finish":  # J7: may_finish, then the task is gone (C1: its report is on its way)
        t = group[1]
        reads = _own(t, "phase", "sync", "work", "final-min", "acked", "commit-state", "precommit-tail", "outbox")
        reads |= {("outcome",)}
        writes = _task_parts(t) | _ends(job, "tail", job.tasks[t].outputs) | _own(t, "reports", "notification")
        sets = _NONE
        if job.after_finished and not job.protocol.wait_for_pending_checkpoints:  # a variant declines (J7)
            abort, sets = _abort_writes(job)
            writes |= abort
            reads |= {("pending",)}
        return Footprint(reads, writes, sets)
    if kind == "ack":  # C5: acknowledge, complete (notify, keep the restore point) or abort (FLINK-21080)
        t = group[1]
        abort, sets = _abort_writes(job)
        reads = _own(t, "outbox") | _all(job, "active") | {("pending",), ("pending-acks",)}
        writes = _own(t, "outbox") | _all(job, "notification") | abort
        return Footprint(reads, writes, sets)
    if kind == "notify":  # J8/S3, and J9 in a stop-with-savepoint job
        t = group[1]
        parts = _own(t, "notification", "commit-state", *(("sync",) if job.stop_with_savepoint else ()))
        phase = ("active", "phase") if job.tasks[t].sink_v2 else ("active",)  # S3: EOI committables after endInput
        return Footprint(parts | _own(t, *phase), parts | _own(t, "committed"))
    if kind == "rpc":  # C4, then J5/J9 on a source or through the handler
        t = group[1]
        on_task = _checkpoint_on_task(job, t)
        return on_task._replace(reads=on_task.reads | _own(t, "rpcs"), writes=on_task.writes | _own(t, "rpcs"))
    if kind == "receive":  # J3/J4: any message; EndOfData acknowledges to the upstream and may end the data
        t, local = group[1], group[2]
        channel = job.channels[job.tasks[t].inputs[local]]
        on_task = _checkpoint_on_task(job, t)
        reads = on_task.reads | {("head", channel.index), ("phase", channel.source)}
        writes = on_task.writes | {("head", channel.index), ("acked", channel.source)}
        writes |= _own(t, "phase", "has-data", "eod-view")
        return Footprint(reads, writes, on_task.sets | _LEARNED)
    if kind == "poll-released":  # J3 (FLINK-22368 variant): the task is cancelled
        t = group[1]
        return Footprint(_own(t, "active", "work"), _own(t, "active", "phase"))
    if kind == "report-finished":  # C1
        t = group[1]
        return Footprint(_own(t, "reports"), _own(t, "reports"), _LEARNED)
    if kind == "trigger":  # C2/C3/C6: reads the views, the sources' data and the final checkpoints
        reads = (_all(job, "reports") | _all(job, "eod-view") | _all(job, "has-data") | _all(job, "phase")
                 | _all(job, "final-min") | {("pending",), ("outcome",), ("learned",)})
        return Footprint(reads, _all(job, "rpc-tail") | {("pending",), ("learned",)})
    if kind == "stop-with-savepoint":  # C7
        return Footprint(_all(job, "reports") | {("pending",), ("outcome",)}, _all(job, "rpc-tail") | {("pending",)})
    raise ValueError(f"no footprint for {group!r}")


def instance_kind(job: Job, s: JobState, label: tuple, after: JobState | None = None) -> tuple:
    """Which form the step ``label`` enabled in ``s`` (leading to ``after``, if given) takes, as a
    small key: its transition's general form, or one of the narrower ones of
    :func:`instance_footprint`."""
    kind = label[0]
    if kind == "receive" and label[3][0] == DATA:
        return ("record", label[1], label[2])
    if kind == "emit":
        t = label[1]
        if s.tasks[t].emitted + 1 < len(job.tasks[t].records):
            return ("more-records", t)
    elif kind == "ack":
        t, k = label[1], label[2]
        pending = s.coordinator.pending
        if pending is None or pending.id != k or not pending.wait >> t & 1 or pending.acked >> t & 1:
            return ("late-ack", t)
        if pending.acked | 1 << t != pending.wait:
            return ("partial-ack", t)
    elif kind == "notify":
        t = label[1]
        if label[2] <= s.tasks[t].notified:
            return ("notified-again", t)
    elif kind == "rpc" and job.tasks[label[1]].is_source and s.tasks[label[1]].active and not job.stop_with_savepoint:
        ts = s.tasks[label[1]]
        return ("source-snapshot", label[1], ts.phase != RUNNING and not ts.final_min)
    if kind in ("receive", "rpc") and after is not None and (s.coordinator.pending is None
                                                             or after.coordinator.pending is not None):
        return ("no-abort", transition(label), kind == "receive" and label[3][0] == EOD)
    return ("general", transition(label))


def instance_footprint(job: Job, s: JobState, label: tuple, after: JobState | None = None) -> Footprint:
    """The footprint of the step ``label`` enabled in ``s`` (leading to ``after``, if given):
    narrower than the transition's general one for a record polled, a source's record that is
    not its last, an acknowledgement that does not complete its checkpoint, a notification of an
    id already notified, and a message or RPC that aborts nothing (:func:`_without_abort`)."""
    return kind_footprint(job, instance_kind(job, s, label, after))


def kind_footprint(job: Job, key: tuple) -> Footprint:
    """The footprint of an :func:`instance_kind` (computed once per job)."""
    return _once_per_job(job, "_kind_footprints", key, _kind_footprint)


def _kind_footprint(job: Job, key: tuple) -> Footprint:
    kind = key[0]
    if kind == "general":
        return footprint(job, key[1])
    if kind == "no-abort":
        return _without_abort(job, footprint(job, key[1]), key[1], key[2])
    t = key[1]
    if kind == "record":  # J2/J3: the handler may capture it (J5u), no more
        info = job.tasks[t]
        head = {("head", info.inputs[key[2]])}
        return Footprint(_own(t, "active", "sync", "work") | head,
                         _own(t, "work") | head | _ends(job, "tail", info.outputs))
    if kind == "more-records":  # J1: still has data afterwards (C3 reads only that)
        return Footprint(_own(t, "phase", "sync", "emitted"), _own(t, "emitted") | _ends(job, "tail", job.tasks[t].outputs))
    if kind == "late-ack":
        # Late for good: ids only grow (C2) and no failover is left, so it changes nothing.
        return Footprint(_own(t, "outbox", "active"), _own(t, "outbox"))
    if kind == "partial-ack":
        # Another acknowledgement is still awaited. An abort before it makes it late, which
        # ends in the same state (the pending checkpoint is gone either way).
        return Footprint(_own(t, "outbox", "active") | {("pending-acks",)}, _own(t, "outbox") | {("pending-acks",)})
    if kind == "notified-again":  # J8: an id not newer than the one notified commits nothing
        return Footprint(_own(t, "notification", "active", "commit-state"), _own(t, "notification"))
    if kind == "source-snapshot":  # J5 on a running source: snapshot, barriers, acknowledgement; no decline
        outputs = job.tasks[t].outputs
        writes = _own(t, "rpcs", "work", "outbox") | _ends(job, "tail", outputs)
        if key[2]:
            writes |= _own(t, "final-min")  # J6: its final checkpoint
        if job.mode == bar.UNALIGNED:
            writes |= _ends(job, "head", outputs)
        return Footprint(_own(t, "rpcs", "active", "phase", "emitted", "work", "final-min") | _ends(job, "tail", outputs),
                         writes)
    raise ValueError(f"no footprint for {key!r}")


def _without_abort(job: Job, general: Footprint, group: tuple, end_of_data: bool) -> Footprint:
    """A message or RPC that left the pending checkpoint alone: its handler did not abort, or
    aborted an id that is not pending, and never will be (C2: ids only grow). Without a
    stop-with-savepoint it reads nothing of the coordinator (J5 compares the id with ``stop_id``,
    0 for good); a message other than EndOfData touches neither the upstream, the phase nor the
    coordinator's end-of-data view (J4)."""
    t = group[1]
    abort, abort_sets = _abort_writes(job)
    reads, writes, sets = general.reads, general.writes - abort, general.sets - abort_sets
    if job.stop_with_savepoint:
        writes |= _own(t, "sync")  # J9: its own synchronous savepoint
    else:
        reads = reads - {("pending",)}
    if group[0] == "receive" and not end_of_data:
        channel = job.channels[job.tasks[t].inputs[group[2]]]
        reads = reads - {("phase", channel.source)}
        writes = writes - {("acked", channel.source)} - _own(t, "phase", "has-data", "eod-view")
        sets = sets - _LEARNED
    return Footprint(reads, writes, sets)


def _producer(job: Job, u: int) -> tuple:
    """Every transition of task ``u`` that may append to its output channels."""
    info = job.tasks[u]
    own = (("emit", u), ("end-of-data", u)) if info.is_source else tuple(
        ("receive", u, local) for local in range(len(info.inputs)))
    return own + (("finish", u), ("rpc", u))


def enabling_transitions(job: Job, s: JobState, group: tuple) -> tuple | None:
    """A necessary enabling set of the disabled transition ``group`` in ``s``: every way to
    enable it takes one of these first (``()``: it is never enabled again; no failover is
    left). None: no small set is known."""
    kind = group[0]
    if kind == "trigger":
        return _trigger_enablers(job, s)
    if kind == "stop-with-savepoint":
        return () if not job.stop_with_savepoint or s.coordinator.stop_id else None
    t = group[1]
    ts = s.tasks[t]
    if kind == "report-finished":
        return (("finish", t),)
    if not ts.active:
        return ()  # a FINISHED or CANCELED task never moves again: only its RPCs are still answered
    if kind == "rpc":
        return (("trigger",), ("stop-with-savepoint",))
    if ts.sync_savepoint > 0:
        return None  # J9: the savepoint's completion or abort comes from anywhere
    own_inputs = tuple(("receive", t, local) for local in range(len(job.tasks[t].inputs)))
    if kind in ("emit", "end-of-data"):
        if ts.phase != RUNNING or ts.sync_savepoint == STOPPED:
            return ()
        return (("emit", t),) if kind == "end-of-data" else ()  # J1: records run out, never come back
    if kind == "receive":
        local = group[2]
        if getattr(ts.handler, "blocked", 0) >> local & 1:
            return own_inputs + (("rpc", t),)  # only the task's own handler events unblock it
        return _producer(job, job.channels[job.tasks[t].inputs[local]].source)
    if kind == "poll-released":
        return () if job.protocol.dequeue_released_channels else own_inputs
    if kind == "ack":
        return own_inputs + (("rpc", t),)  # J5: only a snapshot of its own fills the outbox
    if kind == "notify":
        return tuple(("ack", u) for u in range(len(job.tasks)))  # C5: a completion notifies
    if kind == "finish":
        return _finish_enablers(job, s, t, own_inputs)
    raise ValueError(f"no enabling transitions for {group!r}")


def _finish_enablers(job: Job, s: JobState, t: int, own_inputs: tuple) -> tuple | None:
    """J7: the writers of the first condition of ``may_finish`` that fails."""
    ts, p = s.tasks[t], job.protocol
    if job.stop_with_savepoint:
        return None
    if ts.phase == RUNNING:  # end of data first (J1/J4)
        return (("end-of-data", t),) if job.tasks[t].is_source else own_inputs
    if ts.handler is not None and ts.handler.open:  # EndOfPartition on every input
        return own_inputs
    if not job.after_finished:
        return ()
    if p.wait_for_final_checkpoint and ts.final_min and ts.notified < ts.final_min:
        return (("notify", t),)  # J8: only a notification moves ``notified``
    if p.wait_for_end_of_data_acks and ts.acked != (1 << len(job.tasks[t].outputs)) - 1:
        return tuple(("receive", job.channels[c].target, job.channels[c].local)
                     for position, c in enumerate(job.tasks[t].outputs) if not ts.acked >> position & 1)
    return own_inputs + (("rpc", t), ("ack", t), ("notify", t))  # a snapshot to take or to finish


def _trigger_enablers(job: Job, s: JobState) -> tuple | None:
    """C2: while checkpoint ``k`` is pending, only its completion (an acknowledgement) or an
    abort enables a trigger. What can decline ``k`` (C5, J6): an RPC still on its way, and a task
    whose handler is not done with ``k`` (done: it acknowledged ``k`` or its acknowledgement is in
    its outbox). A cancellation marker of ``k`` cannot: the decline that sent it aborted ``k``.
    C3: a trigger blocked only by the periodic bound while some source has data waits for that
    source to run out (or, C6, for every task's end of data, which needs that source too)."""
    c = s.coordinator
    if c.stopped:
        return ()
    if job.periodic_timer:
        return None
    pending = c.pending
    if pending is not None:
        # Completion needs every awaited acknowledgement, so one of them is enough here.
        waiting = pending.wait & ~pending.acked
        found: list[tuple] = [("ack", waiting.bit_length() - 1)] if waiting else []
        for u, us in enumerate(s.tasks):
            source = job.tasks[u].is_source
            if s.rpcs[u] and (not us.active or not source or job.stop_with_savepoint):
                found.append(("rpc", u))  # C4 (a finished task declines), J9, or the handler (J6)
            if not us.active or source or pending.acked >> u & 1 or any(k == pending.id for k, _ in us.outbox):
                continue
            found += [("receive", u, local) for local in range(len(job.tasks[u].inputs))]
        if job.after_finished and not job.protocol.wait_for_pending_checkpoints:
            found += [("finish", u) for u, us in enumerate(s.tasks) if us.active]  # a variant declines (J7)
        return tuple(found)
    with_data = [t for t in job.sources if s.tasks[t].phase == RUNNING and s.tasks[t].emitted < len(job.tasks[t].records)]
    if with_data:
        if c.started_with_data < job.checkpoints:
            return None  # disabled only by a declined plan: see below
        t = with_data[0]
        if not c.known_end_of_data >> t & 1:
            return (("emit", t), ("end-of-data", t), ("finish", t))
        return None
    if job.stop_with_savepoint:
        return None
    # C3 without data: ``learned`` and a final checkpoint missing. Both change only when a report
    # arrives or a task ends its data (C1, J1, J4); a missing final checkpoint stays missing.
    ending: list[tuple] = [("report-finished", u) for u in range(len(job.tasks)) if c.finished_reports >> u & 1]
    for u, us in enumerate(s.tasks):
        if us.phase == RUNNING:
            ending += [("end-of-data", u)] if job.tasks[u].is_source else [
                ("receive", u, local) for local in range(len(job.tasks[u].inputs))]
    return tuple(ending)

"""Specification of approximate task-local recovery (FLIP-135; recovery facts §1).

A task fails; only it and what it feeds restart, the rest of the job keeps running, and the
data the restarted part had processed since the last completed checkpoint is lost. Four parts,
each a small pure model; every rule names the seed sentence or facts section it encodes.

1. **Which tasks restart** (:func:`restart_set`), downstream failover as shipped (recovery facts §1
   "Which tasks restart"); the seed's milestone-one rule is :func:`milestone_one_restart_set`.

   * F1 the failed tasks restart (recovery facts §1.3 rule a).
   * F2 every consumer of a restarted task restarts, transitively (recovery facts §1.3 rule c; seed
     Milestone Two "a failed task leads all tasks rooted from the failed tasks to restart").
   * F3 an upstream task restarts only when its partition is unavailable (a PartitionException
     marked it failed, recovery facts §1.3 rule b); then its consumers restart too (F2).

2. **The approximate subpartition** (:func:`subpartition_step`): one upstream subpartition and
   the successive execution attempts of its consumer (seed "Reconnects to Upstream", "Partial
   Records"; recovery facts §1.4 "PipelinedApproximateSubpartition: state machine").

   * S1 at most one view exists; a newer attempt's view replaces and releases the older one
     (seed requirement 3, Point 2).
   * S2 an older attempt (a zombie) connecting after a newer one is refused (seed Point 1).
   * S3 releasing a view never releases the partition; only ``release_partition`` (consumption
     finished, producer failure, job exit) does (seed requirements 1 and 2).
   * S4 when a view is released, the rest of the record it was reading is dropped: the next
     view starts at a record boundary (seed "Partial Records", option 1, "cleanup partial
     results when releasing ResultSubpartitionView").
   * S5 a new view starts unblocked with sequence number 0 (seed "Missing Events": "the
     upstream subpartition has to reset isBlockedByCheckpoint"; Point 4 credits reset).
   * S6 a poll delivers the rest of the head buffer from the read position, or the head event;
     an aligned barrier blocks the subpartition until the consumer resumes (recovery facts §1.4 pollBuffer).

   The writer (the environment) serialises whole records into buffers of ``capacity`` bytes:
   a record that does not fit continues in fresh buffers whose ``partial`` says how many leading
   bytes continue it (recovery facts §1.4 "Where partialRecordLength is set"; FLINK-19547).

3. **Barriers after the restart** (:func:`barrier_successors`): the restarted task with
   ``channels`` inputs from running upstream tasks, the checkpoint coordinator, and the old
   barriers still in flight on the channels.

   * B1 the deployment carries the highest checkpoint id triggered so far; the restarted task
     drops every barrier with an id at or below it (seed "Missing Events", option 1).
   * B2 on the restart every pending checkpoint is aborted (seed "Checkpoint Coordinator":
     "all pending checkpoints are aborted after the job state transits from Running to
     Restarting").
   * B3 the task aligns the other barriers as any aligned task does (:mod:`.barriers`).

4. **What is lost** (:func:`expected_final`): a dataflow of record copies over the execution
   graph, an aligned checkpoint, a failure, recovery, and the rest of the input. Restarted tasks
   restore the last completed checkpoint, restarted sources rewind to its offsets, running
   upstream tasks keep their unconsumed output (minus a record the consumer had half read).

   * L1 a task outside the restart set ends exactly as in a failure-free run.
   * L2 a copy is lost iff the restarted part took it from a running task after the last
     completed checkpoint (or had half read it), or it derives from such a copy (seed
     Milestone One 3: "the amount of data that leads the failed sink from the state of the last
     completed checkpoint to the state when the sink fails is lost").

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("v1", 1), ("v2", 1), ("v3", 1), ("v4", 1)],
...                    [("v1", "v2", ALL_TO_ALL), ("v1", "v3", ALL_TO_ALL),
...                     ("v2", "v4", ALL_TO_ALL), ("v3", "v4", ALL_TO_ALL)])
>>> sorted(restart_set(g, {("v2", 0)}))          # recovery facts §1.3: the diamond test
[('v2', 0), ('v4', 0)]
>>> sorted(restart_set(g, {("v4", 0)}))
[('v4', 0)]
>>> sp = initial_subpartition(capacity=4)
>>> for e in (emit(6), connect(0), poll(0), release_view(0), emit(2), connect(1), poll(1)):
...     sp, out = subpartition_step(sp, e)
>>> out                                          # bytes 4..5 (the rest of record 0) are dropped
(('data', 1, 0, 6, 8),)
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, NamedTuple, Sequence

from . import barriers as _barriers
from .execution_graph import input_connections, predecessors
from .jobgraph import JobGraph, TaskId

__all__ = [
    # 1. restart set
    "consumers", "downstream", "is_sink", "restart_set", "milestone_one_restart_set",
    # 2. subpartition
    "DATA_BUFFER", "EVENT_BUFFER", "ZOMBIE", "RELEASED", "Buffer", "Subpartition",
    "emit", "barrier_event", "connect", "release_view", "poll", "resume", "release_partition",
    "initial_subpartition", "subpartition_step", "is_finished", "next_boundary", "write",
    # 3. barriers
    "BarrierScenario", "BarrierSystem", "initial_barrier_system", "barrier_successors",
    "deliver_barrier", "coordinator_reacts", "DROPPED",
    # 4. dataflow
    "Dataflow", "Copy", "Flow", "BARRIER_ITEM", "initial_flow", "flow_actions", "flow_step",
    "drain", "failure_free", "checkpoint_complete", "restored_prefix", "lost_entries", "expected_final",
]


# ------------------------------------------------------------------------------------------------
# 1. Which tasks restart


def consumers(graph: JobGraph, task: TaskId) -> list[TaskId]:
    """Tasks that read ``task``'s output (the slow, obvious scan of every task's inputs)."""
    return [t for t in graph.tasks() if task in set(predecessors(graph, t))]


def downstream(graph: JobGraph, tasks: Iterable[TaskId]) -> frozenset:
    """``tasks`` and every task reachable from them over consumer edges."""
    seen = set(tasks)
    frontier = list(seen)
    while frontier:
        for consumer in consumers(graph, frontier.pop()):
            if consumer not in seen:
                seen.add(consumer)
                frontier.append(consumer)
    return frozenset(seen)


def is_sink(graph: JobGraph, task: TaskId) -> bool:
    """A sink has no consumers (seed Milestone One: "a sink task stands for no consumers reading data from it")."""
    return not graph.outputs(task[0])


def restart_set(graph: JobGraph, failed: Iterable[TaskId], unavailable: Iterable[TaskId] = ()) -> frozenset:
    """Rules F1-F3: ``failed`` plus transitive consumers, plus producers (and their consumers)
    whose partition a restarted task reads is ``unavailable``."""
    unavailable = frozenset(unavailable)
    restart = downstream(graph, failed)  # F1, F2
    while True:
        lost = {p for t in restart for p in predecessors(graph, t) if p in unavailable and p not in restart}  # F3
        if not lost:
            return restart
        restart = downstream(graph, restart | lost)


def milestone_one_restart_set(graph: JobGraph, failed: Iterable[TaskId]) -> frozenset:
    """Seed Milestone One as written: "The sink task is restarted ... The rest of the tasks keep
    running"; "If a non-sink vertex fails, a regional failover strategy takes place" (the region
    of a streaming job with pipelined edges is its connected component)."""
    failed = frozenset(failed)
    if all(is_sink(graph, t) for t in failed):
        return failed
    neighbours: dict = {t: set() for t in graph.tasks()}
    for t in graph.tasks():
        for p in predecessors(graph, t):
            neighbours[t].add(p)
            neighbours[p].add(t)
    region, frontier = set(failed), list(failed)
    while frontier:
        for n in neighbours[frontier.pop()]:
            if n not in region:
                region.add(n)
                frontier.append(n)
    return frozenset(region)


# ------------------------------------------------------------------------------------------------
# 2. The approximate subpartition

DATA_BUFFER = "data"
EVENT_BUFFER = "event"
ZOMBIE = "zombie"        # rejection reasons of a connect
RELEASED = "released"


class Buffer(NamedTuple):
    """One queued buffer as stream offsets: data ``[start, end)``; an event sits at ``start``."""

    kind: str
    start: int
    end: int
    partial: int = 0       # leading bytes continuing an earlier record (capped at the capacity)
    event: int = -1        # the event's number (events only)
    blocking: bool = False  # an aligned checkpoint barrier (blocks until resumed)


class Subpartition(NamedTuple):
    capacity: int
    buffers: tuple = ()
    written: int = 0           # stream bytes written
    events: int = 0            # events written
    starts: frozenset = frozenset({0})  # record boundaries not yet consumed (record starts, and ``written``)
    read: int = 0              # everything before was delivered or dropped
    view: int | None = None    # attempt owning the live view
    latest: int = -1           # newest attempt that created a view
    blocked: bool = False
    sequence: int = 0
    released: bool = False


def emit(length: int) -> tuple:
    return ("emit", length)


def barrier_event(blocking: bool = True) -> tuple:
    return ("barrier", blocking)


def connect(attempt: int) -> tuple:
    return ("connect", attempt)


def release_view(attempt: int) -> tuple:
    return ("release_view", attempt)


def poll(attempt: int) -> tuple:
    return ("poll", attempt)


def resume(attempt: int) -> tuple:
    return ("resume", attempt)


def release_partition() -> tuple:
    return ("release_partition",)


def initial_subpartition(capacity: int) -> Subpartition:
    if capacity < 1:
        raise ValueError("a buffer holds at least one byte")
    return Subpartition(capacity)


def is_finished(buffers: Sequence[Buffer], index: int, capacity: int) -> bool:
    """Events are finished; a data buffer is finished when full or when another buffer follows it."""
    buffer = buffers[index]
    return buffer.kind == EVENT_BUFFER or buffer.end - buffer.start == capacity or index < len(buffers) - 1


def next_boundary(starts: Iterable[int], position: int) -> int:
    """The first record boundary at or after ``position``."""
    return min(s for s in starts if s >= position)


def write(sp: Subpartition, event: tuple) -> Subpartition:
    """The writer (RecordWriter#emit, BufferWritingResultPartition): a whole record fills the open
    buffer, then continues in fresh buffers that record how much of it they hold; an event
    finishes the open buffer and takes a buffer of its own."""
    buffers = list(sp.buffers)
    if event[0] == "barrier":
        buffers.append(Buffer(EVENT_BUFFER, sp.written, sp.written, event=sp.events, blocking=event[1]))
        return sp._replace(buffers=tuple(buffers), events=sp.events + 1)
    remaining, position, capacity = event[1], sp.written, sp.capacity
    tail_open = buffers and not is_finished(buffers, len(buffers) - 1, capacity)
    if tail_open:
        tail = buffers[-1]
        take = min(capacity - (tail.end - tail.start), remaining)
        buffers[-1] = tail._replace(end=tail.end + take)
        position, remaining = position + take, remaining - take
    continuation = tail_open
    while remaining > 0:
        take = min(capacity, remaining)
        buffers.append(Buffer(DATA_BUFFER, position, position + take, partial=take if continuation else 0))
        position, remaining, continuation = position + take, remaining - take, True
    return sp._replace(buffers=tuple(buffers), written=position, starts=sp.starts | {position})


def _drop_partial_record(sp: Subpartition) -> Subpartition:
    """S4: skip to the next record boundary (the rest of the record being read is dropped)."""
    return sp._replace(read=next_boundary(sp.starts, sp.read))


def _deliver(sp: Subpartition, attempt: int) -> tuple[Subpartition, tuple]:
    """S6: PipelinedSubpartition.pollBuffer's loop over the queue, on stream offsets."""
    buffers, read = list(sp.buffers), sp.read
    while buffers:
        head = buffers[0]
        finished = is_finished(buffers, 0, sp.capacity)
        if head.kind == EVENT_BUFFER:
            buffers.pop(0)
            out = ("event", attempt, sp.sequence, head.event, head.blocking)
            return sp._replace(buffers=tuple(buffers), blocked=head.blocking, sequence=sp.sequence + 1), (out,)
        low = max(read, head.start)
        if finished:
            buffers.pop(0)
        if head.end > low:
            sp = sp._replace(buffers=tuple(buffers), read=head.end, sequence=sp.sequence + 1,
                             starts=frozenset(s for s in sp.starts if s >= head.end))
            return sp, (("data", attempt, sp.sequence - 1, low, head.end),)
        if not finished:
            break
    return sp._replace(buffers=tuple(buffers)), (("none", attempt),)


def subpartition_step(sp: Subpartition, event: tuple) -> tuple[Subpartition, tuple]:
    """Apply one event; return the next state and the outputs (rules S1-S6)."""
    kind = event[0]
    if kind in ("emit", "barrier"):
        return (sp if sp.released else write(sp, event)), ()
    if kind == "connect":
        attempt = event[1]
        if sp.released:
            return sp, (("rejected", attempt, RELEASED),)  # createReadView: checkState(!isReleased)
        if attempt < sp.latest:
            return sp, (("rejected", attempt, ZOMBIE),)  # S2
        out = []
        if sp.view is not None:  # S1: the old view goes first (seed Point 2)
            out.append(("view_released", sp.view))
            sp = _drop_partial_record(sp)
        out.append(("view_created", attempt))
        return sp._replace(view=attempt, latest=attempt, blocked=False, sequence=0), tuple(out)  # S5
    if kind == "release_view":
        if sp.view != event[1]:
            return sp, ()
        return _drop_partial_record(sp._replace(view=None)), (("view_released", event[1]),)  # S3, S4
    if kind == "poll":
        if sp.released or sp.view != event[1] or sp.blocked:
            return sp, (("none", event[1]),)
        return _deliver(sp, event[1])
    if kind == "resume":
        return (sp._replace(blocked=False) if sp.view == event[1] else sp), ()
    if kind == "release_partition":
        if sp.released:
            return sp, ()
        out = (("view_released", sp.view),) if sp.view is not None else ()
        return sp._replace(released=True, view=None, buffers=()), out + (("partition_released",),)
    raise ValueError(f"unknown subpartition event {event!r}")


# ------------------------------------------------------------------------------------------------
# 3. Barriers reaching the restarted task

DROPPED = "dropped"


class BarrierScenario(NamedTuple):
    """The situation when the restarted task is deployed.

    ``max_triggered`` is the highest checkpoint id triggered before the restart (B1's id),
    ``last_completed`` the checkpoint the task restores (0: none), ``consumed[c]`` the last old
    barrier the failed attempt took from channel ``c``: barriers ``consumed[c]+1 .. max_triggered``
    are still in flight there. ``new_checkpoints`` bounds the checkpoints triggered after the
    restart; before it, the newest one may have been pending.
    """

    channels: int
    max_triggered: int
    last_completed: int
    consumed: tuple
    new_checkpoints: int = 2
    max_concurrent: int = 1

    @property
    def config(self) -> _barriers.Config:
        # Approximate recovery is rejected together with unaligned checkpoints (recovery facts §1).
        return _barriers.Config(self.channels, _barriers.ALIGNED)


class BarrierSystem(NamedTuple):
    queues: tuple          # per channel, the checkpoint ids of barriers in flight, oldest first
    task: object           # the restarted task's handler state (hashable)
    next_id: int
    pending: frozenset     # the coordinator's pending checkpoints
    completed_new: bool    # history: a checkpoint newer than the restart completed


def initial_barrier_system(scenario: BarrierScenario, task_state=None) -> BarrierSystem:
    queues = tuple(tuple(range(c + 1, scenario.max_triggered + 1)) for c in scenario.consumed)
    task = _barriers.initial_state(scenario.config) if task_state is None else task_state
    return BarrierSystem(queues, task, scenario.max_triggered + 1, frozenset(), False)  # B2: none pending


def coordinator_reacts(scenario: BarrierScenario, system: BarrierSystem, outputs: tuple) -> BarrierSystem:
    """The task acknowledges a checkpoint when it triggers (every other task is running and
    acknowledges too) and declines it when it aborts; the coordinator completes or drops it."""
    pending, completed_new = set(system.pending), system.completed_new
    for out in outputs:
        if out[0] == _barriers.TRIGGERED:
            if out[1] in pending:
                completed_new = completed_new or out[1] > scenario.max_triggered
            pending.discard(out[1])
        elif out[0] == _barriers.ABORTED:
            pending.discard(out[1])
    return system._replace(pending=frozenset(pending), completed_new=completed_new)


def deliver_barrier(scenario: BarrierScenario, task_state, checkpoint_id: int, channel: int):
    """B1 then B3: the spec's restarted task receiving one barrier."""
    if checkpoint_id <= scenario.max_triggered:
        return task_state, ((DROPPED, checkpoint_id, channel),)
    return _barriers.step(scenario.config, task_state, _barriers.barrier(checkpoint_id, channel))


def barrier_successors(scenario: BarrierScenario, system: BarrierSystem):
    """``(label, next system, task outputs, task view)`` for every enabled step: a channel
    delivers its oldest barrier (unless the task blocks it), or the coordinator triggers a new
    checkpoint."""
    blocked = system.task.blocked
    for channel, queue in enumerate(system.queues):
        if queue and not blocked >> channel & 1:
            task, outputs = deliver_barrier(scenario, system.task, queue[0], channel)
            queues = system.queues[:channel] + (queue[1:],) + system.queues[channel + 1:]
            nxt = coordinator_reacts(scenario, system._replace(queues=queues, task=task), outputs)
            yield ("deliver", channel, queue[0]), nxt, outputs, _barriers.view(scenario.config, task)
    last = scenario.max_triggered + scenario.new_checkpoints
    if system.next_id <= last and len(system.pending) < scenario.max_concurrent:
        queues = tuple(q + (system.next_id,) for q in system.queues)
        nxt = system._replace(queues=queues, next_id=system.next_id + 1, pending=system.pending | {system.next_id})
        yield ("trigger", system.next_id), nxt, (), _barriers.view(scenario.config, system.task)


# ------------------------------------------------------------------------------------------------
# 4. What is lost: record copies flowing through the execution graph

BARRIER_ITEM = "|"  # a checkpoint barrier in a channel


class Copy(NamedTuple):
    """A record from source task ``origin`` (``seq``-th), as it reached ``path[-1]`` via ``path``."""

    origin: int
    seq: int
    path: tuple


class Dataflow:
    """The execution graph as channels between task numbers, and where each copy is routed.

    A task forwards each record it processes along every output job edge to one consumer task
    (chosen from the record, so the failure-free outcome does not depend on the schedule).
    """

    def __init__(self, graph: JobGraph, records: int):
        self.graph, self.records = graph, records
        self.tasks = tuple(graph.tasks())
        index = {t: i for i, t in enumerate(self.tasks)}
        self.channels: list[tuple[int, int]] = []
        self.inputs: list[list[int]] = [[] for _ in self.tasks]
        routes: dict = {}
        for t in self.tasks:
            for edge, upstream in input_connections(graph, t):
                channel = len(self.channels)
                self.channels.append((index[upstream], index[t]))
                self.inputs[index[t]].append(channel)
                routes.setdefault((index[upstream], edge), []).append(channel)
        self.outputs: list[list[list[int]]] = [[] for _ in self.tasks]
        for (upstream, _edge), channels in routes.items():
            self.outputs[upstream].append(channels)
        self.sources = tuple(i for i, t in enumerate(self.tasks) if not graph.inputs(t[0]))

    def route(self, copy: Copy) -> list[tuple[int, Copy]]:
        """``(channel, copy at the consumer)`` for each output edge of the copy's holder."""
        routed = []
        for channels in self.outputs[copy.path[-1]]:
            channel = channels[(copy.seq + len(copy.path)) % len(channels)]
            routed.append((channel, copy._replace(path=copy.path + (self.channels[channel][1],))))
        return routed


class Flow(NamedTuple):
    """A run's state: per task the copies processed in order; per channel the items in flight;
    the checkpoint (one, aligned): triggered, per task the number of copies its snapshot holds
    (-1 before it), per task the input channels that delivered the barrier."""

    processed: tuple
    channels: tuple
    triggered: bool = False
    snapshot: tuple = ()
    aligned: tuple = ()


def initial_flow(flow: Dataflow) -> Flow:
    n = len(flow.tasks)
    return Flow(((),) * n, ((),) * len(flow.channels), False, (-1,) * n, (frozenset(),) * n)


def _forward(flow: Dataflow, channels: list, copy: Copy) -> None:
    for channel, routed in flow.route(copy):
        channels[channel] += (routed,)


def _snapshot(flow: Dataflow, state: Flow, task: int, channels: list) -> Flow:
    """The task snapshots its state and sends the barrier on every output channel."""
    snapshot = list(state.snapshot)
    snapshot[task] = len(state.processed[task])
    for outputs in flow.outputs[task]:
        for channel in outputs:
            channels[channel] += (BARRIER_ITEM,)
    return state._replace(snapshot=tuple(snapshot), channels=tuple(channels))


def flow_actions(flow: Dataflow, state: Flow, checkpoints: bool = True) -> list[tuple]:
    """The steps possible now: a source emits its next record, the coordinator triggers the
    checkpoint, a triggered source snapshots, a task takes the head of an input channel (not
    one that delivered the barrier while the task aligns)."""
    actions: list[tuple] = []
    for s in flow.sources:
        if len(state.processed[s]) < flow.records:
            actions.append(("emit", s))
    if checkpoints and not state.triggered:
        actions.append(("trigger",))
    if state.triggered:
        actions += [("snapshot", s) for s in flow.sources if state.snapshot[s] < 0]
    for channel, items in enumerate(state.channels):
        if items and channel not in state.aligned[flow.channels[channel][1]]:
            actions.append(("take", channel))
    return actions


def flow_step(flow: Dataflow, state: Flow, action: tuple) -> Flow:
    kind = action[0]
    channels = list(state.channels)
    if kind == "trigger":
        return state._replace(triggered=True)
    if kind == "snapshot":
        return _snapshot(flow, state, action[1], channels)
    if kind == "emit":
        source = action[1]
        copy = Copy(source, len(state.processed[source]), (source,))
        processed = list(state.processed)
        processed[source] += (copy,)
        _forward(flow, channels, copy)
        return state._replace(processed=tuple(processed), channels=tuple(channels))
    channel = action[1]
    head, channels[channel] = channels[channel][0], channels[channel][1:]
    task = flow.channels[channel][1]
    if head == BARRIER_ITEM:
        aligned = list(state.aligned)
        aligned[task] = aligned[task] | {channel}
        state = state._replace(aligned=tuple(aligned), channels=tuple(channels))
        if aligned[task] == frozenset(flow.inputs[task]):
            aligned[task] = frozenset()
            return _snapshot(flow, state._replace(aligned=tuple(aligned)), task, channels)
        return state
    processed = list(state.processed)
    processed[task] += (head,)
    _forward(flow, channels, head)
    return state._replace(processed=tuple(processed), channels=tuple(channels))


def drain(flow: Dataflow, state: Flow) -> Flow:
    """Run without checkpoints until every source emitted everything and every channel is empty."""
    while True:
        actions = [a for a in flow_actions(flow, state, checkpoints=False) if a[0] in ("emit", "take")]
        if not actions:
            return state
        state = flow_step(flow, state, actions[0])


def failure_free(flow: Dataflow) -> tuple:
    """Per task, the multiset (Counter) of copies a run without failures processes."""
    return tuple(Counter(p) for p in drain(flow, initial_flow(flow)).processed)


def checkpoint_complete(state: Flow) -> bool:
    return all(n >= 0 for n in state.snapshot)


def restored_prefix(state: Flow, task: int) -> int:
    """How many of its processed copies a restarted task gets back: its snapshot's, if the
    checkpoint completed, else none (and sources rewind to the start)."""
    return state.snapshot[task] if checkpoint_complete(state) else 0


def lost_entries(flow: Dataflow, state: Flow, restart: frozenset, partial: frozenset) -> frozenset:
    """L2: copies a restarted task took from a running one after the restored checkpoint, and the
    heads of such channels the restarted task had half read (``partial`` channels)."""
    lost = set()
    for channel, (upstream, task) in enumerate(flow.channels):
        if upstream in restart or task not in restart:
            continue
        lost.update(c for c in state.processed[task][restored_prefix(state, task):] if c.path[-2] == upstream)
        items = state.channels[channel]
        if channel in partial and items and items[0] != BARRIER_ITEM:
            lost.add(items[0])
    return frozenset(lost)


def expected_final(flow: Dataflow, state: Flow, restart: frozenset, partial: frozenset) -> tuple:
    """L1, L2: per task the multiset of copies it holds at the end, when ``restart`` (task numbers,
    closed under consumers) restarted at ``state`` and the run then completed."""
    lost = lost_entries(flow, state, restart, partial)
    final = []
    for counter in failure_free(flow):
        final.append(Counter({c: n for c, n in counter.items()
                              if not any(Copy(c.origin, c.seq, c.path[:k]) in lost for k in range(2, len(c.path) + 1))}))
    return tuple(final)

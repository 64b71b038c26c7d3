"""Exhaustive exploration and random simulation of the whole job (:mod:`flipcheck.model.protocol`).

:func:`explore_job` searches every reachable state breadth-first (:func:`~.explore.explore_graph`)
and checks every property of :mod:`.protocol_properties`: step and state properties during the
search (the first violation of each comes with a **shortest** trace), then, when the search was
complete, the graph properties on the reachable graph: deadlocks (shortest path to the first
one), states from which the end of the job is unreachable although no deadlock is (reported as a
lasso: a shortest path into a cycle that never ends the job), and checkpoints that can never
complete after an abort.

Reductions that keep the graph small without changing any verdict (:func:`canonical`):

* when the job has ended nothing can happen any more, so every end state is collapsed to one per
  outcome (what the sinks committed), which is all the end-of-job property reads;
* checkpoint ids are renamed to ``1..m`` in order (the protocol only compares ids and takes the
  newest plus one: :func:`rename_ids`), so runs that differ only in how many
  ids were used up meet again;
* once no failover can happen, the ids of committed transactions are forgotten (they only make
  a second recover-and-commit idempotent) — unless a Sink V2 committer still holds a restored
  ``EOI`` committable, which it may commit a second time.

Traces are replayed on the real model and shown with real ids.

:func:`simulate` takes seeded random walks instead, for graphs too large to explore.

Example
-------
>>> from types import MappingProxyType
>>> from flipcheck.model.jobgraph import JobGraph, JobVertex, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job
>>> sink = JobVertex("sink", 1, MappingProxyType({"two_phase_commit_sink": True}))
>>> job = Job(JobGraph.build([("src", 1), sink], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> result = explore_job(job)
>>> result.complete, result.counterexamples, result.states
(True, [], 359)
>>> from flipcheck.reference_impl.protocol_variants import make_job
>>> bad = explore_job(make_job(job.graph, "cancel-pending-on-finish", records=1))
>>> [(c.property, c.length) for c in bad.counterexamples][-1]
('no_dangling_transaction', 10)
>>> [(c.property, c.length) for c in bad.counterexamples][:3]
[('final_checkpoint_before_finish', 5), ('exactly_once', 7), ('no_pending_checkpoint_cancelled', 7)]
"""

from __future__ import annotations

import builtins
import operator
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple

from flipcheck.model import barriers as bar
from flipcheck.model.protocol import (
    BARRIER, CANCEL, EOI, FINISHED_TASK, Coordinator, Job, JobState, Snapshot, initial_state, is_end, successors,
)

from .explore import StateGraph, cannot_reach, explore_graph, lasso, predecessor_lists
from .protocol_properties import (
    AFTER_ABORT, END_REACHABLE, NO_DEADLOCK, check_state, check_step, no_deadlock,
)
from .protocol_reduction import REDUCTIONS, ample_function, forget_restore_data, sound_reduction
from .protocol_symmetry import canonical_function

__all__ = ["Counterexample", "TraceStep", "JobExploration", "GRAPH_PROPERTIES", "explore_job", "replay", "simulate",
           "end_state", "canonical", "checkpoint_ids", "rename_ids", "rename_label", "edge_label",
           "search_functions", "judge", "violated_properties", "counterexamples"]


@dataclass
class Counterexample:
    """A violated property with a trace: ``labels`` from the initial state, then (lasso only)
    ``cycle``, steps that lead back to the state the cycle started in."""

    property: str
    message: str
    labels: list
    cycle: list = field(default_factory=list)

    @builtins.property   # the field above named ``property`` hides the builtin in this class
    def length(self) -> int:
        return len(self.labels) + len(self.cycle)


class TraceStep(NamedTuple):
    label: tuple
    notes: tuple
    state: JobState       # the state after the step
    loop: bool            # part of a lasso's cycle


@dataclass
class JobExploration:
    """The outcome of :func:`explore_job`: the searched graph (reduced, with a ``reduction``)
    and the counterexamples, each the shortest trace of the full model."""

    job: Job
    graph: StateGraph
    counterexamples: list
    reduction: str = "none"
    coverage: Any = None   # a protocol_coverage.Coverage when asked for (explore_job's coverage)

    @property
    def states(self) -> int:
        return len(self.graph)

    @property
    def transitions(self) -> int:
        return self.graph.transitions

    @property
    def complete(self) -> bool:
        return self.graph.complete

    @property
    def seconds(self) -> float:
        return self.graph.seconds

    @property
    def states_per_second(self) -> float:
        return self.graph.states_per_second

    def violated(self) -> list[str]:
        return [c.property for c in self.counterexamples]


_END_COORDINATOR = Coordinator(learned=False)


def end_state(job: Job, state: JobState) -> JobState:
    """The representative of an end state: only what the sinks committed is kept (as one
    transaction per sink; the end-of-job property counts records, not transactions), the
    transactions finished sinks left pending (``no_dangling_transaction`` reads them), and whether
    a stop-with-savepoint ended the job (``stop_id`` 1)."""
    n = len(job.tasks)
    committed = tuple(((0, tuple(sorted(r for _, records in txns for r in records))),) if txns else ()
                      for txns in state.committed)
    tasks = tuple(FINISHED_TASK._replace(precommitted=ts.precommitted) if ts.precommitted else FINISHED_TASK
                  for ts in state.tasks)
    coordinator = _END_COORDINATOR._replace(stop_id=1, completed=1) if state.coordinator.stopped else _END_COORDINATOR
    return JobState(tasks=tasks, queues=((),) * len(job.channels), received=(0,) * len(job.channels), rpcs=((),) * n,
                    notifications=(0,) * n, coordinator=coordinator, committed=committed)


# ----------------------------------------------------------------------------------------------
# Checkpoint ids are data: only compared, and a new one is the newest plus one (rule C2), so
# renaming every id of a state order-preservingly gives a state with the same futures, renamed.
# The explorer uses this to merge states that differ only in how many ids were used up (canonical).


def _handler_ids(handler, add) -> None:
    if handler is None:
        return
    if isinstance(handler, bar.HandlerState):
        add(handler.current)
    else:
        add(handler.latest)
        for entry in handler.entries:
            add(entry.id)


def _snapshot_ids(snapshot: Snapshot, add) -> None:
    for k, _ in snapshot.transactions:
        add(k)


def _coordinator_ids(c, add) -> None:
    add(c.last_id)
    add(c.completed)
    add(c.last_aborted)
    add(c.stop_id)
    if c.pending is not None:
        add(c.pending.id)
        for snap in c.pending.snapshots:
            if snap is not None:
                _snapshot_ids(snap, add)
    if c.restore is not None:
        add(c.restore.id)
        for snap in c.restore.snapshots:
            if snap is not None:
                _snapshot_ids(snap, add)


def _task_ids(ts, add) -> None:
    _handler_ids(ts.handler, add)
    add(ts.final_min)
    add(ts.notified)
    add(ts.sync_savepoint)
    add(ts.last_checkpoint)
    if ts.snapshot is not None:
        add(ts.snapshot[0])
        _snapshot_ids(ts.snapshot[1], add)
    for k, snap in ts.outbox:
        add(k)
        _snapshot_ids(snap, add)
    for k, _ in ts.precommitted:
        add(k)


def _in_flight_ids(state: JobState, add) -> None:
    for queue in state.queues:
        for message in queue:
            if message[0] == BARRIER or message[0] == CANCEL:
                add(message[1])
    for ids_ in state.rpcs:
        for k in ids_:
            add(k)
    for k in state.notifications:
        add(k)
    for txns in state.committed:
        for k, _ in txns:
            add(k)


def _walk_ids(state: JobState, add, done: Callable[[], bool] | None = None) -> bool:
    """Call ``add`` on every checkpoint id field of ``state`` (0, -1 and EOI included), in three
    parts: the coordinator's first (they hold the newest ids, so :func:`_ids_to_rename` can often
    stop there), then each task's, then the channels' and the rest. With ``done``, the walk stops
    after the first part at whose end ``done()`` holds, and says whether it stopped early."""
    _coordinator_ids(state.coordinator, add)
    if done is not None and done():
        return True
    for ts in state.tasks:
        _task_ids(ts, add)
        if done is not None and done():
            return True
    _in_flight_ids(state, add)
    return False


def checkpoint_ids(state: JobState) -> set[int]:
    """Every checkpoint id (> 0) occurring in ``state``."""
    ids: set[int] = set()
    _walk_ids(state, ids.add)
    ids.discard(0)
    ids.discard(-1)  # also STOPPED and NO_STOP_ID
    ids.discard(EOI)
    return ids


# Values of id fields that are no checkpoint: none yet (0), STOPPED / NO_STOP_ID (-1), the EOI sentinel.
_NOT_IDS = frozenset((0, -1, EOI))


class _IdsSeen:
    """The distinct ids a walk has passed, and how many of them lie in ``1..last``."""

    __slots__ = ("seen", "last", "in_range")

    def __init__(self, last: int) -> None:
        self.seen: set[int] = set()
        self.last = last
        self.in_range = 0

    def add(self, k: int) -> None:
        if k not in self.seen:
            self.seen.add(k)
            if 0 < k <= self.last:
                self.in_range += 1

    def dense(self) -> bool:
        """Whether every id ``1..last`` has been seen, so no other id can follow."""
        return self.last > 0 and self.in_range == self.last


def _ids_to_rename(state: JobState) -> list[int] | None:
    """The sorted ids of ``state`` when they are not ``1..m`` already, else None. Every id of a
    state is at most the coordinator's ``last_id`` (C2: a new id is the newest plus one), so once
    ``last_id`` distinct ids have been seen they are ``1..last_id``, and the walk stops at the end
    of the part it is in (the coordinator, a task, or the channels and the rest)."""
    found = _IdsSeen(state.coordinator.last_id)
    # Stopped between parts, not by an exception out of the walk: raising one costs more than the
    # rest of a task's ids (compiled, measured: about 3 % of the whole search).
    if _walk_ids(state, found.add, found.dense):
        return None
    ids = sorted(found.seen.difference(_NOT_IDS))
    return None if not ids or ids[-1] == len(ids) else ids


def _renamed_snapshot(snap: Snapshot, mapping: dict[int, int]) -> Snapshot:
    if not snap.transactions:
        return snap
    return snap._replace(transactions=tuple((mapping.get(k, k), r) for k, r in snap.transactions))


def _renamed_handler(h, mapping: dict[int, int]):
    if h is None:
        return None
    if isinstance(h, bar.HandlerState):
        return h._replace(current=mapping.get(h.current, h.current))
    return h._replace(latest=mapping.get(h.latest, h.latest),
                      entries=tuple(e._replace(id=mapping.get(e.id, e.id)) for e in h.entries))


# The helpers above are module functions, not closures over ``mapping``: compiled, closures that
# call each other form a reference cycle per call, which only the cycle collector frees (measured:
# four objects per renamed state), and the parallel explorers pause that collector.
def rename_ids(state: JobState, mapping: dict[int, int]) -> JobState:
    """``state`` with every checkpoint id ``k > 0`` replaced by ``mapping[k]`` (0 and -1 mean none;
    the EOI sentinel stays)."""
    m = mapping.get
    tasks = tuple(ts._replace(
        handler=_renamed_handler(ts.handler, mapping), final_min=m(ts.final_min, ts.final_min),
        notified=m(ts.notified, ts.notified),
        sync_savepoint=m(ts.sync_savepoint, ts.sync_savepoint),
        last_checkpoint=m(ts.last_checkpoint, ts.last_checkpoint),
        snapshot=None if ts.snapshot is None else (m(ts.snapshot[0], ts.snapshot[0]),
                                                   _renamed_snapshot(ts.snapshot[1], mapping)),
        outbox=tuple((m(k, k), _renamed_snapshot(sn, mapping)) for k, sn in ts.outbox),
        precommitted=tuple((m(k, k), r) for k, r in ts.precommitted)) for ts in state.tasks)
    queues = tuple(tuple((msg[0], m(msg[1], msg[1])) if msg[0] == BARRIER or msg[0] == CANCEL else msg
                         for msg in q)
                   for q in state.queues)
    c = state.coordinator
    pending = c.pending
    if pending is not None:
        pending = pending._replace(id=m(pending.id, pending.id),
                                   snapshots=tuple(None if sn is None else _renamed_snapshot(sn, mapping)
                                                   for sn in pending.snapshots))
    restore = c.restore
    if restore is not None:
        restore = restore._replace(id=m(restore.id, restore.id),
                                   snapshots=tuple(None if sn is None else _renamed_snapshot(sn, mapping)
                                                   for sn in restore.snapshots))
    coordinator = c._replace(last_id=m(c.last_id, c.last_id), completed=m(c.completed, c.completed),
                             last_aborted=m(c.last_aborted, c.last_aborted),
                             pending=pending, restore=restore, stop_id=m(c.stop_id, c.stop_id))
    return JobState(tasks=tasks, queues=queues, received=state.received,
                    rpcs=tuple(tuple(m(k, k) for k in ids) for ids in state.rpcs),
                    notifications=tuple(m(k, k) for k in state.notifications), coordinator=coordinator,
                    committed=tuple(tuple(sorted((m(k, k), r) for k, r in txns)) for txns in state.committed))


def rename_label(label: tuple, mapping: dict) -> tuple:
    """A step's label with its checkpoint id renamed (ids not in ``mapping`` are new: the
    trigger's ``last_id + 1`` becomes the newest mapped id plus one)."""
    kind = label[0]
    m = lambda k: mapping[k] if k in mapping else max(mapping.values(), default=0) + 1  # noqa: E731
    if kind in ("ack", "notify", "rpc", "fail-decline", "shared-decline"):
        return (kind, label[1], m(label[2]))
    if kind in ("trigger", "stop-with-savepoint"):
        return (kind, m(label[1]))
    if kind == "receive" and label[3][0] in (BARRIER, CANCEL):
        return (kind, label[1], label[2], (label[3][0], m(label[3][1])))
    return label


def _holds_restored_eoi(state: JobState) -> bool:
    """A Sink V2 committer holds a restored ``EOI`` committable: it may already be committed, so
    the committed ids must stay to keep its second commit idempotent."""
    return any(ts.recovered for ts in state.tasks)


def _canonical(job: Job, state: JobState) -> tuple[JobState, dict]:
    if is_end(job, state):
        return end_state(job, state), {}
    if (state.coordinator.failovers >= job.failures and any(k for txns in state.committed for k, _ in txns)
            and not _holds_restored_eoi(state)):
        state = state._replace(committed=tuple(
            ((0, tuple(sorted(r for _, records in txns for r in records))),) if txns else () for txns in state.committed))
    ids = _ids_to_rename(state)
    if ids is None:
        return state, {}
    mapping = {k: n for n, k in enumerate(ids, 1)}
    return rename_ids(state, mapping), mapping


def canonical(job: Job, state: JobState) -> JobState:
    """The representative the explorer stores for ``state`` (see the module docstring)."""
    return _canonical(job, state)[0]


def _checked_successors(job: Job):
    def step(state):
        for label, nxt, notes in successors(job, state):
            yield label, nxt, (check_step(job, state, label, notes, nxt) if notes else ())
    return step


def _abort_marks(state: JobState) -> int:
    """What the after-abort property reads of a state: 1 if a checkpoint completed after the
    latest abort, 2 if the latest abort is newer than every completed checkpoint."""
    c = state.coordinator
    return (c.completed > c.last_aborted) | (c.last_aborted > c.completed) << 1


def explore_job(job: Job, *, max_states: int | None = None, stop_at_first: bool = False, liveness: bool = True,
                shortest_of: str | None = None, store: str = "states", reduction: str = "none",
                progress: Callable[[StateGraph, float], None] | None = None,
                deadline: float | None = None, coverage: bool = False) -> JobExploration:
    """Explore ``job`` exhaustively (up to ``max_states``) and check every property.

    ``stop_at_first`` ends the search at the first step/state violation (the graph properties
    then are not judged). ``liveness=False`` skips the graph properties and keeps no edges.
    ``shortest_of=PROPERTY`` ends the search as soon as the shortest counterexample of that step,
    state or deadlock property is known: the same trace a full search reports for it, found
    without exploring the rest (a graph property still needs the whole graph).
    ``store="fingerprints"`` keeps 64-bit fingerprints of the states instead of the states
    (:mod:`.fingerprints`): the same counts and verdicts in a tenth of the memory, unless two
    states share a fingerprint (``graph.collision_probability``). ``reduction="por"`` searches
    the graph reduced by partial-order reduction (:mod:`.protocol_reduction`), ``"symmetry"``
    the quotient by interchangeable tasks (:mod:`.protocol_symmetry`), ``"all"`` both: the same
    violated properties in fewer states; each one's trace is then searched for in the full
    model, so it is the same shortest trace as without reduction. ``deadline`` (a
    ``time.perf_counter()`` value) ends the search like ``max_states`` does: incomplete.
    ``coverage=True`` also counts the rules every generated step took and whether each switch
    the protocol overrides changed a successor (:mod:`.protocol_coverage`; the result's
    ``coverage``). A protocol overriding a rule method is searched unreduced
    (:func:`~.protocol_reduction.sound_reduction`; the result's ``reduction`` says which).
    """
    reduction = sound_reduction(job, reduction) if reduction in REDUCTIONS else reduction
    functions = search_functions(job, reduction)
    measured = None
    if coverage:
        from .protocol_coverage import Coverage, covering

        measured = Coverage()
        functions["successors"] = covering(job, measured)
    stop_when = None
    if shortest_of == NO_DEADLOCK:
        stop_when = lambda graph: bool(graph.deadlocks)  # noqa: E731
    elif shortest_of is not None and shortest_of not in GRAPH_PROPERTIES:
        stop_when = lambda graph: shortest_of in graph.problems  # noqa: E731
    graph = explore_graph([initial_state(job)], max_states=max_states, stop_at_first=stop_at_first,
                          stop_when=stop_when, edges=liveness, store=store, progress=progress, deadline=deadline,
                          **functions)
    return JobExploration(job, graph, counterexamples(job, graph, liveness, reduction, store), reduction, measured)


def counterexamples(job: Job, graph: StateGraph, liveness: bool = True, reduction: str = "none",
                    store: str = "fingerprints", full_search: Callable | None = None) -> list[Counterexample]:
    """The counterexamples of a searched graph (:func:`judge`); for a graph searched with a
    ``reduction``, the shortest trace of the full model for each property it violates, found by
    ``full_search(stop_when, edges)`` (a graph of the full model numbered as
    :func:`~.explore.explore_graph` numbers it, searched at least until ``stop_when(graph)``;
    default: that search in this process)."""
    if reduction == "none":
        return judge(job, graph, liveness)
    return _full_model_traces(job, graph, liveness, full_search or _search_in_this_process(job, store))


def _search_in_this_process(job: Job, store: str) -> Callable:
    """:func:`counterexamples`' default ``full_search``: the full model's breadth-first search here."""
    def search(stop_when, edges):
        return explore_graph([initial_state(job)], stop_when=stop_when, edges=edges, store=store,
                             **search_functions(job))
    return search


def _full_model_traces(job: Job, reduced: StateGraph, liveness: bool, full_search: Callable) -> list[Counterexample]:
    """The shortest trace of the full model for every property the reduced graph violates: a
    breadth-first search of the full model up to the last of them (all of it for a graph
    property). A reduced graph searched completely must agree with the full model."""
    verdicts = violated_properties(reduced, liveness)
    if not verdicts:
        return []
    if verdicts & GRAPH_PROPERTIES:
        found = judge(job, full_search(None, True))
    else:
        def all_found(graph: StateGraph) -> bool:
            return all(bool(graph.deadlocks) if name == NO_DEADLOCK else name in graph.problems for name in verdicts)
        found = judge(job, full_search(all_found, False), liveness=False)
    names = {c.property for c in found}
    if reduced.complete and names != verdicts:
        raise AssertionError(f"partial-order reduction changed the verdict: the reduced graph violates "
                             f"{sorted(verdicts)}, the full model {sorted(names)}")
    return found


def search_functions(job: Job, reduction: str = "none") -> dict:
    """What a breadth-first search of ``job`` needs (:func:`~.explore.explore_graph`'s keyword
    arguments): steps with their violations, the stored representative, end states, the
    end-of-job properties and the after-abort marks; with ``reduction="por"`` also the stubborn
    sets (:mod:`.protocol_reduction`), whose representative forgets what only a restore reads
    once no failover is left; with ``"symmetry"`` one representative per orbit of
    interchangeable tasks (:mod:`.protocol_symmetry`); ``"all"`` both. One definition for every
    explorer."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    reduction = sound_reduction(job, reduction)
    functions = {"successors": _checked_successors(job), "canonical": lambda s: _canonical(job, s)[0],
                 "is_final": lambda s: is_end(job, s),
                 "check_state": lambda s: check_state(job, s) if is_end(job, s) else (), "mark": _abort_marks}
    if reduction in ("por", "all"):
        functions["ample"] = ample_function(job)
        functions["canonical"] = lambda s: forget_restore_data(job, _canonical(job, s)[0])
    if reduction in ("symmetry", "all"):
        representative, stored = canonical_function(job), functions["canonical"]
        functions["canonical"] = lambda s: representative(stored(s))
    return functions


def judge(job: Job, graph: StateGraph, liveness: bool = True) -> list[Counterexample]:
    """The counterexamples of a searched graph, shortest first: the first step or state
    violation of each property, the first deadlock, and (search complete, ``liveness``) the
    graph properties."""
    found = []
    for name, (i, label, problems) in graph.problems.items():
        labels = graph.path_to(i)[0] + ([label] if label is not None else [])
        found.append(Counterexample(name, problems[0].message, labels))
    if graph.deadlocks:
        i = graph.deadlocks[0]
        found.append(Counterexample(NO_DEADLOCK, no_deadlock(job, _state_at(job, graph, i))[0].message,
                                    graph.path_to(i)[0]))
    if liveness and graph.complete:
        found += _liveness(job, graph)
    found.sort(key=lambda c: (c.length, c.property))
    return found


def _source_of(graph: StateGraph, position: int) -> int:
    """The state whose successor list holds edge ``position`` (binary search over offsets)."""
    lo, hi = 0, graph.expanded
    offsets = graph.offsets
    while lo < hi:
        mid = (lo + hi) // 2
        if offsets[mid + 1] <= position:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _state_at(job: Job, graph: StateGraph, i: int) -> JobState:
    """State ``i`` as the explorer stored it (canonical); with fingerprints, rebuilt by
    replaying the path to it."""
    if graph.states:
        return graph.states[i]
    state = replay(job, graph.path_to(i)[0])[-1].state if graph.parent[i] >= 0 else initial_state(job)
    return canonical(job, state)


def edge_label(job: Job, graph: StateGraph, position: int) -> tuple:
    """The label of the step that edge ``position`` of ``graph`` (``graph.targets``) stands for,
    in the explorer's renamed ids (what :func:`replay` takes)."""
    i = _source_of(graph, position)
    k = position - graph.offsets[i]
    for n, (label, _, _) in enumerate(successors(job, _state_at(job, graph, i))):
        if n == k:
            return label
    raise AssertionError("edge not found")


# Judged on the complete reachable graph (_liveness), never on a prefix of the search.
GRAPH_PROPERTIES = frozenset({END_REACHABLE, AFTER_ABORT})


def _stuck(graph: StateGraph, predecessors: tuple) -> bytearray:
    """``stuck[i]``: from state ``i`` neither the end of the job nor a deadlock can be reached."""
    no_end = cannot_reach(graph, graph.finals, predecessors=predecessors)
    no_deadlock_reachable = cannot_reach(graph, graph.deadlocks, predecessors=predecessors)
    return bytearray(map(operator.and_, no_end, no_deadlock_reachable))


def _hopeless(graph: StateGraph, predecessors: tuple) -> int:
    """The first state after whose latest abort no checkpoint can complete and the job cannot
    end (-1: none)."""
    marks = graph.marks
    targets = [i for i in range(len(graph)) if marks[i] & 1]
    targets += graph.finals
    hopeless = cannot_reach(graph, targets, predecessors=predecessors)
    return next((i for i in range(len(graph)) if hopeless[i] and marks[i] & 2), -1)


def violated_properties(graph: StateGraph, liveness: bool = True) -> set[str]:
    """The names of the properties a searched graph violates, without their traces (a graph
    reduced by partial-order reduction has the same ones as the full graph, not the same traces)."""
    found = set(graph.problems)
    if graph.deadlocks:
        found.add(NO_DEADLOCK)
    if liveness and graph.complete:
        predecessors = predecessor_lists(graph)   # once for the three backward searches
        if _stuck(graph, predecessors).find(1) >= 0:
            found.add(END_REACHABLE)
        if _hopeless(graph, predecessors) >= 0:
            found.add(AFTER_ABORT)
    return found


def _liveness(job: Job, graph: StateGraph) -> list[Counterexample]:
    found = []
    predecessors = predecessor_lists(graph)   # once for the three backward searches
    stuck = _stuck(graph, predecessors)
    start = stuck.find(1)
    if start >= 0:
        positions, ids = lasso(graph, stuck, start)
        labels = [edge_label(job, graph, p) for p in positions]
        repeat = ids.index(ids[-1])
        stem = graph.path_to(start)[0] + labels[:repeat]
        found.append(Counterexample(END_REACHABLE, "the job can run into a cycle that never ends it: every task "
                                    "keeps waiting", stem, labels[repeat:]))
    # A checkpoint can complete after an abort (or the job ends).
    i = _hopeless(graph, predecessors)
    if i >= 0:
        c = _state_at(job, graph, i).coordinator
        found.append(Counterexample(AFTER_ABORT, f"checkpoint {c.last_aborted} was aborted and from here no "
                                    "newer checkpoint can complete and the job cannot end", graph.path_to(i)[0]))
    return found


def replay(job: Job, labels, cycle=(), canonical_labels: bool = True, steps_from=successors) -> list[TraceStep]:
    """The steps of a trace with their notes and states (``cycle`` steps marked ``loop``).

    The explorer stores labels of canonical states (renamed ids); they are matched here against
    the real model's steps, so the steps returned carry the real model's labels (real checkpoint
    ids). ``steps_from(job,
    state)`` lists the steps to match (trace validation adds those past the job's end). Two steps
    may share a label (a failover that does or does not use up the id of a trigger under way):
    when the first match leads nowhere, the next is tried, so every trace found replays."""
    wanted = [(False, lb) for lb in labels] + [(True, lb) for lb in cycle]
    dead: set = set()          # (position, state) from which the rest of the trace cannot follow
    steps: list[TraceStep] = []
    choices = [_matching_steps(job, initial_state(job), wanted[0][1], canonical_labels, steps_from)] if wanted else []
    while choices:
        position = len(choices) - 1
        chosen = next(choices[-1], None)
        if chosen is None:
            choices.pop()
            if steps:
                failed = steps.pop()
                dead.add((position, failed.state))
            continue
        label, nxt, notes = chosen
        if (position + 1, nxt) in dead:
            continue
        steps.append(TraceStep(label, notes, nxt, wanted[position][0]))
        if len(steps) == len(wanted):
            return steps
        choices.append(_matching_steps(job, nxt, wanted[position + 1][1], canonical_labels, steps_from))
    if wanted:
        reached = max(dead, key=lambda d: d[0])[0] if dead else 0
        raise ValueError(f"step {wanted[reached][1]!r} is not enabled")
    return steps


def _matching_steps(job: Job, state, label, canonical_labels: bool, steps_from) -> Iterator[tuple]:
    """``(real label, next state, notes)`` of each step from ``state`` whose label is ``label``."""
    mapping = _canonical(job, state)[1] if canonical_labels else {}
    for candidate, nxt, notes in steps_from(job, state):
        if (rename_label(candidate, mapping) if mapping else candidate) == label:
            yield candidate, nxt, notes


def simulate(job: Job, walks: int, seed: int | str = 0, max_steps: int = 10_000) -> tuple[Counterexample | None, int]:
    """Seeded random walks until the end of the job, a violation or ``max_steps``: the first
    counterexample (not necessarily shortest) and the number of steps taken in all."""
    rng = random.Random(seed)
    total = 0
    for _ in range(walks):
        state = initial_state(job)
        labels: list = []
        for _ in range(max_steps):
            options = list(successors(job, state))
            if not options:
                if not is_end(job, state):
                    return Counterexample(NO_DEADLOCK, no_deadlock(job, state)[0].message, labels), total
                problems = check_state(job, state)
                if problems:
                    return Counterexample(problems[0].property, problems[0].message, labels), total
                break
            label, nxt, notes = options[rng.randrange(len(options))]
            labels.append(label)
            total += 1
            problems = check_step(job, state, label, notes, nxt) if notes else []
            if problems:
                return Counterexample(problems[0].property, problems[0].message, labels), total
            state = nxt
    return None, total

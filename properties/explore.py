"""Generic explicit-state exploration: breadth-first search over hashable states.

Nothing here knows about checkpoints. Two searches:

* :func:`explore` — the first problem with a shortest trace (parent pointers only);
* :func:`explore_graph` — keeps the whole reachable graph (integer ids, flat edge arrays) so
  that, after the search, liveness questions can be answered on it: deadlocks (states that
  are not final and have no step), states from which no target can be reached any more
  (:func:`cannot_reach`), and lasso-shaped witnesses of non-progress cycles (:func:`lasso`).
  It also takes a ``canonical`` function (symmetry reduction, or collapsing states that differ
  only in what nothing can read any more), a ``max_states`` bound and a progress callback.

Basic use: A caller passes initial states and a successor function
``successors(state) -> iterable of (label, next_state, problems)`` where ``problems`` is a
(possibly empty) sequence of violations found on that transition; ``check_state`` may add
violations of a state invariant. Breadth-first order makes the first violation found one with
a **shortest** trace, which :func:`explore` rebuilds from parent pointers.

Example
-------
>>> def successors(n):                       # count up to 5, flag reaching 4
...     return [("+1", n + 1, ["reached 4"] if n + 1 == 4 else [])] if n < 5 else []
>>> result = explore([0], successors)
>>> result.states, result.complete, result.trace, result.problems
(5, False, ['+1', '+1', '+1', '+1'], ['reached 4'])
>>> explore([0], successors, stop_at_first=False).states
6
"""

from __future__ import annotations

import functools
import gc
import time
from array import array
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Iterator, Sequence

from .fingerprints import FingerprintTable, collision_probability, fingerprint

try:
    from mypy_extensions import mypyc_attr
except ImportError:     # mypy is not installed, so nothing is compiled (docs/compiled.md)
    def mypyc_attr(**_: Any) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls

__all__ = ["Exploration", "explore", "trace_to", "StateGraph", "GraphBuilder", "explore_graph", "cannot_reach",
           "predecessor_lists", "lasso", "cycle_collector_paused"]


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Python's cycle collector paused (reference counting still frees everything): a search's
    states are immutable tuples, which form no reference cycle, yet the collector walks every
    one of them again and again while they are alive. Measured on pair, unaligned, 2 records,
    2 checkpoints, 1 failover (112,974 states), expanding and numbering level by level in one
    process: 10.2 s of CPU with the collector, 6.4 s without, and no cyclic garbage either way;
    on the first 100,000 states of the hidden join (unaligned, 2 checkpoints), searched by
    :func:`explore_graph`: 3.88 s against 3.57 s (no reduction) and 6.47 s against 6.07 s
    (``all``), medians of six alternating runs. ``tests/cover/test_explore_garbage.py`` checks
    that every design's search leaves no cyclic garbage, which would pile up while it runs."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _collector_paused(search: Callable[..., Any]) -> Callable[..., Any]:
    """``search`` run with the cycle collector paused (:func:`cycle_collector_paused`)."""
    @functools.wraps(search)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with cycle_collector_paused():
            return search(*args, **kwargs)
    return paused


@mypyc_attr(native_class=False)   # compiled, it still takes the attributes some explorers add (crash_points)
@dataclass
class Exploration:
    """The outcome of a search.

    ``complete`` means every reachable state was expanded and no problem stopped the search;
    ``trace`` is the label sequence from an initial state to the first problem (or ``[]``).
    """

    states: int = 0
    transitions: int = 0
    depth: int = 0
    complete: bool = False
    problems: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    final_state: Any = None
    seconds: float = 0.0

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else float("inf")


def trace_to(parents: dict, state: Hashable) -> tuple[list, list]:
    """Labels and states along the parent pointers from an initial state to ``state``."""
    labels, states = [], [state]
    while True:
        parent = parents[state]
        if parent is None:
            break
        state, label = parent
        labels.append(label)
        states.append(state)
    return labels[::-1], states[::-1]


@_collector_paused
def explore(
    initial: Iterable[Hashable],
    successors: Callable[[Hashable], Iterable[tuple[Any, Hashable, Sequence]]],
    *,
    check_state: Callable[[Hashable], Sequence] | None = None,
    max_states: int | None = None,
    stop_at_first: bool = True,
) -> Exploration:
    """Breadth-first search from ``initial``; see the module docstring for the contract.

    ``max_states`` bounds the number of distinct states (the result is then not complete).
    With ``stop_at_first=False`` the search goes on after a problem and reports the first one.
    """
    started = time.perf_counter()
    result = Exploration()
    parents: dict = {}
    frontier: deque = deque()
    found = False

    def record(problems, state, labels):
        nonlocal found
        if not found:
            found = True
            result.problems, result.final_state, result.trace = list(problems), state, labels

    for state in initial:
        if state not in parents:
            parents[state] = None
            frontier.append((state, 0))
            if check_state is not None and (bad := check_state(state)):
                record(bad, state, [])
    truncated = False
    while frontier and not (found and stop_at_first):
        state, depth = frontier.popleft()
        result.depth = max(result.depth, depth)
        for label, nxt, problems in successors(state):
            result.transitions += 1
            if problems:
                record(problems, nxt, trace_to(parents, state)[0] + [label])
            if nxt not in parents:
                if max_states is not None and len(parents) >= max_states:
                    truncated = True
                    continue
                parents[nxt] = (state, label)
                frontier.append((nxt, depth + 1))
                if check_state is not None and (bad := check_state(nxt)):
                    record(bad, nxt, trace_to(parents, nxt)[0])
            if found and stop_at_first:
                break
    result.states = len(parents)
    result.complete = not frontier and not truncated and not found
    result.seconds = time.perf_counter() - started
    return result


# ----------------------------------------------------------------------------------------------
# Exploration that keeps the reachable graph


@dataclass
class StateGraph:
    """The reachable state graph of a search by :func:`explore_graph`.

    States are numbered in breadth-first order, so a smaller id is never deeper; ``parent`` and
    :meth:`label` give a shortest path to every state (``label_index`` points into ``labels``);
    the successors of state ``i`` are ``targets[offsets[i]:offsets[i + 1]]`` (when ``edges``
    were kept; ``offsets`` has one entry per *expanded* state plus one). ``problems`` maps a
    problem's name to the first (hence shortest) occurrence: ``(state id, label, problems)`` for a
    problem on the step ``label`` taken from that state, ``(state id, None, problems)`` for a
    problem of the state itself.

    With ``store="states"`` the states themselves are kept in ``states``; with
    ``store="fingerprints"`` only their fingerprints (:mod:`.fingerprints`) and ``marks``, one
    small number per state that the caller's ``mark(state)`` computed, are kept: a state is
    rebuilt by replaying :meth:`path_to`.
    """

    states: list = field(default_factory=list)
    parent: array = field(default_factory=lambda: array("i"))
    label_index: array = field(default_factory=lambda: array("i"))
    labels: list = field(default_factory=list)
    depth: array = field(default_factory=lambda: array("i"))
    offsets: array = field(default_factory=lambda: array("q", [0]))
    targets: array = field(default_factory=lambda: array("i"))
    marks: bytearray = field(default_factory=bytearray)
    fingerprints: FingerprintTable | None = None
    transitions: int = 0
    expanded: int = 0
    reduced: int = 0          # states expanded with a reduced set of steps (partial-order reduction)
    complete: bool = False
    edges: bool = True
    deadlocks: list = field(default_factory=list)
    finals: list = field(default_factory=list)
    problems: dict = field(default_factory=dict)
    seconds: float = 0.0

    def __len__(self) -> int:
        return len(self.parent)

    @property
    def states_per_second(self) -> float:
        return len(self) / self.seconds if self.seconds > 0 else float("inf")

    @property
    def collision_probability(self) -> float:
        """The chance that two states shared a fingerprint (0 when states are kept)."""
        return collision_probability(len(self), self.transitions) if self.fingerprints is not None else 0.0

    @property
    def bytes_per_state(self) -> float:
        """Bytes the seen-set and the graph take per state, the frontier excluded (fingerprint
        storage only: kept states are Python objects, measured with ``tracemalloc`` instead)."""
        arrays = (self.parent, self.label_index, self.depth, self.offsets, self.targets)
        used = sum(a.buffer_info()[1] * a.itemsize for a in arrays) + len(self.marks)
        if self.fingerprints is not None:
            used += self.fingerprints.bytes_used
        return used / max(len(self), 1)

    def label(self, i: int):
        """The label of the step that first reached state ``i`` (None for an initial state)."""
        k = self.label_index[i]
        return self.labels[k] if k >= 0 else None

    def successors_of(self, i: int) -> array:
        return self.targets[self.offsets[i]:self.offsets[i + 1]]

    def path_to(self, i: int) -> tuple[list, list]:
        """Labels and state ids of a shortest path from an initial state to ``i``."""
        labels, ids = [], [i]
        while self.parent[i] >= 0:
            labels.append(self.label(i))
            i = self.parent[i]
            ids.append(i)
        return labels[::-1], ids[::-1]


class GraphBuilder:
    """The bookkeeping of a breadth-first search that keeps the reachable graph: numbering,
    parent pointers, labels, marks, problems, edges. :func:`explore_graph` drives it in one
    process; ``flipcheck.parallel_explore`` drives it from expansions done by worker processes or
    on a Spark cluster, so all build the same :class:`StateGraph`, number for number.

    States are numbered in the order :meth:`add` is called; a state is expanded by
    :meth:`edge` per successor, :meth:`step_problems` and :meth:`expanded`, in number order.
    """

    def __init__(self, store: str = "states", edges: bool = True):
        if store not in ("states", "fingerprints"):
            raise ValueError(f"store must be 'states' or 'fingerprints', got {store!r}")
        self.keep_states = store == "states"
        self.graph = StateGraph(edges=edges, fingerprints=None if self.keep_states else FingerprintTable())
        self._index: dict = {}
        self._label_numbers: dict = {}

    @classmethod
    def continuing(cls, graph: StateGraph) -> "GraphBuilder":
        """A builder that goes on with ``graph`` (fingerprints kept), e.g. one read back from disk."""
        builder = cls("fingerprints", graph.edges)
        builder.graph = graph
        builder._label_numbers = {label: k for k, label in enumerate(graph.labels)}
        return builder

    def __len__(self) -> int:
        return len(self.graph.parent)

    def seen(self, state, key: int | None = None, may_add: bool = True) -> int:
        """The number of ``state`` if seen, else -1. With fingerprints (``key``, or the
        state's own), an unseen one is entered at once under the number :meth:`add` gives
        next, unless ``may_add`` is false."""
        if self.keep_states:
            return self._index.get(state, -1)
        if key is None:
            key = fingerprint(state)
        table = self.graph.fingerprints
        assert table is not None    # kept whenever states are not
        if not may_add:
            return table.find(key)
        new_id = len(self)
        found = table.number_of(key, new_id)
        return found if found != new_id else -1

    def add(self, state, from_id: int, label, depth: int, mark: int = 0, problems=()) -> int:
        """Number a new state (``state`` may be None with fingerprints), reached from
        ``from_id`` by ``label``; ``problems`` are the state's own violations."""
        graph = self.graph
        new_id = len(graph.parent)
        if self.keep_states:
            self._index[state] = new_id
            graph.states.append(state)
        graph.parent.append(from_id)
        graph.label_index.append(self._number_label(label) if label is not None else -1)
        graph.depth.append(depth)
        graph.marks.append(mark)
        for problem in problems or ():
            graph.problems.setdefault(problem.property, (new_id, None, [problem]))
        return new_id

    def _number_label(self, label) -> int:
        k = self._label_numbers.get(label)
        if k is None:
            k = self._label_numbers[label] = len(self.graph.labels)
            self.graph.labels.append(label)
        return k

    def edge(self, j: int) -> None:
        if self.graph.edges:
            self.graph.targets.append(j)

    def step_problems(self, i: int, label, found) -> None:
        """The first occurrence of each property violated on the step ``label`` from ``i``."""
        for problem in found:
            self.graph.problems.setdefault(problem.property, (i, label, [p for p in found if p.property == problem.property]))

    def expanded(self, i: int, successors: int, final: bool) -> None:
        """State ``i`` had ``successors`` steps; with none it is ``final`` or a deadlock."""
        graph = self.graph
        if successors == 0:
            (graph.finals if final else graph.deadlocks).append(i)
        graph.transitions += successors
        graph.expanded = i + 1
        if graph.edges:
            graph.offsets.append(len(graph.targets))


@_collector_paused
def explore_graph(
    initial: Iterable[Hashable],
    successors: Callable[[Hashable], Iterable[tuple[Any, Hashable, Sequence]]],
    *,
    is_final: Callable[[Hashable], bool] | None = None,
    check_state: Callable[[Hashable], Sequence] | None = None,
    canonical: Callable[[Hashable], Hashable] | None = None,
    max_states: int | None = None,
    stop_at_first: bool = False,
    stop_when: Callable[[StateGraph], bool] | None = None,
    edges: bool = True,
    store: str = "states",
    mark: Callable[[Hashable], int] | None = None,
    progress: Callable[[StateGraph, float], None] | None = None,
    progress_every: float = 2.0,
    ample: Callable[[Hashable, list], Sequence[int] | None] | None = None,
    deadline: float | None = None,
) -> StateGraph:
    """Breadth-first search keeping the reachable graph.

    ``successors(state)`` yields ``(label, next_state, problems)``; every problem needs a
    ``property`` attribute (its name; :class:`~flipcheck.properties.violation.Violation`).
    ``is_final(state)``: a state without steps that is *not* a deadlock. ``canonical(state)``
    maps each successor to the representative stored. ``store="fingerprints"`` keeps 64-bit
    fingerprints instead of the states (and ``mark(state)``, a number below 256, per state).
    The search stops once ``max_states`` distinct states are stored or at ``deadline`` (a
    ``time.perf_counter()`` value), within the state being expanded (``complete`` is then false), at the
    first problem with ``stop_at_first``, or once ``stop_when(graph)`` holds (checked after each
    expanded state, so what was found before is exactly what a full search finds first).
    ``progress(graph, seconds)`` is called every ``progress_every`` seconds.
    ``ample(state, steps)`` (partial-order reduction) may name the positions of the steps to
    follow instead of all ``steps``; the search takes them only if every one leads one level
    deeper (the cycle proviso: so every cycle of the reduced graph has a state that was expanded
    fully, and no step is postponed around it forever), and counts the states it reduced in
    ``graph.reduced``.

    >>> def successors(n):                      # 0 -> 1 -> 2 -> 1 ...; 3 is a dead end
    ...     return {0: [("a", 1, []), ("b", 3, [])], 1: [("c", 2, [])], 2: [("d", 1, [])]}.get(n, [])
    >>> g = explore_graph([0], successors)
    >>> len(g), g.transitions, g.complete, [g.states[i] for i in g.deadlocks]
    (4, 4, True, [3])
    >>> bad = cannot_reach(g, g.deadlocks)      # 1 and 2 can never reach 3
    >>> sorted(g.states[i] for i in range(len(g)) if bad[i])
    [1, 2]
    >>> [g.states[i] for i in lasso(g, bad, g.states.index(1))[1]]   # the cycle closes on a repeated state
    [1, 2, 1]
    >>> f = explore_graph([0], successors, store="fingerprints")
    >>> (len(f), f.transitions, f.deadlocks, list(f.targets)) == (len(g), g.transitions, g.deadlocks, list(g.targets))
    True
    """
    builder = GraphBuilder(store, edges)
    graph = builder.graph
    frontier: deque = deque()   # states not yet expanded, in number order

    def add(state, from_id: int, label, d: int) -> int:
        frontier.append(state)
        return builder.add(state, from_id, label, d, mark(state) if mark is not None else 0,
                           check_state(state) if check_state is not None else ())

    started = time.perf_counter()
    next_report = started + progress_every
    for state in initial:
        if canonical is not None:
            state = canonical(state)
        if builder.seen(state) < 0:
            add(state, -1, None, 0)
    truncated = False
    i = 0
    while frontier:
        if (stop_at_first and graph.problems) or (stop_when is not None and stop_when(graph)):
            break
        state = frontier.popleft()
        d = graph.depth[i] + 1
        count = 0
        steps = successors(state)
        if ample is not None:
            steps = _reduced(builder, state, d - 1, list(steps), ample, canonical)
            canonical_done = True
        else:
            canonical_done = canonical is None
        for label, nxt, found in steps:
            count += 1
            if not canonical_done:
                nxt = canonical(nxt)  # type: ignore[misc]  # not None when not canonical_done
            room = max_states is None or len(builder) < max_states
            j = builder.seen(nxt, may_add=room)
            if j < 0:
                if room:
                    j = add(nxt, i, label, d)
                else:
                    truncated = True
            builder.edge(j)
            if found:
                builder.step_problems(i, label, found)
        builder.expanded(i, count, is_final is not None and is_final(state))
        i += 1
        if truncated:
            break   # the bound is reached: the rest of the frontier would only be looked up, for minutes
        if deadline is not None and (i & 255) == 0 and time.perf_counter() > deadline:
            truncated = True
            break
        if progress is not None and (i & 1023) == 0:
            now = time.perf_counter()
            if now >= next_report:
                progress(graph, now - started)
                next_report = now + progress_every
    graph.complete = i == len(builder) and not truncated
    graph.seconds = time.perf_counter() - started
    return graph


def _reduced(builder: GraphBuilder, state, depth_of_state: int, steps: list, ample, canonical) -> list:
    """The steps to follow from ``state`` (next states made canonical): the ones ``ample``
    names if each leads to a state one level deeper (unseen, or first reached in the level being
    built), else all of them. A cycle has a step that does not go one level deeper, and that
    step's state was expanded fully: the cycle proviso of a breadth-first search."""
    if canonical is not None:
        steps = [(label, canonical(nxt), found) for label, nxt, found in steps]
    chosen = ample(state, steps) if len(steps) > 1 else None
    if chosen is None or len(chosen) == len(steps):
        return steps
    depth, next_level = builder.graph.depth, depth_of_state + 1
    for k in chosen:
        j = builder.seen(steps[k][1], may_add=False)
        if j >= 0 and depth[j] != next_level:
            return steps  # the cycle proviso
    builder.graph.reduced += 1
    return [steps[k] for k in chosen]


def predecessor_lists(graph: StateGraph) -> tuple[array, array]:
    """``(counts, sources)``: the predecessors of state ``j`` are ``sources[counts[j]:counts[j +
    1]]`` (counting sort over the edges). Several backward searches over one graph should build
    them once and pass them to :func:`cannot_reach` (measured: 0.6 s of each 0.9 s search on
    372,406 states). Built in lists, which the compiled build indexes without boxing (0.61 → 0.39 s
    against indexing the arrays), then packed."""
    n = len(graph)
    targets: list[int] = graph.targets.tolist()
    offsets: list[int] = graph.offsets.tolist()
    counts: list[int] = [0] * (n + 1)
    for j in targets:
        if j >= 0:
            counts[j + 1] += 1
    for k in range(n):
        counts[k + 1] += counts[k]
    fill: list[int] = counts[:]
    sources: list[int] = [0] * counts[n]
    for i in range(graph.expanded):
        for e in range(offsets[i], offsets[i + 1]):
            j = targets[e]
            if j >= 0:
                sources[fill[j]] = i
                fill[j] += 1
    return array("l", counts), array("l", sources)


# bytes.translate table turning 0 into 1 and 1 into 0 (mypyc cannot compile iterating a bytearray).
_NEGATED = bytes([1, 0]) + bytes(254)


def cannot_reach(graph: StateGraph, targets: Iterable[int], within: bytearray | None = None,
                 predecessors: tuple[array, array] | None = None) -> bytearray:
    """``bad[i] == 1`` iff no state of ``targets`` is reachable from state ``i`` (the graph must
    have been explored completely, with edges). With ``within``, only paths through states
    ``s`` with ``within[s]`` count (targets outside it are ignored). ``predecessors``: the graph's
    :func:`predecessor_lists`, when the caller searches backwards more than once."""
    if not graph.edges:
        raise ValueError("the graph was explored without edges")
    n = len(graph)
    counts, sources = predecessors if predecessors is not None else predecessor_lists(graph)
    good = bytearray(n)
    stack = []
    for t in targets:
        if not good[t] and (within is None or within[t]):
            good[t] = 1
            stack.append(t)
    while stack:
        j = stack.pop()
        for e in range(counts[j], counts[j + 1]):
            i = sources[e]
            if not good[i] and (within is None or within[i]):
                good[i] = 1
                stack.append(i)
    return good.translate(_NEGATED)


def lasso(graph: StateGraph, bad: bytearray, start: int) -> tuple[list, list]:
    """A path from ``start`` that stays in ``bad`` states and closes a cycle: ``(edge positions,
    state ids)`` where the last state id repeats an earlier one. Every successor of a ``bad``
    state must be ``bad`` and have a successor (no deadlocks inside), which holds for the set
    of states from which neither a target nor a deadlock can be reached."""
    offsets, targets = graph.offsets, graph.targets
    seen = {start: 0}
    ids, picks = [start], []
    i = start
    while True:
        for e in range(offsets[i], offsets[i + 1]):
            j = targets[e]
            if bad[j]:
                break
        else:
            raise ValueError(f"state {i} has no successor in the set")
        picks.append(e)
        ids.append(j)
        if j in seen:
            return picks, ids
        seen[j] = len(ids) - 1
        i = j

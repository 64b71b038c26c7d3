"""Job graphs: vertices with a parallelism, edges with a distribution pattern, task states.

A job graph is what a user submits (Flink's ``JobGraph``): job vertices connected by job edges.
Each vertex runs as ``parallelism`` subtasks (tasks); a task is named ``(vertex_id, index)``.
The per-task view the checkpoint coordinator has of the job is a Flink ``ExecutionState`` per
task, kept here as a tuple of state names per vertex.

Everything here is immutable: a ``JobGraph`` is a value. Construction checks the structural
rules that every part of flipcheck relies on (unique ids, known endpoints, no self-loop, no
cycle, states that fit the parallelism); the JSON reader in :mod:`flipcheck.model.graph_json`
turns those failures into one-line messages for the CLI.

Example
-------
>>> g = JobGraph.build(
...     vertices=[("map", 2), ("src", 2)],
...     edges=[("src", "map", POINTWISE)],
...     states={"src": ("FINISHED", "RUNNING")},
... )
>>> g.topological_order
('src', 'map')
>>> g.state(("src", 0)), g.state(("map", 1))
('FINISHED', 'RUNNING')
>>> g.num_tasks
4
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "ALL_TO_ALL",
    "POINTWISE",
    "PATTERNS",
    "EXECUTION_STATES",
    "TERMINAL_STATES",
    "RUNNING",
    "FINISHED",
    "MAX_PARALLELISM",
    "TaskId",
    "JobVertex",
    "JobEdge",
    "JobGraph",
    "GraphStructureError",
    "CycleError",
    "VERTEX_FLAGS",
    "vertex_flag_problem",
]

ALL_TO_ALL = "ALL_TO_ALL"
POINTWISE = "POINTWISE"
PATTERNS = (ALL_TO_ALL, POINTWISE)

# Flink's ExecutionState enum, in declaration order.
EXECUTION_STATES = (
    "CREATED",
    "SCHEDULED",
    "DEPLOYING",
    "RUNNING",
    "FINISHED",
    "CANCELING",
    "CANCELED",
    "FAILED",
    "RECONCILING",
    "INITIALIZING",
)
RUNNING = "RUNNING"
FINISHED = "FINISHED"
# ExecutionState.isTerminal(): the states Execution.isFinished() reports (flip147 facts §1.5).
TERMINAL_STATES = frozenset({"FINISHED", "CANCELED", "FAILED"})

# Flink's upper bound on parallelism (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM).
MAX_PARALLELISM = 32768

TaskId = tuple  # (vertex_id: str, subtask_index: int)


class GraphStructureError(ValueError):
    """A job graph that breaks a structural rule; ``where`` names the offending part."""

    def __init__(self, where: str, problem: str):
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


class CycleError(GraphStructureError):
    """The edges contain a cycle; ``cycle`` lists its vertices in order."""

    def __init__(self, cycle: Sequence[str]):
        self.cycle = tuple(cycle)
        if len(cycle) <= 20:
            path = " -> ".join([*cycle, cycle[0]])
        else:  # a one-line message, not a megabyte: a cycle may run through every vertex
            path = " -> ".join(cycle[:10]) + f" -> ... ({len(cycle):,} vertices) -> " + " -> ".join([*cycle[-5:], cycle[0]])
        super().__init__("edges", f"cycle {path}")


# The per-vertex keys later models read from ``JobVertex.extra`` (model/protocol/structure.py), with the kind of
# value each takes; other keys (an imported plan's "name", "chain", ...) are kept as they are.
VERTEX_FLAGS = {
    "records": "count",
    "two_phase_commit_sink": "flag",
    "sink_v2": "flag",
    "union_list_state": "flag",
    "keyed_state": "flag",
}


def vertex_flag_problem(key: str, value: object) -> str | None:
    """Why ``value`` cannot be the vertex flag ``key`` (None when it can, or the key is not a flag)."""
    kind = VERTEX_FLAGS.get(key)
    if kind == "flag" and not isinstance(value, bool):
        return f"must be true or false, got {value!r}"
    if kind == "count" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        return f"must be a non-negative integer, got {value!r}"
    return None


@dataclass(frozen=True, slots=True)
class JobVertex:
    id: str
    parallelism: int
    # Keys of the input file this model does not interpret (later models add per-vertex flags).
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}), hash=False)


@dataclass(frozen=True, slots=True)
class JobEdge:
    source: str
    target: str
    pattern: str


class JobGraph:
    """An immutable job graph with per-task states: ``flipcheck.JobGraph``, what
    ``flipcheck.job_graph`` and ``load_job_graph`` return and what a protocol's ``plan(graph)``
    reads (each subtask's state is then the coordinator's view of it).

    Use :meth:`build` from plain values; the constructor expects already-typed parts.
    ``vertices`` keeps input order; ``topological_order`` is Kahn's order with ties broken by
    input order, so it is deterministic for a given input.

    >>> import flipcheck
    >>> g = flipcheck.job_graph([("sink", 1), ("src", 2)], [("src", "sink", "all-to-all")],
    ...                         states={"src": ["FINISHED", "RUNNING"]})
    >>> g.topological_order, g.parallelism("src"), g.num_tasks
    (('src', 'sink'), 2, 3)
    >>> edge = g.inputs("sink")[0]
    >>> edge.source, edge.pattern == flipcheck.ALL_TO_ALL, g.state(("src", 0))
    ('src', True, 'FINISHED')
    >>> g.with_states({"src": ["RUNNING", "RUNNING"]}).state(("src", 0))   # a new graph; g is unchanged
    'RUNNING'
    """

    __slots__ = (
        "vertices",
        "edges",
        "states",
        "checkpoints_after_tasks_finished",
        "_by_id",
        "_inputs",
        "_outputs",
        "topological_order",
        "__dict__",  # for cached_property
    )

    def __init__(
        self,
        vertices: tuple[JobVertex, ...],
        edges: tuple[JobEdge, ...],
        states: Mapping[str, tuple[str, ...]],
        checkpoints_after_tasks_finished: bool = True,
    ):
        if not vertices:
            raise GraphStructureError("vertices", "no vertices")
        by_id: dict[str, JobVertex] = {}
        for position, vertex in enumerate(vertices):
            if vertex.id in by_id:
                raise GraphStructureError(f"vertices[{position}].id", f"duplicate vertex id {vertex.id!r}")
            if not 1 <= vertex.parallelism <= MAX_PARALLELISM:
                raise GraphStructureError(
                    f"vertices[{position}].parallelism",
                    f"{vertex.parallelism} is outside 1..{MAX_PARALLELISM}",
                )
            by_id[vertex.id] = vertex
        inputs: dict[str, list[JobEdge]] = {v.id: [] for v in vertices}
        outputs: dict[str, list[JobEdge]] = {v.id: [] for v in vertices}
        for position, edge in enumerate(edges):
            for end in ("source", "target"):
                if getattr(edge, end) not in by_id:
                    raise GraphStructureError(
                        f"edges[{position}].{end}", f"unknown vertex {getattr(edge, end)!r}"
                    )
            if edge.source == edge.target:
                raise GraphStructureError(f"edges[{position}]", f"self-loop on {edge.source!r}")
            if edge.pattern not in PATTERNS:
                raise GraphStructureError(
                    f"edges[{position}].pattern",
                    f"unknown pattern {edge.pattern!r} (expected ALL_TO_ALL or POINTWISE)",
                )
            inputs[edge.target].append(edge)
            outputs[edge.source].append(edge)
        full_states: dict[str, tuple[str, ...]] = {}
        for vertex_id, vertex_states in states.items():
            if vertex_id not in by_id:
                raise GraphStructureError(f"states.{vertex_id}", "states for an unknown vertex")
            if len(vertex_states) != by_id[vertex_id].parallelism:
                raise GraphStructureError(
                    f"states.{vertex_id}",
                    f"{len(vertex_states)} states for parallelism {by_id[vertex_id].parallelism}",
                )
            full_states[vertex_id] = tuple(vertex_states)
        for vertex in vertices:
            if vertex.id not in full_states:
                full_states[vertex.id] = (RUNNING,) * vertex.parallelism

        self.vertices = tuple(vertices)
        self.edges = tuple(edges)
        self.states = MappingProxyType(full_states)
        self.checkpoints_after_tasks_finished = bool(checkpoints_after_tasks_finished)
        self._by_id = by_id
        self._inputs = {k: tuple(v) for k, v in inputs.items()}
        self._outputs = {k: tuple(v) for k, v in outputs.items()}
        self.topological_order = self._topological_order()

    @classmethod
    def build(
        cls,
        vertices: Iterable[tuple[str, int]] | Iterable[JobVertex],
        edges: Iterable[tuple[str, str, str]] | Iterable[JobEdge] = (),
        states: Mapping[str, Sequence[str]] | None = None,
        checkpoints_after_tasks_finished: bool = True,
    ) -> "JobGraph":
        """Build from tuples: ``(id, parallelism)`` vertices and ``(source, target, pattern)`` edges."""
        vs = tuple(v if isinstance(v, JobVertex) else JobVertex(v[0], v[1]) for v in vertices)
        es = tuple(e if isinstance(e, JobEdge) else JobEdge(*e) for e in edges)
        return cls(vs, es, {k: tuple(s) for k, s in (states or {}).items()}, checkpoints_after_tasks_finished)

    def with_states(self, states: Mapping[str, Sequence[str]]) -> "JobGraph":
        """The same topology with other task states (vertices not named keep theirs)."""
        merged = dict(self.states)
        merged.update({k: tuple(s) for k, s in states.items()})
        return JobGraph(self.vertices, self.edges, merged, self.checkpoints_after_tasks_finished)

    def with_flag(self, checkpoints_after_tasks_finished: bool) -> "JobGraph":
        return JobGraph(self.vertices, self.edges, self.states, checkpoints_after_tasks_finished)

    # -- structure -------------------------------------------------------------------------

    def _topological_order(self) -> tuple[str, ...]:
        # Kahn's algorithm; the ready set is ordered by input position so the result is
        # deterministic for a given input.
        in_degree = {v.id: len(self._inputs[v.id]) for v in self.vertices}
        position = {v.id: n for n, v in enumerate(self.vertices)}
        ready = [(position[v.id], v.id) for v in self.vertices if in_degree[v.id] == 0]
        order: list[str] = []
        while ready:
            _, vertex_id = heapq.heappop(ready)
            order.append(vertex_id)
            for edge in self._outputs[vertex_id]:
                in_degree[edge.target] -= 1
                if in_degree[edge.target] == 0:
                    heapq.heappush(ready, (position[edge.target], edge.target))
        if len(order) != len(self.vertices):
            raise CycleError(self._find_cycle(set(self._by_id) - set(order)))
        return tuple(order)

    def _find_cycle(self, candidates: set[str]) -> list[str]:
        import networkx as nx

        graph = nx.DiGraph((e.source, e.target) for e in self.edges if e.source in candidates and e.target in candidates)
        return [u for u, _ in nx.find_cycle(graph)]

    def vertex(self, vertex_id: str) -> JobVertex:
        return self._by_id[vertex_id]

    def parallelism(self, vertex_id: str) -> int:
        return self._by_id[vertex_id].parallelism

    def inputs(self, vertex_id: str) -> tuple[JobEdge, ...]:
        """Input edges of a vertex, in input order (Flink's ``JobVertex.getInputs()``)."""
        return self._inputs[vertex_id]

    def outputs(self, vertex_id: str) -> tuple[JobEdge, ...]:
        return self._outputs[vertex_id]

    # -- tasks -----------------------------------------------------------------------------

    @cached_property
    def num_tasks(self) -> int:
        return sum(v.parallelism for v in self.vertices)

    def tasks(self) -> Iterator[TaskId]:
        """Every task, in topological vertex order and subtask order (Flink's ``allTasks``)."""
        for vertex_id in self.topological_order:
            for index in range(self._by_id[vertex_id].parallelism):
                yield (vertex_id, index)

    def state(self, task: TaskId) -> str:
        return self.states[task[0]][task[1]]

    def __repr__(self) -> str:
        vs = ", ".join(f"{v.id}×{v.parallelism}" for v in self.vertices)
        es = ", ".join(f"{e.source}->{e.target}:{e.pattern}" for e in self.edges)
        return f"JobGraph([{vs}], [{es}])"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JobGraph):
            return NotImplemented
        return (
            self.vertices == other.vertices
            and self.edges == other.edges
            and dict(self.states) == dict(other.states)
            and self.checkpoints_after_tasks_finished == other.checkpoints_after_tasks_finished
        )

    def __hash__(self) -> int:
        return hash((tuple((v.id, v.parallelism) for v in self.vertices), self.edges))

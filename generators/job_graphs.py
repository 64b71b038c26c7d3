"""Job graphs and task states, for hypothesis and for seeded sweeps.

Graphs: random DAGs with both patterns, uneven parallelism (both ways across POINTWISE edges),
vertex order shuffled (the input format's order is not topological). States, by ``kind``:

* ``"arbitrary"``: each task RUNNING or FINISHED independently — includes the out-of-order views
  the seed warns about ("some tasks might report FINISHED after its descendant tasks");
* ``"upstream_closed"``: a task is FINISHED only if all its predecessors are (the order in
  which tasks really finish);
* ``"any_state"``: every ExecutionState, biased towards RUNNING and FINISHED.

Example
-------
>>> from flipcheck.generators.choices import SeededChooser
>>> g = generate_job_graph(SeededChooser.for_case("doc", 1), max_vertices=4, max_parallelism=3)
>>> g == generate_job_graph(SeededChooser.for_case("doc", 1), max_vertices=4, max_parallelism=3)
True
>>> 1 <= len(g.vertices) <= 4
True
"""

from __future__ import annotations

from flipcheck.model.execution_graph import predecessors
from flipcheck.model.jobgraph import ALL_TO_ALL, EXECUTION_STATES, FINISHED, POINTWISE, RUNNING, JobGraph, JobVertex, JobEdge

from .choices import Chooser, HypothesisChooser, choice, permutation

__all__ = [
    "STATE_KINDS",
    "generate_topology",
    "generate_states",
    "generate_job_graph",
    "job_graphs",
    "topologies",
]

STATE_KINDS = ("arbitrary", "upstream_closed", "any_state")
_OTHER_STATES = tuple(s for s in EXECUTION_STATES if s not in (RUNNING, FINISHED))


def generate_topology(
    chooser: Chooser,
    *,
    max_vertices: int = 6,
    max_parallelism: int = 4,
    min_vertices: int = 1,
    edge_probability: float = 0.5,
) -> JobGraph:
    """A random DAG: vertices ``v0..vn`` in a hidden topological order, each pair ``vi -> vj``
    (i < j) connected with ``edge_probability``, then listed in a shuffled order."""
    count = chooser.integer(min_vertices, max_vertices)
    names = [f"v{i}" for i in range(count)]
    parallelism = {name: chooser.integer(1, max_parallelism) for name in names}
    edges = []
    for j in range(count):
        for i in range(j):
            if chooser.boolean(edge_probability):
                pattern = ALL_TO_ALL if chooser.boolean() else POINTWISE
                edges.append(JobEdge(names[i], names[j], pattern))
    order = permutation(chooser, names)
    vertices = tuple(JobVertex(name, parallelism[name]) for name in order)
    return JobGraph(vertices, tuple(permutation(chooser, edges)), {})


def generate_states(chooser: Chooser, graph: JobGraph, kind: str = "arbitrary") -> JobGraph:
    """``graph`` with task states of the given kind (see the module docstring)."""
    if kind not in STATE_KINDS:
        raise ValueError(f"unknown state kind {kind!r} (expected one of {', '.join(STATE_KINDS)})")
    states: dict[str, list[str]] = {v: [RUNNING] * graph.parallelism(v) for v in graph.topological_order}
    for vertex_id in graph.topological_order:
        for index in range(graph.parallelism(vertex_id)):
            if kind == "upstream_closed":
                may_finish = all(states[u][j] == FINISHED for u, j in predecessors(graph, (vertex_id, index)))
                finished = may_finish and chooser.boolean()
                states[vertex_id][index] = FINISHED if finished else RUNNING
            elif kind == "arbitrary":
                states[vertex_id][index] = FINISHED if chooser.boolean() else RUNNING
            else:
                roll = chooser.integer(0, 9)
                states[vertex_id][index] = (
                    RUNNING if roll < 4 else FINISHED if roll < 8 else choice(chooser, _OTHER_STATES)
                )
    return graph.with_states(states)


def generate_job_graph(
    chooser: Chooser,
    *,
    max_vertices: int = 6,
    max_parallelism: int = 4,
    state_kind: str | None = None,
    flag_off_probability: float = 0.1,
) -> JobGraph:
    """A topology with states; ``state_kind=None`` picks one of :data:`STATE_KINDS`."""
    graph = generate_topology(chooser, max_vertices=max_vertices, max_parallelism=max_parallelism)
    kind = state_kind if state_kind is not None else choice(chooser, STATE_KINDS)
    graph = generate_states(chooser, graph, kind)
    if flag_off_probability and chooser.boolean(flag_off_probability):
        graph = graph.with_flag(False)
    return graph


def topologies(**kwargs):
    """Hypothesis strategy for job graphs with every task RUNNING (see :func:`generate_topology`)."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: generate_topology(HypothesisChooser(draw), **kwargs))()


def job_graphs(**kwargs):
    """Hypothesis strategy for job graphs with task states (see :func:`generate_job_graph`)."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: generate_job_graph(HypothesisChooser(draw), **kwargs))()

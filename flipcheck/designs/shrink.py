"""Greedy minimisation of a failing job-graph case: fewest vertices, edges, tasks, odd states.

Used to turn the first counterexample a driver finds into the smallest picture for a design
review. Every candidate is re-checked with the caller's predicate, so the result still fails
the same way.

>>> from flipcheck.model.jobgraph import JobGraph
>>> g = JobGraph.build([("a", 3), ("b", 2), ("c", 2)], [("a", "b", "POINTWISE"), ("b", "c", "ALL_TO_ALL")],
...                    states={"a": ["FINISHED", "RUNNING", "FAILED"]})
>>> small = shrink_graph(g, lambda x: any(s == "FAILED" for v in x.vertices for s in x.states[v.id]))
>>> [(v.id, v.parallelism) for v in small.vertices], dict(small.states)
([('a', 1)], {'a': ('FAILED',)})
"""

from __future__ import annotations

from typing import Callable, Iterator

from flipcheck.model.jobgraph import RUNNING, GraphStructureError, JobGraph, JobVertex

__all__ = ["shrink_graph"]


def _candidates(graph: JobGraph) -> Iterator[JobGraph]:
    vertices, edges, states = graph.vertices, graph.edges, dict(graph.states)

    def build(new_vertices, new_edges, new_states):
        kept = {v.id for v in new_vertices}
        return JobGraph(
            tuple(new_vertices),
            tuple(e for e in new_edges if e.source in kept and e.target in kept),
            {k: s for k, s in new_states.items() if k in kept},
            graph.checkpoints_after_tasks_finished,
        )

    if len(vertices) > 1:
        for vertex in vertices:
            yield build([v for v in vertices if v is not vertex], edges, states)
    for edge in edges:
        yield build(vertices, [e for e in edges if e is not edge], states)
    for n, vertex in enumerate(vertices):
        if vertex.parallelism > 1:
            for drop in (0, vertex.parallelism - 1):  # the first or the last subtask
                smaller = list(vertices)
                smaller[n] = JobVertex(vertex.id, vertex.parallelism - 1, vertex.extra)
                row = list(states[vertex.id])
                del row[drop]
                yield build(smaller, edges, {**states, vertex.id: tuple(row)})
    for vertex in vertices:
        row = states[vertex.id]
        for index, state in enumerate(row):
            if state != RUNNING:
                yield build(vertices, edges, {**states, vertex.id: row[:index] + (RUNNING,) + row[index + 1:]})
    if not graph.checkpoints_after_tasks_finished:
        yield graph.with_flag(True)


def shrink_graph(graph: JobGraph, still_fails: Callable[[JobGraph], bool], max_rounds: int = 1000) -> JobGraph:
    """The first smaller candidate that still fails, repeatedly, until none does."""
    for _ in range(max_rounds):
        for candidate in _candidates(graph):
            try:
                if still_fails(candidate):
                    graph = candidate
                    break
            except GraphStructureError:
                continue
        else:
            return graph
    return graph

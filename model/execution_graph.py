"""The execution graph: tasks and which upstream tasks each one reads (flip147 facts §1.5, §1.7).

A job edge ``A -> B`` becomes task-level connections:

* ALL_TO_ALL: every subtask of ``B`` reads every subtask of ``A``;
* POINTWISE: subtask ``i`` of ``B`` reads the partitions of ``A`` given by
  :func:`flipcheck.model.pointwise.consumed_partitions`.

Written for clarity: predecessors are generated on demand, nothing is cached.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, POINTWISE, ALL_TO_ALL
>>> g = JobGraph.build([("a", 3), ("b", 2), ("c", 1)], [("a", "b", POINTWISE), ("b", "c", ALL_TO_ALL)])
>>> sorted(predecessors(g, ("b", 1)))
[('a', 1), ('a', 2)]
>>> sorted(predecessors(g, ("c", 0)))
[('b', 0), ('b', 1)]
>>> count_connections(g)
5
"""

from __future__ import annotations

from typing import Iterator

from .jobgraph import ALL_TO_ALL, JobEdge, JobGraph, TaskId
from .pointwise import consumed_partitions

__all__ = ["input_connections", "predecessors", "count_connections", "to_networkx"]


def input_connections(graph: JobGraph, task: TaskId) -> Iterator[tuple[JobEdge, TaskId]]:
    """``(job edge, upstream task)`` for every upstream task ``task`` reads, in input order."""
    vertex_id, index = task
    for edge in graph.inputs(vertex_id):
        upstream = graph.parallelism(edge.source)
        if edge.pattern == ALL_TO_ALL:
            partitions = range(upstream)
        else:
            partitions = consumed_partitions(upstream, graph.parallelism(vertex_id), index)
        for partition in partitions:
            yield edge, (edge.source, partition)


def count_connections(graph: JobGraph, stop_above: int | None = None) -> int:
    """How many task-level connections :func:`input_connections` yields over all tasks, counted
    per job edge without building them; once the count passes ``stop_above`` it is returned as
    soon as the current edge is counted (enough to refuse a graph too large to expand)."""
    total = 0
    for edge in graph.edges:
        upstream, downstream = graph.parallelism(edge.source), graph.parallelism(edge.target)
        if edge.pattern == ALL_TO_ALL:
            total += upstream * downstream
        else:
            total += sum(len(consumed_partitions(upstream, downstream, index)) for index in range(downstream))
        if stop_above is not None and total > stop_above:
            break
    return total


def predecessors(graph: JobGraph, task: TaskId) -> Iterator[TaskId]:
    """Upstream tasks whose output ``task`` reads, edge by edge in input order."""
    for _, upstream_task in input_connections(graph, task):
        yield upstream_task


def to_networkx(graph: JobGraph):
    """The execution graph as a ``networkx.DiGraph`` of tasks, with ``state`` and ``pattern`` attributes."""
    import networkx as nx

    tasks = nx.DiGraph()
    for task in graph.tasks():
        tasks.add_node(task, state=graph.state(task))
    for task in graph.tasks():
        for edge, upstream_task in input_connections(graph, task):
            tasks.add_edge(upstream_task, task, pattern=edge.pattern)
    return tasks

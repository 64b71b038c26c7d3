"""Large job graphs for benchmarks: a pipeline of vertices with both patterns and finished tasks.

>>> g = pipeline_graph(vertices=4, parallelism=8, finished_every=3)
>>> g.num_tasks, g.states["v0"][:4]
(32, ('FINISHED', 'RUNNING', 'RUNNING', 'FINISHED'))
"""

from __future__ import annotations

from flipcheck.model.jobgraph import ALL_TO_ALL, FINISHED, POINTWISE, RUNNING, JobEdge, JobGraph, JobVertex

__all__ = ["pipeline_graph"]


def pipeline_graph(vertices: int = 10, parallelism: int = 1000, finished_every: int = 3) -> JobGraph:
    """``v0 -> v1 -> ...`` alternating POINTWISE and ALL_TO_ALL, plus a second source feeding
    ``v2``; every ``finished_every``-th subtask of the first two vertices is FINISHED, so the
    plan takes Flink's after-finished path and checks tasks one by one."""
    names = [f"v{i}" for i in range(vertices)]
    edges = [JobEdge(names[i], names[i + 1], POINTWISE if i % 2 == 0 else ALL_TO_ALL) for i in range(vertices - 1)]
    pattern_row = tuple(FINISHED if i % finished_every == 0 else RUNNING for i in range(parallelism))
    states = {name: pattern_row for name in names[:2]}
    return JobGraph(tuple(JobVertex(n, parallelism) for n in names), tuple(edges), states)

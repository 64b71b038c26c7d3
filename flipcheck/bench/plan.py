"""``flipcheck bench plan``: tasks per second of plan algorithms on large pipelines.

Two shapes of the same 10+ vertex pipeline (:func:`flipcheck.bench.graphs.pipeline_graph`):

* ``typical`` — every third subtask of the first two vertices FINISHED;
* ``adversarial`` — the first two vertices FINISHED except their last subtask, so a per-task
  scan of ALL_TO_ALL predecessors reads almost every upstream task before it finds the running
  one: the seed's O(n²) case, which Flink's fast check skips in O(1) per vertex.

A measurement whose predicted time exceeds the budget is skipped and reported as such rather
than left to run for hours.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from flipcheck.bench.graphs import pipeline_graph
from flipcheck.reference_impl.plan import plan_algorithm

__all__ = ["SIZES", "PlanBenchRow", "bench_plan"]

# tasks -> (vertices, parallelism); parallelism stays within Flink's 32768.
SIZES = {10_000: (10, 1_000), 100_000: (10, 10_000), 1_000_000: (31, 32_768)}


@dataclass
class PlanBenchRow:
    algorithm: str
    shape: str
    tasks: int
    seconds: float | None  # None: skipped, predicted over budget
    predicted_seconds: float | None = None

    @property
    def tasks_per_second(self) -> float | None:
        return self.tasks / self.seconds if self.seconds else None


def _graph(tasks: int, shape: str):
    vertices, parallelism = SIZES[tasks]
    graph = pipeline_graph(vertices, parallelism, finished_every=3)
    if shape == "adversarial":
        almost_all = ("FINISHED",) * (parallelism - 1) + ("RUNNING",)
        graph = graph.with_states({"v0": almost_all, "v1": almost_all})
    return graph


def _time(algorithm, graph, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        algorithm(graph)
        best = min(best, time.perf_counter() - start)
    return best


def bench_plan(algorithms=("flink", "naive"), shapes=("typical", "adversarial"), sizes=tuple(SIZES), budget: float = 30.0, progress=None):
    """Yield a :class:`PlanBenchRow` per (algorithm, shape, size); best of 3 below 1 s."""
    for shape in shapes:
        for name in algorithms:
            algorithm = plan_algorithm(name)
            previous: tuple[int, float] | None = None
            for tasks in sizes:
                if previous is not None:
                    # Extrapolate quadratically: safe for both linear and quadratic algorithms.
                    vertices, parallelism = SIZES[tasks]
                    predicted = previous[1] * (vertices * parallelism / previous[0]) ** 2
                    if predicted > budget:
                        yield PlanBenchRow(name, shape, vertices * parallelism, None, predicted)
                        continue
                if progress:
                    progress(f"{name} {shape} {tasks} tasks")
                graph = _graph(tasks, shape)
                once = _time(algorithm, graph, 1)
                seconds = _time(algorithm, graph, 3) if once < 1 else once
                previous = (graph.num_tasks, seconds)
                yield PlanBenchRow(name, shape, graph.num_tasks, seconds)

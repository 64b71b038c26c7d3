"""Named variants of the plan calculator: the seed's algorithms as written, a baseline, a bug.

Each variant overrides one step of :class:`FlinkPlanCalculator`; everything else (the decline
checks, the wait/commit/finished sets) is Flink's.

* ``naive`` — the seed's direct O(n²) implementation: every running task scans all of its
  execution-graph predecessors.
* ``wiki-a`` — the seed's first Appendix pseudocode (the fast check), as written.
* ``wiki-b`` — the seed's second Appendix pseudocode (topological walk, ``tasks_to_check`` with
  union), as written. See :class:`WikiBPlanCalculator` for how its ambiguous lines are read.
* ``flink-before-40482`` — counted CANCELED and FAILED tasks as finished (flip147 facts §5, FLINK-40482).
* ``flink-before-22379``, ``flink-before-22003`` — the earlier, weaker "tasks started" checks.
* ``trigger-sources-only`` — the pre-FLIP-147 coordinator (seed, Figure 1).
* ``flink-before-22863`` — float POINTWISE wiring (FLINK-22863).

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("a", 2), ("b", 2)], [("a", "b", ALL_TO_ALL)], states={"a": ["FINISHED", "RUNNING"]})
>>> sorted(WikiBPlanCalculator().calculate(g).tasks_to_trigger)  # b still has a running input
[('a', 1), ('b', 0), ('b', 1)]
>>> sorted(NaivePlanCalculator().calculate(g).tasks_to_trigger)
[('a', 1)]
"""

from __future__ import annotations

from typing import Sequence

from flipcheck.model.jobgraph import ALL_TO_ALL, TERMINAL_STATES, JobGraph

from .flink import FlinkPlanCalculator
from .wiring import float_ceil_wiring

__all__ = [
    "NaivePlanCalculator",
    "WikiAPlanCalculator",
    "WikiBPlanCalculator",
    "FlinkBefore40482PlanCalculator",
    "FlinkBefore22379PlanCalculator",
    "FlinkBefore22003PlanCalculator",
    "TriggerSourcesOnlyPlanCalculator",
    "FlinkBefore22863PlanCalculator",
]


class _ExecutionGraphScan(FlinkPlanCalculator):
    def _running_predecessor_exists(self, graph: JobGraph, vertex_id: str, index: int, running) -> bool:
        """Scan every execution-graph predecessor of one task (both patterns)."""
        for edge in graph.inputs(vertex_id):
            bits = running[edge.source]
            if edge.pattern == ALL_TO_ALL:
                partitions: Sequence[int] = range(len(bits))
            else:
                partitions = self.wiring(len(bits), graph.parallelism(vertex_id))[index]
            if any(bits[j] for j in partitions):
                return True
        return False


class NaivePlanCalculator(_ExecutionGraphScan):
    """Seed: "A direct implementation would have O(n2) time complexity since it needs to check
    all the precedent tasks of each task"."""

    name = "naive"

    def trigger_roots(self, graph, running, cardinality, running_indices):
        return {
            v: [i for i in running_indices.get(v, ()) if not self._running_predecessor_exists(graph, v, i, running)]
            for v in graph.topological_order
        }


class WikiAPlanCalculator(_ExecutionGraphScan):
    """Seed Appendix 1, first code block, line by line::

        for each job vertex JV: if all tasks of JV finished: continue
            for each input job edge IJE:
                if (IJE is ALL_TO_ALL and some tasks are running) or
                   (IJE is POINTWISE and all tasks are running): continue each_jv
            for each task of JV: if task is running and no precedent tasks are running: add

    "some/all tasks are running" refers to the upstream vertex of IJE.
    """

    name = "wiki-a"

    def trigger_roots(self, graph, running, cardinality, running_indices):
        trigger: dict[str, Sequence[int]] = {}
        for vertex_id in graph.topological_order:
            if cardinality[vertex_id] == 0:
                continue
            skip = False
            for edge in graph.inputs(vertex_id):
                upstream_running = cardinality[edge.source]
                if (edge.pattern == ALL_TO_ALL and upstream_running > 0) or (
                    edge.pattern != ALL_TO_ALL and upstream_running == len(running[edge.source])
                ):
                    skip = True
                    break
            if skip:
                continue
            bits = running[vertex_id]
            trigger[vertex_id] = [
                i
                for i in range(len(bits))
                if bits[i] and not self._running_predecessor_exists(graph, vertex_id, i, running)
            ]
        return trigger


class WikiBPlanCalculator(FlinkPlanCalculator):
    """The seed's second Appendix algorithm as written: ``tasks_to_check`` starts with every
    task and only grows by union, so nothing is narrowed and every running task is triggered.

    Seed Appendix 1, second code block::

        Initialize V.tasks_to_check for each JobVertex V to be all its tasks;
        for each JobVertex V in topology order:
            if V.filtered_tasks_to_check is empty: continue
            running, finished = split V.filtered_tasks_to_check
            add running tasks to the tasks to trigger
            for each descendant JobVertex SubV:
                if finished < all_tasks:
                    if V -> SubV is ALL_TO_ALL: filtered_tasks_to_check = {}
                    elif V -> SubV is POINTWISE:
                        filtered_tasks_to_check = {tasks connected from running tasks of V}
                    SubV.tasks_to_check = SubV.tasks_to_check union filtered_tasks_to_check

    Readings of the ambiguous lines: ``V.filtered_tasks_to_check`` in the first test and the
    split is ``V.tasks_to_check`` (no other per-vertex set exists); ``finished < all_tasks`` means
    fewer of V's tasks are finished than V has tasks. Nothing is fixed: the sets are initialised
    to every task and only ever grow by union, so nothing is narrowed.
    """

    name = "wiki-b"
    flink_issue = None

    def trigger_roots(self, graph, running, cardinality, running_indices):
        tasks_to_check = {v: set(range(graph.parallelism(v))) for v in graph.topological_order}
        trigger: dict[str, Sequence[int]] = {}
        for vertex_id in graph.topological_order:
            if not tasks_to_check[vertex_id]:
                continue
            bits = running[vertex_id]
            running_tasks = sorted(i for i in tasks_to_check[vertex_id] if bits[i])
            finished_tasks = [i for i in tasks_to_check[vertex_id] if not bits[i]]
            trigger[vertex_id] = running_tasks
            for edge in graph.outputs(vertex_id):
                if len(finished_tasks) < len(bits):
                    if edge.pattern == ALL_TO_ALL:
                        filtered: set[int] = set()
                    else:
                        wiring = self.wiring(len(bits), graph.parallelism(edge.target))
                        filtered = {
                            k for k, partitions in enumerate(wiring) if any(j in running_tasks for j in partitions)
                        }
                    tasks_to_check[edge.target] |= filtered
        return trigger


class FlinkBefore40482PlanCalculator(FlinkPlanCalculator):
    """FLINK-40482: ``Execution.isFinished()`` is ``state.isTerminal()``, so CANCELED and FAILED
    tasks were treated as finished and silently dropped from the tasks to wait for."""

    name = "flink-before-40482"
    flink_issue = "FLINK-40482"

    def is_running(self, state: str) -> bool:
        return state not in TERMINAL_STATES


class FlinkBefore22379PlanCalculator(FlinkPlanCalculator):
    """FLINK-22379: ``checkTasksStarted`` looked at tasksToTrigger only, so a non-RUNNING task
    that is waited for but not triggered let the checkpoint start (and then expire)."""

    name = "flink-before-22379"
    flink_issue = "FLINK-22379"

    def tasks_started(self, graph, plan):
        return all(graph.state(t) == "RUNNING" for t in plan.tasks_to_trigger)


class FlinkBefore22003PlanCalculator(FlinkBefore22379PlanCalculator):
    """FLINK-22003: before it, the trigger check rejected only CREATED, SCHEDULED and DEPLOYING,
    so e.g. an INITIALIZING or CANCELING source could still be triggered."""

    name = "flink-before-22003"
    flink_issue = "FLINK-22003"

    def tasks_started(self, graph, plan):
        return all(graph.state(t) not in ("CREATED", "SCHEDULED", "DEPLOYING") for t in plan.tasks_to_trigger)


class TriggerSourcesOnlyPlanCalculator(FlinkPlanCalculator):
    """The behaviour FLIP-147 replaces (seed, Figure 1): the coordinator keeps triggering the
    original sources, finished or not, so a task behind a finished source never hears of the
    checkpoint."""

    name = "trigger-sources-only"
    flink_issue = None

    def trigger_roots(self, graph, running, cardinality, running_indices):
        return {v: range(graph.parallelism(v)) for v in graph.topological_order if not graph.inputs(v)}


class FlinkBefore22863PlanCalculator(FlinkPlanCalculator):
    """FLINK-22863: Flink 1.13's first EdgeManagerBuildUtil computed POINTWISE consumer ranges
    for ``U < D`` with ``Math.ceil`` over single-precision floats (wrong for large parallelism)."""

    name = "flink-before-22863"
    flink_issue = "FLINK-22863"
    wiring = staticmethod(float_ceil_wiring)

"""Flink's ``DefaultCheckpointPlanCalculator`` as shipped (flip147 facts §1.3–§1.6).

Linear in tasks + job edges: job vertices are visited in topological order, each with a
per-vertex "running" bit array (Flink's ``BitSet``); a vertex-level fast check skips vertices
that some active upstream vertex will reach with barriers, and only POINTWISE inputs are checked
per task (when the fast check passes, every ALL_TO_ALL upstream vertex is fully finished).

The class exposes the steps as methods so that variants (design alternatives and historical
bugs) override one step instead of copying the algorithm.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, POINTWISE
>>> g = JobGraph.build([("src", 4), ("map", 2)], [("src", "map", POINTWISE)],
...                    states={"src": ["FINISHED", "FINISHED", "RUNNING", "FINISHED"]})
>>> plan = FlinkPlanCalculator().calculate(g)
>>> sorted(plan.tasks_to_trigger)
[('map', 0), ('src', 2)]
"""

from __future__ import annotations

from typing import Sequence

from flipcheck.model.jobgraph import ALL_TO_ALL, FINISHED, RUNNING, TERMINAL_STATES, JobGraph
from flipcheck.model.plan import (
    NO_TASKS_TO_WAIT_FOR,
    NOT_ALL_REQUIRED_TASKS_RUNNING,
    CheckpointPlan,
    Declined,
    PlanResult,
    TaskSet,
)

from .wiring import integer_wiring

__all__ = ["FlinkPlanCalculator", "bitset_size"]


def bitset_size(parallelism: int) -> int:
    """``new BitSet(parallelism).size()``: the allocated capacity, a multiple of 64 (flip147 facts §1.5)."""
    return max(1, (parallelism + 63) // 64) * 64


class FlinkPlanCalculator:
    """``DefaultCheckpointPlanCalculator.calculateCheckpointPlan`` step by step:
    ``flipcheck.PlanCalculator``, the base class of a plan algorithm of your own.

    :meth:`calculate` runs the steps, each a method to override: :meth:`is_running` (which
    subtask states count as running), :meth:`tasks_started` (``checkTasksStarted``),
    :meth:`calculate_with_all_tasks_running`, :meth:`calculate_after_tasks_finished`,
    :meth:`trigger_roots` with :meth:`some_tasks_may_be_triggered` and
    :meth:`triggered_subtasks`, and ``wiring`` (the POINTWISE wiring). Check yours with
    ``flipcheck.plan(graph, Mine)`` or ``flipcheck verify --suite plan --variant FILE.py:Mine``.

    >>> import flipcheck
    >>> g = flipcheck.load_job_graph("examples/graphs/figure1.json")   # A finished; A, B -> C
    >>> sorted(flipcheck.PlanCalculator().calculate(g).tasks_to_trigger)
    [('B', 0)]
    >>> class TriggerEveryRunningTask(flipcheck.PlanCalculator):
    ...     def trigger_roots(self, graph, running, cardinality, running_indices):
    ...         return running_indices          # every running task, whatever runs before it
    >>> flipcheck.plan(g, TriggerEveryRunningTask).counterexample.property
    'no_triggered_task_has_running_predecessor'
    """

    name = "flink"
    # The Flink issue a variant re-creates (None for the engine and for design alternatives).
    flink_issue: str | None = None
    # The POINTWISE wiring Flink uses (EdgeManagerBuildUtil since FLINK-22863).
    wiring = staticmethod(integer_wiring)

    def calculate(self, graph: JobGraph) -> PlanResult:
        # Step 1 (flip147 facts §1.3): hasFinishedTasks counts only real FINISHED transitions.
        has_finished_tasks = any(FINISHED in graph.states[v] for v in graph.topological_order)
        if has_finished_tasks and not graph.checkpoints_after_tasks_finished:
            return Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
        # Step 2 (checkAllTasksInitiated): every task of the model has an execution attempt.
        # Step 3.
        running = {v: self.running_bits(graph.states[v]) for v in graph.topological_order}
        if has_finished_tasks:
            plan = self.calculate_after_tasks_finished(graph, running)
        else:
            plan = self.calculate_with_all_tasks_running(graph)
        # Step 4: checkTasksStarted.
        if not self.tasks_started(graph, plan):
            return Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
        # PendingCheckpoint's constructor: "Checkpoint needs at least one vertex that commits".
        if not plan.tasks_to_wait_for.by_vertex:
            return Declined(NO_TASKS_TO_WAIT_FOR)
        return plan

    # -- the steps variants override --------------------------------------------------------

    def is_running(self, state: str) -> bool:
        """The bit of ``collectTaskRunningStatus`` (FINISHED only, since FLINK-40482)."""
        return state != FINISHED

    def running_bits(self, states: Sequence[str]) -> Sequence[bool]:
        # Only terminal states can be "not running" (for Flink and for its variants), so a
        # vertex without any is all running; the set test runs at C speed.
        if not TERMINAL_STATES.intersection(states):
            return (True,) * len(states)
        is_running = self.is_running
        return [is_running(s) for s in states]

    def tasks_started(self, graph: JobGraph, plan: CheckpointPlan) -> bool:
        """``checkTasksStarted(plan.getTasksToWaitFor())``: each one exactly RUNNING."""
        for vertex_id, indices in plan.tasks_to_wait_for.by_vertex.items():
            states = graph.states[vertex_id]
            if len(indices) == len(states):
                if states.count(RUNNING) != len(states):
                    return False
            elif any(states[i] != RUNNING for i in indices):
                return False
        return True

    def calculate_with_all_tasks_running(self, graph: JobGraph) -> CheckpointPlan:
        """flip147 facts §1.4: trigger every subtask of every vertex without inputs; wait for all."""
        every = {v: range(graph.parallelism(v)) for v in graph.topological_order}
        sources = {v: every[v] for v in graph.topological_order if not graph.inputs(v)}
        everything = TaskSet(every)
        return CheckpointPlan(TaskSet(sources), everything, everything, TaskSet(), frozenset())

    def calculate_after_tasks_finished(self, graph: JobGraph, running: dict[str, Sequence[bool]]) -> CheckpointPlan:
        """flip147 facts §1.5: wait for every running task; the trigger roots come from :meth:`trigger_roots`."""
        cardinality = {v: sum(bits) for v, bits in running.items()}
        wait_for: dict[str, Sequence[int]] = {}
        finished: dict[str, Sequence[int]] = {}
        fully_finished: list[str] = []
        for vertex_id in graph.topological_order:
            bits = running[vertex_id]
            parallelism = len(bits)
            if cardinality[vertex_id] == 0:
                fully_finished.append(vertex_id)
                finished[vertex_id] = range(parallelism)
            elif cardinality[vertex_id] == parallelism:
                wait_for[vertex_id] = range(parallelism)
            else:
                wait_for[vertex_id] = [i for i in range(parallelism) if bits[i]]
                finished[vertex_id] = [i for i in range(parallelism) if not bits[i]]
        trigger = self.trigger_roots(graph, running, cardinality, wait_for)
        return CheckpointPlan(
            TaskSet(trigger), TaskSet(wait_for), TaskSet(wait_for), TaskSet(finished), frozenset(fully_finished)
        )

    def trigger_roots(
        self,
        graph: JobGraph,
        running: dict[str, Sequence[bool]],
        cardinality: dict[str, int],
        running_indices: dict[str, Sequence[int]],
    ) -> dict[str, Sequence[int]]:
        """Per vertex in topological order: the fast check, then the per-task POINTWISE check."""
        trigger: dict[str, Sequence[int]] = {}
        for vertex_id in graph.topological_order:
            if cardinality[vertex_id] == 0:
                continue
            if self.some_tasks_may_be_triggered(graph, vertex_id, running, cardinality):
                trigger[vertex_id] = self.triggered_subtasks(graph, vertex_id, running, running_indices[vertex_id])
        return trigger

    def some_tasks_may_be_triggered(
        self, graph: JobGraph, vertex_id: str, running: dict[str, Sequence[bool]], cardinality: dict[str, int]
    ) -> bool:
        """``someTasksMustBeTriggered``: false as soon as one input vertex is "active"."""
        for edge in graph.inputs(vertex_id):
            upstream = edge.source
            if edge.pattern == ALL_TO_ALL:
                active = cardinality[upstream] > 0
            else:
                # Flink compares with BitSet.size(), the capacity, not the parallelism (flip147 facts §1.5).
                active = cardinality[upstream] == bitset_size(len(running[upstream]))
            if active:
                return False
        return True

    def triggered_subtasks(
        self, graph: JobGraph, vertex_id: str, running: dict[str, Sequence[bool]], running_indices: Sequence[int]
    ) -> list[int]:
        """Running subtasks without a running POINTWISE predecessor (``hasRunningPrecedentTasks``)."""
        pointwise_inputs = [
            (running[e.source], self.wiring(graph.parallelism(e.source), graph.parallelism(vertex_id)))
            for e in graph.inputs(vertex_id)
            if e.pattern != ALL_TO_ALL
        ]
        if not pointwise_inputs:
            return list(running_indices)
        return [
            i
            for i in running_indices
            if not any(any(upstream_bits[j] for j in wiring[i]) for upstream_bits, wiring in pointwise_inputs)
        ]

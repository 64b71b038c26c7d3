"""Properties of a checkpoint plan (FLIP-147 "Triggering Checkpoints After Tasks Finished").

Each property is a plain function ``(graph, result) -> list[Violation]``; ``check_plan`` runs
them all. They judge a result produced by any algorithm, so the same functions serve pytest,
hypothesis, z3 counterexample checks and sweeps. The wiring property judges a POINTWISE wiring
function instead.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.reference_impl.plan import plan_algorithm
>>> g = JobGraph.build([("a", 1), ("b", 1), ("c", 1)], [("a", "c", ALL_TO_ALL), ("b", "c", ALL_TO_ALL)],
...                    states={"a": ["FINISHED"]})
>>> check_plan(g, plan_algorithm("flink")(g))
[]
>>> [v.property for v in check_plan(g, plan_algorithm("wiki-b")(g))]
['no_triggered_task_has_running_predecessor', 'equals_spec']
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Sequence

from flipcheck.model.execution_graph import predecessors
from flipcheck.model.jobgraph import FINISHED, JobGraph
from flipcheck.model.plan import CheckpointPlan, Declined, PlanResult, TaskSet, checkpoint_plan
from flipcheck.model.pointwise import consumed_partitions, consumers_of_partition

from .violation import Property, Violation

__all__ = [
    "trigger_subset_of_running",
    "no_triggered_task_has_running_predecessor",
    "every_running_task_reached",
    "wait_commit_finished_sets",
    "decline_rules",
    "equals_spec",
    "pointwise_wiring",
    "PLAN_PROPERTIES",
    "WIRING_PROPERTY",
    "check_plan",
]

_MAX_WITNESSES = 3


def _examples(tasks: Sequence) -> str:
    shown = ", ".join(map(str, tasks[:_MAX_WITNESSES]))
    return shown + (f" and {len(tasks) - _MAX_WITNESSES} more" if len(tasks) > _MAX_WITNESSES else "")


def _outcome(result: PlanResult) -> str:
    """A short description: plans of large jobs list millions of tasks."""
    if isinstance(result, Declined):
        return f"declined {result.reason}"
    return f"a plan triggering {len(result.tasks_to_trigger)} and waiting for {len(result.tasks_to_wait_for)} tasks"


def _running(graph: JobGraph) -> set:
    return {t for t in graph.tasks() if graph.state(t) != FINISHED}


def trigger_subset_of_running(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """I1: only running tasks are triggered (a trigger RPC to a finished task is lost)."""
    if not isinstance(result, CheckpointPlan):
        return []
    bad = [t for t in result.tasks_to_trigger if graph.state(t) == FINISHED]
    if not bad:
        return []
    return [Violation("trigger_subset_of_running", f"finished tasks are triggered: {_examples(bad)}", bad)]


def no_triggered_task_has_running_predecessor(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """I2: a triggered task has no running predecessor (it would also get barriers: not a root)."""
    if not isinstance(result, CheckpointPlan):
        return []
    running = _running(graph)
    bad = []
    for task in result.tasks_to_trigger:
        upstream = next((p for p in predecessors(graph, task) if p in running), None)
        if upstream is not None:
            bad.append((task, upstream))
    if not bad:
        return []
    described = [f"{t} (reads running {p})" for t, p in bad]
    return [Violation("no_triggered_task_has_running_predecessor", f"triggered but not roots: {_examples(described)}", bad)]


def every_running_task_reached(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """I3: every running task is reachable from a triggered task through running tasks, so every
    task waited for receives a barrier (or, from finished inputs, EndOfPartition)."""
    if not isinstance(result, CheckpointPlan):
        return []
    running = _running(graph)
    readers: dict = {}
    for task in running:
        for upstream in predecessors(graph, task):
            if upstream in running:
                readers.setdefault(upstream, []).append(task)
    reached = {t for t in result.tasks_to_trigger if t in running}
    queue = deque(reached)
    while queue:
        for reader in readers.get(queue.popleft(), ()):
            if reader not in reached:
                reached.add(reader)
                queue.append(reader)
    missed = sorted(running - reached)
    if not missed:
        return []
    return [Violation("every_running_task_reached", f"running tasks no barrier reaches: {_examples(missed)}", missed)]


def wait_commit_finished_sets(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """I4: wait for = commit to = the non-finished tasks; finished = the FINISHED tasks; fully
    finished vertices = vertices whose tasks are all FINISHED."""
    if not isinstance(result, CheckpointPlan):
        return []
    running = TaskSet.of(_running(graph))
    finished = TaskSet.of(t for t in graph.tasks() if graph.state(t) == FINISHED)
    fully = frozenset(v.id for v in graph.vertices if all(s == FINISHED for s in graph.states[v.id]))
    problems = []
    for name, actual, expected in (
        ("tasks_to_wait_for", result.tasks_to_wait_for, running),
        ("tasks_to_commit_to", result.tasks_to_commit_to, running),
        ("finished_tasks", result.finished_tasks, finished),
    ):
        if actual != expected:
            extra, missing = sorted(set(actual) - set(expected)), sorted(set(expected) - set(actual))
            problems.append(f"{name} has extra {_examples(extra) or 'none'}, misses {_examples(missing) or 'none'}")
    if result.fully_finished_vertices != fully:
        problems.append(f"fully_finished_vertices is {sorted(result.fully_finished_vertices)}, expected {sorted(fully)}")
    return [Violation("wait_commit_finished_sets", p) for p in problems]


def decline_rules(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """I5: the checkpoint is declined exactly when the rules say so, with their reason."""
    expected = spec if spec is not None else checkpoint_plan(graph)
    got = result.reason if isinstance(result, Declined) else None
    want = expected.reason if isinstance(expected, Declined) else None
    if got == want:
        return []
    return [Violation("decline_rules", f"got {_outcome(result)}, the rules give {_outcome(expected)}", (got, want))]


def equals_spec(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """The algorithm's result equals the specification's, field by field (``spec``, when given,
    is that result, computed by the caller once for all properties)."""
    expected = spec if spec is not None else checkpoint_plan(graph)
    if result == expected:
        return []
    if isinstance(result, Declined) or isinstance(expected, Declined):
        return [Violation("equals_spec", f"result is {_outcome(result)}, the spec gives {_outcome(expected)}")]
    fields = ("tasks_to_trigger", "tasks_to_wait_for", "tasks_to_commit_to", "finished_tasks", "fully_finished_vertices")
    differing = []
    for name in fields:
        actual, wanted = set(getattr(result, name)), set(getattr(expected, name))
        if actual != wanted:
            differing.append(
                f"{name}: extra {_examples(sorted(actual - wanted)) or 'none'}, missing {_examples(sorted(wanted - actual)) or 'none'}"
            )
    return [Violation("equals_spec", "; ".join(differing))]


def _rule_reads(upstream: int, downstream: int) -> list[list[int]]:
    """The model's rule for every downstream subtask at once (linear, so large U, D stay cheap)."""
    if upstream >= downstream:
        return [list(consumed_partitions(upstream, downstream, i)) for i in range(downstream)]
    reads: list[list[int]] = [[] for _ in range(downstream)]
    for partition in range(upstream):
        for subtask in consumers_of_partition(upstream, downstream, partition):
            reads[subtask].append(partition)
    return reads


def pointwise_wiring(upstream: int, downstream: int, wiring: Callable[[int, int], Sequence[range]]) -> list[Violation]:
    """A POINTWISE wiring function is sane for ``upstream -> downstream``: every downstream subtask
    reads at least one upstream, its partitions are contiguous and in range, every upstream
    partition is read, and it equals the integer rule of flip147 facts §1.7."""
    name = "pointwise_wiring"
    where = f"{upstream}->{downstream}"
    reads = wiring(upstream, downstream)
    problems = []
    if len(reads) != downstream:
        return [Violation(name, f"{where}: {len(reads)} downstream entries")]
    expected = _rule_reads(upstream, downstream)
    read_by_anyone = set()
    for subtask, partitions in enumerate(reads):
        partitions = list(partitions)
        if not partitions:
            problems.append(f"{where}: subtask {subtask} reads nothing")
        elif partitions != list(range(partitions[0], partitions[-1] + 1)):
            problems.append(f"{where}: subtask {subtask} reads non-contiguous {partitions}")
        elif partitions[0] < 0 or partitions[-1] >= upstream:
            problems.append(f"{where}: subtask {subtask} reads out-of-range {partitions}")
        elif partitions != expected[subtask]:
            problems.append(f"{where}: subtask {subtask} reads {partitions}, the rule gives {expected[subtask]}")
        read_by_anyone.update(partitions)
    unread = sorted(set(range(upstream)) - read_by_anyone)
    if unread:
        problems.append(f"{where}: partitions nobody reads: {_examples(unread)}")
    return [Violation(name, p, (upstream, downstream)) for p in problems]


_SEED = "seed FLIP-147, Triggering Checkpoints After Tasks Finished"
PLAN_PROPERTIES = (
    Property(
        "trigger_subset_of_running", trigger_subset_of_running,
        "Only running tasks are triggered.",
        f"{_SEED}: 'the tasks who are still running but have no running precedent tasks'",
    ),
    Property(
        "no_triggered_task_has_running_predecessor", no_triggered_task_has_running_predecessor,
        "No triggered task has a running predecessor: it would also be reached by barriers.",
        f"{_SEED}: 'have no running precedent tasks'; flip147 facts §1.5",
    ),
    Property(
        "every_running_task_reached", every_running_task_reached,
        "Every running task is reachable from a triggered task through running tasks.",
        f"{_SEED}, Figure 1: 'if we only trigger B ... Task C would have no idea about the new checkpoint'",
    ),
    Property(
        "wait_commit_finished_sets", wait_commit_finished_sets,
        "Wait for and commit to every non-finished task; finished tasks and fully finished vertices recorded.",
        "seed FLIP-147, Checkpoint Format with Finished Tasks; flip147 facts §1.5, §3.2",
    ),
    Property(
        "decline_rules", decline_rules,
        "Declined exactly when a task is not RUNNING/FINISHED, the feature is off with finished tasks, or all finished.",
        "flip147 facts §1.3 (checkTasksStarted, FLINK-22003/22379/40482), §1.6",
    ),
    Property(
        "equals_spec", equals_spec,
        "The algorithm's result equals the specification's.",
        "model/plan.py rules R1-R7",
    ),
)


WIRING_PROPERTY = Property(
    "pointwise_wiring", pointwise_wiring,
    "Every downstream subtask reads >= 1 upstream, ranges contiguous, every upstream read, integer rule.",
    "flip147 facts §1.7; FLINK-22863",
)


def check_plan(graph: JobGraph, result: PlanResult, spec: PlanResult | None = None) -> list[Violation]:
    """Every plan property, in order; empty when the result is right. ``spec`` is the
    specification's result when the caller already has it (it is computed otherwise)."""
    if spec is None:
        spec = checkpoint_plan(graph)
    violations: list[Violation] = []
    for prop in PLAN_PROPERTIES:
        violations.extend(prop.check(graph, result, spec))
    return violations

"""Plan results as the CLI prints them: one JSON line, or a readable table.

The JSON line is assembled by hand because a plan of a large job lists millions of tasks and
``json.dumps`` of a million two-element lists is several times slower than string joins.

>>> from flipcheck.model.jobgraph import JobGraph
>>> from flipcheck.model.plan import checkpoint_plan
>>> g = JobGraph.build([("src", 2)], states={"src": ["FINISHED", "RUNNING"]})
>>> plan_json_line(g, checkpoint_plan(g))
'{"status": "ok", "tasks_to_trigger": [["src", 1]], "tasks_to_wait_for": [["src", 1]], "tasks_to_commit_to": [["src", 1]], "finished_tasks": [["src", 0]], "fully_finished_vertices": []}'
>>> compress_indices([0, 1, 2, 5, 7, 8])
'0-2,5,7-8'
"""

from __future__ import annotations

import json
from typing import Sequence

from flipcheck.model.jobgraph import JobGraph
from flipcheck.model.plan import CheckpointPlan, Declined, PlanResult, TaskSet

__all__ = ["plan_json_line", "plan_to_dict", "plan_table", "compress_indices", "PLAN_FIELDS"]

PLAN_FIELDS = ("tasks_to_trigger", "tasks_to_wait_for", "tasks_to_commit_to", "finished_tasks")


def _task_list(graph: JobGraph, tasks: TaskSet) -> str:
    parts = []
    for vertex_id in graph.topological_order:
        indices = tasks.indices(vertex_id)
        if len(indices):
            item = "[" + json.dumps(vertex_id) + ", {}]"
            parts.append(", ".join(map(item.format, indices)))
    return "[" + ", ".join(parts) + "]"


def plan_json_line(graph: JobGraph, result: PlanResult) -> str:
    if isinstance(result, Declined):
        return json.dumps({"status": "declined", "reason": result.reason})
    fields = [f'"{name}": {_task_list(graph, getattr(result, name))}' for name in PLAN_FIELDS]
    fully = [v for v in graph.topological_order if v in result.fully_finished_vertices]
    return '{"status": "ok", ' + ", ".join(fields) + f', "fully_finished_vertices": {json.dumps(fully)}' + "}"


def plan_to_dict(graph: JobGraph, result: PlanResult) -> dict:
    return json.loads(plan_json_line(graph, result))


def compress_indices(indices: Sequence[int]) -> str:
    """Ascending indices as ``a-b`` runs: readable for vertices with thousands of subtasks."""
    runs: list[str] = []
    start = previous = None
    for index in indices:
        if previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = index
    if start is not None:
        runs.append(str(start) if start == previous else f"{start}-{previous}")
    return ",".join(runs)


def plan_table(graph: JobGraph, result: PlanResult, *, title: str = "") -> str:
    """A per-vertex table: which subtasks are triggered, waited for, finished."""
    lines = [title] if title else []
    if isinstance(result, Declined):
        lines.append(f"checkpoint declined: {result.reason}")
        return "\n".join(lines)
    assert isinstance(result, CheckpointPlan)
    rows = [("vertex", "parallelism", "trigger", "wait for / commit to", "finished")]
    for vertex_id in graph.topological_order:
        name = vertex_id + (" (fully finished)" if vertex_id in result.fully_finished_vertices else "")
        rows.append(
            (
                name,
                str(graph.parallelism(vertex_id)),
                compress_indices(result.tasks_to_trigger.indices(vertex_id)) or "-",
                compress_indices(result.tasks_to_wait_for.indices(vertex_id)) or "-",
                compress_indices(result.finished_tasks.indices(vertex_id)) or "-",
            )
        )
    widths = [min(40, max(len(r[c]) for r in rows)) for c in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    lines.append(
        f"{len(result.tasks_to_trigger)} to trigger, {len(result.tasks_to_wait_for)} to wait for, "
        f"{len(result.finished_tasks)} finished"
    )
    return "\n".join(lines)

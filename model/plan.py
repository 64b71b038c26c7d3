"""Specification of the checkpoint plan with finished tasks (FLIP-147, "Triggering Checkpoints
After Tasks Finished"; flip147 facts §1).

Given the coordinator's view of the task states, a checkpoint either is declined with a reason,
or gets a plan: which tasks to trigger (the new "roots"), which tasks to wait for, which to
commit to, which tasks are finished and which vertices are fully finished.

The rules, each from the seed or from how Flink shipped it:

* R1 finished: a task is finished iff its state is FINISHED (flip147 facts §1.5; CANCELED and FAILED are
  not finished since FLINK-40482).
* R2 feature off: a FINISHED task while ``checkpoints_after_tasks_finished`` is false declines
  with NOT_ALL_REQUIRED_TASKS_RUNNING (flip147 facts §1.3 step 1).
* R3 not started: any non-finished task that is not exactly RUNNING declines with
  NOT_ALL_REQUIRED_TASKS_RUNNING (flip147 facts §1.3 step 4, FLINK-22003, FLINK-22379).
* R4 nothing to wait for: every task FINISHED declines with NO_TASKS_TO_WAIT_FOR (flip147 facts §1.6: a
  PendingCheckpoint needs at least one task to wait for).
* R5 trigger roots: trigger the running tasks none of whose predecessors is running (seed: "we
  iterate all the tasks to find the tasks who are still running but have no running precedent
  tasks").
* R6 wait and commit: wait for and commit to every non-finished task; finished tasks are never
  waited for (flip147 facts §3.2).
* R7 format: a vertex all of whose tasks are finished is fully finished (seed "Checkpoint Format
  with Finished Tasks", item 1).

This is the slow, obvious version: quadratic in the number of tasks.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("a", 1), ("b", 1), ("c", 1)], [("a", "c", ALL_TO_ALL), ("b", "c", ALL_TO_ALL)],
...                    states={"a": ["FINISHED"]})
>>> sorted(checkpoint_plan(g).tasks_to_trigger)
[('b', 0)]
>>> checkpoint_plan(g.with_states({"b": ["FINISHED"], "c": ["FINISHED"]}))
Declined(reason='NO_TASKS_TO_WAIT_FOR')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence, Union

from .execution_graph import predecessors
from .jobgraph import FINISHED, RUNNING, JobGraph, TaskId

__all__ = [
    "NOT_ALL_REQUIRED_TASKS_RUNNING",
    "NO_TASKS_TO_WAIT_FOR",
    "DECLINE_REASONS",
    "TaskSet",
    "CheckpointPlan",
    "Declined",
    "PlanResult",
    "checkpoint_plan",
]

NOT_ALL_REQUIRED_TASKS_RUNNING = "NOT_ALL_REQUIRED_TASKS_RUNNING"
NO_TASKS_TO_WAIT_FOR = "NO_TASKS_TO_WAIT_FOR"
DECLINE_REASONS = (NOT_ALL_REQUIRED_TASKS_RUNNING, NO_TASKS_TO_WAIT_FOR)


class TaskSet:
    """An immutable set of tasks stored per vertex as ascending subtask indices.

    Large jobs have millions of tasks; keeping indices per vertex keeps a plan compact and makes
    equality cheap. Iteration yields ``(vertex_id, index)`` pairs.

    >>> s = TaskSet.of([("b", 1), ("a", 0), ("b", 0)])
    >>> sorted(s), len(s), ("b", 1) in s
    ([('a', 0), ('b', 0), ('b', 1)], 3, True)
    >>> s == TaskSet({"b": (0, 1), "a": (0,)})
    True
    """

    __slots__ = ("by_vertex",)

    def __init__(self, by_vertex: Mapping[str, Sequence[int]] | None = None):
        # Empty vertices are dropped so that equality does not depend on them.
        self.by_vertex: dict[str, Sequence[int]] = {v: ix for v, ix in (by_vertex or {}).items() if len(ix)}

    @classmethod
    def of(cls, tasks: Iterable[TaskId]) -> "TaskSet":
        grouped: dict[str, list[int]] = {}
        for vertex_id, index in tasks:
            grouped.setdefault(vertex_id, []).append(index)
        return cls({v: tuple(sorted(set(ix))) for v, ix in grouped.items()})

    def __iter__(self) -> Iterator[TaskId]:
        for vertex_id, indices in self.by_vertex.items():
            for index in indices:
                yield (vertex_id, index)

    def __len__(self) -> int:
        return sum(len(ix) for ix in self.by_vertex.values())

    def __contains__(self, task: object) -> bool:
        vertex_id, index = task  # type: ignore[misc]
        indices = self.by_vertex.get(vertex_id, ())
        return index in indices

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskSet):
            return NotImplemented
        mine, theirs = self.by_vertex, other.by_vertex
        return mine.keys() == theirs.keys() and all(
            len(mine[v]) == len(theirs[v]) and tuple(mine[v]) == tuple(theirs[v]) for v in mine
        )

    def __hash__(self) -> int:
        return hash(frozenset((v, tuple(ix)) for v, ix in self.by_vertex.items()))

    def __repr__(self) -> str:
        return f"TaskSet({sorted(self)!r})"

    def indices(self, vertex_id: str) -> Sequence[int]:
        return self.by_vertex.get(vertex_id, ())


@dataclass(frozen=True)
class CheckpointPlan:
    """The plan of one checkpoint (flip147 facts §1.3), ``flipcheck.CheckpointPlan``: the tasks
    the coordinator triggers by RPC, waits for (their acknowledgements complete it) and commits
    to (notifies), the tasks and vertices it holds as finished. What ``Protocol.plan(graph)``
    returns, or :class:`Declined`; a plan of your own is one with other task sets
    (``dataclasses.replace``).

    >>> import flipcheck
    >>> g = flipcheck.load_job_graph("examples/graphs/figure1.json")   # A finished; A, B -> C
    >>> plan = flipcheck.Protocol().plan(g)
    >>> sorted(plan.tasks_to_trigger), sorted(plan.tasks_to_wait_for), sorted(plan.finished_tasks)
    ([('B', 0)], [('B', 0), ('C', 0)], [('A', 0)])
    >>> plan.fully_finished_vertices, plan.status
    (frozenset({'A'}), 'ok')
    """

    tasks_to_trigger: TaskSet
    tasks_to_wait_for: TaskSet
    tasks_to_commit_to: TaskSet
    finished_tasks: TaskSet
    fully_finished_vertices: frozenset[str]

    status = "ok"


@dataclass(frozen=True)
class Declined:
    """No checkpoint this time, and why: Flink's pre-flight failure, which takes no checkpoint id
    (flip147 facts §1.3), ``flipcheck.Declined``. A plan may return it instead of a
    :class:`CheckpointPlan`.

    >>> import flipcheck
    >>> g = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")],
    ...                         states={"src": ["FINISHED"]}, checkpoints_after_tasks_finished=False)
    >>> flipcheck.Protocol().plan(g)        # before FLIP-147: no checkpoint once a task finished
    Declined(reason='NOT_ALL_REQUIRED_TASKS_RUNNING')
    """

    reason: str

    status = "declined"


PlanResult = Union[CheckpointPlan, Declined]


def checkpoint_plan(graph: JobGraph) -> PlanResult:
    """The plan the coordinator must compute from its view ``graph`` (rules R1–R7 above)."""
    all_tasks = list(graph.tasks())
    finished = {t for t in all_tasks if graph.state(t) == FINISHED}  # R1
    running = [t for t in all_tasks if t not in finished]

    if finished and not graph.checkpoints_after_tasks_finished:  # R2
        return Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
    if any(graph.state(t) != RUNNING for t in running):  # R3
        return Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
    if not running:  # R4
        return Declined(NO_TASKS_TO_WAIT_FOR)

    running_set = set(running)
    trigger = [t for t in running if not any(p in running_set for p in predecessors(graph, t))]  # R5
    fully_finished = frozenset(
        v.id for v in graph.vertices if all((v.id, i) in finished for i in range(v.parallelism))
    )  # R7
    return CheckpointPlan(
        tasks_to_trigger=TaskSet.of(trigger),
        tasks_to_wait_for=TaskSet.of(running),  # R6
        tasks_to_commit_to=TaskSet.of(running),  # R6
        finished_tasks=TaskSet.of(finished),
        fully_finished_vertices=fully_finished,
    )

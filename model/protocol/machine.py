"""The job as a state machine: the initial state, the table of actions (Next) and the end.

:func:`successors` is the TLA+ ``Next``: the disjunction of the actions listed in
:data:`SOURCE_ACTIONS` and :data:`INPUT_TASK_ACTIONS` (taken for every source and every task
with inputs, task by task) and :data:`COORDINATOR_ACTIONS`. An
action returns ``(label, step)`` for each of its steps enabled in a state; the label names the
step, the step's notes say what it caused. The order of the tables is the order in which the
steps are listed, which traces and seeded random walks depend on.

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> [label for label, _, _ in successors(job, initial_state(job))]
[('emit', 0, 0), ('trigger', 1)]
>>> is_end(job, run(job, [("emit", 0, 0)]))
False
"""

from __future__ import annotations

from typing import Iterator, Sequence

from .coordinator import receive_acknowledgement, receive_finished_reports, stop_with_savepoint, trigger
from .failover import failover
from .state import FINISHED, Coordinator, JobState
from .structure import Job
from .tasks import (
    emit, end_of_data, finish, fresh_task, poll_released, receive, receive_notification, receive_trigger_rpc,
)

__all__ = ["SOURCE_ACTIONS", "INPUT_TASK_ACTIONS", "COORDINATOR_ACTIONS", "initial_state", "is_end", "successors", "run"]

# ``action(job, state, t)`` for every source ``t``.
SOURCE_ACTIONS = (
    emit,                     # ("emit", t, record)                J1/J2
    end_of_data,              # ("end-of-data", t)                 J1
    finish,                   # ("finish", t)                      J7
    receive_acknowledgement,  # ("ack", t, id)                     J5/C5 (the coordinator receives it)
    receive_notification,     # ("notify", t, id)                  J8
    receive_trigger_rpc,      # ("rpc", t, id)                     C4 (J5/J9)
)

# ``action(job, state, t)`` for every task ``t`` with inputs.
INPUT_TASK_ACTIONS = (
    receive,                  # ("receive", t, input, message)     J3/J4 (J2, J5, J6 through the handler)
    poll_released,            # ("poll-released", t, input)        J3 (a variant only)
    finish,                   # ("finish", t)                      J7
    receive_acknowledgement,  # ("ack", t, id)                     J5/C5 (the coordinator receives it)
    receive_notification,     # ("notify", t, id)                  J8/S3/J9
    receive_trigger_rpc,      # ("rpc", t, id)                     C4 (J5/J9)
)

# ``action(job, state)``, after every task's actions.
COORDINATOR_ACTIONS = (
    receive_finished_reports,  # ("report-finished", t)            C1
    trigger,                   # ("trigger", id)                   C2/C3/C6
    stop_with_savepoint,       # ("stop-with-savepoint", id)       C7
    failover,                  # ("failover",)                     F1
)


def initial_state(job: Job) -> JobState:
    """Every task just started (J2: sinks with an open transaction), every channel empty, nothing
    on its way, nothing committed; the coordinator's view is empty."""
    tasks, channels = len(job.tasks), len(job.channels)
    return JobState(tasks=tuple(fresh_task(job, t) for t in range(tasks)), queues=((),) * channels,
                    received=(0,) * channels, rpcs=((),) * tasks, notifications=(0,) * tasks,
                    coordinator=Coordinator(), committed=((),) * tasks)


def is_end(job: Job, state: JobState) -> bool:
    """The job ended: every task FINISHED."""
    return all(ts.phase == FINISHED for ts in state.tasks)


def successors(job: Job, s: JobState) -> Iterator[tuple[tuple, JobState, tuple]]:
    """Every step the job can take from ``s``: ``(label, next state, notes)``. The label names
    the step; notes say what it caused (snapshots, completions, aborts, commits, ...)."""
    if is_end(job, s):
        return
    for t, info in enumerate(job.tasks):
        for action in SOURCE_ACTIONS if info.is_source else INPUT_TASK_ACTIONS:
            for label, step in action(job, s, t):
                yield label, step.freeze(), tuple(step.notes)
    for action in COORDINATOR_ACTIONS:
        for label, step in action(job, s):
            yield label, step.freeze(), tuple(step.notes)


def run(job: Job, labels: Sequence[tuple], state: JobState | None = None) -> JobState:
    """The state after taking the steps named by ``labels`` (ValueError if one is not enabled)."""
    state = initial_state(job) if state is None else state
    for label in labels:
        for candidate, nxt, _ in successors(job, state):
            if candidate == label:
                state = nxt
                break
        else:
            raise ValueError(f"step {label!r} is not enabled")
    return state

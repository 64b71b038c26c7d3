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

:func:`rules_of` names the rules (of the package docstring) a step took, from its label and
notes: the one mapping from steps to rules, for per-rule coverage.

>>> s = initial_state(job)
>>> [rules_of(job, s, label, notes, nxt) for label, nxt, notes in successors(job, s)]
[('J1', 'J2'), ('C2', 'C3')]
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from .coordinator import receive_acknowledgement, receive_finished_reports, stop_with_savepoint, trigger
from .failover import failed_snapshot_declines, failover, shared_channel_state_declines, task_failure
from .state import BARRIER, CANCEL, DATA, EOD, FAILOVER, FINISHED, Coordinator, JobState
from .structure import Job
from .tasks import (
    emit, end_of_data, finish, fresh_task, poll_released, receive, receive_notification, receive_trigger_rpc,
)

__all__ = ["RULES", "NOT_EXPLORED", "rules_of", "SOURCE_ACTIONS", "INPUT_TASK_ACTIONS", "COORDINATOR_ACTIONS", "initial_state", "is_end", "successors", "run"]

# ``action(job, state, t)`` for every source ``t``.
SOURCE_ACTIONS: tuple[Callable[..., Any], ...] = (
    emit,                     # ("emit", t, record)                J1/J2
    end_of_data,              # ("end-of-data", t)                 J1
    finish,                   # ("finish", t)                      J7
    receive_acknowledgement,  # ("ack", t, id)                     J5/C5 (the coordinator receives it)
    receive_notification,     # ("notify", t, id)                  J8
    receive_trigger_rpc,      # ("rpc", t, id)                     C4 (J5/J9)
)

# ``action(job, state, t)`` for every task ``t`` with inputs.
INPUT_TASK_ACTIONS: tuple[Callable[..., Any], ...] = (
    receive,                  # ("receive", t, input, message)     J3/J4 (J2, J5, J6 through the handler)
    poll_released,            # ("poll-released", t, input)        J3 (a variant only)
    finish,                   # ("finish", t)                      J7
    receive_acknowledgement,  # ("ack", t, id)                     J5/C5 (the coordinator receives it)
    receive_notification,     # ("notify", t, id)                  J8/S3/J9
    receive_trigger_rpc,      # ("rpc", t, id)                     C4 (J5/J9)
)

# ``action(job, state)``, after every task's actions.
COORDINATOR_ACTIONS: tuple[Callable[..., Any], ...] = (
    receive_finished_reports,  # ("report-finished", t)            C1
    trigger,                   # ("trigger", id)                   C2/C3/C6
    stop_with_savepoint,       # ("stop-with-savepoint", id)       C7
    task_failure,              # ("fail", t)                       F0
    failed_snapshot_declines,  # ("fail-decline", t, id)           F0 (C5: the decline aborts it)
    shared_channel_state_declines,  # ("shared-decline", t, id)    F0 (C5: the decline aborts it)
    failover,                  # ("failover",)                     F1
)


# ----------------------------------------------------------------------------------------------
# Which rules a step took (per-rule coverage, as TLC reports per action). The rule texts are in
# the package docstring; a label alone does not say it (a polled barrier may snapshot, J5, or be
# a final checkpoint, J6), so the notes the rules leave decide. This is the only such mapping.

#: Every rule of the package docstring, in its order (J5u, C3p and F1b are sub-rules).
RULES = ("J1", "J2", "J3", "J4", "J5", "J5u", "J6", "J7", "J8", "J9", "S1", "S2", "S3", "S4",
         "C1", "C2", "C2f", "C3", "C3p", "C4", "C5", "C6", "C7", "C8", "F0", "F1", "F1b")
#: Rules no exploration can take, and why: each needs Flink's own timer or the job's end, which
#: only trace validation reads (``Job(periodic_timer=True)`` never ends an exploration: ids grow).
NOT_EXPLORED = {
    "C3p": "Flink's own periodic timer (Job(periodic_timer=True)): trace validation only",
    "F1b": "a failover using up an id needs Flink's own timer (C3p): trace validation only",
    "C8": "past the end of the job (suspend_at_job_end): trace validation only",
    "C2f": "a coordinator's failing snapshot (Job(coordinator_failures=True)): trace validation only",
}


def _snapshot_rules(job: Job, s: JobState, nxt: JobState, note: tuple) -> tuple:
    """J5 (and J5u, S2, J6, J9) for a ``("snapshot", t, k)`` note."""
    _, t, k = note
    found: tuple[str, ...] = ("J5",)
    if job.mode == "unaligned" and job.tasks[t].outputs:
        found += ("J5u",)                       # the barrier went out as a priority event
    if job.tasks[t].sink_v2:
        found += ("S2",)                        # prepareSnapshotPreBarrier
    if nxt.tasks[t].final_min == k != s.tasks[t].final_min:
        found += ("J6",)                        # the task's final checkpoint
    if k == s.coordinator.stop_id:
        found += ("J9",)                        # the synchronous savepoint
    return found


def rules_of(job: Job, s: JobState, label: tuple, notes: tuple, nxt: JobState | None = None) -> tuple:
    """The rules the step ``label`` from ``s`` (to ``nxt``, with ``notes``) took, in the order
    of :data:`RULES` within each part: what the action is (the tables above cite it), then
    what its notes say it caused."""
    kind = label[0]
    found: tuple = _LABEL_RULES.get(kind, ())
    if kind == "emit":
        found = ("J1", "J2")
    elif kind == "receive":
        message = label[3][0]
        found = ("J3", "J2") if message == DATA else ("J3", "J4") if message == EOD else ("J3",)
    elif kind in ("notify",):
        found = ("S3",) if job.tasks[label[1]].sink_v2 else ("J8",)
    elif kind == "trigger":
        found = ("C2", "C3p") if job.periodic_timer else ("C2", "C3")
    elif kind == "trigger-fails":
        found = ("C2", "C2f", "C3p") if job.periodic_timer else ("C2", "C2f", "C3")
    elif kind == "failover":
        restored = any(n[0] == "failover" and n[1] for n in notes)
        found = ("F1", "S4") if restored and any(t.sink_v2 for t in job.tasks) else ("F1",)
    for note in notes:
        what = note[0]
        if what == "snapshot":
            found += _snapshot_rules(job, s, nxt if nxt is not None else s, note)
        elif what == "end-of-data" and job.tasks[note[1]].sink_v2:
            found += ("S1",)                    # endInput
        elif what in ("completed", "finalize-failed"):
            found += ("C5",)
        elif what == "aborted":
            if note[2] != FAILOVER:
                found += ("C5",)
            if kind == "receive" and label[3][0] in (BARRIER, CANCEL):
                found += ("J6",)                # the handler aborted it
        elif what in ("stopped", "savepoint-declined"):
            found += ("J9",)
        elif what == "end-of-data-trigger":
            found += ("C6",)
        elif what == "id-burned":
            found += ("F1b",)
    return tuple(dict.fromkeys(found))


# The rules of a step known from its label's kind alone (the action tables above).
_LABEL_RULES = {"end-of-data": ("J1",), "poll-released": ("J3",), "finish": ("J7",), "ack": ("C5",),
                "rpc": ("C4",), "report-finished": ("C1",), "stop-with-savepoint": ("C7", "C2"),
                "suspend": ("C8",), "fail": ("F0",), "fail-decline": ("F0",),
                "shared-decline": ("F0",)}


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

"""The second table of ``flipcheck conform``: (design, log event kind) -> model observation.

:mod:`flipcheck.flink.logs` reads a log into typed events, each with its task's identity; this
table says what each event kind shows to one design's model. Today one design is validated:
``protocol``, the whole-job checkpointing model of FLIP-147 (the observations of
:mod:`flipcheck.properties.protocol_trace_validation`). A design's rows are added with
:func:`add_observer`; :func:`observations_of` reads a log's events through one design's rows.

A row's function gets the event, its model task (None: not a task of the plan, or not known)
and the :class:`Follow` of the run so far (what the earlier lines said: a failover under way,
the current attempt), and returns the observations it shows (none, one or more). ``shows``: the
observation kind that becomes visible once the log has such a line at all (DEBUG lines);
``names_only``: the line names its task by name only, so two vertices of one name hide it.

Example
-------
>>> from flipcheck.flink.logs import LogEvent
>>> trigger = LogEvent("trigger", "jm.log", 7, "2026-11-25 00:29:14,840", 3, None, "CHECKPOINT")
>>> OBSERVERS["protocol", "trigger"].observe(trigger, None, Follow())
[('trigger', 3)]
>>> sorted(kind for design, kind in OBSERVERS if design == "protocol")[:4]
['ack', 'barrier', 'checkpoint-started', 'completed']

A design is added with its rows (``add_design("split-assignment", (...))``, then one
``add_observer("split-assignment", kind, observe)`` per event kind it reads); a log event kind
it needs that the reader does not know yet is a row of :func:`flipcheck.flink.logs.add_pattern`.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

__all__ = ["Observer", "OBSERVERS", "DESIGNS", "Follow", "add_design", "add_observer", "observations_of"]


class Follow:
    """What the lines so far said that later lines' meaning depends on."""

    def __init__(self, tasks=None):
        self.tasks = tasks        # the run's tasks: identity -> model task, a barrier's input
        self.failing = False      # a task failed; the tasks are not all running again yet
        self.known = True         # the JobManager has logged the failure
        self.generation = 0       # F1 restarts every task: lines of earlier attempts are what the old ones left
        self.failed: set = set()  # checkpoint failures seen (one may be logged twice)
        self.triggered: set = set()   # checkpoints triggered so far
        # Where the JobManager's failover line was read (its "failover-known"), and the
        # checkpoints triggered by then: an old attempt's step of one of those, logged later,
        # is read there (Observer.before_failover).
        self.known_at: int | None = None
        self.triggered_when_known: frozenset = frozenset()


class Observer(NamedTuple):
    design: str
    kind: str                   # a log event kind (flipcheck.flink.logs.KINDS)
    observe: Callable           # (event, model task or None, Follow) -> list of observations
    shows: str | None = None    # the observation kind a line of this kind makes visible
    names_only: bool = False    # the line names its task by name, not by attempt id
    # The JobManager's line about a message of an attempt the failover replaces: still read while
    # the failover runs (the coordinator processes those messages until the restore).
    until_restart: bool = False
    # A task's own line of a step of a checkpoint triggered before the failover (its RPC, barrier
    # or snapshot), logged by an attempt the failover replaces after the JobManager handled the
    # failure: the cancellation had not reached the task yet (flip147 facts §4.6). F1 is one step
    # in the model, so the step came before it: the line is read where the failover's line is.
    before_failover: bool = False


OBSERVERS: dict[tuple[str, str], Observer] = {}
DESIGNS: dict[str, tuple[str, ...]] = {}   # design -> kinds visible in every log it reads


def add_design(design: str, visible: tuple[str, ...]) -> None:
    """A design whose model a log can be read for; ``visible``: the observation kinds every log
    shows (INFO lines), beside those its DEBUG rows make visible (``shows``)."""
    DESIGNS[design] = tuple(visible)


def add_observer(design: str, kind: str, observe: Callable, shows: str | None = None, names_only: bool = False,
                 until_restart: bool = False, before_failover: bool = False) -> None:
    """Add (or replace) the row of ``design`` for log events of ``kind``."""
    OBSERVERS[design, kind] = Observer(design, kind, observe, shows, names_only, until_restart, before_failover)


def observations_of(reading, tasks, design: str = "protocol") -> tuple[list, list, set, set]:
    """``(observed, observations, visible, hidden)``: the observations the log events show
    through ``design``'s rows, each with its event; the observations alone; the kinds the log
    can show; and ``(kind, task)`` pairs it cannot (tasks whose name-only lines are ambiguous).
    ``tasks`` maps an event's identity to a model task (``task(identity)``)."""
    if design not in DESIGNS:
        raise ValueError(f"no observation rows for design {design!r} (known: {', '.join(DESIGNS)})")
    observed: list = []
    visible = set(DESIGNS[design])
    follow = Follow(tasks)
    for e in reading.events:
        row = OBSERVERS.get((design, e.kind))
        if row is None:
            continue
        if row.shows is not None and not row.names_only:
            visible.add(row.shows)
        number = e.identity.attempt if e.identity is not None else None
        replaced = number is not None and number < follow.generation
        moved = (replaced and row.before_failover and follow.failing and number == follow.generation - 1
                 and follow.known_at is not None and e.checkpoint in follow.triggered_when_known)
        if replaced and not moved and not (row.until_restart and follow.failing and number == follow.generation - 1):
            continue
        if row.names_only:
            visible.add(row.shows)
        t = tasks.task(e.identity)
        for o in row.observe(e, t, follow):
            if moved:
                observed.insert(follow.known_at, (o, e))
                follow.known_at += 1
                continue
            observed.append((o, e))
            if o == ("failover-known",):
                follow.known_at, follow.triggered_when_known = len(observed) - 1, frozenset(follow.triggered)
    # Tasks whose name-only lines cannot be told apart (two vertices of one name) show none.
    vertices: dict = {}
    for e in reading.events:
        if e.identity is not None and e.identity.name is not None and e.identity.vertex is not None:
            vertices.setdefault(e.identity.name, set()).add(e.identity.vertex)
    named = {tasks.task(e.identity) for e in reading.events
             if e.kind == "task-state" and e.identity is not None and len(vertices.get(e.identity.name, ())) == 1}
    hidden = {(row.shows, t) for row in OBSERVERS.values() if row.design == design and row.names_only
              for t in range(len(tasks.job.tasks)) if t not in named}
    return observed, [o for o, _ in observed], visible, hidden


# ------------------------------------------------------------------------------------------
# design "protocol": FLIP-147's whole-job model (flipcheck.properties.protocol_trace_validation)

add_design("protocol", ("trigger", "decline", "completed", "failed", "finished", "reported", "failover", "failover-known"))


def _of_task(make: Callable) -> Callable:
    """A row for a line about one task: nothing when the task is not known."""
    return lambda e, t, follow: [] if t is None else [make(e, t)]


def _failed(e, t, follow: Follow) -> list:
    # One failure may be reported twice (the trigger's future and the abort both reach
    # CheckpointFailureManager): the first line counts.
    o = ("failed", e.checkpoint)
    if o in follow.failed:
        return []
    follow.failed.add(o)
    return [o]


def _barrier(e, t, follow: Follow) -> list:
    return [] if t is None else [("barrier", t, follow.tasks.input(e.identity, e.detail), e.checkpoint)]


def _state_switch(e, t, follow: Follow) -> list:
    if t is None:
        return []
    if e.detail.endswith(" to FAILED"):
        shown = []
        if not follow.failing:
            # The first FAILED line (the TaskManager's, usually) is the failure: F0, or F1 at
            # once; F1 comes by the time the JobManager handles it (its FAILED line).
            shown, follow.failing, follow.known = [("failover",)], True, False
        if e.kind == "execution-state" and not follow.known:
            shown.append(("failover-known",))
            follow.known = True
            # Handled: the attempts are cancelled (F1). Until now the failed attempt still
            # declined triggers and the others still ran (F0; flip147 facts §4.10).
            follow.generation += 1
        return shown
    if e.detail.endswith(" to FINISHED"):
        return [("finished" if e.kind == "task-state" else "reported", t)]
    restarted = e.identity is not None and e.identity.attempt is not None and e.identity.attempt > follow.generation
    if e.kind == "execution-state" and e.detail.endswith(" to RUNNING") and (follow.known or restarted):
        # A restarted attempt runs: the failover is over. A RUNNING line of the failed attempt's
        # generation before the JobManager handled the failure is another task still starting
        # (a task failed at its first record, before the job's other tasks ran: divergence 46).
        follow.failing = False
    return []


# The reason a task's decline names when the snapshot its trigger RPC started threw
# (Task.triggerCheckpointBarrier, TASK_FAILURE; flip147 facts §4.12).
TASK_FAILURE_TEXT = "Task has failed."


def _decline(e, t, follow: Follow) -> list:
    if t is None:
        return []
    if e.detail == TASK_FAILURE_TEXT and not follow.failing:
        # The snapshot threw: the task has failed (F0) and its trigger's future declines at once,
        # on the task's thread, before the task switches to FAILED; the JobManager may log the
        # decline before the task's FAILED line. The first of the two shows the failure.
        follow.failing, follow.known = True, False
        return [("failover",), ("decline", t, e.checkpoint)]
    return [("decline", t, e.checkpoint)]


def _global_failure(e, t, follow: Follow) -> list:
    # The JobManager itself fails the job (an OperatorCoordinator's failJob): F1, known at once;
    # the tasks are cancelled, none switches to FAILED (recovery facts §3.9).
    if follow.failing and follow.known:
        return []
    shown = [] if follow.failing else [("failover",)]   # a task's failure came first (F0): handled now
    follow.failing, follow.known = True, True
    follow.generation += 1
    return shown + [("failover-known",)]


def _trigger(e, t, follow: Follow) -> list:
    follow.triggered.add(e.checkpoint)
    return [("trigger", e.checkpoint)]


# The JobManager's lines about an old attempt's message, read until the restore (Observer.until_restart).
_UNTIL_RESTART = frozenset({"ack"})
# An old attempt's own lines of a checkpoint's steps, read where the failover's line is (Observer.before_failover).
_BEFORE_FAILOVER = frozenset({"trigger-task", "barrier", "checkpoint-started"})

for _kind, _observe, _shows, _names_only in (
    ("global-failure", _global_failure, None, False),
    ("trigger", _trigger, None, False),
    ("completed", lambda e, t, follow: [("completed", e.checkpoint)], None, False),
    ("failed", _failed, None, False),
    ("trigger-task", _of_task(lambda e, t: ("trigger-task", t, e.checkpoint)), "trigger-task", False),
    # The RPC reached a TaskExecutor that no longer runs t: no checkpoint id is logged.
    ("trigger-unknown", _of_task(lambda e, t: ("trigger-task", t, None)), "trigger-task", False),
    ("barrier", _barrier, "barrier", False),
    ("ack", _of_task(lambda e, t: ("ack", t, e.checkpoint)), "ack", False),
    ("decline", _decline, None, False),
    ("notify-complete", _of_task(lambda e, t: ("notify", t, e.checkpoint)), "notify", False),
    ("task-state", _state_switch, None, False),
    ("execution-state", _state_switch, None, False),
    ("task-ended", _of_task(lambda e, t: ("ended", t)), "ended", True),
    ("operators-finished", _of_task(lambda e, t: ("closing", t)), "closing", True),
    ("checkpoint-started", _of_task(lambda e, t: ("snapshot", t, e.checkpoint)), "snapshot", True),
):
    add_observer("protocol", _kind, _observe, _shows, _names_only, until_restart=_kind in _UNTIL_RESTART,
                 before_failover=_kind in _BEFORE_FAILOVER)

"""Trace validation: is an observed run a behaviour of the whole-job model?

A real engine's log shows some of a run's steps and none of the others. This module decides
whether a sequence of *observations* is what some behaviour of :mod:`flipcheck.model.protocol`
shows, in the sense of TLA+ trace validation (Cirstea, Kuppe, Merz et al.) and CCF's CI: every
observation is matched to a model step, and the steps the log does not show are filled in by a
bounded search between observations.

Observations are tuples. Task ``t`` and input ``local`` are the model's numbers; ``k`` is a
checkpoint id::

    ("trigger", k)             the coordinator started checkpoint k               C2
    ("trigger-task", t, k)     k's trigger RPC reached task t                     C4
    ("barrier", t, local, k)   t polled k's barrier from input ``local`` (None: any input)   J3
    ("ack", t, k)              the coordinator received t's acknowledgement of k  J5/C5
    ("notify", t, k)           t received the completion notification of k        J8
    ("reported", t)            the coordinator received t's FINISHED report       C1
    ("failover",)              a task failed (F0), or the job failed over at once  F0/F1
    ("failover-known",)        the JobManager handles the failure: failed over by now   F1
    ("closing", t)             t may finish and closes (its operators finished)   J7
    ("decline", t, k)          the coordinator received t's decline of k          C4/C5/J6
    ("completed", k)           k completed                                        C5
    ("failed", k)              k was aborted                                      C5/F1
    ("finished", t)            t switched to FINISHED                             J7
    ("ended", t)               a source ended its data; a task with inputs, its input   J1/J3
    ("snapshot", t, k)         t took its snapshot of k                           J5

The first eight are a step's *own* observation: the log line is written where the step
happens (a message is received). The last six *lag*: they are written by whoever learns of the
step later, so the log may show them after observations of later steps (a decline travels to
the coordinator; a task switches to FINISHED only after its mailbox closed, and an RPC arriving
in between is declined as ``CHECKPOINT_DECLINED_TASK_CLOSING``: ``Task.triggerCheckpointBarrier``;
that decline may even come before the task's closing line, flip147 facts §4.8).
A step's lagging observations wait in a bounded multiset until the log shows them.

A step whose own observation is of a kind the log does not show at all (``visible``) is silent:
records, EndOfData and EndOfPartition moving through channels, a source ending its data, a task
finishing (its FINISHED line lags) are always silent. The search is a depth-first search over
``(observations explained, state, waiting observations)`` that tries the fewest silent steps
first and backtracks; it stops after ``budget`` states.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=0,
...           periodic_timer=True)
>>> run = [("trigger", 1), ("ended", 0), ("trigger-task", 0, 1), ("snapshot", 0, 1), ("ack", 0, 1),
...        ("barrier", 1, 0, 1), ("snapshot", 1, 1), ("ack", 1, 1), ("completed", 1), ("notify", 0, 1), ("notify", 1, 1), ("closing", 0), ("finished", 0),
...        ("ended", 1), ("closing", 1), ("finished", 1)]
>>> validate(job, run).conforms
True
>>> verdict = validate(job, [("trigger", 1), ("ack", 0, 1)])
>>> verdict.conforms, verdict.explained
(False, 1)
>>> print(verdict.why)
J5/C5: no acknowledgement of checkpoint 1 by src[0] is on its way (it has taken no snapshot of 1)
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from flipcheck.model.protocol import FAILED, FINISHED, RUNNING, END_OF_DATA, Job, JobState, initial_state, successors
from flipcheck.model.protocol.coordinator import (
    receive_acknowledgement, receive_finished_reports, suspend_at_job_end, trigger,
)
from flipcheck.model.protocol.failover import failover, task_failure
from flipcheck.model.protocol.state import BARRIER, DATA, EOD, EOP
from flipcheck.model.protocol.switches import overridden
from flipcheck.model.protocol.tasks import end_of_data, finish, receive, receive_notification, receive_trigger_rpc

__all__ = ["OWN_KINDS", "LAGGING_KINDS", "KINDS", "Verdict", "SearchProgress", "observe", "validate", "every_step", "replay_behaviour",
           "model_label", "MAX_WAITING", "impossible_observation", "BACKTRACK_FLOOR", "shown_by_step",
           "failed_line_follows"]

OWN_KINDS = ("trigger", "trigger-task", "barrier", "ack", "notify", "reported", "failover", "failover-known", "closing")
LAGGING_KINDS = ("decline", "completed", "failed", "finished", "ended", "snapshot")
# Lagging lines a task logs itself (or the decline it sends): a failover may cut them off.
_CANCELLED_WITH_THE_TASK = ("decline", "finished", "ended", "snapshot")
KINDS = OWN_KINDS + LAGGING_KINDS
# Lines about a task that only its running attempt writes (:meth:`_Search.finish_refuted_by`):
# a step that finishes the task is refused while one of them is still to come.
_RUNNING_KINDS = ("snapshot", "barrier", "ack", "closing", "ended")
# Of those, the lines the task's own thread writes before its closing line (StreamTask.afterInvoke).
_OWN_THREAD_KINDS = ("snapshot", "barrier", "ended")

# Own observations whose line may come after the step: the coordinator logs an acknowledgement
# when it processes it, and the task may meanwhile finish and send EndOfPartition downstream
# (J7 waits for the acknowledgement to be sent, flip147 facts §4.4, not received); it logs a
# trigger once the checkpoint id is drawn, after the plan was computed (flip147 facts §4.1).
_EARLY_KINDS = ("ack", "trigger")
# A trigger logged within this many observations may have computed its plan before them.
EARLY_TRIGGER = 4
# Observations of a task that may come between its finish and its closing line: Flink closes the
# mailbox before it logs "Finished operators", and a trigger RPC arriving in between is declined
# (TASK_CLOSING), a decline the coordinator may log first (flip147 facts §4.8). So while such an
# observation of the task is explained, its finish may be taken and its closing line wait.
_CLOSING_LINE_AFTER: tuple[str, ...] = ("decline",)
# Messages a task may be taken to have received early (:meth:`_Search.eager`).
_EAGER_MESSAGES = (DATA, EOD, EOP)
# At most this many lagging observations may wait for their log line at once (a bound of the
# search, not of the model: a run with more concurrent late lines needs a larger one).
MAX_WAITING = 12
# Silent steps tried between two observations, at most.
DEFAULT_DEPTH = 8
DEFAULT_BUDGET = 2_000_000
# A lagging line comes at most this many observations after the step that causes it.
DEFAULT_WINDOW = 40
# Nodes kept per observation, at most (a bound of the search, reported when reached).
MAX_FRONTIER = 5_000
# Model states whose steps the search keeps (:meth:`_Search._moves_of`), at most.
MAX_CACHED_STATES = 50_000
# Nodes known to explain the observation at hand in no way (:meth:`_Search.expand`), at most.
MAX_DEAD_NODES = 1_000_000
# Observations explained again, every way, when the lazy search gets stuck.
DEFAULT_BACKTRACK = 6
# States one backtrack may search: this many, or as many as the search took to get there if
# more. So a log no behaviour explains is rejected about as fast as a good one is accepted
# (a bound of the search, reported when reached). A deeper backtrack than the default, asked
# for, may use the whole budget (conform --backtrack).
BACKTRACK_FLOOR = 20_000


@dataclass
class Verdict:
    """The outcome: ``conforms``; how many observations were ``explained`` (a prefix); the
    first one no behaviour explains (``first_unexplained``, an index) with ``why``; the
    ``behaviour`` found (model step labels, silent ones included) up to the furthest point, and
    for each observation it explains how many of its steps had been taken then
    (``explained_after``); ``evidence``: a later observation that rules the first unexplained
    one out (a task finishing there that the log shows still running later), else None.
    ``exhausted_budget``: a bound of the search stopped it (undecided): the budget, the
    backtrack's floor, or the frontier's cap; ``frontier_cut``: the observation at which the
    frontier's cap first dropped ways (None: it never did)."""

    conforms: bool
    explained: int
    first_unexplained: int | None = None
    why: str = ""
    behaviour: list = field(default_factory=list)
    states: int = 0
    exhausted_budget: bool = False
    explained_after: list = field(default_factory=list)
    evidence: int | None = None
    frontier_cut: int | None = None


class SearchProgress(NamedTuple):
    """How far a validation is, as :func:`validate` reports it to its ``progress`` callback."""

    explained: int      # observations explained so far
    total: int          # observations in all
    states: int         # states searched so far
    frontier: int       # nodes explaining the prefix so far
    seconds: float      # since the search started
    search: str = ""    # which search, when a caller runs more than one (conform's second, deeper one)


def observe(job: Job, s: JobState, label: tuple, notes: Sequence, after: JobState) -> tuple:
    """What the step from ``s`` to ``after`` shows: ``(own, lagging, optional)``: its own
    observation or None, the lagging observations it causes, and lagging ones the log may or
    may not show."""
    kind = label[0]
    own: tuple | None = None
    lagging: list = []
    optional: list = []
    if kind in ("trigger", "trigger-fails"):
        if any(note[0] == "triggered" for note in notes):
            own = ("trigger", label[1])
    elif kind == "rpc" and s.tasks[label[1]].phase != FINISHED:
        own = ("trigger-task", label[1], label[2])
    # A trigger RPC reaching a FINISHED task shows only when the coordinator learns of it: the
    # TaskExecutor's line (a vacuous observation, see :meth:`_Search.children`) may come much earlier.
    elif kind == "receive" and label[3][0] == BARRIER and not _aborted(s, label[3][1]):
        own = ("barrier", label[1], label[2], label[3][1])
    # A barrier of a checkpoint the coordinator already aborted may never show: a task notified
    # of the abort sends a cancellation marker instead (flip147 facts §4.5); its line is vacuous.
    elif kind == "ack":
        pending = s.coordinator.pending
        t, k = label[1], label[2]
        if pending is not None and pending.id == k and pending.wait >> t & 1 and not pending.acked >> t & 1:
            # Only an acknowledgement the pending checkpoint accepts is logged as received
            # (CheckpointCoordinator.receiveAcknowledgeMessage; a late one is another line).
            own = ("ack", t, k)
    elif kind == "notify":
        own = ("notify", label[1], label[2])
    elif kind == "report-finished":
        own = ("reported", label[1])
    elif kind == "fail":
        own = ("failover",)   # F0: the task's own FAILED switch (the TaskManager's line)
    elif kind == "failover":
        # F1 after F0: the JobManager's FAILED switch, where it handles the failure; on its own
        # (a global failure, or a task's failure handled at once): the first failure line.
        own = ("failover-known",) if any(ts.phase == FAILED for ts in s.tasks) else ("failover",)
    elif kind == "finish":
        # Flink finishes the operators and closes the mailbox (a trigger RPC arriving now is
        # declined, TASK_CLOSING); the switch to FINISHED is logged later.
        own = ("closing", label[1])
        lagging.append(("finished", label[1]))
    elif kind == "end-of-data" or kind == "receive" and label[3][0] == EOP and not after.tasks[label[1]].handler.open:
        # J1: a source's data ended; J3: the last EndOfPartition ended a task's input (Flink's
        # END_OF_INPUT): both end the task's mailbox loop.
        lagging.append(("ended", label[1]))
    for note in notes:
        if note[0] == "snapshot":
            (optional if _aborted(s, note[2]) else lagging).append(("snapshot", note[1], note[2]))
        elif note[0] == "completed":
            lagging.append(("completed", note[1]))
        elif note[0] == "aborted":
            k, reason, t = note[1], note[2], note[3]
            if kind == "failover" or reason == "CHECKPOINT_DECLINED_TASK_CLOSING" and t is None:
                optional.append(("failed", k))    # the coordinator's own abort: suspended, finalize failed
            else:
                lagging.append(("failed", k))
            if t is not None:
                # A trigger RPC to a task the TaskExecutor no longer knows fails the RPC instead of
                # declining (TaskExecutor.triggerCheckpoint: "unknown task"): no Decline line. A
                # failed task (F0) is unregistered soon after its FAILED switch (flip147 facts §4.10).
                gone = kind == "rpc" and s.tasks[t].phase in (FINISHED, FAILED)
                (optional if gone else lagging).append(("decline", t, k))
    return own, tuple(lagging), tuple(optional)


def _aborted(s: JobState, k: int) -> bool:
    """The coordinator already aborted checkpoint ``k`` (it is neither pending nor completed)."""
    c = s.coordinator
    return k <= c.last_aborted and k != c.completed and (c.pending is None or c.pending.id != k)


def _matches(observed: tuple, modelled: tuple) -> bool:
    """``modelled`` is what a step shows; ``observed`` may leave a barrier's input open (None)."""
    if observed[0] != modelled[0] or len(observed) != len(modelled):
        return False
    return all(o is None or o == m for o, m in zip(observed, modelled))


def _steps_showing(job: Job, s: JobState, o: tuple) -> Iterator[tuple]:
    """The steps whose own observation could be ``o``: only the action that can take them."""
    kind = o[0]
    if kind == "trigger":
        steps = trigger(job, s)
    elif kind == "trigger-task":
        steps = receive_trigger_rpc(job, s, o[1])
    elif kind == "barrier":
        steps = receive(job, s, o[1])
    elif kind == "ack":
        steps = receive_acknowledgement(job, s, o[1])
    elif kind == "notify":
        steps = receive_notification(job, s, o[1])
    elif kind == "reported":
        steps = receive_finished_reports(job, s)
    elif kind == "failover":
        steps = failover(job, s) + task_failure(job, s)
    elif kind == "failover-known":
        steps = failover(job, s)
    elif kind == "closing":
        steps = finish(job, s, o[1])
    else:
        return
    for label, step in steps:
        yield label, step.freeze(), tuple(step.notes)


def _eager_steps(job: Job, s: JobState, t: int) -> Iterator[tuple]:
    """Task ``t``'s steps that :meth:`_Search.eager` may take: a source ending its data, or a
    task receiving a record, EndOfData or EndOfPartition."""
    actions = end_of_data(job, s, t) if job.tasks[t].is_source else receive(job, s, t)
    for label, step in actions:
        if label[0] != "receive" or label[3][0] in _EAGER_MESSAGES:
            yield label, step.freeze(), tuple(step.notes)


def _add(waiting: tuple, items: tuple, shows) -> tuple:
    """``waiting`` (sorted) with the ``items`` the log shows, sorted."""
    shown = tuple(o for o in items if shows(o))
    return tuple(sorted(waiting + shown)) if shown else waiting


def _remove(waiting: tuple, o: tuple):
    """``waiting`` without one entry matching ``o`` (None if there is none)."""
    for i, w in enumerate(waiting):
        if _matches(o, w):
            return waiting[:i] + waiting[i + 1:]
    return None


def failed_line_follows(failovers: Sequence[int], failing: Mapping[int, int], t: int, i: int, window: int) -> bool:
    """Whether the next failover observation from ``i`` (``failovers``: their indices, in order)
    is task ``t``'s own FAILED line (``failing``) and comes within ``window``: the search may then
    take ``t``'s F0 before that line. A task fails where its exception is thrown; its FAILED line
    comes once the exception has reached its ``Task``, and what the failure set off meanwhile is
    logged first: another subtask's decline for a shared channel-state file (flip147 facts §4.14;
    divergence 40).

    >>> failed_line_follows([5, 90], {5: 2, 90: 0}, 2, 3, 40), failed_line_follows([5, 90], {5: 2, 90: 0}, 0, 3, 40)
    (True, False)
    """
    at = bisect.bisect_left(failovers, i)
    return at < len(failovers) and failovers[at] < i + window and failing.get(failovers[at]) == t


class _Search:
    """Breadth-first over the observations: the set of nodes ``(state, waiting, optional,
    closed)`` that explain each prefix. ``waiting``/``optional``: lagging observations owed;
    ``closed``: tasks whose closing line came while a checkpoint of theirs was still pending."""

    def __init__(self, job: Job, observations: Sequence[tuple], visible: frozenset, hidden: frozenset,
                 depth: int, budget: int, window: int, plans_from: Mapping[int, int] | None = None):
        self.job, self.observations, self.visible, self.hidden = job, observations, visible, hidden
        self.depth, self.budget, self.window = depth, budget, window
        self.states = 0
        self.full_layers = False                    # see validate()
        self.prune = True                           # see validate()
        self.failing: dict = {}                     # see validate()
        self.max_frontier = MAX_FRONTIER            # see validate()
        self.cut: int | None = None                 # the first observation whose ways were cut at max_frontier
        self.at, self.frontier_size = 0, 1          # the observation being explained, from how many nodes
        self.progress: Callable[[SearchProgress], None] | None = None
        self.progress_every = 2.0
        self.started = self.next_report = time.monotonic()
        # Observation i -> the triggers logged later whose plan may already be computed before it.
        self.early_triggers: dict = {}
        for j, o in enumerate(observations):
            if o[0] == "trigger":
                first = min(j - EARLY_TRIGGER + 1, (plans_from or {}).get(j, j))
                for i in range(max(first, 0), j):
                    self.early_triggers.setdefault(i, []).append(j)
        # Where each lagging observation is logged: a step may cause one only if its line follows soon.
        self.positions: dict = {}
        for i, o in enumerate(observations):
            if o[0] in LAGGING_KINDS or o[0] in _EARLY_KINDS or o[0] == "closing" or o == ("failover",):
                self.positions.setdefault(o, []).append(i)
        # Per task, where its lines that only a running attempt writes are (see finish_refuted_by).
        self.running_lines: dict = {}
        for i, o in enumerate(observations):
            if o[0] in _RUNNING_KINDS:
                self.running_lines.setdefault(o[1], []).append(i)
        self.failovers = self.positions.get(("failover",), [])
        # Where the attempts are replaced (F1): each JobManager line (failover-known), and a
        # failover line with none after it before the next failover (a failure handled at once).
        # Between a task's FAILED line (F0) and F1 the others run on in their old attempts.
        known = [i for i, o in enumerate(observations) if o == ("failover-known",)]
        ends = self.failovers[1:] + [len(observations)]
        self.restarts = sorted(known + [f for f, e in zip(self.failovers, ends) if not any(f < k < e for k in known)])
        # Per JobManager failover line (F1), the acknowledgements logged after it and before the
        # next trigger: the cancelled attempts' (flip147 facts §4.6), which the model receives before F1.
        self.acks_after_failover: dict = {}
        for k in known:
            later = self.acks_after_failover[k] = []
            for o in observations[k + 1:k + window]:
                if o[0] == "trigger":
                    break
                if o[0] == "ack":
                    later.append(o)
        # Per model state, its steps and what each shows: the search meets a state again and
        # again (from other frontier nodes, with other lines waiting, for later observations),
        # and the model's steps from it are the same every time. Emptied when full (memory).
        self._moves: dict = {}
        self._shown: dict = {}
        self._final_wait_is_the_models = not {"may_finish", "finish_waits_for"} & set(overridden(job.protocol))

    def never(self, node: tuple, i: int, start: int) -> bool:
        """Whether no state reachable from ``node``, the frontier of observation ``start``, shows
        observation ``i``: its checkpoint can never be (again) triggered, completed or
        acknowledged, since ids only grow and each is pending once (C2, C5, F1), or a completion
        lacks an acknowledgement that no line from ``start`` on shows (C5). No step already taken
        owes its line. A backtrack from such nodes cannot help."""
        s, waiting, optional, _ = node
        o = self.observations[i]
        if o in waiting or o in optional:
            return False
        c, kind = s.coordinator, o[0]
        if kind == "trigger":
            return c.last_id >= o[1]
        p = c.pending
        if kind == "completed":
            if c.completed >= o[1] or c.last_id >= o[1] and (p is None or p.id != o[1]):
                return True
            missing = [u for u in range(len(self.job.tasks)) if p is not None and p.id == o[1]
                       and p.wait >> u & 1 and not p.acked >> u & 1]
            return any(self.shows(("ack", u, o[1])) and ("ack", u, o[1]) not in waiting
                       and not any(j >= start for j in self.positions.get(("ack", u, o[1]), ())) for u in missing)
        if kind == "ack":
            t, k = o[1], o[2]
            return c.last_id > k or c.last_id == k and (p is None or p.id != k or bool(p.acked >> t & 1))
        return False

    def hopeless(self, node: tuple, i: int) -> bool:
        """Whether no silent steps from ``node`` reach a step that shows observation ``i``:
        :meth:`never`, or a task closes that first needs a notification (J7, J8), or ends its
        input that first needs an upstream task to finish (J3, J7), steps whose own lines the
        log would show first. Only silent steps are searched between two lines, so the search
        drops such a node (and shares the nodes it found hopeless, :meth:`expand`)."""
        if self.never(node, i, i):
            return True
        o = self.observations[i]
        if o in node[1] or o in node[2]:
            return False
        if o[0] == "closing":
            return self._awaits_a_shown_notification(node, o[1])
        if o[0] == "ended":
            return self._an_input_stays_open(node, o[1])
        return False

    def _restores_show(self, node: tuple) -> bool:
        """No restore (F1) is taken silently from ``node``: the log shows failovers, and no
        failure's line came whose restore is still to be taken."""
        return (self.shows(("failover",)) and self.shows(("failover-known",))
                and not node[3] >> len(self.job.tasks) & 1)

    def _an_input_stays_open(self, node: tuple, t: int) -> bool:
        """J3: task ``t``'s input ends with EndOfPartition on every input, and one of them has
        none on its way from an upstream task that has not finished: only that task's finish
        sends it (J7), a step whose closing line the log shows (but once that line came:
        flip147 facts §4.4), so no silent step ends ``t``'s input."""
        s, _, _, closed = node
        ts = s.tasks[t]
        if ts.handler is None or not self._restores_show(node):
            return False
        for local, c in enumerate(self.job.tasks[t].inputs):
            u = self.job.channels[c].source
            if (ts.handler.open >> local & 1 and s.tasks[u].phase != FINISHED and not closed >> u & 1
                    and self.shows(("closing", u)) and not any(m[0] == EOP for m in s.queues[c])):
                return True
        return False

    def _awaits_a_shown_notification(self, node: tuple, t: int) -> bool:
        """J7: task ``t``, its data ended, may not close before a checkpoint at least as new as
        its final one completed and it was notified (flip147 facts §3.1, ``finalCheckpointMinId``),
        and only a notification (J8) or a restore (F1) changes that: steps whose own lines the
        log shows, so none is taken silently (but F1 once a failure's line came). Only the
        model's own J7 is known to wait so: a protocol that overrides it is never judged here."""
        s = node[0]
        return (self._final_wait_is_the_models and s.tasks[t].phase == END_OF_DATA
                and self.shows(("notify", t, 0)) and self._restores_show(node)
                and "final checkpoint" in self.job.protocol.finish_waits_for(self.job, s, t))

    def finish_refuted_by(self, node: tuple, t: int, i: int) -> int | None:
        """The first observation from ``i`` on, before the next failover, that task ``t`` could not
        show if it finished (or closed its mailbox) now in ``node``, or None. A finished task takes
        no snapshot, receives no barrier and ends nothing any more, and acknowledges only the
        snapshots it already took: a snapshot, end-of-input, closing or acknowledgement line of
        ``t`` that no step taken owes (nor an acknowledgement on its way), or a barrier of a
        checkpoint not yet triggered, shows it still running. A line the task's own thread writes (snapshot, barrier, end of
        input) after its closing line does too, owed or not: one thread writes them in order
        (flip147 facts §4.4). Lines of the next attempt follow the failover's line."""
        s, waiting, optional, _ = node
        until = next((f for f in self.restarts if f >= i), len(self.observations))
        since = max((f for f in self.restarts if f < i), default=-1)
        closed_at = max((p for p in self.positions.get(("closing", t), ()) if since < p < until), default=until)
        last_id = s.coordinator.last_id
        ts = s.tasks[t]
        on_its_way = {k for k, _ in ts.outbox} | ({ts.snapshot[0]} if ts.snapshot is not None else set())
        for j in self.running_lines.get(t, ()):
            if j < i:
                continue
            if j >= until:
                return None
            o = self.observations[j]
            if o[0] in _OWN_THREAD_KINDS and j > closed_at:
                return j
            if o[0] == "barrier":
                if o[-1] > last_id:   # (a barrier of an aborted checkpoint may be logged vacuously)
                    return j
            elif o[0] == "ack":
                if o not in waiting and o[2] not in on_its_way:
                    return j
            elif _remove(waiting, o) is None and _remove(optional, o) is None:
                return j
        return None

    def _soon(self, lagging: tuple, i: int) -> bool:
        """Every lagging observation in ``lagging`` is logged within ``window`` observations from
        ``i``, or (a task's own line) a failover that may cut it off comes within that window."""
        for o in lagging:
            if not self.shows(o):
                continue
            if not any(i <= p < i + self.window for p in self.positions.get(o, ())):
                if o[0] in _CANCELLED_WITH_THE_TASK and any(
                        i <= p < i + self.window for p in self.positions.get(("failover",), ())):
                    continue
                return False
        return True

    def shows(self, o: tuple) -> bool:
        """Whether the log can show ``o``: its kind is visible and not hidden for its task."""
        shown = self._shown.get(o)
        if shown is None:
            shown = self._shown[o] = o[0] in self.visible and (o[0], o[1] if len(o) > 1 else None) not in self.hidden
        return shown

    def _step(self, node: tuple, label: tuple, nxt: JobState, notes: tuple, i: int, observed: tuple | None = None):
        """The node after a step from ``node``: ``(own observation shown or None, node')``, or
        None when the step cannot be part of a behaviour the log shows from observation ``i``.
        ``observed``: the step's :func:`observe`, when known."""
        s, waiting, optional, closed = node
        own, lagging, maybe = observed if observed is not None else observe(self.job, s, label, notes, nxt)
        failing = 1 << len(self.job.tasks)
        if own is not None and own[0] == "closing" and closed >> own[1] & 1:
            closed, own = closed & ~(1 << own[1]), None   # its line came at closing (flip147 facts §4.4)
        elif own == ("failover",) and closed & failing:
            if label[0] == "fail" and self.failing.get(self._last_failover_before(i), label[1]) != label[1]:
                return None                                # that line named another task
            own, closed = None, closed & ~failing          # its line came when the task failed
        if label[0] == "fail":
            # F0: what the failed task still owed may never be logged (but a decline it sent).
            t = label[1]
            gone = tuple(w for w in waiting if w[0] in _CANCELLED_WITH_THE_TASK and w[0] != "decline"
                         and len(w) > 1 and w[1] == t)
            waiting = tuple(w for w in waiting if w not in gone)
            optional = _add(optional, gone, self.shows)[-MAX_WAITING:]
        elif own is not None and own[0] == "trigger-task" and closed >> own[1] & 1:
            return None   # the mailbox is closed: Flink declines (TASK_CLOSING); here it must finish first
        if own is not None and not self.shows(own):
            own = None
        elif own is not None and own[0] == "trigger-task" and "snapshot" in self.visible:
            # With the task's own "Starting checkpoint" line in the log, that line is the step
            # (a source takes its snapshot in its mailbox, perhaps after its data ended); the
            # TaskExecutor's line only says the RPC arrived.
            own = None
        if not self._soon(lagging, i):
            return None
        if waiting and self._before_closing_line(label, waiting):
            return None
        if label[0] == "finish":
            # Its own closing line is owed too while it waits (a decline logged first, see children).
            owed = _add(waiting, lagging + ((own,) if own is not None else ()), self.shows)
            if self.finish_refuted_by((nxt, owed, optional, closed), label[1], i) is not None:
                return None
        if label == ("failover",):
            # The failover cancels every task: a line a task still owes (its snapshot, its end
            # of data, its switch to FINISHED, its decline) may never be logged, since the
            # cancelled attempt stops (and its later lines are skipped: replaced attempts).
            owed_by_tasks = tuple(w for w in waiting if w[0] in _CANCELLED_WITH_THE_TASK)
            waiting = tuple(w for w in waiting if w[0] not in _CANCELLED_WITH_THE_TASK)
            optional = _add(optional, owed_by_tasks, self.shows)[-MAX_WAITING:]
        grown = _add(waiting, lagging, self.shows)
        if len(grown) > MAX_WAITING:
            return None
        return own, (nxt, grown, _add(optional, maybe, self.shows)[-MAX_WAITING:], closed)

    def _last_failover_before(self, i: int) -> int | None:
        """The index of the last failover observation before observation ``i``."""
        before = bisect.bisect_left(self.failovers, i)
        return self.failovers[before - 1] if before else None

    def _before_closing_line(self, label: tuple, waiting: tuple) -> bool:
        """A step that needs a task to have finished whose closing line still waits: Flink sends
        its EndOfPartition and FINISHED report only after that line (flip147 facts §4.8)."""
        kind = label[0]
        if kind == "report-finished":
            return ("closing", label[1]) in waiting
        if kind == "receive" and label[3][0] == EOP:
            channel = self.job.channels[self.job.tasks[label[1]].inputs[label[2]]]
            return ("closing", channel.source) in waiting
        return False

    def children(self, node: tuple, i: int, dead: Mapping[tuple, int] | None = None,
                 reached: dict | None = None) -> Iterator[tuple]:
        """Every way to explain observation ``i`` from ``node``: ``(silent steps, path, node')``,
        fewest silent steps first. After the ways with ``d`` silent steps comes ``(d, None,
        None)``: a caller that needs no more silent steps stops there, before the nodes ``d + 1``
        steps away are searched (most observations are explained with no silent step at all).
        ``dead``: nodes known to explain ``i`` in no way within the number of silent steps they
        map to; one reached with no more steps left than that is not searched (it would yield
        nothing, nor would any node after it), nor is a :meth:`hopeless` one (unless ``prune``
        is off). ``reached`` gets every node searched and the fewest
        silent steps that reached it."""
        job, o = self.job, self.observations[i]
        dead = dead if dead is not None else {}
        if self.prune and (dead.get(node, -1) >= self.depth or self.hopeless(node, i)):
            return
        layer: list = [(node, ())]
        seen = {node}
        if reached is not None:
            reached[node] = 0
        for d in range(self.depth + 1):
            for current, path in layer:
                if self.states > self.budget:
                    return
                s, waiting, optional, closed = current
                left = _remove(waiting, o)
                if left is not None:
                    yield d, path, (s, left, optional, closed)
                left = _remove(optional, o)
                if left is not None:
                    yield d, path, (s, waiting, left, closed)
                if o[0] == "notify" and s.tasks[o[1]].phase in (FINISHED, FAILED) and s.coordinator.completed >= o[2]:
                    # The RPC reached the TaskExecutor after the task finished, or failed (F0): logged,
                    # never delivered (flip147 facts §4.3, §4.10); the model drops it at finish (J7),
                    # a failed task takes no step.
                    yield d, path, current
                failing = 1 << len(job.tasks)
                if o == ("failover",) and failover(job, s):
                    # A task failed; the coordinator fails over when the JobManager handles the
                    # failure (F1), maybe after a trigger it started meanwhile.
                    yield d, path, (s, waiting, optional, closed | failing)
                if o == ("failover-known",) and not closed & failing and not any(ts.phase == FAILED for ts in s.tasks):
                    yield d, path, current
                if o[0] == "barrier" and _aborted(s, o[3]):
                    yield d, path, current   # the barrier of an aborted checkpoint: see observe()
                if o[0] == "trigger-task" and "snapshot" in self.visible and (o[2] is None or o[2] <= s.coordinator.last_id):
                    yield d, path, current   # the RPC arrived; the snapshot line will show the step
                elif (o[0] == "trigger-task" and (s.tasks[o[1]].phase == FINISHED or closed >> o[1] & 1)
                        and (o[2] is None or o[2] in s.rpcs[o[1]])):
                    # The RPC reached a closing or finished task (flip147 facts §4.3): it is
                    # declined, or fails, when the coordinator hears of it (the silent rpc step).
                    yield d, path, current
                if (o[0] == "closing" and s.tasks[o[1]].phase == END_OF_DATA and _ready_to_close(job, s, o[1])
                        and self.finish_refuted_by(current, o[1], i + 1) is None):
                    # J7 holds but for a checkpoint still pending: Flink closes the mailbox first
                    # and waits for it afterwards (flip147 facts §4.4); the model's finish follows.
                    yield d, path, (s, waiting, optional, closed | 1 << o[1])
                for label, nxt, notes, observed in self._moves_of(s, o):
                    if label[0] == "fail" and self.failing.get(i, label[1]) != label[1]:
                        continue   # the line names the task that failed
                    after = self._step(current, label, nxt, notes, i + 1, observed)
                    if after is not None and after[0] is not None and _matches(o, after[0]):
                        yield d, path + (label,), after[1]
            if d == self.depth:
                return
            yield d, None, None
            following = []
            for current, path in layer:
                for label, nxt, notes, observed in self._moves_of(current[0]):
                    after = self._step(current, label, nxt, notes, i, observed)
                    early_failure = label[0] == "fail" and failed_line_follows(
                        self.failovers, self.failing, label[1], i, self.window)
                    if after is not None and after[0] is not None and (
                            after[0][0] in _EARLY_KINDS or after[0][0] == "closing"
                            and o[0] in _CLOSING_LINE_AFTER and o[1] == after[0][1] or early_failure) \
                            and self._soon((after[0],), i):
                        # The step came before its line: the line waits like a lagging one.
                        after = (None, after[1][:1] + (_add(after[1][1], (after[0],), self.shows),) + after[1][2:])
                    if after is None or after[0] is not None:
                        continue
                    if after[1] not in seen and not (self.prune and (dead.get(after[1], -1) >= self.depth - d - 1
                                                                      or self.hopeless(after[1], i))):
                        seen.add(after[1])
                        self.counted()
                        following.append((after[1], path + (label,)))
                        if reached is not None:
                            reached[after[1]] = d + 1
            layer = following
            if not layer:
                return

    def eager(self, node: tuple, i: int) -> tuple:
        """``node`` after every EndOfData, EndOfPartition and record at the head of a channel was
        received, every source whose end-of-input line comes soon ended its data (silent steps
        that only make a task's finishing possible sooner), a trigger whose plan may come
        before observation ``i`` (``plans_from``) was started (its plan was computed before the
        lines in between, flip147 facts §4.1), and before the JobManager's failover line the
        acknowledgements logged after it were received (:meth:`_acks_before_failover`); and the
        steps taken."""
        steps: list = []
        changed = True
        while changed:
            changed = False
            for t in range(len(self.job.tasks)):
                for label, nxt, notes, observed in self._moves_of(node[0], task=t):
                    after = self._step(node, label, nxt, notes, i, observed)
                    if after is not None and after[0] is None:
                        node = after[1]
                        steps.append(label)
                        changed = True
                        break
        soon = [self.observations[j] for j in self.early_triggers.get(i, ())]
        if self.observations[i][0] != "trigger" and soon:
            for label, step in trigger(self.job, node[0]):
                if label[0] != "trigger":
                    continue   # a failing trigger (C2f) is never taken early
                after = self._step(node, label, step.freeze(), tuple(step.notes), i)
                if after is not None and after[0] is not None and after[0] in soon:
                    s, waiting, optional, closed = after[1]
                    node = (s, _add(waiting, (after[0],), self.shows), optional, closed)
                    steps.append(label)
                break
        for o in self.acks_after_failover.get(i, ()):
            node = self._acks_before_failover(node, o, i, steps)
        return node, tuple(steps)

    def _acks_before_failover(self, node: tuple, o: tuple, i: int, steps: list) -> tuple:
        """``node`` after the coordinator received the acknowledgement ``o``, its line still to
        come: the JobManager logs its failover line (F1, observation ``i``) when it handles the
        failure and cancels the tasks, yet the coordinator accepts the cancelled attempts'
        acknowledgements until the restore aborts the pending checkpoint (flip147 facts §4.6).
        F1 is one step in the model, so they come before it; the lazy search would take F1 first."""
        for label, nxt, notes, observed in self._moves_of(node[0], o):
            after = self._step(node, label, nxt, notes, i, observed)
            if after is not None and after[0] is not None and _matches(o, after[0]) and self._soon((after[0],), i):
                s, waiting, optional, closed = after[1]
                steps.append(label)
                return (s, _add(waiting, (after[0],), self.shows), optional, closed)
        return node

    def expand(self, frontier: dict, i: int, lazy: bool) -> dict:
        """The nodes explaining observation ``i`` from ``frontier`` (node -> ``(behaviour,
        marks)``: the steps taken, and for each observation explained how many steps had been
        taken then). ``lazy``: from each node only the ways with the fewest silent steps (a
        silent step that can wait, waits); each node's eager variant (:meth:`eager`) is a node of
        its own."""
        self.at, self.frontier_size = i, len(frontier)
        found: dict = {}
        starts: dict = {}
        for node, (path, marks) in frontier.items():
            starts.setdefault(node, (path, marks))
            # Whether a channel's EndOfData reached its task before a barrier on another
            # channel is a race the log rarely shows; try the task having received it too.
            eager, steps = self.eager(node, i)
            starts.setdefault(eager, (path + steps, marks))
        # Frontier nodes differ in how their past went, and their silent steps soon meet: a node
        # from which no way explains ``i`` is searched once, not once per frontier node reaching it.
        dead: dict = {}
        for node, (path, marks) in starts.items():
            best = None
            reached: dict | None = {} if self.prune and len(dead) < MAX_DEAD_NODES else None
            for d, steps, nxt in self.children(node, i, dead, reached):
                if steps is None:   # every way with d silent steps was tried
                    if lazy and best is not None and not self.full_layers:
                        break       # lazy: the ways with the fewest silent steps are all there
                    continue
                if lazy and best is not None and d > best:
                    break
                best = d
                if nxt not in found:
                    found[nxt] = (path + steps, marks + (len(path) + len(steps),))
                if len(found) >= self.max_frontier:
                    if self.cut is None or i < self.cut:
                        self.cut = i
                    return found
                if self.states > self.budget:
                    return found
            if best is None and reached and self.states <= self.budget:
                for dead_node, d in reached.items():   # searched to the end: none of them explains i
                    dead[dead_node] = max(dead.get(dead_node, -1), self.depth - d)
        return found

    def counted(self) -> None:
        """One more state searched: the progress report is due every ``progress_every`` seconds."""
        self.states += 1
        if self.progress is not None and not self.states & 1023:
            now = time.monotonic()
            if now >= self.next_report:
                self.next_report = now + self.progress_every
                self.progress(SearchProgress(self.at, len(self.observations), self.states, self.frontier_size,
                                             now - self.started))

    def _moves_of(self, s: JobState, o: tuple | None = None, task: int | None = None) -> tuple:
        """``(label, state after, notes, what it shows)`` of every step from ``s``
        (:func:`every_step`); with ``o``, of the steps whose own observation could be ``o``
        (:func:`_steps_showing`); with ``task``, of its steps :meth:`eager` may take
        (:func:`_eager_steps`). The same every time, so computed once per state."""
        key = (s, o[:2]) if o is not None else (s, task) if task is not None else s
        moves = self._moves.get(key)
        if moves is None:
            if len(self._moves) >= MAX_CACHED_STATES:
                self._moves.clear()
            steps = (_steps_showing(self.job, s, o) if o is not None else _eager_steps(self.job, s, task)
                     if task is not None else every_step(self.job, s))
            moves = self._moves[key] = tuple((label, nxt, notes, observe(self.job, s, label, notes, nxt))
                                             for label, nxt, notes in steps)
        return moves


def validate(job: Job, observations: Sequence[tuple], visible: Sequence[str] | None = None, hidden=(),
             depth: int = DEFAULT_DEPTH, budget: int = DEFAULT_BUDGET, window: int = DEFAULT_WINDOW,
             backtrack: int = DEFAULT_BACKTRACK, plans_from: Mapping[int, int] | None = None,
             progress: Callable[[SearchProgress], None] | None = None, progress_every: float = 2.0,
             where: Callable[[int], str] | None = None, full_layers: bool = False,
             failing: Mapping[int, int] | None = None, prune: bool = True,
             budget_named: str = "the budget", max_frontier: int = MAX_FRONTIER) -> Verdict:
    """Whether ``observations`` (in log order) are what some behaviour of ``job`` shows.
    ``visible``: the observation kinds the log can show (default: every kind); steps whose
    observation is of another kind, or a ``(kind, task)`` in ``hidden``, are silent. ``depth``
    bounds the silent steps between two observations, ``window`` how many observations later a
    lagging line may come, ``budget`` the states searched in all. ``progress`` gets a
    :class:`SearchProgress` every 1,000 observations explained and every ``progress_every``
    seconds. ``plans_from`` maps a trigger observation's index to the first observation its
    plan may come before (a trigger's line follows its plan, flip147 facts §4.1 and §4.9);
    without it a trigger's plan may come up to :data:`EARLY_TRIGGER` - 1 observations before
    its line. ``where(j)`` says where observation ``j`` was logged, for the why (default:
    ``observation j``). ``failing`` maps a failover observation's index to the task whose own
    line it is (its switch to FAILED): F0 explains it only by that task's failure.
    ``budget_named`` names the budget in the why of a search it stops (a caller's own cap).
    ``max_frontier``: the ways kept per observation; a verdict reached after a cut is undecided,
    and its why says where the ways were cut.

    The search is breadth-first over the observations and lazy: a silent step is taken only
    when the next observation needs it. When an observation cannot be explained, the last
    ``backtrack`` observations are explained again with every silent step taken as early as
    it can be (every way, not only the lazy one). ``full_layers``: the lazy search stops only at
    a way with more silent steps than the fewest, so it first searches the states one silent
    step further, as it did before it learned to stop: the same verdict, more states searched
    (for the test that compares both; docs/conformance.md, "Cost"). ``prune``: between two lines
    the search drops the nodes from which no silent steps can show the next line
    (:meth:`_Search.hopeless`), and searches a node from which none did only once: fewer states,
    the same behaviours found; off, it searches them all (for the test that compares both).

    The first unexplained observation is the first one that no behaviour found explains
    together with every observation before it, where a behaviour must stay consistent with
    the observations after it as far as they bind it: a lagging observation it owes comes
    within ``window``, and a task it finishes shows nothing later that only a running task
    shows (:meth:`_Search.finish_refuted_by`). Within the bounds, every observation before it
    is explained by one behaviour, returned as ``behaviour``."""
    shown = frozenset(KINDS if visible is None else visible)
    search = _Search(job, observations, shown, frozenset(hidden), depth, budget, window, plans_from)
    search.failing = dict(failing or {})
    search.full_layers = full_layers
    search.prune = prune
    search.max_frontier = max_frontier
    search.progress, search.progress_every = progress, progress_every
    where = where or (lambda j: f"observation {j}")
    frontiers: list = [{(initial_state(job), (), (), 0): ((), ())}]
    # An observation no behaviour shows, whatever came before: the search stops there.
    doomed, doom = (impossible_observation(observations) if "trigger" in shown else None) or (len(observations), "")
    i = 0
    while i < len(observations):
        following = search.expand(frontiers[i], i, lazy=True) if i < doomed else {}
        back, stopped = 1, False
        earliest = frontiers[i - min(backtrack, i)]
        if not following and i < doomed and not all(search.never(node, i, i - min(backtrack, i)) for node in earliest):
            floor = BACKTRACK_FLOOR if backtrack <= DEFAULT_BACKTRACK else budget
            search.budget = min(budget, search.states + max(floor, search.states))
            while not following and back <= min(backtrack, i) and search.states <= search.budget:
                redone = frontiers[i - back]
                for m in range(i - back, i + 1):
                    redone = search.expand(redone, m, lazy=False)
                    if not redone:
                        break
                    if m < i:
                        frontiers[m + 1] = redone
                following = redone
                back += 1
            stopped, search.budget = search.states > search.budget, budget
        if not following:
            why, evidence = _why_unexplained(search, frontiers[i], i, where)
            if i == doomed:
                why += f" ({doom})"
            if search.states > budget:
                why += f" (search stopped after {search.states:,} states: {budget_named})"
            elif stopped:
                why += (f" (backtracking stopped after {search.states:,} states: as many as the search took to get "
                        f"here; conform --backtrack {4 * backtrack} searches further back, within the budget)")
            elif 0 < backtrack < i and back > backtrack:
                # The lazy search may have passed the point where a silent step was due further back.
                why += (f" (none found explaining the {backtrack} lines before it again, every way; "
                        f"conform --backtrack {4 * backtrack} looks further back)")
            why += _cut_note(search, where)
            path, marks = next(iter(frontiers[i].values()))
            return Verdict(False, i, i, why, list(path), search.states,
                           search.states > budget or stopped or search.cut is not None, list(marks), evidence,
                           search.cut)
        if len(frontiers) == i + 1:
            frontiers.append(following)
        else:
            frontiers[i + 1] = following   # a backtrack redid it
        if progress is not None and (i + 1) % 1_000 == 0:
            progress(SearchProgress(i + 1, len(observations), search.states, len(following),
                                    time.monotonic() - search.started))
        if i >= backtrack:
            frontiers[i - backtrack] = {}
        i += 1
    frontier = frontiers[-1]
    for node, (path, marks) in frontier.items():
        if not node[1] and not node[3]:
            return Verdict(True, len(observations), behaviour=list(path), states=search.states,
                           explained_after=list(marks))
    waiting = sorted({w for node in frontier for w in node[1]})
    # A node may owe no line but the step of a line read early (its "closed" bits): say so too,
    # since those nodes are often the ones closest to explaining the log (divergence 46).
    early = sorted({b for node in frontier for b in range(len(job.tasks) + 1) if node[3] >> b & 1})
    owed = []
    if waiting:
        owed.append("these lines: " + ", ".join(_describe(job, w) for w in waiting[:4]))
    if early:
        owed.append("the step of a line read already: " + ", ".join(_describe_read_early(job, b) for b in early[:4]))
    why = "the log ends, yet every behaviour found still owes " + "; or ".join(owed) + _cut_note(search, where)
    path, marks = next(iter(frontier.values()))
    return Verdict(False, len(observations), None, why, list(path), search.states, search.cut is not None,
                   explained_after=list(marks), frontier_cut=search.cut)


def _cut_note(search: _Search, where: Callable[[int], str]) -> str:
    """What a rejection owes to the frontier's bound: the ways it dropped were never searched,
    so a verdict after a cut is undecided, not a rejection."""
    if search.cut is None:
        return ""
    # The option's value without separators: the command is pasted as it is written.
    return (f" (undecided: the search kept {search.max_frontier:,} of the ways to explain {where(search.cut)} and "
            f"dropped the rest, which may explain it; conform --frontier {4 * search.max_frontier} keeps more)")


def _why_unexplained(search: _Search, frontier: dict, i: int, where: Callable[[int], str]) -> tuple[str, int | None]:
    """Why no behaviour reaching ``frontier`` explains observation ``i``, and the later
    observation that rules it out when it is a task finishing that the log shows running on."""
    job, o = search.job, search.observations[i]
    if o[0] in ("closing", "finished"):
        for node in frontier:
            if node[0].tasks[o[1]].phase != FINISHED:
                later = search.finish_refuted_by(node, o[1], i + 1)
                if later is not None:
                    return (f"J7: {job.name(o[1])} does not finish here: it still "
                            f"{_running_text(search.observations[later])} later ({where(later)})"), later
    return explain(job, [node[0] for node in frontier], o), None


def _running_text(o: tuple) -> str:
    """What a line only a running task writes says it did (:data:`_RUNNING_KINDS`)."""
    return {"snapshot": lambda: f"takes checkpoint {o[2]}'s snapshot",
            "barrier": lambda: f"receives checkpoint {o[3]}'s barrier",
            "ack": lambda: f"acknowledges checkpoint {o[2]}",
            "closing": lambda: "closes",
            "ended": lambda: "ends its input"}[o[0]]()


def impossible_observation(observations: Sequence[tuple]) -> tuple[int, str] | None:
    """The first observation that no behaviour shows whatever happened before it, with why, or
    None. Checkpoint ids only grow (C2; a failover keeps the counter, F1) and each id is pending
    at most once, and a pending checkpoint needs its trigger step, whose line is always
    visible: so an id completed or acknowledged is triggered somewhere in the log, a trigger
    follows only smaller ids, and a completion only smaller completions. These need no search.

    >>> impossible_observation([("trigger", 1), ("completed", 1), ("completed", 49)])
    (2, 'no line of the log triggers checkpoint 49')
    >>> impossible_observation([("trigger", 2), ("trigger", 2)])
    (1, 'checkpoint 2 was triggered before, and ids only grow')
    >>> impossible_observation([("trigger", 1), ("ack", 0, 1), ("completed", 1)]) is None
    True
    """
    triggered = {o[1] for o in observations if o[0] == "trigger"}
    last_trigger = last_completed = 0
    for i, o in enumerate(observations):
        kind = o[0]
        k: Any = o[1] if kind in ("trigger", "completed") else o[2] if kind == "ack" else None
        if kind in ("completed", "ack") and k not in triggered:
            return i, f"no line of the log triggers checkpoint {k}"
        if kind == "trigger":
            if k <= last_trigger:
                return i, f"checkpoint {last_trigger} was triggered before, and ids only grow"
            last_trigger = k
        elif kind == "completed":
            if k <= last_completed:
                return i, f"checkpoint {last_completed} completed before, and ids only grow"
            last_completed = k
    return None


def every_step(job: Job, s: JobState) -> Iterator[tuple]:
    """The model's steps from ``s`` (:func:`~flipcheck.model.protocol.successors`), and past the
    job's end what is still on its way: FINISHED reports (C1), acknowledgements the tasks sent
    before they finished (C5, while a checkpoint is pending: afterwards they change nothing), a
    trigger of the timer on a view that has not yet learned every task finished (C3p; its RPCs
    reach finished tasks), trigger RPCs that the finished tasks decline (C4), and the
    coordinator's suspension (C8). The same steps :meth:`_Search.children` may match an
    observation with, so a behaviour found replays."""
    yield from successors(job, s)
    if all(ts.phase == FINISHED for ts in s.tasks):
        late = [step for t in range(len(job.tasks)) for step in receive_trigger_rpc(job, s, t)]
        if s.coordinator.pending is not None:
            late += [step for t in range(len(job.tasks)) for step in receive_acknowledgement(job, s, t)]
        for label, step in receive_finished_reports(job, s) + trigger(job, s) + late + suspend_at_job_end(job, s):
            yield label, step.freeze(), tuple(step.notes)


def replay_behaviour(job: Job, labels: Sequence[tuple]) -> list:
    """The steps (:class:`~flipcheck.properties.protocol_explore.TraceStep`) of a behaviour a
    :class:`Verdict` found, with their notes and states, for the sequence chart."""
    from flipcheck.properties.protocol_explore import replay

    return replay(job, labels, canonical_labels=False, steps_from=every_step)


def shown_by_step(job: Job, steps: Sequence, observations: Sequence[tuple], explained_after: Sequence[int]) -> dict:
    """Which observations each step of a behaviour shows: step (from 1) -> observation indices.
    ``steps``: the behaviour replayed (:func:`replay_behaviour`); ``explained_after``: the
    :class:`Verdict`'s. An observation belongs to the latest step before it was explained whose
    own, lagging or optional observations match it (each match used once); an own line the
    search read before its step (a trigger RPC whose snapshot line is the step, a closing line
    before the finish) to the first such step after. A line read as logged but never delivered
    (a notification or trigger RPC of a finished task) belongs to none.

    >>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
    >>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=0,
    ...           periodic_timer=True)
    >>> run = [("trigger", 1), ("trigger-task", 0, 1), ("snapshot", 0, 1), ("ack", 0, 1)]
    >>> verdict = validate(job, run)
    >>> steps = replay_behaviour(job, verdict.behaviour)
    >>> {step: [run[i] for i in shown] for step, shown in shown_by_step(job, steps, run, verdict.explained_after).items()}
    {1: [('trigger', 1)], 2: [('trigger-task', 0, 1), ('snapshot', 0, 1)], 3: [('ack', 0, 1)]}
    """
    shows: list = []
    before = initial_state(job)
    for step in steps:
        own, lagging, optional = observe(job, before, step.label, step.notes, step.state)
        shows.append([o for o in ((own,) if own is not None else ()) + lagging + optional])
        before = step.state
    found: dict = {}
    for i, taken in enumerate(explained_after):
        taken = min(taken, len(steps))
        later = range(taken, len(steps)) if observations[i][0] in OWN_KINDS else ()
        for j in (*range(taken - 1, -1, -1), *later):
            match = next((k for k, o in enumerate(shows[j]) if _matches(observations[i], o)), None)
            if match is not None:
                del shows[j][match]
                found.setdefault(j + 1, []).append(i)
                break
    return {step: found[step] for step in sorted(found)}


def _ready_to_close(job: Job, s: JobState, t: int) -> bool:
    """J7 holds for ``t`` but for its pending checkpoints (Flink waits for those after closing)."""
    ts = s.tasks[t]
    idle = ts._replace(outbox=(), snapshot=None)
    return job.protocol.may_finish(job, s._replace(tasks=s.tasks[:t] + (idle,) + s.tasks[t + 1:]), t)


def model_label(o: tuple) -> tuple:
    """The model step label an observation stands for (the step it would be, or cause)."""
    kind = o[0]
    if kind == "trigger":
        return ("trigger", o[1])
    if kind in ("trigger-task", "decline"):
        return ("rpc", o[1], o[2])
    if kind == "barrier":
        return ("receive", o[1], o[2] if o[2] is not None else 0, (BARRIER, o[3]))
    if kind in ("ack", "notify"):
        return (kind, o[1], o[2])
    if kind == "reported":
        return ("report-finished", o[1])
    if kind in ("closing", "finished"):
        return ("finish", o[1])
    if kind == "ended":
        return ("end-of-data", o[1])
    if kind == "snapshot":
        return ("rpc", o[1], o[2])
    return (kind,) + tuple(o[1:])


def _describe_read_early(job: Job, bit: int) -> str:
    """A ``closed`` bit of a search node: a line read before the step that shows it."""
    if bit == len(job.tasks):
        return "the failover (F1) of a failure whose FAILED line came first"
    return f"the close of {job.name(bit)}, whose closing line came first"


def _describe(job: Job, o: tuple) -> str:
    kind = o[0]
    if kind in ("trigger", "completed", "failed"):
        return f"{kind} {o[1]}"
    if kind in ("finished", "reported", "ended"):
        return f"{kind} {job.name(o[1])}"
    if kind == "failover":
        return "failover"
    return f"{kind} {o[-1]} {job.name(o[1])}"


def explain(job: Job, states: Sequence[JobState], o: tuple) -> str:
    """Why no behaviour reaching ``states`` shows ``o`` next: the rule it breaks, read from the
    first state (the search keeps every state that explained the observations before)."""
    s = states[0]
    c = s.coordinator
    kind = o[0]
    t: Any = o[1] if kind not in ("trigger", "completed", "failed", "failover", "failover-known") else None
    who = job.name(t) if t is not None else ""
    if kind == "trigger":
        if c.pending is not None:
            return f"C2: checkpoint {c.pending.id} is still pending, so {o[1]} cannot start (one at a time)"
        if c.last_id + 1 != o[1]:
            used_up = (f" (F1b: a failover uses up at most {job.ids_per_failover} id{'s' if job.ids_per_failover != 1 else ''})"
                       if job.periodic_timer and c.failovers and o[1] > c.last_id + 1 else "")
            return f"C2: the next checkpoint id is {c.last_id + 1}, not {o[1]}{used_up}"
        if c.stopped:
            return f"C7: the job was stopped with a savepoint, so {o[1]} cannot start"
        plan = job.plan(c.known_finished)
        if isinstance(plan, str):
            return (f"C2: on the coordinator's view the plan is declined ({plan}), so no checkpoint id "
                    f"is drawn and {o[1]} cannot start here")
        return f"C3: the coordinator has no reason to trigger {o[1]} here (nothing learned since its last trigger)"
    if kind == "trigger-task":
        if o[2] not in s.rpcs[t]:
            planned = c.pending is not None and c.pending.id == o[2]
            return (f"C2/C4: no trigger RPC of checkpoint {o[2]} is on its way to {who}"
                    + (" (the plan on the coordinator's view does not trigger it)" if planned else ""))
        if s.rpcs[t][0] != o[2]:
            return f"C4: the trigger RPCs to {who} arrive in order: {s.rpcs[t][0]} comes first"
        # The RPC can arrive here; what rules these states out lies elsewhere (a join-failover
        # run's why said "3 comes first" of checkpoint 3's own RPC, divergence 31).
        return (f"C4: checkpoint {o[2]}'s trigger RPC is the next to reach {who} here, so this line is not "
                f"what rules these states out: a line before it is still owed, or the search stopped first")
    if kind == "barrier":
        return f"J3: no input of {who} has checkpoint {o[3]}'s barrier at its head"
    if kind == "ack":
        return (f"J5/C5: no acknowledgement of checkpoint {o[2]} by {who} is on its way "
                f"(it has taken no snapshot of {o[2]})")
    if kind == "notify":
        return f"J8: no completion notification of checkpoint {o[2]} is on its way to {who}"
    if kind == "reported":
        return f"C1: {who} has sent no FINISHED report (it has not finished)"
    if kind == "failover":
        return "F1: no failover is possible here (the run failed over more often than the model allows)"
    if kind == "failover-known":
        return "F1: the coordinator learned of a failure, but no failover fits the lines before"
    if kind == "completed":
        pending = c.pending
        if pending is not None and pending.id == o[1]:
            missing = [job.name(u) for u in range(len(job.tasks)) if pending.wait >> u & 1 and not pending.acked >> u & 1]
            return (f"C5: checkpoint {o[1]} cannot complete: no acknowledgement yet from "
                    + ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else ""))
        return f"C5: checkpoint {o[1]} is not pending (newest completed: {c.completed})"
    if kind == "failed":
        return f"C5: nothing aborts checkpoint {o[1]} here"
    if kind == "decline":
        return f"C4/C5/J6/F0: {who} has no reason to decline checkpoint {o[2]} here"
    if kind in ("finished", "closing"):
        return "J7: " + _why_not_finish(job, s, t)
    if kind == "snapshot":
        return f"J5: {who} has no trigger RPC or barrier of checkpoint {o[2]} that would make it take a snapshot here"
    if kind == "ended":
        return f"J1/J3: {who} cannot end its input here (a task with inputs needs EndOfPartition on every input)"
    return f"unknown observation {o!r}"


def _why_not_finish(job: Job, s: JobState, t: int) -> str:
    ts, who = s.tasks[t], job.name(t)
    if ts.phase == FINISHED:
        return f"{who} already finished"
    if ts.active and job.protocol.may_finish(job, s, t):
        return f"{who} may finish, but not with the other lines around this one"
    if ts.phase == RUNNING:
        return f"{who} may not finish yet: it has not reached end of data"
    if ts.phase == END_OF_DATA and job.after_finished:
        if not (ts.final_min and ts.notified >= ts.final_min):
            final = (f"its final checkpoint {ts.final_min}" if ts.final_min
                     else "a checkpoint taken after its end of data (its final checkpoint)")
            return f"{who} may not finish before {final} completed and it was notified"
        if ts.outbox or ts.snapshot is not None:
            return f"{who} may not finish while a checkpoint of it is pending"
        return f"{who} may not finish before every downstream acknowledged its EndOfData"
    return f"{who} may not finish here"

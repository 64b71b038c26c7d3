"""Partial-order reduction of the whole-job search: stubborn sets over the model's transitions.

In a state where no failover can happen any more, the explorer may follow only a *stubborn*
subset of the enabled steps (:func:`ample_steps`) instead of all of them, and still reach every
deadlock, every end state, every violated step property, every cycle that never ends the job and
every checkpoint abort after which nothing completes. The set is built from
:mod:`flipcheck.model.protocol.independence` by Valmari's closure, starting from one enabled step:

* an enabled transition in the set brings in every transition whose general footprint conflicts
  with the footprint of its step enabled now (so no step outside the set can change what it does,
  before or after it);
* a disabled one brings in a necessary enabling set (one of them must come before it can fire);
* the set is used only if its enabled steps are invisible (none writes what the after-abort
  property reads, :data:`~flipcheck.model.protocol.independence.VISIBLE`) and fewer than all.

Step properties need no visibility condition here: every property of a step reads only what the
footprint of that step's transition reads (its notes come from the same parts), so a step
commuted past it never changes its verdict. The explorer adds the cycle proviso
(:func:`~.explore.explore_graph`: a reduced state whose chosen successors are not all new is
expanded fully), which keeps a cycle from postponing a step forever; with it the reduced graph
has a state from which the end cannot be reached iff the full graph has one.

The traces a user reads are not taken from the reduced graph: :func:`~.protocol_explore.explore_job`
re-searches the full model for the shortest trace of each violated property.

>>> from types import MappingProxyType
>>> from flipcheck.model.jobgraph import JobGraph, JobVertex, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state, successors
>>> job = Job(JobGraph.build([("src", 1), ("map", 1), ("sink", 1)],
...                          [("src", "map", ALL_TO_ALL), ("map", "sink", ALL_TO_ALL)]), records=2)
>>> ample = ample_function(job)
>>> from flipcheck.model.protocol import run
>>> s = run(job, [("emit", 0, 0), ("trigger", 1)])     # a record waits at map, an RPC at the source
>>> steps = list(successors(job, s))
>>> [steps[i][0] for i in ample(s, steps)]            # the poll commutes with everything else
[('receive', 1, 0, ('D', 0))]
>>> [label for label, _, _ in steps]
[('emit', 0, 1), ('rpc', 0, 1), ('receive', 1, 0, ('D', 0))]
"""

from __future__ import annotations

from typing import Any, Callable

from flipcheck.model.protocol import Job, JobState, Snapshot
from flipcheck.model.protocol.switches import RULE_METHODS, overridden
from flipcheck.model.protocol.independence import (
    VISIBLE, conflict, enabling_transitions, footprint, instance_kind, kind_footprint, transition, transitions,
)

__all__ = ["REDUCTIONS", "sound_reduction", "ample_function", "stubborn_set", "forget_restore_data"]

# What ``--reduction`` accepts: none, partial-order reduction (here), symmetry reduction
# (:mod:`.protocol_symmetry`), or both.
REDUCTIONS = ("none", "por", "symmetry", "all")


def sound_reduction(job: Job, reduction: str) -> str:
    """``reduction``, or ``"none"`` where it might not keep every verdict of ``job``. Both
    reductions are worked out from the model's own rule bodies: the footprints of
    :mod:`~flipcheck.model.protocol.independence` read the protocol's booleans, and the
    symmetries assume rules that treat interchangeable tasks alike. A protocol overriding a rule
    method may read and write anything, so it is searched unreduced: the same verdicts, in more
    states. Not for ``plan``: its steps' footprint is the view whatever it computes, and the
    symmetry reduction checks it for every view (:mod:`.protocol_symmetry`).

    >>> from flipcheck.generators.protocol import example_graph
    >>> from flipcheck.model.protocol import Protocol
    >>> class Mine(Protocol):
    ...     def may_finish(self, job, state, t):
    ...         return super().may_finish(job, state, t)
    >>> sound_reduction(Job(example_graph("pair")), "all"), sound_reduction(Job(example_graph("pair"), protocol=Mine()), "all")
    ('all', 'none')
    """
    if reduction != "none" and any(name in RULE_METHODS and name != "plan" for name in overridden(job.protocol)):
        return "none"
    return reduction


_FAILS = "fails"   # a transition whose step is visible, or disabled without a known enabling set


class _Closure:
    """What the stubborn sets of one state are grown from, each transition's neighbours worked
    out once: for an enabled one the transitions it conflicts with, for a disabled one a
    necessary enabling set."""

    __slots__ = ("job", "state", "steps", "memo", "enabled", "neighbours", "hopeless")

    def __init__(self, job: Job, state: JobState, steps: list, memo: dict):
        self.job, self.state, self.steps, self.memo = job, state, steps, memo
        self.enabled = {transition(label): i for i, (label, _, _) in enumerate(steps)}
        self.neighbours: dict = {}
        # Transitions a closure may not reach: one holds a transition that fails, or is no
        # smaller than the best found so far (or than the limit it was refused at).
        self.hopeless: set = set()

    def _work_out(self, group: tuple):
        i = self.enabled.get(group)
        if i is None:
            more = enabling_transitions(self.job, self.state, group)
            return _FAILS if more is None else more
        key = instance_kind(self.job, self.state, self.steps[i][0], self.steps[i][1])
        memo = self.memo
        found = memo.get(key)
        if found is None:
            step_footprint = kind_footprint(self.job, key)
            if step_footprint.writes & VISIBLE:
                found = _FAILS
            else:
                groups = memo.get("groups")
                if groups is None:
                    groups = memo["groups"] = transitions(self.job)
                found = tuple(g for g in groups if conflict(step_footprint, footprint(self.job, g)))
            memo[key] = found
        return found

    def grow(self, start: int, limit: int | None = None) -> list[int] | None:
        """The sorted positions of the enabled steps in the closure of ``steps[start]``'s
        transition, or None when it holds a transition that fails or ``limit`` enabled steps or
        more. ``limit`` never rises from one call to the next on one closure (``ample`` lowers
        it to the best size found), which is what lets a transition be marked *hopeless*: a
        closure that reaches it can be no smaller than one already found or refused."""
        first = transition(self.steps[start][0])
        parent: dict[Any, Any] = {first: None}   # also the set grown so far
        group: Any  # a transition, then None at the root of the parent chain
        work, positions = [first], []
        enabled, neighbours, work_out, hopeless = self.enabled, self.neighbours, self._work_out, self.hopeless
        if first in hopeless:
            return None
        while work:
            group = work.pop()
            more = neighbours.get(group)
            if more is None:
                more = neighbours[group] = work_out(group)
            if more is _FAILS:
                self._hopeless_to(group, parent)
                return None
            i = enabled.get(group)
            if i is not None:
                positions.append(i)
                if limit is not None and len(positions) >= limit:
                    hopeless.add(first)   # its closure is too large now, and limits only fall
                    return None
            for other in more:
                if other not in parent:
                    if other in hopeless:   # its closure is in ours: we are no smaller
                        self._hopeless_to(group, parent)
                        return None
                    parent[other] = group
                    work.append(other)
        hopeless.add(first)   # the next limit is this size: a closure holding this one cannot be below it
        return sorted(positions)

    def _hopeless_to(self, group: Any, parent: dict) -> None:
        while group is not None:   # everything on the way here reaches it too
            self.hopeless.add(group)
            group = parent[group]


def stubborn_set(job: Job, state: JobState, steps: list, start: int, memo: dict | None = None,
                 limit: int | None = None) -> list[int] | None:
    """The positions in ``steps`` (every step enabled in ``state``, as ``(label, next state,
    ...)``) of the enabled steps of the stubborn set grown from ``steps[start]``; None when it
    would hold a visible step, needs an enabling set that is not known, or (``limit``) has
    ``limit`` enabled steps or more."""
    return _Closure(job, state, steps, {} if memo is None else memo).grow(start, limit)


def ample_function(job: Job) -> Callable[[JobState, list], list[int] | None]:
    """``ample(state, steps)``: the positions of the smallest stubborn set's enabled steps, or
    None to take every step (a failover may still happen, or no stubborn set is smaller)."""
    memo: dict = {}

    def ample(state: JobState, steps: list) -> list[int] | None:
        if state.coordinator.failovers < job.failures or len(steps) < 2:
            return None
        closure = _Closure(job, state, steps, memo)
        best = None
        for start in range(len(steps)):
            found = closure.grow(start, len(steps) if best is None else len(best))
            if found is not None:
                best = found
                if len(best) == 1:
                    break
        return best

    return ample


def _without_transactions(snapshot: Snapshot | None) -> Snapshot | None:
    return snapshot if snapshot is None or not snapshot.transactions else snapshot._replace(transactions=())


def forget_restore_data(job: Job, state: JobState) -> JobState:
    """``state`` without what only a restore reads, once no failover can happen any more: the
    pre-committed transactions in snapshots (F1 commits them again on restore; nothing else reads
    them). Then a sink's pre-commit (J5) and a notification that commits older transactions (J8)
    commute, which the reduction relies on (``precommit-tail`` in
    :mod:`~flipcheck.model.protocol.independence`)."""
    if state.coordinator.failovers < job.failures:
        return state
    tasks = state.tasks
    if any(snap.transactions for ts in tasks for _, snap in ts.outbox) or any(
            ts.snapshot is not None and ts.snapshot[1].transactions for ts in tasks):
        tasks = tuple(ts if not ts.outbox and ts.snapshot is None else ts._replace(
            outbox=tuple((k, _without_transactions(snap)) for k, snap in ts.outbox),
            snapshot=None if ts.snapshot is None else (ts.snapshot[0], _without_transactions(ts.snapshot[1])))
            for ts in tasks)
    coordinator = state.coordinator
    pending = coordinator.pending
    if pending is not None and any(snap is not None and snap.transactions for snap in pending.snapshots):
        coordinator = coordinator._replace(pending=pending._replace(
            snapshots=tuple(_without_transactions(snap) for snap in pending.snapshots)))
    if tasks is state.tasks and coordinator is state.coordinator:
        return state
    return state._replace(tasks=tasks, coordinator=coordinator)

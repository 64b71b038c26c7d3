"""Trace validation of batch job recovery (FLIP-383): is what a real run logged a behaviour of
:mod:`flipcheck.model.batch_recovery`?

A real run's log, read by ``flipcheck/flink/conform_batch_recovery.py``, becomes a list of
observations in the model's vocabulary (task indices of the model's topology, attempts counted
per task from 1 as the model counts its starts). Some step the model's rules, others only say
something about the state the model must be in:

* ``("start", t, attempt)``: B1, the ``attempt``-th start of task ``t``;
* ``("finish", t, snapshot)``: B3; ``snapshot`` is None when the finish wrote no coordinator
  snapshot, else the job vertices whose coordinators it snapshotted (the model's ``need``);
* ``("crash",)``: B6; ``("restart",)``: B8; ``("fail_recovery",)``: B11; ``("global_restart",)``: B12;
* ``("reconcile", release, missing, reserve)``: B10, each a frozenset of ``(task, attempt)``
  (attempt 0: the producer's attempt was never started);
* ``("recovering",)``: the restart found a non-empty event log (the JM is RECONCILING);
* ``("replayed", finished)``: the tasks the replay restored FINISHED, as ``(task, attempt)``;
* ``("revise", vertex, n)``: ``n`` unfinished tasks of a source vertex were reset (B8);
* ``("recovered",)``: the reconciliation ended, the JM runs; ``("done",)``: the job finished;
* ``("task_failover", t)``: the running JM restarts tasks after task ``t`` failed, which no rule
  does (the model has no task failures while a JM runs): never explained.

Everything the log does not show is searched: split assignments (B2), the min-pause (B4),
flushes (B5), partitions lost (B7), TaskManager reports (B9).
:func:`validate` keeps, per observation, every model state that explains the log so far (the
hidden steps closed over), and reports the first observation no state explains, naming the rule
it needed.

Example
-------
>>> from flipcheck.model.batch_recovery import Config
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> cfg = Config(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), splits=1)
>>> log = [("start", 0, 1), ("finish", 0, frozenset({"src"})), ("crash",), ("restart",), ("recovering",),
...        ("replayed", frozenset({(0, 1)})), ("reconcile", frozenset(), frozenset(), frozenset({(0, 1)})),
...        ("recovered",), ("start", 1, 1), ("finish", 1, frozenset({"sink"})), ("done",)]
>>> validate(cfg, log).conforms
True
>>> bad = validate(cfg, log[:5] + [("replayed", frozenset())] + log[6:])   # src restored CREATED
>>> bad.first_unexplained, bad.rule
(5, 'B8')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from flipcheck.model import batch_recovery as spec

__all__ = ["HIDDEN", "STEPS", "CHECKS", "NOT_MODELLED", "RULE_OF_OBSERVATION", "Verdict", "validate", "describe"]

# The actions no log line shows: the search inserts them anywhere.
HIDDEN = ("assign", "elapse", "flush", "lose", "report")
# Observations that are one model step, and those that only constrain the state.
STEPS = ("start", "finish", "crash", "restart", "reconcile", "fail_recovery", "global_restart")
CHECKS = ("recovering", "replayed", "revise", "recovered", "done", "task_failover")
NOT_MODELLED = "not modelled"
# The rule an observation shows (a check: the rule whose outcome it reads).
RULE_OF_OBSERVATION = {**{kind: spec.RULE_OF[kind] for kind in STEPS},
                       "recovering": "B8", "replayed": "B8", "revise": "B8", "recovered": "B10", "done": "B1-B12",
                       "task_failover": NOT_MODELLED}
# States kept per observation before the search gives up (a real run needs a few hundred).
DEFAULT_BUDGET = 200_000


@dataclass
class Verdict:
    conforms: bool
    explained: int                    # observations explained, in order
    first_unexplained: int | None     # the index of the first one no behaviour explains
    rule: str | None                  # the rule it needed (B1-B12)
    why: str
    states: int                       # model states visited


def _closure(config: spec.Config, states: set, budget: int) -> set:
    """``states`` and every state the hidden actions reach from them."""
    seen, todo = set(states), list(states)
    while todo and len(seen) < budget:
        state = todo.pop()
        for action in spec.enabled(config, state):
            if action[0] in HIDDEN:
                after = spec.step(config, state, action)
                if after not in seen:
                    seen.add(after)
                    todo.append(after)
    return seen


def _attempted(state: spec.State, tasks) -> frozenset:
    return frozenset((t, state.attempt[t]) for t in tasks)


def _holds(config: spec.Config, state: spec.State, o: tuple) -> bool:
    kind = o[0]
    if kind == "recovering":
        return state.phase == "reconciling"
    if kind == "replayed":
        return _attempted(state, (t for t, s in enumerate(state.status) if s == spec.FINISHED)) == o[1]
    if kind == "revise":
        topo = spec.topology(config)
        return sum(1 for t in topo.vertex_tasks[o[1]] if state.status[t] != spec.FINISHED) == o[2]
    if kind == "recovered":
        return state.phase in ("running", "done") and not state.restart_pending
    if kind == "done":
        return spec.is_done(config, state)
    if kind == "task_failover":
        return False
    raise ValueError(f"unknown observation {o!r}")


def _shows(config: spec.Config, state: spec.State, action: tuple, after: spec.State, o: tuple) -> bool:
    """Whether the model step ``state --action--> after`` is what ``o`` observed."""
    kind = o[0]
    if action[0] != kind:
        return False
    if kind == "start":
        return action[1] == o[1] and after.attempt[o[1]] == o[2]
    if kind == "finish":
        if action[1] != o[1]:
            return False
        snapshot = after.buffer[-1][2]
        if o[2] is None:
            return snapshot is None
        vertex = spec.topology(config).tasks[o[1]][0]
        return snapshot is not None and state.need | {vertex} == o[2]
    if kind == "reconcile":
        found = spec.reconciliation(config, state)
        return (_attempted(state, found.release), _attempted(state, found.missing),
                _attempted(state, found.reserve)) == tuple(o[1:4])
    return True


def describe(o: tuple) -> str:
    """An observation in words (for the verdict's ``why``)."""
    kind = o[0]
    if kind in ("start", "finish"):
        extra = f" attempt {o[2]}" if kind == "start" else (" without a coordinator snapshot" if o[2] is None
                                                           else f" snapshotting {', '.join(sorted(o[2]))}")
        return f"{kind} of task {o[1]}{extra}"
    if kind == "reconcile":
        return "reconcile: released {}, missed {}, reserved {}".format(*(sorted(s) for s in o[1:4]))
    if kind == "task_failover":
        return f"a task failover after task {o[1]} failed"
    return " ".join(str(part) for part in o)


def validate(config: spec.Config, observations: Sequence[tuple], budget: int = DEFAULT_BUDGET) -> Verdict:
    """Search the model's behaviours for one that shows ``observations`` in order (module doc)."""
    frontier = {spec.initial_state(config)}
    visited = 0
    for i, o in enumerate(observations):
        if o[0] not in STEPS and o[0] not in CHECKS:
            raise ValueError(f"observation {i}: unknown kind {o[0]!r}")
        closed = _closure(config, frontier, budget)
        visited += len(closed)
        if o[0] in CHECKS:
            after = {s for s in closed if _holds(config, s, o)}
        else:
            after = set()
            for state in closed:
                for action in spec.enabled(config, state):
                    if action[0] == o[0]:
                        stepped = spec.step(config, state, action)
                        if _shows(config, state, action, stepped, o):
                            after.add(stepped)
        if not after and RULE_OF_OBSERVATION[o[0]] == NOT_MODELLED:
            why = (f"{describe(o)}: the model has no task failure while a JobManager runs "
                   "(docs/batch-recovery.md, 'Not modelled')")
            return Verdict(False, i, i, NOT_MODELLED, why, visited)
        if not after:
            phases = sorted({s.phase for s in closed})
            why = (f"no behaviour of the model shows {describe(o)} here (rule {RULE_OF_OBSERVATION[o[0]]}; "
                   f"the model's job is {'/'.join(phases)} after the {i} observations before)")
            return Verdict(False, i, i, RULE_OF_OBSERVATION[o[0]], why, visited)
        frontier = after
    return Verdict(True, len(observations), None, None, f"{len(observations)} observations explained", visited)

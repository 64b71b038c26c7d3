"""Trace validation of FLIP-27 split assignment: is a real run's split history a behaviour of
:mod:`flipcheck.model.split_assignment` (the coordinator design, the one Flink shipped)?

A real run's log shows what the enumerator and each reader did with the splits (our job's own
lines, and ``SourceCoordinator``'s: ``flipcheck/flink/conform_split_assignment.py`` reads them).
Each becomes an *observation*, and each observation is one step of the model, or a comparison
of the model's state with what the log says. ``r`` is a reader (a source subtask), ``k`` a
checkpoint id of the model (the log's ids are renumbered 1, 2, ... in the order of the
enumerator's snapshots: a failover may use up a real id without a coordinator snapshot), ``x``
a split::

    ("start", pending)        the enumerator (re)started with ``pending``: the first is the
                              initial state, each later one a global failover            A13
    ("register", r)           r's reader registered                                       A1
    ("assign", r, x)          the enumerator sent x to r: its smallest unassigned split   A2
    ("received", r, x)        r's reader received x: the head of its channel              A3
    ("snapshot", r, k, xs)    r's reader snapshot k holding xs: k's barrier is the head   A3
    ("finished", r, x)        r finished x: its smallest split                            A4
    ("coordinator-snapshot", k, pending)   the enumerator's snapshot of k                 A5
    ("completed", k)          the coordinator was told k completed                        A7
    ("aborted", k)            the coordinator was told k was aborted                      A8
    ("lose", r, x)            the RPC carrying x to r was lost: the head of r's channel   A9
    ("failed", r)             r's attempt failed (or was cancelled); when an RPC to it was
                              lost, this is when the loss was noticed                      A10/A11
    ("reset", r, k)           r was reset to checkpoint k (None: no checkpoint)           A11+A12
    ("add-back", r, xs)       the splits the reset gave back to the enumerator            A12
    ("restored", r, xs)       r's new attempt restored xs                                 A12/A13
    ("no-more", r)            the enumerator had nothing left for r                       A2
    ("end", r)                r's reader ended: no split left and none to come

The model's readers are the source subtasks, and one more *participant* stands for the rest of
the job: a checkpoint completes in Flink only once every task has acknowledged it, so its
barrier reaches that participant in a step the log does not show. It never registers, so it
never gets a split. The steps no line shows are searched: the barriers' injection at the
readers (A6), that participant's acknowledgement, and the acknowledgement of a reader whose
input ended (a finished task is acknowledged for, FLIP-147). The search is depth-first over
``(observations explained, model state, what the log still owes)``, fewest hidden steps first.

Example
-------
>>> run = [("start", frozenset({0, 1})), ("register", 0), ("assign", 0, 0), ("coordinator-snapshot", 1, frozenset({1})),
...        ("received", 0, 0), ("snapshot", 0, 1, frozenset({0})), ("completed", 1), ("assign", 0, 1)]
>>> validate(1, 2, run).conforms
True
>>> verdict = validate(1, 2, run[:2] + [("assign", 0, 1)])
>>> verdict.conforms, verdict.explained
(False, 2)
>>> print(verdict.why)
A2 assign: the enumerator's smallest unassigned split is 0, not 1
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from flipcheck.model.split_assignment import COORDINATOR, RULE_OF, SPLIT, Config, enabled, initial_state, step

__all__ = ["Verdict", "validate", "DEFAULT_BUDGET", "MAX_HIDDEN_STEPS", "OBSERVATION_KINDS"]

OBSERVATION_KINDS = ("start", "register", "assign", "received", "snapshot", "finished", "coordinator-snapshot",
                     "completed", "aborted", "lose", "failed", "reset", "add-back", "restored", "no-more", "end")
DEFAULT_BUDGET = 500_000
# Hidden steps between two observations: barrier injection, and acknowledgements of the rest of
# the job and of ended readers (a few per checkpoint).
MAX_HIDDEN_STEPS = 8


class Verdict(NamedTuple):
    conforms: bool
    explained: int              # observations explained, in order
    first_unexplained: int | None
    why: str | None             # the rule the first unexplained observation breaks, and how
    states: int
    trace: tuple = ()           # the model actions of the behaviour found (up to where it stopped)


class _Owed(NamedTuple):
    """What the log still owes the search: readers whose input ended, the splits each reset
    gave back (an ``add-back`` line follows), checkpoints the model completed."""

    ended: frozenset = frozenset()
    add_back: tuple = ()        # per reader: a frozenset owed, or None
    completed: frozenset = frozenset()
    started: bool = False       # the enumerator's first start was read
    unprocessed: frozenset = frozenset()   # (reader, split) delivered to the task, its "received" line due


def _rule(action: str) -> str:
    return f"{RULE_OF[action]} {action}"


def _ids(items) -> frozenset:
    return frozenset(x for x, _ in items)


def _apply(config: Config, state, owed: _Owed, o: tuple):
    """``(state, owed, actions)`` after observation ``o``, or a string: why no step explains it."""
    kind = o[0]
    readers = config.readers - 1            # the last model reader is the rest of the job

    def act(state, owed, action):
        if action not in enabled(config, state):
            return None
        after = step(config, state, action)
        if after.completed is not None and after.completed != state.completed:
            owed = owed._replace(completed=owed.completed | {after.completed.id})
        return after, owed

    if kind in ("register", "assign", "received", "snapshot", "finished", "lose", "failed", "reset", "add-back",
                "restored", "no-more", "end") and not 0 <= o[1] < readers:
        return f"the log names subtask {o[1]}, and the source has {readers}"
    if kind == "start":
        if not owed.started:
            if state.pool != o[1]:
                return f"{_rule('global')}: the enumerator starts with {sorted(state.pool)}, not {sorted(o[1])}"
            return state, owed._replace(started=True), ()
        done = act(state, owed, ("global",))
        if done is None:
            return f"{_rule('global')}: no global failover is possible here (its failures are used up)"
        state, owed = done
        if state.pool != o[1]:
            return (f"{_rule('global')}: the enumerator restarts from checkpoint "
                    f"{state.completed.id if state.completed else 'none'} with {sorted(state.pool)}, not {sorted(o[1])}")
        return state, owed._replace(ended=frozenset(), add_back=(None,) * readers, unprocessed=frozenset()), (("global",),)
    if kind == "register":
        done = act(state, owed, ("register", o[1]))
        return done + ((("register", o[1]),),) if done else f"{_rule('register')}: reader {o[1]} is registered already"
    if kind == "assign":
        r, x = o[1], o[2]
        if not state.pool:
            return f"{_rule('assign')}: the enumerator has no unassigned split, and it sent split {x}"
        if min(state.pool) != x:
            return f"{_rule('assign')}: the enumerator's smallest unassigned split is {min(state.pool)}, not {x}"
        done = act(state, owed, ("assign", r))
        return done + ((("assign", r),),) if done else f"{_rule('assign')}: reader {r} is not registered"
    if kind == "no-more":
        if state.pool:
            return f"{_rule('assign')}: the enumerator still has {sorted(state.pool)} and told reader {o[1]} there are no more"
        return state, owed, ()
    if kind == "received":
        r, x = o[1], o[2]
        if (r, x) in owed.unprocessed:     # delivered to the task before; the reader processes it now
            return state, owed._replace(unprocessed=owed.unprocessed - {(r, x)}), ()
        head = state.channels[r][0] if state.channels[r] else None
        if head is None or head[0] != SPLIT or head[1] != x:
            return f"{_rule('deliver')}: split {x} is not the next on its way to reader {r} (next: {_head(state, r)})"
        done = act(state, owed, ("deliver", r))
        return done + ((("deliver", r),),) if done else f"{_rule('deliver')}: reader {r} is not running"
    if kind == "snapshot":
        r, k, xs = o[1], o[2], o[3]
        waiting = sorted(x for w, x in owed.unprocessed if w == r)
        if waiting:
            return (f"{_rule('deliver')}: split {waiting[0]} reached reader {r} before the barrier of checkpoint {k}, "
                    "and the reader snapshot before it processed the split")
        head = state.channels[r][0] if state.channels[r] else None
        if head is None or head[0] == SPLIT or head[1] != k:
            return f"{_rule('deliver')}: the barrier of checkpoint {k} is not the next on its way to reader {r} (next: {_head(state, r)})"
        done = act(state, owed, ("deliver", r))
        if done is None:
            return f"{_rule('deliver')}: reader {r} is not running"
        held = _ids(done[0].readers[r].splits)
        if held != xs:
            return f"{_rule('deliver')}: reader {r} holds {sorted(held)} at checkpoint {k}, and its snapshot lists {sorted(xs)}"
        return done + ((("deliver", r),),)
    if kind == "finished":
        r, x = o[1], o[2]
        held = _ids(state.readers[r].splits)
        if not held or min(held) != x:
            return f"{_rule('finish')}: reader {r} reads {sorted(held)} smallest first, and it finished split {x}"
        return act(state, owed, ("finish", r)) + ((("finish", r),),)
    if kind == "coordinator-snapshot":
        k, pending = o[1], o[2]
        if state.next_id != k:
            return f"{_rule('trigger')}: the next checkpoint is {state.next_id}, not {k}"
        done = act(state, owed, ("trigger",))
        if done is None:
            why = "checkpoint " + str(state.pending.id) + " is pending" if state.pending else "a reader is not running"
            return f"{_rule('trigger')}: no checkpoint can start here ({why})"
        if done[0].pending.pool != pending:
            return f"{_rule('trigger')}: the enumerator holds {sorted(state.pool)} at checkpoint {k}, and its snapshot lists {sorted(pending)}"
        return done + ((("trigger",),),)
    if kind == "completed":
        k = o[1]
        if k not in owed.completed:
            return f"{_rule('notify')}: checkpoint {k} has not completed (not every reader has acknowledged it)"
        if state.completed is not None and state.completed.id == k and state.notified < k:
            return act(state, owed, ("notify",)) + ((("notify",),),)
        return state, owed, ()            # an older completion, told late: the model notifies the latest only
    if kind == "aborted":
        k = o[1]
        if state.pending is not None and state.pending.id == k:
            return act(state, owed, ("expire",)) + ((("expire",),),)
        if k in owed.completed:
            return f"{_rule('expire')}: checkpoint {k} completed, and it was aborted"
        return state, owed, ()            # aborted already by a failover (A10-A13)
    if kind == "lose":
        r, x = o[1], o[2]
        head = state.channels[r][0] if state.channels[r] else None
        if head is None or head[0] != SPLIT or head[1] != x:
            return f"{_rule('lose')}: split {x} is not the next on its way to reader {r} (next: {_head(state, r)})"
        done = act(state, owed, ("lose", r))
        return done + ((("lose", r),),) if done else f"{_rule('lose')}: no RPC can be lost here (its failures are used up)"
    if kind == "failed":
        r = o[1]
        if not state.readers[r].alive:
            return state, owed, ()        # the attempt failed already (a second line of one failure)
        failure = ("detect", r) if state.readers[r].lost else ("fail", r)   # a lost RPC noticed, or a failure
        done = act(state, owed, failure)
        if done is not None:
            return done[0], _forget(done[1], r), (failure,)
        done = act(state, owed, ("fail", r))
        if done is None:
            return f"{_rule('fail')}: no failure is possible here (its failures are used up)"
        return done[0], _forget(done[1], r), (("fail", r),)
    if kind == "reset":
        r, k = o[1], o[2]
        actions = ()
        if state.readers[r].alive:
            failure = ("detect", r) if state.readers[r].lost else ("fail", r)
            done = act(state, owed, failure)
            if done is None:
                return f"{_rule('fail')}: no failure is possible here (its failures are used up)"
            state, owed = done
            actions = (failure,)
        restored = state.completed.id if state.completed is not None else None
        if restored != k:
            return (f"{_rule('reset')}: reader {r} restores checkpoint {restored if restored is not None else 'none'}, "
                    f"the latest completed, not {k if k is not None else 'none'}")
        before = state.pool
        state, owed = act(state, owed, ("reset", r))
        back = list(owed.add_back)
        back[r] = state.pool - before
        return state, _forget(owed, r)._replace(add_back=tuple(back)), actions + (("reset", r),)
    if kind == "add-back":
        r, xs = o[1], o[2]
        owed_back = owed.add_back[r] if r < len(owed.add_back) else None
        if owed_back is None:
            return f"{_rule('reset')}: splits {sorted(xs)} added back from reader {r}, which was not reset"
        if owed_back != xs:
            return (f"{_rule('reset')}: reader {r}'s reset gives back {sorted(owed_back)} (assigned after the restored "
                    f"checkpoint), not {sorted(xs)}")
        back = list(owed.add_back)
        back[r] = None
        return state, owed._replace(add_back=tuple(back)), ()
    if kind == "restored":
        r, xs = o[1], o[2]
        held = _ids(state.readers[r].splits)
        if held != xs:
            return f"{_rule('reset')}: reader {r} restores {sorted(held)}, not {sorted(xs)}"
        return state, owed, ()
    if kind == "end":
        r = o[1]
        if state.readers[r].splits or state.channels[r] and any(i[0] == SPLIT for i in state.channels[r]):
            return f"{_rule('finish')}: reader {r} ended with splits still to read ({_head(state, r)})"
        return state, owed._replace(ended=owed.ended | {r}), ()
    return f"unknown observation {o!r}"


def _forget(owed: _Owed, r: int) -> _Owed:
    """Reader ``r``'s attempt is gone: nothing of it is still due."""
    return owed._replace(ended=owed.ended - {r}, unprocessed=frozenset(p for p in owed.unprocessed if p[0] != r))


def _head(state, r: int) -> str:
    channel = state.channels[r]
    if not channel:
        return "nothing" + (f", {len(state.held[r])} held at the gateway" if state.held[r] else "")
    head = channel[0]
    return f"split {head[1]}" if head[0] == SPLIT else f"the barrier of checkpoint {head[1]}"


def _hidden(config: Config, state, owed: _Owed) -> list[tuple]:
    """The steps no log line shows: A6; acknowledgements of the rest of the job and of ended
    readers; and an event's arrival at its task that the checkpoint waits for (its reader's
    line follows, when the reader processes it: recovery facts §3.9)."""
    steps = []
    possible = enabled(config, state)
    if ("trigger_tasks",) in possible:
        steps.append(("trigger_tasks",))
    if state.pending is not None and not state.pending.tasks_triggered:
        for r, x in sorted(state.pending.unconfirmed):
            channel = state.channels[r]
            if channel and channel[0][0] == SPLIT and channel[0][1] == x and ("deliver", r) in possible:
                steps.append(("deliver", r))
    rest = config.readers - 1
    for r in (rest, *sorted(owed.ended)):
        channel = state.channels[r]
        if channel and channel[0][0] != SPLIT and ("deliver", r) in possible:
            steps.append(("deliver", r))
    return steps


def validate(readers: int, splits: int, observations: Sequence[tuple], *, budget: int = DEFAULT_BUDGET) -> Verdict:
    """Is ``observations`` (in log order) what some behaviour of the coordinator design shows,
    for ``readers`` source subtasks and ``splits`` splits? Checkpoints and failures are bounded
    by what the log holds."""
    checkpoints = sum(1 for o in observations if o[0] == "coordinator-snapshot")
    starts = sum(1 for o in observations if o[0] == "start")
    failures = sum(1 for o in observations if o[0] in ("lose", "failed", "reset")) + max(starts - 1, 0)
    config = Config(readers=readers + 1, splits=splits, checkpoints=max(checkpoints, 1), failures=failures,
                    design=COORDINATOR)
    start = (0, initial_state(config), _Owed(add_back=(None,) * readers))
    stack = [(start, 0, ())]
    seen = set()
    best = (-1, None, ())
    states = 0
    while stack and states < budget:
        (i, state, owed), hidden, trace = stack.pop()
        if (i, state, owed) in seen:
            continue
        seen.add((i, state, owed))
        states += 1
        if i == len(observations):
            return Verdict(True, i, None, None, states, trace)
        if hidden < MAX_HIDDEN_STEPS:
            for action in reversed(_hidden(config, state, owed)):
                after = step(config, state, action)
                more = owed
                if action[0] == "deliver" and state.channels[action[1]][0][0] == SPLIT:
                    more = owed._replace(unprocessed=owed.unprocessed | {(action[1], state.channels[action[1]][0][1])})
                if after.completed is not None and after.completed != state.completed:
                    more = more._replace(completed=more.completed | {after.completed.id})
                stack.append(((i, after, more), hidden + 1, trace + (action,)))
        result = _apply(config, state, owed, observations[i])
        if isinstance(result, str):
            # At the furthest observation, the last reason found is of the behaviour that went
            # furthest in hidden steps (the search tries them after the observation itself).
            if i >= best[0]:
                best = (i, result, trace)
            continue
        after, more, actions = result
        stack.append(((i + 1, after, more), 0, trace + actions))
    i, why, trace = best
    if not stack and i < 0:
        i, why = 0, "no behaviour"
    if stack and states >= budget:   # the budget, not the log, ended the search
        why = f"{why} (the search stopped after {states:,} states)" if why else f"the search stopped after {states:,} states"
    return Verdict(False, max(i, 0), max(i, 0), why, states, trace)

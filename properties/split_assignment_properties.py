"""Properties of FLIP-27 split assignment with checkpoints (seed 003; recovery facts §3.6 invariants).

Every property is a plain function of one step, ``(history, action, before, after) ->
list[Violation]``, where ``before`` and ``after`` are
:class:`~flipcheck.model.split_assignment.View` s (the same for the specification and for any
implementation) and ``history`` is the :class:`History` of the run so far (which split went to
which reader in which epoch, which events were lost). :func:`advance` updates the history after a
step; :func:`check_step` runs every property. The initial state is checked with ``action=None``
and ``before=None``. The same functions serve exhaustive exploration, the stateful hypothesis
machine, seeded sweeps and counterexample rendering.

Liveness (every split is eventually read) needs the reachable graph:
:func:`flipcheck.properties.split_assignment_explore.explore_liveness`.

Example
-------
>>> from flipcheck.model.split_assignment import Config, initial_state, step, view
>>> cfg = Config(readers=1, splits=1)
>>> s0 = initial_state(cfg)
>>> h = start(cfg)
>>> check_step(h, None, None, view(cfg, s0))
[]
>>> s1 = step(cfg, s0, ("register", 0))
>>> v = view(cfg, s1)._replace(pool=frozenset())        # a view where split 0 vanished
>>> [x.property for x in check_step(h, ("register", 0), view(cfg, s0), v)]
['no_split_lost']
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from flipcheck.model.split_assignment import NO_CHECKPOINT, SPLIT, Config, View, owners, settled

from .refinement import REFINEMENT
from .violation import Property, Violation

__all__ = [
    "History", "start", "advance", "check_step", "inbox_splits",
    "no_split_lost", "no_split_assigned_twice", "completed_checkpoint_is_partition",
    "reset_returns_only_later_splits", "events_wait_for_barrier", "unconfirmed_event_fails_checkpoint",
    "coordinator_snapshot_first", "SPLIT_PROPERTIES", "PROPERTY_NAMES", "LIVENESS", "REFINEMENT",
]

LIVENESS = "every_split_eventually_read"


class History(NamedTuple):
    """What a run did so far, as far as the properties need it."""

    universe: frozenset                       # every split of the source
    epochs: frozenset = frozenset()           # (reader, split, epoch): splits given to a reader, not yet returned
    lost: frozenset = frozenset()             # (reader, split): events lost on the way, not yet noticed
    unconfirmed: frozenset = frozenset()      # (reader, split) in flight at the pending checkpoint's coordinator snapshot
    tainted: bool = False                     # one of those was lost
    early: frozenset = frozenset()            # (reader, split) given back when the reader failed, before its reset


def start(config: Config) -> History:
    return History(frozenset(range(config.splits)))


def inbox_splits(v: View, reader: int) -> list:
    return [i[1] for i in v.inbox[reader] if i[0] == SPLIT]


def _epoch(history: History, reader: int, split) -> int | None:
    found = [e for r, x, e in history.epochs if r == reader and x == split]
    return max(found) if found else None


def _listed(items) -> str:
    return "{" + ", ".join(map(str, sorted(items))) + "}"


# -- state invariants --------------------------------------------------------------------------


def no_split_lost(history: History, action, before: View | None, after: View) -> list[Violation]:
    """Once every reader runs and nothing is lost unnoticed, every split is owned by someone:
    the enumerator, a message to a reader, or a reader (reading or done)."""
    if not settled(after):
        return []
    missing = [x for x in sorted(history.universe) if not owners(after, x)]
    if not missing:
        return []
    return [Violation("no_split_lost", f"split {_listed(missing)} is owned by nobody after {action}", missing)]


def no_split_assigned_twice(history: History, action, before: View | None, after: View) -> list[Violation]:
    """No split is owned twice: not by two readers, not by a reader and the enumerator."""
    problems = []
    for x in sorted(history.universe):
        who = owners(after, x)
        if len(who) > 1:
            problems.append(Violation("no_split_assigned_twice", f"split {x} is owned by {', '.join(who)} after {action}",
                                      (x, who)))
    return problems


def completed_checkpoint_is_partition(history: History, action, before: View | None, after: View) -> list[Violation]:
    """A newly completed checkpoint's enumerator part and reader parts partition the splits."""
    c = after.completed
    if c is None or (before is not None and before.completed == c):
        return []
    counts = Counter(c.pool)
    for splits, done in c.readers:
        counts.update(splits)
        counts.update(done)
    twice = sorted(x for x in history.universe if counts[x] > 1)
    absent = sorted(x for x in history.universe if counts[x] == 0)
    if not twice and not absent:
        return []
    parts = []
    if twice:
        parts.append(f"holds split {_listed(twice)} twice")
    if absent:
        parts.append(f"misses split {_listed(absent)}")
    return [Violation("completed_checkpoint_is_partition", f"checkpoint {c.id} " + " and ".join(parts), (twice, absent))]


# -- step properties -------------------------------------------------------------------------------


def reset_returns_only_later_splits(history: History, action, before: View | None, after: View) -> list[Violation]:
    """A reader's reset gives back exactly the splits it got after the checkpoint it restores
    (to the enumerator, or on its persistent channel); the earlier ones are in its restored state."""
    if action is None or action[0] != "reset":
        return []
    r = action[1]
    restored_id = before.completed.id if before.completed is not None else NO_CHECKPOINT
    returned = set(after.pool - before.pool) | set(inbox_splits(after, r)) | {x for w, x in history.early if w == r}
    expected = {x for reader, x, e in history.epochs if reader == r and e > restored_id}
    if returned == expected:
        return []
    extra, missing = sorted(returned - expected), sorted(expected - returned)
    message = f"reset of reader {r} to checkpoint {restored_id} returned {_listed(returned)}, " \
              f"expected the splits assigned to it after that checkpoint: {_listed(expected)}"
    return [Violation("reset_returns_only_later_splits", message, (extra, missing))]


def events_wait_for_barrier(history: History, action, before: View | None, after: View) -> list[Violation]:
    """A split assigned after a checkpoint's coordinator snapshot reaches its reader only after
    that checkpoint's barrier did (or the checkpoint completed or aborted)."""
    if action is None or action[0] != "deliver" or not before.inbox[action[1]]:
        return []
    r = action[1]
    kind, split = before.inbox[r][0]
    c = before.pending
    if kind != SPLIT or c is None or before.coordinator_snapshot < c or before.snapshots[r] >= c:
        return []
    epoch = _epoch(history, r, split)
    if epoch is None or epoch <= c:
        return []
    return [Violation("events_wait_for_barrier",
                      f"split {split}, assigned after checkpoint {c}'s coordinator snapshot, reached reader {r} "
                      f"before checkpoint {c}'s barrier", (r, split, c))]


def unconfirmed_event_fails_checkpoint(history: History, action, before: View | None, after: View) -> list[Violation]:
    """A checkpoint does not complete if an event sent before its coordinator snapshot was lost."""
    if before is None or before.pending is None or after.completed is None:
        return []
    if after.completed.id != before.pending or not history.tainted:
        return []
    lost = sorted(x for _, x in history.unconfirmed & history.lost) or "an event"
    return [Violation("unconfirmed_event_fails_checkpoint",
                      f"checkpoint {before.pending} completed although split {lost} sent before it was lost",
                      before.pending)]


def coordinator_snapshot_first(history: History, action, before: View | None, after: View) -> list[Violation]:
    """No reader snapshots checkpoint c before the coordinator did (FLINK-18641)."""
    if action is None or action[0] != "deliver":
        return []
    r = action[1]
    c = after.snapshots[r]
    if c == before.snapshots[r] or c == 0 or before.coordinator_snapshot >= c:
        return []
    return [Violation("coordinator_snapshot_first",
                      f"reader {r} snapshotted checkpoint {c} before the coordinator did", (r, c))]


# -- history ---------------------------------------------------------------------------------------


def advance(history: History, action, before: View, after: View) -> History:
    """The history after ``action`` took ``before`` to ``after``."""
    kind = action[0]
    epochs, lost, unconfirmed, tainted = history.epochs, history.lost, history.unconfirmed, history.tainted
    early = history.early
    if kind == "assign":
        r = action[1]
        for x in before.pool - after.pool:
            epochs = epochs | {(r, x, before.coordinator_snapshot + 1)}
    elif kind == "deliver" and before.inbox[action[1]] and before.inbox[action[1]][0][0] == SPLIT:
        unconfirmed = unconfirmed - {(action[1], before.inbox[action[1]][0][1])}
    elif kind == "lose":
        r = action[1]
        x = before.inbox[r][0][1]
        lost = lost | {(r, x)}
        tainted = tainted or (r, x) in unconfirmed
    elif kind in ("detect", "fail"):
        lost = frozenset(e for e in lost if e[0] != action[1])
        early = early | {(action[1], x) for x in after.pool - before.pool}
    elif kind == "reset":
        r = action[1]
        kept = after.splits[r] | after.done[r] | set(inbox_splits(after, r))
        epochs = frozenset(e for e in epochs if e[0] != r or e[1] in kept)
        early = frozenset(e for e in early if e[0] != r)
    elif kind == "global":
        epochs = frozenset(e for e in epochs if e[1] in after.splits[e[0]] | after.done[e[0]])
        lost, early = frozenset(), frozenset()
    if after.coordinator_snapshot > before.coordinator_snapshot:
        unconfirmed = frozenset((r, x) for r in range(len(before.inbox)) for x in inbox_splits(before, r)) | lost
        tainted = bool(lost)
    if after.pending is None:
        unconfirmed, tainted = frozenset(), False
    return History(history.universe, epochs, lost, unconfirmed, tainted, early)


_SEED = "seed 003 (FLIP-27)"
SPLIT_PROPERTIES = (
    Property("no_split_lost", no_split_lost,
             "Whenever every reader runs, every split is owned: enumerator, on its way, or a reader.",
             "recovery facts §3.6 Invariants 'No split lost'; StarRocks PR #503 review: splits 'silently skipped'"),
    Property("no_split_assigned_twice", no_split_assigned_twice,
             "No split is owned twice.",
             "recovery facts §3.6 Invariants 'No split assigned twice (exactly-once)'; FLINK-20290"),
    Property("completed_checkpoint_is_partition", completed_checkpoint_is_partition,
             "Every completed checkpoint's enumerator and reader parts partition the splits.",
             f"{_SEED}: 'Checkpoints and splits are naturally aligned' / 'Careful coordination between split "
             "assignment and checkpoint triggering'; recovery facts §3 'After a global reset ... partition the splits'"),
    Property("reset_returns_only_later_splits", reset_returns_only_later_splits,
             "A reader reset returns exactly its splits assigned after the restored checkpoint.",
             "recovery facts §3.3 subtaskReset / getAndRemoveUncheckpointedAssignment (key > restoredId, FLINK-20413); "
             f"{_SEED} mechanism 1: 'will get the previously assigned splits'"),
    Property("events_wait_for_barrier", events_wait_for_barrier,
             "Events sent after a coordinator snapshot reach the reader only after that checkpoint's barrier.",
             "recovery facts §3.5 'Ordering' and SubtaskGatewayImpl (FLINK-28606); OperatorCoordinator javadoc"),
    Property("unconfirmed_event_fails_checkpoint", unconfirmed_event_fails_checkpoint,
             "A checkpoint fails if an event sent before it was not confirmed.",
             "recovery facts §3.6 'Fail-closed', completeCheckpointOnceEventsAreDone (FLINK-21996, FLINK-23233)"),
    Property("coordinator_snapshot_first", coordinator_snapshot_first,
             "The coordinator snapshot of a checkpoint precedes every task's snapshot of it.",
             "recovery facts §3.5 'Ordering': every coordinator future completes before any task is triggered (FLINK-18641)"),
)
PROPERTY_NAMES = tuple(p.name for p in SPLIT_PROPERTIES)


def check_step(history: History, action, before: View | None, after: View, properties=SPLIT_PROPERTIES) -> list[Violation]:
    """Every property on one step (``action=None``, ``before=None`` for the initial state)."""
    found: list[Violation] = []
    for prop in properties:
        found.extend(prop.check(history, action, before, after))
    return found

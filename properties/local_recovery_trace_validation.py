"""Trace validation of task-local recovery: is what a real run's log shows a behaviour of
:mod:`flipcheck.model.local_recovery`?

``flipcheck conform`` turns the lines of Flink's local store, its restore procedure and its
scheduler (:mod:`flipcheck.flink.conform_local_recovery`) into *observations*, tuples in the
model's terms; ``v`` is a job vertex, ``s`` a subtask, ``n`` a checkpoint, ``a`` an allocation
(a slot), ``tm`` a TaskManager::

    ("store-created", v, s, a)     a new local store for (v, s) under a          L4 (no live one)
    ("store-reused", v, s, a)      the live store of (v, s) under a is reused    L4
    ("stored", v, s, n)            (v, s) stored its local copy of n             store_step "store"
    ("confirmed", v, s, n)         n completed: the store prunes older copies    L1
    ("aborted", v, s, n)           n was aborted: the store drops it             L2
    ("discarded", v, s, n)         the store discarded its copy of n             L1-L4 (none kept)
    ("retrieved", v, s, n, found)  a restore of n looked for a local copy        L3
    ("restore-attempt", v, s, k, m)   keyed state restores from alternative k of m   P1-P3
    ("restore-failed", v, s, k, m)    alternative k of m could not be read        P3
    ("deploy", v, s, attempt, a, tm, parallelism)   attempt of (v, s) runs in slot a on tm   A1-A3
    ("released", a)                the TaskManager released slot a's local state    L4
    ("taskmanager-lost", tm)       tm and its local copies are gone              L4
    ("damaged", v, s, n, a)        the files of (v, s)'s local copy of n under a were deleted

Lines of the local store name the subtask, not its slot; a subtask may have a live store in
two slots (before a lost TaskManager's stores are disposed). The search follows every live
store such a line may be about, keeping the model states (one :class:`LocalStore` per slot and
subtask, stepped by :func:`~flipcheck.model.local_recovery.store_step`) that explain every
observation so far; a branch dies when the model's step disagrees with the line. A restore's
alternatives are the model's (:func:`prioritized_alternatives` over the primary and the local
copy the store retrieved, unreadable once damaged) and the one read is :func:`restore`'s. Each
restart round of a vertex (its subtasks' deployments of one attempt number) is held to
:func:`check_assignment`: its slots are free when their TaskManager was not lost. Slot sharing
puts one subtask of every vertex in a slot, so the rules hold per vertex.

Example
-------
>>> run = [("deploy", "map", 0, 0, "a1", "tm1", 1), ("store-created", "map", 0, "a1"),
...        ("stored", "map", 0, 3), ("confirmed", "map", 0, 3),
...        ("deploy", "map", 0, 1, "a1", "tm1", 1), ("store-reused", "map", 0, "a1"),
...        ("retrieved", "map", 0, 3, True), ("restore-attempt", "map", 0, 1, 2)]
>>> validate(run).conforms
True
>>> lost = run[:4] + [("taskmanager-lost", "tm1"), ("deploy", "map", 0, 1, "a2", "tm2", 1),
...                   ("store-created", "map", 0, "a2"), ("retrieved", "map", 0, 3, True)]
>>> verdict = validate(lost)
>>> verdict.first_unexplained, verdict.why
(7, 'L3: the local store of map[0] in slot a2 holds no copy of checkpoint 3 (it holds none), yet Flink found one')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from flipcheck.model.local_recovery import (LOCAL, KeyedHandle, LocalStore, Slot, SlotRequest, Assignment,
                                            check_assignment, initial_store, prioritized_alternatives, restore,
                                            store_step)

__all__ = ["OBSERVATION_KINDS", "Verdict", "RestoreSummary", "validate"]

OBSERVATION_KINDS = ("store-created", "store-reused", "stored", "confirmed", "aborted", "discarded", "retrieved",
                     "restore-attempt", "restore-failed", "deploy", "released", "taskmanager-lost", "damaged")


class RestoreSummary(NamedTuple):
    """One keyed restore as the model explained it: which subtask, from which checkpoint, in which
    slot, and whether it read the local copy."""

    vertex: str
    subtask: int
    checkpoint: int
    slot: str
    local: bool


@dataclass
class Verdict:
    conforms: bool
    explained: int                       # observations explained (a prefix)
    first_unexplained: int | None = None
    why: str = ""
    restores: list = field(default_factory=list)   # RestoreSummary of each keyed restore (first branch)
    states: int = 0                      # model states visited


class _Branch(NamedTuple):
    stores: tuple       # sorted ((slot, v, s), LocalStore)
    retrieved: tuple    # sorted ((v, s), (slot, n, found)): each subtask's latest local lookup
    restoring: tuple    # sorted ((v, s), (k, m)): a keyed restore under way, at alternative k of m
    restores: tuple     # RestoreSummary, in order


def _get(pairs: tuple, key):
    return next((value for k, value in pairs if k == key), None)


def _put(pairs: tuple, key, value) -> tuple:
    rest = [(k, v) for k, v in pairs if k != key]
    if value is not None:
        rest.append((key, value))
    return tuple(sorted(rest, key=lambda kv: repr(kv[0])))


def _live(branch: _Branch, v: str, s: int) -> list:
    return [key for key, store in branch.stores if key[1:] == (v, s) and not store.disposed]


def _alternatives(branch: _Branch, v: str, s: int, damaged: set) -> tuple[tuple, int, int] | None:
    """P1-P3 for (v, s)'s restore after its latest lookup: (alternatives, the one read, of how
    many); None when no lookup came first."""
    lookup = _get(branch.retrieved, (v, s))
    if lookup is None:
        return None
    slot, n, found = lookup
    primary = (KeyedHandle(s, s + 1, n),)
    local = (KeyedHandle(s, s + 1, n, LOCAL, (slot, v, s, n) not in damaged),) if found else ()
    alternatives = prioritized_alternatives(primary, local)
    return alternatives, restore(alternatives).attempts, len(alternatives)


def _end_restore(branch: _Branch, v: str, s: int, damaged: set) -> tuple[_Branch | None, str]:
    """Close (v, s)'s keyed restore under way: Flink went on with the alternative it was at."""
    under_way = _get(branch.restoring, (v, s))
    if under_way is None:
        return branch, ""
    k, _ = under_way
    alternatives, read, _ = _alternatives(branch, v, s, damaged)
    if k != read:
        which = "unreadable" if not all(h.readable for h in alternatives[k - 1]) else "not the first readable one"
        return None, f"P3: {v}[{s}] restored from alternative {k}, but the model reads alternative {read} ({k} is {which})"
    slot, n, _ = _get(branch.retrieved, (v, s))
    summary = RestoreSummary(v, s, n, slot, any(h.location == LOCAL for h in alternatives[k - 1]))
    return branch._replace(restoring=_put(branch.restoring, (v, s), None), restores=branch.restores + (summary,)), ""


def _stores_a_line_may_be_about(branch: _Branch, kind: str, v: str, s: int) -> list:
    """The stores of subtask ``(v, s)`` a ``kind`` line may be about. A discard: any of them. A
    restore: a live one only. A store, confirmation or abort: the live one when there is one
    (branching over the disposed ones too multiplied the search: 320 -> 228,333 states on
    local-recovery-taskmanager-loss), else any disposed one (divergence 34)."""
    every = [key for key, _ in branch.stores if key[1:] == (v, s)]
    if kind == "discarded":
        return every
    live = _live(branch, v, s)
    if live or kind == "retrieved":
        return live
    return every


def _step(branch: _Branch, o: tuple, damaged: set) -> list[tuple[_Branch | None, str]]:
    """Every successor of ``branch`` explaining ``o`` (a dead one: ``(None, why)``)."""
    kind = o[0]
    if kind in ("store-created", "store-reused"):
        _, v, s, slot = o
        store = _get(branch.stores, (slot, v, s))
        live = store is not None and not store.disposed
        if kind == "store-created" and live:
            return [(None, f"L4: a new local store for {v}[{s}] in slot {slot}, where the model's store is still live")]
        if kind == "store-reused" and not live:
            return [(None, f"L4: Flink reused a local store of {v}[{s}] in slot {slot} that the model "
                           + ("disposed" if store is not None else "never created"))]
        if kind == "store-created":
            branch = branch._replace(stores=_put(branch.stores, (slot, v, s), initial_store()))
        return [(branch, "")]
    if kind in ("stored", "confirmed", "aborted", "discarded", "retrieved"):
        v, s, n = o[1:4]
        branch, why = _end_restore(branch, v, s, damaged)   # any line of (v, s) ends its restore under way
        if branch is None:
            return [(None, why)]
        # A discard runs on the discard executor after the store let go of the copy (pruned,
        # aborted, replaced, or the store disposed: TaskLocalStateStoreImpl.dispose), so it may
        # come after the store's disposal. So may a store, a confirmation or an abort: Flink logs
        # each before it looks at the store (a store checks ``disposed`` only after its line, and
        # discards the late copy: L4; recovery facts §2.4, logging order), and a lost
        # TaskManager's tasks finish their snapshots while it shuts down. A restore needs a live
        # store.
        keys = _stores_a_line_may_be_about(branch, kind, v, s)
        if not keys:
            return [(None, f"L4: no live local store of {v}[{s}] for its {kind} line of checkpoint {n}")]
        found = []
        for key in keys:
            store = _get(branch.stores, key)
            if kind == "discarded":
                if n in store.snapshots:
                    found.append((None, f"L1: the local store of {v}[{s}] in slot {key[0]} discarded its copy of "
                                        f"checkpoint {n}, which the model keeps (it holds {sorted(store.snapshots)})"))
                else:
                    found.append((branch, ""))
                continue
            op = {"stored": "store", "confirmed": "confirm", "aborted": "abort", "retrieved": "restore"}[kind]
            after, outputs = store_step(store, (op, n))
            if kind == "retrieved":
                has = outputs[0][2] is not None
                if has != o[4]:
                    held = sorted(store.snapshots)
                    found.append((None, f"L3: the local store of {v}[{s}] in slot {key[0]} "
                                        + (f"holds no copy of checkpoint {n} (it holds {held or 'none'}), yet Flink found one"
                                           if o[4] else f"holds a copy of checkpoint {n}, yet Flink found none")))
                    continue
                nxt = branch._replace(stores=_put(branch.stores, key, after),
                                      retrieved=_put(branch.retrieved, (v, s), (key[0], n, has)))
            else:
                nxt = branch._replace(stores=_put(branch.stores, key, after))
            found.append((nxt, ""))
        return found
    if kind in ("restore-attempt", "restore-failed"):
        _, v, s, k, m = o
        options = _alternatives(branch, v, s, damaged)
        if options is None:
            return [(None, f"P1: {v}[{s}] restores keyed state from alternative {k}/{m} without looking for a local copy first")]
        alternatives, read, count = options
        if m != count:
            return [(None, f"P1: {v}[{s}] restores from {m} alternatives, the model has {count} "
                           + ("(a local copy and the primary)" if count == 2 else "(no local copy: the primary only)"))]
        under_way = _get(branch.restoring, (v, s))
        if kind == "restore-attempt":
            expected = 1 if under_way is None else under_way[0] + 1
            if k != expected:
                return [(None, f"P3: {v}[{s}] tried alternative {k} where the model tries {expected}")]
            if under_way is not None and all(h.readable for h in alternatives[under_way[0] - 1]):
                return [(None, f"P3: {v}[{s}] gave up alternative {under_way[0]}, which the model reads")]
            return [(branch._replace(restoring=_put(branch.restoring, (v, s), (k, m))), "")]
        if under_way is None or under_way[0] != k:
            return [(None, f"P3: {v}[{s}] failed alternative {k} it was not restoring from")]
        if all(h.readable for h in alternatives[k - 1]):
            return [(None, f"P3: {v}[{s}] could not read alternative {k}/{m}, which the model reads "
                           "(no fault damaged that copy)")]
        return [(branch, "")]
    if kind == "released":
        stores = tuple((key, LocalStore(disposed=True) if key[0] == o[1] else store) for key, store in branch.stores)
        return [(branch._replace(stores=stores), "")]
    return [(branch, "")]


def _steps(branch: _Branch, steps: list, damaged: set) -> list[tuple[_Branch | None, str]]:
    """``steps`` one after another (a lost TaskManager's slots released one by one)."""
    results = [(branch, "")]
    for o in steps:
        results = [after for before, why in results
                   for after in (_step(before, o, damaged) if before is not None else [(None, why)])]
    return results


class _Slots:
    """The deployments seen so far, and each vertex's restart rounds held to A1-A3."""

    def __init__(self):
        self.slot_of: dict = {}        # (v, s, attempt) -> slot
        self.tm_of: dict = {}          # slot -> TaskManager
        self.lost: set = set()         # TaskManagers lost
        self.rounds: dict = {}         # (v, attempt) -> {s: slot}
        self.number: dict = {}         # slot or TaskManager -> the model's number for it

    def _n(self, name: str) -> int:
        return self.number.setdefault(name, len(self.number))

    def step(self, o: tuple) -> str:
        if o[0] == "taskmanager-lost":
            self.lost.add(o[1])
            return ""
        if o[0] != "deploy":
            return ""
        _, v, s, attempt, slot, tm, parallelism = o
        self.slot_of[(v, s, attempt)] = slot
        self.tm_of[slot] = tm
        placed = self.rounds.setdefault((v, attempt), {})
        placed[s] = slot
        if attempt == 0 or len(placed) < parallelism:
            return ""
        before = {i: self.slot_of.get((v, i, attempt - 1)) for i in range(parallelism)}
        requests = [SlotRequest(i, None if before[i] is None else self._n(before[i])) for i in range(parallelism)]
        free = [Slot(self._n(a), self._n(self.tm_of[a])) for a in dict.fromkeys(before.values())
                if a is not None and self.tm_of.get(a) not in self.lost]
        free_ids = {x.allocation for x in free}
        fresh = sum(1 for a in placed.values() if self._n(a) not in free_ids)
        assignment = Assignment(tuple(Slot(self._n(placed[i]), self._n(self.tm_of[placed[i]]))
                                      for i in range(parallelism)))
        problems = check_assignment(requests, free, fresh, assignment)
        if not problems:
            return ""
        names = {n: name for name, n in self.number.items()}
        text = re.sub(r"slot (\d+)", lambda m: f"slot {names[int(m.group(1))]}", problems[0])
        text = re.sub(r"task (\d+)", lambda m: f"{v}[{m.group(1)}]", text)
        return f"{text} (the restart of {v} as attempt {attempt})"


def validate(observations: Sequence[tuple], max_branches: int = 4096) -> Verdict:
    """Whether some behaviour of the local-recovery model shows ``observations`` (see the module
    docstring); ``max_branches`` bounds the model states kept at once."""
    damaged = {(o[4], o[1], o[2], o[3]) for o in observations if o[0] == "damaged"}
    branches = [_Branch((), (), (), ())]
    slots = _Slots()
    states = 1
    for index, o in enumerate(observations):
        if o[0] not in OBSERVATION_KINDS:
            raise ValueError(f"observation {index}: unknown kind {o[0]!r}")
        problem = slots.step(o)
        if problem:
            return Verdict(False, index, index, problem, list(branches[0].restores), states)
        # A lost TaskManager takes the local stores of all its slots with it (L4).
        steps = ([("released", slot) for slot, tm in slots.tm_of.items() if tm == o[1]]
                 if o[0] == "taskmanager-lost" else [o])
        successors, reasons, seen = [], [], set()
        for branch in branches:
            for nxt, why in _steps(branch, steps, damaged):
                if nxt is None:
                    reasons.append(why)
                elif nxt not in seen:
                    seen.add(nxt)
                    successors.append(nxt)
        states += len(successors)
        if not successors:
            return Verdict(False, index, index, reasons[0] if reasons else "no behaviour explains it",
                           list(branches[0].restores), states)
        branches = successors[:max_branches]
    finished = []
    for branch in branches:
        why = ""
        for (v, s), _ in branch.restoring:
            branch, why = _end_restore(branch, v, s, damaged)
            if branch is None:
                break
        if branch is not None:
            finished.append(branch)
    if not finished:
        return Verdict(False, len(observations), None, why, [], states)
    return Verdict(True, len(observations), None, "", list(finished[0].restores), states)

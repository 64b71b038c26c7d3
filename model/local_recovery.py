"""Specification of task-local state recovery (seed "Task-Local Recovery"; recovery facts §2).

Every checkpoint writes a primary copy of each task's state to the distributed store and,
secondarily, a copy local to the task; recovery prefers the local copy and falls back to the
primary. Four parts, each small and pure; every rule names the seed sentence or facts section.

1. **Writing a snapshot** (:func:`snapshot_report`), per state handle (a key-group range):

   * W1 the task acknowledges iff every primary write succeeded ("A checkpoint will fail if the
     primary copy could not be created, even if the secondary copy was successfully created";
     "a failure to produce the secondary, local copy will not fail the checkpoint").
   * W2 the acknowledgement carries the primary handles only ("Only the primary copy is
     acknowledged and managed by the job manager"; recovery facts §2.3 write path 6).
   * W3 the local copy holds the handles whose secondary write succeeded, and exists only with
     the primary ("Primary state must always be complete and is a superset of the task-local
     state"; facts: "Cannot report local state snapshot without corresponding remote state!").

2. **The local store** (:func:`store_step`, ``TaskLocalStateStoreImpl``, recovery facts §2.4 Retention):

   * L1 ``confirm(n)`` discards the local copies older than ``n`` and keeps ``n`` and newer.
   * L2 ``abort(n)`` discards ``n`` (and its directory, even if ``n`` was never stored: FLINK-28515's
     request, in no release up to 2.3.0; recovery facts §2.4).
   * L3 a restore of ``n`` retrieves exactly ``n`` and then keeps only ``n`` (FLINK-8777).
   * L4 ``dispose`` discards everything; later stores are discarded at once.
   * L5 the directory of a checkpoint exists from its start until its copy is discarded.

3. **Restoring** (:func:`prioritized_alternatives`, :func:`restore`, recovery facts §2.5 Restore path):

   * P1 the first alternative mixes: each primary handle whose key-group range a local handle of
     the same checkpoint equals exactly is replaced by that local handle (the first one); the
     rest stays primary ("Flink will first try to recover local parts locally, non-local state is
     restored from the primary copy"; FLINK-33341).
   * P2 the primary state is always the last alternative.
   * P3 alternatives are tried in order; the first whose every handle reads wins; the restore
     fails only when all fail ("Recovery only fails, if primary and the (optional) secondary copy
     failed").

4. **Allocation-preserving scheduling** (:func:`check_assignment`, recovery facts §2.6 Allocation-preserving
   scheduling):

   * A1 a task whose previous slot is free gets it ("Each task remembers its previous allocation
     and requests the exact same slot").
   * A2 a task never gets a slot that another task of the bulk had before ("a task that cannot
     return to its previous location will not drive other recovering tasks out of their previous
     slots").
   * A3 a slot goes to one task at most; only free slots and fresh ones from the resource
     manager (``fresh`` of them) are used.

   The seed's claim ("we give the maximum number of tasks a chance to recover from their local
   state") is a property: :func:`max_local_recoveries` is the optimum over all valid
   assignments, and :func:`local_recoveries` must reach it.

Example
-------
>>> h = (KeyedHandle(0, 2, 7), KeyedHandle(2, 4, 7))
>>> report = snapshot_report([HandleWrite(h[0], True, OK), HandleWrite(h[1], True, WRITE_FAILED)], local_backup=True)
>>> report.acknowledged, [x.start for x in report.local_state]
(True, [0])
>>> alternatives = prioritized_alternatives(report.jm_state, report.local_state)
>>> [[x.location for x in a] for a in alternatives]
[['local', 'remote'], ['remote', 'remote']]
>>> s = initial_store()
>>> for op in (("begin", 1), ("store", 1), ("begin", 2), ("store", 2), ("confirm", 2)):
...     s, _ = store_step(s, op)
>>> sorted(s.snapshots)
[2]
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Sequence

__all__ = [
    # writing
    "OK", "OPEN_FAILED", "WRITE_FAILED", "MISALIGNED", "SECONDARY_OUTCOMES", "REMOTE", "LOCAL",
    "KeyedHandle", "HandleWrite", "SnapshotReport", "snapshot_report", "content",
    # the local store
    "LocalStore", "STORE_OPS", "initial_store", "store_step",
    # restoring
    "RestoreOutcome", "prioritized_alternatives", "restore",
    # scheduling
    "Slot", "SlotRequest", "Assignment", "check_assignment", "local_recoveries", "must_recover_locally",
    "max_local_recoveries", "placeable",
]

# ------------------------------------------------------------------------------------------------
# 1. Writing a snapshot

OK = "ok"
OPEN_FAILED = "open-failed"     # the local file could not be opened: primary stream only
WRITE_FAILED = "write-failed"   # a secondary write, flush or sync threw
MISALIGNED = "misaligned"       # primary and secondary positions differ at construction
SECONDARY_OUTCOMES = (OK, OPEN_FAILED, WRITE_FAILED, MISALIGNED)
REMOTE, LOCAL = "remote", "local"


class KeyedHandle(NamedTuple):
    """A keyed-state handle: key groups ``[start, end)`` of ``checkpoint``, stored ``location``;
    ``readable`` is False when reading it will fail (lost file, corrupt copy, unreachable store)."""

    start: int
    end: int
    checkpoint: int
    location: str = REMOTE
    readable: bool = True

    @property
    def key_groups(self) -> range:
        return range(self.start, self.end)


class HandleWrite(NamedTuple):
    """How writing one handle went: its primary (remote) write, its secondary (local) one."""

    handle: KeyedHandle
    primary_ok: bool
    secondary: str = OK


class SnapshotReport(NamedTuple):
    acknowledged: bool
    jm_state: tuple = ()      # what the acknowledgement carries (primary handles)
    local_state: tuple = ()   # what the local store keeps


def snapshot_report(writes: Sequence[HandleWrite], local_backup: bool) -> SnapshotReport:
    """W1-W3."""
    if not all(w.primary_ok for w in writes):
        return SnapshotReport(False)  # W1
    jm = tuple(w.handle._replace(location=REMOTE) for w in writes)  # W2
    local = tuple(w.handle._replace(location=LOCAL) for w in writes if local_backup and w.secondary == OK)  # W3
    return SnapshotReport(True, jm, local)


def content(handles: Iterable[KeyedHandle]) -> tuple:
    """The state handles hold: per key group (ascending), the checkpoint its value is from.
    A key group held twice appears twice: a restore must not produce that."""
    return tuple(sorted((kg, h.checkpoint) for h in handles for kg in h.key_groups))


# ------------------------------------------------------------------------------------------------
# 2. The local store

STORE_OPS = ("begin", "store", "confirm", "abort", "restore", "dispose")


class LocalStore(NamedTuple):
    snapshots: frozenset = frozenset()    # checkpoint ids with a local copy
    directories: frozenset = frozenset()  # checkpoint ids with a directory on the local disk
    disposed: bool = False


def initial_store() -> LocalStore:
    return LocalStore()


def store_step(store: LocalStore, op: tuple) -> tuple[LocalStore, tuple]:
    """One operation on a task's local store; outputs ``("retrieved", n, found)`` for a restore."""
    kind, n = op[0], (op[1] if len(op) > 1 else None)
    if kind == "begin":  # L5: the snapshot's directory is created when its writing starts
        return (store if store.disposed else store._replace(directories=store.directories | {n})), ()
    if kind == "store":
        if store.disposed:  # L4
            return store._replace(directories=store.directories - {n}), ()
        return store._replace(snapshots=store.snapshots | {n}, directories=store.directories | {n}), ()
    if kind == "confirm":  # L1
        keep = frozenset(i for i in store.snapshots if i >= n)
        return store._replace(snapshots=keep, directories=frozenset(d for d in store.directories if d >= n or d not in
                                                                       store.snapshots)), ()
    if kind == "abort":  # L2
        return store._replace(snapshots=store.snapshots - {n}, directories=store.directories - {n}), ()
    if kind == "restore":  # L3
        found = n in store.snapshots
        keep = frozenset({n}) & store.snapshots
        return store._replace(snapshots=keep, directories=frozenset(d for d in store.directories
                                                                    if d == n or d not in store.snapshots)), \
            (("retrieved", n, n if found else None),)
    if kind == "dispose":  # L4
        return LocalStore(disposed=True), ()
    raise ValueError(f"unknown store operation {op!r}")


# ------------------------------------------------------------------------------------------------
# 3. Restoring


class RestoreOutcome(NamedTuple):
    handles: tuple | None   # the alternative that was read, or None if every one failed
    attempts: int           # alternatives tried


def prioritized_alternatives(jm: Sequence[KeyedHandle], local: Sequence[KeyedHandle]) -> tuple[tuple, ...]:
    """P1, P2: ``[mixed, jm]`` when some local handle matches a primary range, else ``[jm]``."""
    jm = tuple(jm)
    mixed, replaced = [], False
    for handle in jm:
        match = next((x for x in local if (x.start, x.end, x.checkpoint) == (handle.start, handle.end, handle.checkpoint)),
                     None)
        mixed.append(match if match is not None else handle)
        replaced = replaced or match is not None
    return (tuple(mixed), jm) if replaced else (jm,)


def restore(alternatives: Sequence[tuple]) -> RestoreOutcome:
    """P3: the first alternative whose every handle reads."""
    for attempt, alternative in enumerate(alternatives, 1):
        if all(h.readable for h in alternative):
            return RestoreOutcome(tuple(alternative), attempt)
    return RestoreOutcome(None, len(alternatives))


# ------------------------------------------------------------------------------------------------
# 4. Allocation-preserving scheduling


class Slot(NamedTuple):
    allocation: int
    tm: int


class SlotRequest(NamedTuple):
    """A task of the bulk being scheduled, with its previous allocation (None: never placed)."""

    task: int
    previous: int | None = None
    location: int | None = None  # the TaskManager it ran on (its location preference)


class Assignment(NamedTuple):
    slots: tuple  # per request (in request order): the Slot it got, or None (still waiting)


def must_recover_locally(requests: Sequence[SlotRequest], free: Sequence[Slot]) -> frozenset:
    """A1: the tasks whose previous slot is free."""
    free_ids = {s.allocation for s in free}
    return frozenset(r.task for r in requests if r.previous in free_ids)


def local_recoveries(requests: Sequence[SlotRequest], assignment: Assignment) -> frozenset:
    return frozenset(r.task for r, s in zip(requests, assignment.slots) if s is not None and s.allocation == r.previous)


def check_assignment(requests: Sequence[SlotRequest], free: Sequence[Slot], fresh: int,
                     assignment: Assignment) -> list[str]:
    """The broken rules A1-A3 (empty when the assignment keeps all of them)."""
    problems = []
    free_ids = {s.allocation for s in free}
    previous = {r.previous: r.task for r in requests if r.previous is not None}
    used = [s for s in assignment.slots if s is not None]
    if len({s.allocation for s in used}) != len(used):
        problems.append("A3: a slot went to two tasks")
    new = [s for s in used if s.allocation not in free_ids]
    if len(new) > fresh or any(s.allocation in previous for s in new):
        problems.append(f"A3: {len(new)} fresh slots used, {fresh} available")
    for request, slot in zip(requests, assignment.slots):
        if request.previous in free_ids and (slot is None or slot.allocation != request.previous):
            problems.append(f"A1: task {request.task} did not get its free previous slot {request.previous}")
        if slot is not None and slot.allocation in previous and previous[slot.allocation] != request.task:
            problems.append(f"A2: task {request.task} took task {previous[slot.allocation]}'s previous slot {slot.allocation}")
    return problems


def _bipartite(requests: Sequence[SlotRequest], free: Sequence[Slot], fresh: int):
    import networkx as nx

    graph = nx.Graph()
    slots = [("slot", s.allocation) for s in free] + [("fresh", k) for k in range(fresh)]
    for request in requests:
        for slot in slots:
            local = slot[0] == "slot" and slot[1] == request.previous
            graph.add_edge(("task", request.task), slot, weight=2 if local else 1)
    return graph


def max_local_recoveries(requests: Sequence[SlotRequest], free: Sequence[Slot], fresh: int) -> int:
    """The most tasks that can land in their previous slot among assignments placing as many
    tasks as possible (a maximum-weight matching of maximum cardinality, networkx)."""
    import networkx as nx

    graph = _bipartite(requests, free, fresh)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    return sum(1 for a, b in matching if graph.edges[a, b]["weight"] == 2)


def placeable(requests: Sequence[SlotRequest], free: Sequence[Slot], fresh: int) -> int:
    """How many tasks some valid assignment places (every slot fits every task)."""
    return min(len(requests), len(free) + fresh)

"""Task-local state recovery as Flink implements it (recovery facts §2).

The classes follow Flink's, so that variants override one method:

* writing: ``DuplicatingCheckpointOutputStream``, ``CheckpointStreamWithResultProvider``
  (``PrimaryStreamOnly`` / ``PrimaryAndSecondaryStream``), ``SnapshotResult``,
  ``AsyncCheckpointRunnable`` and ``TaskStateManagerImpl.report_task_state_snapshots``;
* the local store: ``TaskLocalStateStoreImpl`` (a sorted map of checkpoint id to snapshot) with
  its ``LocalSnapshotDirectoryProvider``, and ``TaskExecutorLocalStateStoresManager`` (stores per
  allocation and subtask);
* restoring: ``PrioritizedOperatorSubtaskState.Builder`` (the mixed local/remote alternative of
  FLINK-33341, the primary state last) and ``BackendRestorerProcedure.create_and_restore``;
* scheduling: ``SlotPool``, ``MergingSharedSlotProfileRetriever`` (preferred and reserved
  allocations), ``PreviousAllocationSlotSelectionStrategy`` with the
  ``LocationPreferenceSlotSelectionStrategy`` fallback, and a ``ResourceManager`` handing out
  fresh slots;
* a whole cluster: :class:`LocalRecoveryCluster` (TaskManagers, tasks, the checkpoint
  coordinator, failover with allocation-preserving scheduling and local restore).

:class:`TaskLocalRecovery` bundles them as the engine ``flink``; variants
(:mod:`flipcheck.reference_impl.local_recovery_variants`) replace one class of the bundle.

Example
-------
>>> from flipcheck.model.local_recovery import KeyedHandle, HandleWrite, Slot, SlotRequest, OK, WRITE_FAILED
>>> engine = TaskLocalRecovery()
>>> report = engine.snapshot([HandleWrite(KeyedHandle(0, 2, 1), True, WRITE_FAILED)], local_backup=True)
>>> report.acknowledged, report.local_state
(True, ())
>>> requests = [SlotRequest(0, previous=10, location=1), SlotRequest(1, previous=11, location=1)]
>>> engine.assign_slots(requests, free=[Slot(11, 1), Slot(12, 1)], fresh=1).slots   # 10 is lost with its TM
(Slot(allocation=12, tm=1), Slot(allocation=11, tm=1))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from flipcheck.model import local_recovery as spec
from flipcheck.model.local_recovery import (
    LOCAL, MISALIGNED, OK, OPEN_FAILED, REMOTE, WRITE_FAILED, Assignment, HandleWrite, KeyedHandle, Slot, SlotRequest,
    SnapshotReport,
)

__all__ = [
    "StreamFailure", "CheckpointStateOutputStream", "DuplicatingCheckpointOutputStream", "PrimaryStreamOnly",
    "PrimaryAndSecondaryStream", "CheckpointStreamWithResultProvider", "SnapshotResult", "AsyncCheckpointRunnable",
    "LocalSnapshotDirectoryProvider", "TaskLocalStateStoreImpl", "StoreHarness",
    "PrioritizedOperatorSubtaskStateBuilder", "BackendRestorerProcedure", "RestoreFailed",
    "MergingSharedSlotProfileRetriever", "SlotProfile", "LocationPreferenceSlotSelectionStrategy",
    "PreviousAllocationSlotSelectionStrategy", "ResourceManager", "SlotSharingExecutionSlotAllocator",
    "LocalRecoveryCluster", "TaskLocalRecovery",
]

CHUNKS = 2  # a handle is written in two chunks, so failures can happen before, between and after


# ------------------------------------------------------------------------------------------------
# Writing a snapshot


class StreamFailure(IOError):
    pass


class CheckpointStateOutputStream:
    """A stream to the distributed store or to a local file; ``fail_at`` makes write number
    ``fail_at`` throw (the injected fault); ``handle()`` is its state handle after closing."""

    def __init__(self, handle: KeyedHandle, location: str, fail_at: int | None = None, position: int = 0):
        self.handle, self.location, self.fail_at = handle, location, fail_at
        self.position, self.writes, self.closed = position, 0, False

    def write(self, length: int) -> None:
        if self.fail_at is not None and self.writes == self.fail_at:
            raise StreamFailure(f"{self.location} write {self.writes} failed")
        self.writes += 1
        self.position += length

    def close_and_get_handle(self) -> KeyedHandle:
        self.closed = True
        return self.handle._replace(location=self.location)


class DuplicatingCheckpointOutputStream:
    """Every write goes to the primary (its exceptions propagate) and, until it fails once, to the
    secondary (its exception is kept; the stream is closed and never written again)."""

    def __init__(self, primary: CheckpointStateOutputStream, secondary: CheckpointStateOutputStream):
        self.primary, self.secondary = primary, secondary
        self.secondary_failure: Exception | None = None
        if primary.position != secondary.position:  # misaligned streams count as a secondary failure
            self.handle_secondary_failure(StreamFailure("primary and secondary stream positions differ"))

    def handle_secondary_failure(self, failure: Exception) -> None:
        self.secondary_failure = failure
        self.secondary.closed = True

    def write(self, length: int) -> None:
        self.primary.write(length)
        if self.secondary_failure is None:
            try:
                self.secondary.write(length)
            except StreamFailure as failure:
                self.handle_secondary_failure(failure)

    def close_and_get_primary_handle(self) -> KeyedHandle:
        return self.primary.close_and_get_handle()

    def close_and_get_secondary_handle(self) -> KeyedHandle:
        if self.secondary_failure is not None:
            raise StreamFailure("secondary stream failed") from self.secondary_failure
        return self.secondary.close_and_get_handle()


@dataclass(frozen=True)
class SnapshotResult:
    """``SnapshotResult``: the JM-owned snapshot and the task-local one."""

    job_manager_owned: KeyedHandle | None
    task_local: KeyedHandle | None = None

    def __post_init__(self):
        if self.task_local is not None and self.job_manager_owned is None:
            raise ValueError("Cannot report local state snapshot without corresponding remote state!")


class PrimaryStreamOnly:
    def __init__(self, primary: CheckpointStateOutputStream):
        self.stream = primary

    def write(self, length: int) -> None:
        self.stream.write(length)

    def close_and_finalize_checkpoint_stream_result(self) -> SnapshotResult:
        return SnapshotResult(self.stream.close_and_get_handle())


class PrimaryAndSecondaryStream:
    def __init__(self, stream: DuplicatingCheckpointOutputStream):
        self.stream = stream

    def write(self, length: int) -> None:
        self.stream.write(length)

    def close_and_finalize_checkpoint_stream_result(self) -> SnapshotResult:
        primary = self.stream.close_and_get_primary_handle()  # a primary failure propagates
        try:
            secondary = self.stream.close_and_get_secondary_handle()
        except StreamFailure:
            return self.secondary_failed(primary)
        return SnapshotResult(primary, secondary)

    def secondary_failed(self, primary: KeyedHandle) -> SnapshotResult:
        """A secondary failure is only logged: the result is the primary alone."""
        return SnapshotResult(primary)


class CheckpointStreamWithResultProvider:
    """``createDuplicatingStream``: primary and local file, or the primary only when local backup
    is off or the local file cannot be opened (a warning)."""

    primary_and_secondary_class = PrimaryAndSecondaryStream
    duplicating_stream_class = DuplicatingCheckpointOutputStream

    @classmethod
    def create(cls, write: HandleWrite, local_backup: bool):
        primary = CheckpointStateOutputStream(write.handle, REMOTE, None if write.primary_ok else 1)
        if not local_backup or write.secondary == OPEN_FAILED:
            return PrimaryStreamOnly(primary)
        secondary = CheckpointStateOutputStream(write.handle, LOCAL, 0 if write.secondary == WRITE_FAILED else None,
                                                position=1 if write.secondary == MISALIGNED else 0)
        return cls.primary_and_secondary_class(cls.duplicating_stream_class(primary, secondary))


class AsyncCheckpointRunnable:
    """Writes every handle of the keyed backend; ``OperatorSnapshotFinalizer`` splits the results
    into the JM-owned and the task-local state; a primary failure declines the checkpoint."""

    stream_provider = CheckpointStreamWithResultProvider

    def run(self, writes: Sequence[HandleWrite], local_backup: bool) -> SnapshotReport:
        results = []
        try:
            for write in writes:
                stream = self.stream_provider.create(write, local_backup)
                for _ in range(CHUNKS):
                    stream.write(1)
                results.append(stream.close_and_finalize_checkpoint_stream_result())
        except StreamFailure:
            return self.declined()
        jm = tuple(r.job_manager_owned for r in results if r.job_manager_owned is not None)
        local = tuple(r.task_local for r in results if r.task_local is not None)
        if local and not jm:  # checkState(hasAckState || !hasLocalState)
            raise AssertionError("local state without acknowledged state")
        return SnapshotReport(True, jm, local)

    def declined(self) -> SnapshotReport:
        return SnapshotReport(False)


# ------------------------------------------------------------------------------------------------
# The local store


class LocalSnapshotDirectoryProvider:
    """The subtask's checkpoint directories on the local disk (``chk-<id>``)."""

    def __init__(self):
        self.directories: set[int] = set()

    def subtask_specific_checkpoint_directory(self, checkpoint_id: int) -> int:
        self.directories.add(checkpoint_id)
        return checkpoint_id

    def delete(self, checkpoint_id: int) -> None:
        self.directories.discard(checkpoint_id)


class TaskLocalStateStoreImpl:
    """A sorted map checkpoint id -> local snapshot, with Flink's retention rules."""

    def __init__(self):
        self.stored: dict[int, object] = {}
        self.directories = LocalSnapshotDirectoryProvider()
        self.disposed = False

    def begin(self, checkpoint_id: int) -> None:
        if not self.disposed:
            self.directories.subtask_specific_checkpoint_directory(checkpoint_id)

    def store_local_state(self, checkpoint_id: int, snapshot: object = None) -> None:
        if self.disposed:  # a store after dispose discards the snapshot at once
            self.directories.delete(checkpoint_id)
            return
        self.stored[checkpoint_id] = snapshot  # a second store for the id replaces (discards) the first
        self.directories.directories.add(checkpoint_id)

    def retrieve_local_state(self, checkpoint_id: int):
        return (checkpoint_id, self.stored[checkpoint_id]) if checkpoint_id in self.stored else None

    def _discard(self, checkpoint_id: int) -> None:
        self.stored.pop(checkpoint_id, None)
        self.directories.delete(checkpoint_id)

    def confirm_checkpoint(self, confirmed: int) -> None:
        """Ascending, discard ids below the confirmed one; stop at the first that is not."""
        for checkpoint_id in sorted(self.stored):
            if not self.discarded_on_confirm(checkpoint_id, confirmed):
                break
            self._discard(checkpoint_id)

    def discarded_on_confirm(self, checkpoint_id: int, confirmed: int) -> bool:
        return checkpoint_id < confirmed

    def abort_checkpoint(self, aborted: int) -> None:
        self._discard(aborted)  # also the directory of a never-registered id (FLINK-28515)

    def prune_matching_checkpoints(self, matcher) -> None:
        for checkpoint_id in sorted(self.stored):
            if matcher(checkpoint_id):
                self._discard(checkpoint_id)

    def dispose(self) -> None:
        for checkpoint_id in list(self.stored):
            self._discard(checkpoint_id)
        self.directories.directories.clear()
        self.disposed = True

    def restore(self, checkpoint_id: int):
        """``TaskStateManagerImpl.prioritizedOperatorState``: retrieve, then prune the others (FLINK-8777)."""
        found = self.retrieve_local_state(checkpoint_id)
        self.prune_after_restore(checkpoint_id)
        return found

    def prune_after_restore(self, checkpoint_id: int) -> None:
        self.prune_matching_checkpoints(lambda i: i != checkpoint_id)


class StoreHarness:
    """Drives a store with the model's operations and reports like :func:`~flipcheck.model.local_recovery.store_step`."""

    def __init__(self, engine: "TaskLocalRecovery"):
        self.store = engine.local_store_class()

    def process(self, op: tuple) -> tuple:
        kind = op[0]
        if kind == "begin":
            self.store.begin(op[1])
        elif kind == "store":
            self.store.store_local_state(op[1], ("snapshot", op[1]))
        elif kind == "confirm":
            self.store.confirm_checkpoint(op[1])
        elif kind == "abort":
            self.store.abort_checkpoint(op[1])
        elif kind == "restore":
            found = self.store.restore(op[1])
            return (("retrieved", op[1], None if found is None else found[0]),)
        elif kind == "dispose":
            self.store.dispose()
        else:
            raise ValueError(f"unknown store operation {op!r}")
        return ()

    def view(self) -> spec.LocalStore:
        return spec.LocalStore(frozenset(self.store.stored), frozenset(self.store.directories.directories),
                               self.store.disposed)

    def snapshot(self) -> tuple:
        return (tuple(sorted(self.store.stored)), tuple(sorted(self.store.directories.directories)), self.store.disposed)

    def restore(self, snapshot: tuple) -> "StoreHarness":
        stored, directories, self.store.disposed = snapshot
        self.store.stored = {i: ("snapshot", i) for i in stored}
        self.store.directories.directories = set(directories)
        return self


# ------------------------------------------------------------------------------------------------
# Restoring


class RestoreFailed(Exception):
    """``FlinkException("Could not restore ... from any of the N provided restore options")``."""


class PrioritizedOperatorSubtaskStateBuilder:
    """``PrioritizedOperatorSubtaskState.Builder`` for managed keyed state (FLINK-33341)."""

    def __init__(self, job_manager_state: Sequence[KeyedHandle], alternatives: Sequence[Sequence[KeyedHandle]]):
        self.jm, self.alternatives = tuple(job_manager_state), [tuple(a) for a in alternatives]

    def build(self) -> tuple[tuple, ...]:
        return self.compute_prioritized_alternatives()

    def matches(self, local: KeyedHandle, remote: KeyedHandle) -> bool:
        return (local.start, local.end) == (remote.start, remote.end)

    def compute_prioritized_alternatives(self) -> tuple[tuple, ...]:
        """Index the JM handles by key-group range; for each alternative in priority order and
        each of its handles, a still-indexed range is replaced by the local handle; leftovers
        stay remote. ``[mixed, jm]`` if anything was replaced, else ``[jm]``."""
        remaining = {(h.start, h.end): h for h in self.jm}
        replaced: dict = {}
        for alternative in self.alternatives:
            for local in alternative:
                for key, remote in list(remaining.items()):
                    if self.matches(local, remote):
                        replaced[key] = local
                        del remaining[key]
                        break
        if not replaced:
            return (self.jm,)
        mixed = tuple(replaced.get((h.start, h.end), h) for h in self.jm)
        return (mixed, self.jm)


class BackendRestorerProcedure:
    """Try each alternative in order; collect failures; give up only when all failed."""

    def create_and_restore(self, alternatives: Sequence[tuple]) -> tuple[tuple, int]:
        alternatives = list(alternatives) or [()]
        failures = []
        for attempt, alternative in enumerate(alternatives, 1):
            try:
                return self.attempt_create_and_restore(alternative), attempt
            except RestoreFailed as failure:
                failures.append(failure)
                if not self.try_next(attempt):
                    break
        raise RestoreFailed(f"Could not restore from any of the {len(alternatives)} provided restore options")

    def try_next(self, attempt: int) -> bool:
        return True

    def attempt_create_and_restore(self, handles: tuple) -> tuple:
        for handle in handles:
            if not handle.readable:
                raise RestoreFailed(f"cannot read {handle}")
        return handles


# ------------------------------------------------------------------------------------------------
# Allocation-preserving scheduling


@dataclass(frozen=True)
class SlotProfile:
    preferred_allocations: frozenset
    reserved_allocations: frozenset
    preferred_locations: tuple


class MergingSharedSlotProfileRetriever:
    """Per request: preferred = its prior allocation; reserved = every prior allocation of the bulk."""

    def __init__(self, bulk: Sequence[SlotRequest]):
        self.bulk_allocations = frozenset(r.previous for r in bulk if r.previous is not None)

    def get_slot_profile(self, request: SlotRequest) -> SlotProfile:
        preferred = frozenset({request.previous}) if request.previous is not None else frozenset()
        return SlotProfile(preferred, self.reserved_allocations(request),
                           (request.location,) if request.location is not None else ())

    def reserved_allocations(self, request: SlotRequest) -> frozenset:
        return self.bulk_allocations


class LocationPreferenceSlotSelectionStrategy:
    """The highest locality: a slot on a preferred TaskManager, else any (first in pool order)."""

    def select_best_slot_for_profile(self, free: Sequence[Slot], profile: SlotProfile) -> Slot | None:
        for slot in free:
            if slot.tm in profile.preferred_locations:
                return slot
        return free[0] if free else None


class PreviousAllocationSlotSelectionStrategy:
    fallback_class = LocationPreferenceSlotSelectionStrategy

    def __init__(self):
        self.fallback = self.fallback_class()

    def select_best_slot_for_profile(self, free: Sequence[Slot], profile: SlotProfile) -> Slot | None:
        for slot in free:  # 1. the previous allocation, if free (Locality.LOCAL)
            if slot.allocation in profile.preferred_allocations:
                return slot
        return self.fallback.select_best_slot_for_profile(self.candidates(free, profile), profile)

    def candidates(self, free: Sequence[Slot], profile: SlotProfile) -> list[Slot]:
        """2. the fallback never sees another bulk member's previous slot (FLINK-9635)."""
        return [s for s in free if s.allocation not in profile.reserved_allocations]


class ResourceManager:
    """Fresh slots (new allocations, on new TaskManagers), at most ``capacity`` of them."""

    def __init__(self, capacity: int, next_allocation: int, next_tm: int):
        self.capacity, self.next_allocation, self.next_tm = capacity, next_allocation, next_tm

    def request_new_slot(self) -> Slot | None:
        if self.capacity <= 0:
            return None
        self.capacity -= 1
        slot = Slot(self.next_allocation, self.next_tm)
        self.next_allocation += 1
        self.next_tm += 1
        return slot


class SlotSharingExecutionSlotAllocator:
    """Allocates the bulk request by request: select from the free pool, else ask the RM."""

    profile_retriever_class = MergingSharedSlotProfileRetriever
    strategy_class = PreviousAllocationSlotSelectionStrategy

    def allocate(self, requests: Sequence[SlotRequest], free: Sequence[Slot], resource_manager: ResourceManager) -> Assignment:
        pool = list(free)
        retriever = self.profile_retriever_class(requests)
        strategy = self.strategy_class()
        slots = []
        for request in requests:
            slot = strategy.select_best_slot_for_profile(pool, retriever.get_slot_profile(request))
            if slot is not None:
                pool.remove(slot)
            else:
                slot = resource_manager.request_new_slot()
            slots.append(slot)
        return Assignment(tuple(slots))


# ------------------------------------------------------------------------------------------------
# A whole cluster


@dataclass
class _TaskExecutor:
    tm: int
    slots: list  # allocation ids
    stores: dict = field(default_factory=dict)  # (allocation, task) -> TaskLocalStateStoreImpl


class LocalRecoveryCluster:
    """A job of ``tasks`` keyed tasks on TaskManagers with ``slots_per_tm`` slots: checkpoints
    with injected write outcomes, lost confirmations, task and TaskManager failures, corrupt local
    copies, unreadable primary copies, and full-job failover that schedules allocation-preservingly
    and restores every task (local first, then primary).

    Task ``t`` owns key groups ``[t*h, (t+1)*h)`` as ``h = handles_per_task`` one-group handles.
    A task's state is its handles: each names the checkpoint its key group comes from (0: empty).
    :meth:`process` takes the model's cluster events and returns what an observer sees.
    """

    def __init__(self, engine: "TaskLocalRecovery", tasks: int = 3, slots_per_tm: int = 2, handles_per_task: int = 2,
                 local_backup: bool = True, rm_capacity: int = 2):
        self.engine, self.n, self.local_backup = engine, tasks, local_backup
        self.slots_per_tm, self.handles_per_task, self.rm_capacity = slots_per_tm, handles_per_task, rm_capacity
        self.next_allocation, self.next_tm = 0, 0
        self.tms: dict[int, _TaskExecutor] = {}
        self.placement: list = [None] * tasks
        for _ in range(-(-tasks // slots_per_tm)):
            self._start_tm([None] * slots_per_tm)
        free = self.free_slots()
        self.placement = [free[t] for t in range(tasks)]
        self.state: list = [self.handles(t, 0) for t in range(tasks)]
        self.next_checkpoint = 1
        self.completed: tuple | None = None  # (id, per-task JM handles)

    # -- structure --------------------------------------------------------------------------------

    def _start_tm(self, allocations: list) -> _TaskExecutor:
        ids = [a if a is not None else self.next_allocation + k for k, a in enumerate(allocations)]
        tm = _TaskExecutor(self.next_tm, ids)
        self.tms[tm.tm], self.next_tm = tm, self.next_tm + 1
        self.next_allocation = max([self.next_allocation] + [a + 1 for a in ids])
        return tm

    def free_slots(self) -> list[Slot]:
        used = {s.allocation for s in self.placement if s is not None}
        return [Slot(a, tm.tm) for tm in self.tms.values() for a in tm.slots if a not in used]

    def handles(self, task: int, checkpoint: int) -> tuple[KeyedHandle, ...]:
        first = task * self.handles_per_task
        return tuple(KeyedHandle(first + k, first + k + 1, checkpoint) for k in range(self.handles_per_task))

    def store(self, task: int) -> TaskLocalStateStoreImpl | None:
        """``TaskExecutorLocalStateStoresManager.localStateStoreForSubtask`` (None: not running)."""
        slot = self.placement[task]
        if slot is None or slot.tm not in self.tms:
            return None
        return self.tms[slot.tm].stores.setdefault((slot.allocation, task), self.engine.local_store_class())

    # -- events ---------------------------------------------------------------------------------

    def process(self, event: tuple) -> tuple:
        kind = event[0]
        if kind == "checkpoint":
            return self.checkpoint(event[1], event[2])
        if kind == "fail":
            return self.failover()
        if kind == "lose_tm":
            live = sorted(self.tms)
            if not live:
                return ()
            del self.tms[live[event[1] % len(live)]]  # its slots and local state go with it
            return self.failover()
        if kind == "corrupt_local":
            store = self.store(event[1])
            if store is not None:
                for checkpoint_id, local in store.stored.items():
                    store.stored[checkpoint_id] = tuple(h._replace(readable=False) for h in local)
            return ()
        if kind == "lose_primary":
            if self.completed is not None:
                restore_id, jm = self.completed
                jm = list(jm)
                jm[event[1]] = tuple(h._replace(readable=False) for h in jm[event[1]])
                self.completed = (restore_id, tuple(jm))
            return ()
        raise ValueError(f"unknown cluster event {event!r}")

    def checkpoint(self, outcomes: Sequence[Sequence[tuple]], confirm_lost: Iterable[int] = ()) -> tuple:
        """``outcomes[task][handle] = (primary_ok, secondary outcome)``; the notification to
        ``confirm_lost`` tasks is lost. Observed: the id, whether it completed, the reports."""
        checkpoint_id, self.next_checkpoint = self.next_checkpoint, self.next_checkpoint + 1
        reports = []
        running = [t for t in range(self.n) if self.placement[t] is not None]
        for task in running:
            store = self.store(task)
            store.begin(checkpoint_id)
            writes = [HandleWrite(h, *outcomes[task][k]) for k, h in enumerate(self.handles(task, checkpoint_id))]
            report = self.engine.snapshot(writes, self.local_backup)
            if report.acknowledged:  # TaskStateManagerImpl: store local first, then acknowledge
                store.store_local_state(checkpoint_id, report.local_state)
            reports.append(report)
        completed = len(running) == self.n and all(r.acknowledged for r in reports)
        if completed:
            self.completed = (checkpoint_id, tuple(r.jm_state for r in reports))
        for task in running:
            if task not in set(confirm_lost):
                if completed:
                    self.store(task).confirm_checkpoint(checkpoint_id)
                else:
                    self.store(task).abort_checkpoint(checkpoint_id)
        return ("checkpoint", checkpoint_id, completed, tuple(reports))

    def failover(self) -> tuple:
        """Restart every task: allocation-preserving scheduling of the bulk, then restore each.
        Observed: the requests, free slots, fresh slots, the assignment, and per task the restore
        (JM handles, local handles found, alternatives, outcome) or None."""
        # The prior allocation is remembered on the ExecutionVertex (FLINK-27222), also when its
        # TaskManager is gone.
        requests = [SlotRequest(t, None if s is None else s.allocation, None if s is None else s.tm)
                    for t, s in enumerate(self.placement)]
        self.placement = [None] * self.n
        free = self.free_slots()
        rm = ResourceManager(self.rm_capacity, self.next_allocation, self.next_tm)
        assignment = self.engine.assign_slots(requests, free, self.rm_capacity, rm)
        for slot in assignment.slots:
            if slot is not None and slot.tm not in self.tms:  # a fresh TaskManager from the RM
                self.tms[slot.tm] = _TaskExecutor(slot.tm, [slot.allocation])
                self.next_tm, self.next_allocation = max(self.next_tm, slot.tm + 1), max(self.next_allocation, slot.allocation + 1)
        self.placement = list(assignment.slots)
        restores = tuple(self.restore_task(t) for t in range(self.n))
        return ("failover", tuple(requests), tuple(free), self.rm_capacity, assignment, restores)

    def restore_task(self, task: int):
        store = self.store(task)
        if store is None:
            return None  # still waiting for a slot
        if self.completed is None:  # nothing to restore: the task starts empty
            self.state[task] = self.handles(task, 0)
            return (self.state[task], (), (self.state[task],), spec.RestoreOutcome(self.state[task], 1))
        restore_id, jm_states = self.completed
        found = store.restore(restore_id)
        local = tuple(found[1]) if found is not None and self.engine.local_recovery_enabled else ()
        alternatives = self.engine.prioritized_alternatives(jm_states[task], local)
        try:
            handles, attempts = self.engine.backend_restorer_class().create_and_restore(alternatives)
            outcome = spec.RestoreOutcome(tuple(handles), attempts)
        except RestoreFailed:
            outcome = spec.RestoreOutcome(None, len(alternatives))
        self.state[task] = outcome.handles
        return (jm_states[task], local, alternatives, outcome)


# ------------------------------------------------------------------------------------------------
# The engine


class TaskLocalRecovery:
    """Flink's task-local recovery, local backup and local recovery on (recovery facts §2):
    ``flipcheck.TaskLocalRecovery``, the base class of a variant of your own.

    A variant replaces one class of the bundle, each Flink's: ``snapshot_runnable_class``
    (writing a snapshot), ``local_store_class`` (``TaskLocalStateStoreImpl``),
    ``prioritized_builder_class`` (the restore alternatives), ``backend_restorer_class`` (trying
    them) and ``slot_allocator_class`` (scheduling to the previous allocation); or
    ``local_recovery_enabled``. :meth:`snapshot`, :meth:`store_harness`, :meth:`restore`,
    :meth:`assign_slots` and :meth:`cluster` drive them. Check yours with
    ``flipcheck verify --suite local-recovery --variant FILE.py:Mine``.

    >>> import flipcheck
    >>> from flipcheck.model.local_recovery import LOCAL, KeyedHandle
    >>> from flipcheck.reference_impl.local_recovery import PrioritizedOperatorSubtaskStateBuilder
    >>> primary, local = [KeyedHandle(0, 2, 1)], [KeyedHandle(0, 1, 1, LOCAL)]   # a local copy of half of it
    >>> flipcheck.TaskLocalRecovery().restore(primary, local).handles          # the primary: every key group
    (KeyedHandle(start=0, end=2, checkpoint=1, location='remote', readable=True),)
    >>> class LocalCopyAsWholeState(PrioritizedOperatorSubtaskStateBuilder):
    ...     def build(self):
    ...         return tuple(tuple(a) for a in self.alternatives if a) + (self.jm,)
    >>> class Mine(flipcheck.TaskLocalRecovery):
    ...     prioritized_builder_class = LocalCopyAsWholeState
    >>> Mine().restore(primary, local).handles                             # key group 1 comes back empty
    (KeyedHandle(start=0, end=1, checkpoint=1, location='local', readable=True),)
    """

    name = "flink"
    flink_issue: str | None = None
    source = "recovery facts §2 (CosmicBeing09/flink 2025 and lirui-apache/flink 2021)"
    part: str | None = None
    local_recovery_enabled = True
    snapshot_runnable_class = AsyncCheckpointRunnable
    local_store_class = TaskLocalStateStoreImpl
    prioritized_builder_class = PrioritizedOperatorSubtaskStateBuilder
    backend_restorer_class = BackendRestorerProcedure
    slot_allocator_class = SlotSharingExecutionSlotAllocator

    def snapshot(self, writes: Sequence[HandleWrite], local_backup: bool) -> SnapshotReport:
        return self.snapshot_runnable_class().run(writes, local_backup)

    def store_harness(self) -> StoreHarness:
        return StoreHarness(self)

    def prioritized_alternatives(self, jm: Sequence[KeyedHandle], local: Sequence[KeyedHandle]) -> tuple[tuple, ...]:
        return self.prioritized_builder_class(jm, [local] if local else []).build()

    def restore(self, jm: Sequence[KeyedHandle], local: Sequence[KeyedHandle]) -> spec.RestoreOutcome:
        alternatives = self.prioritized_alternatives(jm, local)
        try:
            handles, attempts = self.backend_restorer_class().create_and_restore(alternatives)
        except RestoreFailed:
            return spec.RestoreOutcome(None, len(alternatives))
        return spec.RestoreOutcome(tuple(handles), attempts)

    def assign_slots(self, requests: Sequence[SlotRequest], free: Sequence[Slot], fresh: int,
                     resource_manager: ResourceManager | None = None) -> Assignment:
        if resource_manager is None:
            next_allocation = max([s.allocation for s in free] + [r.previous or 0 for r in requests] + [0]) + 1
            resource_manager = ResourceManager(fresh, next_allocation, max([s.tm for s in free] + [0]) + 1)
        return self.slot_allocator_class().allocate(requests, free, resource_manager)

    def cluster(self, **options) -> LocalRecoveryCluster:
        return LocalRecoveryCluster(self, **options)

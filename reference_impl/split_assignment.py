"""Flink's FLIP-27 source coordination, class by class (recovery facts §3), driven by labelled actions.

The classes mirror Flink's, with the methods the facts describe and nothing else:

* :class:`SplitAssignmentTracker` — ``assignmentsByCheckpointId`` and ``uncheckpointedAssignments``
  (the 2021 logic: ``getAndRemoveUncheckpointedAssignment`` returns epochs after the restored
  checkpoint, FLINK-20413), plus the batch snapshot FLIP-383 added (FLINK-33984);
* :class:`StaticSplitEnumerator` — a bounded enumerator in the spirit of FileSource's
  ``StaticFileSplitEnumerator`` (hands out its smallest split on request);
* :class:`SourceCoordinatorContext` and :class:`SourceCoordinator` — reader registration,
  ``assignSplits``, ``checkpointCoordinator`` (tracker first, then the enumerator snapshot),
  ``notifyCheckpointComplete``, ``subtaskReset``, ``executionAttemptFailed``, ``resetToCheckpoint``;
* :class:`SubtaskGatewayImpl` — per-subtask gateway with ``markForCheckpoint``,
  ``tryCloseGateway`` and ``openGatewayAndUnmarkCheckpoint`` (FLINK-28606);
* :class:`OperatorCoordinatorHolder` — marks and closes the gateways around a coordinator
  checkpoint, completes it only once every event sent before it is confirmed
  (``completeCheckpointOnceEventsAreDone``, FLINK-21996), reopens gateways on
  ``AcknowledgeCheckpointEvent``, completion and abortion, and recreates the coordinator on a
  global reset (``RecreateOnResetOperatorCoordinator``);
* :class:`CheckpointCoordinator` — one checkpoint at a time: coordinators first, then the tasks
  (FLINK-18641); :class:`SourceReaderTask` — the reader side.

:class:`SourceJob` wires them up with a FIFO RPC transport per subtask and plays the role of the
scheduler: it applies the actions of :mod:`flipcheck.model.split_assignment` (``register``,
``assign``, ``deliver``, ``trigger``, ``fail``, ``reset``, ``global``, ...), says which are
enabled, exposes the model's :class:`~flipcheck.model.split_assignment.View`, and snapshots its
whole state as a hashable tuple for exhaustive exploration. Variants override one method of one
class (``reference_impl/split_assignment_variants.py``).

Example
-------
>>> from flipcheck.model.split_assignment import Config
>>> job = SourceJob(Config(readers=1, splits=2))
>>> for action in [("register", 0), ("assign", 0), ("trigger",), ("assign", 0)]:
...     job.apply(action)
>>> job.holder.gateways[0].blocked_events      # AddSplitEvent(1) waits for checkpoint 1's barrier
{1: [1]}
>>> tracker = job.holder.coordinator.tracker
>>> tracker.assignments_by_checkpoint_id, tracker.uncheckpointed_assignments
({1: {0: [0]}}, {0: [1]})
>>> ("trigger_tasks",) in job.enabled()        # split 0 is not confirmed yet
False
>>> job.apply(("deliver", 0)); job.apply(("trigger_tasks",)); job.apply(("deliver", 0))
>>> job.checkpoints.completed.id, job.transport[0]
(1, [('split', 1)])
"""

from __future__ import annotations

from typing import NamedTuple

from flipcheck.model.split_assignment import (
    BARRIER, COORDINATOR, NO_CHECKPOINT, SPLIT, Completed, Config, View,
)

__all__ = [
    "BATCH_CHECKPOINT_ID", "IllegalStateException", "IllegalArgumentException",
    "SplitAssignmentTracker", "StaticSplitEnumerator", "SourceCoordinatorContext", "SourceCoordinator",
    "SubtaskGatewayImpl", "OperatorCoordinatorHolder", "CheckpointCoordinator", "SourceReaderTask", "SourceJob",
]

# OperatorCoordinatorHolder: the id FLIP-383 batch snapshots use (gateways are not closed).
BATCH_CHECKPOINT_ID = NO_CHECKPOINT


class IllegalStateException(RuntimeError):
    pass


class IllegalArgumentException(ValueError):
    pass


# ------------------------------------------------------------------------------------------------
# SourceCoordinator side


class SplitAssignmentTracker:
    """``SplitAssignmentTracker``: assignments per checkpoint epoch (recovery facts §3).

    >>> t = SplitAssignmentTracker()
    >>> t.record_split_assignment({0: [7]}); t.on_checkpoint(100); t.record_split_assignment({0: [8]}); t.on_checkpoint(101)
    >>> t.get_and_remove_uncheckpointed_assignment(0, 100)   # testGetAndRemoveSplitsAfterSomeCheckpoint
    [8]
    """

    def __init__(self):
        self.assignments_by_checkpoint_id: dict[int, dict[int, list]] = {}
        self.uncheckpointed_assignments: dict[int, list] = {}

    def record_split_assignment(self, assignment: dict[int, list]) -> None:
        for subtask, splits in assignment.items():
            known = self.uncheckpointed_assignments.setdefault(subtask, [])
            known.extend(s for s in splits if s not in known)  # a LinkedHashSet

    def on_checkpoint(self, checkpoint_id: int) -> None:
        self.assignments_by_checkpoint_id[checkpoint_id] = self.uncheckpointed_assignments
        self.uncheckpointed_assignments = {}

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        for key in [k for k in self.assignments_by_checkpoint_id if k <= checkpoint_id]:
            del self.assignments_by_checkpoint_id[key]

    def returned_epochs(self, restored_checkpoint_id: int) -> list[int]:
        """The tracked epochs whose splits go back: those after the restored checkpoint (FLINK-20413)."""
        return [k for k in sorted(self.assignments_by_checkpoint_id) if k > restored_checkpoint_id]

    def get_and_remove_uncheckpointed_assignment(self, subtask: int, restored_checkpoint_id: int) -> list:
        splits: list = []
        for key in self.returned_epochs(restored_checkpoint_id):
            splits.extend(self.assignments_by_checkpoint_id[key].pop(subtask, []))
        splits.extend(self.uncheckpointed_assignments.pop(subtask, []))
        return splits

    # Batch snapshot (FLINK-33984, FLIP-383): only the uncheckpointed assignments.
    def snapshot_state(self) -> tuple:
        return tuple(sorted((s, tuple(v)) for s, v in self.uncheckpointed_assignments.items() if v))

    def restore_state(self, data: tuple) -> None:
        self.uncheckpointed_assignments = {s: list(v) for s, v in data}

    def state(self) -> tuple:
        by_id = tuple((k, tuple(sorted((s, tuple(v)) for s, v in m.items() if v)))
                      for k, m in sorted(self.assignments_by_checkpoint_id.items()))
        return by_id, self.snapshot_state()

    def load(self, state: tuple) -> None:
        by_id, uncheckpointed = state
        self.assignments_by_checkpoint_id = {k: {s: list(v) for s, v in m} for k, m in by_id}
        self.restore_state(uncheckpointed)


class StaticSplitEnumerator:
    """A bounded enumerator: its unassigned splits, the smallest handed out per request."""

    def __init__(self, context: "SourceCoordinatorContext", splits=()):
        self.context = context
        self.unassigned: list = sorted(splits)

    def start(self) -> None:
        pass

    def add_reader(self, subtask: int) -> None:
        pass

    def handle_split_request(self, subtask: int) -> None:
        if subtask not in self.context.registered_readers:
            return  # the reader failed between its request and now (FileSource skips it too)
        if self.unassigned:
            self.context.assign_splits({subtask: [self.unassigned.pop(0)]})

    def add_splits_back(self, splits: list, subtask: int) -> None:
        self.unassigned = sorted(set(self.unassigned) | set(splits))

    def snapshot_state(self, checkpoint_id: int) -> tuple:
        return tuple(self.unassigned)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        pass


class SourceCoordinatorContext:
    """``SourceCoordinatorContext``: registered readers and ``assignSplits`` (recovery facts §3)."""

    def __init__(self, holder: "OperatorCoordinatorHolder", tracker: SplitAssignmentTracker):
        self.holder = holder
        self.tracker = tracker
        self.registered_readers: dict[int, int] = {}   # subtask -> attempt

    def register_source_reader(self, subtask: int, attempt: int) -> None:
        self.registered_readers[subtask] = attempt

    def unregister_source_reader(self, subtask: int, attempt: int) -> None:
        if self.registered_readers.get(subtask) == attempt:
            del self.registered_readers[subtask]

    def assign_splits(self, assignment: dict[int, list]) -> None:
        for subtask in assignment:
            if subtask not in self.registered_readers:
                raise IllegalArgumentException(f"Cannot assign splits to subtask {subtask}: it is not registered")
        self.tracker.record_split_assignment(assignment)
        for subtask, splits in assignment.items():
            for split in splits:
                self.holder.gateways[subtask].send_event(split)

    def subtask_reset(self, subtask: int) -> None:
        self.registered_readers.pop(subtask, None)


class SourceCoordinator:
    """``SourceCoordinator``: the enumerator runs inside it (recovery facts §3.3 behaviour)."""

    def __init__(self, holder: "OperatorCoordinatorHolder", splits, tracker_class=SplitAssignmentTracker,
                 enumerator_class=StaticSplitEnumerator):
        self.tracker = tracker_class()
        self.context = SourceCoordinatorContext(holder, self.tracker)
        self.enumerator = enumerator_class(self.context, splits)
        self.started = False

    def start(self) -> None:
        self.started = True
        self.enumerator.start()

    def handle_reader_registration(self, subtask: int, attempt: int) -> None:
        first = subtask not in self.context.registered_readers
        self.context.register_source_reader(subtask, attempt)
        if first:
            self.enumerator.add_reader(subtask)

    def handle_split_request(self, subtask: int) -> None:
        self.enumerator.handle_split_request(subtask)

    def checkpoint_coordinator(self, checkpoint_id: int) -> tuple:
        if checkpoint_id != BATCH_CHECKPOINT_ID:
            self.tracker.on_checkpoint(checkpoint_id)   # before the enumerator snapshot, same action
        return self.enumerator.snapshot_state(checkpoint_id)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.tracker.on_checkpoint_complete(checkpoint_id)
        self.enumerator.notify_checkpoint_complete(checkpoint_id)

    def subtask_reset(self, subtask: int, checkpoint_id: int) -> None:
        self.context.subtask_reset(subtask)
        splits = self.tracker.get_and_remove_uncheckpointed_assignment(subtask, checkpoint_id)
        if splits:
            self.enumerator.add_splits_back(splits, subtask)

    def execution_attempt_failed(self, subtask: int, attempt: int) -> None:
        self.context.unregister_source_reader(subtask, attempt)

    def reset_to_checkpoint(self, checkpoint_id: int, data: tuple | None) -> None:
        if self.started:
            raise IllegalStateException("The coordinator can only be reset if it was not yet started")
        if data is not None:
            self.enumerator.unassigned = sorted(data)

    def state(self) -> tuple:
        return (self.tracker.state(), tuple(self.enumerator.unassigned),
                tuple(sorted(self.context.registered_readers.items())), self.started)

    def load(self, state: tuple) -> None:
        tracker, unassigned, registered, self.started = state
        self.tracker.load(tracker)
        self.enumerator.unassigned = list(unassigned)
        self.context.registered_readers = dict(registered)


# ------------------------------------------------------------------------------------------------
# OperatorCoordinatorHolder side


class SubtaskGatewayImpl:
    """``SubtaskGatewayImpl``: events to one subtask attempt, blocked per checkpoint (recovery facts §3)."""

    def __init__(self, holder: "OperatorCoordinatorHolder", subtask: int):
        self.holder = holder
        self.subtask = subtask
        self.blocked_events: dict[int, list] = {}   # a TreeMap: ascending checkpoint ids
        self.current_marked: set[int] = set()
        self.latest_attempted = NO_CHECKPOINT

    def send_event(self, split) -> None:
        if self.blocked_events:
            self.blocked_events[max(self.blocked_events)].append(split)
        else:
            self.holder.send(self.subtask, split)

    def mark_for_checkpoint(self, checkpoint_id: int) -> None:
        if checkpoint_id != BATCH_CHECKPOINT_ID and checkpoint_id < self.latest_attempted:
            raise IllegalStateException(f"Regressing checkpoint IDs: {checkpoint_id} < {self.latest_attempted}")
        self.latest_attempted = max(self.latest_attempted, checkpoint_id)
        self.current_marked.add(checkpoint_id)

    def try_close_gateway(self, checkpoint_id: int) -> bool:
        if checkpoint_id in self.current_marked:
            self.blocked_events.setdefault(checkpoint_id, [])
            return True
        return False

    def open_gateway_and_unmark_checkpoint(self, checkpoint_id: int) -> None:
        if checkpoint_id > self.latest_attempted:
            raise IllegalStateException(f"Gateway of checkpoint {checkpoint_id} was never attempted")
        if checkpoint_id not in self.current_marked:
            return
        if checkpoint_id in self.blocked_events:
            events = self.blocked_events.pop(checkpoint_id)
            earlier = [k for k in self.blocked_events if k < checkpoint_id]
            if earlier:
                self.blocked_events[max(earlier)].extend(events)
            else:
                for split in events:
                    self.holder.send(self.subtask, split)
        self.current_marked.discard(checkpoint_id)

    def open_all(self) -> None:
        for checkpoint_id in sorted(self.current_marked):
            self.open_gateway_and_unmark_checkpoint(checkpoint_id)

    def state(self) -> tuple:
        return (tuple((k, tuple(v)) for k, v in sorted(self.blocked_events.items())),
                tuple(sorted(self.current_marked)), self.latest_attempted)

    def load(self, state: tuple) -> None:
        blocked, marked, self.latest_attempted = state
        self.blocked_events = {k: list(v) for k, v in blocked}
        self.current_marked = set(marked)


class OperatorCoordinatorHolder:
    """``OperatorCoordinatorHolder`` around a ``RecreateOnResetOperatorCoordinator(SourceCoordinator)``.

    ``unconfirmed`` is the ``IncompleteFuturesTracker``: ``(subtask, split)`` of events sent and
    not yet confirmed by the target task. ``checkpoint`` is the coordinator checkpoint in
    progress: ``(id, enumerator state, futures it still waits for)``; ``done`` once its result
    future completed (``None`` when there is none or it failed).
    """

    gateway_class = SubtaskGatewayImpl
    coordinator_class = SourceCoordinator

    def __init__(self, job: "SourceJob", parallelism: int, splits):
        self.job = job
        self.splits = tuple(splits)
        self.gateways = {s: self.gateway_class(self, s) for s in range(parallelism)}
        self.coordinator = self.coordinator_class(self, self.splits)
        self.coordinator.start()
        self.unconfirmed: list = []
        self.checkpoint: tuple | None = None   # (id, data, waiting futures)
        self.done: tuple | None = None         # (id, data) of a completed coordinator checkpoint
        self.last_checkpoint_id = 0            # the last id checkpointCoordinator ran for

    def send(self, subtask: int, split) -> None:
        self.unconfirmed.append((subtask, split))
        self.job.transport[subtask].append((SPLIT, split))

    # -- checkpoints ---------------------------------------------------------------------

    def checkpoint_coordinator(self, checkpoint_id: int) -> None:
        """``checkpointCoordinatorInternal``: mark, snapshot, then (when the coordinator future
        completes) close the gateways and wait for the events sent before the checkpoint."""
        for gateway in self.gateways.values():
            gateway.mark_for_checkpoint(checkpoint_id)
        data = self.coordinator.checkpoint_coordinator(checkpoint_id)
        if checkpoint_id != BATCH_CHECKPOINT_ID:
            self.last_checkpoint_id = checkpoint_id
        if checkpoint_id == BATCH_CHECKPOINT_ID or self.close_gateways(checkpoint_id):
            self.checkpoint = (checkpoint_id, data, self.waiting_futures())
            self.maybe_complete()
        else:
            self.job.checkpoints.coordinator_checkpoint_failed(checkpoint_id, "Cannot close gateway")

    def close_gateways(self, checkpoint_id: int) -> bool:
        closed = [g.try_close_gateway(checkpoint_id) for g in self.gateways.values()]
        if any(closed) and not all(closed):
            raise IllegalStateException("Gateways were only partially closed")
        return all(closed)

    def waiting_futures(self) -> tuple:
        """``completeCheckpointOnceEventsAreDone``: the futures not yet complete right now."""
        return tuple(self.unconfirmed)

    def maybe_complete(self) -> None:
        if self.checkpoint is not None and not self.checkpoint[2]:
            checkpoint_id, data, _ = self.checkpoint
            self.checkpoint, self.done = None, (checkpoint_id, data)

    def event_confirmed(self, subtask: int, split) -> None:
        self.unconfirmed.remove((subtask, split))
        if self.checkpoint is not None and (subtask, split) in self.checkpoint[2]:
            waiting = list(self.checkpoint[2])
            waiting.remove((subtask, split))
            self.checkpoint = (*self.checkpoint[:2], tuple(waiting))
            self.maybe_complete()

    def event_failed(self, subtask: int, split) -> None:
        """A send future failed: a coordinator checkpoint waiting for it fails (FLINK-21996)."""
        self.unconfirmed.remove((subtask, split))
        if self.checkpoint is not None and (subtask, split) in self.checkpoint[2]:
            checkpoint_id = self.checkpoint[0]
            self.checkpoint = None
            self.job.checkpoints.coordinator_checkpoint_failed(
                checkpoint_id, "some OperatorEvents before this checkpoint barrier were not received by the target tasks")

    def acknowledge_checkpoint_event(self, subtask: int, checkpoint_id: int) -> None:
        """``AcknowledgeCheckpointEvent`` from the task after it processed the barrier (reopen (a))."""
        self.gateways[subtask].open_gateway_and_unmark_checkpoint(checkpoint_id)

    def after_source_barrier_injection(self, checkpoint_id: int) -> None:
        """The 2021 valve reopened here; the per-subtask gateways do nothing (variant hook)."""

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Reopen (b) in the main thread; the coordinator hears of it later (the ``notify`` action)."""
        for gateway in self.gateways.values():
            gateway.open_gateway_and_unmark_checkpoint(checkpoint_id)
        self.done = None

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        if self.checkpoint is not None and self.checkpoint[0] == checkpoint_id:
            self.checkpoint = None   # abortCurrentTriggering (reopen (c))
        if self.done is not None and self.done[0] == checkpoint_id:
            self.done = None
        for gateway in self.gateways.values():
            if checkpoint_id <= gateway.latest_attempted:
                gateway.open_gateway_and_unmark_checkpoint(checkpoint_id)

    # -- failover --------------------------------------------------------------------------

    def execution_attempt_failed(self, subtask: int, attempt: int) -> None:
        # Events held for the failed attempt can never be delivered: their futures fail.
        gateway = self.gateways[subtask]
        gateway.blocked_events = {k: [] for k in gateway.blocked_events}
        self.coordinator.execution_attempt_failed(subtask, attempt)

    def subtask_reset(self, subtask: int, checkpoint_id: int) -> None:
        self.gateways[subtask] = self.gateway_class(self, subtask)  # the new attempt's gateway
        self.coordinator.subtask_reset(subtask, checkpoint_id)

    def reset_to_checkpoint(self, checkpoint_id: int, data: tuple | None) -> None:
        """Reopen (d); ``RecreateOnResetOperatorCoordinator``: close the coordinator, create a fresh one."""
        for gateway in self.gateways.values():
            gateway.open_all()
        self.gateways = {s: self.gateway_class(self, s) for s in self.gateways}
        self.checkpoint = self.done = None
        self.unconfirmed = []
        self.coordinator = self.recreate_coordinator()
        self.coordinator.reset_to_checkpoint(checkpoint_id, data)
        self.coordinator.start()

    def recreate_coordinator(self) -> SourceCoordinator:
        return self.coordinator_class(self, self.splits)

    def state(self) -> tuple:
        return (self.coordinator.state(), tuple(g.state() for g in self.gateways.values()),
                tuple(sorted(self.unconfirmed)), self.checkpoint, self.done, self.last_checkpoint_id)

    def load(self, state: tuple) -> None:
        coordinator, gateways, unconfirmed, self.checkpoint, self.done, self.last_checkpoint_id = state
        self.coordinator.load(coordinator)
        for gateway, g in zip(self.gateways.values(), gateways):
            gateway.load(g)
        self.unconfirmed = list(unconfirmed)


# ------------------------------------------------------------------------------------------------
# Checkpoint coordinator and tasks


class PendingCheckpoint(NamedTuple):
    id: int
    coordinator_state: tuple | None
    tasks_triggered: bool
    acks: tuple        # per subtask: (splits, done) or None


class CheckpointCoordinator:
    """One checkpoint at a time; coordinators first, then the source tasks (FLINK-18641)."""

    def __init__(self, job: "SourceJob", parallelism: int, max_checkpoints: int):
        self.job = job
        self.parallelism = parallelism
        self.max_checkpoints = max_checkpoints
        self.next_id = 1
        self.pending: PendingCheckpoint | None = None
        self.completed: Completed | None = None

    def can_trigger(self) -> bool:
        """Not while a checkpoint is pending, and only when every task is RUNNING (CheckpointPlan)."""
        return self.pending is None and self.next_id <= self.max_checkpoints and all(
            t.alive for t in self.job.tasks)

    def trigger(self) -> None:
        checkpoint_id = self.next_id
        self.next_id += 1
        self.pending = PendingCheckpoint(checkpoint_id, None, False, (None,) * self.parallelism)
        self.job.holder.checkpoint_coordinator(checkpoint_id)

    def can_trigger_tasks(self) -> bool:
        done = self.job.holder.done
        return (self.pending is not None and not self.pending.tasks_triggered and done is not None
                and done[0] == self.pending.id)

    def trigger_tasks(self) -> None:
        """The coordinator checkpoint future completed: master hooks, then ``triggerTasks``."""
        _, data = self.job.holder.done
        self.pending = self.pending._replace(coordinator_state=data, tasks_triggered=True)
        for subtask in range(self.parallelism):
            if self.job.tasks[subtask].alive:  # an RPC to a failed attempt goes nowhere
                self.job.transport[subtask].append((BARRIER, self.pending.id))
        self.job.holder.after_source_barrier_injection(self.pending.id)

    def coordinator_checkpoint_failed(self, checkpoint_id: int, reason: str) -> None:
        if self.pending is not None and self.pending.id == checkpoint_id:
            self.abort_pending()

    def acknowledge(self, subtask: int, checkpoint_id: int, snapshot: tuple) -> None:
        if self.pending is None or self.pending.id != checkpoint_id:
            return  # an acknowledgement of an aborted checkpoint
        acks = list(self.pending.acks)
        acks[subtask] = snapshot
        self.pending = self.pending._replace(acks=tuple(acks))
        self.maybe_complete()

    def maybe_complete(self) -> None:
        """Complete once the coordinator state and every task's acknowledgement are in."""
        pending = self.pending
        if pending is not None and pending.coordinator_state is not None and all(a is not None for a in pending.acks):
            self.completed = Completed(pending.id, frozenset(pending.coordinator_state), pending.acks)
            self.pending = None
            self.job.holder.notify_checkpoint_complete(pending.id)

    def abort_pending(self) -> None:
        if self.pending is not None:
            checkpoint_id = self.pending.id
            self.pending = None
            self.job.holder.notify_checkpoint_aborted(checkpoint_id)

    def latest_completed_id(self) -> int:
        return self.completed.id if self.completed is not None else NO_CHECKPOINT

    def state(self) -> tuple:
        return self.next_id, self.pending, self.completed

    def load(self, state: tuple) -> None:
        self.next_id, self.pending, self.completed = state


class SourceReaderTask:
    """One source subtask attempt: the ``SourceReader`` state and the checkpoint handling."""

    def __init__(self, job: "SourceJob", subtask: int, attempt: int = 0, splits=(), done=()):
        self.job = job
        self.subtask = subtask
        self.attempt = attempt
        self.alive = True
        self.registered = False
        self.splits = set(splits)
        self.done = set(done)
        self.snapshot = 0

    def receive(self, message: tuple) -> None:
        kind, value = message
        if kind == SPLIT:
            self.splits.add(value)
            return
        # triggerCheckpoint: snapshot the reader, acknowledge to the CheckpointCoordinator, and
        # send AcknowledgeCheckpointEvent from RegularOperatorChain.snapshotState.
        self.snapshot = value
        self.job.checkpoints.acknowledge(self.subtask, value, (frozenset(self.splits), frozenset(self.done)))
        self.job.holder.acknowledge_checkpoint_event(self.subtask, value)

    def finish_split(self) -> None:
        split = min(self.splits)
        self.splits.remove(split)
        self.done.add(split)

    def state(self) -> tuple:
        return (self.attempt, self.alive, self.registered, frozenset(self.splits), frozenset(self.done), self.snapshot)

    def load(self, state: tuple) -> None:
        self.attempt, self.alive, self.registered, splits, done, self.snapshot = state
        self.splits, self.done = set(splits), set(done)


# ------------------------------------------------------------------------------------------------
# The job: scheduler, transport and the actions


class SourceJob:
    """The source of one job: coordinator, checkpoint coordinator, reader tasks, RPC transport.

    ``transport[s]`` is the FIFO of RPCs to subtask ``s``: ``("split", x)`` (an AddSplitEvent)
    and ``("barrier", id)`` (``triggerCheckpoint``). ``lost[s]`` lists the events lost on the way
    whose send futures have not failed yet. ``flipcheck.SourceJob``, the base class of a variant
    of your own.

    A variant replaces one class, each Flink's: ``holder_class``
    (:class:`OperatorCoordinatorHolder`, with its ``coordinator_class`` and ``gateway_class``:
    :class:`SourceCoordinator`, :class:`SubtaskGatewayImpl`), ``checkpoint_coordinator_class``
    and ``task_class`` (:class:`SourceReaderTask`). :meth:`apply` takes one action of
    :mod:`flipcheck.model.split_assignment` (:meth:`enabled` lists them) and :meth:`view` shows
    the model's state. Check yours with
    ``flipcheck verify --suite split-assignment --variant FILE.py:Mine``.

    >>> import flipcheck
    >>> from flipcheck.model.split_assignment import Config
    >>> class GatewayNeverHolds(SubtaskGatewayImpl):
    ...     def try_close_gateway(self, checkpoint_id):
    ...         return checkpoint_id in self.current_marked   # "closed", but nothing waits
    >>> class Mine(flipcheck.SourceJob):
    ...     holder_class = type("MyHolder", (OperatorCoordinatorHolder,), {"gateway_class": GatewayNeverHolds})
    >>> for engine in (flipcheck.SourceJob(Config(readers=1, splits=2)), Mine(Config(readers=1, splits=2))):
    ...     for action in [("register", 0), ("assign", 0), ("trigger",), ("assign", 0)]:
    ...         engine.apply(action)
    ...     print(engine.holder.gateways[0].blocked_events, engine.transport[0])
    {1: [1]} [('split', 0)]
    {} [('split', 0), ('split', 1)]

    Flink holds split 1, assigned after the coordinator's snapshot of checkpoint 1, until that
    checkpoint's barrier; the second job sends it at once.
    """

    name = "flink"
    flink_issue: str | None = None   # the Flink issue a variant re-creates
    source: str | None = None        # where a variant comes from: reports only
    holder_class = OperatorCoordinatorHolder
    checkpoint_coordinator_class = CheckpointCoordinator
    task_class = SourceReaderTask

    def __init__(self, config: Config):
        if config.design != COORDINATOR:
            raise ValueError(f"Flink ships the coordinator design, not {config.design!r}")
        self.config = config
        n = config.readers
        self.transport: list[list] = [[] for _ in range(n)]
        self.lost: list[list] = [[] for _ in range(n)]
        self.failures = 0
        # The latest completed checkpoint whose notifyCheckpointComplete ran in the coordinator
        # thread (the notifications queued there are what ``notify`` runs).
        self.notified = 0
        self.tasks = [self.task_class(self, s) for s in range(n)]
        self.checkpoints = self.checkpoint_coordinator_class(self, n, config.checkpoints)
        self.holder = self.holder_class(self, n, range(config.splits))

    # -- actions -------------------------------------------------------------------------

    def enabled(self) -> list[tuple]:
        """The actions that can happen next, in the model's order."""
        actions: list[tuple] = []
        budget = self.failures < self.config.failures
        pool = self.holder.coordinator.enumerator.unassigned
        registered = self.holder.coordinator.context.registered_readers
        for s, task in enumerate(self.tasks):
            if task.alive and not task.registered:
                actions.append(("register", s))
            if task.alive and s in registered and pool:
                actions.append(("assign", s))
            if task.alive and self.transport[s]:
                actions.append(("deliver", s))
            if task.splits:
                actions.append(("finish", s))
        if self.checkpoints.can_trigger():
            actions.append(("trigger",))
        if self.checkpoints.can_trigger_tasks():
            actions.append(("trigger_tasks",))
        completed = self.checkpoints.completed
        if completed is not None and self.notified < completed.id:
            actions.append(("notify",))
        if self.checkpoints.pending is not None:
            actions.append(("expire",))
        for s, task in enumerate(self.tasks):
            if budget and task.alive and self.transport[s] and self.transport[s][0][0] == SPLIT:
                actions.append(("lose", s))
            if task.alive and self.lost[s]:
                actions.append(("detect", s))
            if budget and task.alive:
                actions.append(("fail", s))
            if not task.alive:
                actions.append(("reset", s))
        if budget:
            actions.append(("global",))
        return actions

    def apply(self, action: tuple) -> None:
        getattr(self, "do_" + action[0])(*action[1:])

    def do_register(self, s: int) -> None:
        task = self.tasks[s]
        task.registered = True
        self.holder.coordinator.handle_reader_registration(s, task.attempt)

    def do_assign(self, s: int) -> None:
        """The reader sends a RequestSplitEvent; the enumerator answers."""
        self.holder.coordinator.handle_split_request(s)

    def do_deliver(self, s: int) -> None:
        message = self.transport[s].pop(0)
        if message[0] == SPLIT:
            self.holder.event_confirmed(s, message[1])
        self.tasks[s].receive(message)

    def do_finish(self, s: int) -> None:
        self.tasks[s].finish_split()

    def do_trigger(self) -> None:
        self.checkpoints.trigger()

    def do_trigger_tasks(self) -> None:
        self.checkpoints.trigger_tasks()

    def do_notify(self) -> None:
        """The coordinator thread runs the queued ``notifyCheckpointComplete`` calls."""
        self.holder.coordinator.notify_checkpoint_complete(self.checkpoints.completed.id)
        self.notified = self.checkpoints.completed.id

    def do_expire(self) -> None:
        self.checkpoints.abort_pending()

    def do_lose(self, s: int) -> None:
        self.failures += 1
        _, split = self.transport[s].pop(0)
        self.lost[s].append(split)

    def do_detect(self, s: int) -> None:
        """The lost events' send futures fail; the task is still running, so
        ``subtaskAccess.triggerTaskFailover`` fails it."""
        for split in self.lost[s]:
            self.holder.event_failed(s, split)
        self.lost[s] = []
        self.fail_task(s)

    def do_fail(self, s: int) -> None:
        self.failures += 1
        self.fail_task(s)

    def fail_task(self, s: int) -> None:
        task = self.tasks[s]
        task.alive = task.registered = False
        task.splits, task.done = set(), set()
        self.holder.execution_attempt_failed(s, task.attempt)
        transport, lost = self.transport[s], self.lost[s]
        self.transport[s], self.lost[s] = [], []
        for split in [value for kind, value in transport if kind == SPLIT] + lost:
            self.holder.event_failed(s, split)  # RPCs to a dead task fail

    def do_reset(self, s: int) -> None:
        """Regional failover: ``SchedulerBase.restoreState`` for the restarted subtask."""
        self.checkpoints.abort_pending()
        restored_id = self.checkpoints.latest_completed_id()
        splits, done = self.restored(s)
        self.tasks[s] = self.task_class(self, s, self.tasks[s].attempt + 1, splits, done)
        self.holder.subtask_reset(s, restored_id)

    def do_global(self) -> None:
        """Global failover: every task restarts, the coordinator is reset to the latest checkpoint."""
        self.failures += 1
        self.checkpoints.abort_pending()
        completed = self.checkpoints.completed
        for s in range(len(self.tasks)):
            splits, done = self.restored(s)
            self.tasks[s] = self.task_class(self, s, self.tasks[s].attempt + 1, splits, done)
            self.transport[s], self.lost[s] = [], []
        restored_id = completed.id if completed is not None else NO_CHECKPOINT
        data = tuple(sorted(completed.pool)) if completed is not None else None
        self.holder.reset_to_checkpoint(restored_id, data)
        # the old coordinator's executor, with its queued notifications, is gone
        self.notified = max(self.notified, restored_id)

    def restored(self, s: int) -> tuple:
        completed = self.checkpoints.completed
        return completed.readers[s] if completed is not None else ((), ())

    # -- observation -----------------------------------------------------------------------

    def view(self) -> View:
        coordinator = self.holder.coordinator
        inbox = []
        for s in range(len(self.tasks)):
            held = [(SPLIT, x) for _, events in sorted(self.holder.gateways[s].blocked_events.items()) for x in events]
            inbox.append(tuple(self.transport[s]) + tuple(held))
        pending = self.checkpoints.pending
        return View(
            pool=frozenset(coordinator.enumerator.unassigned),
            alive=tuple(t.alive for t in self.tasks),
            registered=tuple(s in coordinator.context.registered_readers and t.alive for s, t in enumerate(self.tasks)),
            splits=tuple(frozenset(t.splits) for t in self.tasks),
            done=tuple(frozenset(t.done) for t in self.tasks),
            inbox=tuple(inbox),
            lost=tuple(len(x) for x in self.lost),
            snapshots=tuple(t.snapshot if t.alive else 0 for t in self.tasks),
            coordinator_snapshot=self.holder.last_checkpoint_id,
            pending=pending.id if pending is not None else None,
            tasks_triggered=pending is not None and pending.tasks_triggered,
            completed=self.checkpoints.completed,
            notified=self.notified,
        )

    # -- exploration -----------------------------------------------------------------------

    def snapshot(self) -> tuple:
        return (tuple(t.state() for t in self.tasks), tuple(tuple(x) for x in self.transport),
                tuple(tuple(x) for x in self.lost), self.failures, self.notified, self.checkpoints.state(),
                self.holder.state())

    def restore(self, snapshot: tuple) -> "SourceJob":
        tasks, transport, lost, self.failures, self.notified, checkpoints, holder = snapshot
        self.tasks = [self.task_class(self, s) for s in range(len(tasks))]
        for task, state in zip(self.tasks, tasks):
            task.load(state)
        self.transport = [list(x) for x in transport]
        self.lost = [list(x) for x in lost]
        self.checkpoints.load(checkpoints)
        self.holder.load(holder)
        return self

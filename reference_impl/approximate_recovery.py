"""Approximate task-local recovery as an engine implements it (FLIP-135; recovery facts §1).

The classes mirror Flink's, step by step, so that variants override one method:

* failover: ``ResultPartitionType``, ``PipelinedRegionComputeUtil`` (regions merge across
  edges that must be consumed pipelined), ``RegionFailoverResultPartitionAvailabilityChecker``
  (FLINK-28701's explicit PIPELINED_APPROXIMATE case) and
  ``RestartPipelinedRegionFailoverStrategy.get_tasks_needing_restart`` (the BFS of recovery facts §1);
* the network stack: ``NetworkBuffer`` (BufferBuilder and BufferConsumer on one segment),
  ``BufferConsumerWithPartialRecordLength.cleanup_partial_record``, ``PipelinedSubpartition``
  (``poll_buffer``, ``create_read_view``), ``PipelinedApproximateSubpartition`` and its view,
  ``BufferWritingResultPartition`` (where ``partialRecordLength`` is set, FLINK-19547);
* checkpoints across the restart: ``CheckpointCoordinator`` (``abort_pending_checkpoints`` on
  a regional failover), ``TaskDeploymentDescriptor`` with the seed's "max checkpoint id", and
  the restarted task's ``ApproximateBarrierFilter`` in front of Flink's aligned barrier handler
  (:mod:`flipcheck.reference_impl.barriers`);
* recovery of a dataflow: ``ApproximateRecoveryRun`` restarts, restores, rewinds sources and
  reconnects consumers to running producers.

:class:`ApproximateLocalRecovery` bundles them as one engine, ``flip135``: Flink's classes plus
the two seed rules Flink never shipped (a zombie attempt cannot reconnect over a newer one; the
restarted task drops barriers up to the max checkpoint id in its deployment). Variants (named
mutants, Flink as shipped) replace one class of the bundle:
:mod:`flipcheck.reference_impl.approximate_recovery_variants`.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("src", 1), ("map", 2), ("sink", 1)], [("src", "map", ALL_TO_ALL), ("map", "sink", ALL_TO_ALL)])
>>> engine = ApproximateLocalRecovery()
>>> sorted(engine.restart_set(g, {("map", 0)}))   # map(1/2) and the sink, the source keeps running
[('map', 0), ('sink', 0)]
>>> h = engine.subpartition_harness(capacity=4)
>>> [h.process(e) for e in (("emit", 6), ("connect", 1), ("connect", 0))]
[(), (('view_created', 1),), (('rejected', 0, 'zombie'),)]
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Iterable

from flipcheck.model import approximate_recovery as spec
from flipcheck.model.barriers import View
from flipcheck.model.execution_graph import input_connections
from flipcheck.model.jobgraph import JobGraph, TaskId
from flipcheck.reference_impl.barriers import Task

__all__ = [
    "ResultPartitionType", "PIPELINED", "PIPELINED_APPROXIMATE", "BLOCKING",
    "PipelinedRegionComputeUtil", "RegionFailoverResultPartitionAvailabilityChecker",
    "RestartPipelinedRegionFailoverStrategy",
    "NetworkBuffer", "BufferConsumerWithPartialRecordLength", "PipelinedSubpartition",
    "PipelinedSubpartitionView", "PipelinedApproximateSubpartition", "PipelinedApproximateSubpartitionView",
    "BufferWritingResultPartition", "SubpartitionHarness", "PartitionRequestRejected",
    "CheckpointCoordinator", "TaskDeploymentDescriptor", "ApproximateBarrierFilter", "RestartedTask",
    "ApproximateRecoveryScheduler", "EngineBarrierRun", "RecoveryOutcome", "ApproximateRecoveryRun",
    "ApproximateLocalRecovery",
]


# ------------------------------------------------------------------------------------------------
# Failover: which tasks restart


@dataclass(frozen=True)
class ResultPartitionType:
    """The flags of Flink's ``ResultPartitionType`` the failover looks at (recovery facts §1.2 "Key classes")."""

    name: str
    must_be_pipelined_consumed: bool  # ConsumingConstraint.MUST_BE_PIPELINED: regions merge across it
    reconsumable: bool
    reconnectable: bool               # the 2020 flag: tracked by the JM partition tracker
    release_by_scheduler: bool        # ReleaseBy.SCHEDULER: tracked by the current tracker


PIPELINED = ResultPartitionType("PIPELINED", True, False, False, False)
PIPELINED_APPROXIMATE = ResultPartitionType("PIPELINED_APPROXIMATE", False, False, True, False)
BLOCKING = ResultPartitionType("BLOCKING", False, True, True, True)


class PipelinedRegionComputeUtil:
    """Regions: tasks connected by edges that must be consumed pipelined (union-find)."""

    def merges_across(self, partition_type: ResultPartitionType) -> bool:
        return partition_type.must_be_pipelined_consumed

    def compute_regions(self, graph: JobGraph, partition_type: ResultPartitionType) -> dict[TaskId, frozenset]:
        parent = {t: t for t in graph.tasks()}

        def find(t):
            while parent[t] != t:
                parent[t] = parent[parent[t]]
                t = parent[t]
            return t

        if self.merges_across(partition_type):
            for t in graph.tasks():
                for _, upstream in input_connections(graph, t):
                    parent[find(upstream)] = find(t)
        members: dict = {}
        for t in graph.tasks():
            members.setdefault(find(t), set()).add(t)
        return {t: frozenset(members[find(t)]) for t in graph.tasks()}


class RegionFailoverResultPartitionAvailabilityChecker:
    """``isAvailable = !failed && underlyingChecker.isAvailable && (reconsumable || APPROXIMATE)``
    (FLINK-28701); the underlying checker is the JM partition tracker of 2020, which tracks
    reconnectable partitions (recovery facts §1.3 "Partition tracking")."""

    def is_tracked(self, partition_type: ResultPartitionType) -> bool:
        return partition_type.reconnectable

    def is_available(self, producer: TaskId, partition_type: ResultPartitionType, failed_partitions: frozenset) -> bool:
        return (producer not in failed_partitions and self.is_tracked(partition_type)
                and (partition_type.reconsumable or partition_type == PIPELINED_APPROXIMATE))


class RestartPipelinedRegionFailoverStrategy:
    """``getTasksNeedingRestart``: the BFS of ``getRegionsToRestart`` (recovery facts §1.3, rules a-c)."""

    region_util_class = PipelinedRegionComputeUtil
    checker_class = RegionFailoverResultPartitionAvailabilityChecker
    # Rule (c); the seed's milestone three ("a failed task leads itself to restart") turns it off.
    restarts_consumer_regions = True

    def __init__(self, graph: JobGraph, partition_type: ResultPartitionType):
        self.graph, self.partition_type = graph, partition_type
        self.regions = self.region_util_class().compute_regions(graph, partition_type)
        self.checker = self.checker_class()
        self.consumer_tasks: dict = {t: [] for t in graph.tasks()}
        self.producer_tasks: dict = {t: [] for t in graph.tasks()}
        for t in graph.tasks():
            for _, upstream in input_connections(graph, t):
                self.consumer_tasks[upstream].append(t)
                self.producer_tasks[t].append(upstream)

    def get_tasks_needing_restart(self, failed: TaskId, failed_partitions: frozenset = frozenset()) -> set:
        regions_to_restart = {self.regions[failed]}
        queue = deque(regions_to_restart)
        while queue:
            region = queue.popleft()
            for task in region:
                for producer in self.producer_tasks[task]:  # rule (b)
                    if not self.checker.is_available(producer, self.partition_type, failed_partitions):
                        self._visit(self.regions[producer], regions_to_restart, queue)
                if self.restarts_consumer_regions:
                    for consumer in self.consumer_tasks[task]:  # rule (c)
                        self._visit(self.regions[consumer], regions_to_restart, queue)
        return {task for region in regions_to_restart for task in region}

    @staticmethod
    def _visit(region, regions_to_restart, queue):
        if region not in regions_to_restart:
            regions_to_restart.add(region)
            queue.append(region)


# ------------------------------------------------------------------------------------------------
# The network stack: buffers, the (approximate) pipelined subpartition and its views


class PartitionRequestRejected(Exception):
    """``createReadView`` refused (Flink throws IllegalStateException / PartitionNotFound)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class NetworkBuffer:
    """A BufferBuilder and its BufferConsumer on one memory segment: the writer commits bytes,
    the reader builds slices from its position; ``stream_start`` locates it in the stream."""

    __slots__ = ("capacity", "stream_start", "committed", "reader", "finished", "event", "blocking")

    def __init__(self, capacity: int, stream_start: int, event: int = -1, blocking: bool = False):
        self.capacity, self.stream_start = capacity, stream_start
        self.committed = self.reader = 0
        self.finished = event >= 0
        self.event, self.blocking = event, blocking

    def is_buffer(self) -> bool:
        return self.event < 0

    def append_and_commit(self, length: int) -> int:
        taken = min(length, self.capacity - self.committed)
        self.committed += taken
        return taken

    def is_full(self) -> bool:
        return self.committed == self.capacity

    def is_start_of_data_buffer(self) -> bool:
        return self.is_buffer() and self.reader == 0

    def skip(self, length: int) -> None:
        self.reader += length

    def build(self) -> tuple:
        """A slice ``(kind, start, end)`` of the committed, unread bytes (or the event)."""
        if not self.is_buffer():
            self.reader = 1
            return ("event", self.event, self.blocking)
        low, self.reader = self.reader, self.committed
        return ("data", self.stream_start + low, self.stream_start + self.committed)

    def snapshot(self) -> tuple:
        return (self.capacity, self.stream_start, self.committed, self.reader, self.finished, self.event, self.blocking)

    @classmethod
    def from_snapshot(cls, snapshot: tuple) -> "NetworkBuffer":
        buffer = cls.__new__(cls)
        (buffer.capacity, buffer.stream_start, buffer.committed, buffer.reader, buffer.finished,
         buffer.event, buffer.blocking) = snapshot
        return buffer


class BufferConsumerWithPartialRecordLength:
    __slots__ = ("buffer", "partial_record_length")

    def __init__(self, buffer: NetworkBuffer, partial_record_length: int):
        self.buffer, self.partial_record_length = buffer, partial_record_length

    def cleanup_partial_record(self) -> bool:
        """Skip the leading bytes that continue an earlier record; False when they fill the
        whole buffer, so the next buffer must be cleaned too (recovery facts §1)."""
        if self.partial_record_length < 0:
            raise AssertionError("approximate local recovery does not work with unaligned checkpoints")
        if self.partial_record_length == 0 or not self.buffer.is_start_of_data_buffer():
            return True
        self.buffer.skip(self.partial_record_length)
        return self.partial_record_length < self.buffer.capacity


class PipelinedSubpartitionView:
    """``releaseAllResources`` tells the parent that the subpartition was consumed."""

    def __init__(self, parent: "PipelinedSubpartition", attempt: int):
        self.parent, self.attempt, self.released = parent, attempt, False

    def get_next_buffer(self):
        return self.parent.poll_buffer()

    def resume_consumption(self) -> None:
        self.parent.resume_consumption()

    def release_all_resources(self) -> None:
        if not self.released:
            self.released = True
            self.parent.on_consumed_subpartition()


class PipelinedSubpartition:
    """Flink's ``PipelinedSubpartition``: a queue of buffers, one read view, consumed once."""

    view_class = PipelinedSubpartitionView

    def __init__(self):
        self.buffers: deque[BufferConsumerWithPartialRecordLength] = deque()
        self.read_view: PipelinedSubpartitionView | None = None
        self.is_blocked = False
        self.sequence_number = 0
        self.is_released = False

    # -- the producer side ----------------------------------------------------------------------

    def add(self, consumer: BufferConsumerWithPartialRecordLength) -> bool:
        if self.is_released:
            return False
        self.buffers.append(consumer)
        return True

    def release(self) -> None:
        """Consumption finished, producer failure or cancellation, job exit (seed requirement 2)."""
        if self.is_released:
            return
        self.buffers.clear()
        view, self.is_released = self.read_view, True
        if view is not None:
            view.released = True

    def on_consumed_subpartition(self) -> None:
        # ReleaseOnConsumptionResultPartition: the only subpartition is consumed -> release.
        self.release()

    # -- the consumer side ----------------------------------------------------------------------

    def create_read_view(self, attempt: int) -> PipelinedSubpartitionView:
        if self.is_released:
            raise PartitionRequestRejected(spec.RELEASED)
        if self.read_view is not None:
            raise PartitionRequestRejected("consumed")  # "pipelined subpartitions can only be consumed once"
        self.read_view = self.view_class(self, attempt)
        return self.read_view

    def build_slice_buffer(self, consumer: BufferConsumerWithPartialRecordLength) -> tuple:
        return consumer.buffer.build()

    def poll_buffer(self):
        """``pollBuffer``: the head's slice; finished buffers leave the queue; empty slices are
        skipped while the head is finished; an aligned barrier blocks until resumed."""
        if self.is_blocked or self.is_released:
            return None
        sliced = None
        while self.buffers:
            head = self.buffers[0]
            sliced = self.build_slice_buffer(head)
            if head.buffer.finished:
                self.buffers.popleft()
            if sliced[0] == "event" or sliced[2] > sliced[1]:
                break
            sliced = None
            if not head.buffer.finished:
                break
        if sliced is None:
            return None
        if sliced[0] == "event" and sliced[2]:
            self.is_blocked = True
        self.sequence_number += 1
        return sliced, self.sequence_number - 1

    def resume_consumption(self) -> None:
        self.is_blocked = False

    # -- snapshots for exhaustive exploration -----------------------------------------------------

    def snapshot(self) -> tuple:
        view = None if self.read_view is None else (self.read_view.attempt, self.read_view.released)
        return (tuple((c.buffer.snapshot(), c.partial_record_length) for c in self.buffers), view,
                self.is_blocked, self.sequence_number, self.is_released)

    def restore(self, snapshot: tuple, views: dict) -> None:
        buffers, view, self.is_blocked, self.sequence_number, self.is_released = snapshot
        self.buffers = deque(BufferConsumerWithPartialRecordLength(NetworkBuffer.from_snapshot(b), p) for b, p in buffers)
        self.read_view = None if view is None else views[view[0]]


class PipelinedApproximateSubpartitionView(PipelinedSubpartitionView):
    def release_all_resources(self) -> None:
        """Only flips the view's flag: the partition stays (recovery facts §1.4, ``testRelease``)."""
        self.released = True


class PipelinedApproximateSubpartition(PipelinedSubpartition):
    """``PipelinedApproximateSubpartition`` plus the seed's Point 1 (not in Flink): the newest
    attempt that created a view wins; an older one is refused."""

    view_class = PipelinedApproximateSubpartitionView

    def __init__(self):
        super().__init__()
        self.is_partial_buffer_cleanup_required = False
        self.latest_attempt = -1

    def on_consumed_subpartition(self) -> None:
        pass  # released by the JM or at job end, never on consumption

    def create_read_view(self, attempt: int) -> PipelinedSubpartitionView:
        if self.is_released:
            raise PartitionRequestRejected(spec.RELEASED)  # checkState(!isReleased)
        self.check_attempt(attempt)
        self.release_view()
        self.read_view = self.view_class(self, attempt)
        self.latest_attempt = max(self.latest_attempt, attempt)
        return self.read_view

    def check_attempt(self, attempt: int) -> None:
        """Seed Point 1: "creating ResultSubpartitionView for the newer execution attempt should
        prevent the creation of ResultSubpartitionView from the older execution attempt"."""
        if attempt < self.latest_attempt:
            raise PartitionRequestRejected(spec.ZOMBIE)

    def release_view(self) -> None:
        """The old view is released before a new one exists; the next buffers are cleaned."""
        if self.read_view is None:
            return
        self.read_view.release_all_resources()
        self.read_view = None
        self.is_partial_buffer_cleanup_required = True
        self.is_blocked = False
        self.sequence_number = 0

    def build_slice_buffer(self, consumer: BufferConsumerWithPartialRecordLength) -> tuple:
        if self.is_partial_buffer_cleanup_required:
            self.is_partial_buffer_cleanup_required = not consumer.cleanup_partial_record()
        return consumer.buffer.build()

    def snapshot(self) -> tuple:
        return super().snapshot() + (self.is_partial_buffer_cleanup_required, self.latest_attempt)

    def restore(self, snapshot: tuple, views: dict) -> None:
        super().restore(snapshot[:-2], views)
        self.is_partial_buffer_cleanup_required, self.latest_attempt = snapshot[-2:]


class BufferWritingResultPartition:
    """The writer of one subpartition: whole records, continuations with their partial length."""

    def __init__(self, subpartition: PipelinedSubpartition, capacity: int):
        self.subpartition, self.capacity = subpartition, capacity
        self.builder: NetworkBuffer | None = None
        self.written = self.events = 0

    def partial_record_length(self, partial_bytes: int) -> int:
        """FLINK-19547: the bytes the continuation's ``appendAndCommit`` wrote."""
        return partial_bytes

    def emit_record(self, length: int) -> None:
        if self.subpartition.is_released:
            return
        buffer, taken = self.append_unicast_data_for_new_record(length)
        remaining = length - taken
        while remaining > 0:
            self.finish_unicast_buffer_builder()
            buffer, taken = self.append_unicast_data_for_record_continuation(remaining)
            remaining -= taken
        if buffer.is_full():
            self.finish_unicast_buffer_builder()

    def _request_new_buffer_builder(self) -> NetworkBuffer:
        self.builder = NetworkBuffer(self.capacity, self.written)
        return self.builder

    def _append(self, buffer: NetworkBuffer, length: int) -> int:
        taken = buffer.append_and_commit(length)
        self.written += taken
        return taken

    def append_unicast_data_for_new_record(self, length: int) -> tuple[NetworkBuffer, int]:
        buffer = self.builder
        if buffer is None:
            buffer = self._request_new_buffer_builder()
            self.subpartition.add(BufferConsumerWithPartialRecordLength(buffer, 0))
        return buffer, self._append(buffer, length)

    def append_unicast_data_for_record_continuation(self, remaining: int) -> tuple[NetworkBuffer, int]:
        buffer = self._request_new_buffer_builder()
        partial = self._append(buffer, remaining)  # appended before the consumer is created
        self.subpartition.add(BufferConsumerWithPartialRecordLength(buffer, self.partial_record_length(partial)))
        return buffer, partial

    def finish_unicast_buffer_builder(self) -> None:
        if self.builder is not None:
            self.builder.finished = True
            self.builder = None

    def broadcast_event(self, blocking: bool) -> None:
        if self.subpartition.is_released:
            return
        self.finish_unicast_buffer_builder()
        self.subpartition.add(BufferConsumerWithPartialRecordLength(
            NetworkBuffer(self.capacity, self.written, event=self.events, blocking=blocking), 0))
        self.events += 1


class SubpartitionHarness:
    """Drives one subpartition, its writer and the consumer attempts with the model's events and
    reports what happened in the model's output vocabulary (view changes, deliveries)."""

    def __init__(self, engine: "ApproximateLocalRecovery", capacity: int):
        self.engine, self.capacity = engine, capacity
        self.subpartition = engine.subpartition_class()
        self.writer = engine.partition_writer_class(self.subpartition, capacity)
        self.views: dict[int, PipelinedSubpartitionView] = {}

    def live_views(self) -> list[int]:
        return sorted(a for a, v in self.views.items() if not v.released)

    def live_view(self) -> int | None:
        """The attempt whose view the subpartition serves (the consumer that may poll)."""
        view = self.subpartition.read_view
        return None if view is None or view.released or self.subpartition.is_released else view.attempt

    def process(self, event: tuple) -> tuple:
        kind = event[0]
        live_before, released_before = self.live_views(), self.subpartition.is_released
        out: list = []
        if kind == "emit":
            self.writer.emit_record(event[1])
        elif kind == "barrier":
            self.writer.broadcast_event(event[1])
        elif kind == "connect":
            try:
                self.views[event[1]] = self.subpartition.create_read_view(event[1])
            except PartitionRequestRejected as rejected:
                out.append(("rejected", event[1], rejected.reason))
        elif kind == "release_view":
            view = self.views.get(event[1])
            if view is not None:
                view.release_all_resources()
        elif kind == "poll":
            view = self.views.get(event[1])
            # A released view's reader has left the netty queue: it polls nothing.
            polled = None if view is None or view.released else view.get_next_buffer()
            if polled is None:
                out.append(("none", event[1]))
            else:
                (what, a, b), sequence = polled
                out.append(("data", event[1], sequence, a, b) if what == "data"
                           else ("event", event[1], sequence, a, b))
        elif kind == "resume":
            view = self.views.get(event[1])
            if view is not None and not view.released:
                view.resume_consumption()
        elif kind == "release_partition":
            self.subpartition.release()
        else:
            raise ValueError(f"unknown subpartition event {event!r}")
        live_after = self.live_views()
        changes = [("view_released", a) for a in live_before if a not in live_after]
        if kind == "connect" and event[1] in live_after and event[1] not in live_before:
            changes.append(("view_created", event[1]))
        if self.subpartition.is_released and not released_before:
            out.append(("partition_released",))
        return tuple(changes + out)

    def snapshot(self) -> tuple:
        writer = self.writer
        # The open builder is queued until finished; a released partition dropped it.
        builder_open = writer.builder is not None and not self.subpartition.is_released
        return (self.subpartition.snapshot(), tuple(sorted((a, v.released) for a, v in self.views.items())),
                writer.written, writer.events, builder_open)

    def restore(self, snapshot: tuple) -> "SubpartitionHarness":
        sub, views, self.writer.written, self.writer.events, builder_open = snapshot
        self.views = {}
        for attempt, released in views:
            view = self.subpartition.view_class(self.subpartition, attempt)
            view.released = released
            self.views[attempt] = view
        self.subpartition.restore(sub, self.views)
        # The writer's open builder is the last queued data buffer (only finished ones leave).
        self.writer.builder = self.subpartition.buffers[-1].buffer if builder_open else None
        return self


# ------------------------------------------------------------------------------------------------
# Checkpoints across the restart


class CheckpointCoordinator:
    """Pending checkpoints, at most ``max_concurrent``; a regional failover aborts them all
    (``SchedulerBase.restoreState`` -> ``abortPendingCheckpoints(JOB_FAILOVER_REGION)``)."""

    def __init__(self, next_id: int, pending: Iterable[int] = (), max_concurrent: int = 1):
        self.next_id, self.pending, self.max_concurrent = next_id, set(pending), max_concurrent
        self.completed: list[int] = []

    def checkpoint_id_counter(self) -> int:
        """``CheckpointIDCounter.get()``: the id the next checkpoint gets."""
        return self.next_id

    def can_trigger(self) -> bool:
        return len(self.pending) < self.max_concurrent

    def trigger_checkpoint(self) -> int:
        checkpoint_id, self.next_id = self.next_id, self.next_id + 1
        self.pending.add(checkpoint_id)
        return checkpoint_id

    def receive_acknowledge(self, checkpoint_id: int) -> bool:
        """Every other task runs and acknowledges; the restarted task's ack completes it."""
        if checkpoint_id not in self.pending:
            return False  # aborted or unknown: the late ack is discarded
        self.pending.discard(checkpoint_id)
        self.completed.append(checkpoint_id)
        return True

    def receive_decline(self, checkpoint_id: int) -> None:
        self.pending.discard(checkpoint_id)

    def abort_pending_checkpoints(self) -> None:
        self.pending.clear()


@dataclass(frozen=True)
class TaskDeploymentDescriptor:
    """What the restarted task is deployed with: the restore id (``JobManagerTaskRestore``) and
    the seed's "max checkpointID ... attached to the task deployment descriptor"."""

    restore_checkpoint_id: int
    max_checkpoint_id: int


class ApproximateBarrierFilter:
    """Seed "Missing Events" option 1: "sink can drop any barrier that is no-bigger than the id"."""

    def __init__(self, deployment: TaskDeploymentDescriptor):
        self.deployment = deployment

    def drops(self, checkpoint_id: int) -> bool:
        return checkpoint_id <= self.deployment.max_checkpoint_id


class RestartedTask:
    """The restarted task's input: the filter, then Flink's aligned handler."""

    def __init__(self, scenario: spec.BarrierScenario, barrier_filter: ApproximateBarrierFilter):
        self.filter = barrier_filter
        self.task = Task(scenario.config)

    def receive_barrier(self, checkpoint_id: int, channel: int) -> tuple:
        if self.filter.drops(checkpoint_id):
            return ((spec.DROPPED, checkpoint_id, channel),)
        return self.task.process(("B", checkpoint_id, channel))


class ApproximateRecoveryScheduler:
    """``DefaultScheduler.restartTasks``: restore state (aborting pending checkpoints), then
    deploy the restarted task with its descriptor."""

    def restore_state(self, coordinator: CheckpointCoordinator) -> None:
        coordinator.abort_pending_checkpoints()

    def deployment(self, coordinator: CheckpointCoordinator, restore_id: int) -> TaskDeploymentDescriptor:
        # "The id can be fetched from CheckpointIDCounter in JM": the highest id handed out.
        return TaskDeploymentDescriptor(restore_id, coordinator.checkpoint_id_counter() - 1)


class EngineBarrierRun:
    """The barrier scenario with the engine's objects; the same successor interface as the
    model's :func:`~flipcheck.model.approximate_recovery.barrier_successors` plus the task's view.

    States are hashable: (queues, task snapshot, next id, pending, completed_new)."""

    def __init__(self, engine: "ApproximateLocalRecovery", scenario: spec.BarrierScenario):
        self.engine, self.scenario = engine, scenario
        # Before the restart: ids 1..max_triggered handed out, the newest one possibly pending.
        before = scenario.max_triggered > scenario.last_completed
        coordinator = CheckpointCoordinator(scenario.max_triggered + 1, {scenario.max_triggered} if before else (),
                                            scenario.max_concurrent)
        scheduler = engine.scheduler_class()
        scheduler.restore_state(coordinator)
        self.deployment = scheduler.deployment(coordinator, scenario.last_completed)
        self._coordinator0 = (coordinator.next_id, frozenset(coordinator.pending))

    def _task(self, snapshot=None) -> RestartedTask:
        task = RestartedTask(self.scenario, self.engine.barrier_filter_class(self.deployment))
        if snapshot is not None:
            task.task.restore(snapshot)
        return task

    def initial(self) -> tuple:
        queues = tuple(tuple(range(c + 1, self.scenario.max_triggered + 1)) for c in self.scenario.consumed)
        return (queues, self._task().task.snapshot(), *self._coordinator0, False)

    def view(self, state: tuple) -> View:
        return self._task(state[1]).task.view()

    def successors(self, state: tuple):
        queues, snapshot, next_id, pending, completed_new = state
        blocked = self._task(snapshot).task.view().blocked
        for channel, queue in enumerate(queues):
            if not queue or blocked >> channel & 1:
                continue
            task = self._task(snapshot)
            outputs = task.receive_barrier(queue[0], channel)
            coordinator = CheckpointCoordinator(next_id, pending, self.scenario.max_concurrent)
            done = completed_new
            for out in outputs:
                if out[0] == "triggered" and coordinator.receive_acknowledge(out[1]):
                    done = done or out[1] > self.scenario.max_triggered
                elif out[0] == "aborted":
                    coordinator.receive_decline(out[1])
            new_queues = queues[:channel] + (queue[1:],) + queues[channel + 1:]
            yield (("deliver", channel, queue[0]),
                   (new_queues, task.task.snapshot(), next_id, frozenset(coordinator.pending), done),
                   outputs, task.task.view())
        coordinator = CheckpointCoordinator(next_id, pending, self.scenario.max_concurrent)
        if next_id <= self.scenario.max_triggered + self.scenario.new_checkpoints and coordinator.can_trigger():
            checkpoint_id = coordinator.trigger_checkpoint()
            yield (("trigger", checkpoint_id), (tuple(q + (checkpoint_id,) for q in queues), snapshot,
                                                coordinator.next_id, frozenset(coordinator.pending), completed_new),
                   (), self._task(snapshot).task.view())


# ------------------------------------------------------------------------------------------------
# Recovery of a dataflow


@dataclass(frozen=True)
class RecoveryOutcome:
    restart: frozenset         # task numbers that restarted
    final: tuple               # per task, the Counter of copies it holds at the end
    logs: dict                 # per sink task number, the Counter of copies it wrote out (never rolled back)


class ApproximateRecoveryRun:
    """Fail tasks of a running dataflow, recover like the engine, run the rest of the input."""

    def __init__(self, engine: "ApproximateLocalRecovery"):
        self.engine = engine

    def reconnect(self, items: tuple, half_read: bool) -> tuple:
        """A restarted consumer reconnects to a running producer: the subpartition keeps its
        data; barriers of the aborted checkpoint are dropped (B1); a record the failed attempt
        had half read is cleaned (the partial record)."""
        items = tuple(i for i in items if i != spec.BARRIER_ITEM)
        if half_read and items:
            return items[1:]
        return items

    def recover(self, flow: spec.Dataflow, state: spec.Flow, failed: Iterable[int], partial: frozenset = frozenset(),
                unavailable: Iterable[int] = ()) -> RecoveryOutcome:
        tasks = flow.tasks
        restart_tasks = self.engine.restart_set(flow.graph, {tasks[i] for i in failed}, {tasks[i] for i in unavailable})
        restart = frozenset(i for i, t in enumerate(tasks) if t in restart_tasks)
        processed = list(state.processed)
        for task in restart:  # restore the last completed checkpoint (sources rewind with it)
            processed[task] = processed[task][:spec.restored_prefix(state, task)]
        channels = list(state.channels)
        for channel, (upstream, task) in enumerate(flow.channels):
            if upstream in restart:
                channels[channel] = ()  # the producer's partition is released with it
            elif task in restart:
                head_partial = channel in partial and bool(state.channels[channel]) \
                    and state.channels[channel][0] != spec.BARRIER_ITEM
                channels[channel] = self.reconnect(state.channels[channel], head_partial)
            else:
                channels[channel] = tuple(i for i in state.channels[channel] if i != spec.BARRIER_ITEM)
        n = len(tasks)
        recovered = spec.Flow(tuple(processed), tuple(channels), False, (-1,) * n, (frozenset(),) * n)
        end = spec.drain(flow, recovered)
        final = tuple(Counter(p) for p in end.processed)
        logs = {}
        for task in range(n):
            if not flow.outputs[task]:
                logs[task] = Counter(state.processed[task]) + Counter(end.processed[task][len(processed[task]):])
        return RecoveryOutcome(restart, final, logs)


# ------------------------------------------------------------------------------------------------
# The engine


class ApproximateLocalRecovery:
    """The FLIP-135 engine: Flink's classes, every streaming edge PIPELINED_APPROXIMATE
    (``ALL_EDGES_PIPELINED_APPROXIMATE``), plus the seed's zombie rule and barrier dropping.
    ``flipcheck.ApproximateLocalRecovery``, the base class of a variant of your own.

    A variant replaces one class of the bundle, each Flink's: ``failover_strategy_class``
    (``RestartPipelinedRegionFailoverStrategy``: which tasks restart), ``subpartition_class`` and
    ``partition_writer_class`` (the network stack), ``scheduler_class``, ``barrier_filter_class``
    (the restarted task's barrier dropping) and ``recovery_class`` (a whole recovery); or
    ``partition_type``. :meth:`restart_set`, :meth:`subpartition_harness`, :meth:`barrier_run`
    and :meth:`recovery` drive them. Check yours with
    ``flipcheck verify --suite approximate-recovery --variant FILE.py:Mine``.

    >>> import flipcheck
    >>> from flipcheck.reference_impl.approximate_recovery import RestartPipelinedRegionFailoverStrategy
    >>> g = flipcheck.job_graph([("src", 1), ("map", 2), ("sink", 1)],
    ...                         [("src", "map", "all-to-all"), ("map", "sink", "all-to-all")])
    >>> sorted(flipcheck.ApproximateLocalRecovery().restart_set(g, {("map", 0)}))   # map[0] and downstream
    [('map', 0), ('sink', 0)]
    >>> class OnlyTheFailedTask(RestartPipelinedRegionFailoverStrategy):
    ...     def get_tasks_needing_restart(self, failed, failed_partitions=frozenset()):
    ...         return {failed}
    >>> class SingleTaskRecovery(flipcheck.ApproximateLocalRecovery):
    ...     failover_strategy_class = OnlyTheFailedTask
    >>> sorted(SingleTaskRecovery().restart_set(g, {("map", 0)}))     # the sink keeps the lost records' effects
    [('map', 0)]
    """

    name = "flip135"
    flink_issue: str | None = None
    source = "seed FLIP-135 milestone one, downstream failover as shipped (FLINK-19693)"
    part: str | None = None  # which part of the design a variant changes
    partition_type = PIPELINED_APPROXIMATE
    failover_strategy_class = RestartPipelinedRegionFailoverStrategy
    subpartition_class = PipelinedApproximateSubpartition
    partition_writer_class = BufferWritingResultPartition
    scheduler_class = ApproximateRecoveryScheduler
    barrier_filter_class = ApproximateBarrierFilter
    recovery_class = ApproximateRecoveryRun

    def restart_set(self, graph: JobGraph, failed: Iterable[TaskId], unavailable: Iterable[TaskId] = ()) -> frozenset:
        """The union of ``getTasksNeedingRestart`` over the failed tasks."""
        strategy = self.failover_strategy_class(graph, self.partition_type)
        unavailable = frozenset(unavailable)
        restart: set = set()
        for task in failed:
            restart |= strategy.get_tasks_needing_restart(task, unavailable)
        return frozenset(restart)

    def subpartition_harness(self, capacity: int) -> SubpartitionHarness:
        return SubpartitionHarness(self, capacity)

    def barrier_run(self, scenario: spec.BarrierScenario) -> EngineBarrierRun:
        return EngineBarrierRun(self, scenario)

    def recovery(self) -> ApproximateRecoveryRun:
        return self.recovery_class(self)

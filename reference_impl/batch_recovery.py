"""Flink's batch job recovery after a JobMaster failover (FLIP-383, recovery facts §4), class by class.

The classes mirror Flink's, with the methods the facts describe and nothing else:

* :class:`FileSystemJobEventStore` — an asynchronous write buffer flushed to ``events.<N>``
  files; what is not flushed dies with the JM; :class:`JobEventManager` — ``start``, ``stop(clear)``,
  ``writeEvent`` (only while running), ``replay(handler)`` returning False on any throwable;
* :class:`BatchSourceCoordinator` — a ``SourceCoordinator`` with its batch snapshot
  (``checkpointCoordinator(NO_CHECKPOINT)``: unassigned splits + uncheckpointed assignments),
  ``resetToCheckpoint`` and ``subtaskReset`` (FLINK-33984);
* :class:`ShuffleMaster` — the TaskManagers' retained partitions, reported to the recovering JM
  within the timeout (``getPartitionWithMetrics``, FLINK-33892), released on late reports;
* :class:`DefaultBatchJobRecoveryHandler` — ``onExecutionFinished`` (snapshot cadence with
  min-pause), ``startRecovering``, ``replayOneEvent`` (a LinkedHashMap of finished events),
  ``finalizeReplay`` (trailing events without snapshot dropped), ``restoreOperatorCoordinators``,
  ``recoverPartitions``, ``resetVerticesInRecovering``, ``recoverFinished`` / ``recoverFailed``
  (FLINK-35465);
* :class:`AdaptiveBatchScheduler` — scheduling, ``onTaskFinished``, ``handleGlobalFailure`` and
  the delayed restart.

:class:`BatchJob` wires them with the environment (TaskManagers, the HA restart of the JM) and
applies the actions of :mod:`flipcheck.model.batch_recovery`; :meth:`BatchJob.view` shows the
model's :class:`~flipcheck.model.batch_recovery.State`, which is also what :meth:`BatchJob.snapshot`
saves for exhaustive exploration. Variants override one method of one class
(``reference_impl/batch_recovery_variants.py``).

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.batch_recovery import Config
>>> job = BatchJob(Config(JobGraph.build([("src", 2), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), splits=1))
>>> for action in [("start", 0), ("start", 1), ("assign", 0), ("finish", 0), ("flush",), ("crash",), ("restart",)]:
...     job.apply(action)
>>> job.jm.handler.finished_map            # replayed ...
{0: ('finished', 0, None, 1)}
>>> job.jm.handler.kept_entries(list(job.jm.handler.finished_map.items()))   # ... but without a snapshot: dropped
[]
>>> job.jm.graph.status, job.jm.coordinators[0].enumerator_pool
(['CREATED', 'CREATED', 'CREATED'], [('src', 0)])
"""

from __future__ import annotations

from flipcheck.model.batch_recovery import (
    CANCELED, CREATED, FINISHED, FINISHED_EVENT, RESET_EVENT, RUNNING, Config, State, content, topology,
)
from flipcheck.model.batch_recovery import route as _route

__all__ = [
    "NO_CHECKPOINT", "IllegalStateException", "FileSystemJobEventStore", "JobEventManager", "BatchSourceCoordinator",
    "ShuffleMaster", "ExecutionGraph", "DefaultBatchJobRecoveryHandler", "AdaptiveBatchScheduler", "JobMaster",
    "BatchJob",
]

NO_CHECKPOINT = -1
RELEASE, RESERVE, OPTIONAL = "RELEASE", "RESERVE", "OPTIONAL"


class IllegalStateException(RuntimeError):
    pass


# ------------------------------------------------------------------------------------------------
# The event store


class FileSystemJobEventStore:
    """Events serialised by a writer thread into a buffer that is flushed every flush-interval;
    ``files`` is what ``events.0, events.1, ...`` hold."""

    def __init__(self):
        self.files: list[list] = [[]]
        self.buffer: list = []

    def write_event(self, event: tuple, cut_block: bool) -> None:
        self.buffer.append(event)

    def flush(self) -> None:
        self.files[-1].extend(self.buffer)
        self.buffer = []

    def read_events(self) -> list:
        return [e for f in self.files for e in f]

    def is_empty(self) -> bool:
        return not any(self.files)

    def clear(self) -> None:
        """``stop(clear=true)``: the directory is deleted."""
        self.files, self.buffer = [[]], []


class JobEventManager:
    def __init__(self, store: FileSystemJobEventStore):
        self.store = store
        self.running = False

    def start(self) -> None:
        self.running = True

    def stop(self, clear: bool) -> None:
        if clear:
            self.store.clear()
        self.running = False

    def write_event(self, event: tuple, cut_block: bool) -> None:
        if not self.running:
            raise IllegalStateException("JobEventManager is not running")
        self.store.write_event(event, cut_block)

    def has_job_events(self) -> bool:
        return not self.store.is_empty()

    def replay(self, handler: "DefaultBatchJobRecoveryHandler") -> bool:
        try:
            handler.start_replay()
            for event in self.store.read_events():
                handler.replay_one_event(event)
            handler.finalize_replay()
            return True
        except Exception:  # noqa: BLE001 - Flink: any throwable makes replay return false
            return False


# ------------------------------------------------------------------------------------------------
# Operator coordinators and the shuffle master


class BatchSourceCoordinator:
    """A ``SourceCoordinator`` of a bounded source: enumerator pool + tracker assignments."""

    def __init__(self, splits, parallelism: int):
        self.all_splits = tuple(splits)
        self.enumerator_pool = sorted(splits)
        self.uncheckpointed = [[] for _ in range(parallelism)]   # SplitAssignmentTracker, never checkpointed in batch

    def handle_split_request(self, subtask: int):
        split = self.enumerator_pool.pop(0)
        self.uncheckpointed[subtask] = sorted(self.uncheckpointed[subtask] + [split])
        return split

    def has_splits(self) -> bool:
        return bool(self.enumerator_pool)

    def checkpoint_coordinator(self, checkpoint_id: int) -> tuple:
        assert checkpoint_id == NO_CHECKPOINT
        return frozenset(self.enumerator_pool), tuple(tuple(a) for a in self.uncheckpointed)

    def reset_to_checkpoint(self, checkpoint_id: int, data: tuple | None) -> None:
        if data is None:
            self.enumerator_pool = sorted(self.all_splits)
            self.uncheckpointed = [[] for _ in self.uncheckpointed]
            return
        pool, assigned = data
        self.enumerator_pool = sorted(pool)
        self.uncheckpointed = [list(a) for a in assigned]

    def subtask_reset(self, subtask: int, checkpoint_id: int) -> None:
        back = self.uncheckpointed[subtask]
        self.uncheckpointed[subtask] = []
        self.enumerator_pool = sorted(set(self.enumerator_pool) | set(back))


class ShuffleMaster:
    """The TaskManagers' partitions (``outputs``: a sink's output lives in the external system)
    and the reports to a recovering JM."""

    def __init__(self, tasks: int):
        self.outputs: list = [None] * tasks
        self.fetched: set = set()

    def notify_partition_recovery_started(self) -> None:
        self.fetched = set()

    def report(self, task: int) -> None:
        self.fetched.add(task)

    def get_partition_with_metrics(self, expected: set) -> set:
        """Completes at once if every expected partition was fetched, else at the timeout with
        what was fetched (a timeout is not an error); then fetching stops."""
        fetched, self.fetched = set(self.fetched), set()
        return fetched

    def release_partitions(self, tasks) -> None:
        for t in tasks:
            self.outputs[t] = None


# ------------------------------------------------------------------------------------------------
# The JobMaster


class ExecutionGraph:
    def __init__(self, config: Config):
        self.config = config
        self.topo = topology(config)
        self.status = [CREATED] * len(self.topo.tasks)
        self.attempt = [0] * len(self.topo.tasks)     # the current execution's attempt number
        self.state = "CREATED"       # CREATED, RECONCILING, RUNNING

    def source_slot(self, t: int):
        vertex, subtask = self.topo.tasks[t]
        return (self.topo.sources.index(vertex), subtask) if vertex in self.topo.sources else None

    def job_vertex_finished(self, vertex: str) -> bool:
        return all(self.status[t] == FINISHED for t in self.topo.vertex_tasks[vertex])

    def all_finished(self) -> bool:
        return all(s == FINISHED for s in self.status)


class DefaultBatchJobRecoveryHandler:
    """``DefaultBatchJobRecoveryHandler`` (recovery facts §4.4 Recording and Recovery steps)."""

    def __init__(self, jm: "JobMaster"):
        self.jm = jm
        self.need_to_snapshot: set = set()
        self.min_pause_elapsed = False
        self.finished_map: dict = {}

    # -- recording -------------------------------------------------------------------------

    def snapshot_due(self, job_vertex_finished: bool) -> bool:
        return job_vertex_finished or self.min_pause_elapsed or not self.jm.config.min_pause

    def on_execution_finished(self, t: int) -> None:
        graph = self.jm.graph
        vertex = graph.topo.tasks[t][0]
        self.need_to_snapshot.add(vertex)
        finished = graph.job_vertex_finished(vertex)
        snapshot = None
        if self.snapshot_due(finished):
            snapshot = self.snapshot_coordinators()
            self.min_pause_elapsed = False
            self.need_to_snapshot = set()
        self.jm.events.write_event((FINISHED_EVENT, t, snapshot, self.jm.graph.attempt[t]), cut_block=finished)

    def snapshot_coordinators(self) -> tuple:
        """The OC snapshots of the vertices needing one; the ShuffleMaster snapshot makes the
        event 'snapshot-bearing' even when no vertex has a coordinator."""
        topo = self.jm.graph.topo
        return tuple((v, self.jm.coordinators[topo.sources.index(v)].checkpoint_coordinator(NO_CHECKPOINT))
                     for v in topo.sources if v in self.need_to_snapshot)

    def on_execution_vertex_reset(self, tasks) -> None:
        if self.is_recovering():
            return   # checkState(!isRecovering()): nothing is recorded during recovery
        self.jm.events.write_event((RESET_EVENT, frozenset(tasks)), cut_block=False)

    def is_recovering(self) -> bool:
        return self.jm.graph.state == "RECONCILING"

    # -- recovery --------------------------------------------------------------------------

    def start_recovering(self) -> None:
        self.jm.graph.state = "RECONCILING"
        self.jm.shuffle_master.notify_partition_recovery_started()
        if not self.jm.events.replay(self):
            self.recover_failed()

    def start_replay(self) -> None:
        self.finished_map = {}

    def replay_one_event(self, event: tuple) -> None:
        if event[0] == FINISHED_EVENT:
            self.finished_map[event[1]] = event         # LinkedHashMap.put
        elif event[0] == RESET_EVENT:
            for t in event[1]:
                self.finished_map.pop(t, None)
        else:
            raise IllegalStateException(f"unknown event {event!r}")

    def finalize_replay(self) -> None:
        entries = self.kept_entries(list(self.finished_map.items()))
        snapshots: dict = {}
        for t, event in entries:
            self.jm.graph.status[t] = FINISHED           # execution.recoverExecution(attemptId, ...)
            self.jm.graph.attempt[t] = event[3]
            for vertex, snapshot in event[2] or ():
                snapshots[vertex] = snapshot             # later events overwrite earlier ones
        self.restore_operator_coordinators(snapshots)

    def kept_entries(self, entries: list) -> list:
        """Drop the trailing entries without OC/ShuffleMaster snapshot."""
        while entries and entries[-1][1][2] is None:
            entries.pop()
        return entries

    def restore_operator_coordinators(self, snapshots: dict) -> None:
        graph = self.jm.graph
        for c, vertex in enumerate(graph.topo.sources):
            if vertex in snapshots:
                self.jm.coordinators[c].reset_to_checkpoint(NO_CHECKPOINT, snapshots[vertex])
        # determineVerticesForResetAfterRestoreOpCoordinator: unfinished tasks of vertices with
        # coordinators go to CANCELED and are reset (every coordinator supports batch snapshots).
        to_reset = []
        for vertex in graph.topo.sources:
            for t in graph.topo.vertex_tasks[vertex]:
                if graph.status[t] != FINISHED:
                    graph.status[t] = CANCELED
                    to_reset.append(t)
        self.reset_vertices_in_recovering(to_reset, consider_result_consumable=False)

    def partition_decision(self, t: int) -> str:
        status, topo = self.jm.graph.status, self.jm.graph.topo
        if status[t] != FINISHED:
            return RELEASE
        if any(status[c] != FINISHED for c in topo.consumers[t]):
            return RESERVE
        return OPTIONAL

    def recover_partitions(self) -> None:
        topo = self.jm.graph.topo
        decisions = {t: self.partition_decision(t) for t in range(len(topo.tasks)) if topo.consumers[t]}
        reserve = {t for t, d in decisions.items() if d == RESERVE}
        reported = self.jm.shuffle_master.get_partition_with_metrics(reserve)
        # ResultPartitionID includes the ExecutionAttemptID: another attempt's partition is unknown
        outputs = self.jm.shuffle_master.outputs
        actual = {t for t in reported if decisions[t] == RELEASE or outputs[t][0] == self.jm.graph.attempt[t]}
        self.release_unknown_partitions({t for t, d in decisions.items() if d == RELEASE} & actual)
        # Late TM reports after the fetch stopped are answered with releasePartitions.
        self.jm.shuffle_master.release_partitions(
            t for t in decisions if t not in actual and outputs[t] is not None)
        self.track_partitions(reserve & actual)
        missing = reserve - actual
        self.restart_producers_of_missing(missing)

    def track_partitions(self, tasks: set) -> None:
        for t in tasks:
            self.jm.partition_tracker.add(t)            # startTrackingPartition + recoverProducedPartitions

    def release_unknown_partitions(self, tasks: set) -> None:
        self.jm.shuffle_master.release_partitions(tasks)

    def restart_producers_of_missing(self, missing: set) -> None:
        self.reset_vertices_in_recovering(missing, consider_result_consumable=True)

    def reset_vertices_in_recovering(self, tasks, consider_result_consumable: bool) -> None:
        jm = self.jm
        restart: set = set()
        for t in tasks:
            restart |= jm.tasks_needing_restart(t, consider_result_consumable)
        jm.reset_vertices(sorted(t for t in restart if jm.graph.status[t] != CREATED))

    def recover_finished(self) -> None:
        graph = self.jm.graph
        graph.state = "RUNNING"
        odd = [t for t, s in enumerate(graph.status) if s not in (CREATED, FINISHED)]
        if odd:
            raise IllegalStateException(f"execution vertices {odd} are not CREATED or FINISHED after recovery")
        self.finished_map = {}

    def recover_failed(self) -> None:
        self.jm.graph.state = "RUNNING"
        self.jm.events.stop(True)
        self.jm.events.start()
        self.jm.scheduler.handle_global_failure("Recover failed from JM failover, fail global.")

    def complete_recovery(self, failure: Exception | None) -> None:
        """The ``whenComplete`` callback of ``startRecovering`` once partitions are recovered."""
        if failure is not None:
            self.recover_failed()
            return
        try:
            self.recover_finished()
        except IllegalStateException:
            self.recover_failed()


class AdaptiveBatchScheduler:
    def __init__(self, jm: "JobMaster"):
        self.jm = jm
        self.restart_pending = False
        self.global_failures = 0

    def can_start(self, t: int) -> bool:
        jm = self.jm
        return jm.graph.status[t] == CREATED and all(
            jm.graph.status[p] == FINISHED and p in jm.partition_tracker for p in jm.graph.topo.producers[t])

    def on_task_finished(self, t: int) -> None:
        self.jm.partition_tracker.add(t)
        self.jm.handler.on_execution_finished(t)

    def handle_global_failure(self, cause: str) -> None:
        """``handleGlobalFailure`` → ``restartTasksWithDelay``: every task is cancelled now (a
        CREATED execution goes to CANCELED, a FINISHED one releases its partitions) and reset
        after the restart delay."""
        self.global_failures += 1
        graph = self.jm.graph
        for t, s in enumerate(graph.status):
            if s == FINISHED:
                if graph.topo.consumers[t]:
                    self.jm.shuffle_master.release_partitions([t])
            else:
                graph.status[t] = CANCELED
        self.jm.partition_tracker.clear()
        self.restart_pending = True

    def restart_tasks(self) -> None:
        jm = self.jm
        self.restart_pending = False
        everything = range(len(jm.graph.status))
        jm.handler.on_execution_vertex_reset(everything)
        for t in everything:
            jm.graph.status[t], jm.graph.attempt[t] = CREATED, 0
            jm.running_reads[t] = []
        for coordinator in jm.coordinators:   # notifyCoordinatorsOfEmptyGlobalRestart: recreated
            coordinator.reset_to_checkpoint(NO_CHECKPOINT, None)
        jm.partition_tracker.clear()
        jm.handler.need_to_snapshot = set()
        jm.handler.min_pause_elapsed = False


class JobMaster:
    """One JobMaster incarnation: execution graph, coordinators, tracker, handler, scheduler."""

    handler_class = DefaultBatchJobRecoveryHandler
    scheduler_class = AdaptiveBatchScheduler
    coordinator_class = BatchSourceCoordinator

    def __init__(self, job: "BatchJob"):
        self.job = job
        self.config = job.config
        self.graph = ExecutionGraph(job.config)
        topo = self.graph.topo
        self.coordinators = [self.coordinator_class(topo.splits[v], len(topo.vertex_tasks[v])) for v in topo.sources]
        self.partition_tracker: set = set()
        self.running_reads = [[] for _ in topo.tasks]
        self.events = JobEventManager(job.store)
        self.shuffle_master = job.shuffle_master
        self.handler = self.handler_class(self)
        self.scheduler = self.scheduler_class(self)

    def start_scheduling(self) -> None:
        self.events.start()
        if self.events.has_job_events():
            self.handler.start_recovering()
        else:
            self.graph.state = "RUNNING"
            # TaskManagers' leftover partitions are unknown to a fresh JM: released.
            topo = self.graph.topo
            self.shuffle_master.release_partitions(t for t in range(len(topo.tasks)) if topo.consumers[t])

    def tasks_needing_restart(self, t: int, consider_result_consumable: bool) -> set:
        """``RestartPipelinedRegionFailoverStrategy`` with blocking exchanges."""
        topo = self.graph.topo
        todo, found = [t], set()
        while todo:
            v = todo.pop()
            if v in found:
                continue
            found.add(v)
            todo.extend(topo.consumers[v])
            if consider_result_consumable:
                todo.extend(p for p in topo.producers[v] if p not in self.partition_tracker)
        return found

    def reset_vertices(self, tasks) -> None:
        """``notifyCoordinatorsAboutTaskFailure``, ``resetForNewExecutions``, ``restoreState``."""
        topo = self.graph.topo
        self.handler.on_execution_vertex_reset(tasks)
        for t in tasks:
            # a task cancelled at replay never ran in this JM: it has no partition to release yet
            known = self.graph.status[t] != CANCELED
            self.graph.status[t], self.graph.attempt[t] = CREATED, 0
            self.running_reads[t] = []
            if topo.consumers[t] and known:
                self.shuffle_master.release_partitions([t])
            self.partition_tracker.discard(t)
            slot = self.graph.source_slot(t)
            if slot is not None:
                self.coordinators[slot[0]].subtask_reset(slot[1], NO_CHECKPOINT)


# ------------------------------------------------------------------------------------------------
# The job and its environment


class BatchJob:
    """A batch job under HA: the event store and TaskManagers outlive JobMaster incarnations.
    ``flipcheck.BatchJob``, the base class of a variant of your own.

    A variant replaces one class, each Flink's: ``jobmaster_class`` (:class:`JobMaster`), whose
    ``handler_class`` (:class:`DefaultBatchJobRecoveryHandler`: replaying the job events after a
    JobMaster failover), ``scheduler_class`` (:class:`AdaptiveBatchScheduler`) and
    ``coordinator_class`` (:class:`BatchSourceCoordinator`) are the usual places. :meth:`apply`
    takes one action of :mod:`flipcheck.model.batch_recovery` (:meth:`enabled` lists them) and
    :meth:`view` shows the model's state. Check yours with
    ``flipcheck verify --suite batch-recovery --variant FILE.py:Mine``.

    >>> import flipcheck
    >>> from flipcheck.model.batch_recovery import Config
    >>> from flipcheck.reference_impl.batch_recovery import DefaultBatchJobRecoveryHandler, JobMaster
    >>> class KeepTrailingEvents(DefaultBatchJobRecoveryHandler):
    ...     def kept_entries(self, entries):
    ...         return entries              # replay finished events after the last snapshot too
    >>> class Mine(flipcheck.BatchJob):
    ...     jobmaster_class = type("MyJobMaster", (JobMaster,), {"handler_class": KeepTrailingEvents})
    >>> config = Config(flipcheck.job_graph([("src", 2), ("sink", 1)], [("src", "sink", "all-to-all")]), splits=1)
    >>> for engine in (flipcheck.BatchJob(config), Mine(config)):
    ...     for action in [("start", 0), ("start", 1), ("assign", 0), ("finish", 0), ("flush",), ("crash",),
    ...                    ("restart",)]:
    ...         engine.apply(action)
    ...     print(engine.jm.graph.status, engine.jm.coordinators[0].enumerator_pool)
    ['CREATED', 'CREATED', 'CREATED'] [('src', 0)]
    ['FINISHED', 'CREATED', 'CREATED'] [('src', 0)]

    The second job has ``src[0]`` FINISHED with its split handed out again: read twice.
    """

    name = "flink"
    flink_issue: str | None = None
    source: str | None = None   # where a variant comes from (a fact, a release): reports only
    jobmaster_class = JobMaster

    def __init__(self, config: Config):
        self.config = config
        self.topo = topology(config)
        self.store = FileSystemJobEventStore()
        self.shuffle_master = ShuffleMaster(len(self.topo.tasks))
        self.jm: JobMaster | None = self.jobmaster_class(self)
        self.jm.start_scheduling()
        self.crashes = self.losses = self.recovery_failures = 0
        self.starts = [0] * len(self.topo.tasks)   # attempt ids are unique across JM incarnations
        self.global_failures_before = 0   # of earlier JM incarnations

    # -- actions ---------------------------------------------------------------------------------

    def phase(self) -> str:
        if self.jm is None:
            return "down"
        if self.jm.graph.all_finished():
            return "done"
        return "reconciling" if self.jm.graph.state == "RECONCILING" else "running"

    def enabled(self) -> list[tuple]:
        phase, config, topo = self.phase(), self.config, self.topo
        actions: list[tuple] = []
        n = len(topo.tasks)
        jm = self.jm
        if phase == "running" and not jm.scheduler.restart_pending:
            actions += [("start", t) for t in range(n) if jm.scheduler.can_start(t)]
            for t in range(n):
                slot = jm.graph.source_slot(t)
                if jm.graph.status[t] == RUNNING and slot is not None and jm.coordinators[slot[0]].has_splits():
                    actions.append(("assign", t))
            for t in range(n):
                slot = jm.graph.source_slot(t)
                if jm.graph.status[t] == RUNNING and (slot is None or not jm.coordinators[slot[0]].has_splits()):
                    actions.append(("finish", t))
            if config.min_pause and not jm.handler.min_pause_elapsed:
                actions.append(("elapse",))
        if phase == "running" and jm.scheduler.restart_pending:
            actions.append(("global_restart",))
        if self.store.buffer and phase != "down":
            actions.append(("flush",))
        if phase in ("running", "reconciling") and self.crashes < config.crashes:
            actions.append(("crash",))
        if phase == "down":
            if self.losses < config.losses:
                actions += [("lose", t) for t in range(n) if topo.consumers[t] and self.shuffle_master.outputs[t] is not None]
            actions.append(("restart",))
        if phase == "reconciling":
            actions += [("report", t) for t in range(n) if topo.consumers[t]
                        and self.shuffle_master.outputs[t] is not None and t not in self.shuffle_master.fetched]
            actions.append(("reconcile",))
            if self.recovery_failures < config.recovery_failures:
                actions.append(("fail_recovery",))
        return actions

    def apply(self, action: tuple) -> None:
        getattr(self, "do_" + action[0])(*action[1:])

    def do_start(self, t: int) -> None:
        self.starts[t] += 1
        self.jm.graph.status[t], self.jm.graph.attempt[t] = RUNNING, self.starts[t]

    def do_assign(self, t: int) -> None:
        c, subtask = self.jm.graph.source_slot(t)
        split = self.jm.coordinators[c].handle_split_request(subtask)
        self.jm.running_reads[t] = sorted(self.jm.running_reads[t] + [split])

    def do_finish(self, t: int) -> None:
        jm = self.jm
        producers = self.topo.producers[t]
        if producers:
            outputs = self.shuffle_master.outputs
            data = tuple(sorted(x for p in producers for x in _route(self.config, p, t, content(outputs[p]))))
        else:
            data = tuple(jm.running_reads[t])
        self.shuffle_master.outputs[t] = (jm.graph.attempt[t], data)
        jm.graph.status[t] = FINISHED
        jm.running_reads[t] = []
        jm.scheduler.on_task_finished(t)

    def do_elapse(self) -> None:
        self.jm.handler.min_pause_elapsed = True

    def do_flush(self) -> None:
        self.store.flush()

    def do_crash(self) -> None:
        self.crashes += 1
        self.store.buffer = []                    # the writer thread's buffer dies with the JM
        self.global_failures_before += self.jm.scheduler.global_failures
        self.shuffle_master.fetched = set()
        self.jm = None

    def do_lose(self, t: int) -> None:
        self.losses += 1
        self.shuffle_master.outputs[t] = None

    def do_restart(self) -> None:
        self.jm = self.jobmaster_class(self)
        self.jm.start_scheduling()

    def do_report(self, t: int) -> None:
        self.shuffle_master.report(t)

    def do_reconcile(self) -> None:
        handler = self.jm.handler
        try:
            handler.recover_partitions()
        except Exception as error:  # noqa: BLE001
            handler.complete_recovery(error)
            return
        handler.complete_recovery(None)

    def do_fail_recovery(self) -> None:
        """``getPartitionWithMetrics`` fails: the future completes exceptionally."""
        self.recovery_failures += 1
        self.shuffle_master.fetched = set()
        # the fetch stopped: every partition of an unfinished producer is released on its late report
        status = self.jm.graph.status
        self.shuffle_master.release_partitions(
            t for t in range(len(status)) if self.topo.consumers[t] and status[t] != FINISHED)
        self.jm.handler.complete_recovery(RuntimeError("partition recovery failed"))

    def do_global_restart(self) -> None:
        self.jm.scheduler.restart_tasks()

    # -- observation -------------------------------------------------------------------------------

    def view(self) -> State:
        jm, topo = self.jm, self.topo
        n = len(topo.tasks)
        if jm is None:
            return State("down", (CREATED,) * n, ((),) * n, tuple(self.shuffle_master.outputs), frozenset(),
                         (None,) * len(topo.sources), frozenset(), False, tuple(self.store.buffer),
                         tuple(self.store.read_events()), frozenset(), False, self.global_failures_before,
                         self.crashes, self.losses, self.recovery_failures, tuple(self.starts), (0,) * n)
        return State(
            phase=self.phase(),
            status=tuple(jm.graph.status),
            read=tuple(tuple(r) for r in jm.running_reads),
            outputs=tuple(self.shuffle_master.outputs),
            tracked=frozenset(jm.partition_tracker),
            coordinators=tuple(c.checkpoint_coordinator(NO_CHECKPOINT) for c in jm.coordinators),
            need=frozenset(jm.handler.need_to_snapshot),
            paused=jm.handler.min_pause_elapsed,
            buffer=tuple(self.store.buffer),
            log=tuple(self.store.read_events()),
            reported=frozenset(self.shuffle_master.fetched),
            restart_pending=jm.scheduler.restart_pending,
            global_failures=self.global_failures_before + jm.scheduler.global_failures,
            crashes=self.crashes, losses=self.losses, recovery_failures=self.recovery_failures,
            starts=tuple(self.starts), attempt=tuple(jm.graph.attempt),
        )

    # -- exploration: the view is the whole state ----------------------------------------------------

    def snapshot(self) -> State:
        return self.view()

    def restore(self, state: State) -> "BatchJob":
        self.store.files, self.store.buffer = [list(state.log)], list(state.buffer)
        self.shuffle_master.outputs = list(state.outputs)
        self.shuffle_master.fetched = set(state.reported)
        self.crashes, self.losses, self.recovery_failures = state.crashes, state.losses, state.recovery_failures
        self.starts = list(state.starts)
        if state.phase == "down":
            self.jm, self.global_failures_before = None, state.global_failures
            return self
        jm = self.jm = self.jobmaster_class(self)
        jm.events.start()
        jm.graph.status, jm.graph.attempt = list(state.status), list(state.attempt)
        jm.graph.state = "RECONCILING" if state.phase == "reconciling" else "RUNNING"
        jm.running_reads = [list(r) for r in state.read]
        jm.partition_tracker = set(state.tracked)
        for coordinator, data in zip(jm.coordinators, state.coordinators):
            coordinator.reset_to_checkpoint(NO_CHECKPOINT, data)
        jm.handler.need_to_snapshot = set(state.need)
        jm.handler.min_pause_elapsed = state.paused
        jm.scheduler.restart_pending = state.restart_pending
        jm.scheduler.global_failures = 0
        self.global_failures_before = state.global_failures
        return self

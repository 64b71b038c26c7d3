"""The whole job: checkpoint coordinator, tasks and channels composed (FLIP-147 end to end).

A job graph (the ``plan`` JSON format) is expanded into tasks and channels; the state of the
running job is one hashable tuple (:class:`JobState`) and :func:`successors` lists every step
the job can take next, like a TLA+ ``Next`` action: one task, message or coordinator move per
step. The two halves this composes are reused, not restated: the coordinator computes its plan
with :func:`flipcheck.model.plan.checkpoint_plan` (or a protocol variant's algorithm) from its
*view* of the task states, and every task with inputs handles barriers with the barrier-handler
specification :func:`flipcheck.model.barriers.step`.

The rules, each with the seed sentence or Flink fact it encodes:

Sources and tasks
* J1 a source emits its ``records`` one by one, then EndOfData on every output (flip147 facts §3.1
  ``endData``: ``notifyEndOfData`` broadcasts EndOfData once and reports end of data to the JM).
* J2 a record goes to one subtask per job edge (``record % consumers``: a keyBy/rebalance stand-in);
  operators forward every record; a two-phase-commit sink adds it to its open transaction (it
  begins one when it starts: ``TwoPhaseCommitSinkFunction.initializeState``).
* J3 a task polls the head of any input channel that is not blocked by its barrier handler
  (flip147 facts §2.2: a blocked channel delivers nothing) and feeds barriers, cancellation markers,
  EndOfPartition and records to the barrier handler (flip147 facts §2, event routing). The input gate's
  queue of available channels holds exactly the channels with a message: one released by its
  EndOfPartition is dequeued and never enqueued again (FLINK-22368: polling a released channel
  throws ``CancelTaskException``; the task is cancelled without sending EndOfPartition, phase
  CANCELED, and takes no further step).
* J4 EndOfData is acknowledged to the upstream the moment it is polled (flip147 facts §2:
  ``acknowledgeAllRecordsProcessed``); when every input delivered it, the task ends its data
  like a source (J1).
* J5 a checkpoint triggered on a task snapshots its state (sources: the offset; two-phase-commit
  sinks pre-commit the open transaction, empty or not, and begin a new one only while their
  input has not ended: after ``finish()`` no transaction is opened; flip147 facts §5 FLINK-23473) and
  sends the barrier on every output; the acknowledgement leaves once every barrier arrived
  (unaligned: with the in-flight records captured meanwhile) and reaches the coordinator
  asynchronously.
* J5u unaligned only: the barrier is a priority event that overtakes what is queued on each output
  channel. Flink's ``SubtaskCheckpointCoordinatorImpl.checkpointState`` broadcasts it with
  ``isPriority = options.isUnalignedCheckpoint()``; ``PipelinedSubpartition.processPriorityBuffer``
  puts it behind the priority elements already at the head (earlier unaligned barriers, so
  barriers keep their order) and hands the data buffers it overtook to
  ``ChannelStateWriter.addOutputData``: they become the channel's output in-flight data in the
  snapshot. EndOfData is broadcast without priority (``notifyEndOfData`` → ``broadcastEvent(EndOfData,
  false)``), so it is overtaken too, but events are not channel state. Aligned and at-least-once
  barriers stay FIFO.
* J6 the first checkpoint performed after end of data is the task's final checkpoint
  (flip147 facts §3.1 ``finalCheckpointMinId``); the handler aborting a checkpoint declines it to the
  coordinator and sends a cancellation marker downstream (flip147 facts §2.1 ``abortInternal``).
* J7 a task finishes only when (FLIP-147 on) every downstream acknowledged its EndOfData (seed:
  "the upstream tasks only exit after all the response events are received"), a checkpoint at
  least as new as its final one completed (flip147 facts §3.1 ``afterInvoke``), and no checkpoint of it
  is pending (seed "Do Not Cancel Pending Checkpoint on Finish"; flip147 facts §3.1
  ``waitForPendingCheckpoints``); tasks with inputs also need EndOfPartition on every input.
  Finishing sends EndOfPartition downstream and a FINISHED report to the coordinator; a sink
  aborts its open transaction (``close()``), and pre-committed transactions it still holds stay
  pending in the external system: a finished task is never notified again. With FLIP-147 off the
  task finishes at once and cancels (declines) its pending checkpoints.
* J8 a completion notification commits a sink's pre-committed transactions up to that id
  (flip147 facts §3.1 ``notifyCheckpointComplete``; two-phase commit).
* J9 (``stop_with_savepoint`` jobs) a task performing the synchronous savepoint of a
  stop-with-savepoint without drain declines it if it already reached end of data (flip147 facts §3.1,
  FLINK-24161's fix); otherwise it takes the snapshot and then processes no input (sources emit
  nothing) until notified of the savepoint's completion (``runSynchronousSavepointMailboxLoop``).
  That notification commits like J8 but does not complete the final checkpoint: it stops the
  task (``finishTask``), which then finishes without end of data — sources at once, tasks with
  inputs once every input delivered EndOfPartition — after its pending checkpoints. The
  savepoint's abort notification ends the synchronous savepoint (modelled as reaching every task
  at once). Not modelled: fix part two, failing a task that reaches end of data during the
  synchronous savepoint (only a legacy source thread can; here no task processes data then).

Sink V2 (a vertex flag ``"sink_v2": true``: a ``SinkWriterOperator`` with its committer chained,
one task; its writer buffer is the open transaction, its committer's ``CommittableCollector`` the
pre-committed list; flip147 facts §5 FLINK-24131 / FLINK-25920 / FLINK-37605)
* S1 ``endInput`` flushes the writer at once (``flush(true)``, ``prepareCommit``) into one
  committable with its summary, tagged with the checkpoint id after the newest one the writer
  snapshotted or was restored from (FLINK-37605: ``lastKnownCheckpointId + 1``; before it the
  sentinel ``EOI``, Long.MAX_VALUE).
* S2 ``prepareSnapshotPreBarrier(k)`` flushes into a committable of ``k`` (empty ones too: the
  summary is always sent), but no longer once ``endInput`` ran (FLINK-24131).
* S3 a completion notification of ``k`` commits the committables up to ``k``; once the
  committer's input ended also the ``EOI`` ones (``CommitterOperator``).
* S4 a restored sink commits the restored committables the checkpoint covers (``EOI`` ones wait,
  S3); a writer restored from a snapshot taken after its ``endInput`` remembers it and ignores
  the ``endInput`` its replayed input causes (FLINK-25920: ``end_of_input_state``); a subtask
  finished in the checkpoint runs no operator at all.

Coordinator
* C1 FINISHED reports travel separately and arrive late and out of order (seed:
  "the order of the reports of FINISHED status arrived at JobMaster is not guaranteed"). The
  end-of-data report (flip147 facts §3.1 ``notifyEndOfData``, an RPC) is modelled as arriving at once: it
  sets the task's bit in the coordinator's end-of-data view (``VertexEndOfDataListener``) and only
  enables triggers, which the coordinator may postpone anyway; its delay would multiply the
  states (measured: x2.2 on pair, 1 record; x11 on union) without a promise that depends on it.
* C2 one checkpoint at a time (Flink's default ``max-concurrent-checkpoints`` 1); the plan comes
  from the coordinator's *view* (FINISHED reports received so far) via the plan spec; a declined
  plan starts nothing (flip147 facts §1.3: pre-flight failures take no id).
* C3 while some source still has data at most ``checkpoints`` checkpoints start (the model's
  bound on the periodic timer); afterwards the coordinator triggers again whenever it learned
  something since its last trigger (a report arrived), so the bound never starves the finishing
  protocol.
* C4 trigger RPCs travel asynchronously; one reaching a FINISHED task is declined
  (``CHECKPOINT_DECLINED_TASK_NOT_READY``; seed: "the tasks might finish between the computation
  and the tasks get triggered"; flip147 facts §3.2, FLINK-23741).
* C5 a checkpoint completes when every task waited for acknowledged it; finalizing aborts it with
  ``CHECKPOINT_DECLINED_TASK_CLOSING`` when a vertex with union list state is partly finished, or
  only some of its subtasks called ``finish()`` (flip147 facts §3.2, FLINK-21080); otherwise the
  coordinator notifies the tasks to commit to, asynchronously. A decline aborts the checkpoint.
* C6 when its end-of-data view holds every task, the coordinator triggers a checkpoint at once,
  whatever the periodic bound (flip147 facts §3.1: when all tasks reached end of data → immediately
  ``triggerCheckpoint``, FLINK-28386). With no data left C3 already enables that trigger (the
  report completing the view is an end of data whose final checkpoint is missing); C6 adds it
  past the bound. A failover clears the view (F1; FLINK-32945's fix: ``restoreVertices`` clears
  the bits of the restarted tasks).
* C7 (``stop_with_savepoint`` jobs) once, with no checkpoint pending, the coordinator may start a
  stop-with-savepoint without drain (flip147 facts §3.1): it stops its periodic triggers and starts a
  synchronous savepoint like a checkpoint (C2). Its options travel with its RPCs and barriers;
  the model reads them from the coordinator's ``stop_id``, which never changes once set. Aborted,
  triggering resumes (the job keeps running); completed, nothing is triggered any more.

Failover (seed "Failover and Recovery"; flip147 facts §3.2)
* F1 a task failure restarts every task from the latest completed checkpoint: channels empty
  but for restored in-flight records — per channel the downstream's captured input records, then
  the upstream's captured output records (J5u). The downstream captured records it polled before
  the barrier reached it, so they were ahead of whatever was still queued when the upstream's
  barrier overtook; Flink likewise has a task consume its recovered input channel state before
  anything the upstream sends, and the upstream re-sends its recovered output state before new
  data. Sources rewind to their offset; sinks commit the restored
  pre-committed transactions again (idempotent recover-and-commit), every other transaction of
  the failed attempt is aborted (``recoverAndAbort``; the model keeps no trace of it), and each
  sink begins a new transaction; vertices fully finished in
  the checkpoint, and finished subtasks of partly finished vertices, restart with no data left
  (they end their data at once); the coordinator forgets its views (FINISHED and end of data, C6),
  drops the reports on their way and aborts the pending checkpoint.

The job ends when every task is FINISHED; the transactions a sink left pre-committed when it
finished are still pending then (what ``no_dangling_transaction`` forbids).

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
>>> job = Job(g, records=1, checkpoints=1)
>>> s = initial_state(job)
>>> [describe_label(job, label) for label, _, _ in successors(job, s)]
['src[0] emits record r0', 'coordinator triggers a checkpoint']
>>> s = run(job, [("trigger", 1), ("emit", 0, 0), ("rpc", 0, 1)])
>>> s.queues                           # aligned: the barrier follows the record (FIFO channel)
((('D', 0), ('B', 1)),)
>>> s.tasks[0].outbox[0][1].offset     # the source's snapshot: one record emitted
1
>>> unaligned = Job(g, mode="unaligned", records=1, checkpoints=1)
>>> s = run(unaligned, [("trigger", 1), ("emit", 0, 0), ("rpc", 0, 1)])
>>> s.queues                           # J5u: the barrier overtook the record ...
((('B', 1), ('D', 0)),)
>>> s.tasks[0].outbox[0][1].output_in_flight   # ... which the snapshot captured as output channel state
((0,),)
"""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple, Sequence

from . import barriers as bar
from .jobgraph import ALL_TO_ALL, FINISHED as FINISHED_STATE, RUNNING as RUNNING_STATE, JobGraph, vertex_flag_problem
from .execution_graph import count_connections, input_connections
from .plan import CheckpointPlan, checkpoint_plan

__all__ = [
    "RUNNING", "END_OF_DATA", "FINISHED", "CANCELED", "STOPPED", "NO_STOP_ID", "PHASE_NAMES", "MODES", "EOI",
    "TASK_NOT_READY", "TASK_CLOSING", "FAILOVER",
    "Protocol", "TaskInfo", "ChannelInfo", "Job", "MAX_TASKS", "MAX_CHANNELS", "MAX_RECORDS", "job_size_problem",
    "Snapshot", "TaskState", "Pending", "RestorePoint", "Coordinator", "JobState",
    "initial_state", "successors", "is_end", "run", "describe_label", "actor_of",
    "checkpoint_ids", "rename_ids", "rename_label",
]

# Task phases. RUNNING: data still flowing; END_OF_DATA: endData done (operators finished),
# waiting to be allowed to finish (J7); FINISHED: EndOfPartition sent.
# CANCELED: a task that polled a released input channel (J3, FLINK-22368): gone without sending
# EndOfPartition; only a protocol variant gets there.
RUNNING, END_OF_DATA, FINISHED, CANCELED = 0, 1, 2, 3
# TaskState.sync_savepoint of a task stopped by its completed no-drain savepoint (J9);
# Coordinator.stop_id of a stop-with-savepoint whose plan was declined (no id taken, C2).
STOPPED, NO_STOP_ID = -1, -1
PHASE_NAMES = ("RUNNING", "END_OF_DATA", "FINISHED", "CANCELED")
MODES = bar.MODES

# Bounds on the job an exploration expands: every state holds a tuple per task and per channel
# and the records in flight, so a job beyond them cannot even be set up in memory (two vertices
# of parallelism 32,768 joined ALL_TO_ALL are a billion channels), let alone searched.
MAX_TASKS = 1_024
MAX_CHANNELS = 16_384
MAX_RECORDS = 10_000  # records of all sources together

# Abort / decline reasons added at job level (flip147 facts §2.4, §3.2).
TASK_NOT_READY = "CHECKPOINT_DECLINED_TASK_NOT_READY"
TASK_CLOSING = "CHECKPOINT_DECLINED_TASK_CLOSING"
FAILOVER = "CHECKPOINT_ABORTED_BY_FAILOVER"

# Channel messages.
DATA, BARRIER, CANCEL, EOD, EOP = "D", "B", "C", "EOD", "EOP"
END_OF_DATA_MSG = (EOD,)
# S1: the checkpoint id Sink V2 end-of-input committables carried before FLINK-37605
# (``CommittableMessage.EOI``, Long.MAX_VALUE); never renamed, newer than every real id.
EOI = 2**63 - 1
END_OF_PARTITION_MSG = (EOP,)


class Protocol:
    """The correct FLIP-147 protocol as shipped by Flink. Named variants
    (:mod:`flipcheck.reference_impl.protocol_variants`) override one attribute or method each."""

    name = "flip-147"
    #: FLIP-147 itself (``ENABLE_CHECKPOINTS_AFTER_TASKS_FINISH``); off = the job before it.
    checkpoints_after_tasks_finished = True
    #: J7: wait until every downstream acknowledged EndOfData before finishing.
    wait_for_end_of_data_acks = True
    #: J7: wait for the final checkpoint (flip147 facts §3.1).
    wait_for_final_checkpoint = True
    #: J7: wait for pending checkpoints instead of cancelling them.
    wait_for_pending_checkpoints = True
    #: C4: a trigger RPC reaching a FINISHED task is declined.
    decline_trigger_of_finished_task = True
    #: C5: the FLINK-21080 union-list-state checks when finalizing.
    union_list_state_checks = True
    #: C6/F1: a failover clears the coordinator's end-of-data view (FLINK-32945).
    reset_end_of_data_view_on_failover = True
    #: J3: a channel released by EndOfPartition leaves the gate's queue of available channels (FLINK-22368).
    dequeue_released_channels = True
    #: J9: a task that reached end of data declines a stop-with-savepoint without drain (FLINK-24161).
    decline_stop_without_drain_after_end_of_data = True
    #: J5: after ``finish()`` a two-phase-commit sink's snapshot opens no new transaction (FLINK-23473).
    no_transaction_after_finish = True
    #: S2: after end of input a Sink V2 writer prepares no further commit before a barrier (FLINK-24131).
    no_pre_barrier_commit_after_end_of_input = True
    #: S4: a restored Sink V2 writer whose input had ended ignores the replayed endInput (FLINK-25920).
    restore_end_of_input = True
    #: S1: end-of-input committables carry the next checkpoint id (FLINK-37605), not the ``EOI`` sentinel.
    end_of_input_id_is_next_checkpoint = True

    def plan(self, graph: JobGraph):
        """The plan the coordinator computes from its view (C2)."""
        return checkpoint_plan(graph)


class TaskInfo(NamedTuple):
    """The static description of one task."""

    index: int
    vertex: str
    subtask: int
    inputs: tuple          # global channel ids; the position is the barrier handler's channel number
    outputs: tuple         # global channel ids
    routes: tuple          # per output job edge: the channel ids a record may take (J2)
    records: tuple         # record ids a source emits; () for tasks with inputs
    two_phase_commit: bool
    union_list_state: bool
    sink_v2: bool = False  # a Sink V2 writer with its committer chained (S1-S4); implies two_phase_commit

    @property
    def name(self) -> str:
        return f"{self.vertex}[{self.subtask}]"

    @property
    def is_source(self) -> bool:
        return not self.inputs


class ChannelInfo(NamedTuple):
    index: int
    source: int            # upstream task
    target: int            # downstream task
    local: int             # position in the downstream's inputs
    position: int          # position in the upstream's outputs
    pattern: str


class Snapshot(NamedTuple):
    """What a task's acknowledgement carries."""

    finished_operators: bool   # end of data was reached before the snapshot (flip147 facts §3.2 isTaskFinished)
    offset: int                # sources: records emitted
    sent: tuple                # per output channel: records sent before the snapshot (unaligned: overtaken ones too)
    received: tuple            # per input channel: records consumed before the snapshot
    in_flight: tuple           # per input channel: records captured as in-flight data (unaligned)
    output_in_flight: tuple    # per output channel: records the barrier overtook (unaligned, J5u)
    transactions: tuple        # two-phase-commit sink: pre-committed transactions ((id, records), ...)


class TaskState(NamedTuple):
    phase: int
    emitted: int           # sources: records emitted so far
    handler: Any           # barrier-handler state (tasks with inputs), None for sources
    end_of_data_in: int    # inputs whose EndOfData was polled (bit mask)
    acked: int             # outputs whose downstream acknowledged EndOfData (bit mask)
    final_min: int         # finalCheckpointMinId; 0 = not yet
    notified: int          # newest completed checkpoint this task was notified of
    snapshot: Any          # (id, Snapshot) triggered, waiting for barriers (unaligned); or None
    outbox: tuple          # ((id, Snapshot), ...) acknowledgements not yet at the coordinator
    txn: Any               # two-phase-commit sink: records of the open transaction; None: none open
    precommitted: tuple    # two-phase-commit sink: ((id, records), ...) not yet committed
    #                        (Sink V2: the committables its committer holds)
    sync_savepoint: int = 0  # J9: id of the no-drain savepoint performed, waiting for it; STOPPED after it
    last_checkpoint: int = 0         # Sink V2: newest checkpoint id it snapshotted or restored (S1)
    input_ended_before: bool = False  # Sink V2: restored from a snapshot taken after its endInput (S4)
    recovered: tuple = ()            # Sink V2: restored EOI committables its committer holds (S4)


class Pending(NamedTuple):
    id: int
    wait: int              # tasks to wait for (bit mask)
    acked: int
    commit: int            # tasks to commit to
    finished: int          # tasks finished according to the plan
    snapshots: tuple       # per task: Snapshot or None


class RestorePoint(NamedTuple):
    """The latest completed checkpoint's content, kept only while a failover can still happen."""

    id: int
    finished: int
    snapshots: tuple


class Coordinator(NamedTuple):
    known_finished: int        # the view: tasks whose FINISHED report arrived
    finished_reports: int      # FINISHED reports on their way (C1)
    last_id: int               # newest checkpoint id started
    started_with_data: int     # checkpoints started while some source had data (C3)
    learned: bool              # a report arrived since the last trigger (C3)
    pending: Any               # Pending or None (C2)
    completed: int             # newest completed checkpoint id (0: none)
    restore: Any               # RestorePoint or None
    last_aborted: int          # newest aborted checkpoint id (0: none)
    failovers: int
    known_end_of_data: int     # the end-of-data view: tasks whose end-of-data report arrived (C1, C6)
    stop_id: int = 0           # C7: id of the stop-with-savepoint; 0 none yet, NO_STOP_ID its plan was declined

    @property
    def stopped(self) -> bool:
        """C7: the stop-with-savepoint completed, so the job stops and nothing is triggered any more."""
        return self.stop_id > 0 and self.completed == self.stop_id


class JobState(NamedTuple):
    tasks: tuple               # TaskState per task
    queues: tuple              # per channel: the messages in flight, oldest first
    received: tuple            # per channel: records the downstream consumed (this attempt)
    rpcs: tuple                # per task: ids of trigger RPCs on their way
    notifications: tuple       # per task: newest completion notification on its way (0: none)
    coordinator: Coordinator
    committed: tuple           # per task: ((txn id, records), ...) committed externally


class Job:
    """A job graph expanded into tasks and channels, with the exploration bounds and protocol.

    ``records`` is the default number of records per source subtask (a source vertex's
    ``"records"`` flag overrides it); ``checkpoints`` bounds checkpoints started while data
    remains (C3); ``failures`` bounds failovers; ``stop_with_savepoint`` lets the coordinator stop
    the job once with a savepoint without drain (C7, J9).
    """

    def __init__(self, graph: JobGraph, mode: str = bar.ALIGNED, records: int = 1, checkpoints: int = 1,
                 failures: int = 0, protocol: Protocol | None = None, stop_with_savepoint: bool = False):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
        for name, value in (("records", records), ("checkpoints", checkpoints), ("failures", failures)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if stop_with_savepoint and (mode != bar.ALIGNED or failures):
            # Savepoints are aligned (FLINK-17467); a restart during stop-with-savepoint, and which
            # checkpoint it restores (FLIP-193), is not modelled.
            raise ValueError("stop_with_savepoint is modelled in aligned mode without failures")
        problem = job_size_problem(graph, records)
        if problem:
            raise ValueError(problem)
        self.graph = graph
        self.mode = mode
        self.stop_with_savepoint = stop_with_savepoint
        self.checkpoints = checkpoints
        self.failures = failures
        self.protocol = protocol or Protocol()
        self.after_finished = graph.checkpoints_after_tasks_finished and self.protocol.checkpoints_after_tasks_finished
        self._expand(records)
        self._plans: dict = {}
        self._steps: dict = {}

    # -- static structure -------------------------------------------------------------------

    def _expand(self, default_records: int) -> None:
        graph = self.graph
        order = [(v, i) for v in graph.topological_order for i in range(graph.parallelism(v))]
        index = {task: n for n, task in enumerate(order)}
        channels: list[ChannelInfo] = []
        inputs: dict[int, list[int]] = {n: [] for n in range(len(order))}
        outputs: dict[int, list[int]] = {n: [] for n in range(len(order))}
        edge_channels: dict[tuple, list[int]] = {}
        for n, task in enumerate(order):
            for edge, upstream in input_connections(graph, task):
                u = index[upstream]
                c = len(channels)
                channels.append(ChannelInfo(c, u, n, len(inputs[n]), len(outputs[u]), edge.pattern))
                inputs[n].append(c)
                outputs[u].append(c)
                edge_channels.setdefault((u, id(edge)), []).append(c)
        next_record = 0
        tasks = []
        for n, (vertex_id, subtask) in enumerate(order):
            vertex = graph.vertex(vertex_id)
            extra = vertex.extra
            routes = tuple(tuple(edge_channels[(n, id(e))]) for e in graph.outputs(vertex_id)
                           if (n, id(e)) in edge_channels)
            two_pc = _flag(extra, "two_phase_commit_sink", vertex_id)
            sink_v2 = _flag(extra, "sink_v2", vertex_id)
            union = _flag(extra, "union_list_state", vertex_id)
            for key, on in (("two_phase_commit_sink", two_pc), ("sink_v2", sink_v2)):
                if on and graph.outputs(vertex_id):
                    raise ValueError(f"vertex {vertex_id!r}: {key} on a vertex with outputs")
            if two_pc and sink_v2:
                raise ValueError(f"vertex {vertex_id!r}: two_phase_commit_sink and sink_v2 are two sink kinds, set one")
            if inputs[n]:
                if "records" in extra:
                    raise ValueError(f"vertex {vertex_id!r}: \"records\" is only for sources (vertices without inputs)")
                records: tuple = ()
            else:
                count = extra.get("records", default_records)
                problem = vertex_flag_problem("records", count)
                if problem:
                    raise ValueError(f"vertex {vertex_id!r}: \"records\" {problem}")
                records = tuple(range(next_record, next_record + count))
                next_record += count
            tasks.append(TaskInfo(n, vertex_id, subtask, tuple(inputs[n]), tuple(outputs[n]), routes, records,
                                  two_pc or sink_v2, union, sink_v2))
        self.tasks: tuple[TaskInfo, ...] = tuple(tasks)
        self.channels: tuple[ChannelInfo, ...] = tuple(channels)
        self.task_index = index
        self.record_source = {r: t.index for t in tasks for r in t.records}
        self.sources = tuple(t.index for t in tasks if t.is_source)
        self.all_tasks = (1 << len(tasks)) - 1
        self.handler_configs = tuple(
            bar.Config(len(t.inputs), self.mode, self.after_finished) if t.inputs else None for t in tasks)
        # Number of job-graph paths from each vertex to each vertex: how often a record of a
        # source must reach a sink vertex (once per path, J2).
        paths: dict[tuple[str, str], int] = {}
        for v in graph.topological_order:
            paths[(v, v)] = 1
        for target in graph.topological_order:
            for edge in graph.inputs(target):
                for v in graph.topological_order:
                    if (v, edge.source) in paths:
                        paths[(v, target)] = paths.get((v, target), 0) + paths[(v, edge.source)]
        self.paths = paths

    def name(self, task: int) -> str:
        return self.tasks[task].name

    def vertex_tasks(self, vertex_id: str) -> range:
        first = self.task_index[(vertex_id, 0)]
        return range(first, first + self.graph.parallelism(vertex_id))

    def plan(self, known_finished: int):
        """The coordinator's plan for its view (C2), as bit masks: ``(trigger, wait, commit,
        finished)`` or the decline reason. Cached: the view is all the plan depends on."""
        result = self._plans.get(known_finished)
        if result is None:
            states = {v: [FINISHED_STATE if known_finished >> self.task_index[(v, i)] & 1 else RUNNING_STATE
                          for i in range(self.graph.parallelism(v))] for v in self.graph.topological_order}
            plan = self.protocol.plan(self.graph.with_states(states).with_flag(self.after_finished))
            if isinstance(plan, CheckpointPlan):
                mask = lambda tasks: sum(1 << self.task_index[t] for t in tasks)  # noqa: E731
                result = (mask(plan.tasks_to_trigger), mask(plan.tasks_to_wait_for), mask(plan.tasks_to_commit_to),
                          mask(plan.finished_tasks))
            else:
                result = plan.reason
            self._plans[known_finished] = result
        return result

    def handler_step(self, task: int, handler, event: tuple):
        """The barrier-handler spec's step for ``task`` (memoised: it is a pure function)."""
        key = (task, handler, event)
        result = self._steps.get(key)
        if result is None:
            result = self._steps[key] = bar.step(self.handler_configs[task], handler, event)
        return result

    def __repr__(self) -> str:
        return (f"Job({self.graph!r}, mode={self.mode!r}, checkpoints={self.checkpoints}, failures={self.failures}, "
                f"protocol={self.protocol.name!r})")


def job_size_problem(graph: JobGraph, default_records: int) -> str | None:
    """Why ``graph`` is too large to expand into a :class:`Job` (None when it is not), naming
    the size and the limit; cheap: it never builds the channels it counts."""
    tasks = graph.num_tasks
    if tasks > MAX_TASKS:
        return f"too large to explore: {tasks:,} tasks (limit {MAX_TASKS:,})"
    channels = count_connections(graph, stop_above=MAX_CHANNELS)
    if channels > MAX_CHANNELS:
        return f"too large to explore: {channels:,} channels (limit {MAX_CHANNELS:,})"
    records = 0
    for vertex in graph.vertices:
        if not graph.inputs(vertex.id):
            count = vertex.extra.get("records", default_records)
            records += vertex.parallelism * count if isinstance(count, int) else 0
    if records > MAX_RECORDS:
        return f"too large to explore: {records:,} records from the sources (limit {MAX_RECORDS:,})"
    return None


def _flag(extra, key: str, vertex_id: str) -> bool:
    value = extra.get(key, False)
    problem = vertex_flag_problem(key, value)
    if problem:
        raise ValueError(f"vertex {vertex_id!r}: {key!r} {problem}")
    return value


# ----------------------------------------------------------------------------------------------
# Initial state


def _fresh_task(job: Job, t: int, emitted: int = 0) -> TaskState:
    config = job.handler_configs[t]
    handler = bar.initial_state(config) if config is not None else None
    txn = () if job.tasks[t].two_phase_commit else None  # J2: a sink begins a transaction when it starts
    return TaskState(RUNNING, emitted, handler, 0, 0, 0, 0, None, (), txn, ())


FINISHED_TASK = TaskState(FINISHED, 0, None, 0, 0, 0, 0, None, (), None, ())


def initial_state(job: Job) -> JobState:
    n = len(job.tasks)
    coordinator = Coordinator(0, 0, 0, 0, True, None, 0, None, 0, 0, 0)
    return JobState(tuple(_fresh_task(job, t) for t in range(n)), ((),) * len(job.channels), (0,) * len(job.channels),
                    ((),) * n, (0,) * n, coordinator, ((),) * n)


def is_end(job: Job, state: JobState) -> bool:
    """The job ended: every task FINISHED."""
    return all(ts.phase == FINISHED for ts in state.tasks)


# ----------------------------------------------------------------------------------------------
# A successor under construction


class _Next:
    """Mutable copies of a state's parts while one step is applied; :meth:`freeze` makes the
    next :class:`JobState`. ``notes`` says what happened, for properties and traces."""

    __slots__ = ("job", "tasks", "queues", "received", "rpcs", "notifications", "coord", "committed", "notes")

    def __init__(self, job: Job, s: JobState):
        self.job = job
        self.tasks = list(s.tasks)
        self.queues = list(s.queues)
        self.received = s.received
        self.rpcs = s.rpcs
        self.notifications = s.notifications
        self.coord = s.coordinator
        self.committed = s.committed
        self.notes: list = []

    def freeze(self) -> JobState:
        return JobState(tuple(self.tasks), tuple(self.queues), self.received, self.rpcs, self.notifications,
                        self.coord, self.committed)

    def send(self, channel: int, message: tuple) -> None:
        self.queues[channel] = self.queues[channel] + (message,)

    def broadcast(self, t: int, message: tuple) -> None:
        for c in self.job.tasks[t].outputs:
            self.queues[c] = self.queues[c] + (message,)

    def forward(self, t: int, record: int) -> None:
        """J2: one channel per output job edge."""
        for route in self.job.tasks[t].routes:
            self.send(route[record % len(route)], (DATA, record))

    # -- task side ----------------------------------------------------------------------------

    def end_data(self, t: int) -> None:
        """J1/J4: endData — EndOfData on every output, end of data reported to the coordinator."""
        self.tasks[t] = self.tasks[t]._replace(phase=END_OF_DATA)
        if self.job.tasks[t].sink_v2:
            self.end_input_v2(t)
        self.broadcast(t, END_OF_DATA_MSG)
        c = self.coord  # C1/C6: the end-of-data report arrives at once (see C1)
        self.coord = c._replace(known_end_of_data=c.known_end_of_data | 1 << t, learned=True)
        self.notes.append(("end-of-data", t))

    def end_input_v2(self, t: int) -> None:
        """S1/S4: a Sink V2 writer's ``endInput`` flushes into a committable for its committer,
        unless it was restored after its endInput already ran."""
        ts = self.tasks[t]
        if not ts.input_ended_before:
            k = ts.last_checkpoint + 1 if self.job.protocol.end_of_input_id_is_next_checkpoint else EOI
            self.emit_committable(t, k, ts.txn or ())
        self.tasks[t] = self.tasks[t]._replace(txn=None)  # no record may follow end of input

    def emit_committable(self, t: int, k: int, records: tuple) -> None:
        """S1/S2: the writer's ``prepareCommit``: one committable (with its summary) for checkpoint ``k``."""
        ts = self.tasks[t]
        self.tasks[t] = ts._replace(precommitted=ts.precommitted + ((k, records),))
        self.notes.append(("committable", t, k))

    def perform_checkpoint(self, t: int, k: int) -> None:
        """J5/J6: snapshot, pre-commit, barrier downstream."""
        job, ts, info = self.job, self.tasks[t], self.job.tasks[t]
        final_min = ts.final_min
        if not final_min and ts.phase == END_OF_DATA and job.after_finished:
            final_min = k  # flip147 facts §3.1: the first checkpoint performed after end of data
        if info.sink_v2:  # S2: prepareSnapshotPreBarrier, the flush skipped once endInput flushed
            if ts.phase != END_OF_DATA or not job.protocol.no_pre_barrier_commit_after_end_of_input:
                self.emit_committable(t, k, ts.txn or ())
                self.tasks[t] = self.tasks[t]._replace(txn=None if ts.phase == END_OF_DATA else ())
            ts = self.tasks[t] = self.tasks[t]._replace(last_checkpoint=k)
        txn, precommitted = ts.txn, ts.precommitted
        if txn is not None and not info.sink_v2:  # pre-commit the open transaction, begin the next unless finish() ran
            precommitted = precommitted + ((k, txn),)
            finished = ts.phase == END_OF_DATA and job.protocol.no_transaction_after_finish
            txn = None if finished else ()
        sent = tuple(self.received[c] + sum(1 for m in self.queues[c] if m[0] == DATA) for c in info.outputs)
        overtaken = self.send_barrier(t, k)
        snapshot = Snapshot(ts.phase == END_OF_DATA, ts.emitted, sent, tuple(self.received[c] for c in info.inputs),
                            ((),) * len(info.inputs), overtaken, precommitted)
        self.tasks[t] = ts._replace(final_min=final_min, snapshot=(k, snapshot), txn=txn, precommitted=precommitted)
        self.notes.append(("snapshot", t, k))

    def send_barrier(self, t: int, k: int) -> tuple:
        """J5/J5u: barrier ``k`` on every output of ``t``; per output channel, the records it
        overtook (always none unless unaligned)."""
        outputs = self.job.tasks[t].outputs
        if self.job.mode != bar.UNALIGNED:
            self.broadcast(t, (BARRIER, k))
            return ((),) * len(outputs)
        overtaken = []
        for c in outputs:
            queue = self.queues[c]
            head = 0
            while head < len(queue) and queue[head][0] == BARRIER:  # earlier priority events stay ahead
                head += 1
            self.queues[c] = queue[:head] + ((BARRIER, k),) + queue[head:]
            overtaken.append(tuple(m[1] for m in queue[head:] if m[0] == DATA))
        return tuple(overtaken)

    def start_checkpoint(self, t: int, k: int) -> bool:
        """J5 or, for the stop-with-savepoint's synchronous savepoint, J9; False: declined."""
        if k != self.coord.stop_id:
            self.perform_checkpoint(t, k)
            return True
        if self.tasks[t].phase == END_OF_DATA and self.job.protocol.decline_stop_without_drain_after_end_of_data:
            self.notes.append(("savepoint-declined", t, k))
            self.abort_on_task(t, k, TASK_NOT_READY)
            return False
        self.perform_checkpoint(t, k)
        pending = self.coord.pending
        if pending is not None and pending.id == k:  # else its abort notification ends it at once
            self.tasks[t] = self.tasks[t]._replace(sync_savepoint=k)
        return True

    def capture(self, t: int, k: int, local: int, record: int) -> None:
        ts = self.tasks[t]
        if ts.snapshot is not None and ts.snapshot[0] == k:
            snap = ts.snapshot[1]
            in_flight = list(snap.in_flight)
            in_flight[local] = in_flight[local] + (record,)
            self.tasks[t] = ts._replace(snapshot=(k, snap._replace(in_flight=tuple(in_flight))))

    def snapshot_complete(self, t: int, k: int) -> None:
        """The acknowledgement is ready; its async part still has to reach the coordinator."""
        ts = self.tasks[t]
        if ts.snapshot is not None and ts.snapshot[0] == k:
            self.tasks[t] = ts._replace(snapshot=None, outbox=ts.outbox + (ts.snapshot,))

    def abort_on_task(self, t: int, k: int, reason: str) -> None:
        """J6: the handler aborted ``k``: decline it and tell the downstream tasks."""
        ts = self.tasks[t]
        if ts.snapshot is not None and ts.snapshot[0] == k:
            self.tasks[t] = ts._replace(snapshot=None)
        self.broadcast(t, (CANCEL, k))
        self.decline(t, k, reason)

    def handler_event(self, t: int, event: tuple, record: int | None = None) -> None:
        ts = self.tasks[t]
        handler, outputs = self.job.handler_step(t, ts.handler, event)
        self.tasks[t] = ts._replace(handler=handler)
        for out in outputs:
            kind = out[0]
            if kind == bar.TRIGGERED:
                self.start_checkpoint(t, out[1])
            elif kind == bar.COMPLETED:
                self.snapshot_complete(t, out[1])
            elif kind == bar.IN_FLIGHT:
                self.capture(t, out[1], out[2], record)
            elif kind == bar.ABORTED:
                self.abort_on_task(t, out[1], out[2])

    def process_record(self, t: int, record: int) -> None:
        info = self.job.tasks[t]
        if info.two_phase_commit:
            ts = self.tasks[t]
            self.tasks[t] = ts._replace(txn=ts.txn + (record,))
        self.forward(t, record)

    def commit(self, t: int, transactions: Sequence, recovered: bool = False) -> None:
        """Commit transactions externally; committing one twice changes nothing (recover-and-commit
        is idempotent), and an empty one leaves nothing in the external system. An ``EOI``
        committable is a new transaction in every attempt, so only a ``recovered`` one (restored
        from a checkpoint) may already be committed."""
        done = self.committed[t]
        ids = {k for k, _ in done}
        new = tuple(txn for txn in transactions
                    if (txn[0] not in ids or (txn[0] == EOI and not recovered)) and txn[1])
        if new:
            committed = list(self.committed)
            committed[t] = tuple(sorted(done + new))
            self.committed = tuple(committed)
            self.notes.append(("committed", t, tuple(k for k, _ in new)))

    # -- coordinator side ---------------------------------------------------------------------

    def start_pending(self, plan: tuple) -> int:
        """C2: start checkpoint ``last_id + 1`` of ``plan`` (bit masks) and send its trigger RPCs."""
        trigger, wait, commit, finished = plan
        k = self.coord.last_id + 1
        self.coord = self.coord._replace(last_id=k, pending=Pending(k, wait, 0, commit, finished,
                                                                    (None,) * len(self.job.tasks)))
        self.rpcs = tuple(ids + (k,) if trigger >> t & 1 else ids for t, ids in enumerate(self.rpcs))
        self.notes.append(("triggered", k, trigger))
        return k

    def decline(self, t: int, k: int, reason: str) -> None:
        pending = self.coord.pending
        if pending is not None and pending.id == k:
            self.abort_pending(reason, t)

    def abort_pending(self, reason: str, t: int | None = None) -> None:
        k = self.coord.pending.id
        self.coord = self.coord._replace(pending=None, last_aborted=max(k, self.coord.last_aborted))
        self.notes.append(("aborted", k, reason, t))
        if k == self.coord.stop_id:
            # C7/J9: the stop failed; the periodic scheduler restarts and the abort notification
            # ends every task's synchronous savepoint (modelled as reaching the tasks at once).
            self.coord = self.coord._replace(learned=True)
            for u, ts in enumerate(self.tasks):
                if ts.sync_savepoint == k:
                    self.tasks[u] = ts._replace(sync_savepoint=0)

    def acknowledge(self, t: int, k: int, snapshot: Snapshot) -> None:
        pending = self.coord.pending
        if pending is None or pending.id != k or not pending.wait >> t & 1 or pending.acked >> t & 1:
            return  # a late acknowledgement of an aborted checkpoint (flip147 facts §3.2: DISCARDED / UNKNOWN)
        snapshots = list(pending.snapshots)
        snapshots[t] = snapshot
        pending = pending._replace(acked=pending.acked | 1 << t, snapshots=tuple(snapshots))
        self.coord = self.coord._replace(pending=pending)
        if pending.acked == pending.wait:
            self.complete(pending)

    def complete(self, pending: Pending) -> None:
        """C5: finalize, keep it for restore, notify the tasks to commit to."""
        job = self.job
        problem = _union_list_state_problem(job, pending) if job.protocol.union_list_state_checks else None
        if problem is not None:
            self.notes.append(("finalize-failed", pending.id, problem))
            self.abort_pending(TASK_CLOSING)
            return
        restore = (RestorePoint(pending.id, pending.finished, pending.snapshots)
                   if self.coord.failovers < job.failures else None)
        self.coord = self.coord._replace(pending=None, completed=pending.id, restore=restore)
        notifications = list(self.notifications)
        for t in range(len(job.tasks)):
            if pending.commit >> t & 1 and self.tasks[t].phase != FINISHED:
                notifications[t] = max(notifications[t], pending.id)
        self.notifications = tuple(notifications)
        self.notes.append(("completed", pending.id, pending.finished, pending.snapshots))


def _union_list_state_problem(job: Job, pending: Pending) -> str | None:
    """flip147 facts §3.2 checkNoPartlyFinishedVertexUsedUnionListState and
    checkNoPartlyOperatorsFinishedVertexUsedUnionListState (FLINK-21080)."""
    for vertex in job.graph.topological_order:
        tasks = job.vertex_tasks(vertex)
        if not job.tasks[tasks[0]].union_list_state:
            continue
        finished = [t for t in tasks if pending.finished >> t & 1]
        if finished and len(finished) < len(tasks):
            return f"The vertex {vertex} has used UnionListState, but part of its tasks are FINISHED."
        if not finished:
            flags = {pending.snapshots[t].finished_operators for t in tasks}
            if len(flags) > 1:
                return f"The vertex {vertex} has used UnionListState, but part of its tasks has called operators' finish method."
    return None


# ----------------------------------------------------------------------------------------------
# The steps (Next)


def _some_source_has_data(job: Job, s: JobState) -> bool:
    return any(s.tasks[t].phase == RUNNING and s.tasks[t].emitted < len(job.tasks[t].records) for t in job.sources)


def _may_finish(job: Job, s: JobState, t: int) -> bool:
    """J7 (J9: a stopped task)."""
    ts = s.tasks[t]
    if ts.sync_savepoint == STOPPED and ts.phase == RUNNING:
        return not (ts.handler is not None and ts.handler.open) and not ts.outbox and ts.snapshot is None
    if ts.phase != END_OF_DATA or ts.sync_savepoint > 0 or (ts.handler is not None and ts.handler.open):
        return False
    if not job.after_finished:
        return True
    p = job.protocol
    if p.wait_for_end_of_data_acks and ts.acked != (1 << len(job.tasks[t].outputs)) - 1:
        return False
    if p.wait_for_final_checkpoint and not (ts.final_min and ts.notified >= ts.final_min):
        return False
    if p.wait_for_pending_checkpoints and (ts.outbox or ts.snapshot is not None):
        return False
    return True


def _finish(job: Job, s: JobState, t: int) -> _Next:
    n = _Next(job, s)
    ts = n.tasks[t]
    cancelled = tuple(k for k, _ in ts.outbox) + ((ts.snapshot[0],) if ts.snapshot is not None else ())
    if cancelled:
        n.notes.append(("cancelled", t, cancelled))
        for k in cancelled:
            n.decline(t, k, TASK_CLOSING)
    # A finished task is gone; only its status remains, and the pre-committed transactions it
    # leaves pending (J7: close() aborts the open one).
    left = ts.precommitted + ts.recovered
    n.tasks[t] = FINISHED_TASK._replace(precommitted=left) if left else FINISHED_TASK
    n.broadcast(t, END_OF_PARTITION_MSG)
    n.coord = n.coord._replace(finished_reports=n.coord.finished_reports | 1 << t)
    notifications = list(n.notifications)
    notifications[t] = 0  # notifications to a finished task are dropped
    n.notifications = tuple(notifications)
    n.notes.append(("finished", t))
    return n


def _poll_released(job: Job, s: JobState, t: int, local: int) -> _Next:
    """J3, FLINK-22368 (variant only): the gate polls input ``local`` although its EndOfPartition
    released it; the channel throws ``CancelTaskException`` and the task is cancelled."""
    n = _Next(job, s)
    n.tasks[t] = n.tasks[t]._replace(phase=CANCELED)
    n.notes.append(("polled-released", t, local))
    return n


def _receive(job: Job, s: JobState, t: int, local: int) -> _Next:
    """J3/J4: task ``t`` polls the head of its input ``local``."""
    info = job.tasks[t]
    c = info.inputs[local]
    n = _Next(job, s)
    message = n.queues[c][0]
    n.queues[c] = n.queues[c][1:]
    kind = message[0]
    if kind == DATA:
        received = list(n.received)
        received[c] += 1
        n.received = tuple(received)
        n.handler_event(t, (bar.DATA, local), message[1])
        n.process_record(t, message[1])
    elif kind == BARRIER:
        n.handler_event(t, (bar.BARRIER, message[1], local))
    elif kind == CANCEL:
        n.handler_event(t, (bar.CANCEL, message[1], local))
    elif kind == EOD:
        channel = job.channels[c]
        upstream = n.tasks[channel.source]
        if upstream.phase != FINISHED:
            n.tasks[channel.source] = upstream._replace(acked=upstream.acked | 1 << channel.position)
        ts = n.tasks[t]
        n.tasks[t] = ts = ts._replace(end_of_data_in=ts.end_of_data_in | 1 << local)
        if ts.end_of_data_in == (1 << len(info.inputs)) - 1:
            n.end_data(t)
    else:  # EOP
        n.handler_event(t, (bar.END, local))
    return n


def _deliver_rpc(job: Job, s: JobState, t: int) -> _Next:
    """C4 and flip147 facts §2.5: a trigger RPC reaches task ``t``."""
    n = _Next(job, s)
    k = s.rpcs[t][0]
    rpcs = list(n.rpcs)
    rpcs[t] = rpcs[t][1:]
    n.rpcs = tuple(rpcs)
    if s.tasks[t].phase == CANCELED:
        n.decline(t, k, TASK_NOT_READY)  # "checkpoint request for unknown task" (flip147 facts §3.2)
    elif s.tasks[t].phase == FINISHED:
        if job.protocol.decline_trigger_of_finished_task:
            n.notes.append(("trigger-declined", t, k))
            n.decline(t, k, TASK_NOT_READY)
        else:
            n.notes.append(("trigger-lost", t, k))
    elif job.tasks[t].is_source:
        if n.start_checkpoint(t, k):
            n.snapshot_complete(t, k)
    else:
        n.handler_event(t, (bar.RPC, k))
    return n


def _deliver_ack(job: Job, s: JobState, t: int) -> _Next:
    n = _Next(job, s)
    ts = n.tasks[t]
    (k, snapshot), rest = ts.outbox[0], ts.outbox[1:]
    n.tasks[t] = ts._replace(outbox=rest)
    n.acknowledge(t, k, snapshot)
    return n


def _deliver_notification(job: Job, s: JobState, t: int) -> _Next:
    """J8."""
    n = _Next(job, s)
    k = s.notifications[t]
    notifications = list(n.notifications)
    notifications[t] = 0
    n.notifications = tuple(notifications)
    ts = n.tasks[t]
    if k > ts.notified:
        # S3: a committer whose input ended also commits the EOI committables (CommitterOperator)
        eoi_due = ts.phase == END_OF_DATA
        due = tuple(txn for txn in ts.precommitted if txn[0] <= k or (eoi_due and txn[0] == EOI))
        left = tuple(txn for txn in ts.precommitted if txn not in due)
        recovered = () if eoi_due else ts.recovered
        if k == ts.sync_savepoint:  # J9: stops the task instead of completing its final checkpoint
            n.tasks[t] = ts._replace(sync_savepoint=STOPPED, precommitted=left, recovered=recovered)
            n.notes.append(("stopped", t, k))
        else:
            n.tasks[t] = ts._replace(notified=k, precommitted=left, recovered=recovered)
        if eoi_due and ts.recovered:
            n.commit(t, ts.recovered, recovered=True)
        if due:
            n.commit(t, due)
    return n


def _deliver_report(job: Job, s: JobState, t: int) -> _Next:
    """C1: a FINISHED report arrives."""
    n = _Next(job, s)
    c = n.coord
    n.coord = c._replace(finished_reports=c.finished_reports & ~(1 << t), known_finished=c.known_finished | 1 << t,
                         learned=True)
    return n


def _final_checkpoint_missing(job: Job, s: JobState) -> bool:
    """Some task reached end of data and no checkpoint at least as new as its final one completed."""
    completed = s.coordinator.completed
    return any(ts.phase == END_OF_DATA and not (ts.final_min and completed >= ts.final_min) for ts in s.tasks)


def _trigger(job: Job, s: JobState) -> _Next | None:
    """C2/C3/C6."""
    c = s.coordinator
    if c.pending is not None or c.stopped:  # C7
        return None
    with_data = _some_source_has_data(job, s)
    every_task_ended = c.learned and c.known_end_of_data == job.all_tasks  # C6: past the periodic bound
    if with_data and c.started_with_data >= job.checkpoints and not every_task_ended:
        return None
    if not with_data and not (c.learned and _final_checkpoint_missing(job, s)):
        return None  # C6 included: the report completing the view is an end of data without final checkpoint
    plan = job.plan(c.known_finished)
    n = _Next(job, s)
    if every_task_ended:
        n.notes.append(("end-of-data-trigger", c.known_end_of_data))  # the coordinator believes every task ended
    if isinstance(plan, str):
        if not c.learned:
            return None  # nothing would change
        n.coord = c._replace(learned=False)
        n.notes.append(("plan-declined", plan))
        return n
    n.coord = c._replace(started_with_data=c.started_with_data + with_data, learned=False)
    n.start_pending(plan)
    return n


def _stop_with_savepoint(job: Job, s: JobState) -> _Next:
    """C7: stop-with-savepoint without drain: a synchronous savepoint planned like a checkpoint (C2)."""
    c = s.coordinator
    plan = job.plan(c.known_finished)
    n = _Next(job, s)
    if isinstance(plan, str):
        n.coord = c._replace(stop_id=NO_STOP_ID)
        n.notes.append(("plan-declined", plan))
        return n
    k = n.start_pending(plan)
    n.coord = n.coord._replace(stop_id=k)
    return n


def _failover(job: Job, s: JobState) -> _Next:
    """F1: restart every task from the latest completed checkpoint."""
    n = _Next(job, s)
    c = s.coordinator
    if c.pending is not None:
        n.abort_pending(FAILOVER)
    restore = c.restore if c.completed else None
    queues = [()] * len(job.channels)
    for t, info in enumerate(job.tasks):
        snapshot = restore.snapshots[t] if restore is not None else None
        if restore is not None and restore.finished >> t & 1:
            # Finished in the checkpoint (vertex fully finished: FINISHED_ON_RESTORE; partly
            # finished: FinishedOperatorSubtaskState) -> no data left (and no operator runs endInput).
            n.tasks[t] = _fresh_task(job, t, len(info.records))._replace(input_ended_before=info.sink_v2)
            continue
        n.tasks[t] = _fresh_task(job, t, snapshot.offset if snapshot is not None else 0)
        if snapshot is not None:
            if info.sink_v2:
                # S4: the committer commits what the restored checkpoint covers; EOI committables
                # wait for its endInput; the writer remembers its endInput (FLINK-25920's fix).
                kept = tuple(txn for txn in snapshot.transactions if txn[0] == EOI)
                n.tasks[t] = n.tasks[t]._replace(
                    recovered=kept, last_checkpoint=restore.id,
                    input_ended_before=snapshot.finished_operators and job.protocol.restore_end_of_input)
                n.commit(t, tuple(txn for txn in snapshot.transactions if txn[0] != EOI), recovered=True)
            elif snapshot.transactions:
                n.commit(t, snapshot.transactions, recovered=True)
    if restore is not None:
        for ch in job.channels:
            down, up = restore.snapshots[ch.target], restore.snapshots[ch.source]
            if down is None:
                continue  # the downstream finished in the checkpoint: nothing to consume
            # The downstream's input records first, then the upstream's output records (F1).
            records = down.in_flight[ch.local] + (up.output_in_flight[ch.position] if up is not None else ())
            queues[ch.index] = tuple((DATA, r) for r in records)
    n.queues = queues
    n.received = (0,) * len(job.channels)
    n.rpcs = ((),) * len(job.tasks)
    n.notifications = (0,) * len(job.tasks)
    failovers = c.failovers + 1
    known_end_of_data = 0 if job.protocol.reset_end_of_data_view_on_failover else c.known_end_of_data
    n.coord = n.coord._replace(known_finished=0, finished_reports=0, learned=True,
                               failovers=failovers, restore=restore if failovers < job.failures else None,
                               known_end_of_data=known_end_of_data)
    n.notes.append(("failover", restore.id if restore is not None else 0))
    return n


def successors(job: Job, s: JobState) -> Iterator[tuple[tuple, JobState, tuple]]:
    """Every step the job can take from ``s``: ``(label, next state, notes)``. The label names
    the step; notes say what it caused (snapshots, completions, aborts, commits, ...)."""
    if is_end(job, s):
        return
    for t, info in enumerate(job.tasks):
        ts = s.tasks[t]
        if ts.phase < FINISHED:
            if info.is_source:
                if ts.phase == RUNNING and not ts.sync_savepoint:  # J9: no data in (or after) the savepoint
                    if ts.emitted < len(info.records):  # J1
                        n = _Next(job, s)
                        record = info.records[ts.emitted]
                        n.forward(t, record)
                        n.tasks[t] = ts._replace(emitted=ts.emitted + 1)
                        yield ("emit", t, record), n.freeze(), ()
                    else:
                        n = _Next(job, s)
                        n.end_data(t)
                        yield ("end-of-data", t), n.freeze(), tuple(n.notes)
            else:
                blocked = getattr(ts.handler, "blocked", 0) | (-1 if ts.sync_savepoint > 0 else 0)  # J9
                for local, c in enumerate(info.inputs):
                    if s.queues[c] and not blocked >> local & 1:  # J3
                        n = _receive(job, s, t, local)
                        yield ("receive", t, local, s.queues[c][0]), n.freeze(), tuple(n.notes)
                if not job.protocol.dequeue_released_channels:
                    released = ~ts.handler.open & ((1 << len(info.inputs)) - 1)
                    for local in range(len(info.inputs)):
                        if released >> local & 1:
                            n = _poll_released(job, s, t, local)
                            yield ("poll-released", t, local), n.freeze(), tuple(n.notes)
            if _may_finish(job, s, t):
                n = _finish(job, s, t)
                yield ("finish", t), n.freeze(), tuple(n.notes)
            if ts.outbox:
                n = _deliver_ack(job, s, t)
                yield ("ack", t, ts.outbox[0][0]), n.freeze(), tuple(n.notes)
            if s.notifications[t]:
                n = _deliver_notification(job, s, t)
                yield ("notify", t, s.notifications[t]), n.freeze(), tuple(n.notes)
        if s.rpcs[t]:
            n = _deliver_rpc(job, s, t)
            yield ("rpc", t, s.rpcs[t][0]), n.freeze(), tuple(n.notes)
    c = s.coordinator
    for t in range(len(job.tasks)):
        if c.finished_reports >> t & 1:
            yield ("report-finished", t), _deliver_report(job, s, t).freeze(), ()
    n = _trigger(job, s)
    if n is not None:
        yield ("trigger", c.last_id + 1), n.freeze(), tuple(n.notes)
    if job.stop_with_savepoint and not c.stop_id and c.pending is None:
        n = _stop_with_savepoint(job, s)
        yield ("stop-with-savepoint", c.last_id + 1), n.freeze(), tuple(n.notes)
    if c.failovers < job.failures:
        n = _failover(job, s)
        yield ("failover",), n.freeze(), tuple(n.notes)


def run(job: Job, labels: Sequence[tuple], state: JobState | None = None) -> JobState:
    """The state after taking the steps named by ``labels`` (ValueError if one is not enabled)."""
    state = initial_state(job) if state is None else state
    for label in labels:
        for candidate, nxt, _ in successors(job, state):
            if candidate == label:
                state = nxt
                break
        else:
            raise ValueError(f"step {label!r} is not enabled")
    return state


# ----------------------------------------------------------------------------------------------
# Checkpoint ids are data: only compared, and a new one is the newest plus one (rule C2), so
# renaming every id of a state order-preservingly gives a state with the same futures, renamed.
# The explorer uses this to merge states that differ only in how many ids were used up.


def _handler_ids(handler, add) -> None:
    if handler is None:
        return
    if isinstance(handler, bar.HandlerState):
        add(handler.current)
    else:
        add(handler.latest)
        for entry in handler.entries:
            add(entry.id)


def _snapshot_ids(snapshot: Snapshot, add) -> None:
    for k, _ in snapshot.transactions:
        add(k)


def checkpoint_ids(state: JobState) -> set[int]:
    """Every checkpoint id (> 0) occurring in ``state``."""
    ids: set[int] = set()
    add = ids.add
    for ts in state.tasks:
        _handler_ids(ts.handler, add)
        add(ts.final_min)
        add(ts.notified)
        add(ts.sync_savepoint)
        add(ts.last_checkpoint)
        if ts.snapshot is not None:
            add(ts.snapshot[0])
            _snapshot_ids(ts.snapshot[1], add)
        for k, snap in ts.outbox:
            add(k)
            _snapshot_ids(snap, add)
        for k, _ in ts.precommitted:
            add(k)
    for queue in state.queues:
        for message in queue:
            if message[0] == BARRIER or message[0] == CANCEL:
                add(message[1])
    for ids_ in state.rpcs:
        ids.update(ids_)
    ids.update(state.notifications)
    c = state.coordinator
    add(c.last_id)
    add(c.completed)
    add(c.last_aborted)
    add(c.stop_id)
    if c.pending is not None:
        add(c.pending.id)
        for snap in c.pending.snapshots:
            if snap is not None:
                _snapshot_ids(snap, add)
    if c.restore is not None:
        add(c.restore.id)
        for snap in c.restore.snapshots:
            if snap is not None:
                _snapshot_ids(snap, add)
    for txns in state.committed:
        for k, _ in txns:
            add(k)
    ids.discard(0)
    ids.discard(-1)  # also STOPPED and NO_STOP_ID
    ids.discard(EOI)
    return ids


def rename_ids(state: JobState, mapping: dict) -> JobState:
    """``state`` with every checkpoint id ``k > 0`` replaced by ``mapping[k]`` (0 and -1 mean none;
    the EOI sentinel stays)."""
    m = lambda k: mapping.get(k, k)  # noqa: E731

    def snap_(snap: Snapshot) -> Snapshot:
        if not snap.transactions:
            return snap
        return snap._replace(transactions=tuple((m(k), r) for k, r in snap.transactions))

    def handler_(h):
        if h is None:
            return None
        if isinstance(h, bar.HandlerState):
            return h._replace(current=m(h.current))
        return h._replace(latest=m(h.latest), entries=tuple(e._replace(id=m(e.id)) for e in h.entries))

    tasks = tuple(ts._replace(
        handler=handler_(ts.handler), final_min=m(ts.final_min), notified=m(ts.notified),
        sync_savepoint=m(ts.sync_savepoint),
        last_checkpoint=m(ts.last_checkpoint),
        snapshot=None if ts.snapshot is None else (m(ts.snapshot[0]), snap_(ts.snapshot[1])),
        outbox=tuple((m(k), snap_(sn)) for k, sn in ts.outbox),
        precommitted=tuple((m(k), r) for k, r in ts.precommitted)) for ts in state.tasks)
    queues = tuple(tuple((msg[0], m(msg[1])) if msg[0] == BARRIER or msg[0] == CANCEL else msg for msg in q)
                   for q in state.queues)
    c = state.coordinator
    pending = c.pending
    if pending is not None:
        pending = pending._replace(id=m(pending.id), snapshots=tuple(None if sn is None else snap_(sn)
                                                                     for sn in pending.snapshots))
    restore = c.restore
    if restore is not None:
        restore = restore._replace(id=m(restore.id), snapshots=tuple(None if sn is None else snap_(sn)
                                                                     for sn in restore.snapshots))
    coordinator = c._replace(last_id=m(c.last_id), completed=m(c.completed), last_aborted=m(c.last_aborted),
                             pending=pending, restore=restore, stop_id=m(c.stop_id))
    return JobState(tasks, queues, state.received, tuple(tuple(m(k) for k in ids) for ids in state.rpcs),
                    tuple(m(k) for k in state.notifications), coordinator,
                    tuple(tuple(sorted((m(k), r) for k, r in txns)) for txns in state.committed))


def rename_label(label: tuple, mapping: dict) -> tuple:
    """A step's label with its checkpoint id renamed (ids not in ``mapping`` are new: the
    trigger's ``last_id + 1`` becomes the newest mapped id plus one)."""
    kind = label[0]
    m = lambda k: mapping[k] if k in mapping else max(mapping.values(), default=0) + 1  # noqa: E731
    if kind in ("ack", "notify", "rpc"):
        return (kind, label[1], m(label[2]))
    if kind in ("trigger", "stop-with-savepoint"):
        return (kind, m(label[1]))
    if kind == "receive" and label[3][0] in (BARRIER, CANCEL):
        return (kind, label[1], label[2], (label[3][0], m(label[3][1])))
    return label


# ----------------------------------------------------------------------------------------------
# Reading labels


def actor_of(job: Job, label: tuple) -> str:
    """Who takes the step: a task name or ``coordinator``."""
    kind = label[0]
    if kind in ("emit", "end-of-data", "receive", "poll-released", "finish", "notify", "rpc"):
        return job.name(label[1])
    return "coordinator"


def _message_text(message: tuple) -> str:
    kind = message[0]
    if kind == DATA:
        return f"record r{message[1]}"
    if kind == BARRIER:
        return f"barrier {message[1]}"
    if kind == CANCEL:
        return f"cancellation marker {message[1]}"
    return "EndOfData" if kind == EOD else "EndOfPartition"


def describe_label(job: Job, label: tuple) -> str:
    """One line saying what a step is (without its consequences; see the notes for those)."""
    kind = label[0]
    if kind == "emit":
        return f"{job.name(label[1])} emits record r{label[2]}"
    if kind == "end-of-data":
        return f"{job.name(label[1])} reaches end of data"
    if kind == "receive":
        t, local, message = label[1], label[2], label[3]
        upstream = job.channels[job.tasks[t].inputs[local]].source
        return f"{job.name(t)} polls {_message_text(message)} from {job.name(upstream)}"
    if kind == "poll-released":
        t, local = label[1], label[2]
        upstream = job.channels[job.tasks[t].inputs[local]].source
        return (f"{job.name(t)} polls its input from {job.name(upstream)} again after EndOfPartition released it "
                "(CancelTaskException: cancelled without sending EndOfPartition)")
    if kind == "finish":
        return f"{job.name(label[1])} finishes"
    if kind == "ack":
        return f"coordinator receives {job.name(label[1])}'s acknowledgement of checkpoint {label[2]}"
    if kind == "notify":
        return f"{job.name(label[1])} is notified that checkpoint {label[2]} completed"
    if kind == "rpc":
        return f"{job.name(label[1])} receives the trigger RPC of checkpoint {label[2]}"
    if kind == "report-finished":
        return f"coordinator receives {job.name(label[1])}'s FINISHED report"
    if kind == "report-end-of-data":
        return f"coordinator receives {job.name(label[1])}'s end-of-data report"
    if kind == "trigger":
        return "coordinator triggers a checkpoint"
    if kind == "stop-with-savepoint":
        return "coordinator stops the job with a savepoint without drain (synchronous savepoint)"
    if kind == "failover":
        return "a task fails: every task restarts from the latest completed checkpoint"
    return repr(label)

"""The whole job: checkpoint coordinator, tasks and channels composed (FLIP-147 end to end).

A job graph (the ``plan`` JSON format) is expanded into tasks and channels; the state of the
running job is one hashable tuple (:class:`JobState`) and :func:`successors` lists every step
the job can take next, like a TLA+ ``Next`` action: one task, message or coordinator move per
step. The two halves this composes are reused, not restated: the coordinator computes its plan
with :func:`flipcheck.model.plan.checkpoint_plan` (or a protocol variant's algorithm) from its
*view* of the task states, and every task with inputs handles barriers with the barrier-handler
specification :func:`flipcheck.model.barriers.step`.

Where each part is written down:

* :mod:`.state` — the state types (:class:`JobState`, :class:`TaskState`, :class:`Coordinator`, ...);
* :mod:`.structure` — the job graph expanded into tasks and channels (:class:`Job`), and its bounds;
* :mod:`.switches` — :class:`Protocol`: the booleans protocol variants flip, and the rules a change
  most often touches as methods whose body is the rule (J7 ``may_finish``/``finish_waits_for``,
  C1 ``on_finished_report``, C2 ``plan``, C4 ``finished_task_declines_trigger``, C5
  ``finalize_problem``, F1/C6 ``end_of_data_view_after_failover``, S1 ``end_of_input_checkpoint_id``);
* :mod:`.tasks` — the task rules J1–J9 and the Sink V2 rules S1–S4;
* :mod:`.coordinator` — the coordinator rules C1–C7;
* :mod:`.failover` — the failure and failover rules F0 and F1;
* :mod:`.machine` — the initial state and the table of actions :func:`successors` takes them
  from (the TLA+ ``Next``), and :func:`rules_of`, which rules a step took (per-rule coverage);
* :mod:`.step` — :class:`Step`, the step under construction the rules change.

The rules, each with the seed sentence or Flink fact it encodes:

Sources and tasks (:mod:`.tasks`)
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
  Pending means until the acknowledgement is *sent*: the asynchronous part sends it and does not
  wait for the coordinator (flip147 facts §4.4), so a task whose acknowledgements are all it waits
  for finishes with them on their way; the coordinator may take them after the task finished
  (C5), or never, when the job ended first (C8; flip147 facts §4.13).
  Finishing sends EndOfPartition downstream and a FINISHED report to the coordinator; a sink
  aborts its open transaction (``close()``), and pre-committed transactions it still holds stay
  pending in the external system: a finished task is never notified again. With FLIP-147 off the
  task finishes at once and cancels its pending checkpoints: it drops the snapshots it has not
  acknowledged without declining them, so the coordinator's pending checkpoint can no longer
  complete and fails only when the job ends (C8) or fails over (flip147 facts §4.7). Variants
  that cancel with FLIP-147 on decline them.
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

Sink V2 (:mod:`.tasks`; a vertex flag ``"sink_v2": true``: a ``SinkWriterOperator`` with its committer chained,
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

Coordinator (:mod:`.coordinator`)
* C1 FINISHED reports travel separately and arrive late and out of order (seed:
  "the order of the reports of FINISHED status arrived at JobMaster is not guaranteed"). The
  end-of-data report (flip147 facts §3.1 ``notifyEndOfData``, an RPC) is modelled as arriving at once: it
  sets the task's bit in the coordinator's end-of-data view (``VertexEndOfDataListener``) and only
  enables triggers, which the coordinator may postpone anyway; its delay would multiply the
  states (measured: x2.2 on pair, 1 record; x11 on union) without a promise that depends on it.
* C2 one checkpoint at a time (Flink's default ``max-concurrent-checkpoints`` 1); the plan comes
  from the coordinator's *view* (FINISHED reports received so far) via the plan spec; a declined
  plan starts nothing (flip147 facts §1.3: pre-flight failures take no id).
* C2f (``Job(coordinator_failures=True)``, for trace validation) an operator coordinator's
  snapshot may fail a checkpoint as it is triggered: its id is taken and its trigger logged, no
  task is triggered, and the checkpoint fails ("Trigger checkpoint failure": a FLIP-27 source's
  enumerator whose ``snapshotState`` throws; flip147 facts §4.16).
* C3 while some source still has data at most ``checkpoints`` checkpoints start (the model's
  bound on the periodic timer); afterwards the coordinator triggers again whenever it learned
  something since its last trigger (a report arrived), so the bound never starves the finishing
  protocol.
* C3p the periodic timer as Flink runs it (``Job(periodic_timer=True)``, for trace validation):
  ``CheckpointCoordinator``'s scheduled trigger fires every interval, and with
  ``max-concurrent-checkpoints`` 1 starts a checkpoint whenever none is pending, whether or not
  anything changed (flip147 facts §4.1). C3 is a bound on that timer that keeps explorations
  finite; a real run's log needs the timer itself.
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

* C8 once every task FINISHED the job leaves RUNNING: the checkpoint scheduler stops and aborts a
  checkpoint still pending (flip147 facts §4.2, ``stopCheckpointScheduler``,
  ``CHECKPOINT_COORDINATOR_SUSPEND``). Past the end of the job, so no exploration takes it;
  trace validation does (:func:`~.coordinator.suspend_at_job_end`).

Failover (:mod:`.failover`; seed "Failover and Recovery"; flip147 facts §3.2, §4.10)
* F0 a running task fails (its TaskManager switches it to FAILED), at most once per failover the
  job's bound allows and while no other failure waits: it takes no step any more (nothing sent,
  polled, acknowledged or committed) and declines every trigger RPC that reaches it
  (``TASK_NOT_READY``: ``Task.triggerCheckpointBarrier`` declines when not RUNNING; C5 aborts the
  pending checkpoint). The JobManager hears of it only through ``updateTaskExecutionState``,
  handled on its main thread, so until F1 the coordinator keeps triggering (its plan still counts
  the task as running) and the other tasks keep running. A source whose snapshot of the pending
  checkpoint was running when it failed (its acknowledgement has not left) declines that
  checkpoint itself (``TASK_FAILURE``, "Task has failed."): the snapshot its trigger RPC started
  threw, and ``Task.triggerCheckpointBarrier`` declines when the future of
  ``StreamTask.triggerCheckpointAsync`` fails (flip147 facts §4.12). A snapshot that barriers
  started has no such future: a task with inputs declines nothing. In unaligned mode, once a
  task failed with its snapshot of the pending checkpoint under way, any running task whose own
  snapshot of it is under way may decline it too (``CHANNEL_STATE_SHARED_STREAM_EXCEPTION``:
  since Flink 1.17 subtasks share unaligned channel-state files, and one subtask's abort fails
  the others' writes of that checkpoint; flip147 facts §4.14).
* F1 the JobManager handles the failure — a task's (after F0) or its own (a global failure, e.g. an
  OperatorCoordinator failing the job, at once) — and restarts every task from the latest completed checkpoint: channels empty
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
* F1b with Flink's own timer (C3p), a failover may use up checkpoint ids, at most the job's
  ``ids_per_failover``: a trigger that drew its id but had not yet created its pending checkpoint
  fails when the failover stops the scheduler, and each periodic request queued while a
  checkpoint was pending that runs while the failover cancels the tasks draws an id for a plan
  that waits for no task and fails (``CheckpointRequestDecider``, flip147 facts §4.6); the next
  checkpoint skips those ids. Only where a trigger could run: no checkpoint pending and a plan
  that is not declined.

The job ends when every task is FINISHED; the transactions a sink left pre-committed when it
finished are still pending then (what ``no_dangling_transaction`` forbids).

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
>>> job = Job(g, records=1, checkpoints=1)
>>> s = initial_state(job)
>>> [label for label, _, _ in successors(job, s)]
[('emit', 0, 0), ('trigger', 1)]
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

from .machine import (
    COORDINATOR_ACTIONS, INPUT_TASK_ACTIONS, NOT_EXPLORED, RULES, SOURCE_ACTIONS, initial_state, is_end, rules_of, run,
    successors,
)
from .switches import Protocol
from .state import (
    BARRIER, CANCEL, CANCELED, DATA, END_OF_DATA, EOD, EOI, EOP, FAILED, FAILOVER, FINISHED, FINISHED_TASK, NO_STOP_ID,
    PHASE_NAMES, RUNNING, SHARED_CHANNEL_STATE, STOPPED, TASK_CLOSING, TASK_FAILURE, TASK_NOT_READY, Coordinator,
    JobState, Pending, RestorePoint, Snapshot, TaskState,
)
from .step import Step
from .structure import MAX_CHANNELS, MAX_RECORDS, MAX_TASKS, MODES, ChannelInfo, Job, TaskInfo, job_size_problem

__all__ = [
    "RUNNING", "END_OF_DATA", "FINISHED", "CANCELED", "FAILED", "STOPPED", "NO_STOP_ID", "PHASE_NAMES", "MODES", "EOI",
    "TASK_NOT_READY", "TASK_CLOSING", "TASK_FAILURE", "SHARED_CHANNEL_STATE", "FAILOVER",
    "DATA", "BARRIER", "CANCEL", "EOD", "EOP",
    "Protocol", "TaskInfo", "ChannelInfo", "Job", "MAX_TASKS", "MAX_CHANNELS", "MAX_RECORDS", "job_size_problem",
    "Snapshot", "TaskState", "FINISHED_TASK", "Pending", "RestorePoint", "Coordinator", "JobState",
    "Step", "SOURCE_ACTIONS", "INPUT_TASK_ACTIONS", "COORDINATOR_ACTIONS", "initial_state", "successors", "is_end", "run",
    "RULES", "NOT_EXPLORED", "rules_of",
]

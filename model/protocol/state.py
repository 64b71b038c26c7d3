"""The state of a running job: one hashable tuple (:class:`JobState`) of named tuples.

Every part is immutable, so states hash and compare as values and an explorer can store them.
Bit masks stand for sets of tasks, channels or outputs (bit ``t`` = task ``t``). The messages on a
channel are tuples: ``(DATA, record)``, ``(BARRIER, id)``, ``(CANCEL, id)``, ``(EOD,)`` and
``(EOP,)``.

>>> coordinator = Coordinator()        # the coordinator of a job that has just started
>>> coordinator.last_id, coordinator.learned, coordinator.stopped
(0, True, False)
>>> FINISHED_TASK.phase == FINISHED and FINISHED_TASK.txn is None
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "RUNNING", "END_OF_DATA", "FINISHED", "CANCELED", "FAILED", "PHASE_NAMES", "STOPPED", "NO_STOP_ID", "EOI",
    "TASK_NOT_READY", "TASK_CLOSING", "TASK_FAILURE", "SHARED_CHANNEL_STATE", "FAILOVER", "COORDINATOR_SUSPEND",
    "DATA", "BARRIER", "CANCEL", "EOD", "EOP", "END_OF_DATA_MSG", "END_OF_PARTITION_MSG",
    "Snapshot", "TaskState", "FINISHED_TASK", "Pending", "RestorePoint", "Coordinator", "JobState",
]

# Task phases. RUNNING: data still flowing; END_OF_DATA: endData done (operators finished),
# waiting to be allowed to finish (J7); FINISHED: EndOfPartition sent.
# CANCELED: a task that polled a released input channel (J3, FLINK-22368): gone without sending
# EndOfPartition; only a protocol variant gets there.
# FAILED: a task that failed (F0) and that the JobManager has not yet handled (F1): it takes no
# step and declines every trigger RPC (flip147 facts §4.10).
RUNNING, END_OF_DATA, FINISHED, CANCELED, FAILED = 0, 1, 2, 3, 4
PHASE_NAMES = ("RUNNING", "END_OF_DATA", "FINISHED", "CANCELED", "FAILED")
# TaskState.sync_savepoint of a task stopped by its completed no-drain savepoint (J9);
# Coordinator.stop_id of a stop-with-savepoint whose plan was declined (no id taken, C2).
STOPPED, NO_STOP_ID = -1, -1
# S1: the checkpoint id Sink V2 end-of-input committables carried before FLINK-37605
# (``CommittableMessage.EOI``, Long.MAX_VALUE); never renamed, newer than every real id.
EOI = 2**63 - 1

# Abort / decline reasons added at job level (flip147 facts §2.4, §3.2).
TASK_NOT_READY = "CHECKPOINT_DECLINED_TASK_NOT_READY"
TASK_CLOSING = "CHECKPOINT_DECLINED_TASK_CLOSING"
TASK_FAILURE = "TASK_FAILURE"   # F0: the snapshot a trigger RPC started threw (flip147 facts §4.12)
# F0: another subtask writing the same unaligned channel-state file failed it (flip147 facts §4.14)
SHARED_CHANNEL_STATE = "CHANNEL_STATE_SHARED_STREAM_EXCEPTION"
FAILOVER = "CHECKPOINT_ABORTED_BY_FAILOVER"
COORDINATOR_SUSPEND = "CHECKPOINT_COORDINATOR_SUSPEND"
COORDINATOR_FAILURE = "TRIGGER_CHECKPOINT_FAILURE"   # C2f: an operator coordinator's snapshot failed

# Channel messages.
DATA, BARRIER, CANCEL, EOD, EOP = "D", "B", "C", "EOD", "EOP"
END_OF_DATA_MSG = (EOD,)
END_OF_PARTITION_MSG = (EOP,)


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
    """One task; the defaults are a task that has just started and has no barrier handler
    (a source) and no transaction (not a sink): see :func:`~.tasks.fresh_task`."""

    phase: int = RUNNING
    emitted: int = 0           # sources: records emitted so far
    handler: Any = None        # barrier-handler state (tasks with inputs), None for sources
    end_of_data_in: int = 0    # inputs whose EndOfData was polled (bit mask)
    acked: int = 0             # outputs whose downstream acknowledged EndOfData (bit mask)
    final_min: int = 0         # finalCheckpointMinId; 0 = not yet
    notified: int = 0          # newest completed checkpoint this task was notified of
    snapshot: Any = None       # (id, Snapshot) triggered, waiting for barriers (unaligned); or None
    outbox: tuple = ()         # ((id, Snapshot), ...) acknowledgements not yet at the coordinator (J5; J7: a FINISHED task's were sent)
    txn: Any = None            # two-phase-commit sink: records of the open transaction; None: none open
    precommitted: tuple = ()   # two-phase-commit sink: ((id, records), ...) not yet committed
    #                            (Sink V2: the committables its committer holds)
    sync_savepoint: int = 0    # J9: id of the no-drain savepoint performed, waiting for it; STOPPED after it
    last_checkpoint: int = 0          # Sink V2: newest checkpoint id it snapshotted or restored (S1)
    input_ended_before: bool = False  # Sink V2: restored from a snapshot taken after its endInput (S4)
    recovered: tuple = ()             # Sink V2: restored EOI committables its committer holds (S4)

    @property
    def active(self) -> bool:
        """RUNNING or END_OF_DATA: neither FINISHED, CANCELED nor FAILED, so the task still takes steps."""
        return self.phase < FINISHED

    @property
    def inputs_open(self) -> bool:
        """Some input has not delivered EndOfPartition yet (J3: the handler still has it open)."""
        return self.handler is not None and bool(self.handler.open)

    @property
    def checkpoint_pending(self) -> bool:
        """A checkpoint of this task is still under way here: a snapshot waiting for barriers,
        or an acknowledgement not yet at the coordinator (J5; J7 waits until it was sent)."""
        return self.snapshot is not None or bool(self.outbox)

    @property
    def final_checkpoint_completed(self) -> bool:
        """J6/J7: a checkpoint at least as new as the task's final one completed and the task
        was notified of it (flip147 facts §3.1 ``finalCheckpointMinId``)."""
        return bool(self.final_min) and self.notified >= self.final_min


# A finished task is gone; only its phase remains (and, set by J7, the transactions it left pending).
FINISHED_TASK = TaskState(phase=FINISHED)


class Pending(NamedTuple):
    """The checkpoint in progress (C2), as bit masks over the tasks."""

    id: int
    wait: int              # tasks to wait for
    acked: int             # tasks that acknowledged
    commit: int            # tasks to commit to
    finished: int          # tasks finished according to the plan
    snapshots: tuple       # per task: Snapshot or None


class RestorePoint(NamedTuple):
    """The latest completed checkpoint's content, kept only while a failover can still happen."""

    id: int
    finished: int
    snapshots: tuple


class Coordinator(NamedTuple):
    """The checkpoint coordinator; the defaults are its state when the job starts (it has
    learned something: the job started, so C3 lets it trigger)."""

    known_finished: int = 0        # the view: tasks whose FINISHED report arrived
    finished_reports: int = 0      # FINISHED reports on their way (C1)
    last_id: int = 0               # newest checkpoint id started
    started_with_data: int = 0     # checkpoints started while some source had data (C3)
    learned: bool = True           # a report arrived since the last trigger (C3)
    pending: Any = None            # Pending or None (C2)
    completed: int = 0             # newest completed checkpoint id (0: none)
    restore: Any = None            # RestorePoint or None
    last_aborted: int = 0          # newest aborted checkpoint id (0: none)
    failovers: int = 0
    known_end_of_data: int = 0     # the end-of-data view: tasks whose end-of-data report arrived (C1, C6)
    stop_id: int = 0               # C7: id of the stop-with-savepoint; 0 none yet, NO_STOP_ID its plan was declined

    @property
    def stopped(self) -> bool:
        """C7: the stop-with-savepoint completed, so the job stops and nothing is triggered any more."""
        return self.stop_id > 0 and self.completed == self.stop_id


class JobState(NamedTuple):
    """The whole job: every task, channel, message on its way and the external system."""

    tasks: tuple               # TaskState per task
    queues: tuple              # per channel: the messages in flight, oldest first
    received: tuple            # per channel: records the downstream consumed (this attempt)
    rpcs: tuple                # per task: ids of trigger RPCs on their way
    notifications: tuple       # per task: newest completion notification on its way (0: none)
    coordinator: Coordinator
    committed: tuple           # per task: ((txn id, records), ...) committed externally

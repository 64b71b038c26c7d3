"""Failures (F0) and failover (F1): a task fails; the JobManager restarts every task from the
latest completed checkpoint.

Seed "Failover and Recovery"; flip147 facts §3.2, §4.10. The action :func:`task_failure`
(``action(job, state)``) returns one step per task that may fail (F0), :func:`failed_snapshot_declines`
the decline of a failed source whose snapshot threw (F0), :func:`shared_channel_state_declines`
the declines of the tasks whose unaligned channel state shared a file with a task that failed in
its snapshot (F0); :func:`failover` the failover step (F1), while the job's bound on failures
allows one more.

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), failures=1)
>>> [(label, step.notes) for label, step in failover(job, initial_state(job))]
[(('failover',), [('failover', 0)])]
>>> [(label, step.freeze().tasks[label[1]].phase == FAILED) for label, step in task_failure(job, initial_state(job))]
[(('fail', 0), True), (('fail', 1), True)]
>>> from flipcheck.model.protocol import run
>>> failed_in_snapshot = run(job, [("trigger", 1), ("rpc", 0, 1), ("fail", 0)])   # its acknowledgement had not left
>>> [label for label, _ in failed_snapshot_declines(job, failed_in_snapshot)]
[('fail-decline', 0, 1)]
"""

from __future__ import annotations

from .. import barriers as bar
from .coordinator import abort_pending, decline
from .state import DATA, EOI, FAILED, FAILOVER, SHARED_CHANNEL_STATE, TASK_FAILURE, JobState
from .step import Step, Steps
from .structure import Job
from .tasks import commit, fresh_task

__all__ = ["task_failure", "failed_snapshot_declines", "shared_channel_state_declines", "failover"]


def task_failure(job: Job, s: JobState) -> Steps:
    """F0: a running task fails (its TaskManager switches it to FAILED) while the job's bound on
    failures allows one more failover and no other failure waits for the JobManager. The task
    takes no step any more: it sends, polls, acknowledges and commits nothing, and declines every
    trigger RPC that reaches it (C4, ``TASK_NOT_READY``); a source whose snapshot threw also declines
    that checkpoint (:func:`failed_snapshot_declines`). The JobManager learns of it only later
    (flip147 facts §4.10: ``updateTaskExecutionState`` on its main thread), so the coordinator
    keeps triggering and the other tasks keep running until F1."""
    if s.coordinator.failovers >= job.failures or any(ts.phase == FAILED for ts in s.tasks):
        return []
    steps = []
    for t, ts in enumerate(s.tasks):
        if ts.active:
            n = Step(job, s)
            n.tasks[t] = ts._replace(phase=FAILED)
            n.notes.append(("task-failed", t))
            steps.append((("fail", t), n))
    return steps


def failed_snapshot_declines(job: Job, s: JobState) -> Steps:
    """F0: a source that failed while its snapshot of the pending checkpoint ran declines
    that checkpoint itself (``TASK_FAILURE``, "Task has failed."): the snapshot its trigger RPC
    started threw, and ``Task.triggerCheckpointBarrier``, waiting on that snapshot's future
    (``StreamTask.triggerCheckpointAsync``), declines when it fails (flip147 facts §4.12). The
    model's source snapshots at once (J5), so "while it ran" is: its acknowledgement has not left
    (still in its outbox). Only a snapshot a trigger RPC started has such a future: a task with
    inputs that fails in a snapshot its barriers started declines nothing."""
    pending = s.coordinator.pending
    if pending is None:
        return []
    steps = []
    for t in job.sources:
        ts = s.tasks[t]
        if ts.phase == FAILED and any(k == pending.id for k, _ in ts.outbox):
            n = Step(job, s)
            n.tasks[t] = ts._replace(outbox=tuple(entry for entry in ts.outbox if entry[0] != pending.id))
            decline(n, t, pending.id, TASK_FAILURE)
            steps.append((("fail-decline", t, pending.id), n))
    return steps


def shared_channel_state_declines(job: Job, s: JobState) -> Steps:
    """F0: in unaligned mode, once a task failed with its snapshot of the pending checkpoint
    under way (taken at its first barrier and waiting for the others, or its acknowledgement not
    yet left: the snapshot that threw), any running task whose own snapshot of it is under way
    the same way may decline it too (``CHANNEL_STATE_SHARED_STREAM_EXCEPTION``): that snapshot
    ends there, and no acknowledgement follows. Since Flink 1.17
    (channel-state file merging) subtasks of a TaskManager write their unaligned channel state
    into shared files; when one subtask aborts a checkpoint, the writer fails that checkpoint's
    requests of every other subtask sharing its file
    (``ChannelStateWriteRequestDispatcherImpl.handleAbortedRequest``), whose asynchronous part
    then fails and declines (flip147 facts §4.14). Which subtasks share a
    file is the TaskManager's choice (at most ``max-subtasks-per-channel-state-file``), so any
    running task may; its decline may reach the coordinator before the failed task's."""
    pending = s.coordinator.pending
    if job.mode != bar.UNALIGNED or pending is None:
        return []
    if not any(ts.phase == FAILED and _snapshot_under_way(ts, pending.id) for ts in s.tasks):
        return []
    steps = []
    for t, ts in enumerate(s.tasks):
        if ts.active and _snapshot_under_way(ts, pending.id):
            n = Step(job, s)
            n.tasks[t] = ts._replace(outbox=tuple(entry for entry in ts.outbox if entry[0] != pending.id),
                                     snapshot=None if ts.snapshot is not None and ts.snapshot[0] == pending.id
                                     else ts.snapshot)
            decline(n, t, pending.id, SHARED_CHANNEL_STATE)
            steps.append((("shared-decline", t, pending.id), n))
    return steps


def _snapshot_under_way(ts, checkpoint_id: int) -> bool:
    """The task's snapshot of ``checkpoint_id`` was taken and its acknowledgement has not left;
    in unaligned mode that includes a snapshot taken at the first barrier, waiting for the others
    (J5u: the in-flight data is still being written, divergence 40)."""
    waiting = ts.snapshot is not None and ts.snapshot[0] == checkpoint_id
    return waiting or any(k == checkpoint_id for k, _ in ts.outbox)


def failover(job: Job, s: JobState) -> Steps:
    """F1: the JobManager handles a failure — a task's (F0) or its own (a global failure, at
    once) — and every task restarts from the latest completed checkpoint (from scratch without one);
    the coordinator forgets its views (FINISHED, and end of data as
    :meth:`~.switches.Protocol.end_of_data_view_after_failover` says: C6, FLINK-32945's fix), drops the
    reports on their way and aborts the pending checkpoint. F1b: the triggers under way may use up
    ids (:func:`_trigger_may_be_under_way`), at most ``job.ids_per_failover``."""
    if s.coordinator.failovers >= job.failures:
        return []
    burns = range(job.ids_per_failover + 1) if _trigger_may_be_under_way(job, s) else range(1)
    return [(("failover",), _failover_step(job, s, burned)) for burned in burns]


def _failover_step(job: Job, s: JobState, burned: int) -> Step:
    c = s.coordinator
    n = Step(job, s)
    if c.pending is not None:
        abort_pending(n, FAILOVER)
    restore = c.restore if c.completed else None
    for t in range(len(job.tasks)):
        _restart_task(n, t, restore)
    n.queues = _restored_channels(job, restore)
    n.received = (0,) * len(job.channels)
    n.rpcs = ((),) * len(job.tasks)
    n.notifications = (0,) * len(job.tasks)
    failovers = c.failovers + 1
    known_end_of_data = job.protocol.end_of_data_view_after_failover(job, c)
    n.coord = n.coord._replace(known_finished=0, finished_reports=0, learned=True,
                               failovers=failovers, restore=restore if failovers < job.failures else None,
                               known_end_of_data=known_end_of_data,
                               last_id=n.coord.last_id + burned)
    n.notes.append(("failover", restore.id if restore is not None else 0))
    for k in range(n.coord.last_id - burned + 1, n.coord.last_id + 1):
        n.notes.append(("id-burned", k))
    return n


def _trigger_may_be_under_way(job: Job, s: JobState) -> bool:
    """F1b: with Flink's own timer (C3p) a trigger may be between drawing its id and creating its
    pending checkpoint when the failover stops the scheduler; that id is used up (flip147 facts
    §4.6). More may follow: the periodic requests ``CheckpointRequestDecider`` queued while a
    checkpoint was pending are released one by one, and each whose plan, computed while the
    failover cancels the tasks, waits for no task draws an id and fails (flip147 facts §4.6, §1.5,
    §1.6). A checkpoint pending at the failover does not rule it out: the failover aborts it, and
    a request queued behind it, or the timer the failover did not stop (flip147 facts §4.15), then
    draws an id for such a plan (divergence 42). Only a trigger whose plan was not declined draws an id."""
    c = s.coordinator
    return job.periodic_timer and not c.stopped and not isinstance(job.plan(c.known_finished), str)


def _restart_task(n: Step, t: int, restore) -> None:
    """F1: task ``t`` restarts from its snapshot in ``restore`` (a RestorePoint, or None: from
    scratch). Sources rewind to their offset; sinks commit the restored pre-committed transactions
    again (idempotent recover-and-commit; every other transaction of the failed attempt is
    aborted, ``recoverAndAbort``, and the model keeps no trace of it) and begin a new one; tasks
    finished in the checkpoint restart with no data left."""
    job, info = n.job, n.job.tasks[t]
    snapshot = restore.snapshots[t] if restore is not None else None
    if restore is not None and restore.finished >> t & 1:
        # Finished in the checkpoint (vertex fully finished: FINISHED_ON_RESTORE; partly
        # finished: FinishedOperatorSubtaskState) -> no data left (and no operator runs endInput).
        n.tasks[t] = fresh_task(job, t, len(info.records))._replace(input_ended_before=info.sink_v2)
        return
    n.tasks[t] = fresh_task(job, t, snapshot.offset if snapshot is not None else 0)
    if snapshot is None:
        return
    if info.sink_v2:
        # S4: the committer commits what the restored checkpoint covers; EOI committables
        # wait for its endInput; the writer remembers its endInput (FLINK-25920's fix).
        kept = tuple(txn for txn in snapshot.transactions if txn[0] == EOI)
        n.tasks[t] = n.tasks[t]._replace(
            recovered=kept, last_checkpoint=restore.id,
            input_ended_before=snapshot.finished_operators and job.protocol.restore_end_of_input)
        commit(n, t, tuple(txn for txn in snapshot.transactions if txn[0] != EOI), recovered=True)
    elif snapshot.transactions:
        commit(n, t, snapshot.transactions, recovered=True)


def _restored_channels(job: Job, restore) -> list:
    """F1: channels empty but for restored in-flight records — per channel the downstream's
    captured input records, then the upstream's captured output records (J5u): the downstream
    captured what it polled before the barrier reached it, ahead of whatever was still queued
    when the upstream's barrier overtook."""
    queues: list[tuple] = [()] * len(job.channels)
    if restore is None:
        return queues
    for ch in job.channels:
        down, up = restore.snapshots[ch.target], restore.snapshots[ch.source]
        if down is None:
            continue  # the downstream finished in the checkpoint: nothing to consume
        records = down.in_flight[ch.local] + (up.output_in_flight[ch.position] if up is not None else ())
        queues[ch.index] = tuple((DATA, r) for r in records)
    return queues

"""The coordinator rules (C1–C7): reports, triggers, completion and aborts.

The *actions* are :func:`receive_acknowledgement` (one per task ``t``: ``action(job, state,
t)``) and :func:`receive_finished_reports`, :func:`trigger` and :func:`stop_with_savepoint`
(``action(job, state)``); each returns ``(label, step)`` for every such step enabled in ``state``.
The functions after them are the rule bodies, which the task rules reach too: a decline
(:func:`decline`) aborts the pending checkpoint at once. The rule texts are in the package
docstring (:mod:`flipcheck.model.protocol`); each function cites the rules it encodes.

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> [(label, step.freeze().rpcs) for label, step in trigger(job, initial_state(job))]
[(('trigger', 1), ((1,), ()))]
"""

from __future__ import annotations

from .state import (
    COORDINATOR_FAILURE, COORDINATOR_SUSPEND, END_OF_DATA, FINISHED, NO_STOP_ID, RUNNING, TASK_CLOSING, JobState, Pending, RestorePoint, Snapshot,
)
from .step import Step, Steps, replaced
from .structure import Job

__all__ = [
    "receive_acknowledgement", "receive_finished_reports", "trigger", "stop_with_savepoint", "suspend_at_job_end",
    "start_pending", "decline", "abort_pending",
]

# ----------------------------------------------------------------------------------------------
# The actions of the coordinator


def receive_acknowledgement(job: Job, s: JobState, t: int) -> Steps:
    """J5/C5: the oldest acknowledgement of a running task, or one a task sent before it finished
    (J7), reaches the coordinator (asynchronously, after the snapshot); the last one awaited
    completes the checkpoint."""
    ts = s.tasks[t]
    if not (ts.active or ts.phase == FINISHED) or not ts.outbox:
        return []
    n = Step(job, s)
    (k, snapshot), rest = ts.outbox[0], ts.outbox[1:]
    n.tasks[t] = ts._replace(outbox=rest)
    _acknowledge(n, t, k, snapshot)
    return [(("ack", t, k), n)]


def receive_finished_reports(job: Job, s: JobState) -> Steps:
    """C1: any FINISHED report on its way arrives (late and in any order: seed "the order of the
    reports of FINISHED status arrived at JobMaster is not guaranteed"); what the coordinator
    makes of it is :meth:`~.switches.Protocol.on_finished_report` (the task joins its view)."""
    c = s.coordinator
    steps = []
    for t in range(len(job.tasks)):
        if c.finished_reports >> t & 1:
            n = Step(job, s)
            arrived = c._replace(finished_reports=c.finished_reports & ~(1 << t))
            n.coord = job.protocol.on_finished_report(job, arrived, t)
            steps.append((("report-finished", t), n))
    return steps


def trigger(job: Job, s: JobState) -> Steps:
    """C2/C3/C6: with no checkpoint pending (C2: one at a time) and the job not stopped (C7), the
    coordinator triggers checkpoint ``last_id + 1`` when :func:`_may_trigger`; the plan comes
    from its view; a declined plan starts nothing (flip147 facts §1.3: pre-flight failures take no id)."""
    c = s.coordinator
    if c.pending is not None or c.stopped:
        return []
    with_data = _some_source_has_data(job, s)
    if not _may_trigger(job, s, with_data):
        return []
    plan = job.plan(c.known_finished)
    if isinstance(plan, str) and not c.learned:
        return []  # nothing would change
    n = Step(job, s)
    if c.learned and c.known_end_of_data == job.all_tasks:
        n.notes.append(("end-of-data-trigger", c.known_end_of_data))  # the coordinator believes every task ended
    if isinstance(plan, str):
        n.coord = c._replace(learned=False)
        n.notes.append(("plan-declined", plan))
    else:
        n.coord = c._replace(started_with_data=c.started_with_data + with_data, learned=False)
        start_pending(n, plan)
        if job.coordinator_failures:
            return [(("trigger", c.last_id + 1), n), (("trigger-fails", c.last_id + 1), _coordinator_failure(job, s, with_data, plan))]
    return [(("trigger", c.last_id + 1), n)]


def _coordinator_failure(job: Job, s: JobState, with_data: bool, plan: tuple) -> Step:
    """C2f: the checkpoint is triggered (its id taken, its line logged) and an operator
    coordinator's snapshot fails before any task is triggered: the coordinators' snapshots come
    first (recovery facts §3.5), and ``SourceCoordinator.checkpointCoordinator`` completes its
    future exceptionally when the enumerator's ``snapshotState`` throws, so
    ``CheckpointCoordinator`` fails the checkpoint ("Trigger checkpoint failure", flip147 facts
    §4.16). No task hears of it."""
    c = s.coordinator
    n = Step(job, s)
    n.coord = c._replace(started_with_data=c.started_with_data + with_data, learned=False)
    start_pending(n, plan)
    n.rpcs = s.rpcs
    abort_pending(n, COORDINATOR_FAILURE)
    return n


def stop_with_savepoint(job: Job, s: JobState) -> Steps:
    """C7: once, with no checkpoint pending, the coordinator of a ``stop_with_savepoint`` job may
    stop it with a savepoint without drain (flip147 facts §3.1): a synchronous savepoint planned like a
    checkpoint (C2) whose id the coordinator keeps as ``stop_id``."""
    c = s.coordinator
    if not job.stop_with_savepoint or c.stop_id or c.pending is not None:
        return []
    plan = job.plan(c.known_finished)
    n = Step(job, s)
    if isinstance(plan, str):
        n.coord = c._replace(stop_id=NO_STOP_ID)
        n.notes.append(("plan-declined", plan))
    else:
        k = start_pending(n, plan)
        n.coord = n.coord._replace(stop_id=k)
    return [(("stop-with-savepoint", c.last_id + 1), n)]


def suspend_at_job_end(job: Job, s: JobState) -> Steps:
    """C8: once every task FINISHED the job leaves RUNNING, the scheduler stops and a checkpoint
    still pending is aborted (flip147 facts §4.2: ``stopCheckpointScheduler``,
    ``CHECKPOINT_COORDINATOR_SUSPEND``). Not among the job's actions: an exploration ends with
    the job; trace validation (:mod:`flipcheck.properties.protocol_trace_validation`) reads it past the end."""
    c = s.coordinator
    if c.pending is None or any(ts.phase != FINISHED for ts in s.tasks):
        return []
    n = Step(job, s)
    abort_pending(n, COORDINATOR_SUSPEND)
    return [(("suspend",), n)]


# ----------------------------------------------------------------------------------------------
# When to trigger


def _some_source_has_data(job: Job, s: JobState) -> bool:
    return any(s.tasks[t].phase == RUNNING and s.tasks[t].emitted < len(job.tasks[t].records) for t in job.sources)


def _final_checkpoint_missing(s: JobState) -> bool:
    """Some task reached end of data and no checkpoint at least as new as its final one completed."""
    completed = s.coordinator.completed
    return any(ts.phase == END_OF_DATA and not (ts.final_min and completed >= ts.final_min) for ts in s.tasks)


def _may_trigger(job: Job, s: JobState, with_data: bool) -> bool:
    """C3: while some source still has data at most ``checkpoints`` checkpoints start; afterwards
    only when the coordinator learned something since its last trigger and a final checkpoint
    is missing. C6: when its end-of-data view holds every task it triggers whatever the bound
    (flip147 facts §3.1, FLINK-28386). C3p: with the job's ``periodic_timer`` the timer fires
    whenever no checkpoint is pending, whatever the coordinator learned."""
    c = s.coordinator
    if job.periodic_timer:
        return True
    every_task_ended = c.learned and c.known_end_of_data == job.all_tasks  # C6: past the periodic bound
    if with_data:
        return c.started_with_data < job.checkpoints or every_task_ended
    # C6 included: the report completing the view is an end of data without final checkpoint
    return c.learned and _final_checkpoint_missing(s)


# ----------------------------------------------------------------------------------------------
# The rule bodies


def start_pending(n: Step, plan: tuple) -> int:
    """C2/C4: start checkpoint ``last_id + 1`` of ``plan`` (bit masks ``(trigger, wait, commit,
    finished)``) and send its trigger RPCs, which travel asynchronously."""
    to_trigger, wait, commit, finished = plan
    k = n.coord.last_id + 1
    pending = Pending(id=k, wait=wait, acked=0, commit=commit, finished=finished,
                      snapshots=(None,) * len(n.job.tasks))
    n.coord = n.coord._replace(last_id=k, pending=pending)
    n.rpcs = tuple(ids + (k,) if to_trigger >> t & 1 else ids for t, ids in enumerate(n.rpcs))
    n.notes.append(("triggered", k, to_trigger))
    return k


def decline(n: Step, t: int, k: int, reason: str) -> None:
    """C5: task ``t`` declines checkpoint ``k``: the coordinator aborts it if it is still pending."""
    pending = n.coord.pending
    if pending is not None and pending.id == k:
        abort_pending(n, reason, t)


def abort_pending(n: Step, reason: str, t: int | None = None) -> None:
    """C5/F1: abort the pending checkpoint. C7/J9: an aborted stop-with-savepoint lets the periodic
    scheduler restart, and its abort notification ends every task's synchronous savepoint
    (modelled as reaching the tasks at once)."""
    k = n.coord.pending.id
    n.coord = n.coord._replace(pending=None, last_aborted=max(k, n.coord.last_aborted))
    n.notes.append(("aborted", k, reason, t))
    if k == n.coord.stop_id:
        n.coord = n.coord._replace(learned=True)
        for u, ts in enumerate(n.tasks):
            if ts.sync_savepoint == k:
                n.tasks[u] = ts._replace(sync_savepoint=0)


def _acknowledge(n: Step, t: int, k: int, snapshot: Snapshot) -> None:
    """C5: record task ``t``'s acknowledgement of ``k``; complete ``k`` once every task awaited acknowledged."""
    pending = n.coord.pending
    if pending is None or pending.id != k or not pending.wait >> t & 1 or pending.acked >> t & 1:
        return  # a late acknowledgement of an aborted checkpoint (flip147 facts §3.2: DISCARDED / UNKNOWN)
    pending = pending._replace(acked=pending.acked | 1 << t, snapshots=replaced(pending.snapshots, t, snapshot))
    n.coord = n.coord._replace(pending=pending)
    if pending.acked == pending.wait:
        _complete(n, pending)


def _complete(n: Step, pending: Pending) -> None:
    """C5: finalize (:meth:`~.switches.Protocol.finalize_problem`, the FLINK-21080 checks, may abort
    it with ``CHECKPOINT_DECLINED_TASK_CLOSING``), keep it for a restore while a failover can still
    happen (F1), and notify the tasks to commit to, asynchronously (J8)."""
    job = n.job
    problem = job.protocol.finalize_problem(job, pending)
    if problem is not None:
        n.notes.append(("finalize-failed", pending.id, problem))
        abort_pending(n, TASK_CLOSING)
        return
    restore = (RestorePoint(id=pending.id, finished=pending.finished, snapshots=pending.snapshots)
               if n.coord.failovers < job.failures else None)
    n.coord = n.coord._replace(pending=None, completed=pending.id, restore=restore)
    n.notifications = tuple(
        max(k, pending.id) if pending.commit >> t & 1 and n.tasks[t].phase != FINISHED else k
        for t, k in enumerate(n.notifications))
    n.notes.append(("completed", pending.id, pending.finished, pending.snapshots))

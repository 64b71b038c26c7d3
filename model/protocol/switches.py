"""The protocol's switches: the correct FLIP-147 protocol, and the rules a change most often touches.

:class:`Protocol` is the protocol Flink ships. It holds two kinds of switch:

* **booleans**, each turning one known bug or earlier design on or off
  (``wait_for_pending_checkpoints``, ...);
* **rule methods**, whose body *is* the model's rule for a decision a Flink change makes in code:
  when a finishing task may exit (J7), what the coordinator makes of a FINISHED report (C1),
  which tasks a checkpoint triggers and waits for (C2), whether a finished task declines a
  trigger (C4), why finalizing a checkpoint fails (C5), what the coordinator keeps on a failover
  (F1/C6), the id of a Sink V2 end-of-input committable (S1). The rule modules (:mod:`.tasks`,
  :mod:`.coordinator`, :mod:`.failover`) call them on ``job.protocol``; the default bodies read
  the booleans, so a variant that sets a boolean and one that overrides the method are checked
  by the same rules.

The named variants of :mod:`flipcheck.reference_impl.protocol_variants` subclass it and override
a boolean or a method each; a user's change is a subclass too (docs/api.md).

>>> Protocol().name, Protocol.wait_for_final_checkpoint
('flip-147', True)
>>> RULE_METHODS
('may_finish', 'finish_waits_for', 'on_finished_report', 'plan', 'finished_task_declines_trigger', 'finalize_problem', 'end_of_data_view_after_failover', 'end_of_input_checkpoint_id')
>>> class ExitBeforePendingCheckpoints(Protocol):       # J7 written as code
...     def may_finish(self, job, state, t):
...         return set(self.finish_waits_for(job, state, t)) <= {"pending checkpoints"}
>>> overridden(ExitBeforePendingCheckpoints())
('may_finish',)
"""

from __future__ import annotations

from ..jobgraph import JobGraph
from ..plan import checkpoint_plan
from .state import EOI, RUNNING, STOPPED, Coordinator, JobState, Pending, TaskState

__all__ = ["Protocol", "FINISH_WAITS", "SWITCHES", "RULE_METHODS", "overridden"]

#: What a task may still wait for before it finishes (:meth:`Protocol.finish_waits_for`), in
#: the order it is reported: its end of data (J1/J4), its synchronous savepoint (J9),
#: EndOfPartition on every input (J3), then FLIP-147's three waits (J7).
FINISH_WAITS = ("end of data", "savepoint", "end of partition", "end-of-data acks", "final checkpoint",
                "pending checkpoints")
_END_OF_DATA = FINISH_WAITS[:1]


class Protocol:
    """The correct FLIP-147 protocol as shipped by Flink. Override a boolean or a rule method
    to change one rule; every other rule stays the model's.

    Rule methods (the default body is the rule; ``job`` is the
    :class:`~flipcheck.model.protocol.Job`, ``state`` a
    :class:`~flipcheck.model.protocol.JobState`, ``t`` a task's index in ``job.tasks``):

    * ``may_finish(job, state, t) -> bool`` — J7: may running task ``t`` finish now?
    * ``finish_waits_for(job, state, t) -> tuple`` — J7/J9: what ``t`` still waits for
      (names from :data:`FINISH_WAITS`; empty: nothing);
    * ``on_finished_report(job, coordinator, t) -> Coordinator`` — C1: the coordinator once
      ``t``'s FINISHED report arrived;
    * ``plan(graph) -> CheckpointPlan | Declined`` — C2: which tasks a checkpoint triggers,
      waits for and commits to;
    * ``finished_task_declines_trigger(job, state, t, k) -> bool`` — C4: does FINISHED task
      ``t`` decline the trigger RPC of checkpoint ``k`` (else the RPC is lost)?
    * ``finalize_problem(job, pending) -> str | None`` — C5: why finalizing the fully
      acknowledged checkpoint ``pending`` aborts it (None: it completes);
    * ``end_of_data_view_after_failover(job, coordinator) -> int`` — F1/C6: the end-of-data
      view (a bit mask of tasks) the coordinator keeps through a failover;
    * ``end_of_input_checkpoint_id(job, task) -> int`` — S1: the checkpoint id a Sink V2
      writer's end-of-input committable carries.

    >>> from flipcheck.generators.protocol import example_graph
    >>> from flipcheck.model.protocol import Job, initial_state, run
    >>> job = Job(example_graph("pair"), records=0)
    >>> Protocol().finish_waits_for(job, initial_state(job), 0)
    ('end of data',)
    >>> s = run(job, [("end-of-data", 0), ("trigger", 1), ("rpc", 0, 1)])
    >>> Protocol().finish_waits_for(job, s, 0)      # its snapshot of checkpoint 1 is not acknowledged yet
    ('end-of-data acks', 'final checkpoint', 'pending checkpoints')

    A change to a rule, written as code (``flipcheck.Protocol`` is this class), and the same
    change as a boolean; both are caught:

    >>> import flipcheck
    >>> class ExitBeforePendingCheckpoints(flipcheck.Protocol):
    ...     def may_finish(self, job, state, t):
    ...         return set(self.finish_waits_for(job, state, t)) <= {"pending checkpoints"}
    >>> class NoWaitForPending(flipcheck.Protocol):
    ...     wait_for_pending_checkpoints = False
    >>> [flipcheck.explore(example_graph("pair"), p, mode="unaligned", records=0).counterexample.property
    ...  for p in (ExitBeforePendingCheckpoints, NoWaitForPending)]
    ['no_pending_checkpoint_cancelled', 'no_pending_checkpoint_cancelled']
    """

    name = "flip-147"
    #: A named variant's metadata (the Flink issue it re-creates, where it comes from): reports
    #: read them, no rule does.
    flink_issue: str | None = None
    source: str | None = None
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

    # -- J7: when a finishing task may exit -------------------------------------------------------

    def may_finish(self, job, state: JobState, t: int) -> bool:
        """J7: running task ``t`` may finish now: it waits for nothing
        (:meth:`finish_waits_for`). Finishing then sends EndOfPartition downstream and the
        FINISHED report (C1); checkpoints still pending on the task are cancelled (seed "Do Not
        Cancel Pending Checkpoint on Finish": only a variant gets there).

        >>> from flipcheck.generators.protocol import example_graph
        >>> from flipcheck.model.protocol import Job, run
        >>> job = Job(example_graph("pair"), records=0)
        >>> Protocol().may_finish(job, run(job, [("end-of-data", 0)]), 0)
        False
        """
        return not self.finish_waits_for(job, state, t)

    def finish_waits_for(self, job, state: JobState, t: int) -> tuple[str, ...]:
        """J7 (and J9): what running task ``t`` still waits for before it may finish, by the
        names of :data:`FINISH_WAITS`. Every task needs its end of data (J1/J4) and, with
        inputs, EndOfPartition on each (J3), and none finishes while it waits for its
        synchronous savepoint (J9). With FLIP-147 on it also waits until every downstream
        acknowledged its EndOfData (seed: "the upstream tasks only exit after all the response
        events are received"), until a checkpoint at least as new as its final one completed
        and it was notified (flip147 facts §3.1 ``afterInvoke``, ``finalCheckpointMinId``), and
        until no checkpoint of it is pending (seed "Do Not Cancel Pending Checkpoint on
        Finish"; flip147 facts §3.1 ``waitForPendingCheckpoints``), each unless its boolean is
        off. J9: a task stopped by its savepoint finishes without end of data, once its inputs
        ended and its checkpoints are done; FLIP-147 off: at once. A task still running waits
        for its end of data first; the rest is reported once it reached it."""
        task = state.tasks[t]
        if task.phase == RUNNING:
            if task.sync_savepoint != STOPPED:
                return _END_OF_DATA
            # J9: stopped by its savepoint
            waits = ("end of partition",) if task.inputs_open else ()
            if task.checkpoint_pending:
                waits += ("pending checkpoints",)
            return waits
        waits = ("savepoint",) if task.sync_savepoint > 0 else ()
        if task.inputs_open:
            waits += ("end of partition",)
        if not job.after_finished:
            return waits
        if self.wait_for_end_of_data_acks and task.acked != (1 << len(job.tasks[t].outputs)) - 1:
            waits += ("end-of-data acks",)
        if self.wait_for_final_checkpoint and not task.final_checkpoint_completed:
            waits += ("final checkpoint",)
        if self.wait_for_pending_checkpoints and task.checkpoint_pending:
            waits += ("pending checkpoints",)
        return waits

    # -- the coordinator --------------------------------------------------------------------------

    def on_finished_report(self, job, coordinator: Coordinator, t: int) -> Coordinator:
        """C1: task ``t``'s FINISHED report arrived (late, in any order: seed "the order of the
        reports of FINISHED status arrived at JobMaster is not guaranteed"): ``t`` joins the
        coordinator's view, the plan's input (C2), and the coordinator learned something, so
        it may trigger again (C3). ``coordinator`` no longer holds the report on its way."""
        return coordinator._replace(known_finished=coordinator.known_finished | 1 << t, learned=True)

    def plan(self, graph: JobGraph):
        """C2: the plan the coordinator computes from its view — tasks to trigger, to wait
        for and to commit to, or the reason it declines (flip147 facts §1.3; the plan spec
        :func:`flipcheck.model.plan.checkpoint_plan`, seed Appendix 1). ``graph`` carries the
        view as each subtask's state."""
        return checkpoint_plan(graph)

    def finished_task_declines_trigger(self, job, state: JobState, t: int, k: int) -> bool:
        """C4: a trigger RPC of checkpoint ``k`` reaching task ``t`` after it FINISHED is
        declined (``CHECKPOINT_DECLINED_TASK_NOT_READY``; seed: "the tasks might finish between
        the computation and the tasks get triggered"; flip147 facts §3.2, FLINK-23741). False:
        the RPC is lost and the checkpoint waits for an acknowledgement that never comes."""
        return self.decline_trigger_of_finished_task

    def finalize_problem(self, job, pending: Pending) -> str | None:
        """C5: why finalizing the fully acknowledged checkpoint ``pending`` fails (it is then
        aborted with ``CHECKPOINT_DECLINED_TASK_CLOSING``); None: it completes. Flink's
        FLINK-21080 checks (flip147 facts §3.2 ``checkNoPartlyFinishedVertexUsedUnionListState``
        and ``checkNoPartlyOperatorsFinishedVertexUsedUnionListState``): a vertex with union list
        state may be neither partly finished nor have only some of its subtasks called
        ``finish()``. Only the subtask states reported are checked: a task the plan did not wait
        for has none."""
        if not self.union_list_state_checks:
            return None
        for vertex in job.graph.topological_order:
            tasks = job.vertex_tasks(vertex)
            if not job.tasks[tasks[0]].union_list_state:
                continue
            finished = [u for u in tasks if pending.finished >> u & 1]
            if finished and len(finished) < len(tasks):
                return f"The vertex {vertex} has used UnionListState, but part of its tasks are FINISHED."
            if not finished:
                flags = {pending.snapshots[u].finished_operators for u in tasks if pending.snapshots[u] is not None}
                if len(flags) > 1:
                    return (f"The vertex {vertex} has used UnionListState, but part of its tasks has called "
                            f"operators' finish method.")
        return None

    def end_of_data_view_after_failover(self, job, coordinator: Coordinator) -> int:
        """F1/C6: the end-of-data view (tasks as a bit mask) the coordinator keeps through a
        failover: none, since every task restarts (FLINK-32945's fix: ``restoreVertices`` clears
        the bits of the restarted tasks)."""
        return 0 if self.reset_end_of_data_view_on_failover else coordinator.known_end_of_data

    # -- Sink V2 ----------------------------------------------------------------------------------

    def end_of_input_checkpoint_id(self, job, task: TaskState) -> int:
        """S1: the checkpoint id a Sink V2 writer's end-of-input committable carries: the one
        after the newest checkpoint it snapshotted or was restored from (FLINK-37605:
        ``lastKnownCheckpointId + 1``), not the ``EOI`` sentinel (Long.MAX_VALUE) it carried
        before."""
        return task.last_checkpoint + 1 if self.end_of_input_id_is_next_checkpoint else EOI


#: Every switch a variant may override, in the class's order: the booleans and the rule methods.
SWITCHES = tuple(name for name, value in vars(Protocol).items()
                 if not name.startswith("_") and name != "name" and (isinstance(value, bool) or callable(value)))
#: The switches that are rule methods.
RULE_METHODS = tuple(name for name in SWITCHES if callable(vars(Protocol)[name]))


def overridden(protocol: Protocol) -> tuple[str, ...]:
    """The switches ``protocol`` sets differently from :class:`Protocol` (in :data:`SWITCHES`
    order): a boolean with another value, a rule method with another body.

    >>> class NoWait(Protocol):
    ...     wait_for_pending_checkpoints = False
    >>> overridden(NoWait()), overridden(Protocol())
    (('wait_for_pending_checkpoints',), ())
    """
    cls = type(protocol)
    return tuple(name for name in SWITCHES if getattr(cls, name) is not getattr(Protocol, name)
                 and getattr(cls, name) != getattr(Protocol, name))

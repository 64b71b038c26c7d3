"""Named variants of the whole-job protocol: design alternatives and historical bugs.

Each variant is a small override of the correct protocol :class:`flipcheck.model.protocol.Protocol`
(one attribute or the plan algorithm), documented with the seed text or Flink issue it
re-creates. The explorer must catch every one (``tests/quality/test_protocol_variants_caught.py``).

* ``trigger-sources-only`` — the coordinator keeps triggering the original sources (seed,
  Figure 1).
* ``cancel-pending-on-finish`` — finishing cancels pending checkpoints and waits for nothing
  (seed "Do Not Cancel Pending Checkpoint on Finish": "Currently when a task finish, all the
  pending checkpoints would be canceled").
* ``pre-flip-147`` — the job before FLIP-147 (``checkpoints_after_tasks_finished`` off).
* ``no-end-of-data-ack`` — an upstream finishes without waiting for its downstream to process
  its records (flip147 facts §2.5, FLINK-21086 design discussion); unaligned checkpoints only.
* ``wiki-b-trigger`` — the coordinator uses the seed's second Appendix algorithm as written.
* ``trigger-finished-task-hangs`` — a trigger RPC reaching a finished task is treated as
  accepted (FLINK-21081 / FLINK-23741).
* ``union-state-partial-finish`` — the FLINK-21080 union-list-state checks are missing.
* ``end-of-data-view-kept-on-failover`` — a failover keeps the coordinator's end-of-data bits
  (FLINK-32945).
* ``released-channel-stays-queued`` — a channel released by EndOfPartition stays in the input
  gate's queue of available channels (FLINK-22368).
* ``stop-without-drain-after-end-of-data`` — a task that reached end of data performs a
  stop-with-savepoint without drain (FLINK-24161).
* ``new-transaction-after-finish`` — a two-phase-commit sink's snapshot opens a new transaction
  after ``finish()`` (FLINK-23473).
* ``prepare-commit-twice-at-end`` — a Sink V2 writer flushes again in the final checkpoint's
  ``prepareSnapshotPreBarrier`` after ``endInput`` flushed (FLINK-24131).
* ``end-input-again-after-restore`` — a Sink V2 writer restored from its final checkpoint runs
  ``endInput`` again, under the pre-FLINK-37605 ``EOI`` id (FLINK-25920).
* ``end-of-input-sentinel-id`` — Sink V2 end-of-input committables carry the ``EOI`` sentinel, not
  the next checkpoint id (FLINK-37605).

Example
-------
>>> sorted(PROTOCOL_VARIANTS)[:3]
['cancel-pending-on-finish', 'end-input-again-after-restore', 'end-of-data-view-kept-on-failover']
>>> protocol("released-channel-stays-queued").flink_issue
'FLINK-22368'
>>> protocol("wiki-b-trigger").plan.__name__
'plan'
>>> protocol("flip-147").name
'flip-147'

Besides these names, every lookup takes a user's own subclass of
:class:`~flipcheck.model.protocol.Protocol` by spec, ``path/to/file.py:Class`` or
``module:Class`` (:mod:`flipcheck.reference_impl.user_variants`).
"""

from __future__ import annotations

from flipcheck.model.protocol import Job, Protocol
from flipcheck.model.jobgraph import JobGraph

from .plan import PLAN_ALGORITHMS
from .user_variants import lookup_variant

__all__ = ["PROTOCOL_VARIANTS", "PROTOCOLS", "CORRECT_PROTOCOL", "protocol_class", "protocol", "make_job"]

CORRECT_PROTOCOL = Protocol.name


class TriggerSourcesOnly(Protocol):
    """The coordinator keeps triggering only the original sources, finished or not. Seed,
    Figure 1: "suppose Task A has finished if we only trigger B for a new checkpoint, then Task
    C would have no idea about the new checkpoint and would not report its snapshot"."""

    name = "trigger-sources-only"
    source = "seed \"Triggering Checkpoints After Tasks Finished\", Figure 1"
    flink_issue = None

    def plan(self, graph):
        return PLAN_ALGORITHMS["trigger-sources-only"](graph)


class CancelPendingOnFinish(Protocol):
    """A task finishes as soon as its inputs ended, cancelling the checkpoints it is still
    taking part in, without waiting for a final checkpoint — "Currently when a task finish,
    all the pending checkpoints would be canceled" (seed "Do Not Cancel Pending Checkpoint on
    Finish"): a two-phase-commit sink never gets its final commit."""

    name = "cancel-pending-on-finish"
    source = "seed \"Do Not Cancel Pending Checkpoint on Finish\""
    flink_issue = None
    wait_for_final_checkpoint = False
    wait_for_pending_checkpoints = False


class PreFlip147(Protocol):
    """The job before FLIP-147: the coordinator declines checkpoints once a task finished,
    EndOfPartition aborts a pending checkpoint, and tasks finish without a final checkpoint
    (dropping the snapshots they have not acknowledged, so a pending checkpoint can only fail) —
    the two-phase-commit sink's last records are never committed."""

    name = "pre-flip-147"
    source = "seed, motivation; flip147 facts §1.3 step 1, §2.1 (flag off)"
    flink_issue = None
    checkpoints_after_tasks_finished = False


class NoEndOfDataAck(Protocol):
    """An upstream task finishes without waiting until its downstream acknowledged EndOfData,
    so records may still be in the channel when the coordinator, seeing the upstream FINISHED,
    triggers the downstream by RPC. The seed's remedy: "the upstream tasks would wait till the
    downstream tasks to process all the pending records before exit". It shows only with
    unaligned barriers, which overtake the records and EndOfData (rule J5u of the job model): an
    aligned final barrier travels behind them, so the final checkpoint implies the acknowledgement."""

    name = "no-end-of-data-ack"
    source = "seed \"Extend the task Barrier Alignment\"; flip147 facts §2.5; FLINK-21086 (PR #14831 vs #15055)"
    flink_issue = "FLINK-21086"
    wait_for_end_of_data_acks = False


class WikiBTrigger(Protocol):
    """The coordinator computes the tasks to trigger with the seed's second Appendix algorithm
    as written (``tasks_to_check`` only grows, so tasks with running predecessors are
    triggered too)."""

    name = "wiki-b-trigger"
    source = "seed Appendix 1, second algorithm"
    flink_issue = None

    def plan(self, graph):
        return PLAN_ALGORITHMS["wiki-b"](graph)


class TriggerFinishedTaskHangs(Protocol):
    """A trigger RPC that reaches a task which already finished is treated as accepted, so the
    checkpoint waits for an acknowledgement that never comes: "TaskExecutor acked the RPC before
    StreamTask's future resolved → final checkpoint could deadlock" (flip147 facts §5)."""

    name = "trigger-finished-task-hangs"
    source = "flip147 facts §3.2, §5"
    flink_issue = "FLINK-21081"
    decline_trigger_of_finished_task = False


class UnionStatePartialFinish(Protocol):
    """Finalizing a checkpoint does not check vertices with union list state: a checkpoint in
    which some of their subtasks finished completes, and their entries are lost on restore."""

    name = "union-state-partial-finish"
    source = "flip147 facts §3.2 fulfillFinishedTaskStatus"
    flink_issue = "FLINK-21080"
    union_list_state_checks = False


class EndOfDataViewKeptOnFailover(Protocol):
    """A failover does not reset the coordinator's record of which tasks reached end of data, so
    after a restart it believes "all tasks reached end of data" too early and fires the immediate
    checkpoint of FLINK-28386 while restarted attempts still process data (in Flink the stale
    ``VertexEndOfDataListener`` also threw a NullPointerException on the restarted tasks' reports)."""

    name = "end-of-data-view-kept-on-failover"
    source = "flip147 facts §3.1 (SchedulerBase.notifyEndOfData), §5; PR apache/flink#23268"
    flink_issue = "FLINK-32945"
    reset_end_of_data_view_on_failover = False


class ReleasedChannelStaysQueued(Protocol):
    """A channel released by its EndOfPartition is left in the input gate's queue of available
    channels; polling it again throws ``CancelTaskException``, the task is cancelled without
    propagating EndOfPartition and the job is stuck."""

    name = "released-channel-stays-queued"
    source = "flip147 facts §5; PR apache/flink#15716 (\"Deque channel after releasing on EndOfPartition\")"
    flink_issue = "FLINK-22368"
    dequeue_released_channels = False


class StopWithoutDrainAfterEndOfData(Protocol):
    """A task that already reached end of data performs the synchronous savepoint of a
    stop-with-savepoint without drain instead of declining it; the savepoint's completion stops
    the task rather than completing its final checkpoint, and no checkpoint is triggered after a
    successful stop, so the task waits for its final checkpoint forever (deadlock)."""

    name = "stop-without-drain-after-end-of-data"
    source = "flip147 facts §3.1 (stop-with-savepoint), §5; StreamTask.performCheckpoint / endData"
    flink_issue = "FLINK-24161"
    decline_stop_without_drain_after_end_of_data = False


class NewTransactionAfterFinish(Protocol):
    """A two-phase-commit sink keeps opening a transaction in every snapshot after ``finish()``:
    a checkpoint after its final one pre-commits that empty transaction, the task finishes before
    being notified of it, and the transaction dangles — never committed nor aborted
    (``TwoPhaseCommitSinkFunction.snapshotState`` called ``beginTransactionInternal`` unconditionally;
    the fix holds no transaction after finish, FLINK-24065 made that state restorable)."""

    name = "new-transaction-after-finish"
    source = "flip147 facts §5 FLINK-23473 / FLINK-24065; apache/flink PR #16768"
    flink_issue = "FLINK-23473"
    no_transaction_after_finish = False


class PrepareCommitTwiceAtEnd(Protocol):
    """A Sink V2 writer prepares a commit again in the final checkpoint's ``prepareSnapshotPreBarrier``
    after ``endInput`` already flushed (``flush(true)``, ``prepareCommit``): both committables carry the
    same checkpoint id, so the committer gets a second summary for it (1.14 ``SinkOperator`` before its
    ``endOfInput`` guard; Iceberg #5614 is the same double flush in a custom writer)."""

    name = "prepare-commit-twice-at-end"
    source = "flip147 facts §5 FLINK-24131 (SinkWriter#prepareCommit called twice for the final commit), Iceberg #5614"
    flink_issue = "FLINK-24131"
    no_pre_barrier_commit_after_end_of_input = False


class EndInputAgainAfterRestore(Protocol):
    """A Sink V2 writer restored from a checkpoint taken after its ``endInput`` (the final one, the
    task not yet FINISHED) does not remember it: the replayed EndOfData runs ``endInput`` again and
    its second end-of-input summary meets the restored one under the same ``EOI`` id (Flink 1.15–1.19;
    fixed by ``end_of_input_state``, PR #25292). Needs both attributes: with FLINK-37605's ids the
    replay is harmless (a new id), which the quality test checks."""

    name = "end-input-again-after-restore"
    source = "flip147 facts §5 FLINK-25920 (endInput called again after failover following the final checkpoint); FLINK-37605 row"
    flink_issue = "FLINK-25920"
    restore_end_of_input = False
    end_of_input_id_is_next_checkpoint = False


class EndOfInputSentinelId(Protocol):
    """A Sink V2 writer tags its end-of-input committables with the sentinel ``EOI`` (Long.MAX_VALUE)
    instead of the next checkpoint id, and the committer commits them on the first completion after
    its ``endInput``: a checkpoint taken before end of input then commits data it does not cover, and
    a failover restoring it replays that data — "final doesn't mean final" (FLINK-37605, PR #26433)."""

    name = "end-of-input-sentinel-id"
    source = "flip147 facts §5 FLINK-37605 (tag end-of-input committables with the next real checkpoint id); apache/flink PR #26433"
    flink_issue = "FLINK-37605"
    end_of_input_id_is_next_checkpoint = False


PROTOCOL_VARIANTS: dict[str, type[Protocol]] = {
    cls.name: cls for cls in (TriggerSourcesOnly, CancelPendingOnFinish, PreFlip147, NoEndOfDataAck, WikiBTrigger,
                              TriggerFinishedTaskHangs, UnionStatePartialFinish, EndOfDataViewKeptOnFailover,
                              ReleasedChannelStaysQueued, StopWithoutDrainAfterEndOfData, NewTransactionAfterFinish,
                              PrepareCommitTwiceAtEnd, EndInputAgainAfterRestore, EndOfInputSentinelId)
}
PROTOCOLS: dict[str, type[Protocol]] = {CORRECT_PROTOCOL: Protocol, **PROTOCOL_VARIANTS}


def protocol_class(name: str) -> type[Protocol]:
    """The class of protocol variant ``name``, or the user's class a spec names
    (:func:`~flipcheck.reference_impl.user_variants.load_variant`); ValueError otherwise."""
    return lookup_variant(name, PROTOCOLS, Protocol, "protocol variant")


def protocol(name: str) -> Protocol:
    return protocol_class(name)()


def make_job(graph: JobGraph, variant: str = CORRECT_PROTOCOL, **options) -> Job:
    """A :class:`~flipcheck.model.protocol.Job` running protocol ``variant``."""
    return Job(graph, protocol=protocol(variant), **options)

"""The protocol's switches: the correct FLIP-147 protocol and the hooks its variants override.

Every rule that a known bug or an earlier design changes reads one attribute of
:class:`Protocol` (or calls its :meth:`~Protocol.plan`); the named variants of
:mod:`flipcheck.reference_impl.protocol_variants` subclass it and override one each.

>>> Protocol().name, Protocol.wait_for_final_checkpoint
('flip-147', True)
"""

from __future__ import annotations

from ..jobgraph import JobGraph
from ..plan import checkpoint_plan

__all__ = ["Protocol"]


class Protocol:
    """The correct FLIP-147 protocol as shipped by Flink. Named variants
    (:mod:`flipcheck.reference_impl.protocol_variants`) override one attribute or method each."""

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

    def plan(self, graph: JobGraph):
        """The plan the coordinator computes from its view (C2)."""
        return checkpoint_plan(graph)


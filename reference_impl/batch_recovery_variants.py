"""Named variants of Flink's batch job recovery: the seed as written, likely bugs, and the
possible missing ``return`` the facts point out.

Each variant is a :class:`~flipcheck.reference_impl.batch_recovery.BatchJob` with one method of
one class overridden; ``source`` names the seed sentence or facts line, the docstring's first
sentence the mechanism. The suite must catch every mutant
(``tests/quality/test_batch_recovery_mutants_caught.py``).

* ``seed-finished-by-partitions`` — seed step 2: a vertex is FINISHED when its partitions are tracked.
* ``keep-trailing-events`` — finished events after the last snapshot-bearing one are kept (recovery facts §4.5 3b).
* ``keep-unknown-partitions`` — reported partitions of unfinished producers are not released (recovery facts §4.5 step 4).
* ``reported-partitions-not-tracked`` — reported partitions are kept but not tracked (FLINK-33892, recovery facts §4.5 step 4).
* ``no-restart-for-missing`` — producers of missing partitions are not restarted (recovery facts §4.5 step 4).
* ``restore-coordinator-without-snapshot`` — coordinators start fresh instead of from their batch snapshot (seed, FLINK-33984).
* ``snapshot-every-finish`` — min-pause ignored: a coordinator snapshot with every finished task (seed "min-pause").
* ``partitions-matched-without-attempt`` — a reported partition of another attempt is taken for the recovered one.
* ``missing-return`` — ``startRecovering``'s callback runs ``recoverFinished`` after ``recoverFailed`` (recovery facts §4.5 step 7 [obs], e964af3).

Example
-------
>>> sorted(MUTANTS)[:2]
['keep-trailing-events', 'keep-unknown-partitions']
>>> VARIANTS["missing-return"].source.startswith("recovery facts §4.5 step 7")
True
"""

from __future__ import annotations

from flipcheck.model.batch_recovery import CREATED, FINISHED, Config

from .batch_recovery import (
    BatchJob, DefaultBatchJobRecoveryHandler, IllegalStateException, JobMaster, RELEASE,
)
from .user_variants import lookup_variant

__all__ = ["ENGINE", "VARIANTS", "MUTANTS", "CORRECT_VARIANTS", "make_job", "variant_class"]

ENGINE = "flink"


def _with_handler(handler_class):
    return type(f"JobMaster[{handler_class.__name__}]", (JobMaster,), {"handler_class": handler_class})


# -- seed step 2 -----------------------------------------------------------------------------------


class _FinishedByPartitions(DefaultBatchJobRecoveryHandler):
    def finalize_replay(self) -> None:
        super().finalize_replay()
        # "the execution vertices whose produced partitions are all tracked will be marked as finished"
        shuffle, graph = self.jm.shuffle_master, self.jm.graph
        for t, s in enumerate(graph.status):
            if s != FINISHED and graph.topo.consumers[t] and shuffle.outputs[t] is not None:
                graph.status[t], graph.attempt[t] = FINISHED, shuffle.outputs[t][0]
                slot = graph.source_slot(t)
                if slot is not None:   # the reset moved its splits back: the finished task takes them again
                    coordinator = self.jm.coordinators[slot[0]]
                    held = [x for x in shuffle.outputs[t][1] if x in coordinator.enumerator_pool]
                    coordinator.enumerator_pool = [x for x in coordinator.enumerator_pool if x not in held]
                    coordinator.uncheckpointed[slot[1]] = sorted(held)


class SeedFinishedByPartitions(BatchJob):
    """A task whose partition a TaskManager still holds is restored FINISHED although its
    finished event was lost or came after the last coordinator snapshot; the coordinators are
    restored from an older snapshot, so what the task read is handed out again."""

    name = "seed-finished-by-partitions"
    flink_issue = None
    source = ("seed 004 recovery step 2: 'the execution vertices whose produced partitions are all tracked will be "
              "marked as finished'; Flink instead replays events (recovery facts §4.5 step 3)")
    jobmaster_class = _with_handler(_FinishedByPartitions)


# -- recovery facts §4.5 step 3b -----------------------------------------------------------------------------


class _KeepTrailing(DefaultBatchJobRecoveryHandler):
    def kept_entries(self, entries: list) -> list:
        return entries


class KeepTrailingEvents(BatchJob):
    """Finished events after the last snapshot-bearing one are replayed too: the task is
    FINISHED but the coordinator snapshot restored predates it, so its splits are read twice
    (or, unassigned in that snapshot, by another subtask)."""

    name = "keep-trailing-events"
    flink_issue = None
    source = "recovery facts §4.5 step 3b 'Drop trailing finished events ... that carry no OC/SM snapshot'"
    jobmaster_class = _with_handler(_KeepTrailing)


# -- recovery facts §4.5 step 4 -----------------------------------------------------------------------------


class _KeepUnknown(DefaultBatchJobRecoveryHandler):
    def release_unknown_partitions(self, tasks: set) -> None:
        pass


class KeepUnknownPartitions(BatchJob):
    """Reported partitions of producers that are not FINISHED (their finished event was lost)
    are kept on the TaskManagers: a leak until the job ends."""

    name = "keep-unknown-partitions"
    flink_issue = None
    source = "recovery facts §4.5 step 4 'toRelease = RELEASE ∩ actual: stopTrackingAndReleasePartitions'"
    jobmaster_class = _with_handler(_KeepUnknown)


class _NoTracking(DefaultBatchJobRecoveryHandler):
    def track_partitions(self, tasks: set) -> None:
        pass


class ReportedPartitionsNotTracked(BatchJob):
    """Reported partitions needed downstream are kept but never tracked again: their producers
    stay FINISHED, yet the consumers can never be scheduled."""

    name = "reported-partitions-not-tracked"
    flink_issue = "FLINK-33892"
    source = ("seed 004: 're-establish the partition information in JobMasterPartitionTracker'; recovery facts §4.5 step 4 "
              "'toReserve = RESERVE ∩ actual: partitionTracker.startTrackingPartition' (FLINK-33892)")
    jobmaster_class = _with_handler(_NoTracking)


class _NoRestart(DefaultBatchJobRecoveryHandler):
    def restart_producers_of_missing(self, missing: set) -> None:
        pass


class NoRestartForMissing(BatchJob):
    """Producers whose needed partitions were not reported stay FINISHED: their consumers wait
    for an input that no longer exists."""

    name = "no-restart-for-missing"
    flink_issue = None
    source = ("seed 004 step 4 'recursively find all its upstream vertices that need to be restarted'; recovery facts §4.5 step 4 "
              "'Restart the producers of missing partitions'")
    jobmaster_class = _with_handler(_NoRestart)


class _AnyAttempt(DefaultBatchJobRecoveryHandler):
    def recover_partitions(self) -> None:
        # partitions matched by producer only: pretend every reported one is of the recovered attempt
        shuffle, graph = self.jm.shuffle_master, self.jm.graph
        saved = list(graph.attempt)
        for t in shuffle.fetched:
            if graph.status[t] == FINISHED:
                graph.attempt[t] = shuffle.outputs[t][0]
        super().recover_partitions()
        for t, a in enumerate(saved):
            if graph.status[t] == FINISHED:
                graph.attempt[t] = a


class PartitionsMatchedWithoutAttempt(BatchJob):
    """A reported partition counts as the recovered execution's whatever attempt wrote it: the
    output of a rerun that finished after the last flush (its event lost) is taken for the
    partition of the attempt the log recovered."""

    name = "partitions-matched-without-attempt"
    flink_issue = None
    source = ("recovery facts §4.5 step 4 (reported partition ids) and FLINK-33892; ResultPartitionID = "
              "IntermediateResultPartitionID + ExecutionAttemptID")
    jobmaster_class = _with_handler(_AnyAttempt)


# -- coordinators ----------------------------------------------------------------------------------


class _FreshCoordinators(DefaultBatchJobRecoveryHandler):
    def restore_operator_coordinators(self, snapshots: dict) -> None:
        super().restore_operator_coordinators({})


class RestoreCoordinatorWithoutSnapshot(BatchJob):
    """The coordinators are not reset to their batch snapshot: a fresh enumerator hands out
    the splits of FINISHED source tasks again."""

    name = "restore-coordinator-without-snapshot"
    flink_issue = "FLINK-33984"
    source = ("seed 004: 'After JM crashes, the operator coordinator can be restored from the previous recorded state'; "
              "FLINK-33984 (SupportsBatchSnapshot)")
    jobmaster_class = _with_handler(_FreshCoordinators)


class _EverySnapshot(DefaultBatchJobRecoveryHandler):
    def snapshot_due(self, job_vertex_finished: bool) -> bool:
        return True


class SnapshotEveryFinish(BatchJob):
    """The min-pause is ignored: every finished task snapshots the coordinators (the overhead
    the seed's option exists to avoid)."""

    name = "snapshot-every-finish"
    flink_issue = None
    source = ("seed 004: 'it may cause large overhead if we snapshot the operator coordinator at each execution vertex "
              "finished ... min-pause to control the minimum interval between snapshots'")
    jobmaster_class = _with_handler(_EverySnapshot)


# -- recovery facts §4.5 step 7 [obs] -------------------------------------------------------------------------


class _MissingReturn(DefaultBatchJobRecoveryHandler):
    def complete_recovery(self, failure: Exception | None) -> None:
        if failure is not None:
            self.recover_failed()
        # no return: recoverFinished runs as well
        try:
            self.recover_finished()
        except IllegalStateException:
            self.recover_failed()


class MissingReturn(BatchJob):
    """After a failed partition recovery the callback also runs ``recoverFinished``: the global
    failure has just cancelled the CREATED tasks, so ``checkExecutionGraphState`` throws and
    ``recoverFailed`` runs again — a second global failover for one failure."""

    name = "missing-return"
    flink_issue = None
    source = ("recovery facts §4.5 step 7 [obs]: 'In startRecovering, the whenComplete callback calls recoverFailed() on a "
              "throwable and then also calls recoverFinished(), because there is no return' (since e964af3)")
    jobmaster_class = _with_handler(_MissingReturn)


class FlinkJob(BatchJob):
    """Flink as the facts describe it, with the ``return`` after ``recoverFailed``."""

    name = ENGINE
    flink_issue = None
    source = "recovery facts §4"


VARIANTS: dict[str, type[BatchJob]] = {
    cls.name: cls
    for cls in (FlinkJob, SeedFinishedByPartitions, KeepTrailingEvents, KeepUnknownPartitions, NoRestartForMissing,
                RestoreCoordinatorWithoutSnapshot, SnapshotEveryFinish, MissingReturn, PartitionsMatchedWithoutAttempt,
                ReportedPartitionsNotTracked)
}
CORRECT_VARIANTS = (ENGINE,)


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


# name -> (Flink issue or None, one-line description)
MUTANTS: dict[str, tuple[str | None, str]] = {
    name: (cls.flink_issue, _first_line(cls.__doc__)) for name, cls in VARIANTS.items() if name not in CORRECT_VARIANTS
}


def make_job(config: Config, variant: str = ENGINE) -> BatchJob:
    """A fresh job of ``variant``; ValueError naming the known ones otherwise."""
    return variant_class(variant)(config)


def variant_class(variant: str) -> type[BatchJob]:
    """The class of ``variant``, or the user's class a spec names (:mod:`.user_variants`);
    ValueError naming the known ones otherwise."""
    return lookup_variant(variant, VARIANTS, BatchJob, "variant")

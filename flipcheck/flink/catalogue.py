"""Which Flink releases shipped each catalogued bug, and which carry its fix.

Every FLINK id the reference implementations, the model, the properties and the mutant gallery
name has one :class:`KnownBug` here. The facts and their evidence are written up in
``docs/reference/fix-versions.md`` (a section or a table row per id; ``KnownBug.source`` names the
page and the id); this module
is the same table as data, for the release matrix that runs real Flink releases.

* ``affected``: the registry releases that shipped the bug, as inclusive spans ``"A..B"`` or single
  releases. Empty when no release on the registry (1.14.0 to 2.3.0, all but 1.14.1) shipped it.
* ``fixed``: the first release carrying the fix on each release line (backports included), oldest
  line first. The fix reaches every later line after the one whose fix is an ``X.Y.0`` release.
* ``variant``: the name the design's variants know the re-creating mutant by (``design`` names the
  design); ``None`` when the id is context only (a feature, an umbrella, a correct alternative).
  ``other_variants`` lists further re-creations as ``"DESIGN/VARIANT"``.
* ``scenario`` / ``not_showable``: how a real MiniCluster job built by flipcheck shows the bug, or
  in one line why it cannot. Exactly one of the two is set.

:func:`expected_verdict` says what the matrix must conclude for one release: ``"flagged"`` for a
release that shipped the bug, ``"conforms"`` for one that carries the fix, ``None`` when the bug
cannot be shown by a real job or the release is in neither set (e.g. a Sink V2 bug on 1.14.x,
which has no Sink V2).

Example
-------
>>> expected_verdict("FLINK-25920", "1.20.0"), expected_verdict("FLINK-25920", "1.20.1")
('flagged', 'conforms')
>>> expected_verdict("FLINK-37605", "2.0.0"), expected_verdict("FLINK-37605", "2.0.1")
('flagged', 'conforms')
>>> expected_verdict("FLINK-37605", "1.14.6") is None  # no Sink V2 before 1.15
True
>>> KNOWN_BUGS["FLINK-22379"].not_showable is not None  # fixed before 1.14.0 shipped
True
>>> release_key("1.20.1") < release_key("2.0.0")
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from flipcheck.flink.releases import KNOWN_RELEASES

__all__ = ["KnownBug", "KNOWN_BUGS", "RELEASES", "expected_verdict", "release_key", "release_line",
           "affected_releases", "fixed_releases"]

Verdict = Literal["flagged", "conforms"]

# Every release of apache-flink-libraries on PyPI the matrix runs: the release list flipcheck
# installs from (1.14.1 was never published).
RELEASES: tuple[str, ...] = KNOWN_RELEASES


def release_key(version: str) -> tuple[int, int, int]:
    """``"1.20.1"`` as ``(1, 20, 1)``, so releases compare in release order.

    >>> sorted(["2.0.0", "1.9.3", "1.20.1", "1.20.0"], key=release_key)
    ['1.9.3', '1.20.0', '1.20.1', '2.0.0']
    """
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a release version MAJOR.MINOR.PATCH: {version!r}")
    major, minor, patch = (int(p) for p in parts)
    return major, minor, patch


def release_line(version: str) -> tuple[int, int]:
    """The release line (major, minor) of a version: ``"1.20.2"`` is on line ``(1, 20)``."""
    return release_key(version)[:2]


@dataclass(frozen=True)
class KnownBug:
    """One catalogued Flink bug: the releases that shipped it, the fix, and how a real job shows it."""

    id: str
    design: str                  # the flipcheck design (suite) whose variants re-create it
    title: str                   # our words
    affected: tuple[str, ...]    # "A..B" inclusive spans or single releases, registry releases only
    fixed: tuple[str, ...]       # first fixed release per line, oldest line first; () = no release
    variant: str | None          # the re-creating variant's name within ``design``
    scenario: str | None         # how a real flipcheck job shows it (buggy vs fixed)
    not_showable: str | None     # why a real job cannot show it (one line)
    evidence: str                # PRs, release notes, bytecode checks
    confidence: str              # "pr-dates" | "bytecode" | "pr-dates+bytecode" | "pr-dates+bytecode+run"
    source: str                  # the section of docs/reference/fix-versions.md
    other_variants: tuple[str, ...] = ()  # further variants re-creating it, "DESIGN/VARIANT"

    def __post_init__(self) -> None:
        if (self.scenario is None) == (self.not_showable is None):
            raise ValueError(f"{self.id}: exactly one of scenario and not_showable must be set")
        for span in self.affected:
            first, _, last = span.partition("..")
            if release_key(first) > release_key(last or first):
                raise ValueError(f"{self.id}: empty span {span!r}")
        lines = [release_line(v) for v in self.fixed]
        if lines != sorted(set(lines)):
            raise ValueError(f"{self.id}: fixed releases must be one per line, oldest first")


def _in_span(version: str, span: str) -> bool:
    first, _, last = span.partition("..")
    return release_key(first) <= release_key(version) <= release_key(last or first)


def _carries_fix(bug: KnownBug, version: str) -> bool:
    by_line = {release_line(v): v for v in bug.fixed}
    line = release_line(version)
    if line in by_line:
        return release_key(version) >= release_key(by_line[line])
    mainline = [release_line(v) for v in bug.fixed if release_key(v)[2] == 0]
    return bool(mainline) and line > min(mainline)


def expected_verdict(bug_id: str, release: str) -> Verdict | None:
    """What the release matrix must conclude for ``release`` on the bug's scenario.

    ``"flagged"`` when the release shipped the bug, ``"conforms"`` when it carries the fix, ``None``
    when the bug cannot be shown by a real job or the release is in neither set.
    """
    bug = KNOWN_BUGS[bug_id]
    if bug.not_showable is not None:
        return None
    if any(_in_span(release, span) for span in bug.affected):
        return "flagged"
    if _carries_fix(bug, release):
        return "conforms"
    return None


def affected_releases(bug_id: str) -> tuple[str, ...]:
    """The registry releases (:data:`RELEASES`) that shipped the bug."""
    bug = KNOWN_BUGS[bug_id]
    return tuple(v for v in RELEASES if any(_in_span(v, span) for span in bug.affected))


def fixed_releases(bug_id: str) -> tuple[str, ...]:
    """The registry releases (:data:`RELEASES`) that carry the fix."""
    bug = KNOWN_BUGS[bug_id]
    return tuple(v for v in RELEASES if _carries_fix(bug, v))


# -- the catalogue ---------------------------------------------------------------------------------

_DOC = "docs/reference/fix-versions.md"
_PRE_114 = "fixed before 1.14.0 shipped: no registry release (1.14.0 or later) has the bug"


def _pre(bug_id: str, design: str, title: str, fixed: tuple[str, ...], variant: str | None, evidence: str,
         confidence: str = "pr-dates", other_variants: tuple[str, ...] = ()) -> KnownBug:
    """A bug fixed before 1.14.0 shipped: no registry release has it, so no real job can show it."""
    return KnownBug(bug_id, design, title, (), fixed, variant, None, _PRE_114, evidence, confidence,
                    f"{_DOC}, {bug_id}", other_variants)


_SCENARIO_25920 = (
    "Job: source (FLIP-27, p=1, 1000 records, no delay, so it ends before the first checkpoint) -> tripwire "
    "(pass-through, own task, p=1) -> sink_v2 (p=1, writer and committer chained); aligned; FLIP-147 on; "
    "checkpoints every 100 ms; full failover; fixed-delay restarts, 3 attempts, 100 ms apart. Builder "
    "extension, one failure after end of input: once per run (a JVM-wide flag like FailPoint's) the tripwire "
    "throws from notifyCheckpointComplete(c) for the first checkpoint c it snapshotted after its endInput "
    "(c is complete and the sink's committer state in c holds the end-of-input summary; the same works from "
    "the source reader after END_OF_INPUT). With a per-record delay the source must also end while no "
    "checkpoint is pending (see the doc). Buggy releases: every restore from c replays end of input, the "
    "writer emits a second end-of-input summary, the committer throws UnsupportedOperationException naming "
    "FLINK-25920; each attempt fails the same way and the job ends FAILED with that root cause. Fixed "
    "releases: one restart, job FINISHED, every record committed exactly once, no FLINK-25920 in the log. "
    "Run on real releases: FAILED on 1.19.1 and 1.20.0; FINISHED with 1000 records once on 1.19.2, 1.19.3, "
    "1.20.1, 1.20.2, 2.0.0, 2.0.1, 2.3.0."
)

_SCENARIO_37605 = (
    "Job with two pipelines: A = source_a (p=1, 1000 records 5 ms apart) -> sink_v2 (p=1); B = source_b "
    "(p=1, 1200 records 5 ms apart) -> discard (p=1). Aligned; FLIP-147 on; checkpoints every 100 ms, one "
    "at a time; full failover; fixed-delay restarts, 3 attempts. Builder extensions: (a) slow "
    "acknowledgement: discard sleeps 500 ms in snapshotState until the failure below has fired; (b) end of "
    "input right after a checkpoint: source_a, at the first checkpoint k it snapshots at or after its 100th "
    "record, stores k in a JVM-wide field, then emits its remaining records without delay and ends, so the "
    "sink runs endInput while k is still pending; (c) one failure, once per run: discard sleeps 300 ms in "
    "notifyCheckpointComplete(k), then throws (checkpoint k+1 cannot complete before: it needs discard). "
    "Buggy releases: on notifyCheckpointComplete(k) the committer, already past endInput, commits the "
    "end-of-input committable (the records after k's barrier); the restore from k replays them and they are "
    "committed again: job FINISHED, committed output holds source_a's records after k twice, no exception. "
    "Fixed releases: that committable carries id k+1, k's notification leaves it; job FINISHED, every record "
    "exactly once. Run on real releases (records committed of 1000): 1884 on 1.19.2, 1895 on 1.20.0, 1857 "
    "on 1.20.1, 1899 on 2.0.0; 1000 on 1.19.3, 1.20.2, 2.0.1, 2.3.0."
)

_BUGS: tuple[KnownBug, ...] = (
    # -- Sink V2 end of input (FLIP-147 protocol) --------------------------------------------------
    KnownBug(
        "FLINK-25920", "protocol",
        "A Sink V2 writer restored from a checkpoint taken after its endInput runs endInput again; the "
        "committer meets a second end-of-input summary for the same subtask",
        ("1.15.0..1.19.1", "1.20.0"), ("1.19.2", "1.20.1", "2.0.0"),
        "end-input-again-after-restore", _SCENARIO_25920, None,
        "PR #25292 (master, Sep 2024), backports #25627 (release-1.19) and #25619 (release-1.20, Nov 2024). "
        "Bytecode: SinkWriterOperator.endInput has no end-of-input guard state in 1.15.0-1.19.1 and 1.20.0 "
        "and reads field endOfInputState in 1.19.2, 1.20.1, 2.0.0; CheckpointCommittableManagerImpl throws "
        "the FLINK-25920 UnsupportedOperationException for any duplicate summary up to 1.19.1/1.20.0 and "
        "merges end-of-input summaries from 1.19.2/1.20.1/2.0.0. FLINK-37605 later removed endOfInputState "
        "(1.19.3, 1.20.2, 2.0.1, 2.1.0) and made the second endInput harmless by a fresh checkpoint id. "
        "The scenario was run on 1.19.1-1.19.3, 1.20.0-1.20.2, 2.0.0, 2.0.1, 2.3.0 with the predicted outcome.",
        "pr-dates+bytecode+run", f"{_DOC}, FLINK-25920"),
    KnownBug(
        "FLINK-37605", "protocol",
        "Sink V2 end-of-input committables carry the sentinel id Long.MAX_VALUE, so the first checkpoint "
        "completion after endInput commits them even when that checkpoint was taken before end of input",
        ("1.15.0..1.19.2", "1.20.0..1.20.1", "2.0.0"), ("1.19.3", "1.20.2", "2.0.1", "2.1.0"),
        "end-of-input-sentinel-id", _SCENARIO_37605, None,
        "PR #26433 (master, Apr 2025, first in 2.1.0), backports #26456 (release-2.0), #26457 (release-1.20) "
        "and #26458 (release-1.19), all merged Apr 2025. Bytecode of every release 1.14.0-2.3.0: "
        "SinkWriterOperator.endInput emits under the constant 9223372036854775807 up to 1.19.2, 1.20.1, "
        "2.0.0 and under field lastKnownCheckpointId + 1 from 1.19.3, 1.20.2, 2.0.1, 2.1.0; "
        "CommitterOperator commits up to Long.MAX_VALUE once endInput was seen (notifyCheckpointComplete "
        "before FLINK-25920's refactoring, commitAndEmitCheckpoints after it) and only up to the completed "
        "id after the fix. The scenario was run on 1.19.2, 1.19.3, 1.20.0-1.20.2, 2.0.0, 2.0.1, 2.3.0 with the "
        "predicted outcome.",
        "pr-dates+bytecode+run", f"{_DOC}, FLINK-37605"),
    KnownBug(
        "FLINK-24131", "protocol",
        "A sink writer prepared a commit again in the final checkpoint after endInput had already flushed",
        (), ("1.14.0",), "prepare-commit-twice-at-end", None, _PRE_114,
        "Reported and fixed during the 1.14 release cycle (Sep 2021) on the 1.14 SinkOperator; 1.14.0's "
        "SinkOperator skips the pre-barrier commit after end of input (bytecode).",
        "pr-dates+bytecode", f"{_DOC}, FLINK-24131"),
    _pre("FLINK-23473", "protocol",
         "TwoPhaseCommitSinkFunction opened a new transaction in every snapshot after finish(); one dangled",
         ("1.14.0",), "new-transaction-after-finish",
         "PR #16768 (Aug 2021, master before the 1.14 branch cut). FLINK-24065 (PR #17120, 1.14 pick "
         "#17231, Sep 2021) made the empty-transaction state restorable. 1.14.0's TwoPhaseCommitSinkFunction "
         "has the finished flag (bytecode).", "pr-dates+bytecode"),
    _pre("FLINK-24065", "protocol",
         "The state of TwoPhaseCommitSinkFunction could not represent 'no transaction after finish'",
         ("1.14.0",), None,
         "PR #17120 and its release-1.14 pick #17231 (Sep 2021); re-created together with FLINK-23473 by "
         "new-transaction-after-finish.", "pr-dates"),
    _pre("FLINK-24161", "protocol",
         "End of data while a stop-with-savepoint without drain was pending waited for a final checkpoint "
         "forever", ("1.14.0",), "stop-without-drain-after-end-of-data",
         "PR #17200 (Sep 2021, release-1.14 cycle); 1.14.0's StreamTask fails a task that runs out of data "
         "while a savepoint without drain is pending (bytecode).", "pr-dates+bytecode"),
    KnownBug(
        "FLINK-32945", "protocol",
        "The JobManager's record of which tasks reached end of data was not reset on failover (stale "
        "VertexEndOfDataListener; NullPointerException on restarted tasks' reports)",
        (), ("1.18.0",), "end-of-data-view-kept-on-failover", None,
        "the bug lived only in pre-release 1.18 code: the listener (FLINK-28386) and its fix both first "
        "shipped in 1.18.0",
        "PR #23268 (master, Aug 2023) and #23315 (Aug 2023); bytecode: VertexEndOfDataListener is absent "
        "in 1.15.0-1.17.x and has restoreVertices from 1.18.0 on, its first release.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-32945"),
    KnownBug(
        "FLINK-28386", "protocol",
        "Feature: trigger a checkpoint at once when every task reached end of data (context for FLINK-32945)",
        (), ("1.18.0",), None, None,
        "a feature, not a defect: no release shipped a wrong behaviour to flag",
        "PR #22670 (2023); bytecode: VertexEndOfDataListener first in 1.18.0.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-28386"),
    _pre("FLINK-21080", "protocol",
         "Union list state of partly finished vertices was silently cut on restore",
         ("1.14.0",), "union-state-partial-finish",
         "PR #16633 (Aug 2021), part of FLIP-147 which first shipped in 1.14.0 (the checks are in "
         "DefaultCheckpointPlan.fulfillFinishedTaskStatus of 1.14.0).", "pr-dates+bytecode"),
    _pre("FLINK-21081", "protocol",
         "A trigger RPC reaching a task that just finished was acknowledged; the final checkpoint could hang",
         ("1.14.0",), "trigger-finished-task-hangs",
         "FLIP-147 work of 2021 (with FLINK-23741), before the 1.14.0 release.", "pr-dates"),
    _pre("FLINK-23741", "protocol",
         "A finishing task did not decline a checkpoint triggered between plan and RPC",
         ("1.14.0",), None,
         "FLIP-147 follow-up, Aug 2021, release-1.14 cycle; re-created by trigger-finished-task-hangs.",
         "pr-dates"),
    _pre("FLINK-21086", "protocol",
         "Without an acknowledged EndOfData an upstream could finish before downstream consumed its records",
         ("1.14.0",), "no-end-of-data-ack",
         "First attempt PR #14831 replaced by PR #15055 (2021); FLIP-147 first shipped in 1.14.0.",
         "pr-dates", ("barriers/insert-barrier-before-eop", "barriers/eop-not-aligned")),
    _pre("FLINK-22368", "protocol",
         "A released input channel stayed queued as available; EndOfPartition never propagated",
         ("1.13.0",), "released-channel-stays-queued", "PR #15716 (Apr 2021).", "pr-dates"),
    _pre("FLINK-23512", "protocol",
         "Restore check that all operators of a vertex share one finished state (VertexFinishedStateChecker)",
         ("1.14.0",), None, "FLIP-147 work, Jul-Aug 2021; property only, no mutant.", "pr-dates"),
    _pre("FLINK-17467", "protocol",
         "Savepoints are always aligned (context for the model's stop-with-savepoint restriction)",
         ("1.11.0",), None, "Unaligned checkpoint work of 2020 (FLIP-76); cited as context only.", "pr-dates"),
    # -- checkpoint plan -----------------------------------------------------------------------------
    KnownBug(
        "FLINK-40482", "plan",
        "The plan calculator treated FAILED and CANCELED tasks as finished (Execution.isFinished is "
        "'terminal') and dropped them from the tasks to wait for",
        ("1.14.0..2.3.0",), (), "flink-before-40482", None,
        "needs a trigger that lands while some task is FAILED/CANCELED during a region failover; the "
        "builder uses the full failover strategy (the coordinator stops while the job restarts) and "
        "cannot force that race, and PendingCheckpoint's empty-wait check masks the worst case",
        "PR #29031 (2026); bytecode: DefaultCheckpointPlanCalculator calls Execution.isFinished and has no "
        "check for FAILED/CANCELED tasks in every release 1.14.0 to 2.3.0; no release carries the fix yet.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-40482"),
    _pre("FLINK-22379", "plan",
         "The started-check looked at tasks to trigger only; a waited-for non-RUNNING task let the "
         "checkpoint start and expire", ("1.13.0",), "flink-before-22379", "Fixed in April 2021.", "pr-dates"),
    _pre("FLINK-22003", "plan",
         "The trigger check rejected only CREATED/SCHEDULED/DEPLOYING; INITIALIZING or CANCELING sources "
         "could be triggered", ("1.13.0",), "flink-before-22003",
         "PR #15466 (Apr 2021); 1.14.0's DefaultCheckpointPlanCalculator.checkTasksStarted aborts every "
         "task not RUNNING (bytecode).", "pr-dates+bytecode"),
    _pre("FLINK-22863", "plan",
         "Float Math.ceil in the first POINTWISE wiring gave wrong ranges for large parallelism",
         ("1.13.2",), "flink-before-22863",
         "PR #16071 (Jun 2021); 1.14.0's EdgeManagerBuildUtil has no float arithmetic (bytecode).",
         "pr-dates+bytecode"),
    # -- barriers ----------------------------------------------------------------------------------
    _pre("FLINK-23771", "barriers",
         "The all-barriers future never completed for an RPC-triggered unaligned checkpoint on a task "
         "whose channels had all ended", ("1.14.0",), "no-complete-when-all-ended",
         "PR #16827 (Aug 2021, release-1.14 cycle); 1.14.0's SingleCheckpointBarrierHandler."
         "getAllBarriersReceivedFuture returns a completed future when no channel is open (bytecode).",
         "pr-dates+bytecode"),
    _pre("FLINK-24068", "barriers",
         "Alignment start was not recorded when an EndOfPartition was the first aligned channel after an "
         "announcement", ("1.14.0",), "announcement-eop-no-alignment-start",
         "PR #17131 (Sep 2021, release-1.14 cycle).", "pr-dates"),
    _pre("FLINK-22638", "barriers",
         "Channels already blocked stay blocked when an aligned checkpoint times out to unaligned",
         ("1.13.1",), None, "Alternating barrier handler fix of May 2021; cited as context only.", "pr-dates"),
    # -- FLIP-27 split assignment -------------------------------------------------------------------
    _pre("FLINK-18641", "split-assignment",
         "Source tasks were triggered before the coordinators' checkpoints completed",
         ("1.11.2",), "tasks-before-coordinator", "Fixed in 2020 (1.11.x / 1.12.0).", "pr-dates"),
    _pre("FLINK-20290", "split-assignment",
         "Umbrella: splits duplicated after failover (fixed by FLINK-20396 and FLINK-20413)",
         ("1.12.0",), None, "Umbrella ticket of Nov 2020; re-created through reset-returns-all-epochs.",
         "pr-dates"),
    _pre("FLINK-20396", "split-assignment",
         "Splits went back to the enumerator when an attempt failed, not per restored checkpoint",
         ("1.12.0",), "return-splits-on-failure", "Fixed in Nov-Dec 2020 (subtaskReset).", "pr-dates"),
    _pre("FLINK-20413", "split-assignment",
         "On reset the tracker returned the splits of every epoch, not only those after the restored one",
         ("1.12.0",), "reset-returns-all-epochs", "Fixed in Nov-Dec 2020.", "pr-dates"),
    _pre("FLINK-21996", "split-assignment",
         "A lost operator-event RPC was not noticed; a checkpoint completed without the event",
         ("1.13.0",), "checkpoint-ignores-event-futures", "PRs #15557/#15601 and follow-ups (Apr 2021).",
         "pr-dates"),
    _pre("FLINK-23233", "split-assignment",
         "A checkpoint was confirmed before failed operator events were processed",
         ("1.14.0",), None, "Fixed in Jul 2021; re-created with FLINK-21996 by checkpoint-ignores-event-futures.",
         "pr-dates"),
    KnownBug(
        "FLINK-28606", "split-assignment",
        "Per-subtask operator-event gateways replaced the OperatorEventValve (a redesign, not a defect)",
        (), ("1.16.0",), None, None,
        "a redesign: the older valve is modelled as a correct alternative, so no release is flagged",
        "PR #20275 (Jul 2022); bytecode: OperatorEventValve in 1.15.0, SubtaskGatewayImpl with "
        "tryCloseGateway/openGatewayAndUnmarkCheckpoint from 1.16.0.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-28606"),
    # -- task-local recovery ------------------------------------------------------------------------
    _pre("FLINK-8777", "local-recovery",
         "Local state of other checkpoints was not pruned on restore", ("1.5.0",), "flink-before-8777",
         "Fixed with the local recovery work of 2018.", "pr-dates"),
    _pre("FLINK-9635", "local-recovery",
         "A recovering task could take another recovering task's previous slot", ("1.7.0",),
         "flink-before-9635", "PR #6961 (Oct-Nov 2018).", "pr-dates"),
    _pre("FLINK-19142", "local-recovery",
         "Restarted regions could take the previous slots of other failed regions (slot hijacking)",
         ("1.13.0",), "location-preference-only", "PR #15229 (Mar 2021).", "pr-dates"),
    KnownBug(
        "FLINK-27222", "local-recovery",
        "The previous allocation was read from the bounded execution history and lost in fast restart loops",
        ("1.14.0..1.14.6",), ("1.15.0",), None, None,
        "needs a restart loop longer than the execution history (jobmanager.execution.attempts-history-size, "
        "16 by default); flink run --local-recovery loses a TaskManager once, with 3 restarts",
        "PR #19469 (Apr 2022); bytecode: ExecutionVertex has no last-assigned allocation in 1.14.0-1.14.6 "
        "and keeps it from 1.15.0 on.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-27222"),
    KnownBug(
        "FLINK-28515", "local-recovery",
        "Aborting a checkpoint that was never stored locally left its local directory behind",
        ("1.14.0..2.3.0",), (), "flink-before-28515", None,
        "component-level (files left in the TaskManager's local recovery directory): the logs show a "
        "directory's deletion, never one left behind, so a run of flink run --local-recovery cannot show it",
        "PR #20249 was closed unmerged (stale); bytecode: TaskLocalStateStoreImpl.abortCheckpoint only prunes "
        "registered ids in every release 1.14.0 to 2.3.0, so the clean-up the reference implementation "
        "follows is in no release.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-28515"),
    KnownBug(
        "FLINK-33341", "local-recovery",
        "Keyed state used a local copy only when it matched the primary handle one to one; partial local "
        "copies (e.g. after rescaling) were never used",
        ("1.14.0..1.18.1",), ("1.19.0",), "flink-before-33341", None,
        "needs rescaling from a checkpoint with local recovery enabled; flink run --local-recovery restores "
        "at the same parallelism",
        "PR #23591 (Oct-Nov 2023, first in 1.19.0); bytecode: PrioritizedOperatorSubtaskState$Builder has "
        "tryComputeMixedLocalAndRemoteAlternative from 1.19.0 on, not in 1.14.0-1.18.1.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-33341"),
    # -- approximate recovery (FLIP-135) --------------------------------------------------------------
    _pre("FLINK-19547", "approximate-recovery",
         "Buffers did not record how many leading bytes continue an earlier record", ("1.12.0",),
         "flink-before-19547", "FLIP-135 milestone one, 2020.", "pr-dates"),
    _pre("FLINK-19632", "approximate-recovery",
         "Introduces the PIPELINED_APPROXIMATE partition type (context)", ("1.12.0",), None,
         "FLIP-135 milestone one, 2020.", "pr-dates"),
    _pre("FLINK-19693", "approximate-recovery",
         "Downstream failover for approximate recovery", ("1.12.0",), "flink-before-19693",
         "FLIP-135 milestone one, 2020.", "pr-dates"),
    KnownBug(
        "FLINK-28701", "approximate-recovery",
        "The region failover strategy's availability check did not accept PIPELINED_APPROXIMATE partitions",
        (), ("1.16.0",), "flink-before-28701", None,
        "approximate recovery cannot run on any registry release: the switch is rejected together with the "
        "pipelined-region scheduler",
        "Bytecode: RegionFailoverResultPartitionAvailabilityChecker tests isReconsumable and accepts "
        "PIPELINED_APPROXIMATE explicitly from 1.16.0; 1.14.x-1.15.x only ask the JobMaster's tracker, so "
        "the re-consumable-only check the variant re-creates never shipped. See recovery facts §1.1 for "
        "why the feature cannot run.",
        "bytecode", f"{_DOC}, FLINK-28701"),
    # -- batch recovery (FLIP-383) ------------------------------------------------------------------
    KnownBug(
        "FLINK-33892", "batch-recovery",
        "FLIP-383: the new JobMaster fetches the partitions TaskManagers retained and tracks them",
        (), ("1.20.0",), "reported-partitions-not-tracked", None,
        "part of the feature itself: batch job recovery first shipped with it (1.20.0), so no release runs the "
        "recovery without it (flink run --batch shows the shipped behaviour, docs/batch-recovery.md)",
        "Part of FLIP-383, first shipped in 1.20.0; bytecode: PartitionWithMetrics classes first in 1.20.0.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-33892"),
    KnownBug(
        "FLINK-33984", "batch-recovery",
        "FLIP-383: operator coordinators take and restore batch snapshots (SupportsBatchSnapshot)",
        (), ("1.20.0",), "restore-coordinator-without-snapshot", None,
        "part of the feature itself: batch job recovery first shipped with it (1.20.0), so no release runs the "
        "recovery without it (flink run --batch shows the shipped behaviour, docs/batch-recovery.md)",
        "Part of FLIP-383; bytecode: SupportsBatchSnapshot first in 1.20.0.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-33984"),
    KnownBug(
        "FLINK-35465", "batch-recovery",
        "FLIP-383: the BatchJobRecoveryHandler (context)",
        (), ("1.20.0",), None, None,
        "part of the feature itself: batch job recovery first shipped with it (1.20.0), so no release runs the "
        "recovery without it (flink run --batch shows the shipped behaviour, docs/batch-recovery.md)",
        "Part of FLIP-383; bytecode: BatchJobRecoveryHandler first in 1.20.0.",
        "pr-dates+bytecode", f"{_DOC}, FLINK-35465"),
)

KNOWN_BUGS: dict[str, KnownBug] = {bug.id: bug for bug in _BUGS}

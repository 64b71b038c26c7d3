"""End-to-end properties of the whole job (FLIP-147), each a plain function returning violations.

Three shapes, all over the model of :mod:`flipcheck.model.protocol`:

* **step properties** ``(job, before, label, notes, after) -> list[Violation]``: judged on one
  step; they look only at the notes they *watch* (e.g. ``completed``, ``finished``), so the
  explorer calls them only on such steps;
* **state properties** ``(job, state) -> list[Violation]``;
* **graph properties** (no deadlock, the end stays reachable, a checkpoint can complete after
  an abort): judged on the whole reachable graph by :mod:`flipcheck.properties.protocol_explore`;
  :func:`no_deadlock` also works on one state.

:func:`check_trace` runs every step and state property along a trace (random walks, hypothesis).

The registry :data:`JOB_PROPERTIES` names each property with its meaning and the seed sentence
or Flink fact it comes from.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state, run
>>> job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> steps = [("emit", 0, 0), ("end-of-data", 0), ("receive", 1, 0, ("D", 0)), ("receive", 1, 0, ("EOD",))]
>>> check_trace(job, steps)
[]
>>> sorted(JOB_PROPERTIES)[:3]
['aborted_never_completes', 'checkpoint_after_abort_can_complete', 'completed_ids_increase']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from flipcheck.model.barriers import AT_LEAST_ONCE
from flipcheck.model.protocol import (
    DATA, END_OF_DATA, EOI, FINISHED, PHASE_NAMES, RUNNING, Job, JobState, initial_state, is_end, successors,
)
from flipcheck.model.jobgraph import ALL_TO_ALL

from .violation import Property, Violation

__all__ = [
    "consistent_cut", "exactly_once", "final_checkpoint_before_finish", "no_pending_checkpoint_cancelled",
    "completed_ids_increase", "aborted_never_completes", "restorable", "union_list_state_complete",
    "end_of_data_trigger_current", "no_dangling_transaction", "one_committable_summary_per_checkpoint",
    "no_deadlock", "StepProperty", "STEP_PROPERTIES", "STATE_PROPERTIES", "GRAPH_PROPERTIES", "JOB_PROPERTIES",
    "NO_DEADLOCK", "END_REACHABLE", "AFTER_ABORT", "check_step", "check_state", "check_trace",
]

NO_DEADLOCK = "no_deadlock"
END_REACHABLE = "end_stays_reachable"
AFTER_ABORT = "checkpoint_after_abort_can_complete"


def _completed(notes) -> list:
    return [note for note in notes if note[0] == "completed"]


# ----------------------------------------------------------------------------------------------
# Step properties


def consistent_cut(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """In a completed checkpoint, for every channel: the records the upstream had sent before its
    snapshot equal the records the downstream had consumed before its snapshot plus the
    in-flight records captured for that channel, by the downstream (input) and by the upstream
    (output: records its unaligned barrier overtook) (at-least-once: no fewer). An upstream
    finished in the checkpoint counts with everything it sent. A task the checkpoint neither
    holds as finished nor has a snapshot of leaves a hole in the cut (a plan that waits for too
    few tasks, say): a violation too."""
    found = []
    for _, k, finished, snapshots in _completed(notes):
        holes = 0
        for t in range(len(job.tasks)):
            if not finished >> t & 1 and snapshots[t] is None:
                holes |= 1 << t
                found.append(Violation("consistent_cut", (
                    f"checkpoint {k} completed without a snapshot of {job.name(t)}, which it does not hold as "
                    f"finished: the cut has no state for that task"), witness=(k, -1 - t)))
        for ch in job.channels:
            if finished >> ch.target & 1 or (holes >> ch.target | holes >> ch.source) & 1:
                continue
            down = snapshots[ch.target]
            if finished >> ch.source & 1:
                sent = after.received[ch.index] + sum(1 for m in after.queues[ch.index] if m[0] == DATA)
                how = "finished, so everything it sent"
                output = 0
            else:
                sent = snapshots[ch.source].sent[ch.position]
                how = "its snapshot"
                output = len(snapshots[ch.source].output_in_flight[ch.position])
            consumed = down.received[ch.local] + len(down.in_flight[ch.local]) + output
            ok = consumed >= sent if job.mode == AT_LEAST_ONCE else consumed == sent
            if not ok:
                found.append(Violation("consistent_cut", (
                    f"checkpoint {k}, channel {job.name(ch.source)} -> {job.name(ch.target)}: upstream sent {sent} "
                    f"record(s) before the cut ({how}) and captured {output} as output in flight, downstream "
                    f"consumed {down.received[ch.local]} and captured {len(down.in_flight[ch.local])} in flight"),
                    witness=(k, ch.index)))
    return found


def final_checkpoint_before_finish(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """No task finishes before its final checkpoint (the first one it performed after end of
    data) completed (flip147 facts §3.1; seed: a two-phase-commit sink "requires one successful
    checkpoint before finish")."""
    found = []
    for note in notes:
        if note[0] != "finished":
            continue
        t = note[1]
        ts = before.tasks[t]
        if ts.phase != END_OF_DATA:
            continue  # stopped by a savepoint without drain (J9): no end of data, no final checkpoint
        if not ts.final_min:
            found.append(Violation("final_checkpoint_before_finish",
                                   f"{job.name(t)} finished without performing a checkpoint after its end of data",
                                   witness=t))
        elif before.coordinator.completed < ts.final_min:
            found.append(Violation("final_checkpoint_before_finish",
                                   f"{job.name(t)} finished before its final checkpoint {ts.final_min} completed",
                                   witness=t))
    return found


def no_pending_checkpoint_cancelled(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """Finishing never cancels a checkpoint the task is still taking part in (seed "Do Not
    Cancel Pending Checkpoint on Finish")."""
    return [Violation("no_pending_checkpoint_cancelled",
                      f"{job.name(note[1])} finished and cancelled its pending checkpoint(s) "
                      f"{', '.join(map(str, note[2]))}", witness=note[1])
            for note in notes if note[0] == "cancelled"]


def completed_ids_increase(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """Checkpoint ids complete in increasing order."""
    return [Violation("completed_ids_increase", f"checkpoint {note[1]} completed after checkpoint "
                      f"{before.coordinator.completed}", witness=note[1])
            for note in _completed(notes) if note[1] <= before.coordinator.completed]


def aborted_never_completes(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """A declined or aborted checkpoint never completes (ids only grow, so completing ``k``
    requires ``k`` newer than every aborted id)."""
    return [Violation("aborted_never_completes", f"checkpoint {note[1]} completed although checkpoint "
                      f"{before.coordinator.last_aborted} was aborted", witness=note[1])
            for note in _completed(notes) if note[1] <= before.coordinator.last_aborted]


def _vertex_status(job: Job, finished: int, vertex: str) -> str:
    tasks = job.vertex_tasks(vertex)
    count = sum(finished >> t & 1 for t in tasks)
    return "FULLY_FINISHED" if count == len(tasks) else "PARTIALLY_FINISHED" if count else "ALL_RUNNING"


def restorable(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """Every completed checkpoint passes Flink's restore check (flip147 facts §3.2
    VertexFinishedStateChecker): predecessors of a fully finished vertex are fully finished;
    predecessors of a partly finished vertex are fully finished via ALL_TO_ALL and not all
    running via POINTWISE (ALL_TO_ALL wins when both connect the same pair)."""
    found = []
    graph = job.graph
    for _, k, finished, _ in _completed(notes):
        for vertex in graph.topological_order:
            status = _vertex_status(job, finished, vertex)
            if status == "ALL_RUNNING":
                continue
            patterns: dict[str, str] = {}
            for edge in graph.inputs(vertex):
                if patterns.get(edge.source) != ALL_TO_ALL:
                    patterns[edge.source] = edge.pattern
            for upstream, pattern in patterns.items():
                up = _vertex_status(job, finished, upstream)
                bad = (up != "FULLY_FINISHED") if status == "FULLY_FINISHED" or pattern == ALL_TO_ALL else up == "ALL_RUNNING"
                if bad:
                    found.append(Violation("restorable", f"checkpoint {k}: {vertex} is {status} but its "
                                           f"{pattern} predecessor {upstream} is {up}", witness=(k, vertex)))
    return found


def union_list_state_complete(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """Union list state loses nothing: a completed checkpoint never holds a vertex with union list
    state only partly finished, whose finished subtasks reported no entries (FLINK-21080)."""
    found = []
    for _, k, finished, _ in _completed(notes):
        for vertex in job.graph.topological_order:
            tasks = job.vertex_tasks(vertex)
            if job.tasks[tasks[0]].union_list_state and _vertex_status(job, finished, vertex) == "PARTIALLY_FINISHED":
                lost = [job.name(t) for t in tasks if finished >> t & 1]
                found.append(Violation("union_list_state_complete", f"checkpoint {k} completed with {vertex} partly "
                                       f"finished: the union list state entries of {', '.join(lost)} are lost on restore",
                                       witness=(k, vertex)))
    return found


def end_of_data_trigger_current(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """The coordinator triggers a checkpoint believing every task reached end of data (the
    immediate checkpoint of FLINK-28386) only when every current attempt did: its end-of-data view
    never outlives a restart (FLINK-32945)."""
    found = []
    for note in notes:
        if note[0] != "end-of-data-trigger":
            continue
        running = [job.name(t) for t, ts in enumerate(before.tasks) if ts.phase == RUNNING]
        if running:
            found.append(Violation("end_of_data_trigger_current", "the coordinator triggered believing every task "
                                   f"reached end of data, but the current attempt of {', '.join(running)} has not",
                                   witness=tuple(running)))
    return found


def one_committable_summary_per_checkpoint(job: Job, before: JobState, label, notes, after: JobState) -> list[Violation]:
    """A Sink V2 committer receives at most one committable summary per writer subtask and
    checkpoint id (end of input included): a second one while it still holds the first is what
    ``CheckpointCommittableManagerImpl.addSummary`` rejects ("Received duplicate committable
    summary"), where merged, the same data committed twice."""
    found = []
    for note in notes:
        if note[0] != "committable":
            continue
        t, k = note[1], note[2]
        ts = before.tasks[t]
        if any(held == k for held, _ in ts.precommitted + ts.recovered):
            found.append(Violation("one_committable_summary_per_checkpoint", (
                f"{job.name(t)} sent a second committable summary for checkpoint "
                f"{'EOI' if k == EOI else k} while its committer still holds the first"), witness=(t, k)))
    return found


# ----------------------------------------------------------------------------------------------
# State properties


def exactly_once(job: Job, state: JobState) -> list[Violation]:
    """When the job ends (with or without failovers), every two-phase-commit sink vertex has
    committed every source record exactly once per job-graph path from its source (at-least-once
    mode: at least once); a job stopped with a savepoint without drain, at most once (the rest
    resumes from the savepoint)."""
    if not is_end(job, state):
        return []
    stopped = state.coordinator.stopped
    found = []
    sink_vertices = [v for v in job.graph.topological_order if job.tasks[job.vertex_tasks(v)[0]].two_phase_commit]
    for vertex in sink_vertices:
        counts: dict[int, int] = {}
        for t in job.vertex_tasks(vertex):
            for _, records in state.committed[t]:
                for r in records:
                    counts[r] = counts.get(r, 0) + 1
        for r, source in sorted(job.record_source.items()):
            expected = job.paths.get((job.tasks[source].vertex, vertex), 0)
            got = counts.get(r, 0)
            ok = got <= expected if stopped else got >= expected if job.mode == AT_LEAST_ONCE else got == expected
            if not ok:
                found.append(Violation("exactly_once", f"{vertex} committed record r{r} (from {job.name(source)}) "
                                       f"{got} time(s), expected {expected}", witness=(vertex, r)))
    return found


def no_dangling_transaction(job: Job, state: JobState) -> list[Violation]:
    """When the job ends, no two-phase-commit sink left a transaction pending: every transaction
    a sink began was committed or aborted (an open one blocks ``read_committed`` readers of a
    Kafka topic; flip147 facts §5 FLINK-23473)."""
    if not is_end(job, state):
        return []
    return [Violation("no_dangling_transaction", f"{job.name(t)} finished leaving {len(ts.precommitted)} "
                      f"pre-committed transaction(s) that are never committed (a finished task is not notified)",
                      witness=t)
            for t, ts in enumerate(state.tasks) if ts.precommitted]


def no_deadlock(job: Job, state: JobState) -> list[Violation]:
    """Every state that is not the end of the job has a step."""
    if is_end(job, state) or next(iter(successors(job, state)), None) is not None:
        return []
    waiting = [f"{job.name(t)} ({PHASE_NAMES[ts.phase]})"
               for t, ts in enumerate(state.tasks) if ts.phase != FINISHED]
    pending = state.coordinator.pending
    return [Violation(NO_DEADLOCK, "no step is possible; still not finished: " + ", ".join(waiting)
                      + (f"; checkpoint {pending.id} waits for "
                         + ", ".join(job.name(t) for t in range(len(job.tasks))
                                     if pending.wait >> t & 1 and not pending.acked >> t & 1)
                         if pending is not None else ""))]


# ----------------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class StepProperty:
    property: Property
    watch: frozenset   # note kinds the property looks at


def _p(check, source) -> Property:
    doc = " ".join((check.__doc__ or "").split())
    return Property(check.__name__, check, doc, source)


STEP_PROPERTIES: tuple[StepProperty, ...] = (
    StepProperty(_p(consistent_cut, "seed \"Extend the task Barrier Alignment\"; flip147 facts §2.5 (upstream waits "
                    "until downstream processed all records)"), frozenset({"completed"})),
    StepProperty(_p(final_checkpoint_before_finish, "flip147 facts §3.1 afterInvoke / finalCheckpointMinId; seed two-phase "
                    "commit sink deadlock argument"), frozenset({"finished"})),
    StepProperty(_p(no_pending_checkpoint_cancelled, "seed \"Do Not Cancel Pending Checkpoint on Finish\""),
                 frozenset({"cancelled"})),
    StepProperty(_p(completed_ids_increase, "flip147 facts §2.4 (CHECKPOINT_SUBSUMED: newer completes, older subsumed)"),
                 frozenset({"completed"})),
    StepProperty(_p(aborted_never_completes, "flip147 facts §2.4, §3.2 (a declined checkpoint is aborted)"),
                 frozenset({"completed"})),
    StepProperty(_p(restorable, "flip147 facts §3.2 VertexFinishedStateChecker (FLINK-23512)"), frozenset({"completed"})),
    StepProperty(_p(union_list_state_complete, "flip147 facts §3.2, FLINK-21080"), frozenset({"completed"})),
    StepProperty(_p(end_of_data_trigger_current, "flip147 facts §3.1 SchedulerBase.notifyEndOfData (FLINK-28386), §5 "
                    "FLINK-32945: \"assert the immediate-checkpoint trigger fires only when all current attempts "
                    "reached EOD\""), frozenset({"end-of-data-trigger"})),
    StepProperty(_p(one_committable_summary_per_checkpoint, "flip147 facts §5 FLINK-24131 / FLINK-25920: \"assert "
                    "committables emitted once\"; FLINK-37605 row; CheckpointCommittableManagerImpl.addSummary"),
                 frozenset({"committable"})),
)
STATE_PROPERTIES: tuple[Property, ...] = (
    _p(exactly_once, "seed two-phase commit sink: \"requires one successful checkpoint before finish\""),
    _p(no_dangling_transaction, "flip147 facts §5 FLINK-23473 / FLINK-24065: \"after finish(), checkpoints must not open "
       "new txns; final cp commits the last txn exactly once\""),
)


def _graph_property(name, meaning, source) -> Property:
    def check(*_):
        raise TypeError(f"{name} is judged on the whole state graph (flipcheck.properties.protocol_explore)")
    return Property(name, check, meaning, source)


GRAPH_PROPERTIES: tuple[Property, ...] = (
    Property(NO_DEADLOCK, no_deadlock, "Every reachable state that is not the end of the job has a step.",
             "seed: waiting for a two-phase-commit sink's checkpoint \"will cause deadlock\""),
    _graph_property(END_REACHABLE, "From every reachable state the end of the job (every task FINISHED) stays "
                    "reachable; a violation is shown as a lasso: a path into a cycle that never ends the job.",
                    "seed Figure 1: \"Task C would have no idea about the new checkpoint\""),
    _graph_property(AFTER_ABORT, "After a checkpoint is declined or aborted, a newer checkpoint can still "
                    "complete (or the job can end).", "flip147 facts §5 FLINK-21081/23741: \"assert checkpoint is aborted "
                    "(not hanging) and next one succeeds\""),
)
JOB_PROPERTIES: dict[str, Property] = {
    p.name: p for p in (*(s.property for s in STEP_PROPERTIES), *STATE_PROPERTIES, *GRAPH_PROPERTIES)}
JOB_PROPERTIES = dict(sorted(JOB_PROPERTIES.items()))


def check_step(job: Job, before: JobState, label, notes: Sequence, after: JobState,
               properties: Sequence[StepProperty] = STEP_PROPERTIES) -> list[Violation]:
    """Every step property watching one of ``notes``' kinds."""
    if not notes:
        return []
    kinds = {note[0] for note in notes}
    found = []
    for prop in properties:
        if prop.watch & kinds:
            found += prop.property.check(job, before, label, notes, after)
    return found


def check_state(job: Job, state: JobState, properties: Sequence[Property] = STATE_PROPERTIES) -> list[Violation]:
    found = []
    for prop in properties:
        found += prop.check(job, state)
    return found


def check_trace(job: Job, labels: Sequence[tuple], state: JobState | None = None) -> list[Violation]:
    """Take the steps ``labels`` from ``state`` (default: the initial state) and return every
    step/state violation on the way, and a deadlock at the end (ValueError if a step is not enabled)."""
    state = initial_state(job) if state is None else state
    found = check_state(job, state)
    for label in labels:
        for candidate, nxt, notes in successors(job, state):
            if candidate == label:
                found += check_step(job, state, label, notes, nxt)
                state = nxt
                found += check_state(job, state)
                break
        else:
            raise ValueError(f"step {label!r} is not enabled")
    return found + no_deadlock(job, state)

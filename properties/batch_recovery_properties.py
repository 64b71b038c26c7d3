"""Properties of batch job recovery after a JobManager failover (seed 004, FLIP-383; recovery facts §4.6 invariants).

Every property is a plain function of one step, ``(config, action, before, after) ->
list[Violation]``, where ``before`` and ``after`` are
:class:`~flipcheck.model.batch_recovery.State` s — what an observer sees of the JM, the event
file and the TaskManagers, the same for the specification and for any implementation. The
initial state is checked with ``action=None`` and ``before=None``. :func:`check_step` runs them
all. That the job always still completes is checked by the exploration
(:mod:`flipcheck.properties.batch_recovery_explore`, ``job_completes``).

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.batch_recovery import Config, run
>>> cfg = Config(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]))
>>> before = run(cfg, [("start", 0), ("assign", 0), ("finish", 0), ("flush",), ("crash",), ("restart",)])
>>> after = run(cfg, [("reconcile",)], before)      # nothing reported: the source reruns
>>> check_step(cfg, ("reconcile",), before, after)
[]
>>> bad = after._replace(status=("FINISHED", "CREATED"))   # as if the source's missing partition were ignored
>>> [v.property for v in check_step(cfg, ("reconcile",), before, bad)]
['no_missing_input_after_recovery']
"""

from __future__ import annotations

from collections import Counter

from flipcheck.model.batch_recovery import (
    CREATED, FINISHED, FINISHED_EVENT, Config, State, failure_free_result, result, snapshot_due, topology,
)

from .refinement import REFINEMENT
from .violation import Property, Violation

__all__ = [
    "every_vertex_created_or_finished", "finished_only_if_durable", "no_missing_input_after_recovery",
    "unfinished_partitions_released", "needed_partitions_kept", "coordinator_matches_tasks",
    "result_equals_failure_free_run", "snapshot_cadence", "no_events_while_reconciling",
    "failed_recovery_fails_over_once", "BATCH_PROPERTIES", "PROPERTY_NAMES", "LIVENESS", "REFINEMENT",
    "check_step", "task_name",
]

LIVENESS = "job_completes"


def task_name(config: Config, t: int) -> str:
    vertex, subtask = topology(config).tasks[t]
    return f"{vertex}#{subtask}"


def _names(config: Config, tasks) -> str:
    return ", ".join(task_name(config, t) for t in sorted(tasks))


def _recovered(action, before: State | None) -> bool:
    return action is not None and action[0] == "reconcile" and before is not None


def every_vertex_created_or_finished(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """When recovery finishes, every task is CREATED or FINISHED."""
    if not _recovered(action, before):
        return []
    odd = [t for t, s in enumerate(after.status) if s not in (CREATED, FINISHED)]
    if not odd:
        return []
    return [Violation("every_vertex_created_or_finished",
                      f"after recovery {_names(config, odd)} {'is' if len(odd) == 1 else 'are'} "
                      f"{', '.join(after.status[t] for t in odd)}", odd)]


def finished_only_if_durable(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """A task restored as FINISHED has a flushed finished event, not cancelled by a later reset
    event, at or before an event that carries a coordinator snapshot (read in file order)."""
    if action is None or action[0] != "restart" or after.phase != "reconciling":
        return []
    log = before.log
    bad = []
    for t, s in enumerate(after.status):
        if s != FINISHED:
            continue
        last = max((i for i, e in enumerate(log) if e[0] == FINISHED_EVENT and e[1] == t), default=None)
        durable = last is not None and not any(e[0] != FINISHED_EVENT and t in e[1] for e in log[last:]) and any(
            e[0] == FINISHED_EVENT and e[2] is not None for e in log[last:])
        if not durable:
            bad.append(t)
    if not bad:
        return []
    return [Violation("finished_only_if_durable",
                      f"{_names(config, bad)} restored FINISHED without a flushed finished event covered by a later "
                      "coordinator snapshot", bad)]


def no_missing_input_after_recovery(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """After recovery, a FINISHED task whose output an unfinished consumer needs has its
    partition, tracked; otherwise it must have been restarted."""
    if not _recovered(action, before):
        return []
    topo = topology(config)
    bad = [t for t, s in enumerate(after.status)
           if s == FINISHED and any(after.status[c] != FINISHED for c in topo.consumers[t])
           and (after.outputs[t] is None or t not in after.tracked)]
    if not bad:
        return []
    return [Violation("no_missing_input_after_recovery",
                      f"{_names(config, bad)} stays FINISHED after recovery but its partition, needed downstream, "
                      "is not available", bad)]


def unfinished_partitions_released(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """After recovery no TaskManager holds a partition of a task that is not FINISHED (reported
    ones are released at once, late ones when they are reported)."""
    if not _recovered(action, before):
        return []
    topo = topology(config)
    bad = [t for t, o in enumerate(after.outputs) if o is not None and topo.consumers[t] and after.status[t] != FINISHED]
    if not bad:
        return []
    return [Violation("unfinished_partitions_released",
                      f"the partition of {_names(config, bad)} survives recovery although its producer is not FINISHED",
                      bad)]


def needed_partitions_kept(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """A reported partition of the recovered attempt of a FINISHED producer that an unfinished
    consumer needs is kept and tracked, unless the producer reruns because one of its own
    producers does (a region restart takes its consumers along)."""
    if not _recovered(action, before):
        return []
    topo = topology(config)
    bad = [t for t in before.reported
           if before.status[t] == FINISHED and any(before.status[c] != FINISHED for c in topo.consumers[t])
           and before.outputs[t] is not None and before.outputs[t][0] == before.attempt[t]   # the recovered attempt's
           and (after.outputs[t] is None or t not in after.tracked)
           and not (after.status[t] == CREATED and any(after.status[p] != FINISHED for p in topo.producers[t]))]
    if not bad:
        return []
    return [Violation("needed_partitions_kept",
                      f"the reported partition of {_names(config, bad)}, needed downstream, was released", bad)]


def coordinator_matches_tasks(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """After recovery every split is exactly once either unassigned or assigned to the FINISHED
    source subtask whose output holds it (no split lost or read twice across the failover)."""
    if not _recovered(action, before):
        return []
    topo = topology(config)
    problems = []
    for c, vertex in enumerate(topo.sources):
        pool, assigned = after.coordinators[c]
        owners = Counter(pool)
        for subtask, t in enumerate(topo.vertex_tasks[vertex]):
            finished = after.status[t] == FINISHED
            owners.update(assigned[subtask])
            held = tuple(sorted(after.outputs[t][1])) if finished and after.outputs[t] is not None else None
            if (not finished and assigned[subtask]) or (held is not None and tuple(sorted(assigned[subtask])) != held):
                problems.append(f"{task_name(config, t)} is {after.status[t]} with output {list(held or ())} but the "
                                f"coordinator says it has {list(assigned[subtask])}")
        wrong = sorted(x for x in topo.splits[vertex] if owners[x] != 1) + sorted(set(owners) - set(topo.splits[vertex]))
        if wrong:
            problems.append(f"splits {wrong} of {vertex} are owned {[owners[x] for x in wrong]} times")
    if not problems:
        return []
    return [Violation("coordinator_matches_tasks", "after recovery " + "; ".join(problems), problems)]


def result_equals_failure_free_run(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """When the job ends, the sinks hold exactly what a run without failures writes."""
    if after.phase != "done" or (before is not None and before.phase == "done"):
        return []
    got, expected = result(config, after), failure_free_result(config)
    if got == expected:
        return []
    return [Violation("result_equals_failure_free_run", f"the job wrote {got}, a run without failures {expected}",
                      (got, expected))]


def snapshot_cadence(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """A finished event carries a coordinator snapshot iff its job vertex finished or the
    min-pause elapsed (every job-vertex completion forces one; none more often)."""
    if action is None or action[0] != "finish" or len(after.buffer) <= len(before.buffer):
        return []
    event = after.buffer[-1]
    vertex = topology(config).tasks[event[1]][0]
    vertex_finished = all(after.status[t] == FINISHED for t in topology(config).vertex_tasks[vertex])
    due = snapshot_due(config, before, vertex_finished)
    if (event[2] is not None) == due:
        return []
    what = "without" if due else "with"
    return [Violation("snapshot_cadence", f"{task_name(config, event[1])} finished {what} a coordinator snapshot "
                      f"(vertex finished: {vertex_finished}, min-pause elapsed: {before.paused})", event)]


def no_events_while_reconciling(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """No event is written while the JM recovers (``checkState(!isRecovering())``)."""
    if before is None or before.phase != "reconciling" or action[0] in ("crash", "fail_recovery"):
        return []
    if after.log + after.buffer == before.log + before.buffer:
        return []
    return [Violation("no_events_while_reconciling", f"{action} wrote events while RECONCILING",
                      after.buffer[len(before.buffer):])]


def failed_recovery_fails_over_once(config: Config, action, before: State | None, after: State) -> list[Violation]:
    """A failed recovery clears the events and fails the job over globally exactly once."""
    if action is None or action[0] != "fail_recovery":
        return []
    count = after.global_failures - before.global_failures
    if count == 1 and not after.log and not after.buffer:
        return []
    return [Violation("failed_recovery_fails_over_once",
                      f"a failed recovery caused {count} global failovers (events left: {len(after.log + after.buffer)})",
                      count)]


_FACTS = "recovery facts §4"
BATCH_PROPERTIES = (
    Property("every_vertex_created_or_finished", every_vertex_created_or_finished,
             "After recovery every task is CREATED or FINISHED.",
             f"{_FACTS} step 6 checkExecutionGraphState; invariant 'After recovery, a vertex is in a state other than "
             "CREATED or FINISHED' (never)"),
    Property("finished_only_if_durable", finished_only_if_durable,
             "A task is restored FINISHED only from a flushed finished event at or before a snapshot-bearing one.",
             f"{_FACTS} invariant 'A vertex is restored as FINISHED unless its FinishedEvent is at or before the last "
             "snapshot-bearing FinishedEvent ... and was not cancelled by a later ResetEvent'; seed 'recover the job "
             "progress based on the previous recorded states'"),
    Property("no_missing_input_after_recovery", no_missing_input_after_recovery,
             "A FINISHED task whose partition is needed but missing is restarted.",
             f"seed step 4 'recursively find all its upstream vertices that need to be restarted'; {_FACTS} invariant "
             "'a FINISHED vertex has an input partition needed by an unfinished consumer that is not actually available' "
             "(never)"),
    Property("unfinished_partitions_released", unfinished_partitions_released,
             "Partitions of producers that are not FINISHED are released.",
             f"{_FACTS} step 4 'toRelease = RELEASE ∩ actual', late reports answered with releasePartitions"),
    Property("needed_partitions_kept", needed_partitions_kept,
             "A reported partition needed by an unfinished consumer is kept and tracked.",
             f"seed 'retain the partitions related to the target job'; {_FACTS} step 4 'toReserve = RESERVE ∩ actual'"),
    Property("coordinator_matches_tasks", coordinator_matches_tasks,
             "After recovery each split is unassigned or held by the FINISHED subtask that read it, exactly once.",
             "seed 'the operator coordinator can be restored ... call subtaskReset for the non-finished tasks'; "
             f"{_FACTS} invariant 'A split is lost or duplicated across JM failover' (never)"),
    Property("result_equals_failure_free_run", result_equals_failure_free_run,
             "The job's result equals a run without failures.",
             f"{_FACTS} 'The job completes with the same results as a run without failover' (JMFailoverITCase)"),
    Property("snapshot_cadence", snapshot_cadence,
             "Coordinator snapshots go with job-vertex completions and otherwise at most once per min-pause.",
             "seed 'min-pause to control the minimum interval between snapshots'; "
             f"{_FACTS} 'Snapshot cadence'"),
    Property("no_events_while_reconciling", no_events_while_reconciling,
             "No event is written while the JM recovers.",
             f"{_FACTS} invariant 'Events are written while RECONCILING' (never)"),
    Property("failed_recovery_fails_over_once", failed_recovery_fails_over_once,
             "A failed recovery clears the events and causes one global failover.",
             f"{_FACTS} step 7 recoverFailed / onRecoveringFailed 'The job restarts from scratch'"),
)
PROPERTY_NAMES = tuple(p.name for p in BATCH_PROPERTIES)


def check_step(config: Config, action, before: State | None, after: State, properties=BATCH_PROPERTIES) -> list[Violation]:
    """Every property on one step (``action=None``, ``before=None`` for the initial state)."""
    found: list[Violation] = []
    for prop in properties:
        found.extend(prop.check(config, action, before, after))
    return found

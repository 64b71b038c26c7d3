"""Properties of approximate task-local recovery (FLIP-135; recovery facts §1).

Four groups, one per part of :mod:`flipcheck.model.approximate_recovery`; each property is a
plain function returning a list of :class:`~.violation.Violation`:

* restart set — ``(graph, failed, unavailable, restart) -> violations``;
* the approximate subpartition — over a trace of ``(event, outputs)`` steps. Each is written as
  a step check over a small hashable :class:`History` (history variables, as in TLA+), so
  exhaustive exploration carries the history along and checks every path;
* barriers after the restart — ``(scenario, steps)`` over ``(label, outputs, view)`` steps; the
  liveness property judges the whole reachable state graph instead;
* what is lost — ``(flow, state, failed, partial, outcome) -> violations`` over one recovery of a
  dataflow (:class:`~flipcheck.reference_impl.approximate_recovery.RecoveryOutcome`).

:data:`APPROXIMATE_RECOVERY_PROPERTIES` lists them all with their meaning and source.

Example
-------
>>> from flipcheck.model.approximate_recovery import emit, connect, poll, release_view
>>> from flipcheck.reference_impl.approximate_recovery_variants import engine
>>> def trace(name, events):
...     h = engine(name).subpartition_harness(capacity=4)
...     return [(e, h.process(e)) for e in events]
>>> events = [emit(6), connect(0), poll(0), release_view(0), emit(2), connect(1), poll(1)]
>>> check_subpartition_trace(trace("flip135", events))
[]
>>> [str(v) for v in check_subpartition_trace(trace("flink-before-19547", events))]
["first_data_at_record_boundary: step 7 ('poll', 1): attempt 1's first data starts at byte 4, inside a record (boundaries [0, 6, 8])"]
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, NamedTuple, Sequence

from flipcheck.model import approximate_recovery as spec
from flipcheck.model.jobgraph import JobGraph

from .violation import Property, Violation

__all__ = [
    # restart set
    "restart_includes_failed_and_consumers", "never_restarts_upstream", "sink_failure_restarts_only_sink",
    "check_restart_set",
    # subpartition
    "History", "observe", "at_most_one_view", "newer_attempt_replaces_older", "zombie_never_replaces_newer",
    "view_release_keeps_partition", "first_data_at_record_boundary", "loss_bounded_by_partial_record",
    "sequence_numbers_restart", "reconnect_not_blocked", "SUBPARTITION_STEP_CHECKS", "check_subpartition_trace",
    # barriers
    "old_barriers_never_block", "check_barrier_steps", "checkpoint_after_restart_completes",
    # dataflow
    "unaffected_tasks_exact", "no_duplicates_in_state", "loss_bounded_by_progress_since_checkpoint",
    "sink_output_bounded", "final_equals_spec", "DATAFLOW_CHECKS", "check_recovery",
    # registry
    "APPROXIMATE_RECOVERY_PROPERTIES", "PROPERTY_NAMES", "GROUPS",
]

_MAX_WITNESSES = 3


def _examples(items) -> str:
    items = sorted(items, key=repr)
    shown = ", ".join(map(str, items[:_MAX_WITNESSES]))
    return shown + (f" and {len(items) - _MAX_WITNESSES} more" if len(items) > _MAX_WITNESSES else "")


# ------------------------------------------------------------------------------------------------
# 1. Which tasks restart


def restart_includes_failed_and_consumers(graph: JobGraph, failed, unavailable, restart) -> list[Violation]:
    """The failed tasks and every transitive consumer restart (F1, F2): a consumer left running
    would read from a producer that rewound or lost its output."""
    missing = spec.downstream(graph, failed) - frozenset(restart)
    if not missing:
        return []
    return [Violation("restart_includes_failed_and_consumers", f"not restarted: {_examples(missing)}", missing)]


def never_restarts_upstream(graph: JobGraph, failed, unavailable, restart) -> list[Violation]:
    """Nothing restarts beyond the failed tasks' downstream, except producers whose partition a
    PartitionException made unavailable (F3): the rest of the job keeps running."""
    extra = frozenset(restart) - spec.restart_set(graph, failed, unavailable)
    if not extra:
        return []
    return [Violation("never_restarts_upstream", f"restarted although upstream or unrelated: {_examples(extra)}", extra)]


def sink_failure_restarts_only_sink(graph: JobGraph, failed, unavailable, restart) -> list[Violation]:
    """A failed sink restarts alone (seed Milestone One 1: "The rest of the tasks keep running")."""
    failed = frozenset(failed)
    if unavailable or not all(spec.is_sink(graph, t) for t in failed) or frozenset(restart) == failed:
        return []
    return [Violation("sink_failure_restarts_only_sink",
                      f"sinks {_examples(failed)} failed, restarted {_examples(frozenset(restart))}", restart)]


RESTART_CHECKS = (restart_includes_failed_and_consumers, never_restarts_upstream, sink_failure_restarts_only_sink)


def check_restart_set(graph: JobGraph, failed, unavailable, restart) -> list[Violation]:
    return [v for check in RESTART_CHECKS for v in check(graph, failed, unavailable, restart)]


# ------------------------------------------------------------------------------------------------
# 2. The approximate subpartition: history and step checks


class Reader(NamedTuple):
    """What an attempt's view has received: its position (-1 before its first data), the next
    sequence number, and whether its own aligned barrier blocks it."""

    attempt: int
    position: int = -1
    sequence: int = 0
    blocked: bool = False


class History(NamedTuple):
    """Everything the properties need to remember of a subpartition trace (hashable)."""

    starts: frozenset = frozenset({0})  # record boundaries (every record start and ``written``)
    written: int = 0
    events: int = 0
    live: frozenset = frozenset()       # attempts with a live view
    newest: int = -1                    # newest attempt that got a view
    released: bool = False
    delivered: int = 0                  # every byte before was delivered or dropped
    events_delivered: int = 0
    readers: tuple = ()                 # Reader per attempt that got a view

    def reader(self, attempt: int) -> Reader | None:
        return next((r for r in self.readers if r.attempt == attempt), None)

    def with_reader(self, reader: Reader) -> "History":
        others = tuple(r for r in self.readers if r.attempt != reader.attempt)
        return self._replace(readers=tuple(sorted(others + (reader,))))


def observe(h: History, event: tuple, outputs: tuple) -> History:
    """The history after one step."""
    kind = event[0]
    if kind == "emit" and not h.released:
        written = h.written + event[1]
        h = h._replace(written=written, starts=h.starts | {written})
    elif kind == "barrier" and not h.released:
        h = h._replace(events=h.events + 1)
    elif kind == "resume" and h.reader(event[1]) is not None:
        h = h.with_reader(h.reader(event[1])._replace(blocked=False))
    for out in outputs:
        what = out[0]
        if what == "view_created":
            h = h._replace(live=h.live | {out[1]}, newest=max(h.newest, out[1])).with_reader(Reader(out[1]))
        elif what == "view_released":
            h = h._replace(live=h.live - {out[1]})
        elif what == "partition_released":
            h = h._replace(released=True, live=frozenset())
        elif what == "data":
            _, attempt, sequence, _low, high = out
            h = h._replace(delivered=max(h.delivered, high))
            old = h.reader(attempt) or Reader(attempt)
            h = h.with_reader(old._replace(position=high, sequence=sequence + 1))
        elif what == "event":
            _, attempt, sequence, number, blocking = out
            h = h._replace(events_delivered=max(h.events_delivered, number + 1))
            old = h.reader(attempt) or Reader(attempt)
            h = h.with_reader(old._replace(sequence=sequence + 1, blocked=blocking))
    return h


def _created(outputs, attempt) -> bool:
    return ("view_created", attempt) in outputs


def at_most_one_view(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """At most one view of the subpartition is alive (seed requirement 3)."""
    if len(after.live) > 1:
        return f"views of attempts {sorted(after.live)} are alive at once"
    return None


def newer_attempt_replaces_older(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """A newer attempt's request succeeds while the partition exists and leaves only its own
    view alive: the older one was released first (seed requirement 3, Point 2)."""
    if event[0] != "connect" or event[1] <= before.newest or before.released:
        return None
    if not _created(outputs, event[1]):
        return f"attempt {event[1]} could not reconnect: {list(outputs)}"
    if after.live != {event[1]}:
        return f"after attempt {event[1]} connected, live views are {sorted(after.live)}"
    return None


def zombie_never_replaces_newer(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """An older attempt connecting after a newer one gets no view and leaves the newer one alone
    (seed Point 1: "creating ResultSubpartitionView for the newer execution attempt should prevent
    the creation of ResultSubpartitionView from the older execution attempt to succeed")."""
    if event[0] != "connect" or event[1] >= before.newest:
        return None
    if _created(outputs, event[1]) or after.live - before.live or before.live - after.live:
        return f"zombie attempt {event[1]} connected after attempt {before.newest}: {list(outputs)}"
    return None


def view_release_keeps_partition(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """Only the producer's release (consumption finished, failure, job exit) releases the
    partition, never the release of a view (seed requirements 1 and 2; facts ``testRelease``)."""
    if ("partition_released",) in outputs and event[0] != "release_partition":
        return f"{event} released the partition"
    return None


def first_data_at_record_boundary(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """A view's first data starts at a record boundary, its later data where the previous ended:
    a consumer never sees the middle of a record (seed Partial Records; recovery facts §1.6 Invariants)."""
    for out in outputs:
        if out[0] != "data":
            continue
        reader = before.reader(out[1]) or Reader(out[1])
        if reader.position < 0 and out[3] not in before.starts:
            return f"attempt {out[1]}'s first data starts at byte {out[3]}, inside a record (boundaries {sorted(before.starts)})"
        if reader.position >= 0 and out[3] != reader.position:
            return f"attempt {out[1]} got bytes {out[3]}..{out[4]} after byte {reader.position}"
    return None


def loss_bounded_by_partial_record(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """No byte is delivered twice, no event is lost or repeated, and the only bytes dropped are
    the rest of the one record a released view was reading (seed Partial Records option 1)."""
    for out in outputs:
        if out[0] == "event" and out[3] != before.events_delivered:
            return f"event {out[3]} delivered, expected event {before.events_delivered}"
        if out[0] != "data":
            continue
        low = out[3]
        if low < before.delivered:
            return f"bytes {low}..{min(out[4], before.delivered)} delivered twice"
        if low > before.delivered and (before.delivered in before.starts
                                       or low != spec.next_boundary(before.starts, before.delivered)):
            return f"bytes {before.delivered}..{low} dropped, more than a partial record"
    return None


def sequence_numbers_restart(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """Each view's buffers are numbered 0, 1, 2, ...: the restarted consumer's channel expects
    0 (seed Point4: "Upstream credits are reset to the initial state")."""
    for out in outputs:
        if out[0] in ("data", "event"):
            reader = before.reader(out[1]) or Reader(out[1])
            if out[2] != reader.sequence:
                return f"attempt {out[1]} got sequence number {out[2]}, expected {reader.sequence}"
    return None


def reconnect_not_blocked(before: History, event: tuple, outputs: tuple, after: History) -> str | None:
    """A live view that is not blocked by its own aligned barrier gets data whenever some is
    queued; a predecessor's alignment never blocks it (seed Missing Events: "has to reset
    isBlockedByCheckpoint")."""
    if event[0] != "poll" or ("none", event[1]) not in outputs or before.released:
        return None
    reader = before.reader(event[1])
    if reader is None or event[1] not in before.live or reader.blocked:
        return None
    position = reader.position if reader.position >= 0 else spec.next_boundary(before.starts, before.delivered)
    if before.written > position or before.events_delivered < before.events:
        return f"attempt {event[1]} polled nothing although bytes {position}..{before.written} or events are queued"
    return None


SUBPARTITION_STEP_CHECKS: tuple[Callable, ...] = (
    at_most_one_view, newer_attempt_replaces_older, zombie_never_replaces_newer, view_release_keeps_partition,
    first_data_at_record_boundary, loss_bounded_by_partial_record, sequence_numbers_restart, reconnect_not_blocked,
)


def check_subpartition_trace(steps: Iterable[tuple[tuple, tuple]], checks: Sequence[Callable] = SUBPARTITION_STEP_CHECKS) -> list[Violation]:
    """Every step check over a trace of ``(event, outputs)``; each violated property is reported
    once, at its first violating step."""
    history, found, seen = History(), [], set()
    for index, (event, outputs) in enumerate(steps):
        after = observe(history, event, outputs)
        for check in checks:
            if check.__name__ in seen:
                continue
            message = check(history, event, outputs, after)
            if message:
                seen.add(check.__name__)
                found.append(Violation(check.__name__, f"step {index + 1} {event}: {message}", index))
        history = after
    return found


def _trace_check(step_check: Callable) -> Callable:
    def check(steps) -> list[Violation]:
        return check_subpartition_trace(steps, (step_check,))

    check.__name__ = step_check.__name__
    check.__doc__ = step_check.__doc__
    return check


# ------------------------------------------------------------------------------------------------
# 3. Barriers reaching the restarted task


def old_barriers_never_block(scenario: spec.BarrierScenario, steps: Iterable[tuple]) -> list[Violation]:
    """No channel of the restarted task stays blocked by a barrier of a checkpoint at or below
    the max id of its deployment (seed Missing Events: a lost barrier would make the checkpoint
    wait "indefinitely"). ``steps`` are ``(label, outputs, view)``."""
    for index, (label, _outputs, view) in enumerate(steps):
        if view.blocked and (view.pending is None or view.pending <= scenario.max_triggered):
            return [Violation("old_barriers_never_block",
                              f"step {index + 1} {label}: channels {view.blocked:b} blocked by checkpoint {view.pending} "
                              f"<= {scenario.max_triggered}", index)]
    return []


def check_barrier_steps(scenario: spec.BarrierScenario, steps) -> list[Violation]:
    return old_barriers_never_block(scenario, steps)


def checkpoint_after_restart_completes(scenario: spec.BarrierScenario, initial, successors: Callable,
                                       completed: Callable, max_states: int = 200_000) -> list[Violation]:
    """From every reachable state some checkpoint newer than the restart can still complete
    (AG EF): no checkpoint waits forever for a lost barrier (seed Missing Events: "not able to be
    complete"; option 2: "The system can be blocked forever before pending checkpoints are
    aborted"). ``successors(state)`` yields ``(label, next, outputs, view)``; ``completed(state)``
    is the history flag. The witness is a shortest trace to a state that can never complete."""
    parents: dict = {initial: None}
    edges: dict = {}
    frontier = [initial]
    while frontier:
        nxt_frontier = []
        for state in frontier:
            edges[state] = []
            for label, nxt, _outputs, _view in successors(state):
                edges[state].append(nxt)
                if nxt not in parents:
                    if len(parents) >= max_states:
                        raise ValueError(f"more than {max_states} states: liveness needs the whole graph")
                    parents[nxt] = (state, label)
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    reverse: dict = {}
    for state, successors_of in edges.items():
        for nxt in successors_of:
            reverse.setdefault(nxt, []).append(state)
    good = {s for s in parents if completed(s)}
    stack = list(good)
    while stack:
        for previous in reverse.get(stack.pop(), ()):
            if previous not in good:
                good.add(previous)
                stack.append(previous)
    # parents are in breadth-first order, so the first stuck state has a shortest trace
    stuck = next((s for s in parents if s not in good), None)
    if stuck is None:
        return []
    trace, state = [], stuck
    while parents[state] is not None:
        state, label = parents[state]
        trace.append(label)
    trace.reverse()
    return [Violation("checkpoint_after_restart_completes",
                      f"after {trace or 'the restart'} no checkpoint newer than {scenario.max_triggered} can complete",
                      trace)]


# ------------------------------------------------------------------------------------------------
# 4. What is lost


def _spec_restart(flow: spec.Dataflow, failed, unavailable=()) -> frozenset:
    tasks = flow.tasks
    restart = spec.restart_set(flow.graph, {tasks[i] for i in failed}, {tasks[i] for i in unavailable})
    return frozenset(i for i, t in enumerate(tasks) if t in restart)


def _name(flow: spec.Dataflow, task: int) -> str:
    vertex, index = flow.tasks[task]
    return f"{vertex}[{index}]"


def unaffected_tasks_exact(flow, state, failed, partial, outcome) -> list[Violation]:
    """A task outside the failed subgraph ends exactly as without the failure: nothing lost,
    nothing duplicated (seed: "only the failed task restarts without affecting the rest of the job")."""
    restart = _spec_restart(flow, failed)
    reference = spec.failure_free(flow)
    bad = [t for t in range(len(flow.tasks)) if t not in restart and outcome.final[t] != reference[t]]
    if not bad:
        return []
    described = [f"{_name(flow, t)} lost {sum((reference[t] - outcome.final[t]).values())}, "
                 f"got {sum((outcome.final[t] - reference[t]).values())} extra" for t in bad]
    return [Violation("unaffected_tasks_exact", "; ".join(described), bad)]


def no_duplicates_in_state(flow, state, failed, partial, outcome) -> list[Violation]:
    """No task's state holds a record twice, or a record a failure-free run would not give it."""
    reference = spec.failure_free(flow)
    bad = [t for t in range(len(flow.tasks))
           if any(n > 1 for n in outcome.final[t].values()) or outcome.final[t] - reference[t]]
    if not bad:
        return []
    return [Violation("no_duplicates_in_state", f"duplicated or foreign records in {_examples(_name(flow, t) for t in bad)}", bad)]


def loss_bounded_by_progress_since_checkpoint(flow, state, failed, partial, outcome) -> list[Violation]:
    """The records lost are those the restarted subgraph took from running tasks since the last
    completed checkpoint (or had half read), and what derives from them (seed Milestone One 3)."""
    expected = spec.expected_final(flow, state, _spec_restart(flow, failed), partial)
    reference = spec.failure_free(flow)
    bad = [t for t in range(len(flow.tasks)) if (reference[t] - outcome.final[t]) - (reference[t] - expected[t])]
    if not bad:
        return []
    return [Violation("loss_bounded_by_progress_since_checkpoint",
                      f"lost more than the progress since the checkpoint at {_examples(_name(flow, t) for t in bad)}", bad)]


def sink_output_bounded(flow, state, failed, partial, outcome) -> list[Violation]:
    """What sinks wrote out (never rolled back) repeats a record only when a source restarted
    (seed: "data loss and a bit of data duplication when sources fail"), and only records the sink
    wrote since the checkpoint; it misses only lost records."""
    restart = _spec_restart(flow, failed)
    expected = spec.expected_final(flow, state, restart, partial)
    reference = spec.failure_free(flow)
    problems = []
    for sink, log in outcome.logs.items():
        repeated = Counter({c: n - 1 for c, n in log.items() if n > 1})
        since = Counter(state.processed[sink][spec.restored_prefix(state, sink):])
        if repeated and (not any(s in restart for s in flow.sources) or repeated - since):
            problems.append(f"{_name(flow, sink)} wrote {sum(repeated.values())} records twice")
        if (reference[sink] - log) - (reference[sink] - expected[sink]):
            problems.append(f"{_name(flow, sink)} never wrote records that were not lost")
    return [Violation("sink_output_bounded", p) for p in problems]


def final_equals_spec(flow, state, failed, partial, outcome) -> list[Violation]:
    """Every task ends with exactly what rules L1, L2 give."""
    expected = spec.expected_final(flow, state, _spec_restart(flow, failed), partial)
    bad = [t for t in range(len(flow.tasks)) if outcome.final[t] != expected[t]]
    if not bad:
        return []
    return [Violation("final_equals_spec", f"final state differs at {_examples(_name(flow, t) for t in bad)}", bad)]


DATAFLOW_CHECKS = (unaffected_tasks_exact, no_duplicates_in_state, loss_bounded_by_progress_since_checkpoint,
                   sink_output_bounded, final_equals_spec)


def check_recovery(flow, state, failed, partial, outcome) -> list[Violation]:
    return [v for check in DATAFLOW_CHECKS for v in check(flow, state, failed, partial, outcome)]


# ------------------------------------------------------------------------------------------------
# Registry


_SEED = "seed FLIP-135"
APPROXIMATE_RECOVERY_PROPERTIES = (
    Property("restart_includes_failed_and_consumers", restart_includes_failed_and_consumers,
             "The failed tasks and all their transitive consumers restart.",
             f"{_SEED} Milestone Two: 'a failed task leads all tasks rooted from the failed tasks to restart'; recovery facts §1.3 rule (c)"),
    Property("never_restarts_upstream", never_restarts_upstream,
             "No upstream or unrelated task restarts unless its partition is unavailable.",
             "recovery facts §1.3 'Upstream tasks never restart unless a PartitionException marks an input unavailable'"),
    Property("sink_failure_restarts_only_sink", sink_failure_restarts_only_sink,
             "A failed sink restarts alone.",
             f"{_SEED} Milestone One 1: 'The sink task is restarted ... The rest of the tasks keep running.'"),
    Property("at_most_one_view", _trace_check(at_most_one_view),
             "At most one view of a subpartition is alive.",
             f"{_SEED} requirement 3: 'only one view exists at a time (No two views exist at the same time)'"),
    Property("newer_attempt_replaces_older", _trace_check(newer_attempt_replaces_older),
             "A newer attempt's request succeeds and releases the older view.",
             f"{_SEED} Point2: 'the old view will be released before a new one can be created'"),
    Property("zombie_never_replaces_newer", _trace_check(zombie_never_replaces_newer),
             "An older attempt never connects after (or over) a newer one.",
             f"{_SEED} Point1: 'creating ResultSubpartitionView for the newer execution attempt should prevent the "
             "creation of ResultSubpartitionView from the older execution attempt to succeed'"),
    Property("view_release_keeps_partition", _trace_check(view_release_keeps_partition),
             "Releasing a view never releases the partition.",
             f"{_SEED} requirement 1: 'ResultSubPartition is kept when the consumer exits (task fails), the consumer only releases the view'"),
    Property("first_data_at_record_boundary", _trace_check(first_data_at_record_boundary),
             "A view's first data starts at a record boundary; its data is contiguous.",
             f"{_SEED} Partial Records: 'The remaining part read from the upstream can not be deserialized successfully'"),
    Property("loss_bounded_by_partial_record", _trace_check(loss_bounded_by_partial_record),
             "Only the rest of the record a released view was reading is dropped; nothing is delivered twice.",
             f"{_SEED} Partial Records option 1: 'clean up partial results when releasing ResultSubpartitionView'"),
    Property("sequence_numbers_restart", _trace_check(sequence_numbers_restart),
             "Each view's buffers are numbered from 0.",
             f"{_SEED} Point4 Credits: 'Upstream credits are reset to the initial state'"),
    Property("reconnect_not_blocked", _trace_check(reconnect_not_blocked),
             "A new view is never blocked by its predecessor's barrier alignment.",
             f"{_SEED} Missing Events: 'the upstream subpartition has to reset isBlockedByCheckpoint'"),
    Property("old_barriers_never_block", old_barriers_never_block,
             "Barriers of checkpoints at or below the deployed max id never block the restarted task.",
             f"{_SEED} Missing Events option 1: 'sink can drop any barrier that is no-bigger than the id'"),
    Property("checkpoint_after_restart_completes", checkpoint_after_restart_completes,
             "From every reachable state, a checkpoint newer than the restart can still complete.",
             f"{_SEED} Missing Events: 'not able to be complete'; 'The system can be blocked forever'"),
    Property("unaffected_tasks_exact", unaffected_tasks_exact,
             "Tasks outside the failed subgraph lose and duplicate nothing.",
             f"{_SEED}: 'only the failed task restarts without affecting the rest of the job'"),
    Property("no_duplicates_in_state", no_duplicates_in_state,
             "No task's state holds a record twice.",
             f"{_SEED} (the restarted subgraph restores one consistent checkpoint)"),
    Property("loss_bounded_by_progress_since_checkpoint", loss_bounded_by_progress_since_checkpoint,
             "Lost: only what the restarted subgraph took from running tasks since the last completed checkpoint.",
             f"{_SEED} Milestone One 3: 'The amount of data that leads the failed sink from the state of the last "
             "completed checkpoint to the state when the sink fails is lost.'"),
    Property("sink_output_bounded", sink_output_bounded,
             "Sinks repeat output only when a source restarted, only since the checkpoint.",
             f"{_SEED}: 'expects data loss and a bit of data duplication when sources fail'"),
    Property("final_equals_spec", final_equals_spec,
             "Every task ends with exactly the rules' outcome.",
             "model/approximate_recovery.py rules L1, L2"),
)
PROPERTY_NAMES = tuple(p.name for p in APPROXIMATE_RECOVERY_PROPERTIES)
GROUPS = {
    "failover": tuple(f.__name__ for f in RESTART_CHECKS),
    "subpartition": tuple(f.__name__ for f in SUBPARTITION_STEP_CHECKS) + ("refines_spec",),
    "barriers": ("old_barriers_never_block", "checkpoint_after_restart_completes", "refines_spec"),
    "dataflow": tuple(f.__name__ for f in DATAFLOW_CHECKS),
}

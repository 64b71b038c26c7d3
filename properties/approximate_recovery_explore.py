"""Exhaustive exploration of approximate task-local recovery for small bounds.

* :func:`explore_subpartition` — every sequence of writer, consumer and JM events on one
  subpartition (record lengths, events, attempts bounded), the engine (or a variant) next to the
  model: every subpartition property on every path (the :class:`History` is part of the state)
  and ``refines_spec`` (same outputs as the model at every step).
* :func:`explore_barriers` — every interleaving of barrier deliveries and new checkpoints after a
  restart, for one :class:`~flipcheck.model.approximate_recovery.BarrierScenario`;
  :func:`barrier_scenarios` enumerates the scenarios.
* :func:`explore_restart_sets` — every failure set (and every single unavailable partition) of
  every small topology.
* :func:`explore_dataflow` — every reachable state of a small dataflow run with its checkpoint,
  each a failure point: every single failed task, with and without half-read records.

Breadth-first search (:mod:`.explore`), so the first violation comes with a shortest trace.

Example
-------
>>> result = explore_subpartition("flip135", capacity=2, max_records=2, lengths=(1, 3), attempts=2, max_events=0)
>>> result.complete, result.problems
(True, [])
>>> bad = explore_subpartition("cleanup-first-buffer-only", capacity=2, max_records=2, lengths=(1, 5), attempts=2,
...                            max_events=0)
>>> sorted({v.property for v in bad.problems}), bad.trace
(['first_data_at_record_boundary', 'loss_bounded_by_partial_record', 'refines_spec'], [('emit', 5), ('connect', 0), ('poll', 0), ('connect', 1), ('poll', 1)])
"""

from __future__ import annotations

import itertools
from typing import Iterable, NamedTuple

from flipcheck.model import approximate_recovery as spec
from flipcheck.model.jobgraph import JobGraph
from flipcheck.reference_impl.approximate_recovery_variants import engine as make_engine

from . import approximate_recovery_properties as props
from .explore import Exploration, explore
from .violation import Violation

__all__ = [
    "SubpartitionBounds", "subpartition_events", "explore_subpartition",
    "barrier_scenarios", "explore_barriers",
    "explore_restart_sets", "explore_dataflow", "recovery_cases", "env_after", "ExploreEnv"]


# ------------------------------------------------------------------------------------------------
# The subpartition


class SubpartitionBounds(NamedTuple):
    capacity: int = 2
    max_records: int = 3
    lengths: tuple = (1, 2, 5)
    attempts: int = 3
    max_events: int = 1


class ExploreEnv(NamedTuple):
    records: int = 0
    events: int = 0
    connected: frozenset = frozenset()
    released_by_consumer: frozenset = frozenset()
    partition_released: bool = False


def subpartition_events(bounds: SubpartitionBounds, env: ExploreEnv, history: props.History, live_view: int | None) -> list:
    """Every event the environment can send next: the writer within its bounds, each attempt
    connecting once and releasing its own view once, the live view polling (and resuming after
    its own aligned barrier), the JM releasing the partition once."""
    events: list = []
    if env.records < bounds.max_records:
        events += [spec.emit(n) for n in bounds.lengths]
    if env.events < bounds.max_events:
        events += [spec.barrier_event(True), spec.barrier_event(False)]
    events += [spec.connect(a) for a in range(bounds.attempts) if a not in env.connected]
    events += [spec.release_view(a) for a in sorted(env.connected - env.released_by_consumer)]
    if live_view is not None:
        events.append(spec.poll(live_view))
        reader = history.reader(live_view)
        if reader is not None and reader.blocked:
            events.append(spec.resume(live_view))
    if not env.partition_released:
        events.append(spec.release_partition())
    return events


def env_after(env: ExploreEnv, event: tuple) -> ExploreEnv:
    kind = event[0]
    if kind == "emit":
        return env._replace(records=env.records + 1)
    if kind == "barrier":
        return env._replace(events=env.events + 1)
    if kind == "connect":
        return env._replace(connected=env.connected | {event[1]})
    if kind == "release_view":
        return env._replace(released_by_consumer=env.released_by_consumer | {event[1]})
    if kind == "release_partition":
        return env._replace(partition_released=True)
    return env


def explore_subpartition(variant: str = "flip135", *, capacity: int = 2, max_records: int = 3, lengths=(1, 2, 5),
                         attempts: int = 3, max_events: int = 1, refinement: bool = True, check_properties: bool = True,
                         skip: Iterable[str] = (), max_states: int | None = None) -> Exploration:
    """Explore ``variant``'s subpartition next to the model (see the module docstring)."""
    bounds = SubpartitionBounds(capacity, max_records, tuple(lengths), attempts, max_events)
    engine = make_engine(variant)
    checks = tuple(c for c in props.SUBPARTITION_STEP_CHECKS if c.__name__ not in set(skip)) if check_properties else ()
    probe = engine.subpartition_harness(capacity)

    def successors(state):
        model, snapshot, history, env = state
        live = probe.restore(snapshot).live_view()
        for event in subpartition_events(bounds, env, history, live):
            harness = engine.subpartition_harness(capacity).restore(snapshot)
            outputs = harness.process(event)
            problems = []
            if refinement:
                model2, expected = spec.subpartition_step(model, event)
                if expected != outputs:
                    problems.append(Violation("refines_spec", f"{event}: engine {list(outputs)}, model {list(expected)}"))
            else:
                model2 = model
            after = props.observe(history, event, outputs)
            for check in checks:
                message = check(history, event, outputs, after)
                if message:
                    problems.append(Violation(check.__name__, f"{event}: {message}"))
            yield event, (model2, harness.snapshot(), after, env_after(env, event)), problems

    start = (spec.initial_subpartition(capacity) if refinement else None, probe.snapshot(), props.History(), ExploreEnv())
    return explore([start], successors, max_states=max_states)


# ------------------------------------------------------------------------------------------------
# Barriers after the restart


def barrier_scenarios(max_channels: int = 3, max_id: int = 2, new_checkpoints: int = 2) -> list[spec.BarrierScenario]:
    """Every scenario: 1..C channels, max triggered id 0..I, restored id 0..that, and what each
    channel's old barriers the failed attempt had consumed (channels in non-decreasing order:
    channels are interchangeable)."""
    scenarios = []
    for channels in range(1, max_channels + 1):
        for triggered in range(max_id + 1):
            for restored in range(triggered + 1):
                for consumed in itertools.combinations_with_replacement(range(triggered + 1), channels):
                    scenarios.append(spec.BarrierScenario(channels, triggered, restored, consumed, new_checkpoints))
    return scenarios


def _spec_run(scenario):
    return spec.initial_barrier_system(scenario), lambda s: spec.barrier_successors(scenario, s), \
        lambda s: s.completed_new


def explore_barriers(variant: str, scenario: spec.BarrierScenario, *, refinement: bool = True,
                     check_properties: bool = True, liveness: bool = True) -> Exploration:
    """Explore ``variant``'s restarted task and coordinator (next to the model with
    ``refinement``): ``old_barriers_never_block`` on every step, ``refines_spec``, and
    ``checkpoint_after_restart_completes`` on the whole graph."""
    run = make_engine(variant).barrier_run(scenario)

    def successors(state):
        engine_state, model_state = state
        model_steps = {label: (nxt, out, view) for label, nxt, out, view in spec.barrier_successors(scenario, model_state)} \
            if refinement else {}
        engine_steps = list(run.successors(engine_state))
        if refinement:
            missing = set(model_steps) - {label for label, *_ in engine_steps}
            if missing:
                # The engine cannot do what the model can (e.g. trigger a checkpoint): report it on
                # every step from here, so the trace ends where the difference starts.
                problem = Violation("refines_spec", f"the model can {sorted(missing)}, the engine cannot")
                yield sorted(missing)[0], (engine_state, model_state), [problem]
        for label, nxt, outputs, view in engine_steps:
            problems: list = []
            if check_properties:
                problems += props.old_barriers_never_block(scenario, [(label, outputs, view)])
            model_next = None
            if refinement:
                expected = model_steps.get(label)
                if expected is None or expected[1] != outputs or expected[2] != view:
                    problems.append(Violation("refines_spec", f"{label}: engine {list(outputs)} {view}, model "
                                                              f"{'disabled' if expected is None else list(expected[1])}"))
                else:
                    model_next = expected[0]
            yield label, (nxt, model_next), problems

    start = (run.initial(), spec.initial_barrier_system(scenario) if refinement else None)
    result = explore([start], successors)
    if liveness and not result.problems:
        stuck = props.checkpoint_after_restart_completes(
            scenario, run.initial(), lambda s: run.successors(s), lambda s: s[-1])
        if stuck:
            result.problems, result.trace, result.complete = stuck, stuck[0].witness, False
    return result


# ------------------------------------------------------------------------------------------------
# Restart sets


def explore_restart_sets(variant: str, graphs: Iterable[JobGraph], max_tasks: int = 6) -> tuple[int, list]:
    """Check every non-empty failure set without partition loss, and every single failed task with
    every single unavailable partition, of every graph with at most ``max_tasks`` tasks. Returns
    (cases, first violations with their case)."""
    engine = make_engine(variant)
    cases, found = 0, []
    for graph in graphs:
        tasks = list(graph.tasks())
        if len(tasks) > max_tasks:
            continue
        choices = [(frozenset(f), frozenset()) for r in range(1, len(tasks) + 1) for f in itertools.combinations(tasks, r)]
        choices += [(frozenset({f}), frozenset({u})) for f in tasks for u in tasks if u != f]
        for failed, unavailable in choices:
            cases += 1
            violations = props.check_restart_set(graph, failed, unavailable, engine.restart_set(graph, failed, unavailable))
            if violations and not found:
                found = [(graph, failed, unavailable, violations)]
    return cases, found


# ------------------------------------------------------------------------------------------------
# Dataflow failure points


def recovery_cases(flow: spec.Dataflow, state: spec.Flow) -> list[tuple[frozenset, frozenset]]:
    """The failures tried at one state: each single task, with no half-read record, and with the
    head record of every channel into it half read."""
    cases = []
    for task in range(len(flow.tasks)):
        into = frozenset(c for c in flow.inputs[task] if state.channels[c] and state.channels[c][0] != spec.BARRIER_ITEM)
        cases.append((frozenset({task}), frozenset()))
        if into:
            cases.append((frozenset({task}), into))
    return cases


def explore_dataflow(variant: str, graph: JobGraph, records: int = 2, max_states: int | None = None) -> Exploration:
    """Every reachable state of the run (with its one checkpoint) is a failure point; each
    :func:`recovery_cases` failure is recovered by ``variant`` and checked with every dataflow
    property. ``states`` counts run states, ``transitions`` run steps, and the result's
    ``failures_checked`` the recoveries checked."""
    flow = spec.Dataflow(graph, records)
    recovery = make_engine(variant).recovery()
    checked = [0]

    def failures(state):
        problems = []
        for failed, partial in recovery_cases(flow, state):
            checked[0] += 1
            problems += props.check_recovery(flow, state, failed, partial, recovery.recover(flow, state, failed, partial))
            if problems:
                break
        return problems

    def successors(state):
        for action in spec.flow_actions(flow, state):
            yield action, spec.flow_step(flow, state, action), ()

    result = explore([spec.initial_flow(flow)], successors, check_state=failures, max_states=max_states)
    result.failures_checked = checked[0]
    return result

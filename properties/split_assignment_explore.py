"""Exhaustive exploration of FLIP-27 split assignment for small bounds (breadth-first).

The explored state is the specification's state (:mod:`flipcheck.model.split_assignment`),
optionally an implementation's snapshot (:mod:`flipcheck.reference_impl.split_assignment` or a
variant), and the properties' :class:`~.split_assignment_properties.History`. Every
transition is one enabled action; every property is checked on every transition, and with
``refinement`` the implementation must enable the same actions as the specification and show
the same view after each. Breadth-first order (:mod:`.explore`) makes the first violation one
with a shortest trace.

* :func:`explore_model` — the specification of one design alone;
* :func:`explore_job` — Flink's implementation, or a named variant, with or without the model;
* :func:`explore_liveness` — the reachable graph, and the states from which not every split can
  be read any more (``every_split_eventually_read``);
* :func:`replay` — one given run, step by step, with every property (what sweeps, shrinking and
  pictures use);
* :func:`compare_designs` — the seed's trade-off: exactly-once holds for all three designs, but
  only the coordinator and the reconnecting task can hand a failed reader's splits to another
  reader (persistent channels: "Splits always go to the same reader").

Example
-------
>>> from flipcheck.model.split_assignment import Config
>>> explore_model(Config(readers=1, splits=1, checkpoints=1)).states
155
>>> bad = explore_job(Config(readers=1, splits=1, checkpoints=1), "reset-returns-all-epochs", refinement=False)
>>> [v.property for v in bad.problems], bad.trace[-2:]
(['no_split_assigned_twice', 'reset_returns_only_later_splits'], [('fail', 0), ('reset', 0)])
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from flipcheck.model.split_assignment import (
    COORDINATOR, DESIGNS, RULE_OF, SYSTEM, Config, View, enabled, initial_state, settled, step, view,
)
from flipcheck.reference_impl.split_assignment_variants import make_job

from .explore import Exploration, cannot_reach, explore, explore_graph
from .refinement import Step, StepMonitor, applied, replay_actions
from .split_assignment_properties import (
    LIVENESS, REFINEMENT, SPLIT_PROPERTIES, advance, check_step, inbox_splits, start,
)
from .violation import Violation

__all__ = ["explore_model", "explore_job", "explore_liveness", "compare_designs", "DesignComparison",
           "properties_named", "all_read", "Step", "replay"]


def properties_named(names=None) -> tuple:
    """The properties to check: all, or those named."""
    if names is None:
        return SPLIT_PROPERTIES
    return tuple(p for p in SPLIT_PROPERTIES if p.name in set(names))


def all_read(v: View, splits: int) -> bool:
    """Every split read to the end by a running reader and nothing else left to do."""
    return settled(v) and not v.pool and not any(v.inbox) and not any(v.splits) and \
        sum(len(d) for d in v.done) == splits


def explore_model(config: Config, check: bool = True, properties=None, max_states: int | None = None,
                  stop_at_first: bool = True) -> Exploration:
    """The specification alone; state = (model state, history)."""
    props = properties_named(properties) if check else ()

    def successors(state):
        spec, history = state
        before = view(config, spec)
        for action in enabled(config, spec):
            spec2 = step(config, spec, action)
            after = view(config, spec2)
            problems = check_step(history, action, before, after, props) if props else []
            yield action, (spec2, advance(history, action, before, after) if props else history), problems

    spec0 = initial_state(config)
    history = start(config)
    initial_problems = check_step(history, None, None, view(config, spec0), props) if props else []
    result = explore([(spec0, history)], successors, max_states=max_states, stop_at_first=stop_at_first)
    if initial_problems:
        result.problems, result.trace = initial_problems, []
    return result


def explore_job(config: Config, variant: str = "flink", refinement: bool = True, check: bool = True,
                properties=None, max_states: int | None = None, stop_at_first: bool = True,
                coverage: Counter | None = None) -> Exploration:
    """An implementation (Flink's or a variant) with the property monitors and, with
    ``refinement``, next to the specification (``refines_model`` on any difference). A
    ``coverage`` counter gets one count per generated step under its rule (``RULE_OF``)."""
    props = properties_named(properties) if check else ()
    job = make_job(config, variant)

    def successors(state):
        spec, snapshot, history = state
        job.restore(snapshot)
        before = job.view()
        actions = job.enabled()
        if refinement:
            expected = enabled(config, spec)
            if actions != expected:
                problem = Violation(REFINEMENT, f"enabled actions {actions}, the model enables {expected}")
                yield ("enabled",), state, [problem]
                return
        for action in actions:
            if coverage is not None:
                coverage[RULE_OF[action[0]]] += 1
            job.restore(snapshot)
            problems: list = []
            crash = applied(job, action)
            if crash is not None:
                yield action, state, [crash]
                continue
            after = job.view()
            spec2 = None
            if refinement:
                spec2 = step(config, spec, action)
                if view(config, spec2) != after:
                    problems.append(Violation(REFINEMENT, f"{action}: implementation {after}, model {view(config, spec2)}"))
            if props:
                problems += check_step(history, action, before, after, props)
                history2 = advance(history, action, before, after)
            else:
                history2 = history
            yield action, (spec2, job.snapshot(), history2), problems

    spec0 = initial_state(config) if refinement else None
    history = start(config)
    initial = (spec0, job.snapshot(), history)
    return explore([initial], successors, max_states=max_states, stop_at_first=stop_at_first)


def explore_liveness(config: Config, variant: str | None = None, max_states: int | None = None):
    """The reachable graph (of the model for ``variant=None``) and the violations of
    ``every_split_eventually_read``: reachable states from which no state with every split read
    is reachable. Returns ``(graph, [Violation])``; the witness is the shortest path to the first
    such state."""
    if variant is None:
        def successors(spec):
            for action in enabled(config, spec):
                yield action, step(config, spec, action), ()
        initial = initial_state(config)
        view_of = lambda spec: view(config, spec)  # noqa: E731
    else:
        job = make_job(config, variant)
        initial = job.snapshot()

        def successors(snapshot):
            job.restore(snapshot)
            for action in job.enabled():
                job.restore(snapshot)
                job.apply(action)
                yield action, job.snapshot(), ()

        def view_of(snapshot):
            return job.restore(snapshot).view()

    graph = explore_graph([initial], successors, max_states=max_states)
    targets = [i for i, s in enumerate(graph.states) if all_read(view_of(s), config.splits)]
    stuck = cannot_reach(graph, targets) if graph.complete else bytearray(len(graph.states))
    first = next((i for i in range(len(graph.states)) if stuck[i]), None)
    if first is None:
        return graph, []
    labels, _ = graph.path_to(first)
    v = view_of(graph.states[first])
    message = f"after {len(labels)} steps no run reads every split any more (pool {sorted(v.pool)}, " \
              f"readers {[sorted(s | d) for s, d in zip(v.splits, v.done)]})"
    return graph, [Violation(LIVENESS, message, labels)]


class DesignComparison(NamedTuple):
    design: str
    states: int
    violations: tuple          # property names violated
    gateway_needed: bool       # events must be held at a gateway for exactly-once
    redistributes: bool        # a failed reader's splits can be read by another reader


def _redistributes(config: Config) -> bool:
    """Is there a run where a split returned by a reader's reset is later read by another reader?"""
    def successors(state):
        spec, returned = state
        before = view(config, spec)
        for action in enabled(config, spec):
            spec2 = step(config, spec, action)
            after = view(config, spec2)
            moved = False
            returned2 = returned
            if action[0] == "reset":
                r = action[1]
                returned2 = returned | {(x, r) for x in (after.pool - before.pool) | set(inbox_splits(after, r))}
            elif action[0] == "assign":
                x = next(iter(before.pool - after.pool))
                moved = any(split == x and r != action[1] for split, r in returned)
            yield action, (spec2, returned2), [Violation("moved", "")] if moved else []
    return bool(explore([(initial_state(config), frozenset())], successors).problems)


def compare_designs(config: Config) -> list[DesignComparison]:
    """Each design explored with every property, plus the seed's trade-offs: whether it needs
    the gateway (the coordinator without one loses exactly-once, shown by the
    ``no-event-gateway`` mutant; the task designs have no gateway at all) and whether a failed
    reader's splits can move to another reader."""
    rows = []
    for design in DESIGNS:
        cfg = config._replace(design=design)
        result = explore_model(cfg, stop_at_first=False)
        gateway = False
        if design == COORDINATOR:
            gateway = bool(explore_job(cfg, "no-event-gateway", refinement=False).problems)
        rows.append(DesignComparison(design, result.states, tuple(sorted({v.property for v in result.problems})),
                                     gateway, _redistributes(cfg)))
    return rows


def replay(config: Config, actions, variant: str = "flink", refinement: bool = True,
           stop_at_first: bool = True) -> list[Step]:
    """Run ``actions`` on ``variant``, checking every property (and, with ``refinement``, the
    model and its enabled actions) at each step. An action the implementation does not enable
    ends the run with a ``refines_model`` violation; with ``stop_at_first`` the first violating
    step ends it."""
    monitor = StepMonitor(start, check_step, advance, check_start=True)
    return replay_actions(SYSTEM, make_job(config, variant), config, actions, monitor, variant=variant,
                          refinement=refinement, stop_at_first=stop_at_first, check_enabled=True)

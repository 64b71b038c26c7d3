"""Exhaustive exploration of batch job recovery (FLIP-383) for small DAGs: every crash point.

Breadth-first over every interleaving of task steps, flushes, min-pause ticks, JM crashes (at
every reachable point: before or after any flush, while reconciling, during a pending global
restart), partition losses, reports within the timeout and failed recoveries
(:mod:`flipcheck.model.batch_recovery`), with every property of
:mod:`.batch_recovery_properties` on every step. A state without a next step in which the job is
not done is a ``job_completes`` violation (runs are finite: every failure is bounded, so no
other way to not complete exists). Breadth-first order (:mod:`.explore`) makes the first
violation one with a shortest trace.

* :func:`explore_model` — the specification alone;
* :func:`explore_job` — Flink's implementation or a named variant, with or without the model
  next to it (``refines_model``: same enabled actions, same state after each);
* :func:`replay` — one run, step by step, with every property (sweeps, pictures).

``crash_points`` counts the crash transitions explored: distinct states in which the JM dies.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> from flipcheck.model.batch_recovery import Config
>>> cfg = Config(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]))
>>> found = explore_model(cfg)
>>> found.complete, found.problems, found.crash_points > 0
(True, [], True)
>>> two = Config(JobGraph.build([("src", 2), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]))
>>> bad = explore_job(two, "keep-trailing-events", refinement=False)
>>> bad.problems[0].property, bad.trace[-2:]
('finished_only_if_durable', [('crash',), ('restart',)])
"""

from __future__ import annotations

from flipcheck.model.batch_recovery import RULE_OF, SYSTEM, Config, State, enabled, initial_state, is_done, step
from flipcheck.reference_impl.batch_recovery_variants import make_job

from .batch_recovery_properties import BATCH_PROPERTIES, LIVENESS, REFINEMENT, check_step
from .explore import Exploration, explore
from .refinement import Step, StepMonitor, applied, replay_actions
from .violation import Violation

__all__ = ["explore_model", "explore_job", "replay", "Step", "properties_named", "stuck"]


def properties_named(names=None) -> tuple:
    if names is None:
        return BATCH_PROPERTIES
    return tuple(p for p in BATCH_PROPERTIES if p.name in set(names))


def stuck(config: Config, state: State) -> Violation:
    return Violation(LIVENESS, f"nothing can happen any more and the job is not done (phase {state.phase}, "
                               f"tasks {list(state.status)})", state.status)


def _count_crashes(result: Exploration, crashes: int) -> Exploration:
    result.crash_points = crashes
    return result


def explore_model(config: Config, properties=None, check: bool = True, stop_at_first: bool = True,
                  max_states: int | None = None) -> Exploration:
    """The specification alone; the result has ``crash_points``."""
    props = properties_named(properties) if check else ()
    crashes = 0

    def successors(spec):
        nonlocal crashes
        actions = enabled(config, spec)
        if not actions and not is_done(config, spec) and (properties is None or LIVENESS in properties):
            yield ("stuck",), spec, [stuck(config, spec)]
        for action in actions:
            crashes += action[0] == "crash"
            after = step(config, spec, action)
            yield action, after, check_step(config, action, spec, after, props) if props else []

    result = explore([initial_state(config)], successors, max_states=max_states, stop_at_first=stop_at_first)
    return _count_crashes(result, crashes)


def explore_job(config: Config, variant: str = "flink", refinement: bool = True, check: bool = True,
                properties=None, stop_at_first: bool = True, max_states: int | None = None,
                coverage: dict | None = None) -> Exploration:
    """An implementation next to the specification (``refinement``) with the property monitors.
    A ``coverage`` counter gets one count per generated step under its rule (``RULE_OF``)."""
    props = properties_named(properties) if check else ()
    job = make_job(config, variant)
    crashes = 0

    def successors(state):
        nonlocal crashes
        spec, snapshot = state
        job.restore(snapshot)
        before = job.view()
        actions = job.enabled()
        if refinement and actions != enabled(config, spec):
            yield ("enabled",), state, [Violation(REFINEMENT, f"enabled {actions}, the model enables {enabled(config, spec)}")]
            return
        if not actions and not is_done(config, before) and (check and (properties is None or LIVENESS in properties)):
            yield ("stuck",), state, [stuck(config, before)]
        for action in actions:
            crashes += action[0] == "crash"
            if coverage is not None:
                coverage[RULE_OF[action[0]]] += 1
            job.restore(snapshot)
            crash = applied(job, action)
            if crash is not None:
                yield action, state, [crash]
                continue
            after = job.view()
            problems = check_step(config, action, before, after, props) if props else []
            spec2 = None
            if refinement:
                spec2 = step(config, spec, action)
                if spec2 != after:
                    problems.append(Violation(REFINEMENT, f"{action}: implementation {after}, model {spec2}"))
            yield action, (spec2, job.snapshot()), problems

    initial = (initial_state(config) if refinement else None, job.snapshot())
    result = explore([initial], successors, max_states=max_states, stop_at_first=stop_at_first)
    return _count_crashes(result, crashes)


def replay(config: Config, actions, variant: str = "flink", refinement: bool = True,
           stop_at_first: bool = True) -> list[Step]:
    """Run ``actions`` on ``variant`` with every property (and the model, with ``refinement``);
    a job that can do nothing more without being done gets a last ``stuck`` step."""
    def at_end(last):
        return None if is_done(config, last) or job.enabled() else Step(("stuck",), last, last, (stuck(config, last),))

    job = make_job(config, variant)
    return replay_actions(SYSTEM, job, config, actions, StepMonitor(lambda c: c, check_step), variant=variant,
                          refinement=refinement, stop_at_first=stop_at_first, at_end=at_end)

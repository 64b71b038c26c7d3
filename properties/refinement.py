"""Running an engine next to its spec, one action at a time: replaying a trace, and the step
of a stateful machine.

The specs of batch recovery and split assignment are action systems
(:class:`flipcheck.model.actions.ActionSystem`), and their engines offer the same three
methods: ``enabled()``, ``apply(action)`` and ``view()``. At every step the engine's view must
equal the spec's (``refines_model``), and the design's step properties must hold.

Example
-------
>>> from flipcheck.model.actions import ActionSystem
>>> class Counter:                                   # an engine that forgets to stop at 2
...     def __init__(self): self.n = 0
...     def enabled(self): return [("inc",)]
...     def apply(self, action): self.n += 1
...     def view(self): return self.n
>>> spec = ActionSystem(lambda c: 0, lambda c, n: [("inc",)] if n < 2 else [], lambda c, n, a: n + 1)
>>> steps = replay_actions(spec, Counter(), None, [("inc",)] * 3, StepMonitor.none(), variant="counter",
...                        check_enabled=True)
>>> [(s.action, s.after, [v.property for v in s.violations]) for s in steps]
[(('inc',), 1, []), (('inc',), 2, []), (('enabled',), 2, ['refines_model'])]
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from flipcheck.model.actions import ActionSystem

from .violation import Violation

__all__ = ["REFINEMENT", "Step", "StepMonitor", "applied", "replay_actions", "refining_act"]

# The property an engine violates when its view or its enabled actions differ from the spec's.
REFINEMENT = "refines_model"


class Step(NamedTuple):
    action: tuple
    before: Any
    after: Any
    violations: tuple


class StepMonitor(NamedTuple):
    """The design's step properties: ``check(history, action, before, after)`` returns
    violations; ``history`` starts as ``start(config)`` and moves on with ``advance``. With
    ``check_start``, the initial view is checked first (as ``check(history, None, None, view)``)."""

    start: Callable[[Any], Any]
    check: Callable[[Any, tuple | None, Any, Any], list]
    advance: Callable[[Any, tuple, Any, Any], Any] = lambda history, action, before, after: history
    check_start: bool = False

    @staticmethod
    def none() -> "StepMonitor":
        return StepMonitor(lambda config: None, lambda history, action, before, after: [])


def applied(job, action: tuple) -> Violation | None:
    """Apply ``action`` to the engine; a crash of the code under test is a ``crash`` violation."""
    try:
        job.apply(action)
    except Exception as error:  # noqa: BLE001 - a crash of the code under test is a finding
        return Violation("crash", f"{action}: {type(error).__name__}: {error}")
    return None


def replay_actions(system: ActionSystem, job, config, actions: Sequence[tuple], monitor: StepMonitor, *,
                   variant: str, refinement: bool = True, stop_at_first: bool = True, check_enabled: bool = False,
                   at_end: Callable[[Any], Step | None] | None = None) -> list[Step]:
    """Run ``actions`` on ``job`` (an engine running ``variant``), checking the monitor's
    properties and, with ``refinement``, the spec at every step. An action the engine does not
    enable, or a crash, ends the run; so does the first violation with ``stop_at_first``. With
    ``check_enabled`` the engine's enabled actions must also equal the spec's after every step.
    When every action ran, ``at_end(last view)`` may add a final step (a stuck job)."""
    spec = system.initial_state(config)
    history = monitor.start(config)
    before = job.view()
    if monitor.check_start:
        initial = monitor.check(history, None, None, before)
        if initial:
            return [Step(("start",), before, before, tuple(initial))]
    steps: list[Step] = []
    for action in actions:
        if action not in job.enabled():
            steps.append(Step(action, before, before, (Violation(
                REFINEMENT, f"{action} is not enabled in {variant} (enabled: {job.enabled()})"),)))
            return steps
        crash = applied(job, action)
        if crash is not None:
            steps.append(Step(action, before, before, (crash,)))
            return steps
        after = job.view()
        found = monitor.check(history, action, before, after)
        if refinement:
            spec = system.step(config, spec, action)
            if system.view(config, spec) != after:
                found.append(Violation(REFINEMENT, f"{action}: implementation {after}, model {system.view(config, spec)}"))
        steps.append(Step(action, before, after, tuple(found)))
        history = monitor.advance(history, action, before, after)
        before = after
        if found and stop_at_first:
            return steps
        if check_enabled and refinement and job.enabled() != system.enabled(config, spec):
            steps.append(Step(("enabled",), after, after, (Violation(
                REFINEMENT, f"enabled actions {job.enabled()}, the model enables {system.enabled(config, spec)}"),)))
            return steps
    final = at_end(before) if at_end is not None else None
    return steps + [final] if final is not None else steps


def refining_act(system: ActionSystem, config, spec, job, choose: Callable[[list], tuple], trace: list,
                 refinement: bool) -> tuple:
    """One rule of a stateful machine: the engine's enabled actions must be the spec's, one of
    them (``choose(actions)``) is applied to both, and the views must agree. Appends the action
    to ``trace``; returns ``(action, before, after, spec)``. Failures are AssertionErrors whose
    text starts with the violated property."""
    actions = job.enabled()
    if refinement:
        expected = system.enabled(config, spec)
        assert actions == expected, f"{REFINEMENT}: {config} after {trace}: enabled {actions}, model {expected}"
    action = choose(actions)
    trace.append(action)
    before = job.view()
    job.apply(action)
    after = job.view()
    if refinement:
        spec = system.step(config, spec, action)
        expected_view = system.view(config, spec)
        assert after == expected_view, f"{REFINEMENT}: {config} after {trace}: {after} vs model {expected_view}"
    return action, before, after, spec

"""Random runs of an action system (:class:`flipcheck.model.actions.ActionSystem`): a
configuration's actions drawn one at a time, each enabled in the spec after the ones before.

Disruptive actions (failures, crashes, expiries) are drawn less often than the protocol's own
steps, so that random runs get far before something breaks them.

Example
-------
>>> from flipcheck.generators.choices import SeededChooser
>>> from flipcheck.model.actions import ActionSystem
>>> counter = ActionSystem(lambda limit: 0, lambda limit, n: [("inc",), ("fail",)] if n < limit else [],
...                        lambda limit, n, action: n + 1)
>>> choose = lambda chooser, options: calm_choice(chooser, options, ("fail",), 0.1)
>>> actions = random_walk(SeededChooser.for_case("doc", 1), counter, 3, 10, choose)
>>> len(actions)                    # the counter stops after three actions
3
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from flipcheck.model.actions import ActionSystem

from .choices import Chooser, choice

__all__ = ["random_walk", "calm_choice"]


def calm_choice(chooser: Chooser, options: Sequence[tuple], disruptive: Sequence[str], disruption: float) -> tuple:
    """One of ``options``: with probability ``disruption`` any of them, otherwise one whose
    name is not ``disruptive`` (when there is one)."""
    calm = [a for a in options if a[0] not in disruptive]
    return choice(chooser, calm if calm and not chooser.boolean(disruption) else options)


def random_walk(chooser: Chooser, system: ActionSystem, config: Any, steps: int,
                choose: Callable[[Chooser, list], tuple]) -> tuple:
    """Up to ``steps`` actions from the initial state, each ``choose(chooser, enabled)``."""
    state, actions = system.initial_state(config), []
    for _ in range(steps):
        options = system.enabled(config, state)
        if not options:
            break
        action = choose(chooser, options)
        actions.append(action)
        state = system.step(config, state, action)
    return tuple(actions)

"""Action systems: the shape the batch-recovery and split-assignment specs share.

Such a spec is three functions of a configuration: ``initial_state(config)``,
``enabled(config, state)`` (the actions that may happen next) and ``step(config, state,
action)`` (the state after one of them), and optionally ``view(config, state)``, what an
implementation's state is compared with. :class:`ActionSystem` bundles them, so that running
a sequence of actions (here), replaying one against an engine (``properties/refinement.py``)
and a stateful machine's step (``generators``) are written once.

Example
-------
>>> counter = ActionSystem(lambda limit: 0, lambda limit, n: [("inc",)] if n < limit else [],
...                        lambda limit, n, action: n + 1)
>>> run(counter, 3, [("inc",), ("inc",)])
2
>>> run(counter, 1, [("inc",), ("inc",)])
Traceback (most recent call last):
...
ValueError: ('inc',) is not enabled
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple

__all__ = ["ActionSystem", "run", "same_state"]


def same_state(config: Any, state: Any) -> Any:
    """The default view: an implementation shows the whole state."""
    return state


class ActionSystem(NamedTuple):
    initial_state: Callable[[Any], Any]
    enabled: Callable[[Any, Any], list]
    step: Callable[[Any, Any, tuple], Any]
    view: Callable[[Any, Any], Any] = same_state


def run(system: ActionSystem, config: Any, actions: Iterable[tuple], state: Any = None) -> Any:
    """Apply ``actions`` in order from ``state`` (default: the initial state); each must be enabled."""
    state = system.initial_state(config) if state is None else state
    for action in actions:
        if action not in system.enabled(config, state):
            raise ValueError(f"{action!r} is not enabled")
        state = system.step(config, state, action)
    return state

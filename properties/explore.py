"""Generic explicit-state exploration: breadth-first search over hashable states.

Nothing here knows about checkpoints. A caller passes initial states and a successor function
``successors(state) -> iterable of (label, next_state, problems)`` where ``problems`` is a
(possibly empty) sequence of violations found on that transition; ``check_state`` may add
violations of a state invariant. Breadth-first order makes the first violation found one with
a **shortest** trace, which :func:`explore` rebuilds from parent pointers.

Example
-------
>>> def successors(n):                       # count up to 5, flag reaching 4
...     return [("+1", n + 1, ["reached 4"] if n + 1 == 4 else [])] if n < 5 else []
>>> result = explore([0], successors)
>>> result.states, result.complete, result.trace, result.problems
(5, False, ['+1', '+1', '+1', '+1'], ['reached 4'])
>>> explore([0], successors, stop_at_first=False).states
6
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Sequence

__all__ = ["Exploration", "explore", "trace_to"]


@dataclass
class Exploration:
    """The outcome of a search.

    ``complete`` means every reachable state was expanded and no problem stopped the search;
    ``trace`` is the label sequence from an initial state to the first problem (or ``[]``).
    """

    states: int = 0
    transitions: int = 0
    depth: int = 0
    complete: bool = False
    problems: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    final_state: Any = None
    seconds: float = 0.0

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else float("inf")


def trace_to(parents: dict, state: Hashable) -> tuple[list, list]:
    """Labels and states along the parent pointers from an initial state to ``state``."""
    labels, states = [], [state]
    while True:
        parent = parents[state]
        if parent is None:
            break
        state, label = parent
        labels.append(label)
        states.append(state)
    return labels[::-1], states[::-1]


def explore(
    initial: Iterable[Hashable],
    successors: Callable[[Hashable], Iterable[tuple[Any, Hashable, Sequence]]],
    *,
    check_state: Callable[[Hashable], Sequence] | None = None,
    max_states: int | None = None,
    stop_at_first: bool = True,
) -> Exploration:
    """Breadth-first search from ``initial``; see the module docstring for the contract.

    ``max_states`` bounds the number of distinct states (the result is then not complete).
    With ``stop_at_first=False`` the search goes on after a problem and reports the first one.
    """
    started = time.perf_counter()
    result = Exploration()
    parents: dict = {}
    frontier: deque = deque()
    found = False

    def record(problems, state, labels):
        nonlocal found
        if not found:
            found = True
            result.problems, result.final_state, result.trace = list(problems), state, labels

    for state in initial:
        if state not in parents:
            parents[state] = None
            frontier.append((state, 0))
            if check_state is not None and (bad := check_state(state)):
                record(bad, state, [])
    truncated = False
    while frontier and not (found and stop_at_first):
        state, depth = frontier.popleft()
        result.depth = max(result.depth, depth)
        for label, nxt, problems in successors(state):
            result.transitions += 1
            if problems:
                record(problems, nxt, trace_to(parents, state)[0] + [label])
            if nxt not in parents:
                if max_states is not None and len(parents) >= max_states:
                    truncated = True
                    continue
                parents[nxt] = (state, label)
                frontier.append((nxt, depth + 1))
                if check_state is not None and (bad := check_state(nxt)):
                    record(bad, nxt, trace_to(parents, nxt)[0])
            if found and stop_at_first:
                break
    result.states = len(parents)
    result.complete = not frontier and not truncated and not found
    result.seconds = time.perf_counter() - started
    return result

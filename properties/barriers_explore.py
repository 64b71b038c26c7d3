"""Exhaustive exploration of one task's barrier handling for small bounds.

The explored state is the model's handler state and the channel environment
(:mod:`flipcheck.model.channel_env`), optionally with an implementation's state (a snapshot of
a :class:`~flipcheck.reference_impl.barriers.task.Task`) and the property monitors of
:mod:`.barrier_properties` (history variables). Every transition is one valid input event with
checkpoint ids ``1..max_id``; records (``D``) leave the state unchanged but their transitions are
checked too. Search is breadth-first (:mod:`.explore`), so a violation comes with a shortest
input sequence.

* :func:`explore_model` — the specification alone (the distinct-state counts pinned in
  ``tests/manifests/barriers.json``), optionally checking every property on every path.
* :func:`explore_task` — an implementation (Flink's or a named variant) side by side with the
  model: refinement (same outputs and view) and/or every property.

Example
-------
>>> from flipcheck.model.barriers import Config
>>> explore_model(Config(channels=2), max_id=2).states
143
>>> result = explore_task(Config(channels=2), "eop-not-aligned", max_id=2)
>>> [v.property for v in result.problems], result.trace
(['refines_model', 'end_of_partition_alignment'], [('B', 1, 0), ('E', 1)])
"""

from __future__ import annotations

from typing import Iterable

from flipcheck.model.barriers import Config, initial_state, step, view
from flipcheck.model.channel_env import apply, candidates, enabled, initial_env
from flipcheck.reference_impl.barriers import make_task

from .barriers_properties import MONITORS, Monitor
from .explore import Exploration, explore
from .violation import Violation

__all__ = ["explore_model", "explore_task", "monitors_for", "EXPECTED_FAILURES", "expected_skips"]

# Properties Flink's own handler violates, with the reason (see docs/barriers.md, "Findings").
EXPECTED_FAILURES = {
    ("at-least-once", "triggered_ids_increase"):
        "CheckpointBarrierTracker's single-channel fast path triggers a newer checkpoint without "
        "dropping an older pending one, which completes later when the last channel ends",
    ("at-least-once", "trigger_abort_exclusive"):
        "the fast path does not record the id it triggered (latestPendingCheckpointID), so a "
        "cancellation marker of that checkpoint arriving next on the same channel aborts it again",
}


def monitors_for(config: Config, skip: Iterable[str] = ()) -> tuple[Monitor, ...]:
    """The property monitors that apply to ``config``, minus ``skip``."""
    skip = set(skip)
    return tuple(m for m in MONITORS if m.applies(config) and m.name not in skip)


def expected_skips(config: Config, skip) -> set:
    if skip is not None:
        return set(skip)
    return {name for (mode, name) in EXPECTED_FAILURES if mode == config.mode}


def _monitor_step(config, monitors, mstates, event, outputs, before, after, problems):
    nxt = []
    for mon, m in zip(monitors, mstates):
        m, message = mon.step(config, m, event, outputs, before, after)
        nxt.append(m)
        if message:
            problems.append(Violation(mon.name, message))
    return tuple(nxt)


def explore_model(config: Config, max_id: int = 3, check_properties: bool = False, skip: Iterable[str] | None = None,
                  max_states: int | None = None) -> Exploration:
    """Explore the specification with ids ``1..max_id``; state = (handler state, environment[,
    monitor states]). ``skip`` names properties not to check (default: the expected failures)."""
    events = candidates(config, max_id)
    monitors = monitors_for(config, expected_skips(config, skip)) if check_properties else ()

    def successors(state):
        spec, env, mstates = state
        before = view(config, spec)
        for event in enabled(config, env, before.blocked, max_id, events):
            spec2, outputs = step(config, spec, event)
            problems: list = []
            if monitors:
                after = view(config, spec2)
                mstates2 = _monitor_step(config, monitors, mstates, event, outputs, before, after, problems)
            else:
                mstates2 = mstates
            yield event, (spec2, apply(env, event), mstates2), problems

    start = (initial_state(config), initial_env(config), tuple(m.start(config) for m in monitors))
    return explore([start], successors, max_states=max_states)


def explore_task(config: Config, handler: str = "flink", max_id: int = 3, check_properties: bool = True,
                 refinement: bool = True, skip: Iterable[str] | None = None,
                 max_states: int | None = None) -> Exploration:
    """Explore an implementation next to the model; the environment follows the
    implementation's blocked channels. Problems: property violations and ``refines_model``."""
    events = candidates(config, max_id)
    monitors = monitors_for(config, expected_skips(config, skip)) if check_properties else ()
    probe = make_task(config, handler)

    def successors(state):
        spec, env, snapshot, mstates = state
        before = probe.restore(snapshot).view()
        for event in enabled(config, env, before.blocked, max_id, events):
            task = make_task(config, handler).restore(snapshot)
            outputs = task.process(event)
            after = task.view()
            problems: list = []
            if refinement:
                spec2, expected = step(config, spec, event)
                if expected != outputs or view(config, spec2) != after:
                    problems.append(Violation("refines_model", f"{event}: outputs {list(outputs)} {after}, model "
                                                                f"{list(expected)} {view(config, spec2)}"))
            else:
                spec2 = spec
            mstates2 = _monitor_step(config, monitors, mstates, event, outputs, before, after, problems)
            yield event, (spec2, apply(env, event), task.snapshot(), mstates2), problems

    start = (initial_state(config) if refinement else None, initial_env(config), probe.snapshot(),
             tuple(m.start(config) for m in monitors))
    return explore([start], successors, max_states=max_states)

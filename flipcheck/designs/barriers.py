"""The ``barriers`` suite of ``flipcheck verify``: task-side alignment with finished channels.

Drivers, for the engine's handler (or a named variant of it):

* ``exploration`` — every reachable state of 3 channels, checkpoint ids 1..2, in every
  configuration (mode × feature flag × alignment timeout), with every property monitored and
  the implementation compared with the model at each step (``refines_model``);
* ``hypothesis`` — the stateful machine of each mode, random configurations and schedules.

Flink's own tracker breaks two properties (docs/barriers.md, "Findings"); those are expected
failures and not counted, for the engine and for variants alike.

>>> rows = run_barriers_suite(budget_seconds=4)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis'], 0)
"""

from __future__ import annotations

import time
from collections import Counter

from flipcheck.model.barriers import MODES, UNALIGNED, Config
from flipcheck.properties.barrier_explore import explore_task
from flipcheck.properties.barrier_properties import PROPERTY_NAMES
from flipcheck.reference_impl.barriers import HANDLERS

__all__ = ["run_barriers_suite", "all_configs"]


def all_configs(channels: int = 3) -> list[Config]:
    return [
        Config(channels, mode, flag, timeout)
        for mode in MODES
        for flag in (True, False)
        for timeout in (False, True)
        if not (timeout and mode != UNALIGNED)
    ]


def run_barriers_suite(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    handler = variant or "flink"
    if handler not in HANDLERS:
        raise ValueError(f"unknown handler {handler!r} (expected one of {', '.join(sorted(HANDLERS))})")
    names = tuple(dict.fromkeys((*PROPERTY_NAMES, "refines_model")))
    started = time.perf_counter()
    deadline = started + budget_seconds * 0.7

    # Smallest configurations first, so that a small budget still covers every mode.
    states, found = 0, Counter()
    for channels in (2, 3):
        for config in all_configs(channels):
            if time.perf_counter() > deadline:
                break
            result = explore_task(config, handler, max_id=2)
            states += result.states
            for name in {v.property for v in result.problems}:
                found[name] += 1
    rows = [{"name": n, "cases": states, "violations": found[n], "driver": "exploration"} for n in names]

    remaining = max(0.5, budget_seconds - (time.perf_counter() - started))
    examples, failures = _stateful(handler, remaining, names)
    rows += [{"name": n, "cases": examples, "violations": failures[n], "driver": "hypothesis"} for n in names]
    return rows


def _stateful(handler: str, budget_seconds: float, names: tuple) -> tuple[int, Counter]:
    """Run each mode's stateful machine in batches until the budget; a failing run counts one
    violation of the property its assertion names."""
    from hypothesis import HealthCheck, Phase, settings
    from flipcheck.generators.barrier_machine import barrier_machine

    deadline = time.perf_counter() + budget_seconds
    runs, failures = 0, Counter()
    batch = 0
    while time.perf_counter() < deadline:
        for mode in MODES:
            run_settings = settings(max_examples=20, stateful_step_count=30, deadline=None, database=None,
                                    derandomize=False, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            machine = barrier_machine(mode, handler)
            try:
                _seeded_run(machine, run_settings, batch)
            except AssertionError as failure:
                name = str(failure).split(":")[0]
                failures[name if name in names else "refines_model"] += 1
            runs += run_settings.max_examples
        batch += 1
    return runs, failures


def _seeded_run(machine, run_settings, batch: int) -> None:
    import random

    from hypothesis.stateful import run_state_machine_as_test

    # run_state_machine_as_test has no seed argument; seed the global RNG hypothesis draws from
    # when derandomize is off, so a batch number reproduces the batch.
    state = random.getstate()
    random.seed(f"barriers-{batch}")
    try:
        run_state_machine_as_test(machine, settings=run_settings)
    finally:
        random.setstate(state)

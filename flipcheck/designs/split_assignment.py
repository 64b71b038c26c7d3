"""The ``split-assignment`` suite of ``flipcheck verify``: FLIP-27 split assignment with checkpoints.

Drivers, for Flink's implementation (or a named variant of it):

* ``exploration`` — breadth-first, every reachable state of growing configurations (1-2
  readers, 1-2 splits, 1-2 checkpoints, 1-2 failures), every property on every step and the
  implementation compared with the specification at each (``refines_model``);
* ``liveness`` — the reachable graph of the smallest configurations: from every state, a run
  still reads every split (``every_split_eventually_read``);
* ``seed-designs`` — the specification of each of the seed's three designs explored with every
  property (coordinator, enumerator task with persistent channels, reconnecting enumerator task);
* ``seeded`` and ``hypothesis`` — random configurations (up to 3 readers, 4 splits, 3 checkpoints,
  2 failures) and runs of up to 40 actions (:mod:`flipcheck.generators.split_assignment`);
* ``stateful`` — the hypothesis state machine (implementation next to the model).

Cases count explored states for the exploration drivers, runs otherwise.

>>> rows = run_split_assignment_suite(budget_seconds=3)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis', 'liveness', 'seed-designs', 'seeded', 'stateful'], 0)
>>> case = generate_case(SeededChooser.for_case("doc", 1))
>>> check_case(case, "flink")
[]
"""

from __future__ import annotations

import time
from collections import Counter

from flipcheck.designs.drivers import hypothesis_driver, seeded_driver
from flipcheck.generators.choices import SeededChooser
from flipcheck.generators.split_assignment import generate_case as _generate
from flipcheck.model.split_assignment import DESIGNS, Config
from flipcheck.properties.split_assignment_explore import explore_job, explore_liveness, explore_model, replay
from flipcheck.properties.split_assignment_properties import LIVENESS, PROPERTY_NAMES, REFINEMENT
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.split_assignment_variants import ENGINE, MUTANTS, VARIANTS

__all__ = [
    "run_split_assignment_suite", "generate_case", "check_case", "render_case", "MUTANTS",
    "EXPLORATION_CONFIGS", "LIVENESS_CONFIGS", "ROW_NAMES", "mutant_catalogue", "hunt_mutant",
]

# Smallest first, so that a small budget still covers the basic interleavings.
EXPLORATION_CONFIGS = (
    Config(1, 1, 1, 1), Config(1, 2, 2, 1), Config(2, 1, 1, 1), Config(1, 2, 2, 2),
    Config(2, 2, 1, 1), Config(2, 2, 1, 2), Config(2, 2, 2, 1),
)
LIVENESS_CONFIGS = (Config(1, 2, 2, 1), Config(2, 2, 1, 1))
ROW_NAMES = (*PROPERTY_NAMES, REFINEMENT)


def generate_case(chooser) -> tuple:
    """A ``(config, actions)`` case for Flink's design (see :mod:`flipcheck.generators.split_assignment`)."""
    return _generate(chooser)


def check_case(case: tuple, variant: str = ENGINE) -> list[Violation]:
    """Every property (and refinement) on the run ``case`` of ``variant``, up to the first violating step."""
    config, actions = case
    steps = replay(config, actions, variant)
    return [v for s in steps for v in s.violations]


def render_case(case: tuple, out_path: str, variant: str = ENGINE) -> str:
    """A message-sequence chart of the run (up to its first violation)."""
    from flipcheck.render.split_assignment import render_chart

    config, actions = case
    return render_chart(config, replay(config, actions, variant), out_path)


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (expected one of {', '.join(VARIANTS)})")
    return variant


def run_split_assignment_suite(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names a variant (default ``flink``)."""
    name = _check_variant(variant or ENGINE)
    started = time.perf_counter()
    rows: list[dict] = []

    # Exploration with refinement: a variant diverging from the model is a finding.
    deadline = started + budget_seconds * 0.35
    states, found = 0, Counter()
    for config in EXPLORATION_CONFIGS:
        if time.perf_counter() > deadline and states:
            break
        result = explore_job(config, name, refinement=True, stop_at_first=False)
        states += result.states
        for prop in {v.property for v in result.problems}:
            found[prop] += 1
    rows += [{"name": n, "cases": states, "violations": found[n], "driver": "exploration"} for n in ROW_NAMES]

    graph_states, stuck = 0, 0
    for config in LIVENESS_CONFIGS:
        graph, problems = explore_liveness(config, name)
        graph_states += len(graph)
        stuck += bool(problems)
    rows.append({"name": LIVENESS, "cases": graph_states, "violations": stuck, "driver": "liveness"})

    # The seed's designs (the specification itself), smallest configuration that shows each.
    design_states, design_found = 0, Counter()
    for design in DESIGNS:
        result = explore_model(Config(1, 2, 2, 1, design), stop_at_first=False)
        design_states += result.states
        for prop in {v.property for v in result.problems}:
            design_found[prop] += 1
    rows += [{"name": n, "cases": design_states, "violations": design_found[n], "driver": "seed-designs"}
             for n in PROPERTY_NAMES]

    remaining = max(0.3, budget_seconds - (time.perf_counter() - started))
    check = lambda case: check_case(case, name)  # noqa: E731
    for tally in (seeded_driver(generate_case, check, budget_seconds=remaining * 0.4, seed="verify-split-assignment"),
                  hypothesis_driver(generate_case, check, budget_seconds=remaining * 0.35)):
        rows += [{"name": n, "cases": tally.cases, "violations": tally.violations[n], "driver": tally.driver}
                 for n in ROW_NAMES]
    runs, failures = _stateful(name, max(0.2, budget_seconds - (time.perf_counter() - started)))
    rows += [{"name": n, "cases": runs, "violations": failures[n], "driver": "stateful"} for n in ROW_NAMES]
    return rows


def _stateful(variant: str, budget_seconds: float) -> tuple[int, Counter]:
    """The state machine in seeded batches until the budget; a failing batch counts one
    violation of the property its assertion names."""
    from hypothesis import settings

    from flipcheck.generators.split_assignment import quick_settings, split_machine
    from flipcheck.designs.barriers import _seeded_run  # seeds the RNG hypothesis draws from

    deadline = time.perf_counter() + budget_seconds
    runs, failures, batch = 0, Counter(), 0
    machine = split_machine(variant)
    batch_settings = settings(quick_settings(20), derandomize=False, phases=quick_settings().phases[:2])
    while time.perf_counter() < deadline or batch == 0:
        try:
            _seeded_run(machine, batch_settings, batch)
        except AssertionError as failure:
            prop = str(failure).split(":")[0]
            failures[prop if prop in ROW_NAMES else REFINEMENT] += 1
        runs += batch_settings.max_examples
        batch += 1
    return runs, failures


# -- the mutant catalogue (flipcheck mutants) ------------------------------------------------------


def mutant_catalogue() -> list:
    """This suite's entries of :func:`flipcheck.designs.mutants.catalogue`."""
    from flipcheck.designs.mutants import Mutant

    return [Mutant(name, "split-assignment", name, issue, description) for name, (issue, description) in MUTANTS.items()]


def hunt_mutant(mutant, budget_seconds: float):
    """Breadth-first exploration, properties only (no model), smallest configurations first: the
    first trace found is a shortest one."""
    from flipcheck.designs.mutants import Detection

    started = time.perf_counter()
    states = 0
    for config in (*EXPLORATION_CONFIGS[:4], Config(2, 2, 1, 2)):
        if time.perf_counter() - started > budget_seconds:
            break
        result = explore_job(config, mutant.variant, refinement=False)
        states += result.states
        if result.problems:
            return Detection(True, result.problems[0].property, "exploration", states,
                             time.perf_counter() - started, len(result.trace), (config, tuple(result.trace)))
    return Detection(False, seconds=time.perf_counter() - started)

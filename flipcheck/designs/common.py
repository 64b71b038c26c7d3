"""Pieces the design suites of ``flipcheck verify`` share: result rows, random cases per kind
through both drivers, batches of a stateful machine, mutant lists.

A design's ``flipcheck/designs/<design>.py`` names its kinds of case, its property groups and its
state machine; these functions run them the same way for every design.

Example
-------
>>> from flipcheck.properties.violation import Violation
>>> def generate(chooser, kind):
...     return chooser.integer(0, 9)
>>> rows = random_rows(("small",), {"small": ("is_small",)}, generate,
...                    lambda n: [Violation("is_small", "big")] if n > 8 else [], budget_seconds=0.4)
>>> sorted({row["driver"] for row in rows}), all(row["cases"] > 0 for row in rows)
(['hypothesis', 'seeded'], True)
"""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Callable, Iterable, Sequence

__all__ = ["check_variant", "first_paragraph", "rows", "merged", "random_rows", "stateful_rows", "mutant_list", "hunt_with", "seeded_run"]


def rows(names: Iterable[str], cases: int, found: Counter, driver: str) -> list[dict]:
    """One ``{"name", "cases", "violations", "driver"}`` row per property name."""
    return [{"name": n, "cases": cases, "violations": found[n], "driver": driver} for n in names]


def merged(result: list[dict]) -> list[dict]:
    """One row per (property, driver): cases and violations summed over the rows that share it
    (a property checked on several kinds of case), in first-seen order."""
    combined: dict = {}
    for row in result:
        key = (row["name"], row["driver"])
        if key in combined:
            combined[key]["cases"] += row["cases"]
            combined[key]["violations"] += row["violations"]
        else:
            combined[key] = dict(row)
    return list(combined.values())


def random_rows(kinds: Sequence[str], groups: dict, generate: Callable, check: Callable,
                budget_seconds: float, suite: str | None = None) -> list[dict]:
    """Each kind of case through the seeded and the hypothesis driver, an equal share of the
    budget each; ``generate(chooser, kind)``, ``check(case) -> violations``; a kind's rows are
    its group's properties. ``suite``: the generated suite whose random space ``KIND@verify``
    generates the same seeded cases (its module's ``CASE_KINDS``), and ``KIND@choices-…`` the
    same hypothesis case, so each has a case id."""
    from flipcheck.designs.drivers import hypothesis_driver, seeded_driver
    from flipcheck.designs.generated_suite import KIND_SEPARATOR

    result = []
    share = budget_seconds / (2 * len(kinds))
    for kind in kinds:
        def generate_kind(chooser, kind=kind):
            return generate(chooser, kind)

        seed = f"{kind}{KIND_SEPARATOR}verify" if suite else f"verify-{kind}"
        for tally in (seeded_driver(generate_kind, check, budget_seconds=share, seed=seed, suite=suite),
                      hypothesis_driver(generate_kind, check, budget_seconds=share, suite=suite,
                                        seed_prefix=f"{kind}{KIND_SEPARATOR}")):
            result += rows(groups[kind], tally.cases, tally.violations, tally.driver)
    return result


def stateful_rows(machine: Callable, names: Sequence[str], fallback: str, seed: str, budget_seconds: float,
                  steps: int = 30, examples: int = 25) -> list[dict]:
    """Run ``machine()`` (a RuleBasedStateMachine class) in seeded batches until the budget (at
    least once); a failing run counts one violation of the property its assertion names
    (``fallback`` if it names none)."""
    from hypothesis import HealthCheck, Phase, settings

    deadline = time.perf_counter() + budget_seconds
    runs, failures, batch = 0, Counter(), 0
    while time.perf_counter() < deadline or not runs:
        run_settings = settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                                derandomize=False, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        try:
            seeded_run(machine(), run_settings, f"{seed}-{batch}")
        except AssertionError as failure:
            name = str(failure).split(":")[0]
            failures[name if name in names else fallback] += 1
        runs += examples
        batch += 1
    return rows(names, runs, failures, "stateful")


def seeded_run(machine, run_settings, seed: str) -> None:
    """Run a hypothesis state machine (an instance) once, reproducibly for ``seed``.

    ``run_state_machine_as_test`` has no seed argument; with derandomize off hypothesis draws
    from the global RNG, so seeding it (and restoring it after) makes a seed reproduce the run.
    """
    from hypothesis.stateful import run_state_machine_as_test

    state = random.getstate()
    random.seed(seed)
    try:
        run_state_machine_as_test(machine, settings=run_settings)
    finally:
        random.setstate(state)


def check_variant(variant: str, lookup: Callable[[str], type]) -> str:
    """``variant`` if the registry's class lookup finds it (a registered name, or a user variant's
    spec ``FILE.py:CLASS`` / ``MODULE:CLASS`` of the registry's kind); the lookup's ValueError,
    naming the known names or the spec's problem, otherwise."""
    lookup(variant)
    return variant


def first_paragraph(text: str | None) -> str:
    """A docstring's first paragraph on one line (a mutant's description)."""
    return " ".join((text or "").strip().split("\n\n")[0].split())


def mutant_list(suite: str, variants: dict) -> list:
    """:class:`flipcheck.designs.mutants.Mutant` s of a variant registry: id, FLINK issue, the first
    sentence of the docstring (the mechanism)."""
    from flipcheck.designs.contract import Mutant

    result = []
    for name, cls in variants.items():
        description = " ".join((cls.__doc__ or "").split())
        result.append(Mutant(name, suite, name, cls.flink_issue, description.split(". ")[0].rstrip(".") + "."))
    return result


def hunt_with(mutant, budget_seconds: float, steps: Sequence[tuple], driver: str, explore_case: Callable,
              generate_case: Callable, check_case: Callable, case_size: Callable):
    """Hunt a mutant: ``explore_case(unit, variant, refinement)`` for each ``(unit, refinement)``
    of ``steps`` until a violation, then seeded random cases until the budget. Returns a
    :class:`flipcheck.designs.mutants.Detection`."""
    from flipcheck.designs.drivers import seeded_driver
    from flipcheck.designs.contract import Detection

    started = time.perf_counter()
    covered = 0
    for unit, refinement in steps:
        if time.perf_counter() - started > budget_seconds:
            break
        violations, count, counterexample = explore_case(unit, mutant.variant, refinement)
        covered += count
        if violations:
            return Detection(True, violations[0].property, driver, covered, time.perf_counter() - started,
                             case_size(counterexample) if counterexample is not None else None, counterexample)
    tally = seeded_driver(generate_case, lambda case: check_case(case, mutant.variant), stop_at_first=True,
                          budget_seconds=max(0.0, budget_seconds - (time.perf_counter() - started)),
                          seed=f"mutant-{mutant.id}")
    if tally.first_violation is not None:
        case, violations = tally.first_violation
        return Detection(True, violations[0].property, "seeded", covered + tally.first_violation_case_number,
                         time.perf_counter() - started, case_size(case), case)
    return Detection(False, seconds=time.perf_counter() - started)

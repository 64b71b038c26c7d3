"""Checkpoint-plan algorithms, selectable by name.

>>> [name for name in PLAN_ALGORITHMS if name not in MAIN_ALGORITHMS]
['flink-before-22379', 'flink-before-22003', 'trigger-sources-only', 'flink-before-22863']

:func:`plan_algorithm` also takes a user's own subclass of :class:`FlinkPlanCalculator` by spec,
``path/to/file.py:Class`` or ``module:Class`` (:mod:`flipcheck.reference_impl.user_variants`):
the algorithm is its ``calculate`` method, like the registered calculators'. (The registry holds
functions, but the one user-facing base is the calculator: ``spec`` is the model's function.)
"""

from __future__ import annotations

from functools import cache
from typing import Callable

from flipcheck.model.jobgraph import JobGraph
from flipcheck.model.plan import PlanResult, checkpoint_plan

from ..user_variants import is_spec, lookup_variant
from .flink import FlinkPlanCalculator
from .variants import (
    FlinkBefore22003PlanCalculator,
    FlinkBefore22379PlanCalculator,
    FlinkBefore22863PlanCalculator,
    FlinkBefore40482PlanCalculator,
    NaivePlanCalculator,
    TriggerSourcesOnlyPlanCalculator,
    WikiAPlanCalculator,
    WikiBPlanCalculator,
)

__all__ = ["PLAN_ALGORITHMS", "PLAN_CALCULATORS", "MAIN_ALGORITHMS", "CORRECT_ALGORITHMS", "FlinkPlanCalculator",
           "plan_algorithm", "calculator_class"]

PLAN_CALCULATORS = {
    c.name: c
    for c in (
        FlinkPlanCalculator,
        NaivePlanCalculator,
        WikiAPlanCalculator,
        WikiBPlanCalculator,
        FlinkBefore40482PlanCalculator,
        FlinkBefore22379PlanCalculator,
        FlinkBefore22003PlanCalculator,
        TriggerSourcesOnlyPlanCalculator,
        FlinkBefore22863PlanCalculator,
    )
}
# The algorithms the issue names (engine, baseline, the seed's pseudocode, one bug); the others
# are mutants that re-create historical bugs and design alternatives.
MAIN_ALGORITHMS = ("spec", "flink", "naive", "wiki-a", "wiki-b", "flink-before-40482")
CORRECT_ALGORITHMS = ("spec", "flink", "naive", "wiki-a")

PLAN_ALGORITHMS: dict[str, Callable[[JobGraph], PlanResult]] = {"spec": checkpoint_plan}
PLAN_ALGORITHMS.update({name: cls().calculate for name, cls in PLAN_CALCULATORS.items()})


def plan_algorithm(name: str) -> Callable[[JobGraph], PlanResult]:
    """The algorithm ``name`` names, or the ``calculate`` of the user's calculator a spec names;
    ValueError otherwise."""
    if is_spec(name):
        return _user_calculator(name).calculate
    try:
        return PLAN_ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r} (expected one of {', '.join(sorted(PLAN_ALGORITHMS))})") from None


def calculator_class(name: str) -> type[FlinkPlanCalculator]:
    """The calculator class ``name`` names (``spec`` is the model's function, not a calculator), or
    the user's subclass of :class:`FlinkPlanCalculator` a spec names; ValueError otherwise."""
    return lookup_variant(name, PLAN_CALCULATORS, FlinkPlanCalculator, "plan algorithm")


@cache
def _user_calculator(spec: str) -> FlinkPlanCalculator:
    return calculator_class(spec)()

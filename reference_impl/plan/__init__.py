"""Checkpoint-plan algorithms, selectable by name.

>>> sorted(PLAN_ALGORITHMS)
['flink', 'flink-before-40482', 'naive', 'spec', 'wiki-a', 'wiki-b']
"""

from __future__ import annotations

from typing import Callable

from flipcheck.model.jobgraph import JobGraph
from flipcheck.model.plan import PlanResult, checkpoint_plan

from .flink import FlinkPlanCalculator
from .variants import FlinkBefore40482PlanCalculator, NaivePlanCalculator, WikiAPlanCalculator, WikiBPlanCalculator

__all__ = ["PLAN_ALGORITHMS", "PLAN_CALCULATORS", "plan_algorithm"]

PLAN_CALCULATORS = {
    c.name: c
    for c in (
        FlinkPlanCalculator,
        NaivePlanCalculator,
        WikiAPlanCalculator,
        WikiBPlanCalculator,
        FlinkBefore40482PlanCalculator,
    )
}

PLAN_ALGORITHMS: dict[str, Callable[[JobGraph], PlanResult]] = {"spec": checkpoint_plan}
PLAN_ALGORITHMS.update({name: cls().calculate for name, cls in PLAN_CALCULATORS.items()})


def plan_algorithm(name: str) -> Callable[[JobGraph], PlanResult]:
    try:
        return PLAN_ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r} (expected one of {', '.join(sorted(PLAN_ALGORITHMS))})") from None

"""The design registry: every design flipcheck checks, one line each.

``DESIGNS`` maps a design's name to its front-end module, which implements
:class:`~flipcheck.designs.contract.Design`, and its title. Modules are imported on first use, so
``flipcheck --help`` stays fast and a design whose module is not part of a build is reported
as unavailable instead of breaking the others. The order is the order of ``--suite all``.

Example
-------
>>> list(DESIGNS)[:3]
['plan', 'barriers', 'protocol']
>>> design("barriers").engine
'flink'
>>> print(designs_help().splitlines()[1])
  plan                  checkpoint plans with finished tasks (FLIP-147 trigger roots)
>>> design("nope")
Traceback (most recent call last):
...
KeyError: "unknown design 'nope' (expected one of plan, barriers, protocol, approximate-recovery, local-recovery, split-assignment, batch-recovery)"
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

from flipcheck.designs.contract import Design, DesignUnavailable

__all__ = ["DESIGNS", "Registered", "design", "title_of", "designs_help", "available_designs", "verify_design", "Design", "DesignUnavailable"]



class Registered(NamedTuple):
    module: str  # the front-end module, imported on first use
    title: str   # for --help and the docs index, without importing the module


DESIGNS = {
    "plan": Registered("flipcheck.designs.plan", "checkpoint plans with finished tasks (FLIP-147 trigger roots)"),
    "barriers": Registered("flipcheck.designs.barriers", "task-side barrier alignment with finished channels (FLIP-147)"),
    "protocol": Registered("flipcheck.designs.protocol", "the whole job: coordinator, tasks and channels (FLIP-147 end to end)"),
    "approximate-recovery": Registered("flipcheck.designs.approximate_recovery", "FLIP-135 approximate task-local recovery (restart sets, data loss)"),
    "local-recovery": Registered("flipcheck.designs.local_recovery", "task-local state recovery (local copies, slot-preserving scheduling)"),
    "split-assignment": Registered("flipcheck.designs.split_assignment", "FLIP-27 split assignment with checkpoints (exactly-once under failures)"),
    "batch-recovery": Registered("flipcheck.designs.batch_recovery", "FLIP-383 batch job recovery after JobManager failover"),
}


def design(name: str) -> Design:
    """The front-end module of design ``name``; KeyError if unknown, :class:`DesignUnavailable`
    if its module is not part of this build."""
    if name not in DESIGNS:
        raise KeyError(f"unknown design {name!r} (expected one of {', '.join(DESIGNS)})")
    module_name = DESIGNS[name].module
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            raise DesignUnavailable(f"design {name!r} is not available in this build") from None
        raise


def title_of(name: str) -> str:
    """The registered title of design ``name`` (without importing its module)."""
    return DESIGNS[name].title


def available_designs() -> list[str]:
    """Registered designs whose module is part of this build, in registry order."""
    names = []
    for name in DESIGNS:
        try:
            design(name)
        except DesignUnavailable:
            continue
        names.append(name)
    return names


def designs_help(**more: str) -> str:
    """The ``--help`` paragraph listing every design by name and title (and ``more`` rows)."""
    rows = {name: entry.title for name, entry in DESIGNS.items()} | more
    width = max(map(len, rows)) + 2
    return "suites:\n" + "".join(f"  {name:<{width}}{title}\n" for name, title in rows.items())


def verify_design(name: str, budget_seconds: float, variant: str | None = None, out=None) -> dict:
    """``flipcheck verify --suite NAME``: every property with every driver of the design. With
    ``out`` (a folder), the shortest counterexample of each violated property is saved there
    with its replay (:mod:`flipcheck.designs.counterexamples`) and listed in
    ``"counterexamples"``; ``"without_counterexample"`` names the violated properties whose
    drivers kept no case (a stateful run, a z3 proof)."""
    from flipcheck.designs.drivers import collect_findings

    front = design(name)
    with collect_findings() as findings:
        rows = front.verify(budget_seconds, variant)
    # Per-rule coverage of the configurations verify explored, for designs that count it
    # (RULE_COVERAGE, filled by their verify); None for the others.
    coverage = dict(getattr(front, "RULE_COVERAGE", None) or {}) or None
    report = {"suite": name, "properties": rows, "violations": sum(row["violations"] for row in rows),
              "coverage": coverage, "counterexamples": [], "without_counterexample": []}
    violated = list(dict.fromkeys(row["name"] for row in rows if row["violations"]))
    if out is not None and violated:
        report.update(_counterexamples(front, variant or front.engine, violated, findings, out))
    return report


def _counterexamples(front, variant: str, violated: list[str], findings, out) -> dict:
    """The shortest counterexample of each violated property ``findings`` holds a case of,
    saved under ``out``; the violated properties it holds none of."""
    from flipcheck.designs.counterexamples import save_counterexample, save_variant

    replay_variant = save_variant(out, variant)
    entries, missing = [], []
    for prop in violated:
        finding = findings.best(prop, front.suite.replays_cases)
        if finding is None:
            missing.append(prop)
            continue
        entries.append({**save_counterexample(out, front.suite, variant, prop, finding.case,
                                              replay_variant=replay_variant, case_id=finding.case_id,
                                              message=finding.message),
                        "driver": finding.driver})
    return {"counterexamples": entries, "without_counterexample": missing}

"""Drivers: run a property check over many generated cases within a time budget.

A *check* is ``case -> list[Violation]`` (a property, or all of a suite's properties, applied
to one case). A *generator* is written once against :class:`~flipcheck.generators.choices.Chooser`
(see :mod:`flipcheck.generators.choices`), so the same generator is driven here two ways:

* :func:`seeded_driver` — ``SeededChooser.for_case(seed, index)`` for index 0, 1, 2, …: every
  case has an id that regenerates it exactly;
* :func:`hypothesis_driver` — hypothesis draws the choices (and explores its own corners).

Both count cases and violations per property name and stop at the budget.

Inside :func:`collect_findings` (``flipcheck verify`` runs a design's drivers there) every driver
also reports the first case that violated each property (:func:`report_finding`), so that verify
can show each violated property's counterexample, with the case id that regenerates it when the
driver is told its suite (``suite=``): a seeded case's ``SUITE:SEED:INDEX``, a hypothesis case's
``SUITE:choices-…:0`` (the answers hypothesis gave, recorded as it drew them:
:func:`~flipcheck.generators.choices.choices_token`). An exploration driver reports its traces
itself.

Example
-------
>>> from flipcheck.properties.violation import Violation
>>> def generate(chooser):
...     return chooser.integer(0, 9)
>>> def check(n):
...     return [Violation("small", f"{n} < 3")] if n < 3 else []
>>> tally = seeded_driver(generate, check, budget_seconds=5, max_cases=200, seed="doc")
>>> tally.cases, 0 < tally.violations["small"] < 200
(200, True)
>>> with collect_findings() as findings:
...     _ = seeded_driver(generate, check, budget_seconds=5, max_cases=20, seed="doc", suite="digits")
>>> found = findings.best("small", replayable_case=False)
>>> found.driver, found.case < 3, found.case_id == f"digits:doc:{found.case_id.split(':')[-1]}"
('seeded', True, True)
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from flipcheck.generators.choices import Chooser, HypothesisChooser, RecordingChooser, SeededChooser, case_id, choices_token
from flipcheck.properties.violation import Violation

__all__ = ["Tally", "Finding", "Findings", "collect_findings", "report_finding", "report_problems", "seeded_driver",
           "hypothesis_driver"]

Generate = Callable[[Chooser], Any]
Check = Callable[[Any], list[Violation]]


@dataclass(frozen=True)
class Finding:
    """The first case a driver met violating ``property``: the case in a form the design's suite
    minimises, describes and draws, the driver, and the case id that regenerates it (None when
    no id does: an exploration's trace, a hypothesis case when the driver was not told its suite)."""

    property: str
    message: str
    case: Any
    driver: str
    case_id: str | None = None


class Findings:
    """The first :class:`Finding` of each property per driver, reported while collecting."""

    def __init__(self):
        self.by_property: dict[str, dict[str, Finding]] = {}

    def add(self, finding: Finding) -> None:
        self.by_property.setdefault(finding.property, {}).setdefault(finding.driver, finding)

    def best(self, prop: str, replayable_case: bool) -> Finding | None:
        """The finding to show for ``prop``: an exploration's trace (shortest in its
        configuration) first, then one a case id replays, then any; a case id first when the
        suite cannot replay a case itself (``replayable_case`` false), so it still has a replay."""
        found = list(self.by_property.get(prop, {}).values())
        if not found:
            return None

        def rank(finding: Finding) -> tuple:
            explored, has_id = finding.driver == "exploration", finding.case_id is not None
            return (not explored, not has_id) if replayable_case else (not has_id, not explored)
        return min(found, key=rank)


_COLLECTING: ContextVar[Findings | None] = ContextVar("flipcheck_findings", default=None)


@contextmanager
def collect_findings() -> Iterator[Findings]:
    """Collect the findings every driver run inside reports (:func:`report_finding`)."""
    findings = Findings()
    token = _COLLECTING.set(findings)
    try:
        yield findings
    finally:
        _COLLECTING.reset(token)


def report_finding(finding: Finding) -> None:
    """Keep ``finding`` if a :func:`collect_findings` is collecting (else nothing: a driver run
    outside verify keeps no cases)."""
    findings = _COLLECTING.get()
    if findings is not None:
        findings.add(finding)


def report_problems(problems: list[Violation], case: Any, driver: str = "exploration",
                    case_id: str | None = None) -> None:
    """:func:`report_finding` for each property ``problems`` violate, all shown by ``case`` (an
    exploration's trace; the suite's minimising then searches each property's own), which
    ``case_id`` regenerates if given (an exhaustive space's unit)."""
    for problem in {v.property: v for v in reversed(problems)}.values():
        report_finding(Finding(problem.property, problem.message, case, driver, case_id))


@dataclass
class Tally:
    """What a driver saw: cases run, violations per property, the first violating case."""

    driver: str
    cases: int = 0
    violations: Counter = field(default_factory=Counter)
    first_violation: tuple[Any, list[Violation]] | None = None
    first_violation_case_number: int | None = None
    seconds: float = 0.0

    def record(self, case: Any, found: list[Violation], case_id: str | None = None) -> None:
        self.cases += 1
        for name in {v.property for v in found}:
            if not self.violations[name]:
                message = next(v.message for v in found if v.property == name)
                report_finding(Finding(name, message, case, self.driver, case_id))
            self.violations[name] += 1
        if found and self.first_violation is None:
            self.first_violation = (case, found)
            self.first_violation_case_number = self.cases


def seeded_driver(
    generate: Generate,
    check: Check,
    *,
    budget_seconds: float,
    seed: str | int = 0,
    max_cases: int | None = None,
    stop_at_first: bool = False,
    suite: str | None = None,
) -> Tally:
    """Cases ``SeededChooser.for_case(seed, i)`` for i = 0, 1, … until the budget or ``max_cases``.
    ``suite``: the sweep suite whose random space under ``seed`` generates the same cases, so
    that a finding's case id (``SUITE:SEED:i``) replays it (``flipcheck replay``)."""
    tally = Tally("seeded")
    start = time.perf_counter()
    deadline = start + budget_seconds
    index = 0
    while (max_cases is None or index < max_cases) and time.perf_counter() < deadline:
        case = generate(SeededChooser.for_case(seed, index))
        tally.record(case, check(case), case_id(suite, str(seed), index) if suite else None)
        index += 1
        if stop_at_first and tally.first_violation is not None:
            break
    tally.seconds = time.perf_counter() - start
    return tally


def hypothesis_driver(
    generate: Generate,
    check: Check,
    *,
    budget_seconds: float,
    batch: int = 100,
    max_cases: int | None = None,
    stop_at_first: bool = False,
    suite: str | None = None,
    seed_prefix: str = "",
) -> Tally:
    """Hypothesis draws the choices, in derandomised batches (batch k uses seed k) until the
    budget. Violations are recorded, not raised, so the search goes on after the first.
    ``suite``: the sweep suite whose random space regenerates a case from its recorded answers,
    so that a finding's case id (``SUITE:{seed_prefix}choices-…:0``) replays it.

    Hypothesis cannot stop a run half-way without calling the test flaky, so each batch is
    sized from the time the previous cases took; the budget may be overrun by one case."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    tally = Tally("hypothesis")
    start = time.perf_counter()
    deadline = start + budget_seconds
    def recorded(draw):
        chooser = RecordingChooser(HypothesisChooser(draw))
        return generate(chooser), chooser.answers

    strategy = st.composite(recorded)()

    def one_case(data):
        case, answers = data.draw(strategy)
        tally.record(case, check(case), case_id(suite, seed_prefix + choices_token(answers), 0) if suite else None)

    batch_number, size = 0, min(batch, 20)
    while True:
        remaining_cases = None if max_cases is None else max_cases - tally.cases
        if remaining_cases is not None:
            size = min(size, remaining_cases)
        if size <= 0 or time.perf_counter() >= deadline:
            break
        run_settings = settings(
            max_examples=size, deadline=None, database=None, derandomize=False,
            suppress_health_check=list(HealthCheck), phases=[Phase.generate],
        )
        before, began = tally.cases, time.perf_counter()
        hypothesis_seed(batch_number)(run_settings(given(data=st.data())(one_case)))()
        batch_number += 1
        if stop_at_first and tally.first_violation is not None:
            break
        ran = tally.cases - before
        if ran == 0:
            break  # hypothesis exhausted the generator's space
        per_case = (time.perf_counter() - began) / ran
        size = max(1, min(batch * 10, int((deadline - time.perf_counter()) / max(per_case, 1e-6))))
    tally.seconds = time.perf_counter() - start
    return tally

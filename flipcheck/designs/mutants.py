"""The mutant catalogue: real historical bugs and rejected designs, and how fast the suite
catches each one.

Mutants are not copies: each is a named variant registered next to the implementation it
modifies (``reference_impl/plan/variants.py``, ``reference_impl/barriers/variants.py``, the
protocol and recovery variants). This module gathers them into one catalogue and *hunts* each
with its suite's drivers, cheapest first, until the first violation or the budget.

A :class:`Detection` records which property caught the mutant, with which driver, after how
many cases, in how many seconds, and the size of the counterexample (tasks, or trace steps).

Example
-------
>>> entry = catalogue()["wiki-b"]
>>> entry.suite, entry.flink_issue
('plan', None)
>>> detection = hunt(entry, budget_seconds=10)
>>> detection.caught, detection.property
(True, 'no_triggered_task_has_running_predecessor')
"""

from __future__ import annotations

import importlib
import random
import time
from dataclasses import dataclass
from typing import Callable

__all__ = ["Mutant", "Detection", "catalogue", "hunt", "HUNTERS", "CATALOGUE_SOURCES"]


@dataclass(frozen=True)
class Mutant:
    id: str
    suite: str
    variant: str  # the name the suite's registry knows it by
    flink_issue: str | None
    description: str


@dataclass
class Detection:
    caught: bool
    property: str | None = None
    driver: str | None = None
    cases_to_detection: int | None = None
    seconds: float = 0.0
    counterexample_size: int | None = None
    counterexample: object = None


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


# -- plan -----------------------------------------------------------------------------------


def _plan_mutants() -> list[Mutant]:
    from flipcheck.reference_impl.plan import CORRECT_ALGORITHMS, PLAN_CALCULATORS

    return [
        Mutant(name, "plan", name, cls.flink_issue, _first_line(cls.__doc__))
        for name, cls in PLAN_CALCULATORS.items()
        if name not in CORRECT_ALGORITHMS
    ]


def _hunt_plan(mutant: Mutant, budget_seconds: float) -> Detection:
    """Seeded generator, then hypothesis, then z3 on the example topologies, then the wiring
    property on sampled large parallelisms (where float rounding shows)."""
    from flipcheck.designs.drivers import hypothesis_driver, seeded_driver
    from flipcheck.generators.job_graphs import generate_job_graph
    from flipcheck.properties.plan_properties import WIRING_PROPERTY, check_plan
    from flipcheck.reference_impl.plan import PLAN_CALCULATORS, plan_algorithm

    started = time.perf_counter()
    deadline = started + budget_seconds
    algorithm = plan_algorithm(mutant.variant)
    check = lambda graph: check_plan(graph, algorithm(graph))  # noqa: E731
    generate = lambda chooser: generate_job_graph(chooser, max_vertices=5, max_parallelism=4)  # noqa: E731
    cases_before = 0
    for driver in (seeded_driver, hypothesis_driver):
        share = (deadline - time.perf_counter()) / 4
        kwargs = {"seed": f"mutant-{mutant.id}"} if driver is seeded_driver else {}
        tally = driver(generate, check, budget_seconds=share, stop_at_first=True, **kwargs)
        if tally.first_violation is not None:
            from flipcheck.designs.shrink import shrink_graph

            graph, violations = tally.first_violation
            name = violations[0].property
            graph = shrink_graph(graph, lambda g: any(v.property == name for v in check(g)))
            return Detection(True, name, tally.driver, cases_before + tally.first_violation_case_number,
                             time.perf_counter() - started, graph.num_tasks, graph)
        cases_before += tally.cases

    from flipcheck.model.graph_json import load_graph
    from flipcheck.properties.z3_plan import prove_plan
    from flipcheck.designs.plan import EXAMPLE_GRAPHS

    for number, path in enumerate(sorted(EXAMPLE_GRAPHS.glob("*.json")), 1):
        graph = load_graph(str(path))
        if graph.num_tasks > 100 or time.perf_counter() > deadline:
            continue
        for domain in ("binary", "all"):
            proof = prove_plan(graph, mutant.variant, domain=domain, shrink_seconds=2)
            if not proof.proved:
                return Detection(True, proof.differences[0].property, "z3", cases_before + number,
                                 time.perf_counter() - started, proof.counterexample.num_tasks, proof.counterexample)

    wiring = PLAN_CALCULATORS[mutant.variant].wiring
    rng = random.Random(f"mutant-{mutant.id}")
    pairs = 0
    while time.perf_counter() < deadline:
        upstream = rng.randint(1, 32768)
        downstream = rng.randint(1, 32768)
        pairs += 1
        violations = WIRING_PROPERTY.check(upstream, downstream, wiring)
        if violations:
            return Detection(True, violations[0].property, "sweep", cases_before + pairs,
                             time.perf_counter() - started, upstream + downstream, (upstream, downstream))
    return Detection(False, seconds=time.perf_counter() - started)


# -- barriers --------------------------------------------------------------------------------


def _flink_issue_in(text: str) -> str | None:
    import re

    match = re.search(r"FLINK-\d+", text or "")
    return match.group(0) if match else None


def _barrier_mutants() -> list[Mutant]:
    from flipcheck.reference_impl.barriers import VARIANTS

    return [
        Mutant(name, "barriers", name, _flink_issue_in(cls.source), _first_line(cls.__doc__) or cls.source)
        for name, cls in VARIANTS.items()
    ]


def _hunt_barriers(mutant: Mutant, budget_seconds: float) -> Detection:
    """Breadth-first exploration, properties only and then against the model, over the
    configurations in which the variant differs from Flink, smallest first: the first trace
    found is a shortest one."""
    from flipcheck.properties.barrier_explore import explore_task
    from flipcheck.reference_impl.barriers import VARIANTS
    from flipcheck.designs.barriers import all_configs

    started = time.perf_counter()
    states = 0
    variant = VARIANTS[mutant.variant]
    for refinement in (False, True):
        for channels in (1, 2, 3):
            for config in all_configs(channels):
                if not variant.modes(config) or time.perf_counter() - started > budget_seconds:
                    continue
                result = explore_task(config, mutant.variant, max_id=3, check_properties=not refinement,
                                      refinement=refinement)
                states += result.states
                if result.problems:
                    return Detection(True, result.problems[0].property, "exploration", states,
                                     time.perf_counter() - started, len(result.trace), (config, result.trace))
    return Detection(False, seconds=time.perf_counter() - started)


# -- registry --------------------------------------------------------------------------------

# suite -> "module:function" returning that suite's mutants; imported lazily, skipped when the
# suite is not part of this build.
CATALOGUE_SOURCES = {
    "plan": _plan_mutants,
    "barriers": _barrier_mutants,
    "approximate-recovery": "flipcheck.designs.approximate_recovery:mutant_catalogue",
    "local-recovery": "flipcheck.designs.local_recovery:mutant_catalogue",
    "split-assignment": "flipcheck.designs.split_assignment:mutant_catalogue",
    "batch-recovery": "flipcheck.designs.batch_recovery:mutant_catalogue",
    "protocol": "flipcheck.designs.protocol:mutant_catalogue",
}
HUNTERS: dict[str, Callable[[Mutant, float], Detection]] = {
    "plan": _hunt_plan,
    "barriers": _hunt_barriers,
    "approximate-recovery": "flipcheck.designs.approximate_recovery:hunt_mutant",
    "local-recovery": "flipcheck.designs.local_recovery:hunt_mutant",
    "split-assignment": "flipcheck.designs.split_assignment:hunt_mutant",
    "batch-recovery": "flipcheck.designs.batch_recovery:hunt_mutant",
    "protocol": "flipcheck.designs.protocol:hunt_mutant",
}


def _resolve(reference):
    if callable(reference):
        return reference
    module_name, function_name = reference.split(":")
    return getattr(importlib.import_module(module_name), function_name)


def catalogue() -> dict[str, Mutant]:
    """Every mutant of every suite in this build, by id."""
    mutants: dict[str, Mutant] = {}
    for suite, source in CATALOGUE_SOURCES.items():
        for mutant in _resolve(source)():
            if mutant.id in mutants:
                raise ValueError(f"mutant id {mutant.id!r} is registered twice")
            mutants[mutant.id] = mutant
    return mutants


def hunt(mutant: Mutant, budget_seconds: float) -> Detection:
    """Run the mutant's suite drivers until the first violation or the budget."""
    return _resolve(HUNTERS[mutant.suite])(mutant, budget_seconds)


# -- gallery -----------------------------------------------------------------------------------


def render_detection(mutant: Mutant, detection: Detection, out_path: str) -> str | None:
    """Draw the mutant's counterexample (``None`` when this suite has no picture for it)."""
    if not detection.caught or detection.counterexample is None:
        return None
    if mutant.suite == "plan":
        if isinstance(detection.counterexample, tuple):
            return None  # a POINTWISE wiring pair (FLINK-22863): the gallery states it in words
        from flipcheck.render.core import render_counterexample

        return render_counterexample(detection.counterexample, mutant.variant, out_path)
    if mutant.suite == "barriers":
        from flipcheck.designs.barrier_replay import replay
        from flipcheck.render.barriers import render_chart

        config, trace = detection.counterexample
        result = replay(config, trace, handler=mutant.variant)
        return render_chart(result, out_path)
    # The other suites draw their own counterexamples (the form their hunt returns).
    from flipcheck.designs.suite import SuiteUnavailable, get_suite

    try:
        suite = get_suite(mutant.suite)
    except (KeyError, SuiteUnavailable):
        return None
    return suite.render(detection.counterexample, mutant.variant, out_path)


def write_gallery(rows: list[tuple[Mutant, Detection]], directory: str) -> str:
    """``directory/mutants.md`` with one section per mutant and its picture under ``img/``."""
    from pathlib import Path

    root = Path(directory)
    (root / "img").mkdir(parents=True, exist_ok=True)
    caught = sum(d.caught for _, d in rows)
    lines = [
        "# Mutant gallery",
        "",
        "Each mutant re-creates a real Flink bug or a design the seeds reject, as a named variant of",
        "a reference implementation. For each: the bug, the property that caught it, the driver,",
        "and the smallest counterexample the driver found (generated by `flipcheck mutants --gallery docs`).",
        "",
        f"Kill rate: {caught}/{len(rows)}.",
        "",
    ]
    for mutant, detection in rows:
        lines += [f"## `{mutant.id}`" + (f" — {mutant.flink_issue}" if mutant.flink_issue else ""), "", mutant.description, ""]
        if not detection.caught:
            lines += ["**Survived** the budget: a gap in the properties or generators.", ""]
            continue
        size = detection.counterexample_size
        unit = "tasks" if mutant.suite == "plan" else "steps"
        lines += [
            f"Caught by `{detection.property}` ({detection.driver}) after {detection.cases_to_detection} cases; "
            f"counterexample: {size} {unit}.",
            "",
        ]
        picture = render_detection(mutant, detection, str(root / "img" / f"mutant-{mutant.id}.svg"))
        if picture:
            lines += [f"![{mutant.id}](img/mutant-{mutant.id}.svg)", ""]
        elif mutant.suite == "plan" and isinstance(detection.counterexample, tuple):
            upstream, downstream = detection.counterexample
            lines += [f"POINTWISE edge {upstream} → {downstream}: the float wiring differs from the integer rule.", ""]
    path = root / "mutants.md"
    path.write_text("\n".join(lines))
    return str(path)

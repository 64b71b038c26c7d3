"""The ``protocol`` suite of ``flipcheck verify``: the whole job (FLIP-147 end to end).

Drivers, for the correct protocol or a named variant (:mod:`flipcheck.reference_impl.protocol_variants`):

* ``exploration`` — breadth-first, every reachable state of small configurations of the example
  graphs (:mod:`flipcheck.generators.protocol`), every property including the graph properties
  (no deadlock, the end stays reachable, a checkpoint completes after an abort);
* ``seeded`` and ``hypothesis`` — random configurations and random schedules (up to 400 steps),
  every step and state property along the run, and no deadlock at its end.

Cases count explored states for the exploration driver, runs otherwise.

>>> rows = run_protocol_suite(budget_seconds=2)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis', 'seeded'], 0)
>>> check_case(generate_case(SeededChooser.for_case("doc", 1)))
[]
"""

from __future__ import annotations

import random
import time
from collections import Counter

from flipcheck.drivers import hypothesis_driver, seeded_driver
from flipcheck.generators.choices import SeededChooser, choice
from flipcheck.generators.protocol import EXAMPLE_GRAPHS, example_graph, random_walk
from flipcheck.model.barriers import MODES
from flipcheck.properties.job_explore import explore_job
from flipcheck.properties.job_properties import JOB_PROPERTIES, check_trace
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS, make_job

__all__ = ["run_protocol_suite", "generate_case", "check_case", "EXPLORATION_CONFIGS", "ROW_NAMES"]

ROW_NAMES = tuple(JOB_PROPERTIES)
# (graph, mode, records, failures), smallest first so a small budget still covers the basics.
EXPLORATION_CONFIGS = (
    ("pair", "aligned", 1, 1), ("pair", "unaligned", 2, 1), ("pair", "at-least-once", 2, 1),
    ("chain", "aligned", 1, 1), ("chain", "unaligned", 1, 0), ("union", "aligned", 0, 0),
    ("diamond", "aligned", 1, 0),
)


def generate_case(chooser) -> tuple:
    """``(graph, mode, records, checkpoints, failures, walk seed)``."""
    return (choice(chooser, sorted(EXAMPLE_GRAPHS)), choice(chooser, MODES), chooser.integer(0, 2),
            chooser.integer(1, 3), chooser.integer(0, 1), chooser.integer(0, 2**31))


def check_case(case: tuple, variant: str = CORRECT_PROTOCOL) -> list[Violation]:
    """Every step/state property along the random schedule of ``case``, and no deadlock at its end."""
    graph, mode, records, checkpoints, failures, seed = case
    job = make_job(example_graph(graph), variant, mode=mode, records=records, checkpoints=checkpoints,
                   failures=failures)
    labels, _ = random_walk(job, random.Random(seed), max_steps=400)
    return check_trace(job, labels)


def run_protocol_suite(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names a protocol variant."""
    name = variant or CORRECT_PROTOCOL
    if name not in PROTOCOLS:
        raise ValueError(f"unknown variant {name!r} (expected one of {', '.join(PROTOCOLS)})")
    started = time.perf_counter()
    deadline = started + budget_seconds * 0.5
    states, found = 0, Counter()
    for graph, mode, records, failures in EXPLORATION_CONFIGS:
        if time.perf_counter() > deadline and states:
            break
        result = explore_job(make_job(example_graph(graph), name, mode=mode, records=records, failures=failures),
                             max_states=100_000)
        states += result.states
        for prop in set(result.violated()):
            found[prop] += 1
    rows = [{"name": n, "cases": states, "violations": found[n], "driver": "exploration"} for n in ROW_NAMES]
    remaining = max(0.3, budget_seconds - (time.perf_counter() - started))
    check = lambda case: check_case(case, name)  # noqa: E731
    for tally in (seeded_driver(generate_case, check, budget_seconds=remaining * 0.5, seed="verify-protocol"),
                  hypothesis_driver(generate_case, check, budget_seconds=remaining * 0.5)):
        rows += [{"name": n, "cases": tally.cases, "violations": tally.violations[n], "driver": tally.driver}
                 for n in ROW_NAMES]
    return rows


# -- the mutant catalogue (flipcheck mutants) ------------------------------------------------------

# (graph, records) in the order a hunt explores them: small first, so the first trace is short.
HUNT_CONFIGS = (("pair", 1), ("twin", 0), ("twin", 1), ("union", 0), ("chain", 1))


def mutant_catalogue() -> list:
    """This suite's entries of :func:`flipcheck.mutants.catalogue` (ids ``protocol-<variant>``:
    the plan suite has its own ``trigger-sources-only``). ``no-end-of-data-ack`` stays out until
    the model can show it (barriers that overtake EndOfData; see tests/quality)."""
    from flipcheck.mutants import Mutant
    from flipcheck.reference_impl.protocol_variants import PROTOCOL_VARIANTS

    return [Mutant(f"protocol-{name}", "protocol", name, cls.flink_issue,
                   " ".join((cls.__doc__ or "").split()).split(". ")[0].rstrip(".") + ".")
            for name, cls in PROTOCOL_VARIANTS.items() if name != "no-end-of-data-ack"]


def hunt_mutant(mutant, budget_seconds: float):
    """Breadth-first exploration of :data:`HUNT_CONFIGS` until a violation: a shortest trace."""
    from flipcheck.mutants import Detection

    started = time.perf_counter()
    states = 0
    for graph, records in HUNT_CONFIGS:
        if time.perf_counter() - started > budget_seconds:
            break
        job = make_job(example_graph(graph), mutant.variant, records=records)
        result = explore_job(job, stop_at_first=True, liveness=False, max_states=60_000)
        states += result.states
        if result.counterexamples:
            c = result.counterexamples[0]
            return Detection(True, c.property, "exploration", states, time.perf_counter() - started, c.length,
                             (graph, records, tuple(c.labels)))
    return Detection(False, seconds=time.perf_counter() - started)

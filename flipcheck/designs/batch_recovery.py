"""The ``batch-recovery`` design's front end (the members of
:class:`~flipcheck.designs.contract.Design` are at the end of this module). ``verify``: batch
job recovery after JM failover (FLIP-383).

Drivers, for Flink's implementation (or a named variant of it):

* ``exploration`` — breadth-first, every reachable state of small DAGs (chains and fan-ins of
  1-3 vertices, parallelism 1-2) with one JM crash at **every** reachable point, partition losses
  and failed recoveries; every property on every step and the implementation compared with the
  specification at each (``refines_model``); a state where nothing can happen and the job is not
  done is a ``job_completes`` violation. Cases count explored states; ``crash_points`` in
  :data:`LAST_COVERAGE` counts the crash transitions;
* ``seeded`` and ``hypothesis`` — random DAGs (up to 3 vertices) and runs of up to 40 actions
  (:mod:`flipcheck.generators.batch_recovery`);
* ``stateful`` — the hypothesis state machine (implementation next to the model).

It is also the sweep's suite (:mod:`flipcheck.designs.batch_recovery`) and feeds the mutant
catalogue (:func:`mutants`, :func:`hunt`).

>>> rows = verify(budget_seconds=3)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis', 'seeded', 'stateful'], 0)

The sweep suite
---------------

The ``batch-recovery`` suite for sweeps: batch job recovery after JM failover (FLIP-383).

* Random space (token = a seed): case ``i`` is a small DAG with splits and failure budgets and a
  run of up to 40 actions the specification enables, JM crashes included
  (:func:`flipcheck.generators.batch_recovery.generate_case`), replayed on the implementation
  under test with every property and the model next to it.
* Exhaustive space (token ``exhaustive-default``): the exploration configurations of
  :data:`flipcheck.designs.batch_recovery.EXPLORATION_CONFIGS`, every crash point each.

Built by :class:`~flipcheck.designs.generated_suite.GeneratedSuite` from ``flipcheck/designs/batch_recovery.py``.

Example
-------
>>> space = BATCH_RECOVERY_SUITE.space("7")
>>> space.check(space.case(3), "flink").violations
[]
"""

from __future__ import annotations

from collections import Counter
import time

from flipcheck.designs import title_of
from flipcheck.designs.common import check_variant, hunt_with, mutant_list, rows, stateful_rows
from flipcheck.designs.drivers import hypothesis_driver, report_problems, seeded_driver
from flipcheck.designs.generated_suite import GeneratedSuite
from flipcheck.generators.batch_recovery import batch_machine, generate_case as _generate
from flipcheck.model.batch_recovery import RULES, Config
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobGraph
from flipcheck.properties.batch_recovery_explore import explore_job, replay
from flipcheck.properties.batch_recovery_properties import LIVENESS, PROPERTY_NAMES, REFINEMENT
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.batch_recovery_variants import ENGINE, MUTANTS, VARIANTS, variant_class


__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "variant_class", "generate_case", "check_case", "render_case", "describe_case", "case_size", "case_shape", "exhaustive_cases", "explore_case", "minimise_case", "MUTANTS", "ENGINE", "ENGINES", "PROPERTY_NAMES", "ROW_NAMES", "GRAPHS", "EXPLORATION_CONFIGS", "TWO_CRASHES", "LAST_COVERAGE", "RULE_COVERAGE", "BATCH_RECOVERY_SUITE",
]

ENGINES = tuple(VARIANTS)
ROW_NAMES = (*PROPERTY_NAMES, LIVENESS, REFINEMENT)
GRAPHS = {
    "src1-sink1": JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]),
    "src2-sink1": JobGraph.build([("src", 2), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]),
    "chain3": JobGraph.build([("src", 1), ("map", 1), ("sink", 1)], [("src", "map", ALL_TO_ALL), ("map", "sink", ALL_TO_ALL)]),
    "src1-map2-pointwise": JobGraph.build([("src", 1), ("map", 2)], [("src", "map", POINTWISE)]),
    "fan-in": JobGraph.build([("a", 1), ("b", 1), ("join", 1)], [("a", "join", ALL_TO_ALL), ("b", "join", ALL_TO_ALL)]),
}
# Smallest first: (graph, splits, crashes, losses, recovery failures, min-pause)
EXPLORATION_CONFIGS = (
    Config(GRAPHS["src1-sink1"], 1, 1, 1, 1),
    Config(GRAPHS["src1-sink1"], 2, 1, 1, 1),
    Config(GRAPHS["src2-sink1"], 1, 1, 1, 1),
    Config(GRAPHS["src2-sink1"], 2, 1, 1, 1, False),
    Config(GRAPHS["chain3"], 1, 1, 1, 1),
    Config(GRAPHS["src1-map2-pointwise"], 2, 1, 1, 1),
    Config(GRAPHS["fan-in"], 1, 1, 0, 0),
)
# Two JM crashes: Flink's replay rule itself loses or duplicates splits here (docs/batch-recovery.md,
# "Finding"); used to compare variants with the model (refinement) only.
TWO_CRASHES = Config(GRAPHS["src2-sink1"], 1, 2, 0, 0)
LAST_COVERAGE: dict = {}
# What the last verify's exploration driver exercised: steps per rule (B1-B12, one per action of
# model/batch_recovery.py) over the configurations it explored; verify_design reports it.
RULE_COVERAGE: dict = {}


def exhaustive_cases() -> list[Config]:
    return list(EXPLORATION_CONFIGS)


def explore_case(config: Config, variant: str = ENGINE, refinement: bool = True, check: bool = True) -> tuple:
    """(violations, states explored, counterexample ``(config, trace)`` or None); ``check=False``
    compares with the model only."""
    result = explore_job(config, variant, refinement=refinement, check=check)
    return result.problems, result.states, ((config, tuple(result.trace)) if result.problems else None)


def generate_case(chooser) -> tuple:
    return _generate(chooser)


def check_case(case, variant: str = ENGINE) -> list[Violation]:
    """Every property (and refinement) on a run ``(config, actions)``, up to its first violation;
    an exploration unit (a :class:`Config`) is explored."""
    if isinstance(case, Config):
        return explore_case(case, variant)[0]
    config, actions = case
    return [v for s in replay(config, actions, variant) for v in s.violations]


def _graph_text(config: Config) -> str:
    g = config.graph
    return " ".join(f"{v.id}×{v.parallelism}" for v in g.vertices) + " | " + \
        ", ".join(f"{e.source}->{e.target}" for e in g.edges)


def case_size(case) -> int:
    return len(case.graph.vertices) if isinstance(case, Config) else len(case[1])


def case_shape(case) -> str:
    config = case if isinstance(case, Config) else case[0]
    shape = f"{len(config.graph.vertices)}v {config.graph.num_tasks}t {config.splits}s {config.crashes}c"
    return shape if isinstance(case, Config) else f"{shape} {len(case[1])}st"


def describe_case(case) -> dict:
    config = case if isinstance(case, Config) else case[0]
    described = {"graph": _graph_text(config), **{k: v for k, v in config._asdict().items() if k != "graph"}}
    if not isinstance(case, Config):
        described["actions"] = [list(a) for a in case[1]]
    return described


def minimise_case(case, variant: str, prop: str):
    """A shortest trace for ``prop`` by breadth-first exploration of the case's configuration."""
    config = case if isinstance(case, Config) else case[0]
    refinement = prop == REFINEMENT
    result = explore_job(config, variant, refinement=refinement, check=not refinement,
                         properties=None if refinement else [prop], max_states=200_000)
    return (config, tuple(result.trace)) if any(v.property == prop for v in result.problems) else case


def render_case(case, out_path: str, variant: str = ENGINE) -> str:
    from flipcheck.render.batch_recovery import render_run

    if isinstance(case, Config):
        case = explore_case(case, variant)[2] or (case, ())
    config, actions = case
    return render_run(config, replay(config, actions, variant), out_path, variant)


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names a variant (default ``flink``)."""
    name = check_variant(variant or ENGINE, variant_class)
    started = time.perf_counter()
    deadline = started + budget_seconds * 0.45
    states, crash_points, configs, found = 0, 0, 0, Counter()
    fired = Counter({rule: 0 for rule in RULES})
    for config in EXPLORATION_CONFIGS:
        if time.perf_counter() > deadline and states:
            break
        result = explore_job(config, name, refinement=True, stop_at_first=False, coverage=fired)
        states, crash_points, configs = states + result.states, crash_points + result.crash_points, configs + 1
        found.update({v.property for v in result.problems})
        if result.problems:  # an exhaustive unit: its id replays the exploration
            report_problems(result.problems, (config, tuple(result.trace)),
                            case_id=BATCH_RECOVERY_SUITE.exhaustive_id(config))
    LAST_COVERAGE.update(states=states, crash_points=crash_points, configurations=configs)
    RULE_COVERAGE.clear()
    RULE_COVERAGE.update(rules=dict(fired), never_fired=[rule for rule in RULES if not fired[rule]], not_explored={},
                         configurations=configs, of=len(EXPLORATION_CONFIGS))
    result_rows = rows(ROW_NAMES, states, found, "exploration")
    remaining = max(0.3, budget_seconds - (time.perf_counter() - started))
    check = lambda case: check_case(case, name)  # noqa: E731
    for tally in (seeded_driver(generate_case, check, budget_seconds=remaining * 0.4, seed="verify-batch-recovery",
                                suite=BATCH_RECOVERY_SUITE.name),
                  hypothesis_driver(generate_case, check, budget_seconds=remaining * 0.3, suite=BATCH_RECOVERY_SUITE.name)):
        result_rows += rows(ROW_NAMES, tally.cases, tally.violations, tally.driver)
    result_rows += stateful_rows(lambda: batch_machine(name), ROW_NAMES, REFINEMENT, "batch-recovery",
                                 max(0.2, budget_seconds - (time.perf_counter() - started)), steps=40, examples=20)
    return result_rows


# -- the mutant catalogue (flipcheck mutants) ------------------------------------------------------


def mutants() -> list:
    """This suite's entries of :func:`flipcheck.designs.mutants.catalogue`."""
    return mutant_list("batch-recovery", {n: c for n, c in VARIANTS.items() if n in MUTANTS})


def hunt(mutant, budget_seconds: float):
    """Breadth-first exploration, properties only (no model), smallest configurations first (the
    first trace found is a shortest one), then next to the model with two crashes, then seeded
    random runs."""
    def explore(config, variant, refinement):
        return explore_case(config, variant, refinement, check=not refinement)

    steps = [(c, False) for c in EXPLORATION_CONFIGS] + [(TWO_CRASHES, True)]
    return hunt_with(mutant, budget_seconds, steps, "exploration", explore, generate_case, check_case, case_size)


BATCH_RECOVERY_SUITE = GeneratedSuite("batch-recovery", __name__)


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "batch-recovery"
title = title_of(name)
seed = "FLIP-383: job event log replay and partition reconciliation after JobManager failover"
spec = "flipcheck.model.batch_recovery"
engine = ENGINE
variants = ENGINES
properties = ROW_NAMES
drivers = ("seeded", "hypothesis", "stateful", "exploration")
suite = BATCH_RECOVERY_SUITE
render = BATCH_RECOVERY_SUITE.render

"""The ``split-assignment`` design's front end (the members of
:class:`~flipcheck.designs.contract.Design` are at the end of this module). ``verify``: FLIP-27
split assignment with checkpoints.

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

>>> rows = verify(budget_seconds=3)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis', 'liveness', 'seed-designs', 'seeded', 'stateful'], 0)
>>> case = generate_case(SeededChooser.for_case("doc", 1))
>>> check_case(case, "flink")
[]

The sweep suite
---------------

The ``split-assignment`` suite for sweeps: FLIP-27 split assignment with checkpoints.

* Random space (token = a seed): case ``i`` is a configuration (1-3 readers, 1-4 splits, 1-3
  checkpoints, 0-2 failures) and a run of up to 40 actions the specification enables, drawn
  from ``SeededChooser.for_case(seed, i)`` (:func:`flipcheck.generators.split_assignment.generate_case`).
  Checking replays the run on the implementation under test with every property and the model
  next to it (:func:`flipcheck.properties.split_assignment_explore.replay`).
* Exhaustive space (token ``exhaustive-r{R}-s{S}``): one case per configuration with at most R
  readers and S splits (R, S <= 2), 1-2 checkpoints and 0-2 failures, explored breadth-first
  with every property and refinement.

Counterexamples are minimised to a shortest trace: breadth-first exploration of the smallest
configuration (fewest readers, then splits) that still violates the property, checking only it.

Example
-------
>>> space = SPLIT_ASSIGNMENT_SUITE.space("7")
>>> space.check(space.case(3), "flink").violations
[]
>>> bad = next(o for o in (space.check(space.case(i), "no-event-gateway") for i in range(200)) if o.violations)
>>> config, actions = SPLIT_ASSIGNMENT_SUITE.minimise(bad.counterexample, "no-event-gateway", bad.properties[0])
>>> len(actions) <= 4
True
"""

from __future__ import annotations

from collections import Counter
from functools import cache
import re
import time

from flipcheck.designs import title_of
from flipcheck.designs.common import check_variant, seeded_run
from flipcheck.designs.drivers import hypothesis_driver, report_problems, seeded_driver
from flipcheck.designs.suite import CRASH, EXHAUSTIVE_PREFIX, CaseSpace, Outcome, Suite, checked
from flipcheck.generators.choices import SeededChooser, chooser_for
from flipcheck.generators.split_assignment import generate_case as _generate
from flipcheck.model.split_assignment import DESIGNS, RULES, Config
from flipcheck.properties.split_assignment_explore import explore_job, explore_liveness, explore_model, replay
from flipcheck.properties.split_assignment_properties import LIVENESS, PROPERTY_NAMES, REFINEMENT
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.split_assignment_variants import ENGINE, MUTANTS, VARIANTS, variant_class


__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "generate_case", "check_case", "render_case", "MUTANTS", "EXPLORATION_CONFIGS", "RULE_COVERAGE", "LIVENESS_CONFIGS", "ROW_NAMES", "SPLIT_ASSIGNMENT_SUITE", "SplitAssignmentSuite", "exhaustive_configs",
]

# Smallest first, so that a small budget still covers the basic interleavings.
EXPLORATION_CONFIGS = (
    Config(1, 1, 1, 1), Config(1, 2, 2, 1), Config(2, 1, 1, 1), Config(1, 2, 2, 2),
    Config(2, 2, 1, 1), Config(2, 2, 1, 2), Config(2, 2, 2, 1),
)
LIVENESS_CONFIGS = (Config(1, 2, 2, 1), Config(2, 2, 1, 1))
# What the last verify's exploration driver exercised: steps per rule (A1-A13, one per action of
# model/split_assignment.py) over the configurations it explored; verify_design reports it.
RULE_COVERAGE: dict = {}
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


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names a variant (default ``flink``)."""
    name = check_variant(variant or ENGINE, variant_class)
    started = time.perf_counter()
    rows: list[dict] = []

    # Exploration with refinement: a variant diverging from the model is a finding.
    deadline = started + budget_seconds * 0.35
    states, found, explored = 0, Counter(), 0
    coverage = Counter({rule: 0 for rule in RULES})
    for config in EXPLORATION_CONFIGS:
        if time.perf_counter() > deadline and states:
            break
        result = explore_job(config, name, refinement=True, stop_at_first=False, coverage=coverage)
        states += result.states
        explored += 1
        for prop in {v.property for v in result.problems}:
            found[prop] += 1
        if result.problems:  # an exhaustive unit: its id replays the exploration
            report_problems(result.problems, (config, tuple(result.trace)),
                            case_id=SPLIT_ASSIGNMENT_SUITE.exhaustive_id(config))
    rows += [{"name": n, "cases": states, "violations": found[n], "driver": "exploration"} for n in ROW_NAMES]
    RULE_COVERAGE.clear()
    RULE_COVERAGE.update(rules={rule: coverage[rule] for rule in RULES},
                         never_fired=[rule for rule in RULES if not coverage[rule]], not_explored={},
                         configurations=explored, of=len(EXPLORATION_CONFIGS))

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
    for tally in (seeded_driver(generate_case, check, budget_seconds=remaining * 0.4, seed="verify-split-assignment",
                                suite=SPLIT_ASSIGNMENT_SUITE.name),
                  hypothesis_driver(generate_case, check, budget_seconds=remaining * 0.35, suite=SPLIT_ASSIGNMENT_SUITE.name)):
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

    deadline = time.perf_counter() + budget_seconds
    runs, failures, batch = 0, Counter(), 0
    machine = split_machine(variant)
    batch_settings = settings(quick_settings(20), derandomize=False, phases=quick_settings().phases[:2])
    while time.perf_counter() < deadline or batch == 0:
        try:
            # The seeds this suite has always used (it borrowed the barrier suite's runner), so a
            # batch number still reproduces the same runs.
            seeded_run(machine, batch_settings, f"barriers-{batch}")
        except AssertionError as failure:
            prop = str(failure).split(":")[0]
            failures[prop if prop in ROW_NAMES else REFINEMENT] += 1
        runs += batch_settings.max_examples
        batch += 1
    return runs, failures


# -- the mutant catalogue (flipcheck mutants) ------------------------------------------------------


def mutants() -> list:
    """This suite's entries of :func:`flipcheck.designs.mutants.catalogue`."""
    from flipcheck.designs.contract import Mutant

    return [Mutant(name, "split-assignment", name, issue, description) for name, (issue, description) in MUTANTS.items()]


def hunt(mutant, budget_seconds: float):
    """Breadth-first exploration, properties only (no model), smallest configurations first: the
    first trace found is a shortest one."""
    from flipcheck.designs.contract import Detection

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


_TOKEN = re.compile(rf"{EXHAUSTIVE_PREFIX}-r([0-9]+)-s([0-9]+)")
DEFAULT_EXHAUSTIVE = (2, 2)
# Configurations larger than this many states are left out of the exhaustive space.
_TOO_BIG = {Config(2, 2, 2, 2)}


def exhaustive_configs(readers: int, splits: int) -> list[Config]:
    """Every configuration with <= ``readers`` readers, <= ``splits`` splits, 1-2 checkpoints and
    0-2 failures, smallest first (the one with 2 readers, 2 splits, 2 checkpoints and 2 failures
    is left out: about a million states)."""
    configs = [Config(r, s, c, f) for r in range(1, readers + 1) for s in range(1, splits + 1)
               for c in (1, 2) for f in (0, 1, 2)]
    return [c for c in configs if c not in _TOO_BIG]


def _shape(config: Config, actions=None) -> str:
    steps = "" if actions is None else f" {len(actions)}st"
    return f"{config.readers}r {config.splits}s {config.checkpoints}c {config.failures}f{steps}"


def _run(case, algorithm: str) -> Outcome:
    found = check_case(case, algorithm)
    return Outcome(found, 1, "check", case if found else None)


def _explore(config: Config, algorithm: str) -> Outcome:
    result = explore_job(config, algorithm, refinement=True)
    return Outcome(list(result.problems), result.states, "explore",
                   (config, tuple(result.trace)) if result.problems else None)


class RandomSplitSpace(CaseSpace):
    def __init__(self, suite: "SplitAssignmentSuite", seed: str):
        self.suite, self.token = suite, seed

    def case(self, index: int):
        return generate_case(chooser_for(self.token, index))

    def check(self, case, algorithm: str) -> Outcome:
        return checked(_run, case, algorithm)

    def shape(self, case) -> str:
        return _shape(*case)

    def magnitude(self, case) -> int:
        return len(case[1])


class ExhaustiveSplitSpace(CaseSpace):
    def __init__(self, suite: "SplitAssignmentSuite", readers: int, splits: int):
        self.suite, self.readers, self.splits = suite, readers, splits
        self.token = f"{EXHAUSTIVE_PREFIX}-r{readers}-s{splits}"
        self.configs = exhaustive_configs(readers, splits)
        self.size = len(self.configs)

    def case(self, index: int) -> Config:
        return self.configs[index]

    def check(self, case: Config, algorithm: str) -> Outcome:
        return checked(_explore, case, algorithm)

    def shape(self, case: Config) -> str:
        return _shape(case)

    def magnitude(self, case: Config) -> int:
        return case.readers * case.splits

    def coverage(self) -> dict:
        return {"max_readers": self.readers, "max_splits": self.splits, "configurations": self.size}


class SplitAssignmentSuite(Suite):
    name = "split-assignment"
    engine = ENGINE
    size_unit = "steps"
    random_batch = 500
    exhaustive_batch = 1

    def algorithms(self):
        return tuple(VARIANTS)

    def variant_class(self, spec: str) -> type:
        return variant_class(spec)

    def property_names(self):
        return (*ROW_NAMES, CRASH)

    def space(self, token: str) -> CaseSpace:
        return _space(self, token)

    def exhaustive_token(self, max_vertices=None, max_parallelism=None):
        return f"{EXHAUSTIVE_PREFIX}-r{DEFAULT_EXHAUSTIVE[0]}-s{DEFAULT_EXHAUSTIVE[1]}"

    def minimise(self, counterexample, algorithm: str, prop: str):
        """Breadth-first search for ``prop`` alone in the smallest configuration that shows it."""
        config, actions = counterexample
        refinement = prop not in ROW_NAMES or prop == ROW_NAMES[-1]
        only = () if refinement else (prop,)
        smaller = sorted({config._replace(readers=r, splits=s) for r in range(1, config.readers + 1)
                          for s in range(1, config.splits + 1)}, key=lambda c: (c.readers, c.splits))
        for candidate in smaller:
            result = explore_job(candidate, algorithm, refinement=refinement, properties=only,
                                 check=not refinement, max_states=100_000)
            if any(v.property == prop for v in result.problems):
                return candidate, tuple(result.trace)
        return config, tuple(actions)

    def render(self, counterexample, algorithm: str, out_path: str) -> str:
        return render_case(counterexample, out_path, algorithm)

    def size_of(self, counterexample) -> int:
        return len(counterexample[1])

    def describe(self, counterexample, algorithm: str | None = None) -> dict:
        config, actions = counterexample
        return {"config": config._asdict(), "actions": [list(a) for a in actions]}


@cache
def _space(suite: SplitAssignmentSuite, token: str) -> CaseSpace:
    if token.startswith(EXHAUSTIVE_PREFIX):
        match = _TOKEN.fullmatch(token)
        if not match or not 1 <= int(match.group(1)) <= 2 or not 1 <= int(match.group(2)) <= 2:
            raise ValueError(f"exhaustive split-assignment token {token!r} is not {EXHAUSTIVE_PREFIX}-rR-sS (R, S in 1..2)")
        return ExhaustiveSplitSpace(suite, int(match.group(1)), int(match.group(2)))
    return RandomSplitSpace(suite, token)


SPLIT_ASSIGNMENT_SUITE = SplitAssignmentSuite()


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "split-assignment"
title = title_of(name)
seed = "FLIP-27: the split enumerator on the JobManager; Checkpoint alignment of split assignment"
spec = "flipcheck.model.split_assignment"
engine = SPLIT_ASSIGNMENT_SUITE.engine
variants = tuple(SPLIT_ASSIGNMENT_SUITE.algorithms())
properties = (*ROW_NAMES, LIVENESS)
drivers = ("seeded", "hypothesis", "stateful", "exploration", "liveness", "seed-designs")
suite = SPLIT_ASSIGNMENT_SUITE
render = SPLIT_ASSIGNMENT_SUITE.render

"""The ``split-assignment`` suite for sweeps: FLIP-27 split assignment with checkpoints.

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

import re
from functools import cache

from flipcheck.generators.choices import SeededChooser
from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import explore_job
from flipcheck.reference_impl.split_assignment_variants import ENGINE, VARIANTS
from flipcheck.designs.suite import CRASH, EXHAUSTIVE_PREFIX, CaseSpace, Outcome, Suite, checked
from flipcheck.designs.split_assignment import ROW_NAMES, check_case, generate_case, render_case

__all__ = ["SPLIT_ASSIGNMENT_SUITE", "SplitAssignmentSuite", "exhaustive_configs"]

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
        return generate_case(SeededChooser.for_case(self.token, index))

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
    title = "FLIP-27 split assignment aligned with checkpoints"
    engine = ENGINE
    size_unit = "steps"
    random_batch = 500
    exhaustive_batch = 1

    def algorithms(self):
        return tuple(VARIANTS)

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

    def describe(self, counterexample) -> dict:
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

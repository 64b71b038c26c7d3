"""A sweep :class:`~flipcheck.designs.suite.Suite` built from a design's driver module.

The recovery designs keep everything a sweep needs in their ``flipcheck/designs/<design>.py``
module; this adapter turns such a module into a suite, so a design writes its generator, checks
and pictures once. The module provides:

* ``ENGINE`` (the engine's name) and ``ENGINES`` (every variant name, engine first);
* ``PROPERTY_NAMES``;
* ``generate_case(chooser)`` and ``check_case(case, variant) -> list[Violation]`` (random cases);
  optionally ``CASE_KINDS``, the kinds ``generate_case(chooser, kind)`` takes: a random space
  whose token is ``KIND@SEED`` generates cases of that kind only (the ids ``verify``'s seeded
  cases of one kind have, so that ``flipcheck replay`` regenerates them);
* ``exhaustive_cases()`` (a fixed, numbered list of exploration units) and
  ``explore_case(unit, variant) -> (violations, states, counterexample)``;
* ``render_case(case, out_path, variant)``, ``describe_case(case) -> dict`` (or
  ``describe_case(case, variant)``, when describing replays a trace under the variant),
  ``case_size(case) -> int``, ``case_shape(case) -> str``; optionally
  ``minimise_case(case, variant, prop)``, ``replay_argv(case, variant, prop, save_graph)`` (a command
  that shows the case's violation again) and ``variant_class(name) -> type``, the registry's
  class lookup, which also takes a user variant's spec ``FILE.py:CLASS`` (without it the suite
  takes no user variants).

Example
-------
>>> suite = GeneratedSuite("approximate-recovery", "flipcheck.designs.approximate_recovery")
>>> space = suite.space("7")
>>> space.check(space.case(1), suite.engine).violations
[]
"""

from __future__ import annotations

import importlib
from functools import cached_property

from flipcheck.generators.choices import CHOICES_PREFIX, SeededChooser, chooser_for
from flipcheck.designs.suite import CRASH, EXHAUSTIVE_PREFIX, CaseSpace, Outcome, Suite, checked

__all__ = ["GeneratedSuite", "RandomCaseSpace", "ExhaustiveCaseSpace", "KIND_SEPARATOR"]


# A random space's token KIND@SEED: cases of one kind (CASE_KINDS) from seed KIND@SEED.
KIND_SEPARATOR = "@"


class RandomCaseSpace(CaseSpace):
    def __init__(self, suite: "GeneratedSuite", seed: str):
        self.suite, self.token = suite, seed
        kind, separator, _ = seed.partition(KIND_SEPARATOR)
        self.kind = kind if separator and kind in getattr(suite.module, "CASE_KINDS", ()) else None

    def case(self, index: int):
        seed = self.token.partition(KIND_SEPARATOR)[2] if self.kind is not None else self.token
        # A seeded case's chooser is seeded by the whole token (KIND@SEED), as verify's ids were made.
        chooser = chooser_for(seed, index) if seed.startswith(CHOICES_PREFIX) else SeededChooser.for_case(self.token, index)
        if self.kind is None:
            return self.suite.module.generate_case(chooser)
        return self.suite.module.generate_case(chooser, self.kind)

    def check(self, case, algorithm: str) -> Outcome:
        return checked(lambda c, a: Outcome(self.suite.module.check_case(c, a)), case, algorithm)

    def shape(self, case) -> str:
        return self.suite.module.case_shape(case)

    def magnitude(self, case) -> int:
        return self.suite.module.case_size(case)


class ExhaustiveCaseSpace(CaseSpace):
    def __init__(self, suite: "GeneratedSuite", token: str):
        self.suite, self.token = suite, token
        self.units = suite.module.exhaustive_cases()
        self.size = len(self.units)

    def case(self, index: int):
        return self.units[index]

    def check(self, case, algorithm: str) -> Outcome:
        def explore(unit, variant):
            violations, states, counterexample = self.suite.module.explore_case(unit, variant)
            return Outcome(violations, states, "explore", counterexample)

        return checked(explore, case, algorithm)

    def shape(self, case) -> str:
        return self.suite.module.case_shape(case)

    def magnitude(self, case) -> int:
        return self.suite.module.case_size(case)

    def coverage(self) -> dict:
        return {"units": self.size, **getattr(self.suite.module, "EXHAUSTIVE_BOUNDS", {})}

    def statement(self, algorithm: str, assignments: int) -> str | None:
        """The design's ``EXHAUSTIVE_STATEMENT`` (a format string), filled in; None without one."""
        template = getattr(self.suite.module, "EXHAUSTIVE_STATEMENT", None)
        return template.format(algorithm=algorithm, states=assignments, units=self.size) if template else None


def _takes_variant(describe_case) -> bool:
    """Whether a module's ``describe_case`` takes the variant as its second parameter."""
    import inspect

    return len(inspect.signature(describe_case).parameters) > 1


class GeneratedSuite(Suite):
    size_unit = "steps"
    random_batch = 1000   # ~0.5 ms per case: half a second per Spark task
    exhaustive_batch = 1

    def __init__(self, name: str, module: str, *, random_batch: int | None = None,
                 relative_cost: int | None = None):
        self.name, self._module = name, module
        if random_batch is not None:
            self.random_batch = random_batch
        if relative_cost is not None:
            self.relative_cost = relative_cost

    @cached_property
    def module(self):
        return importlib.import_module(self._module)

    @property
    def engine(self) -> str:
        return self.module.ENGINE

    def algorithms(self):
        return tuple(self.module.ENGINES)

    def property_names(self):
        return (*self.module.PROPERTY_NAMES, CRASH)

    def variant_class(self, spec: str) -> type:
        lookup = getattr(self.module, "variant_class", None)
        return super().variant_class(spec) if lookup is None else lookup(spec)

    def space(self, token: str) -> CaseSpace:
        if token.startswith(EXHAUSTIVE_PREFIX):
            if token != self.exhaustive_token(None, None):
                raise ValueError(f"exhaustive {self.name} token {token!r} is not {self.exhaustive_token(None, None)!r}")
            return ExhaustiveCaseSpace(self, token)
        return RandomCaseSpace(self, token)

    def exhaustive_token(self, max_vertices=None, max_parallelism=None) -> str:
        # The design's own bounds apply (EXHAUSTIVE_BOUNDS), not the plan's vertex bounds.
        return f"{EXHAUSTIVE_PREFIX}-default"

    def minimise(self, counterexample, algorithm: str, prop: str):
        minimise = getattr(self.module, "minimise_case", None)
        return counterexample if minimise is None else minimise(counterexample, algorithm, prop)

    def render(self, counterexample, algorithm: str, out_path: str) -> str:
        return self.module.render_case(counterexample, out_path, algorithm)

    def size_of(self, counterexample) -> int:
        return self.module.case_size(counterexample)

    @property
    def replays_cases(self) -> bool:
        return hasattr(self.module, "replay_argv")

    def replay_argv(self, counterexample, algorithm: str, prop: str, save_graph):
        replay_argv = getattr(self.module, "replay_argv", None)
        return None if replay_argv is None else replay_argv(counterexample, algorithm, prop, save_graph)

    def describe(self, counterexample, algorithm: str | None = None) -> dict:
        if algorithm is not None and _takes_variant(self.module.describe_case):
            return self.module.describe_case(counterexample, algorithm)
        return self.module.describe_case(counterexample)

    def __hash__(self):
        return hash(self.name)

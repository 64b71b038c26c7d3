"""Suites: what a sweep runs, one per design area — cases from ids, checks, pictures.

A :class:`Suite` composes the generators and properties that already exist for one area
(``plan``: the checkpoint plan; ``barriers``: task-side alignment; later ``protocol`` and the
recovery designs) behind one small interface, so that drivers — the Spark sweep, ``replay``,
``verify`` — need not know any area:

* a suite hands out :class:`CaseSpace` s by *token*: a seed (random cases, unbounded) or an
  ``exhaustive-…`` token (a finite, numbered list). A case id ``SUITE:TOKEN:INDEX``
  (:func:`flipcheck.generators.choices.case_id`) regenerates its case on any machine;
* a space generates case ``index``, checks it with the suite's properties for an algorithm or
  variant (:class:`Outcome`: violations, how many state assignments were covered, how), and
  says its shape and size;
* a suite minimises a counterexample for one property (fewest tasks / shortest trace),
  renders it (SVG) and describes it as JSON;
* an algorithm is one of the suite's names or a user variant's spec, ``FILE.py:CLASS`` or
  ``MODULE:CLASS`` (:mod:`flipcheck.reference_impl.user_variants`), which the suite checks
  against its base class (:meth:`Suite.variant_class`). Executors get only the string and
  import the class where they check a case.

Each design's front-end module holds its suite (the ``suite`` member of the design contract,
:mod:`flipcheck.designs.contract`); :func:`get_suite` finds it through the design registry.

Example
-------
>>> suite = get_suite("plan")
>>> space = suite.space("42")
>>> case = space.case(7)
>>> space.case(7) == case                      # ids regenerate their case
True
>>> outcome = space.check(case, "flink")
>>> outcome.violations, outcome.assignments
([], 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from flipcheck.generators.choices import case_id, parse_case_id
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.user_variants import WrongVariantKind, is_spec

__all__ = [
    "EXHAUSTIVE_PREFIX",
    "CRASH",
    "ERROR",
    "Outcome",
    "CaseSpace",
    "Suite",
    "SUITES_BESIDE_DESIGNS",
    "get_suite",
    "suite_known",
    "resolve_case",
    "checked",
]

# Tokens of exhaustive spaces start with this; seeds of random sweeps must not.
EXHAUSTIVE_PREFIX = "exhaustive"
# The property recorded when checking a case raised (a crash of the code under test).
CRASH = "crash"
# The outcome of a case that could not be checked at all (a real job's JVM did not start): its
# message says why in one line; it counts as neither ok nor a violation.
ERROR = "error"
# Suites that are not designs (no spec, no engine variants), each name -> the module holding its
# ``suite``: sweeps and replay take them by name, but ``--suite all`` does not (real Flink jobs
# take seconds each, the designs' cases milliseconds).
SUITES_BESIDE_DESIGNS = {"flink": "flipcheck.designs.flink_jobs", "flink-matrix": "flipcheck.designs.flink_matrix",
                         "flink-campaign": "flipcheck.designs.flink_campaign"}


@dataclass
class Outcome:
    """What checking one case found.

    ``assignments`` counts the task-state assignments (or explored states) the check covered:
    1 for a concrete random case, ``2^tasks`` per flag value for an exhaustive plan topology.
    ``method`` says how (``check``, ``enumerate``, ``z3``, ``explore``); ``counterexample`` is
    the concrete failing case when it differs from the case itself (exhaustive checks).
    ``error`` (one line) says the case could not be checked at all (a real job's JVM did not
    start); ``detail`` holds what a suite records per case beyond the columns (JSON-able).
    """

    violations: list[Violation] = field(default_factory=list)
    assignments: int = 1
    method: str = "check"
    counterexample: Any = None
    error: str | None = None
    detail: dict | None = None

    @property
    def properties(self) -> list[str]:
        """Violated property names, once each, in the order found."""
        return list(dict.fromkeys(v.property for v in self.violations))


def checked(check, *args) -> Outcome:
    """Run ``check(*args)``; an exception in the code under test becomes a ``crash`` violation."""
    try:
        return check(*args)
    except Exception as error:  # noqa: BLE001 - any crash of the checked code is a finding
        return Outcome([Violation(CRASH, f"{type(error).__name__}: {error}")])


class CaseSpace:
    """Cases of one suite under one token. ``size`` is ``None`` for random (unbounded) spaces.
    ``workdir`` is where a suite that leaves files per case (real runs) keeps them; a sweep sets
    it to a folder of its output, so a resumed sweep finds the cases already run."""

    suite: "Suite"
    token: str
    size: int | None = None
    workdir: str | None = None

    def case(self, index: int) -> Any:
        raise NotImplementedError

    def check(self, case: Any, algorithm: str) -> Outcome:
        raise NotImplementedError

    def shape(self, case: Any) -> str:
        """A short description of the case's shape (``3v 2e 7t``, ``aligned 2ch 9ev``)."""
        raise NotImplementedError

    def magnitude(self, case: Any) -> int:
        """The case's size in the suite's :attr:`Suite.size_unit` (for coverage plots)."""
        raise NotImplementedError

    def coverage(self) -> dict:
        """Counts describing an exhaustive space (``shapes``, ``topologies``, ...); ``{}`` if random."""
        return {}

    def statement(self, algorithm: str, assignments: int) -> str | None:
        """What an exhaustive sweep of this space with no violation proves (None: random space)."""
        return None

    def case_id(self, index: int) -> str:
        return case_id(self.suite.name, self.token, index)


class Suite:
    """One design area's generators and properties behind the sweep's interface."""

    name = ""
    engine = "flink"       # the engine's algorithm / handler (zero violations expected)
    size_unit = "tasks"    # what CaseSpace.magnitude counts
    # Cases per Spark task (a batch): about half a second of work, so per-task overhead stays small.
    random_batch = 1000
    exhaustive_batch = 10
    # Roughly how many plan cases one random case costs; a mixed sweep (the demo) gives each
    # suite cases / relative_cost cases so no suite dominates the wall time.
    relative_cost = 1

    @property
    def title(self) -> str:
        """The design's title, from the registry (:data:`flipcheck.designs.DESIGNS`)."""
        from flipcheck.designs import title_of

        return title_of(self.name)

    def algorithms(self) -> Sequence[str]:
        """Every algorithm or variant name this suite can check (the engine among them)."""
        raise NotImplementedError

    def property_names(self) -> Sequence[str]:
        raise NotImplementedError

    def space(self, token: str) -> CaseSpace:
        """The random space seeded by ``token``, or the exhaustive space it names; ValueError if bad."""
        raise NotImplementedError

    def exhaustive_token(self, max_vertices: int | None, max_parallelism: int | None) -> str:
        """The token of this suite's exhaustive space for the bounds (None: the suite's default)."""
        raise ValueError(f"suite {self.name!r} has no exhaustive enumeration")

    def minimise(self, counterexample: Any, algorithm: str, prop: str) -> Any:
        """A smaller counterexample that still violates ``prop`` (the input if none is found)."""
        return counterexample

    def render(self, counterexample: Any, algorithm: str, out_path: str) -> str:
        """Draw the case (SVG, or PNG by extension); returns the path."""
        raise NotImplementedError

    def exhaustive_id(self, unit: Any) -> str | None:
        """The case id of ``unit`` in this suite's default exhaustive space (``flipcheck replay``
        explores it again), or None when it is none of its units. Reads the whole list: for
        suites whose exhaustive space is a short list of exploration configurations."""
        space = self.space(self.exhaustive_token(None, None))
        return next((space.case_id(index) for index in range(space.size) if space.case(index) == unit), None)

    @property
    def replays_cases(self) -> bool:
        """Whether :meth:`replay_argv` gives a command for any case (else only ids replay)."""
        return False

    def replay_argv(self, counterexample: Any, algorithm: str, prop: str, save_graph) -> list[str] | None:
        """A command line that shows this counterexample's violation of ``prop`` again (exit 1),
        reading only files ``save_graph(graph) -> path`` saves; None when the suite has none
        (``flipcheck replay CASE_ID`` regenerates a case from its id instead)."""
        return None

    def size_of(self, counterexample: Any) -> int:
        """A counterexample's size in :attr:`size_unit` (what minimising makes small)."""
        raise NotImplementedError

    def describe(self, counterexample: Any, algorithm: str | None = None) -> dict:
        """The case as JSON (a job graph in the input format, a barrier configuration and events;
        a trace's steps as :mod:`flipcheck.render.trace_steps` encodes them, replayed under
        ``algorithm``, the variant whose counterexample it is: default the engine)."""
        raise NotImplementedError

    def variant_class(self, spec: str) -> type:
        """The user's class ``spec`` names, checked against this suite's base class (the
        registry's lookup); :class:`~flipcheck.reference_impl.user_variants.UserVariantError`
        (a ValueError) naming the problem otherwise. A suite without one takes no user variant."""
        raise WrongVariantKind(f"{spec}: suite {self.name!r} takes no user variants", "a user variant",
                               f"one of {', '.join(self.algorithms())}")

    def knows(self, algorithm: str) -> bool:
        """Whether this suite checks ``algorithm``: one of its names, or a user variant of its
        kind. A spec that names no class at all (no such file, ...) raises its ValueError."""
        if not is_spec(algorithm):
            return algorithm in self.algorithms()
        try:
            self.variant_class(algorithm)
        except WrongVariantKind:
            return False
        return True

    def check_name(self, algorithm: str) -> str:
        """``algorithm`` if this suite knows it (a user variant's spec: if it names a class of the
        suite's kind); ValueError naming the known ones, or the spec's problem, otherwise."""
        if is_spec(algorithm):
            self.variant_class(algorithm)
            return algorithm
        known = self.algorithms()
        if algorithm not in known:
            raise ValueError(f"suite {self.name!r} has no algorithm or variant {algorithm!r} "
                             f"(expected one of {', '.join(known)})")
        return algorithm


def get_suite(name: str) -> Suite:
    """The sweep suite of design ``name`` (:func:`flipcheck.designs.design`), or a suite beside
    the designs (:data:`SUITES_BESIDE_DESIGNS`)."""
    if name in SUITES_BESIDE_DESIGNS:
        import importlib

        return importlib.import_module(SUITES_BESIDE_DESIGNS[name]).suite
    from flipcheck.designs import design

    return design(name).suite


def suite_known(name: str) -> bool:
    """A design's name or a suite's beside the designs."""
    from flipcheck.designs import DESIGNS

    return name in DESIGNS or name in SUITES_BESIDE_DESIGNS


def resolve_case(text: str) -> tuple[Suite, CaseSpace, int]:
    """``SUITE:TOKEN:INDEX`` -> (suite, space, index); ValueError / DesignUnavailable naming the problem."""
    suite_name, token, index = parse_case_id(text)
    from flipcheck.designs import DESIGNS

    if not suite_known(suite_name):
        known = ", ".join([*DESIGNS, *SUITES_BESIDE_DESIGNS])
        raise ValueError(f"case id {text!r}: unknown suite {suite_name!r} (expected one of {known})")
    suite = get_suite(suite_name)
    space = suite.space(token)
    if space.size is not None and index >= space.size:
        raise ValueError(f"case id {text!r}: index {index} is outside 0..{space.size - 1}")
    return suite, space, index

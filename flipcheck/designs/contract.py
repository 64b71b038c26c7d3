"""The design contract: what every design's front-end module provides.

A *design* is one seed design (or one part of it) checked end to end: a spec in ``model/``, an
engine and its named variants in ``reference_impl/``, properties and explorers in
``properties/``, generators in ``generators/``, and one front-end module here,
``flipcheck/designs/<design>.py``, that ties them together for the commands. The front-end
module *is* the implementation of :class:`Design`: its module-level names are the contract's
members, so a design is added by writing its layer modules plus one line of
:data:`flipcheck.designs.DESIGNS`.

``verify``, ``sweep``, ``mutants``, ``replay`` and the docs index read only this contract;
``tests/cover/test_design_contract.py`` checks every registered design against it.

Example
-------
>>> from flipcheck.designs import design
>>> protocol = design("protocol")
>>> isinstance(protocol, Design)
True
>>> protocol.name, protocol.engine, protocol.spec
('protocol', 'flip-147', 'flipcheck.model.protocol')
>>> protocol.engine == protocol.variants[0] and protocol.suite.name == protocol.name
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from flipcheck.designs.suite import Suite

__all__ = ["Design", "Mutant", "Detection", "DesignUnavailable", "DRIVERS"]

# Every driver a design may name in its ``drivers`` (and in the rows ``verify`` returns).
DRIVERS = ("seeded", "hypothesis", "stateful", "exploration", "exhaustive", "z3", "liveness", "seed-designs")


class DesignUnavailable(LookupError):
    """The design is registered but its front-end module is not part of this build."""


@dataclass(frozen=True)
class Mutant:
    """A named variant that re-creates a real bug or a rejected design (``flipcheck mutants``)."""

    id: str
    suite: str    # the design's name
    variant: str  # the name the design's ``variants`` knows it by
    flink_issue: str | None
    description: str


@dataclass
class Detection:
    """What hunting a mutant found: which property caught it, with which driver, how fast, and
    the counterexample (in the form the design's ``render`` draws)."""

    caught: bool
    property: str | None = None
    driver: str | None = None
    cases_to_detection: int | None = None
    seconds: float = 0.0
    counterexample_size: int | None = None
    counterexample: object = None


@runtime_checkable
class Design(Protocol):
    """The members of a design's front-end module (``flipcheck/designs/<design>.py``)."""

    name: str
    """The design's one name: its key in DESIGNS, its ``--suite`` and its module names."""
    title: str
    """A short human title (``checkpoint plans with finished tasks``)."""
    seed: str
    """The seed design and the sections it encodes."""
    spec: str
    """The dotted name of the model module: the specification."""
    engine: str
    """The variant that is the engine as shipped (no violation expected)."""
    variants: Sequence[str]
    """Every variant ``--variant`` accepts, the engine first."""
    properties: Sequence[str]
    """Every property name ``verify`` may report."""
    drivers: Sequence[str]
    """The drivers ``verify`` runs (a subset of :data:`DRIVERS`)."""
    suite: "Suite"
    """The sweep suite: cases from ids, checks, minimising, pictures."""

    def verify(self, budget_seconds: float, variant: str | None = None) -> list[dict]:
        """Run every driver on every property: rows ``{"name", "cases", "violations", "driver"}``."""

    def mutants(self) -> list[Mutant]:
        """The design's mutants (named variants that re-create bugs)."""

    def hunt(self, mutant: Mutant, budget_seconds: float) -> Detection:
        """Run the design's drivers against ``mutant`` until the first violation or the budget."""

    def render(self, counterexample: Any, variant: str, out_path: str) -> str | None:
        """Draw a counterexample as ``hunt`` returns it; the path, or None without a picture."""

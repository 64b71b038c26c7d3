"""What every property returns: a list of violations, each with an explanation.

A property is a plain function; an empty list means it holds on that input. The same function
is driven by pytest, hypothesis, z3 counterexample checks and the Spark sweep.

>>> v = Violation("trigger_subset_of_running", "('a', 0) is triggered but FINISHED", witness=("a", 0))
>>> str(v)
"trigger_subset_of_running: ('a', 0) is triggered but FINISHED"
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Violation", "Property"]


@dataclass(frozen=True)
class Violation:
    property: str
    message: str
    witness: Any = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.property}: {self.message}"


@dataclass(frozen=True)
class Property:
    """A named property with its documentation and where it comes from."""

    name: str
    check: Callable[..., list[Violation]]
    meaning: str
    source: str  # the seed sentence or Flink fact it encodes

    def __call__(self, *args, **kwargs) -> list[Violation]:
        return self.check(*args, **kwargs)

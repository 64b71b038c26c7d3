"""One source of choices for every generator, driven by hypothesis or by a seeded RNG.

Each generator in this package is written once against :class:`Chooser`. Hypothesis drives it
through ``draw`` (and so shrinks it); sweeps drive it through :class:`SeededChooser`, whose
stream depends only on the case id, so a case id regenerates its case exactly on any machine.

>>> a, b = SeededChooser.for_case("s42", 7), SeededChooser.for_case("s42", 7)
>>> [a.integer(0, 100) for _ in range(3)] == [b.integer(0, 100) for _ in range(3)]
True
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Callable, Protocol, Sequence, TypeVar

__all__ = ["Chooser", "SeededChooser", "HypothesisChooser", "case_id", "parse_case_id"]

T = TypeVar("T")


class Chooser(Protocol):
    def integer(self, low: int, high: int) -> int:
        """An integer in ``low..high`` inclusive; hypothesis shrinks towards ``low``."""

    def boolean(self, p_true: float = 0.5) -> bool:
        """A boolean; hypothesis shrinks towards False."""


def choice(chooser: Chooser, options: Sequence[T]) -> T:
    """One of ``options``; shrinks towards the first."""
    return options[chooser.integer(0, len(options) - 1)]


def permutation(chooser: Chooser, items: Sequence[T]) -> list[T]:
    """A permutation (Fisher–Yates); shrinks towards the identity."""
    result = list(items)
    for i in range(len(result) - 1):
        j = i + chooser.integer(0, len(result) - 1 - i)
        result[i], result[j] = result[j], result[i]
    return result


class SeededChooser:
    """Choices from a ``random.Random`` seeded by a case id (stable across machines: string
    seeds are hashed with SHA-512 by CPython's version-2 seeding)."""

    __slots__ = ("_random",)

    def __init__(self, rng: random.Random):
        self._random = rng

    @classmethod
    def for_case(cls, seed: str | int, index: int) -> "SeededChooser":
        digest = hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()
        return cls(random.Random(digest))

    def integer(self, low: int, high: int) -> int:
        return self._random.randint(low, high)

    def boolean(self, p_true: float = 0.5) -> bool:
        return self._random.random() < p_true


class HypothesisChooser:
    """Choices drawn from hypothesis inside ``@st.composite``."""

    __slots__ = ("_draw",)

    def __init__(self, draw: Callable):
        self._draw = draw

    def integer(self, low: int, high: int) -> int:
        from hypothesis import strategies as st

        return self._draw(st.integers(low, high))

    def boolean(self, p_true: float = 0.5) -> bool:
        from hypothesis import strategies as st

        if p_true >= 1:
            return True
        if p_true <= 0:
            return False
        # Biased yet shrinkable: the integer shrinks to 0, which is False.
        return self._draw(st.integers(0, 99)) >= round((1 - p_true) * 100)


def case_id(suite: str, seed: str | int, index: int) -> str:
    """The printable id of one generated case: ``SUITE:SEED:INDEX``."""
    return f"{suite}:{seed}:{index}"


# Three non-empty fields; the index in ASCII digits (str.isdigit() also takes "١" and "²").
_CASE_ID = re.compile(r"([^:\s]+):([^:\s]+):([0-9]{1,19})")


def parse_case_id(text: str) -> tuple[str, str, int]:
    """Inverse of :func:`case_id`; raises ValueError naming the problem.

    >>> parse_case_id("plan:42:17")
    ('plan', '42', 17)
    >>> parse_case_id("plan::5")
    Traceback (most recent call last):
    ValueError: case id 'plan::5' is not SUITE:SEED:INDEX (INDEX in ASCII digits, no empty field)
    """
    match = _CASE_ID.fullmatch(text)
    if match is None or not text.isprintable():
        raise ValueError(f"case id {text!r} is not SUITE:SEED:INDEX (INDEX in ASCII digits, no empty field)")
    return match[1], match[2], int(match[3])

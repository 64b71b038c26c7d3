"""One source of choices for every generator, driven by hypothesis or by a seeded RNG.

Each generator in this package is written once against :class:`Chooser`. Hypothesis drives it
through ``draw`` (and so shrinks it); sweeps drive it through :class:`SeededChooser`, whose
stream depends only on the case id, so a case id regenerates its case exactly on any machine.

>>> a, b = SeededChooser.for_case("s42", 7), SeededChooser.for_case("s42", 7)
>>> [a.integer(0, 100) for _ in range(3)] == [b.integer(0, 100) for _ in range(3)]
True

A case hypothesis found has no seed; its choices, recorded as it was generated, are its seed
instead: the token ``choices-…`` in the case id's SEED field (:func:`choices_token`), which
:func:`chooser_for` turns back into the same answers, so that case replays exactly too.

>>> recording = RecordingChooser(SeededChooser.for_case("s42", 7))
>>> drawn = [recording.integer(0, 100), recording.boolean(), recording.integer(3, 5)]
>>> again = chooser_for(choices_token(recording.answers), 0)
>>> [again.integer(0, 100), again.boolean(), again.integer(3, 5)] == drawn
True
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Callable, Protocol, Sequence, TypeVar

__all__ = ["Chooser", "SeededChooser", "HypothesisChooser", "RecordingChooser", "ReplayChooser", "RecordedChoicesError",
           "CHOICES_PREFIX",
           "case_id", "chooser_for", "choices_token", "parse_case_id"]

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


class RecordingChooser:
    """Answers from ``inner``, each kept in :attr:`answers` (a boolean as 0 or 1)."""

    __slots__ = ("_inner", "answers")

    def __init__(self, inner: Chooser):
        self._inner, self.answers = inner, []

    def integer(self, low: int, high: int) -> int:
        answer = self._inner.integer(low, high)
        self.answers.append(answer)
        return answer

    def boolean(self, p_true: float = 0.5) -> bool:
        answer = self._inner.boolean(p_true)
        self.answers.append(int(answer))
        return answer


class RecordedChoicesError(ValueError):
    """Recorded answers that do not fit the generator (or a malformed ``choices-`` seed)."""


class ReplayChooser:
    """The answers a :class:`RecordingChooser` kept, in order; :class:`RecordedChoicesError` when
    the generator asks for more, or for a range an answer is not in (another generator made them)."""

    __slots__ = ("_answers", "_next")

    def __init__(self, answers: Sequence[int]):
        self._answers, self._next = tuple(answers), 0

    def _take(self, low: int, high: int) -> int:
        if self._next >= len(self._answers):
            raise RecordedChoicesError(f"the recorded choices end after {len(self._answers)} answers, and the generator asks for "
                             "more: they were recorded by another version of it")
        answer = self._answers[self._next]
        if not low <= answer <= high:
            raise RecordedChoicesError(f"recorded choice {self._next + 1} is {answer}, outside {low}..{high}: the choices were "
                             "recorded by another version of the generator")
        self._next += 1
        return answer

    def integer(self, low: int, high: int) -> int:
        return self._take(low, high)

    def boolean(self, p_true: float = 0.5) -> bool:
        return bool(self._take(0, 1))


# A case id's SEED field that carries recorded answers: choices-3.0.17 (none: "choices-").
CHOICES_PREFIX = "choices-"
_CHOICES = re.compile(r"choices-((?:-?[0-9]{1,19}(?:\.-?[0-9]{1,19})*)?)")


def choices_token(answers: Sequence[int]) -> str:
    """The SEED field that replays ``answers``: no colon or space, so it fits a case id."""
    return CHOICES_PREFIX + ".".join(str(answer) for answer in answers)


def chooser_for(seed: str | int, index: int) -> Chooser:
    """The chooser of case ``index`` under ``seed``: the recorded answers of a ``choices-`` seed
    (its only case is index 0), else :meth:`SeededChooser.for_case`."""
    if isinstance(seed, str) and seed.startswith(CHOICES_PREFIX):
        match = _CHOICES.fullmatch(seed)
        if match is None:
            raise RecordedChoicesError(f"seed {seed[:60]!r} is not choices-N.N.… (the recorded answers: integers in ASCII digits)")
        if index != 0:
            raise RecordedChoicesError(f"a {CHOICES_PREFIX}… seed holds one case, index 0, not {index}")
        return ReplayChooser([int(answer) for answer in match[1].split(".")] if match[1] else [])
    return SeededChooser.for_case(seed, index)


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

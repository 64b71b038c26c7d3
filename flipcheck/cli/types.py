"""Argument types and checks every ``flipcheck`` command shares.

Each option is parsed once, strictly and within bounds, so that no command runs with a value it
cannot handle (an int too big for a C long, a NaN budget, digits of another script), and every
refusal is one line that names the option. ``one_line`` is how user text is echoed in errors.
"""

from __future__ import annotations

import argparse
import math
import os
import re

__all__ = [
    "MAX_SECONDS",
    "MAX_CASES",
    "MAX_SIZE_BOUND",
    "bounded_int",
    "seconds",
    "name",
    "variant",
    "one_line",
    "check_output_dir",
]

# A budget or timeout longer than a day is a typo (or 1e308), not a plan.
MAX_SECONDS = 86_400.0

# More random cases than a cluster checks in a week; a larger count is a typo.
MAX_CASES = 10**12
# Generous ceiling for an exhaustive bound or a batch size; each suite checks its own tighter one.
MAX_SIZE_BOUND = 10**9

# ASCII digits only: int() would also take "١٢", "1_000" and " 7 ".
_ASCII_INT = re.compile(r"[+-]?[0-9]+")
# Longer than any bound below, short enough that int() of it is instant.
_MAX_DIGITS = 30


def bounded_int(low: int, high: int):
    """An argparse ``type`` accepting a decimal integer in ``low..high`` (ASCII digits only)."""

    def parse(text: str) -> int:
        if len(text) > _MAX_DIGITS or not _ASCII_INT.fullmatch(text):
            raise argparse.ArgumentTypeError(f"{repr(text)[:40]} is not an integer (ASCII digits)")
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low:,}..{high:,}")
        return value

    parse.__name__ = "integer"  # argparse names the type in its own messages
    return parse


def seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds, > 0 and at most :data:`MAX_SECONDS`."""
    try:
        value = float(text) if len(text) <= _MAX_DIGITS else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{repr(text)[:40]} is not a number of seconds in (0, {MAX_SECONDS:,.0f}]")
    return value


def name(text: str) -> str:
    """An argparse ``type`` for a name (algorithm, variant, mutant, suite): non-empty printable
    text, so that an empty ``--variant ''`` is not read as "no variant" and silently ignored."""
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"{text!r} is not a name")
    return text


def variant(text: str) -> str:
    """An argparse ``type`` for ``--variant`` / ``--algorithm``: a :func:`name`, or a user variant's
    spec ``FILE.py:CLASS`` / ``MODULE:CLASS`` with a relative path made absolute, so the spec means
    the same file in every process (Spark executors) and in what the command records."""
    from flipcheck.reference_impl.user_variants import absolute_spec

    return absolute_spec(name(text))


def one_line(text: str) -> str:
    """``text`` with every non-printable character (newline, ESC, NUL, a lone surrogate, ...)
    escaped the way ``repr`` does, so an error echoing user text stays one line on any terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def check_output_dir(path: str, option: str) -> None:
    """Create the output directory ``path`` and write a probe file in it now, before any work,
    so that a long run does not fail at its end; UsageError naming ``option`` otherwise."""
    import tempfile

    from flipcheck.errors import UsageError

    if not path or "\0" in path:
        raise UsageError(f"{option} {path!r}: not a usable path")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{option} {path!r}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise UsageError(f"{option} {path!r}: cannot write there ({error.strerror or error})") from None

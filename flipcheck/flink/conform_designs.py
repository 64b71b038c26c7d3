"""The designs ``flipcheck conform`` validates beside FLIP-147's protocol: one line each.

Each design's conformance lives in its own module, ``flipcheck/flink/conform_<design>.py``,
whose function ``conform_<design>(reading, run)`` returns a
:class:`~flipcheck.flink.design_conformance.DesignConformance`, or None when the logs hold no
line of that design. :data:`DESIGN_CONFORMANCE` names each function as ``MODULE:FUNCTION``: a
module is imported when :func:`design_functions` is first asked (it registers its log lines with
:func:`flipcheck.flink.logs.add_pattern` then), so this registry imports none of them and they may
import :mod:`flipcheck.flink.conform`.

Example
-------
>>> sorted(DESIGN_CONFORMANCE)
['batch-recovery', 'local-recovery', 'split-assignment']
>>> design_name("split-asignment")
Traceback (most recent call last):
...
ValueError: unknown design 'split-asignment' (nearest: split-assignment; known: protocol, split-assignment, local-recovery, batch-recovery)
"""

from __future__ import annotations

import difflib
import importlib
from typing import Callable

from flipcheck.flink.design_conformance import DESIGN_NAMES

__all__ = ["DESIGN_CONFORMANCE", "design_functions", "design_name"]

# design -> "module:function"; "protocol" is conform's own (flipcheck.flink.conform.conform).
DESIGN_CONFORMANCE = {
    "split-assignment": "flipcheck.flink.conform_split_assignment:conform_split_assignment",
    "local-recovery": "flipcheck.flink.conform_local_recovery:conform_local_recovery",
    "batch-recovery": "flipcheck.flink.conform_batch_recovery:conform_batch_recovery",
}


def design_name(text: str) -> str:
    """``text`` if it names a design conform knows; ValueError naming the nearest otherwise."""
    if text in DESIGN_NAMES:
        return text
    nearest = difflib.get_close_matches(text, DESIGN_NAMES, n=1, cutoff=0.0)
    raise ValueError(f"unknown design {text!r} (nearest: {nearest[0]}; known: {', '.join(DESIGN_NAMES)})")


def design_functions(only: str | None = None) -> dict[str, Callable]:
    """Each registered design's ``conform_<design>`` (just ``only``'s when given), imported now."""
    functions = {}
    for design, target in DESIGN_CONFORMANCE.items():
        if only is None or design == only:
            module, function = target.split(":")
            functions[design] = getattr(importlib.import_module(module), function)
    return functions

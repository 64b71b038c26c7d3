"""Errors the CLI turns into exit code 2 and one line on stderr."""

from __future__ import annotations

__all__ = ["InputError", "UsageError"]


class InputError(Exception):
    """A malformed input file: ``flipcheck: SOURCE: MESSAGE``."""

    def __init__(self, source: str, message: str):
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class SearchCut(UserWarning):
    """An exploration stopped by its bound before it searched every state: no violation among
    the states it searched, and no verdict on the others."""


class UsageError(Exception):
    """A bad option or argument: ``flipcheck: MESSAGE``."""

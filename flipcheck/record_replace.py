"""``_replace`` for the model's records, as the compiled build runs it.

Every rule of the model builds its next state with ``NamedTuple._replace``. mypyc compiles the
rules but leaves the records ordinary Python classes, so each call still runs ``collections``'
interpreted ``_replace`` and ``_make`` (about a fifth of a compiled search's time). This module
is compiled with the rules; :mod:`flipcheck.compiled` installs :class:`Replace` as ``_replace``
on the records of each module it loads compiled. The model's files are unchanged, and a record
answers every ``_replace`` exactly as ``collections``' does: the same new record, and the same
``ValueError`` for a field it does not have.

>>> from typing import NamedTuple
>>> class Point(NamedTuple):
...     x: int
...     y: int
>>> replace(Point(1, 2), y=5)
Point(x=1, y=5)
>>> Point._replace = Replace()
>>> Point(1, 2)._replace(x=7), Point._replace(Point(1, 2), y=0)
(Point(x=7, y=2), Point(x=1, y=0))
>>> Point(1, 2)._replace(z=3)
Traceback (most recent call last):
...
ValueError: Got unexpected field names: ['z']
"""

from __future__ import annotations

from typing import Any

__all__ = ["Replace", "replace"]

# Each record class's field positions, worked out on its first ``_replace``.
_POSITIONS: dict[Any, dict[str, int]] = {}


def _positions(cls: Any) -> dict[str, int]:
    positions = _POSITIONS.get(cls)
    if positions is None:
        positions = _POSITIONS[cls] = {name: i for i, name in enumerate(cls._fields)}
    return positions


def _replaced(record: Any, changes: dict[str, Any]) -> Any:
    cls = type(record)
    positions = _positions(cls)
    values = list(record)
    for name, value in changes.items():
        i = positions.get(name)
        if i is None:
            raise ValueError(f"Got unexpected field names: {[n for n in changes if n not in positions]!r}")
        values[i] = value
    return tuple.__new__(cls, values)


def replace(record: Any, /, **changes: Any) -> Any:
    """``record`` with the fields named in ``changes`` set, as ``record._replace(**changes)``."""
    return _replaced(record, changes)


class _BoundReplace:
    """``record._replace``: what :class:`Replace` gives for one record."""

    def __init__(self, record: Any) -> None:
        self.record = record

    def __call__(self, **changes: Any) -> Any:
        return _replaced(self.record, changes)


class Replace:
    """A descriptor standing in for a record class's ``_replace``: on a record, the method; on
    the class, :func:`replace` (called with the record first, as the class's own)."""

    def __get__(self, record: Any, owner: Any = None) -> Any:
        if record is None:
            return replace
        return _BoundReplace(record)

"""States stored as 64-bit fingerprints: the seen-set of an exploration in about 24 bytes a state.

An explorer that keeps every reachable state spends about 1 KB on each (measured on the
whole-job model). It only needs to know whether it has seen a state, and which number it gave
it (the reachable graph is kept as numbers). :class:`FingerprintTable` keeps, per state, its
64-bit fingerprint and its number in two flat arrays with open addressing (8 + 4 bytes a slot,
at most half the slots used).

Two different states may share a fingerprint; the explorer then wrongly takes the second for
seen. :func:`collision_probability` estimates the chance that this happened, as TLC does:
``n * (m - n) / 2**64`` for ``n`` distinct states among ``m`` generated ones (TLC's "optimistic"
estimate, assuming fingerprints spread uniformly).

The fingerprint is Python's ``hash()`` of the state, 64 bits on 64-bit builds. It is stable
within one process and the processes forked from it, and nowhere else: hashes of strings change
between processes unless ``PYTHONHASHSEED`` is fixed, and Python 3.11 hashes ``None`` by its
address, which changes with every process even under one seed (3.12 gives it a constant hash).
Where fingerprints meet across processes that were not forked from one another (the executors
of a Spark cluster, each with its own Python daemon; a search resumed from a saved level), the
explorers use :func:`stable_fingerprint` instead, and fix ``PYTHONHASHSEED``.

Example
-------
>>> table = FingerprintTable()
>>> table.number_of(fingerprint(("a", 1)), 0), table.number_of(fingerprint(("b", 2)), 1)
(0, 1)
>>> table.number_of(fingerprint(("a", 1)), 2), len(table)      # seen: keeps its number
(0, 2)
>>> table.find(fingerprint(("c", 3)))
-1
>>> f"{collision_probability(1_000_000, 5_000_000):.1e}"
'2.2e-07'
>>> stable_fingerprint((None, (1, None))) == stable_fingerprint((None, (1, None)))
True
"""

from __future__ import annotations

from array import array

__all__ = ["FingerprintTable", "fingerprint", "stable_fingerprint", "collision_probability"]

_MASK64 = (1 << 64) - 1
_EMPTY = 0
_STAND_IN_FOR_ZERO = 0x9E3779B97F4A7C15  # 0 marks an empty slot; a state hashing to 0 uses this


def fingerprint(state) -> int:
    """A nonzero signed 64-bit fingerprint of a hashable ``state``."""
    return _nonzero(hash(state))


def stable_fingerprint(state) -> int:
    """A nonzero signed 64-bit fingerprint of ``state`` (tuples, possibly named, of tuples,
    ints, bools, strings and None: what the model's states are made of) that every process
    computes alike under one ``PYTHONHASHSEED``: :func:`fingerprint` with ``None`` given a fixed
    hash. A tuple's hash is taken over its items' fingerprints, so the nesting counts."""
    return _nonzero(_stable_hash(state))


def _nonzero(value: int) -> int:
    """``value``, or a stand-in when it is 0, which marks an empty slot of the table."""
    return value if value != _EMPTY else _STAND_IN_FOR_ZERO - (1 << 64)


# None's hash in a stable fingerprint: far from every int a state holds (counts, ids, bit masks).
_NONE_HASH = -0x4E6F6E65_5F6E6F6E


def _stable_hash(value) -> int:
    if value is None:
        return _NONE_HASH
    if isinstance(value, tuple):
        return hash(tuple([_stable_hash(item) for item in value]))
    return hash(value)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate that two of ``distinct`` states (among ``generated`` successors)
    share a fingerprint: ``distinct * (generated - distinct) / 2**64``."""
    return distinct * max(generated - distinct, 0) / 2.0 ** 64


class FingerprintTable:
    """Fingerprint -> state number, open addressing over two flat arrays."""

    __slots__ = ("_keys", "_numbers", "_mask", "_used")

    def __init__(self, capacity: int = 1 << 12):
        size = 1 << max(4, (capacity * 2 - 1).bit_length())
        self._keys = array("q", bytes(8 * size))
        self._numbers = array("i", bytes(4 * size))
        self._mask = size - 1
        self._used = 0

    def __len__(self) -> int:
        return self._used

    @property
    def bytes_used(self) -> int:
        return len(self._keys) * 8 + len(self._numbers) * 4

    def arrays(self) -> tuple[array, array]:
        """The slots: fingerprints (0 = empty) and numbers, for saving."""
        return self._keys, self._numbers

    @classmethod
    def from_arrays(cls, keys: array, numbers: array) -> "FingerprintTable":
        """The table whose slots :meth:`arrays` gave; ValueError if they cannot be one."""
        size = len(keys)
        if size != len(numbers) or size < 16 or size & (size - 1):
            raise ValueError("fingerprint slots of unequal or non-power-of-two length")
        table = cls(capacity=8)   # its (small) empty slots are replaced at once
        table._keys, table._numbers, table._mask = keys, numbers, size - 1
        table._used = size - keys.count(_EMPTY)
        if table._used * 2 > table._mask:
            raise ValueError("fingerprint table fuller than half")
        return table

    def _slot(self, key: int) -> int:
        """The slot holding ``key``, or the empty slot where it would go (linear probing)."""
        keys, mask = self._keys, self._mask
        slot = key & mask
        while True:
            found = keys[slot]
            if found == key or found == _EMPTY:
                return slot
            slot = (slot + 1) & mask

    def find(self, key: int) -> int:
        """The number stored for fingerprint ``key``, or -1."""
        slot = self._slot(key)
        return self._numbers[slot] if self._keys[slot] == key else -1

    def number_of(self, key: int, new_number: int) -> int:
        """The number stored for ``key``; if there is none, store ``new_number`` and return it."""
        slot = self._slot(key)
        if self._keys[slot] == key:
            return self._numbers[slot]
        self._keys[slot] = key
        self._numbers[slot] = new_number
        self._used += 1
        if self._used * 2 > self._mask:
            self._grow()
        return new_number

    def _grow(self) -> None:
        old_keys, old_numbers = self._keys, self._numbers
        size = len(old_keys) * 2
        keys = self._keys = array("q", bytes(8 * size))
        numbers = self._numbers = array("i", bytes(4 * size))
        mask = self._mask = size - 1
        for key, number in zip(old_keys, old_numbers):
            if key != _EMPTY:
                slot = key & mask
                while keys[slot] != _EMPTY:
                    slot = (slot + 1) & mask
                keys[slot] = key
                numbers[slot] = number

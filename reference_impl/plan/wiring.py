"""POINTWISE wiring as Flink computes it: closed forms over whole vertices (flip147 facts §1.7).

``EdgeManagerBuildUtil.connectPointwise`` walks the partitions once per job edge; here the result
is, for every downstream subtask, the ``range`` of upstream partitions it reads. The model's rule
(:mod:`flipcheck.model.pointwise`) is the specification these are checked against.

Example
-------
>>> integer_wiring(10, 3)
(range(0, 3), range(3, 6), range(6, 10))
>>> integer_wiring(2, 3)
(range(0, 1), range(0, 1), range(1, 2))
"""

from __future__ import annotations

from functools import lru_cache
import math

__all__ = ["integer_wiring", "float_ceil_wiring", "WIRINGS"]


@lru_cache(maxsize=4096)
def integer_wiring(upstream: int, downstream: int) -> tuple[range, ...]:
    """Flink since FLINK-22863: integer formulas, one pass over the partitions."""
    if upstream >= downstream:
        return tuple(range(i * upstream // downstream, (i + 1) * upstream // downstream) for i in range(downstream))
    ranges: list[range] = [range(0)] * downstream
    for partition in range(upstream):
        start = (partition * downstream + upstream - 1) // upstream
        end = ((partition + 1) * downstream + upstream - 1) // upstream
        for subtask in range(start, end):
            ranges[subtask] = range(partition, partition + 1)
    return tuple(ranges)


def _float32(value: float) -> float:
    # Java evaluates `(float) D / U` in single precision; reproduce the rounding.
    import struct

    return struct.unpack("f", struct.pack("f", value))[0]


@lru_cache(maxsize=4096)
def float_ceil_wiring(upstream: int, downstream: int) -> tuple[range, ...]:
    """Flink 1.13's first EdgeManagerBuildUtil (FLINK-22863): ``Math.ceil(j * (float) D / U)``.

    For ``U < D`` the consumer range of partition ``j`` was computed with single-precision
    floats; rounding can shift a boundary, leaving a subtask with no input or reading two
    partitions, or index past the end (the AIOOBE of the bug report). Indices past the end are
    dropped here; the wiring properties report them as a subtask that reads nothing or overlaps.
    """
    if upstream >= downstream:
        return integer_wiring(upstream, downstream)
    def boundary(partition: int) -> int:
        # Java: Math.ceil(partition * (float) D / U), left to right in float arithmetic.
        return math.ceil(_float32(_float32(partition * downstream) / upstream))

    reads: list[list[int]] = [[] for _ in range(downstream)]
    for partition in range(upstream):
        start, end = boundary(partition), boundary(partition + 1)
        for subtask in range(start, min(end, downstream)):
            reads[subtask].append(partition)
    return tuple(range(r[0], r[-1] + 1) if r else range(0) for r in reads)


WIRINGS = {"integer": integer_wiring, "float-ceil": float_ceil_wiring}

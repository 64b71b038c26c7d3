"""Which upstream subtasks a downstream subtask reads over a POINTWISE edge (flip147 facts §1.7).

Flink connects ``U`` upstream partitions to ``D`` downstream subtasks with integer arithmetic
(``VertexInputInfoComputationUtils.computeVertexInputInfoForPointwise``, same formulas since
FLINK-22863):

* ``U >= D``: downstream ``i`` consumes the contiguous partitions ``[i*U/D, (i+1)*U/D - 1]``;
* ``U < D``: upstream partition ``j`` is consumed by downstream subtasks
  ``[ceil(j*D/U), ceil((j+1)*D/U) - 1]``.

This module states the rule as the facts do, for clarity; engine-style closed forms live in
``reference_impl`` and are checked against it.

Example
-------
>>> [list(consumed_partitions(5, 3, i)) for i in range(3)]
[[0], [1, 2], [3, 4]]
>>> [list(consumed_partitions(3, 5, i)) for i in range(5)]
[[0], [0], [1], [1], [2]]
"""

from __future__ import annotations

__all__ = ["consumed_partitions", "consumers_of_partition"]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def consumers_of_partition(upstream: int, downstream: int, partition: int) -> range:
    """Downstream subtasks reading upstream partition ``partition``."""
    if upstream < downstream:
        return range(_ceil_div(partition * downstream, upstream), _ceil_div((partition + 1) * downstream, upstream))
    # U >= D: each partition belongs to exactly one downstream range.
    for subtask in range(downstream):
        if partition in consumed_partitions(upstream, downstream, subtask):
            return range(subtask, subtask + 1)
    raise AssertionError(f"partition {partition} of {upstream}->{downstream} is read by nobody")


def consumed_partitions(upstream: int, downstream: int, subtask: int) -> range:
    """Upstream partitions read by downstream subtask ``subtask``."""
    if upstream >= downstream:
        return range(subtask * upstream // downstream, (subtask + 1) * upstream // downstream)
    for partition in range(upstream):
        if subtask in consumers_of_partition(upstream, downstream, partition):
            return range(partition, partition + 1)
    raise AssertionError(f"no upstream partition for subtask {subtask} of {upstream}->{downstream}")

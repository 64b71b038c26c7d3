"""The ``batch-recovery`` suite for sweeps: batch job recovery after JM failover (FLIP-383).

* Random space (token = a seed): case ``i`` is a small DAG with splits and failure budgets and a
  run of up to 40 actions the specification enables, JM crashes included
  (:func:`flipcheck.generators.batch_recovery.generate_case`), replayed on the implementation
  under test with every property and the model next to it.
* Exhaustive space (token ``exhaustive-default``): the exploration configurations of
  :data:`flipcheck.designs.batch_recovery.EXPLORATION_CONFIGS`, every crash point each.

Built by :class:`~flipcheck.designs.generated_suite.GeneratedSuite` from ``flipcheck/designs/batch_recovery.py``.

Example
-------
>>> space = BATCH_RECOVERY_SUITE.space("7")
>>> space.check(space.case(3), "flink").violations
[]
"""

from __future__ import annotations

from flipcheck.designs.generated_suite import GeneratedSuite

__all__ = ["BATCH_RECOVERY_SUITE"]

BATCH_RECOVERY_SUITE = GeneratedSuite("batch-recovery", "batch job recovery after JobManager failover (FLIP-383)",
                                      "flipcheck.designs.batch_recovery")

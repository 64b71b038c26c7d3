"""Stateful hypothesis test: Flink's batch recovery next to the specification; random DAGs, JM
crashes, partition losses and failed recoveries at random points, every property after every
step (generators/batch_recovery.py)."""

from hypothesis import HealthCheck, settings

from flipcheck.generators.batch_recovery import MAX_STEPS, batch_machine

TestFlinkBatchRecovery = batch_machine("flink").TestCase
TestFlinkBatchRecovery.settings = settings(max_examples=80, stateful_step_count=MAX_STEPS, deadline=None,
                                           database=None, derandomize=True,
                                           suppress_health_check=[HealthCheck.too_slow])

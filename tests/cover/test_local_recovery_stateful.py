"""Stateful hypothesis test of task-local recovery on a whole cluster.

The machine (generators/local_recovery.py) runs checkpoints with random primary and local write
outcomes and lost confirmations, task failures, TaskManager losses, corrupt local copies and
unreadable primaries; after every step the cluster checker asserts every property against the
model's local stores (restored state equals the primary, local recovery whenever possible,
retention, allocation-preserving scheduling with an exact optimum).
"""

from flipcheck.generators.local_recovery import QUICK, cluster_machine

ClusterMachine = cluster_machine("flink")
TestCluster = ClusterMachine.TestCase
TestCluster.settings = QUICK

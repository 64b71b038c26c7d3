"""Stateful hypothesis test of the approximate subpartition: the engine next to the model.

The machine (generators/approximate_recovery.py) sends only events the environment allows (the
writer, consumer attempts connecting once and releasing their own view, the live view polling,
the JM releasing the partition) and asserts, after every step, the same outputs as the model and
every subpartition property.
"""

from flipcheck.generators.approximate_recovery import QUICK, subpartition_machine

SubpartitionMachine = subpartition_machine("flip135")
TestSubpartition = SubpartitionMachine.TestCase
TestSubpartition.settings = QUICK

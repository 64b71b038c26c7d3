"""Stateful hypothesis tests: Flink's source coordination next to the specification.

The machine (generators/split_assignment.py) draws enabled actions of random configurations and
asserts, after every step, refinement (same enabled actions and view as the model) and every
property; its invariant re-checks the state invariants."""

from hypothesis.stateful import run_state_machine_as_test

from flipcheck.generators.split_assignment import quick_settings, split_machine

FlinkMachine = split_machine("flink")
TestFlinkSourceCoordination = FlinkMachine.TestCase
TestFlinkSourceCoordination.settings = quick_settings(120)


def test_the_2021_valve_is_a_correct_alternative():
    """The machine asserts every property after every step: completing without an
    AssertionError is the check."""
    run_state_machine_as_test(split_machine("valve-2021"), settings=quick_settings(60))

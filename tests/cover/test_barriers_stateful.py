"""Stateful hypothesis tests: Flink's handlers next to the model, one state machine per mode.

The machines generate only valid channel behaviour and check refinement (same outputs and view)
and every property after every step (generators/barriers.py).
"""

import pytest
from hypothesis.stateful import run_state_machine_as_test

from flipcheck.generators.barriers import QUICK, barrier_machine
from flipcheck.model.barriers import ALIGNED, AT_LEAST_ONCE, UNALIGNED, Config

AlignedMachine = barrier_machine(ALIGNED)
UnalignedMachine = barrier_machine(UNALIGNED)
AtLeastOnceMachine = barrier_machine(AT_LEAST_ONCE)
TestAligned = AlignedMachine.TestCase
TestUnaligned = UnalignedMachine.TestCase
TestAtLeastOnce = AtLeastOnceMachine.TestCase
TestAligned.settings = TestUnaligned.settings = TestAtLeastOnce.settings = QUICK


@pytest.mark.parametrize("config", [Config(3, UNALIGNED, True, True), Config(3, UNALIGNED, False, True)],
                         ids=["after-finished-on", "after-finished-off"])
def test_aligned_with_timeout_switching_to_unaligned(config):
    """The alternating handler gets its own runs at 3 channels (announcements, timeouts).

    The check is the machine's own: its invariants assert every property and the refinement of
    the model after each step, and hypothesis raises on the first failure."""
    run_state_machine_as_test(barrier_machine(UNALIGNED, config=config), settings=QUICK)

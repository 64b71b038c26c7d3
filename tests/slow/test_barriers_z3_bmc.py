"""BMC to depth 8 and the induction proof for 3 channels (the numbers docs/barriers.md reports)."""

import pytest

from flipcheck.model.barriers import Config
from flipcheck.properties.z3_barriers import INVARIANTS, bmc, induction


def test_bmc_depth_8_three_channels_aligned():
    report = bmc(Config(3), depth=8)
    assert report.holds and report.depth == 8


@pytest.mark.parametrize("config", [Config(3), Config(3, "unaligned")], ids=["aligned", "unaligned"])
def test_every_invariant_proved_for_every_depth_three_channels(config):
    report = induction(config)
    assert report.all_proved and set(report.inductive_together) == set(INVARIANTS(config))

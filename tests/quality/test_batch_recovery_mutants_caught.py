"""Every batch-recovery mutant is caught by exploration with a shortest trace that replays."""

import pytest

from flipcheck.properties.batch_recovery_explore import replay
from flipcheck.reference_impl.batch_recovery_variants import MUTANTS
from flipcheck.verify_batch_recovery import EXPLORATION_CONFIGS, check_case, explore_case


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_exploration_catches_mutant(name):
    for config in EXPLORATION_CONFIGS:
        violations, _, counterexample = explore_case(config, name, refinement=False)
        if violations:
            break
    assert violations, f"{name} survived"
    config, trace = counterexample
    steps = replay(config, trace, name, refinement=False)
    assert {v.property for v in steps[-1].violations} & {v.property for v in violations}
    assert check_case((config, trace), "flink") == []

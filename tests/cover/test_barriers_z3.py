"""The z3 encoding of the barrier handler (properties/z3_barriers.py).

The encoding is checked against the explicit model transition by transition, so BMC and the
induction proofs are about the model, not about a second copy of it.
"""

import random

import pytest

from flipcheck.generators.channel_events import random_events
from flipcheck.model.barriers import ALIGNED, DATA, TRIGGERED, UNALIGNED, Config, initial_state, step, view
from flipcheck.model.channel_env import apply, candidates, initial_env, problem
from flipcheck.properties.z3_barriers import INVARIANTS, bmc, evaluate_step, induction

CONFIGS = [Config(2), Config(2, after_finished=False), Config(2, UNALIGNED), Config(2, UNALIGNED, True, True)]


@pytest.mark.parametrize("config", CONFIGS, ids=["aligned", "aligned-off", "unaligned", "timeout"])
def test_encoding_agrees_with_the_model(config):
    rng = random.Random(11)
    checked = 0
    for _ in range(6):
        state, env, last = initial_state(config), initial_env(config), -1
        for event in random_events(config, rng, 10):
            if event[0] == DATA:
                continue  # records do not change the state and are not encoded
            # One invalid event too, from the same state: the encoding must refuse it.
            invalid = [e for e in candidates(config, 3)
                       if e[0] != DATA and problem(config, env, view(config, state).blocked, e)]
            if invalid:
                assert not evaluate_step(config, state, env, last, rng.choice(invalid))[0]
            valid, values, ordered = evaluate_step(config, state, env, last, event)
            nxt, outputs = step(config, state, event)
            env = apply(env, event)
            triggered = [o[1] for o in outputs if o[0] == TRIGGERED]
            last = triggered[-1] if triggered else last
            assert valid and ordered
            assert values == {"state": nxt, "env": env, "last_trigger": last}
            state = nxt
            checked += 1
    assert checked > 20


def test_bmc_small():
    report = bmc(Config(2), depth=4)
    assert report.holds and report.violated == {}


def test_bmc_finds_a_false_invariant():
    """Sanity: an invariant that does not hold is refuted with its depth (a blocked channel
    exists after one barrier)."""
    from flipcheck.properties import z3_barriers

    original = z3_barriers.invariant_checks

    def with_false(config):
        invariants = original(config)
        invariants["nothing_ever_blocked"] = lambda f: z3_barriers.z3.And(*[z3_barriers.z3.Not(b) for b in f.blocked])
        return invariants

    z3_barriers.invariant_checks = with_false
    try:
        report = bmc(Config(2), depth=2)
    finally:
        z3_barriers.invariant_checks = original
    assert not report.holds and report.violated["nothing_ever_blocked"][0] == 1


@pytest.mark.parametrize("config", [Config(2), Config(2, UNALIGNED, True, True)], ids=["aligned", "timeout"])
def test_invariants_are_inductive_together(config):
    report = induction(config)
    assert report.initial_ok and report.trigger_order_proved
    assert report.not_proved == [] and set(report.inductive_together) == set(INVARIANTS(config))
    assert "blocked_subset_open" in report.inductive_alone
    assert "idle_is_clean" not in report.inductive_alone  # needs the others (documented)


def test_at_least_once_is_not_encoded():
    with pytest.raises(ValueError):
        bmc(Config(2, "at-least-once"), depth=1)

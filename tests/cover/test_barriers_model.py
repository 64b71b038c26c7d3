"""The barrier spec (model/barriers.py), its environment (model/channel_env.py) and generators."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flipcheck.generators.channel_events import configs, event_sequences, random_events, valid_events
from flipcheck.model.barriers import (
    ALIGNED, AT_LEAST_ONCE, INPUT_END_OF_STREAM, MODES, SUBSUMED, UNALIGNED, Config, format_event, initial_state,
    parse_event, run, step, view,
)
from flipcheck.model.channel_env import apply, candidates, enabled, initial_env, problem


def outputs_of(config, tokens):
    return [s.outputs for s in run(config, [parse_event(t) for t in tokens.split()])]


def kinds(outputs):
    return [o[0] for o in outputs]


# -- rules -----------------------------------------------------------------------------------------


def test_end_of_partition_counts_as_barrier_of_pending_checkpoint():
    steps = outputs_of(Config(3), "B1@0 B1@1 E@2")
    assert kinds(steps[2]) == ["triggered", "unblocked", "unblocked", "completed"]


def test_end_of_partition_lowers_target_of_later_checkpoints():
    steps = outputs_of(Config(3), "E@2 B1@0 B1@1")
    assert ("triggered", 1, ALIGNED) in steps[2]


def test_feature_off_end_of_partition_aborts_pending():
    steps = outputs_of(Config(2, after_finished=False), "B1@0 E@1")
    assert steps[1][-1] == ("aborted", 1, INPUT_END_OF_STREAM)


def test_newer_barrier_subsumes_pending_checkpoint():
    steps = outputs_of(Config(2), "B1@0 B2@1")
    assert steps[1][:2] == (("unblocked", 0), ("aborted", 1, SUBSUMED))


def test_unaligned_triggers_at_first_barrier_and_captures_records_of_waiting_channels():
    steps = outputs_of(Config(2, UNALIGNED), "B1@0 D@0 D@1 B1@1 D@1")
    assert steps[0] == (("alignment_start", 1), ("triggered", 1, UNALIGNED))
    assert steps[1] == () and steps[2] == (("in_flight", 1, 1),) and steps[4] == ()


def test_timeout_switches_aligned_checkpoint_to_unaligned_and_keeps_channels_blocked():
    config = Config(2, UNALIGNED, alignment_timeout=True)
    events = [parse_event(t) for t in "B1@0 TIMEOUT D@1".split()]
    trace = run(config, events)
    assert trace[1].outputs == (("triggered", 1, UNALIGNED),)
    assert trace[1].view.blocked == 0b01 and trace[2].outputs == (("in_flight", 1, 1),)


def test_rpc_trigger_aligns_open_channels_without_blocking():
    steps = outputs_of(Config(3), "E@0 T1")
    assert "blocked" not in kinds(steps[1]) and ("triggered", 1, ALIGNED) in steps[1]
    assert steps[1][-1] == ("completed", 1)


def test_rpc_trigger_with_every_input_finished_completes_at_once():
    for mode in MODES:
        steps = outputs_of(Config(1, mode), "E@0 T2")
        assert kinds(steps[1]) == ["triggered", "completed"]


def test_tracker_never_blocks_and_never_subsumes():
    steps = outputs_of(Config(2, AT_LEAST_ONCE), "B1@0 B2@0 B1@1 B2@1")
    assert [o for s in steps for o in s if o[0] != "completed"] == [("triggered", 1, AT_LEAST_ONCE),
                                                                     ("triggered", 2, AT_LEAST_ONCE)]


def test_states_are_small_hashable_tuples():
    for mode in MODES:
        state = initial_state(Config(3, mode))
        assert isinstance(state, tuple) and hash(state) == hash(initial_state(Config(3, mode)))


def test_config_rejects_nonsense():
    with pytest.raises(ValueError):
        Config(2, "exactly-twice")
    with pytest.raises(ValueError):
        Config(2, ALIGNED, alignment_timeout=True)
    with pytest.raises(ValueError):
        Config(0)


# -- tokens ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["B1@0", "C12@3", "A2@1", "E@4", "D@0", "T7", "TIMEOUT"])
def test_tokens_round_trip(token):
    assert format_event(parse_event(token)) == token


@pytest.mark.parametrize("token", ["B@0", "B1", "X1@0", "E0", "T0", "b1@0", "B1@-1", ""])
def test_bad_tokens(token):
    with pytest.raises(ValueError):
        parse_event(token)


# -- environment -----------------------------------------------------------------------------------


def test_environment_rules():
    config = Config(2)
    env = initial_env(config)
    assert problem(config, env, 0, parse_event("B1@2")).startswith("channel 2 out of range")
    env = apply(env, parse_event("B2@0"))
    assert "not newer" in problem(config, env, 0, parse_event("B1@0"))
    assert problem(config, env, 0, parse_event("C2@0")) is None  # cancelling its own barrier
    assert "not newer" in problem(config, apply(env, parse_event("C2@0")), 0, parse_event("C2@0"))
    assert "blocked" in problem(config, env, 0b01, parse_event("D@0"))
    assert "TIMEOUT" in problem(config, env, 0, parse_event("TIMEOUT"))
    env = apply(env, parse_event("T3"))
    assert "only EndOfPartition" in problem(config, env, 0, parse_event("D@1"))
    assert problem(config, env, 0, parse_event("E@1")) is None
    off = Config(2, after_finished=False)
    assert "after tasks finished" in problem(off, initial_env(off), 0, parse_event("T1"))


def test_announcement_promises_its_barrier():
    config = Config(2, UNALIGNED, alignment_timeout=True)
    env = apply(initial_env(config), parse_event("A2@0"))
    allowed = {format_event(e) for e in enabled(config, env, 0, 3) if e[-1] == 0 and e[0] != "T"}
    assert allowed == {"B2@0", "D@0"}


# -- generators ------------------------------------------------------------------------------------


def _invalid_events(config, events) -> list:
    """The events that the environment would refuse where they stand (empty: all valid)."""
    env, state, invalid = initial_env(config), initial_state(config), []
    for event in events:
        if problem(config, env, view(config, state).blocked, event) is not None:
            invalid.append(event)
        env, (state, _) = apply(env, event), step(config, state, event)
    return invalid


@given(data=st.data())
@settings(max_examples=60)
def test_hypothesis_sequences_are_valid(data):
    config = data.draw(configs())
    events = data.draw(event_sequences(config, max_length=15))
    assert _invalid_events(config, events) == [], (config, events)


@pytest.mark.parametrize("mode", MODES)
def test_seeded_sequences_are_valid_deterministic_and_varied(mode):
    config = Config(3, mode, alignment_timeout=mode == UNALIGNED)
    sequences = [random_events(config, seed, 25) for seed in range(30)]
    for events in sequences:
        assert _invalid_events(config, events) == [], (config, events)
    assert sequences[3] == random_events(config, 3, 25)
    kinds_seen = {e[0] for events in sequences for e in events}
    assert {"B", "C", "E", "D", "T"} <= kinds_seen


def test_generation_follows_a_task_when_given_one():
    """Following a task that never blocks, some sequences deliver records the model would hold."""
    from flipcheck.reference_impl.barriers import make_task

    config = Config(2)

    def invalid_for_model(events):
        return bool(_invalid_events(config, events))

    followed = [valid_events(config, random.Random(seed).choice, 20, follow=make_task(config, "no-blocking"))
                for seed in range(20)]
    assert any(invalid_for_model(events) for events in followed)
    assert not any(invalid_for_model(random_events(config, seed, 20)) for seed in range(20))


def test_candidates_cover_all_kinds():
    config = Config(2, UNALIGNED, alignment_timeout=True)
    assert {e[0] for e in candidates(config, 2)} == {"B", "C", "E", "D", "T", "A", "TIMEOUT"}

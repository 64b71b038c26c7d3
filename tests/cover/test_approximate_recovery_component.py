"""Flink's approximate subpartition against the model, without a JVM: the named sequences stay in
the consumer's contract and exercise every rule, the comparison tells agreement, a known
difference and a difference apart on a stored transcript of Flink 2.3.0's harness, and every
subpartition mutant of the engine shows on some sequence."""

from pathlib import Path

import pytest

from flipcheck.flink.component import MAX_SEQUENCE_BYTES, harness_script, parse_transcript
from flipcheck.errors import InputError
from flipcheck.generators.approximate_recovery import (
    COMPONENT_SEQUENCES, ComponentSequence, component_sequences, generated_sequence, sequence_named)
from flipcheck.model import approximate_recovery as spec
from flipcheck.properties import approximate_recovery_properties as props
from flipcheck.properties.approximate_recovery_explore import ExploreEnv, SubpartitionBounds, env_after, subpartition_events
from flipcheck.properties.approximate_recovery_trace_validation import (
    AGREES, DIFFERS, KNOWN, describe_reading, engine_outputs, first_difference, judge, model_outputs, validate_sequences)
from flipcheck.reference_impl.approximate_recovery_variants import APPROXIMATE_RECOVERY_ENGINES

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "flink_components" / "approximate-recovery-2.3.0.jsonl"
BY_NAME = {s.name: s for s in COMPONENT_SEQUENCES}


@pytest.fixture(scope="module")
def transcript():
    return parse_transcript(FIXTURE.read_text(), str(FIXTURE))


@pytest.mark.parametrize("sequence", COMPONENT_SEQUENCES, ids=lambda s: s.name)
def test_each_named_sequence_is_one_the_models_environment_allows(sequence):
    """A view resumes only after its own aligned barrier, each attempt connects and releases once:
    the contract Flink's network stack keeps (resumeConsumption refuses to run unblocked:
    recovery facts §1.8). Besides the live view, an attempt that connected may poll: where its view is gone
    both the model and the harness answer none (its reader left), where Flink kept it (the zombie)
    Flink answers."""
    bounds = SubpartitionBounds(sequence.capacity, max_records=10, lengths=tuple(range(1, 20)), attempts=3, max_events=2)
    state, history, env = spec.initial_subpartition(sequence.capacity), props.History(), ExploreEnv()
    for event in sequence.events:
        allowed = subpartition_events(bounds, env, history, state.view) + [spec.poll(a) for a in env.connected]
        assert event in allowed, (sequence.name, event)
        state, outputs = spec.subpartition_step(state, event)
        history, env = props.observe(history, event, outputs), env_after(env, event)
    assert sum(e[1] for e in sequence.events if e[0] == "emit") <= MAX_SEQUENCE_BYTES


def test_the_named_sequences_exercise_every_subpartition_rule_and_the_writer():
    assert {rule for s in COMPONENT_SEQUENCES for rule in s.rules} == {"S1", "S2", "S3", "S4", "S5", "S6", "W"}
    assert len(BY_NAME) == len(COMPONENT_SEQUENCES)


def test_a_generated_sequence_is_regenerated_from_its_name():
    sequence = generated_sequence(7, 3)
    assert sequence.name == "generated-7-3" and sequence_named("generated-7-3") == sequence
    assert sequence_named("reconnect-mid-record") is BY_NAME["reconnect-mid-record"]
    assert sequence_named("no-such-sequence") is None and sequence_named("generated-7") is None
    assert component_sequences(2, 7)[-2:] == [generated_sequence(7, 0), generated_sequence(7, 1)]


def test_the_stored_transcript_holds_every_named_sequence_step_by_step(transcript):
    """Re-record it after changing COMPONENT_SEQUENCES: flipcheck flink component
    approximate-recovery --save tests/fixtures/flink_components/approximate-recovery-2.3.0.jsonl"""
    assert transcript.flink == "2.3.0"
    assert {name: len(steps) for name, steps in transcript.steps.items()} == \
        {s.name: len(s.events) for s in COMPONENT_SEQUENCES}


def test_flink_2_3_agrees_with_the_model_except_the_zombie_request(transcript):
    verdicts = {v.name: v for v in validate_sequences(COMPONENT_SEQUENCES, transcript.steps)}
    assert {n for n, v in verdicts.items() if v.verdict != AGREES} == {"zombie-connects-late"}
    zombie = verdicts["zombie-connects-late"]
    # Step 3, attempt 0's late request: the model refuses it, Flink releases attempt 1's view for it.
    assert (zombie.verdict, zombie.step, zombie.properties) == (KNOWN, 2, ("zombie_never_replaces_newer",))
    assert zombie.model[2] == (("rejected", 0, spec.ZOMBIE),)
    assert zombie.flink[2] == (("view_released", 1), ("view_created", 0))
    assert all(v.engine_step is None and v.engine == v.model for v in verdicts.values())


def test_a_changed_observation_differs_at_its_step(transcript):
    """Flink handing the new reader the rest of the half-read record (bytes 4..6) is no known
    difference: the model's S4 and flink-shipped both drop it."""
    sequence = BY_NAME["reconnect-mid-record"]
    steps = list(transcript.steps[sequence.name])
    assert steps[6] == (("data", 1, 0, 6, 8),)
    steps[6] = (("data", 1, 0, 4, 6),)
    verdict = judge(sequence.name, sequence.capacity, sequence.events, steps)
    assert (verdict.verdict, verdict.step) == (DIFFERS, 6)
    assert verdict.properties[0] == "first_data_at_record_boundary"


def test_a_known_difference_must_be_predicted_step_for_step(transcript):
    """The zombie read, but not as flink-shipped predicts (a lost sequence number): it differs."""
    sequence = BY_NAME["zombie-connects-late"]
    steps = list(transcript.steps[sequence.name])
    assert steps[4] == (("data", 0, 0, 0, 2),)
    steps[4] = (("data", 0, 1, 0, 2),)
    assert judge(sequence.name, sequence.capacity, sequence.events, steps).verdict == DIFFERS


def test_a_missing_sequence_or_step_differs(transcript):
    verdicts = validate_sequences(COMPONENT_SEQUENCES, {})
    assert {v.verdict for v in verdicts} == {DIFFERS} and {v.step for v in verdicts} == {0}
    sequence = BY_NAME["release-partition"]
    short = transcript.steps[sequence.name][:-1]
    assert judge(sequence.name, sequence.capacity, sequence.events, short).step == len(sequence.events) - 1


SUBPARTITION_MUTANTS = sorted(name for name, cls in APPROXIMATE_RECOVERY_ENGINES.items()
                              if cls.part in ("subpartition", "shipped"))


@pytest.mark.parametrize("variant", SUBPARTITION_MUTANTS)
def test_every_subpartition_mutant_differs_from_the_model_on_a_named_sequence(variant, transcript):
    """So `--variant NAME` of a buggy engine exits 1 even on a transcript where Flink agrees."""
    verdicts = validate_sequences(COMPONENT_SEQUENCES, transcript.steps, variant)
    assert any(v.engine_step is not None for v in verdicts)


def test_the_reading_says_which_records_each_attempt_got_and_what_was_dropped():
    sequence = BY_NAME["reconnect-mid-long-record"]
    assert describe_reading(sequence.capacity, sequence.events, model_outputs(sequence.capacity, sequence.events)) == (
        "attempt 0 read bytes 0..2 (record 0 in part); attempt 1 read bytes 7..9 (record 1); "
        "dropped bytes 2..7 (the rest of record 0)")


def test_engine_and_model_outputs_have_one_tuple_per_event():
    sequence = BY_NAME["reconnect-unblocks"]
    model = model_outputs(sequence.capacity, sequence.events)
    assert len(model) == len(sequence.events) and first_difference(model, model) is None
    assert first_difference(model, engine_outputs("keep-blocked-on-reconnect", sequence.capacity, sequence.events)) == 9


def test_the_harness_script_is_one_plain_line_per_event():
    sequence = BY_NAME["reconnect-before-queued-barrier"]
    lines = harness_script([sequence]).splitlines()
    assert lines[:4] == ["sequence reconnect-before-queued-barrier 2", "emit 3", "barrier 1", "emit 1"]
    assert lines[-2:] == ["resume 1", "poll 1"] and len(lines) == len(sequence.events) + 1
    assert "release_partition" in harness_script([BY_NAME["release-partition"]]).splitlines()
    with pytest.raises(ValueError, match="at most 256"):
        harness_script([ComponentSequence("big", 4, (("emit", 200), ("emit", 57)), (), "")])
    with pytest.raises(ValueError, match="sequence name"):
        harness_script([ComponentSequence("two words", 4, (), (), "")])


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("not json\n", "line 1: not JSON"),
    ('{"harness": "other", "flink": "2.3.0"}\n', "field 'harness'"),
    ('{"harness": "approximate-subpartition", "flink": "2.3.0"}\n[1]\n', "line 2: not a JSON object"),
    ('{"harness": "approximate-subpartition", "flink": "2.3.0"}\n{"sequence": "a b", "step": 1, "out": []}\n',
     "field 'sequence'"),
    ('{"harness": "approximate-subpartition", "flink": "2.3.0"}\n{"sequence": "s", "step": 2, "out": []}\n',
     "field 'step': 2, expected 1"),
    ('{"harness": "approximate-subpartition", "flink": "2.3.0"}\n{"sequence": "s", "step": 1, "out": [["data", 0]]}\n',
     "'data' takes 4 values"),
    ('{"harness": "approximate-subpartition", "flink": "2.3.0"}\n{"sequence": "s", "step": 1, "out": [["boom"]]}\n',
     "is not an output"),
    ('{"harness": "approximate-subpartition", "flink": "2.3.0"}\n{"sequence": "s", "step": 1, "out": [["none", true]]}\n',
     "'none' takes 1 values of types (int)"),
])
def test_a_malformed_transcript_is_one_error_naming_line_and_field(text, fragment):
    with pytest.raises(InputError) as raised:
        parse_transcript(text, "t.jsonl")
    assert fragment in raised.value.message and "\n" not in raised.value.message

"""Every crash point of the small batch-recovery configurations: the specification and Flink's
implementation satisfy every property, with the counts pinned in tests/manifests/batch_recovery.json;
each property can fail (a hand-made bad step), and names its source."""

import pytest

import manifest
from flipcheck.model.batch_recovery import CANCELED, Config, run
from flipcheck.properties.batch_recovery_explore import explore_job, explore_model
from flipcheck.properties.batch_recovery_properties import BATCH_PROPERTIES, PROPERTY_NAMES, check_step
from flipcheck.designs.batch_recovery import GRAPHS

DESIGN = "batch-recovery"
MODEL = manifest.entries(DESIGN, slow=False, model="spec", check="properties", properties=None)
SMALL = [e for e in MODEL if e["distinct_states"] < 5000]


def config_of(entry) -> Config:
    return Config(**dict(entry["config"], graph=GRAPHS[entry["config"]["graph"]]))


@pytest.mark.parametrize("entry", MODEL, ids=manifest.entry_id)
def test_every_property_holds_at_every_crash_point_of_the_model(entry):
    with manifest.measured(entry):
        result = explore_model(config_of(entry), stop_at_first=False)
    assert result.complete and result.problems == []
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions, depth=result.depth,
                 crash_points=result.crash_points)


@pytest.mark.parametrize("entry", SMALL, ids=manifest.entry_id)
def test_flink_refines_the_model_with_every_property(entry):
    """Flink's implementation explores exactly the states and crash points pinned for the spec."""
    result = explore_job(config_of(entry), "flink", stop_at_first=False)
    assert result.complete and result.problems == []
    assert (result.states, result.crash_points) == (entry["distinct_states"], entry["crash_points"])


PAIR = Config(GRAPHS["src1-sink1"])
RECOVERING = run(PAIR, [("start", 0), ("assign", 0), ("finish", 0), ("flush",), ("crash",), ("restart",), ("report", 0)])
RECOVERED = run(PAIR, [("reconcile",)], RECOVERING)


def test_a_correct_recovery_step_violates_nothing():
    assert check_step(PAIR, ("reconcile",), RECOVERING, RECOVERED) == []


def test_each_property_fails_on_a_bad_step():
    bad_steps = {
        "every_vertex_created_or_finished": (("reconcile",), RECOVERING, RECOVERED._replace(status=("FINISHED", CANCELED))),
        "needed_partitions_kept": (("reconcile",), RECOVERING, RECOVERED._replace(outputs=(None, None))),
        "no_events_while_reconciling": (("report", 0), RECOVERING._replace(reported=frozenset()),
                                        RECOVERING._replace(buffer=(("reset", frozenset({0})),))),
        "result_equals_failure_free_run": (("finish", 1), RECOVERED,
                                           RECOVERED._replace(phase="done", outputs=((1, ()), (1, ())))),
        "failed_recovery_fails_over_once": (("fail_recovery",), RECOVERING, RECOVERING._replace(global_failures=2)),
    }
    for name, (action, before, after) in bad_steps.items():
        assert name in {v.property for v in check_step(PAIR, action, before, after)}, name


def test_every_property_is_documented_and_caught_by_a_mutant_or_a_bad_step():
    caught = {e["result"] for e in manifest.entries(DESIGN, check="hunt")} | {
        p for f in manifest.entries(DESIGN, model="spec") for p in f.get("properties", [])}
    assert len(set(PROPERTY_NAMES)) == len(BATCH_PROPERTIES)
    for prop in BATCH_PROPERTIES:
        assert prop.meaning and prop.source, prop.name
    assert {"finished_only_if_durable", "no_missing_input_after_recovery", "unfinished_partitions_released",
            "coordinator_matches_tasks", "snapshot_cadence", "failed_recovery_fails_over_once"} <= caught

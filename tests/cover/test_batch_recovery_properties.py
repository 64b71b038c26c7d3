"""Every crash point of the small batch-recovery configurations: the specification and Flink's
implementation satisfy every property, with the counts pinned in tests/manifests/batch_recovery.json;
each property can fail (a hand-made bad step), and names its source."""

import json
from pathlib import Path

import pytest

from flipcheck.model.batch_recovery import CANCELED, Config, run
from flipcheck.properties.batch_recovery_explore import explore_job, explore_model
from flipcheck.properties.batch_recovery_properties import BATCH_PROPERTIES, PROPERTY_NAMES, check_step
from flipcheck.designs.batch_recovery import GRAPHS

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "batch_recovery.json").read_text())


def config_of(entry) -> Config:
    name, *rest = entry["config"]
    return Config(GRAPHS[name], *rest)


def ids(entries):
    return ["-".join(map(str, e["config"])) for e in entries]


@pytest.mark.parametrize("entry", MANIFEST["model"], ids=ids(MANIFEST["model"]))
def test_every_property_holds_at_every_crash_point_of_the_model(entry):
    result = explore_model(config_of(entry), stop_at_first=False)
    assert result.complete and result.problems == []
    assert (result.states, result.transitions, result.depth, result.crash_points) == (
        entry["distinct_states"], entry["transitions"], entry["depth"], entry["crash_points"])


@pytest.mark.parametrize("entry", [e for e in MANIFEST["model"] if e["distinct_states"] < 5000],
                         ids=ids([e for e in MANIFEST["model"] if e["distinct_states"] < 5000]))
def test_flink_refines_the_model_with_every_property(entry):
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
    caught = {e["property"] for e in MANIFEST["variants"]} | {p for f in MANIFEST["findings"] for p in f["properties"]}
    assert len(set(PROPERTY_NAMES)) == len(BATCH_PROPERTIES)
    for prop in BATCH_PROPERTIES:
        assert prop.meaning and prop.source, prop.name
    assert {"finished_only_if_durable", "no_missing_input_after_recovery", "unfinished_partitions_released",
            "coordinator_matches_tasks", "snapshot_cadence", "failed_recovery_fails_over_once"} <= caught

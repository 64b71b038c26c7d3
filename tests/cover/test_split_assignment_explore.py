"""Exploration of the split-assignment spec and of Flink's implementation, pinned in
tests/manifests/split_assignment.json (small configurations; the larger ones are in tests/slow/)."""

import json
from pathlib import Path

import pytest

from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import (
    compare_designs, explore_job, explore_liveness, explore_model, replay,
)
from flipcheck.properties.split_assignment_properties import PROPERTY_NAMES, SPLIT_PROPERTIES

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "split_assignment.json").read_text())


def ids(entries):
    return ["-".join(map(str, e["config"])) + (f"-{e['variant']}" if e.get("variant") else "") for e in entries]


@pytest.mark.parametrize("entry", MANIFEST["model"], ids=ids(MANIFEST["model"]))
def test_every_property_holds_on_every_path_of_the_model(entry):
    result = explore_model(Config(*entry["config"]), stop_at_first=False)
    assert result.complete and result.problems == []
    assert (result.states, result.transitions, result.depth) == (
        entry["distinct_states"], entry["transitions"], entry["depth"])


@pytest.mark.parametrize("entry", MANIFEST["flink_refines_model"], ids=ids(MANIFEST["flink_refines_model"]))
def test_flink_refines_the_model_with_every_property(entry):
    result = explore_job(Config(*entry["config"]), "flink", stop_at_first=False)
    assert result.complete and result.problems == []
    assert (result.states, result.transitions) == (entry["distinct_states"], entry["transitions"])


@pytest.mark.parametrize("entry", MANIFEST["liveness"], ids=ids(MANIFEST["liveness"]))
def test_every_split_can_always_still_be_read(entry):
    graph, problems = explore_liveness(Config(*entry["config"]), entry["variant"])
    assert graph.complete and problems == []
    assert (len(graph), graph.transitions, len(graph.deadlocks)) == (
        entry["states"], entry["transitions"], entry["finals_and_deadlocks"])


def test_design_comparison_shows_the_seeds_trade_off():
    pinned = MANIFEST["design_comparison"]
    rows = compare_designs(Config(*pinned["config"]))
    assert [dict(r._asdict(), violations=list(r.violations)) for r in rows] == pinned["designs"]
    # exactly-once everywhere; only the coordinator needs the gateway; persistent channels
    # never give a failed reader's splits to another reader ("Splits always go to the same reader")
    assert all(not r.violations for r in rows)
    assert [r.gateway_needed for r in rows] == [True, False, False]
    assert [r.redistributes for r in rows] == [True, False, True]


def test_replay_stops_at_the_first_violation_and_names_refinement():
    config = Config(1, 1, 1, 1)
    actions = [("register", 0), ("trigger",), ("assign", 0), ("deliver", 0), ("deliver", 0)]
    steps = replay(config, actions, "no-event-gateway", refinement=False)
    assert len(steps) == 4 and [v.property for v in steps[-1].violations] == ["events_wait_for_barrier"]
    steps = replay(config, actions, "no-event-gateway")   # the model would hold the event: deliver is not enabled
    assert [v.property for v in steps[-1].violations] == ["refines_model"] and steps[-1].action == ("enabled",)


def test_properties_are_documented_with_their_source():
    assert len(PROPERTY_NAMES) == len(set(PROPERTY_NAMES)) == len(SPLIT_PROPERTIES)
    for prop in SPLIT_PROPERTIES:
        assert prop.meaning and prop.source, prop.name

"""Exploration of the split-assignment spec and of Flink's implementation, pinned in
tests/manifests/split_assignment.json (small configurations; the larger ones are in tests/slow/)."""

import pytest

import manifest
from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import (
    compare_designs, explore_job, explore_liveness, explore_model, replay,
)
from flipcheck.properties.split_assignment_properties import PROPERTY_NAMES, SPLIT_PROPERTIES

DESIGN = "split-assignment"
MODEL = manifest.entries(DESIGN, slow=False, model="spec", check="properties")
REFINEMENT = manifest.entries(DESIGN, slow=False, model="flink", check="refinement+properties")
LIVENESS = manifest.entries(DESIGN, check="liveness", result="success")


@pytest.mark.parametrize("entry", MODEL, ids=manifest.entry_id)
def test_every_property_holds_on_every_path_of_the_model(entry):
    with manifest.measured(entry):
        result = explore_model(Config(**entry["config"]), stop_at_first=False)
    assert result.complete and result.problems == []
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions, depth=result.depth)


@pytest.mark.parametrize("entry", REFINEMENT, ids=manifest.entry_id)
def test_flink_refines_the_model_with_every_property(entry):
    with manifest.measured(entry):
        result = explore_job(Config(**entry["config"]), entry["model"], stop_at_first=False)
    assert result.complete and result.problems == []
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions)


@pytest.mark.parametrize("entry", LIVENESS, ids=manifest.entry_id)
def test_every_split_can_always_still_be_read(entry):
    with manifest.measured(entry):
        graph, problems = explore_liveness(Config(**entry["config"]), None if entry["model"] == "spec" else entry["model"])
    assert graph.complete and problems == []
    manifest.pin(entry, distinct_states=len(graph), transitions=graph.transitions, deadlocks=len(graph.deadlocks))


def test_design_comparison_shows_the_seeds_trade_off():
    pinned = manifest.entry(DESIGN, check="comparison")
    with manifest.measured(pinned):
        rows = compare_designs(Config(**pinned["config"]))
    manifest.pin(pinned, rows=[dict(r._asdict(), violations=list(r.violations)) for r in rows])
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

"""Exhaustive exploration of the barrier spec, with state counts pinned in tests/manifests/barriers.json.

Like the manifests of tlaplus/Examples: each configuration's distinct-state and transition
counts are recorded, so a change to the model that changes its behaviour shows up here (update
the manifest on purpose, and say why). Every property is checked on every path of the model,
Flink's implementation is checked against the model on every path, and the properties Flink's
own at-least-once tracker violates are pinned as expected failures with their shortest traces.
"""

import pytest

import manifest
from flipcheck.model.barriers import Config, format_event
from flipcheck.properties.barriers_explore import EXPECTED_FAILURES, explore_model, explore_task
from flipcheck.properties.barriers_properties import PROPERTY_NAMES

DESIGN = "barriers"


def config_of(entry: dict) -> Config:
    c = entry["config"]
    return Config(c["channels"], c["mode"], c["after_finished"], c["alignment_timeout"])


def slow_entries(**fields) -> list[dict]:
    return manifest.entries(DESIGN, slow=True, **fields)


STATES = slow_entries(model="spec", check="states")
PROPERTIES = slow_entries(model="spec", check="properties", properties=None)
REFINEMENT = slow_entries(model="flink", check="refinement")
EXPECTED = [e for e in slow_entries(model="spec", check="properties") if e.get("properties")]


@pytest.mark.parametrize("entry", STATES, ids=manifest.entry_id)
def test_model_state_counts(entry):
    with manifest.measured(entry):
        result = explore_model(config_of(entry), entry["config"]["max_id"])
    assert result.complete
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions, depth=result.depth)


@pytest.mark.parametrize("entry", PROPERTIES, ids=manifest.entry_id)
def test_every_property_holds_on_every_path_of_the_model(entry):
    with manifest.measured(entry):
        result = explore_model(config_of(entry), entry["config"]["max_id"], check_properties=True)
    assert result.problems == [] and result.complete
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions)


@pytest.mark.parametrize("entry", REFINEMENT, ids=manifest.entry_id)
def test_flink_implementation_refines_the_model_on_every_path(entry):
    with manifest.measured(entry):
        result = explore_task(config_of(entry), "flink", entry["config"]["max_id"], check_properties=False)
    assert result.problems == [] and result.complete
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions)


@pytest.mark.parametrize("entry", EXPECTED, ids=manifest.entry_id)
def test_expected_failures_of_flinks_tracker(entry):
    """The at-least-once quirks: the shortest violating trace is pinned (or that there is none)."""
    [prop] = entry["properties"]
    assert (entry["config"]["mode"], prop) in EXPECTED_FAILURES
    others = [p for p in PROPERTY_NAMES if p != prop]
    with manifest.measured(entry):
        result = explore_model(config_of(entry), entry["config"]["max_id"], check_properties=True, skip=others)
    manifest.pin(entry, result=prop if result.problems else "success", trace=[format_event(e) for e in result.trace])

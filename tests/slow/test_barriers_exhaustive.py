"""Exhaustive exploration of the barrier spec, with state counts pinned in tests/manifests/barriers.json.

Like the manifests of tlaplus/Examples: each configuration's distinct-state and transition
counts are recorded, so a change to the model that changes its behaviour shows up here (update
the manifest on purpose, and say why). Every property is checked on every path of the model,
Flink's implementation is checked against the model on every path, and the properties Flink's
own at-least-once tracker violates are pinned as expected failures with their shortest traces.
"""

import json
from pathlib import Path

import pytest

from flipcheck.model.barriers import Config, format_event
from flipcheck.properties.barriers_explore import EXPECTED_FAILURES, explore_model, explore_task
from flipcheck.properties.barriers_properties import PROPERTY_NAMES

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "barriers.json").read_text())


def config_of(entry: dict, channels: int) -> Config:
    return Config(channels, entry["mode"], entry["after_finished"], entry["alignment_timeout"])


def ids(entries):
    return [f"{e['mode']}-{'on' if e['after_finished'] else 'off'}{'-timeout' if e['alignment_timeout'] else ''}"
            for e in entries]


@pytest.mark.slow
@pytest.mark.parametrize("entry", MANIFEST["model"]["configs"], ids=ids(MANIFEST["model"]["configs"]))
def test_model_state_counts(entry):
    bounds = MANIFEST["model"]
    result = explore_model(config_of(entry, bounds["channels"]), bounds["max_id"])
    assert result.complete
    assert (result.states, result.transitions, result.depth) == (
        entry["distinct_states"], entry["transitions"], entry["depth"])


@pytest.mark.slow
@pytest.mark.parametrize("entry", MANIFEST["model_with_properties"]["configs"],
                         ids=ids(MANIFEST["model_with_properties"]["configs"]))
def test_every_property_holds_on_every_path_of_the_model(entry):
    bounds = MANIFEST["model_with_properties"]
    result = explore_model(config_of(entry, bounds["channels"]), bounds["max_id"], check_properties=True)
    assert result.problems == [] and result.complete
    assert (result.states, result.transitions) == (entry["distinct_states"], entry["transitions"])


@pytest.mark.slow
@pytest.mark.parametrize("entry", MANIFEST["flink_refines_model"]["configs"],
                         ids=ids(MANIFEST["flink_refines_model"]["configs"]))
def test_flink_implementation_refines_the_model_on_every_path(entry):
    bounds = MANIFEST["flink_refines_model"]
    result = explore_task(config_of(entry, bounds["channels"]), "flink", bounds["max_id"], check_properties=False)
    assert result.problems == [] and result.complete
    assert (result.states, result.transitions) == (entry["distinct_states"], entry["transitions"])


@pytest.mark.slow
@pytest.mark.parametrize("entry", MANIFEST["expected_failures"],
                         ids=[f"{e['property']}-{'on' if e['after_finished'] else 'off'}"
                              for e in MANIFEST["expected_failures"]])
def test_expected_failures_of_flinks_tracker(entry):
    """The at-least-once quirks: the shortest violating trace is pinned (or that there is none)."""
    assert (entry["mode"], entry["property"]) in EXPECTED_FAILURES
    others = [p for p in PROPERTY_NAMES if p != entry["property"]]
    result = explore_model(config_of(entry, entry["channels"]), entry["max_id"], check_properties=True, skip=others)
    assert bool(result.problems) == entry["violated"]
    assert [format_event(e) for e in result.trace] == entry["trace"]

"""Exhaustive exploration of the split-assignment spec (all three seed designs) and of Flink's
implementation against it, with the counts pinned in tests/manifests/split_assignment.json."""

import json
from pathlib import Path

import pytest

from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import explore_job, explore_model

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "split_assignment.json").read_text())


def ids(entries):
    return ["-".join(map(str, e["config"])) + (f"-{e['variant']}" if e.get("variant") else "") for e in entries]


@pytest.mark.slow
@pytest.mark.parametrize("entry", MANIFEST["model_slow"], ids=ids(MANIFEST["model_slow"]))
def test_every_property_on_every_path_of_each_design(entry):
    result = explore_model(Config(*entry["config"]), stop_at_first=False)
    assert result.complete and result.problems == []
    assert (result.states, result.transitions, result.depth) == (
        entry["distinct_states"], entry["transitions"], entry["depth"])


@pytest.mark.slow
@pytest.mark.parametrize("entry", MANIFEST["flink_refines_model_slow"], ids=ids(MANIFEST["flink_refines_model_slow"]))
def test_flink_and_the_2021_valve_refine_the_model(entry):
    result = explore_job(Config(*entry["config"]), entry["variant"], stop_at_first=False)
    assert result.complete and result.problems == []
    assert (result.states, result.transitions) == (entry["distinct_states"], entry["transitions"])

"""Exhaustive exploration of the split-assignment spec (all three seed designs) and of Flink's
implementation against it, with the counts pinned in tests/manifests/split_assignment.json."""

import pytest

import manifest
from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import explore_job, explore_model

DESIGN = "split-assignment"
MODEL = manifest.entries(DESIGN, slow=True, model="spec", check="properties")
REFINEMENT = manifest.entries(DESIGN, slow=True, check="refinement+properties")


@pytest.mark.parametrize("entry", MODEL, ids=manifest.entry_id)
def test_every_property_on_every_path_of_each_design(entry):
    with manifest.measured(entry):
        result = explore_model(Config(**entry["config"]), stop_at_first=False)
    assert result.complete and result.problems == []
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions, depth=result.depth)


@pytest.mark.parametrize("entry", REFINEMENT, ids=manifest.entry_id)
def test_flink_and_the_2021_valve_refine_the_model(entry):
    with manifest.measured(entry):
        result = explore_job(Config(**entry["config"]), entry["model"], stop_at_first=False)
    assert result.complete and result.problems == []
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions)

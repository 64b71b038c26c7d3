"""The suite finds the split-assignment bugs: every mutant is caught with a pinned shortest
trace, every property catches some variant, liveness catches the losing ones, and the seeded
and hypothesis drivers find them too. A mutant nothing catches, or a property that can never
fail, is a gap in the suite."""

import pytest
from hypothesis.stateful import run_state_machine_as_test

import manifest
from flipcheck.designs.drivers import seeded_driver
from flipcheck.generators.split_assignment import quick_settings, split_machine
from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import explore_job, explore_liveness, replay
from flipcheck.properties.split_assignment_properties import PROPERTY_NAMES
from flipcheck.reference_impl.split_assignment_variants import MUTANTS
from flipcheck.designs.split_assignment import check_case, generate_case

DESIGN = "split-assignment"
# Each mutant explored with all property monitors and no model, then next to the model only.
FOUND = {e["model"]: e for e in manifest.entries(DESIGN, check="properties", properties=None) if e["model"] in MUTANTS}
REFINED = {e["model"]: e for e in manifest.entries(DESIGN, check="refinement") if e["model"] in MUTANTS}
# One run per property, with that property's monitor only, on a variant it catches.
CATCHES = [e for e in manifest.entries(DESIGN, check="properties") if e.get("properties")]
LIVENESS_CATCHES = [e for e in manifest.entries(DESIGN, check="liveness") if e["result"] != "success"]


def test_manifest_lists_every_mutant():
    assert set(FOUND) == set(REFINED) == set(MUTANTS)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_exploration_catches_mutant_with_a_shortest_trace(name):
    entry, refined_entry = FOUND[name], REFINED[name]
    config = Config(**entry["config"])
    with manifest.measured(entry):
        found = explore_job(config, name, refinement=False)
    manifest.pin(entry, result=sorted({v.property for v in found.problems}) or "success", trace=found.trace)
    with manifest.measured(refined_entry):
        refined = explore_job(config, name, check=False)
    manifest.pin(refined_entry, result=[v.property for v in refined.problems][0], trace=refined.trace)
    assert [v.property for v in refined.problems] == ["refines_model"]
    # the replayed counterexample violates the same property at its last step
    steps = replay(config, found.trace, name, refinement=False)
    assert {v.property for v in steps[-1].violations} == set(entry["result"])


@pytest.mark.parametrize("entry", CATCHES, ids=lambda e: e["properties"][0])
def test_every_property_catches_a_named_variant(entry):
    with manifest.measured(entry):
        found = explore_job(Config(**entry["config"]), entry["model"], refinement=False, properties=entry["properties"])
    assert found.problems, f"{entry['model']} breaks no property of {entry['properties']}"
    manifest.pin(entry, result=found.problems[0].property, trace=found.trace)


def test_every_property_has_a_catch():
    assert [e["result"] for e in CATCHES] == list(PROPERTY_NAMES)


@pytest.mark.parametrize("entry", LIVENESS_CATCHES, ids=manifest.entry_id)
def test_liveness_catches_the_variants_that_lose_splits_for_good(entry):
    with manifest.measured(entry):
        _, problems = explore_liveness(Config(**entry["config"]), entry["model"])
    assert len(problems) == 1
    manifest.pin(entry, result=problems[0].property)


@pytest.mark.parametrize("name", ["no-event-gateway", "tasks-before-coordinator", "add-splits-back-dropped"])
def test_seeded_runs_find_the_shallow_mutants(name):
    tally = seeded_driver(generate_case, lambda case: check_case(case, name), budget_seconds=20,
                          seed=f"quality-{name}", max_cases=3000, stop_at_first=True)
    assert tally.first_violation is not None


def test_the_state_machine_finds_a_gateway_bug():
    with pytest.raises(AssertionError, match="events_wait_for_barrier|refines_model|completed_checkpoint"):
        run_state_machine_as_test(split_machine("no-event-gateway", refinement=False), settings=quick_settings(60))

"""The suite finds the split-assignment bugs: every mutant is caught with a pinned shortest
trace, every property catches some variant, liveness catches the losing ones, and the seeded
and hypothesis drivers find them too. A mutant nothing catches, or a property that can never
fail, is a gap in the suite."""

import json
from pathlib import Path

import pytest
from hypothesis.stateful import run_state_machine_as_test

from flipcheck.designs.drivers import seeded_driver
from flipcheck.generators.split_assignment import quick_settings, split_machine
from flipcheck.model.split_assignment import Config
from flipcheck.properties.split_assignment_explore import explore_job, explore_liveness, replay
from flipcheck.properties.split_assignment_properties import PROPERTY_NAMES
from flipcheck.reference_impl.split_assignment_variants import MUTANTS
from flipcheck.designs.split_assignment import check_case, generate_case

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "split_assignment.json").read_text())
VARIANTS = {e["variant"]: e for e in MANIFEST["variants"]}


def trace(entry):
    return [tuple(a) for a in entry["trace"]]


def test_manifest_lists_every_mutant():
    assert set(VARIANTS) == set(MUTANTS)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_exploration_catches_mutant_with_a_shortest_trace(name):
    entry = VARIANTS[name]
    config = Config(*entry["config"])
    found = explore_job(config, name, refinement=False)
    assert sorted({v.property for v in found.problems}) == entry["properties"]
    assert found.trace == trace(entry)
    refined = explore_job(config, name, check=False)
    assert [v.property for v in refined.problems] == ["refines_model"]
    assert refined.trace == [tuple(a) for a in entry["refinement_trace"]]
    # the replayed counterexample violates the same property at its last step
    steps = replay(config, found.trace, name, refinement=False)
    assert {v.property for v in steps[-1].violations} == set(entry["properties"])


@pytest.mark.parametrize("entry", MANIFEST["property_catches"], ids=[e["property"] for e in MANIFEST["property_catches"]])
def test_every_property_catches_a_named_variant(entry):
    found = explore_job(Config(*entry["config"]), entry["variant"], refinement=False, properties=[entry["property"]])
    assert [v.property for v in found.problems][:1] == [entry["property"]]
    assert found.trace == trace(entry)


def test_every_property_has_a_catch():
    assert [e["property"] for e in MANIFEST["property_catches"]] == list(PROPERTY_NAMES)


@pytest.mark.parametrize("name", MANIFEST["liveness_catches"]["variants"])
def test_liveness_catches_the_variants_that_lose_splits_for_good(name):
    _, problems = explore_liveness(Config(*MANIFEST["liveness_catches"]["config"]), name)
    assert [v.property for v in problems] == ["every_split_eventually_read"]


@pytest.mark.parametrize("name", ["no-event-gateway", "tasks-before-coordinator", "add-splits-back-dropped"])
def test_seeded_runs_find_the_shallow_mutants(name):
    tally = seeded_driver(generate_case, lambda case: check_case(case, name), budget_seconds=20,
                          seed=f"quality-{name}", max_cases=3000, stop_at_first=True)
    assert tally.first_violation is not None


def test_the_state_machine_finds_a_gateway_bug():
    with pytest.raises(AssertionError, match="events_wait_for_barrier|refines_model|completed_checkpoint"):
        run_state_machine_as_test(split_machine("no-event-gateway", refinement=False), settings=quick_settings(60))

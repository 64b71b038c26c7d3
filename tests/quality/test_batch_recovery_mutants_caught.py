"""The suite finds the batch-recovery bugs: the hunt catches every mutant with the pinned
property and shortest trace, which replays (the mutant violates it there, Flink does not); the
seeded driver finds the shallow ones too."""

import pytest

import manifest
from flipcheck.designs.drivers import seeded_driver
from flipcheck.model.batch_recovery import Config
from flipcheck.designs.mutants import catalogue
from flipcheck.properties.batch_recovery_explore import replay
from flipcheck.reference_impl.batch_recovery_variants import MUTANTS
from flipcheck.designs.batch_recovery import GRAPHS, check_case, generate_case, hunt

PINNED = {e["model"]: e for e in manifest.entries("batch-recovery", check="hunt")}


def config_of(entry) -> Config:
    return Config(**dict(entry["config"], graph=GRAPHS[entry["config"]["graph"]]))


def test_every_mutant_is_pinned_and_in_the_catalogue():
    assert set(PINNED) == set(MUTANTS) and len(MUTANTS) >= 3
    assert {m.id for m in catalogue().values() if m.suite == "batch-recovery"} == set(MUTANTS)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_hunt_catches_mutant_with_the_pinned_trace(name):
    entry = PINNED[name]
    with manifest.measured(entry):
        detection = hunt(catalogue()[name], budget_seconds=30)
    config, trace = detection.counterexample
    assert detection.caught and config == config_of(entry)
    manifest.pin(entry, result=detection.property, trace=[list(a) for a in trace])
    refinement = entry["result"] == "refines_model"
    steps = replay(config, trace, name, refinement=refinement)
    assert entry["result"] in {v.property for v in steps[-1].violations}
    assert all(not s.violations for s in replay(config, trace, "flink"))


@pytest.mark.parametrize("name", ["snapshot-every-finish", "no-restart-for-missing", "restore-coordinator-without-snapshot"])
def test_seeded_runs_find_the_shallow_mutants(name):
    tally = seeded_driver(generate_case, lambda case: check_case(case, name), budget_seconds=20,
                          seed=f"quality-{name}", max_cases=3000, stop_at_first=True)
    assert tally.first_violation is not None

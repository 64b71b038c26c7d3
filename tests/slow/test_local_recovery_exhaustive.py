"""Exhaustive checks of the task-local recovery model, counts pinned in
tests/manifests/local_recovery.json: every write outcome, every store operation sequence (next to
the model), every restore layout, every scheduling bulk (against an exact matching), and z3's
proof that the seed's rule is optimal for every bulk."""

import pytest

import manifest
from flipcheck.properties.local_recovery_explore import (
    all_restores, all_writes, check_all, check_restore_case, check_scheduling_cases, check_write_case, explore_store,
)
from flipcheck.properties.z3_local_recovery import prove_seed_rule_optimal
from flipcheck.designs.local_recovery import exact_scheduling

DESIGN = "local-recovery"
SCHEDULING = manifest.entries(DESIGN, check="enumeration", config={"part": "scheduling"})


def test_every_write_outcome():
    pinned = manifest.entry(DESIGN, config={"part": "write"})
    with manifest.measured(pinned):
        cases, first_violation = check_all(check_write_case, pinned["model"], all_writes(pinned["config"]["max_handles"]))
    assert first_violation is None
    manifest.pin(pinned, cases=cases)


def test_every_store_operation_sequence_pinned():
    pinned = manifest.entry(DESIGN, config={"part": "store"})
    with manifest.measured(pinned):
        result = explore_store(pinned["model"], pinned["config"]["max_id"])
    assert result.complete and result.problems == []
    manifest.pin(pinned, distinct_states=result.states, transitions=result.transitions, depth=result.depth)


def test_every_restore_layout():
    pinned = manifest.entry(DESIGN, config={"part": "restore"})
    with manifest.measured(pinned):
        cases, first_violation = check_all(check_restore_case, pinned["model"], all_restores(pinned["config"]["key_groups"]))
    assert first_violation is None
    manifest.pin(pinned, cases=cases)


@pytest.mark.parametrize("pinned", SCHEDULING, ids=manifest.entry_id)
def test_every_scheduling_bulk(pinned):
    with manifest.measured(pinned):
        cases, first_violation = check_all(check_scheduling_cases, pinned["model"], exact_scheduling(pinned["config"]["tasks"]))
    assert first_violation is None
    manifest.pin(pinned, cases=cases)


def test_z3_seed_rule_is_optimal_for_every_bulk():
    pinned = manifest.entry(DESIGN, check="z3")
    with manifest.measured(pinned):
        proved = all(prove_seed_rule_optimal(n).proved for n in range(1, pinned["config"]["max_tasks"] + 1))
    assert proved
    manifest.pin(pinned, result="success")

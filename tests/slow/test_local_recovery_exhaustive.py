"""Exhaustive checks of the task-local recovery model, counts pinned in
tests/manifests/local_recovery.json: every write outcome, every store operation sequence (next to
the model), every restore layout, every scheduling bulk (against an exact matching), and z3's
proof that the seed's rule is optimal for every bulk."""

import json
from pathlib import Path

import pytest

from flipcheck.properties.local_recovery_explore import (
    all_restores, all_writes, check_all, check_restore_case, check_scheduling_cases, check_write_case, explore_store,
)
from flipcheck.properties.z3_local_recovery import prove_seed_rule_optimal
from flipcheck.designs.local_recovery import exact_scheduling

pytestmark = pytest.mark.slow
MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "local_recovery.json").read_text())


def test_every_write_outcome():
    pinned = MANIFEST["write"]
    assert check_all(check_write_case, "flink", all_writes(pinned["max_handles"])) == (pinned["cases"], None)


def test_every_store_operation_sequence_pinned():
    pinned = MANIFEST["store"]
    result = explore_store("flink", pinned["max_id"])
    assert result.complete and result.problems == []
    assert (result.states, result.transitions, result.depth) == (pinned["distinct_states"], pinned["transitions"],
                                                                 pinned["depth"])


def test_every_restore_layout():
    pinned = MANIFEST["restore"]
    assert check_all(check_restore_case, "flink", all_restores(pinned["key_groups"])) == (pinned["cases"], None)


@pytest.mark.parametrize("tasks", [1, 2, 3, 4])
def test_every_scheduling_bulk(tasks):
    cases = exact_scheduling(tasks)
    assert check_all(check_scheduling_cases, "flink", cases) == (MANIFEST["scheduling"]["cases_by_tasks"][str(tasks)], None)


def test_z3_seed_rule_is_optimal_for_every_bulk():
    assert all(prove_seed_rule_optimal(n).proved for n in range(1, MANIFEST["z3_seed_rule_optimal"]["max_tasks"] + 1))

"""Every task-local recovery property holds on the engine for generated cases, the networkx and
z3 optima agree, z3 proves the seed's rule optimal, and the verify suite reports no violation."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flipcheck.generators.local_recovery import KINDS, cases
from flipcheck.model import local_recovery as spec
from flipcheck.properties import local_recovery_properties as props
from flipcheck.properties.z3_local_recovery import max_local_z3, prove_seed_rule_optimal
from flipcheck.designs.local_recovery import check_case, exhaustive_cases, explore_case
from flipcheck.designs.local_recovery import verify as verify_local_recovery


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=120)
@given(data=st.data())
def test_engine_keeps_every_property(kind, data):
    assert check_case(data.draw(cases(kind)), "flink") == []


@settings(max_examples=80)
@given(case=cases("scheduling"))
def test_networkx_and_z3_agree_on_the_optimum(case):
    assert spec.max_local_recoveries(case.requests, case.free, case.fresh) == max_local_z3(case.requests, case.free, case.fresh)
    assert spec.max_local_recoveries(case.requests, case.free, case.fresh) == len(spec.must_recover_locally(case.requests, case.free))


@settings(max_examples=100)
@given(case=cases("restore"))
def test_the_model_restore_yields_the_primary_state(case):
    outcome = spec.restore(spec.prioritized_alternatives(case.jm, case.local))
    assert props.check_restore(case.jm, case.local, spec.prioritized_alternatives(case.jm, case.local), outcome) == []


def test_z3_proves_the_seed_rule_optimal_for_small_bulks():
    assert all(prove_seed_rule_optimal(n).proved for n in range(1, 5))


def test_verify_suite_rows_cover_every_property_with_no_violation():
    rows = verify_local_recovery(budget_seconds=1)
    assert sum(r["violations"] for r in rows) == 0
    assert {r["name"] for r in rows} == set(props.PROPERTY_NAMES) | {"refines_spec"}
    assert {r["driver"] for r in rows} == {"exhaustive", "z3", "seeded", "hypothesis", "stateful"}


def test_exhaustive_units_and_a_counterexample():
    units = exhaustive_cases()
    assert {u.part for u in units} == {"write", "store", "restore", "scheduling", "proof"}
    unit = next(u for u in units if u.part == "scheduling" and u.bound == 2)
    assert explore_case(unit, "flink")[0] == []
    violations, count, case = explore_case(unit, "flink-before-9635")
    assert violations and case.kind == "scheduling" and check_case(case, "flink") == []

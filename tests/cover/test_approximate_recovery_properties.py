"""Every approximate-recovery property holds on the engine (and the model) for generated cases,
z3 proves the restart sets, liveness finds a stuck coordinator, and the verify suite reports no
violation for the engine and exactly the documented differences for Flink as shipped."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flipcheck.generators.approximate_recovery import KINDS, cases, failure_state
from flipcheck.model import approximate_recovery as spec
from flipcheck.model.jobgraph import JobGraph
from flipcheck.properties import approximate_recovery_properties as props
from flipcheck.properties.z3_approximate_recovery import prove_restart_set
from flipcheck.reference_impl.approximate_recovery_variants import APPROXIMATE_RECOVERY_ENGINES
from flipcheck.designs.approximate_recovery import check_case, exhaustive_cases, explore_case
from flipcheck.designs.approximate_recovery import verify as verify_approximate_recovery


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=150)
@given(data=st.data())
def test_engine_keeps_every_property(kind, data):
    case = data.draw(cases(kind))
    assert check_case(case, "flip135") == []


@settings(max_examples=100)
@given(case=cases("failover"))
def test_the_model_keeps_the_restart_set_properties(case):
    restart = spec.restart_set(case.graph, case.failed, case.unavailable)
    assert props.check_restart_set(case.graph, case.failed, case.unavailable, restart) == []


@settings(max_examples=100)
@given(case=cases("subpartition"))
def test_the_model_keeps_the_subpartition_properties(case):
    model, steps = spec.initial_subpartition(case.capacity), []
    for event in case.events:
        model, outputs = spec.subpartition_step(model, event)
        steps.append((event, outputs))
    assert props.check_subpartition_trace(steps) == []


@settings(max_examples=60)
@given(case=cases("dataflow"))
def test_recovery_without_any_loss_since_the_checkpoint_loses_nothing(case):
    """With nothing taken since the checkpoint and nothing half read, the rules lose nothing."""
    flow, state, failed, _ = failure_state(case)
    restart = frozenset(i for i, t in enumerate(flow.tasks) if t in spec.restart_set(flow.graph, {flow.tasks[f] for f in failed}))
    if not spec.lost_entries(flow, state, restart, frozenset()):
        assert spec.expected_final(flow, state, restart, frozenset()) == spec.failure_free(flow)


def test_z3_proves_the_engine_restart_sets_and_refutes_a_variant():
    graph = JobGraph.build([("a", 2), ("b", 2), ("c", 1)],
                           [("a", "b", "POINTWISE"), ("a", "c", "ALL_TO_ALL"), ("b", "c", "ALL_TO_ALL")])
    assert prove_restart_set(graph, "flip135").proved
    proof = prove_restart_set(graph, "single-task-recovery")
    assert not proof.proved and proof.failed
    assert "restart_includes_failed_and_consumers" in {v.property for v in proof.violations}


def test_liveness_finds_the_stuck_state_of_a_coordinator_that_keeps_pending_checkpoints():
    scenario = spec.BarrierScenario(channels=1, max_triggered=1, last_completed=0, consumed=(0,))
    run = APPROXIMATE_RECOVERY_ENGINES["no-abort-on-restart"]().barrier_run(scenario)
    found = props.checkpoint_after_restart_completes(scenario, run.initial(), run.successors, lambda s: s[-1])
    assert [v.property for v in found] == ["checkpoint_after_restart_completes"]
    model = spec.initial_barrier_system(scenario)
    assert props.checkpoint_after_restart_completes(scenario, model, lambda s: spec.barrier_successors(scenario, s),
                                                    lambda s: s.completed_new) == []


def test_verify_suite_rows_cover_every_property_with_no_violation():
    rows = verify_approximate_recovery(budget_seconds=1)
    assert sum(r["violations"] for r in rows) == 0
    assert {r["name"] for r in rows} == set(props.PROPERTY_NAMES) | {"refines_spec"}
    assert {r["driver"] for r in rows} == {"exploration", "z3", "seeded", "hypothesis", "stateful"}


def test_verify_suite_reports_flink_as_shipped_differences():
    rows = verify_approximate_recovery(budget_seconds=1, variant="flink-shipped")
    violated = {r["name"] for r in rows if r["violations"]}
    assert violated == {"zombie_never_replaces_newer", "old_barriers_never_block", "refines_spec"}


def test_exhaustive_units_explore_and_return_a_case_for_a_violation():
    units = exhaustive_cases()
    assert {u.part for u in units} == {"subpartition", "barriers", "failover", "dataflow"}
    barrier_unit = next(u for u in units if u.part == "barriers" and u.value.max_triggered == 1 and u.value.channels == 2
                        and u.value.consumed == (0, 0))
    assert explore_case(barrier_unit, "flip135")[0] == []
    violations, states, counterexample = explore_case(barrier_unit, "drop-below-restore-id", refinement=False)
    assert [v.property for v in violations] == ["old_barriers_never_block"] and states > 0
    assert "old_barriers_never_block" in {v.property for v in check_case(counterexample, "drop-below-restore-id")}

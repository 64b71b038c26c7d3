"""Every correct plan algorithm satisfies every plan property, on hypothesis-generated graphs.

The buggy algorithms are exercised in tests/quality/: there the assertion is that the same
properties catch them.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flipcheck.generators.job_graphs import STATE_KINDS, job_graphs
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.model.plan import NO_TASKS_TO_WAIT_FOR, NOT_ALL_REQUIRED_TASKS_RUNNING, Declined, checkpoint_plan
from flipcheck.properties.plan_properties import check_plan
from flipcheck.reference_impl.plan import CORRECT_ALGORITHMS, plan_algorithm


@pytest.mark.parametrize("algorithm", CORRECT_ALGORITHMS)
@pytest.mark.parametrize("state_kind", STATE_KINDS)
@given(data=st.data())
def test_correct_algorithms_satisfy_every_plan_property(algorithm, state_kind, data):
    graph = data.draw(job_graphs(max_vertices=6, max_parallelism=5, state_kind=state_kind))
    assert check_plan(graph, plan_algorithm(algorithm)(graph)) == []


@given(graph=job_graphs(max_vertices=5, max_parallelism=4, state_kind="upstream_closed", flag_off_probability=0))
def test_flink_before_40482_is_right_when_only_running_and_finished_occur(graph):
    # The bug needs CANCELED or FAILED tasks; without them the variant must not be flagged,
    # otherwise the quality test that catches it would prove nothing.
    assert check_plan(graph, plan_algorithm("flink-before-40482")(graph)) == []


def figure1(states):
    return JobGraph.build([("A", 1), ("B", 1), ("C", 1)], [("A", "C", ALL_TO_ALL), ("B", "C", ALL_TO_ALL)], states=states)


def test_seed_figure1_triggers_b_only():
    plan = checkpoint_plan(figure1({"A": ["FINISHED"]}))
    assert sorted(plan.tasks_to_trigger) == [("B", 0)]
    assert sorted(plan.tasks_to_wait_for) == [("B", 0), ("C", 0)]
    assert plan.fully_finished_vertices == {"A"}


def test_seed_figure1_both_sources_finished_triggers_c():
    plan = checkpoint_plan(figure1({"A": ["FINISHED"], "B": ["FINISHED"]}))
    assert sorted(plan.tasks_to_trigger) == [("C", 0)]


@pytest.mark.parametrize("state", ["CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "CANCELING", "CANCELED", "FAILED", "RECONCILING"])
@pytest.mark.parametrize("where", ["A", "C"])
@pytest.mark.parametrize("algorithm", CORRECT_ALGORITHMS)
def test_any_non_running_unfinished_task_declines(state, where, algorithm):
    # flip147 facts §1.3 step 4: source and non-source, with and without finished tasks (FLINK-22379).
    for others in ({}, {"B": ["FINISHED"]}):
        graph = figure1({**others, where: [state]})
        assert plan_algorithm(algorithm)(graph) == Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)


@pytest.mark.parametrize("algorithm", CORRECT_ALGORITHMS)
def test_all_finished_declines_no_tasks_to_wait_for(algorithm):
    graph = figure1({v: ["FINISHED"] for v in "ABC"})
    assert plan_algorithm(algorithm)(graph) == Declined(NO_TASKS_TO_WAIT_FOR)
    assert plan_algorithm(algorithm)(graph.with_flag(False)) == Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)


@pytest.mark.parametrize("algorithm", CORRECT_ALGORITHMS)
def test_feature_off_declines_as_soon_as_a_task_finished(algorithm):
    assert plan_algorithm(algorithm)(figure1({"A": ["FINISHED"]}).with_flag(False)) == Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
    assert isinstance(plan_algorithm(algorithm)(figure1({}).with_flag(False)), type(checkpoint_plan(figure1({}))))


def test_bitset_size_quirk_vertex_with_64_running_upstream_is_skipped_by_the_fast_check():
    # flip147 facts §1.5: for U = 64 all running, the POINTWISE shortcut fires; for U = 63 it cannot,
    # and the per-task check must still give the same plan.
    for upstream in (63, 64, 128):
        graph = JobGraph.build([("a", upstream), ("b", 1), ("c", upstream)], [("a", "c", "POINTWISE"), ("b", "c", "ALL_TO_ALL")],
                               states={"b": ["FINISHED"]})
        assert check_plan(graph, plan_algorithm("flink")(graph)) == []

"""`prove` finds the plan bugs: z3 returns a counterexample for each buggy algorithm, and the
decoded counterexample really makes the concrete algorithm differ from the spec."""

import pytest

from flipcheck.model.graph_json import load_graph
from flipcheck.model.jobgraph import ALL_TO_ALL, FINISHED, POINTWISE, RUNNING, JobGraph
from flipcheck.model.plan import NOT_ALL_REQUIRED_TASKS_RUNNING, CheckpointPlan, Declined, checkpoint_plan
from flipcheck.properties.plan_properties import check_plan
from flipcheck.properties.z3_plan import prove_plan
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS

# The seed's Figure 1 (A and B feed C) and a plausible job (two sources joined, keyed window).
FIGURE1 = JobGraph.build([("A", 1), ("B", 1), ("C", 1)], [("A", "C", ALL_TO_ALL), ("B", "C", ALL_TO_ALL)])
PIPELINE = load_graph("examples/graphs/pipeline-80.json")
UNEVEN = JobGraph.build([("src", 3), ("map", 5), ("agg", 2)], [("src", "map", POINTWISE), ("map", "agg", ALL_TO_ALL)])


def _non_running(graph):
    return {t: graph.state(t) for t in graph.tasks() if graph.state(t) != RUNNING}


@pytest.mark.parametrize("graph", [FIGURE1, UNEVEN, PIPELINE], ids=["figure1", "uneven", "pipeline-80"])
def test_prove_finds_that_wiki_b_triggers_tasks_with_running_predecessors(graph):
    result = prove_plan(graph, "wiki-b")
    assert not result.proved
    cex = result.counterexample
    assert set(_non_running(cex).values()) == {FINISHED}  # the binary domain
    wiki_b, spec = PLAN_ALGORITHMS["wiki-b"](cex), checkpoint_plan(cex)
    assert isinstance(wiki_b, CheckpointPlan) and isinstance(spec, CheckpointPlan)
    # wiki-b's tasks_to_check sets start full and only grow, so it triggers every running task
    # of every vertex: some of them read a running task and are not roots.
    extra = set(wiki_b.tasks_to_trigger) - set(spec.tasks_to_trigger)
    assert extra
    assert "no_triggered_task_has_running_predecessor" in {v.property for v in check_plan(cex, wiki_b)}
    assert [v.property for v in result.differences] == ["equals_spec"]


def test_flink_before_40482_is_proved_when_tasks_are_only_running_or_finished():
    # The bug needs a CANCELED or FAILED task: in the binary domain it is invisible.
    assert prove_plan(PIPELINE, "flink-before-40482").proved


@pytest.mark.parametrize("graph", [FIGURE1, UNEVEN, PIPELINE], ids=["figure1", "uneven", "pipeline-80"])
def test_prove_with_all_states_finds_flink_before_40482_treating_failed_tasks_as_finished(graph):
    result = prove_plan(graph, "flink-before-40482", "all")
    assert not result.proved
    cex = result.counterexample
    states = set(_non_running(cex).values())
    assert FINISHED in states and states & {"CANCELED", "FAILED"}, states
    buggy, spec = PLAN_ALGORITHMS["flink-before-40482"](cex), checkpoint_plan(cex)
    # The spec declines (a CANCELED/FAILED task is neither RUNNING nor finished); the bug drops
    # that task from the tasks to wait for and starts a checkpoint.
    assert spec == Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
    assert isinstance(buggy, CheckpointPlan)
    dropped = [t for t, s in _non_running(cex).items() if s in ("CANCELED", "FAILED")]
    assert all(t not in buggy.tasks_to_wait_for for t in dropped)
    assert all(t in buggy.finished_tasks for t in dropped)


@pytest.mark.parametrize("variant", ["flink-before-22379", "flink-before-22003"])
def test_prove_with_all_states_finds_the_weak_tasks_started_checks(variant):
    result = prove_plan(PIPELINE, variant, "all")
    assert not result.proved
    cex = result.counterexample
    assert checkpoint_plan(cex) == Declined(NOT_ALL_REQUIRED_TASKS_RUNNING)
    assert isinstance(PLAN_ALGORITHMS[variant](cex), CheckpointPlan)


def test_prove_finds_that_triggering_only_sources_misses_new_roots():
    result = prove_plan(PIPELINE, "trigger-sources-only")
    assert not result.proved
    cex = result.counterexample
    missing = set(checkpoint_plan(cex).tasks_to_trigger) - set(PLAN_ALGORITHMS["trigger-sources-only"](cex).tasks_to_trigger)
    assert missing and all(PIPELINE.inputs(v) for v, _ in missing)  # the missed roots are not sources


@pytest.mark.parametrize("algorithm", ["wiki-a", "naive"])
def test_the_seed_fast_check_and_the_baseline_are_correct_for_every_state(algorithm):
    assert prove_plan(PIPELINE, algorithm, "all").proved

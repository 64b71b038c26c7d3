"""The suite finds the plan bugs: every plan property has a named buggy variant it catches.

Hypothesis searches the generators for a counterexample; a test fails if the search comes back
empty, so a property that cannot fail (or a generator too weak to show the bug) is noticed.
"""

import random

import pytest
from hypothesis import HealthCheck, Phase, find, settings

from flipcheck.generators.job_graphs import job_graphs
from flipcheck.properties.plan_properties import PLAN_PROPERTIES, WIRING_PROPERTY, check_plan
from flipcheck.reference_impl.plan import plan_algorithm
from flipcheck.reference_impl.plan.wiring import float_ceil_wiring

SEARCH = settings(max_examples=5000, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])

# property -> (variant it must catch, state kind that exposes it)
CATCHES = {
    "trigger_subset_of_running": ("trigger-sources-only", "upstream_closed"),
    "no_triggered_task_has_running_predecessor": ("wiki-b", "upstream_closed"),
    "every_running_task_reached": ("trigger-sources-only", "upstream_closed"),
    "wait_commit_finished_sets": ("flink-before-40482", "any_state"),
    "decline_rules": ("flink-before-22379", "any_state"),
    "equals_spec": ("wiki-b", "arbitrary"),
}


def test_every_plan_property_has_a_catching_variant():
    assert set(CATCHES) == {p.name for p in PLAN_PROPERTIES}


@pytest.mark.parametrize("property_name", sorted(CATCHES))
def test_property_catches_its_variant(property_name):
    variant, kind = CATCHES[property_name]
    algorithm = plan_algorithm(variant)

    def violated(graph):
        return any(v.property == property_name for v in check_plan(graph, algorithm(graph)))

    counterexample = find(job_graphs(max_vertices=4, max_parallelism=3, state_kind=kind), violated, settings=SEARCH)
    assert violated(counterexample)
    # Shrinking should leave a small picture for a design review.
    assert counterexample.num_tasks <= 6, counterexample


@pytest.mark.parametrize("variant", ["wiki-b", "flink-before-40482", "flink-before-22379", "flink-before-22003", "trigger-sources-only"])
def test_each_buggy_variant_is_caught(variant):
    algorithm = plan_algorithm(variant)
    found = find(job_graphs(max_vertices=4, max_parallelism=3, state_kind="any_state" if "before" in variant else "upstream_closed"),
                 lambda g: bool(check_plan(g, algorithm(g))), settings=SEARCH)
    assert check_plan(found, algorithm(found))


def test_flink_before_22003_misses_an_initializing_source():
    from flipcheck.model.jobgraph import JobGraph
    graph = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", "POINTWISE")], states={"src": ["INITIALIZING"]})
    assert [v.property for v in check_plan(graph, plan_algorithm("flink-before-22003")(graph))] == ["decline_rules", "equals_spec"]


def test_wiring_property_catches_the_float_wiring_of_flink_22863():
    # The float rounding only bites for large parallelism; a seeded search finds a pair.
    rng = random.Random(22863)
    for _ in range(500):
        upstream = rng.randint(1000, 16000)
        downstream = rng.randint(upstream + 1, 32768)
        violations = WIRING_PROPERTY.check(upstream, downstream, float_ceil_wiring)
        if violations:
            assert "the rule gives" in violations[0].message or "reads nothing" in violations[0].message
            return
    pytest.fail("no (U, D) pair shows the FLINK-22863 float wiring bug")


def test_the_hunt_samples_a_variants_own_wiring_before_the_graph_drivers():
    """Graphs of parallelism at most 4 cannot show a float rounding error; behind the seeded and
    hypothesis drivers the wiring sample waited half the budget. A variant with a wiring of its
    own is sampled first, and caught within a few pairs (about half of them show the bug)."""
    from flipcheck.designs.contract import Mutant
    from flipcheck.designs.plan import hunt

    detection = hunt(Mutant("flink-before-22863", "plan", "flink-before-22863", "FLINK-22863", ""), budget_seconds=120)
    assert detection.caught and detection.property == WIRING_PROPERTY.name and detection.driver == "sweep"
    assert detection.cases_to_detection <= 20
    upstream, downstream = detection.counterexample
    assert WIRING_PROPERTY.check(upstream, downstream, float_ceil_wiring)


def test_a_variant_with_flinks_wiring_is_not_sampled(monkeypatch):
    """The sample could never find anything for it: its whole budget goes to the graph drivers."""
    import flipcheck.designs.plan as plan_design
    from flipcheck.designs.contract import Mutant

    def sample_called(*args, **kwargs):
        raise AssertionError("the wiring sample ran for a variant with Flink's wiring")

    monkeypatch.setattr(plan_design, "_wiring_sample", sample_called)
    detection = plan_design.hunt(Mutant("flink", "plan", "flink", None, ""), budget_seconds=1.0)
    assert not detection.caught

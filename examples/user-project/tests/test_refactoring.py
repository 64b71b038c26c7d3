"""The correct rewrite: these tests pass."""

import itertools

import pytest
from flipcheck import job_graph

from my_checkpointing import ForwardPassTrigger


def test_forward_pass_trigger_keeps_every_property(flipcheck_checker, pipelines):
    # Aligned only: two pipelines unaligned have more than 400,000 states. The first set below
    # searches the change unaligned, on two sources.
    result = flipcheck_checker.explore(pipelines, ForwardPassTrigger, records=0, mode="aligned")
    assert result.ok and result.counts["complete"]


def test_forward_pass_trigger_keeps_every_property_on_the_first_configuration_set(flipcheck_checker):
    # No graph: flipcheck's small jobs that between them show each kind of change, both modes.
    result = flipcheck_checker.explore(protocol=ForwardPassTrigger)
    assert result.ok and result.counts["complete"]


# Topologies for the plan alone, each under every view the coordinator can have of it (each task
# RUNNING or FINISHED): both POINTWISE wirings (U > D and U < D) and a mixed join.
SHAPES = {
    "3 to 2 pointwise": ([("src", 3), ("sink", 2)], [("src", "sink", "pointwise")]),
    "2 to 3 pointwise": ([("src", 2), ("sink", 3)], [("src", "sink", "pointwise")]),
    "mixed join": ([("a", 2), ("b", 1), ("join", 2), ("sink", 1)],
                   [("a", "join", "pointwise"), ("b", "join", "all-to-all"), ("join", "sink", "all-to-all")]),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_forward_pass_trigger_plans_like_the_spec(flipcheck_checker, shape):
    vertices, edges = SHAPES[shape]
    slots = [(vertex, index) for vertex, parallelism in vertices for index in range(parallelism)]
    for finished in itertools.product((False, True), repeat=len(slots)):
        states = {vertex: ["RUNNING"] * parallelism for vertex, parallelism in vertices}
        for (vertex, index), done in zip(slots, finished):
            if done:
                states[vertex][index] = "FINISHED"
        flipcheck_checker.plan(job_graph(vertices, edges, states=states), ForwardPassTrigger().plan)

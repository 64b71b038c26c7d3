"""The POINTWISE wiring rule (flip147 facts §1.7) and the engine's closed form agree for all U, D <= 64."""

import pytest

from flipcheck.model.execution_graph import predecessors
from flipcheck.model.jobgraph import POINTWISE, JobGraph
from flipcheck.model.pointwise import consumed_partitions, consumers_of_partition
from flipcheck.properties.plan_properties import pointwise_wiring
from flipcheck.reference_impl.plan.wiring import integer_wiring

# The table of flip147 facts §1.7 (PointwisePatternTest.testPointwiseConnectionSequence).
FACT_TABLE = {
    (3, 5): [[0], [0], [1], [1], [2]],
    (3, 10): [[0]] * 4 + [[1]] * 3 + [[2]] * 3,
    (4, 6): [[0], [0], [1], [2], [2], [3]],
    (6, 10): [[0], [0], [1], [1], [2], [3], [3], [4], [4], [5]],
    (4, 5): [[0], [0], [1], [2], [3]],
    (2, 3): [[0], [0], [1]],
    (5, 3): [[0], [1, 2], [3, 4]],
    (10, 3): [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]],
    (6, 4): [[0], [1, 2], [3], [4, 5]],
    (10, 6): [[0], [1, 2], [3, 4], [5], [6, 7], [8, 9]],
    (5, 2): [[0, 1], [2, 3, 4]],
    (3, 2): [[0], [1, 2]],
    (7, 7): [[i] for i in range(7)],
}


@pytest.mark.parametrize("upstream,downstream", sorted(FACT_TABLE))
def test_model_rule_reproduces_the_fact_table(upstream, downstream):
    assert [list(consumed_partitions(upstream, downstream, i)) for i in range(downstream)] == FACT_TABLE[(upstream, downstream)]


def test_engine_wiring_is_sane_and_equals_the_rule_for_all_small_parallelisms():
    violations = [v for u in range(1, 65) for d in range(1, 65) for v in pointwise_wiring(u, d, integer_wiring)]
    assert violations == []


def test_consumers_invert_consumed_partitions():
    for u in range(1, 20):
        for d in range(1, 20):
            for j in range(u):
                for i in consumers_of_partition(u, d, j):
                    assert j in consumed_partitions(u, d, i)


def test_execution_graph_uses_the_rule():
    graph = JobGraph.build([("a", 10), ("b", 6)], [("a", "b", POINTWISE)])
    assert sorted(predecessors(graph, ("b", 4))) == [("a", 6), ("a", 7)]

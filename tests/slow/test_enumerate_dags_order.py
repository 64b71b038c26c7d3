"""The job-graph enumeration's order over 4 vertices (slow: it builds every topology up to 4
vertices twice)."""

from flipcheck.generators.enumerate_dags import TopologySpace


def test_order_is_stable_and_smaller_bounds_are_a_prefix():
    small, large = TopologySpace(3, 3), TopologySpace(4, 3)
    assert [small[i] for i in range(len(small))] == [large[i] for i in range(len(small))]
    assert [large[i] for i in range(50)] == [TopologySpace(4, 3)[i] for i in range(50)]
    assert [large.vertices_of(i) for i in (0, len(small) - 1, len(small))] == [1, 3, 4]

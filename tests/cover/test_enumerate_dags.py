"""The exhaustive job-graph enumeration: every DAG shape once up to isomorphism, every decoration once."""

import itertools

import networkx as nx
import pytest

from flipcheck.generators.enumerate_dags import TopologySpace, automorphisms, dag_shapes, topology_space
from flipcheck.model.jobgraph import PATTERNS

# OEIS A003087: acyclic digraphs with n unlabelled nodes.
A003087 = [1, 2, 6, 31, 302]


def _digraph(n, edges, parallelism=None, patterns=None):
    graph = nx.DiGraph()
    graph.add_nodes_from((i, {"p": parallelism[i] if parallelism else 1}) for i in range(n))
    for k, (i, j) in enumerate(edges):
        graph.add_edge(i, j, pattern=patterns[k] if patterns else None)
    return graph


def _labelled_dags(n):
    """Every labelled DAG on n vertices: each pair unconnected, i->j or j->i, cycles dropped."""
    pairs = [(i, j) for j in range(n) for i in range(j)]
    for choice in itertools.product((None, 0, 1), repeat=len(pairs)):
        edges = [(i, j) if c == 0 else (j, i) for (i, j), c in zip(pairs, choice) if c is not None]
        graph = _digraph(n, edges)
        if nx.is_directed_acyclic_graph(graph):
            yield graph


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_shape_counts_are_oeis_a003087(n):
    assert len(dag_shapes(n)) == A003087[n - 1]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_every_labelled_dag_is_isomorphic_to_exactly_one_shape(n):
    shapes = [_digraph(n, shape) for shape in dag_shapes(n)]
    for shape in shapes:  # canonical forms are topologically labelled
        assert all(i < j for i, j in shape.edges)
    for graph in _labelled_dags(n):
        matches = [k for k, shape in enumerate(shapes) if nx.is_isomorphic(graph, shape)]
        assert len(matches) == 1, (sorted(graph.edges), matches)


def test_shapes_for_four_vertices_total_forty():
    assert TopologySpace(4, 1).shapes == 40 == sum(A003087[:4])


def test_automorphisms_map_the_edge_set_onto_itself():
    for shape in dag_shapes(4):
        group = automorphisms(4, shape)
        assert group[0] == (0, 1, 2, 3)
        for perm in group:
            assert sorted((perm[i], perm[j]) for i, j in shape) == sorted(shape)


@pytest.mark.parametrize("max_vertices,max_parallelism", [(2, 3), (3, 2)])
def test_topologies_are_the_isomorphism_classes_of_decorated_dags(max_vertices, max_parallelism):
    """Counted independently: every labelled DAG with every decoration, grouped by networkx."""
    space = TopologySpace(max_vertices, max_parallelism)
    match = dict(node_match=lambda a, b: a["p"] == b["p"], edge_match=lambda a, b: a["pattern"] == b["pattern"])
    for n in range(1, max_vertices + 1):
        classes: dict = {}
        for graph in _labelled_dags(n):
            edges = sorted(graph.edges)
            for parallelism in itertools.product(range(1, max_parallelism + 1), repeat=n):
                for patterns in itertools.product(PATTERNS, repeat=len(edges)):
                    decorated = _digraph(n, edges, parallelism, patterns)
                    key = (tuple(sorted(parallelism)), tuple(sorted(patterns)), len(edges))
                    bucket = classes.setdefault(key, [])
                    if not any(nx.is_isomorphic(decorated, other, **match) for other in bucket):
                        bucket.append(decorated)
        assert space.topologies_per_size[n] == sum(len(b) for b in classes.values())


def test_each_topology_appears_once_up_to_isomorphism():
    space = TopologySpace(3, 2)
    match = dict(node_match=lambda a, b: a["p"] == b["p"], edge_match=lambda a, b: a["pattern"] == b["pattern"])
    graphs = [_digraph(t.vertices, t.edges, t.parallelism, t.patterns) for t in (space[i] for i in range(len(space)))]
    for a, b in itertools.combinations(range(len(graphs)), 2):
        assert not nx.is_isomorphic(graphs[a], graphs[b], **match), (space[a], space[b])


def test_job_graphs_and_state_assignment_count():
    space = topology_space(3, 2)
    total = 0
    for index in range(len(space)):
        topology, graph = space[index], space.job_graph(index)
        assert [v.parallelism for v in graph.vertices] == list(topology.parallelism)
        assert len(graph.edges) == len(topology.edges)
        assert all(s == "RUNNING" for v in graph.vertices for s in graph.states[v.id])
        total += 2 ** graph.num_tasks
    assert space.state_assignments() == total

"""Each z3 encoding of a plan algorithm agrees with its concrete implementation on sampled
assignments, which is what makes a proof about the encoding a proof about the implementation
(tests/cover/test_z3_plan.py proves; this samples every algorithm in both domains, so it is slow)."""

import random

import pytest

from flipcheck.generators.choices import SeededChooser
from flipcheck.generators.job_graphs import generate_states, generate_topology
from flipcheck.model.jobgraph import EXECUTION_STATES, FINISHED, RUNNING
from flipcheck.model.plan import checkpoint_plan
from flipcheck.properties.z3_plan import encode
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS
from test_z3_plan import GRAPHS


def _sampled_graphs():
    """Random topologies (both patterns, uneven parallelism, flag on and off) and the fixed ones."""
    graphs = [(f"fixed-{name}", g) for name, g in GRAPHS.items()]
    for index in range(25):
        chooser = SeededChooser.for_case("z3-encodings", index)
        graph = generate_topology(chooser, max_vertices=5, max_parallelism=7)
        graphs.append((f"random-{index}", graph.with_flag(index % 5 != 0)))
    return graphs


def _sampled_states(graph, domain, seed):
    """Assignments of every kind the generators make, plus ones that leave whole vertices
    running (so fast checks, including the BitSet.size() one, take both branches)."""
    kinds = ("arbitrary", "upstream_closed") + (("any_state",) if domain == "all" else ())
    large = graph.num_tasks > 100  # evaluating a large encoding is the slow part: sample it less
    for n in range(3 if large else 6):
        chooser = SeededChooser.for_case(f"z3-states-{seed}", n)
        yield generate_states(chooser, graph, kinds[n % len(kinds)]).states
    rng = random.Random(seed)
    for _ in range(2 if large else 4):
        states = {v: [RUNNING] * graph.parallelism(v) for v in graph.topological_order}
        vertex = rng.choice(graph.topological_order)
        for i in range(graph.parallelism(vertex)):
            states[vertex][i] = FINISHED if rng.random() < 0.7 else RUNNING
        if domain == "all" and rng.random() < 0.5:
            other = rng.choice(graph.topological_order)
            states[other][rng.randrange(graph.parallelism(other))] = rng.choice(EXECUTION_STATES)
        yield states


@pytest.mark.parametrize("domain", ["binary", "all"])
@pytest.mark.parametrize("algorithm", sorted(PLAN_ALGORITHMS))
def test_encoding_agrees_with_the_implementation_on_sampled_states(algorithm, domain):
    checked = 0
    for label, topology in _sampled_graphs():
        encoding = encode(topology, algorithm, domain)
        for states in _sampled_states(topology, domain, label):
            graph = topology.with_states(states)
            symbolic, symbolic_spec = encoding.evaluate(graph.states)
            assert symbolic == PLAN_ALGORITHMS[algorithm](graph), (label, dict(graph.states))
            assert symbolic_spec == checkpoint_plan(graph), (label, dict(graph.states))
            checked += 1
    assert checked > 300

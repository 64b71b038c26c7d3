"""z3 encodings of the plan algorithms: they prove the correct algorithms, and each encoding
agrees with its concrete implementation on sampled assignments (which is what makes a proof
about the encoding a proof about the implementation; the sampling runs in tests/slow)."""

import pytest
import z3

from flipcheck.model.graph_json import load_graph
from flipcheck.model.jobgraph import ALL_TO_ALL, EXECUTION_STATES, FINISHED, POINTWISE, RUNNING, JobGraph
from flipcheck.model.plan import checkpoint_plan
from flipcheck.properties import z3_plan
from flipcheck.properties.z3_plan import PLAN_ENCODERS, EncodingMismatch, FlinkEncoder, SymbolicStates, prove_plan
from flipcheck.reference_impl.plan import CORRECT_ALGORITHMS, PLAN_ALGORITHMS
from flipcheck.reference_impl.plan.flink import FlinkPlanCalculator

A2A, PW = ALL_TO_ALL, POINTWISE

GRAPHS = {
    # U < D and U > D across POINTWISE edges, including the uneven ratios of flip147 facts §1.7.
    "pointwise-up": JobGraph.build([("src", 3), ("a", 5), ("b", 10), ("c", 4), ("d", 6)],
                                   [("src", "a", PW), ("a", "b", PW), ("src", "c", PW), ("c", "d", PW)]),
    "pointwise-down": JobGraph.build([("src", 10), ("a", 3), ("b", 2), ("c", 6), ("d", 4)],
                                     [("src", "a", PW), ("a", "b", PW), ("src", "c", PW), ("c", "d", PW)]),
    # A join with one input of each pattern, and a vertex with two POINTWISE inputs.
    "multiple-inputs": JobGraph.build(
        [("sink", 2), ("join", 4), ("left", 4), ("right", 3), ("merge", 3)],
        [("left", "join", A2A), ("right", "join", PW), ("join", "merge", PW), ("right", "merge", PW), ("merge", "sink", A2A)],
    ),
    "diamond": JobGraph.build([("src", 2), ("a", 3), ("b", 2), ("sink", 3)],
                              [("src", "a", PW), ("src", "b", A2A), ("a", "sink", A2A), ("b", "sink", PW)]),
    # Upstream parallelism 64 and 128 make Flink's BitSet.size() shortcut fire; 100 never does.
    "bitset-64-128": JobGraph.build(
        [("src", 64), ("map", 64), ("wide", 128), ("other", 100), ("merge", 64)],
        [("src", "map", PW), ("map", "wide", PW), ("wide", "merge", PW), ("other", "merge", PW)],
    ),
    "feature-off": JobGraph.build([("a", 2), ("b", 3)], [("a", "b", PW)], checkpoints_after_tasks_finished=False),
}


def test_every_algorithm_has_an_encoder():
    assert set(PLAN_ENCODERS) == set(PLAN_ALGORITHMS)


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", ["spec", "flink", "naive", "wiki-a", "flink-before-40482"])
def test_correct_algorithms_are_proved_for_running_and_finished(algorithm, name):
    result = prove_plan(GRAPHS[name], algorithm)
    assert result.proved, result.summary()
    assert result.num_tasks == GRAPHS[name].num_tasks and result.values_per_task == 2


@pytest.mark.parametrize("name", ["pointwise-up", "multiple-inputs", "feature-off", "bitset-64-128"])
@pytest.mark.parametrize("algorithm", CORRECT_ALGORITHMS)
def test_correct_algorithms_are_proved_for_every_execution_state(algorithm, name):
    result = prove_plan(GRAPHS[name], algorithm, "all")
    assert result.proved, result.summary()
    assert result.values_per_task == len(EXECUTION_STATES)


def test_example_pipeline_of_80_tasks_is_proved():
    graph = load_graph("examples/graphs/pipeline-80.json")
    assert graph.num_tasks == 80
    assert prove_plan(graph, "flink").proved


# -- the encodings mirror the implementations ----------------------------------------------
# On sampled assignments of every algorithm: tests/slow/test_z3_plan_sampled_states.py (slow).


@pytest.mark.parametrize("upstream", [63, 64, 100, 128])
def test_fast_check_encoding_compares_with_the_bitset_capacity(upstream):
    """Flink's POINTWISE "active upstream" test is cardinality == BitSet.size(): only a fully
    running upstream whose parallelism is a multiple of 64 is active (flip147 facts §1.5)."""
    topology = JobGraph.build([("up", upstream), ("down", 8)], [("up", "down", PW)])
    states = SymbolicStates(topology)
    encoder = FlinkEncoder()
    running = {
        v: z3_plan.VertexBits([encoder.is_running(states, (v, i)) for i in range(topology.parallelism(v))])
        for v in topology.topological_order
    }
    may_be_triggered = encoder.some_tasks_may_be_triggered(topology, "down", running)
    concrete = FlinkPlanCalculator()
    for finished_index in (None, 0, upstream - 1):
        up_states = [RUNNING] * upstream
        if finished_index is not None:
            up_states[finished_index] = FINISHED
        graph = topology.with_states({"up": up_states})
        bits = {v: concrete.running_bits(graph.states[v]) for v in graph.topological_order}
        expected = concrete.some_tasks_may_be_triggered(graph, "down", bits, {v: sum(b) for v, b in bits.items()})
        assert z3.is_true(states.model(graph.states).eval(may_be_triggered, model_completion=True)) == expected
        # And the quirk itself: a fully running upstream is active only at a multiple of 64.
        if finished_index is None:
            assert expected == (upstream % 64 != 0)


# -- counterexamples are real ---------------------------------------------------------------


def test_a_wrong_encoding_is_reported_not_turned_into_a_counterexample(monkeypatch):
    """Pretend flink's encoding were wiki-b's: z3 finds a "counterexample", the concrete re-check
    shows flink agrees with the spec there, and prove_plan refuses to report it."""
    monkeypatch.setitem(PLAN_ENCODERS, "flink", PLAN_ENCODERS["wiki-b"])
    with pytest.raises(EncodingMismatch, match="encoding of flink"):
        prove_plan(GRAPHS["diamond"], "flink")


@pytest.mark.parametrize("algorithm,domain", [("wiki-b", "binary"), ("flink-before-40482", "all"), ("trigger-sources-only", "binary")])
def test_counterexamples_are_shrunk_to_a_locally_minimal_one(algorithm, domain):
    result = prove_plan(GRAPHS["multiple-inputs"], algorithm, domain)
    assert not result.proved
    graph = result.counterexample
    assert PLAN_ALGORITHMS[algorithm](graph) != checkpoint_plan(graph)
    for task in [t for t in graph.tasks() if graph.state(t) != RUNNING]:
        states = {task[0]: [RUNNING if i == task[1] else s for i, s in enumerate(graph.states[task[0]])]}
        relaxed = graph.with_states(states)
        assert PLAN_ALGORITHMS[algorithm](relaxed) == checkpoint_plan(relaxed), f"{task} could be RUNNING"

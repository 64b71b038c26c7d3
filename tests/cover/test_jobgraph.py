"""The job-graph model and its JSON format: structure, defaults, and one-line errors."""

import json

import pytest

from flipcheck.model.graph_json import GraphFormatError, dumps_graph, loads_graph
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, RUNNING, JobGraph


def doc(**overrides):
    document = {
        "vertices": [{"id": "sink", "parallelism": 1}, {"id": "src", "parallelism": 2}, {"id": "map", "parallelism": 2}],
        "edges": [
            {"source": "src", "target": "map", "pattern": "POINTWISE"},
            {"source": "map", "target": "sink", "pattern": "ALL_TO_ALL"},
        ],
    }
    document.update(overrides)
    return json.dumps(document)


def test_vertex_order_is_arbitrary_and_topological_order_is_derived():
    graph = loads_graph(doc())
    assert [v.id for v in graph.vertices] == ["sink", "src", "map"]
    assert graph.topological_order == ("src", "map", "sink")


def test_states_default_to_running_and_flag_to_true():
    graph = loads_graph(doc())
    assert all(s == RUNNING for v in graph.vertices for s in graph.states[v.id])
    assert graph.checkpoints_after_tasks_finished is True


def test_unknown_vertex_keys_are_kept_and_round_trip():
    document = json.loads(doc())
    document["vertices"][0]["two_phase_commit_sink"] = True
    graph = loads_graph(json.dumps(document))
    assert graph.vertex("sink").extra == {"two_phase_commit_sink": True}
    assert loads_graph(dumps_graph(graph)) == graph


def test_round_trip_with_states_and_flag():
    graph = loads_graph(doc(states={"src": ["FINISHED", "RUNNING"]}, checkpoints_after_tasks_finished=False))
    again = loads_graph(dumps_graph(graph))
    assert again == graph
    assert again.states["src"] == ("FINISHED", "RUNNING")


BAD_DOCUMENTS = [
    ("[1]", "top level: expected an object"),
    ('{"vertices": [], }', "invalid JSON"),
    ("{}", "vertices: missing key"),
    ('{"vertices": []}', "vertices: no vertices"),
    ('{"vertices": [{"id": "a"}]}', "vertices[0].parallelism: missing key"),
    ('{"vertices": [{"id": 3, "parallelism": 1}]}', "vertices[0].id: expected a string"),
    ('{"vertices": [{"id": "a", "parallelism": "2"}]}', "vertices[0].parallelism: expected an integer"),
    ('{"vertices": [{"id": "a", "parallelism": 2.0}]}', "vertices[0].parallelism: 2.0 is not an integer"),
    ('{"vertices": [{"id": "a", "parallelism": 2.5}]}', "vertices[0].parallelism: expected an integer"),
    ('{"vertices": [{"id": "a", "parallelism": true}]}', "vertices[0].parallelism: expected an integer"),
    ('{"vertices": [{"id": "a", "parallelism": 0}]}', "vertices[0].parallelism: 0 is outside 1..32768"),
    ('{"vertices": [{"id": "a", "parallelism": 32769}]}', "outside 1..32768"),
    ('{"vertices": [{"id": "a", "parallelism": 1}, {"id": "a", "parallelism": 1}]}', "vertices[1].id: duplicate vertex id 'a'"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "edges": [{"source": "a", "target": "b", "pattern": "POINTWISE"}]}',
     "edges[0].target: unknown vertex 'b'"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "edges": [{"source": "a", "target": "a", "pattern": "POINTWISE"}]}',
     "edges[0]: self-loop on 'a'"),
    ('{"vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}], "edges": ['
     '{"source": "a", "target": "b", "pattern": "FORWARD"}]}', "edges[0].pattern: unknown pattern 'FORWARD'"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "edges": [{"source": "a", "pattern": "POINTWISE"}]}',
     "edges[0].target: missing key"),
    ('{"vertices": [{"id": "a", "parallelism": 2}], "states": {"a": ["RUNNING"]}}', "states.a: 1 states for parallelism 2"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "states": {"b": ["RUNNING"]}}', "states.b: states for an unknown vertex"),
    ('{"vertices": [{"id": "a", "parallelism": 2}], "states": {"a": ["RUNNING", "DONE"]}}', "states.a[1]: unknown state 'DONE'"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "states": {"a": [7]}}', "states.a[0]: expected a state name"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "states": {"a": [[]]}}', "states.a[0]: expected a state name"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "checkpoints_after_tasks_finished": "yes"}',
     "checkpoints_after_tasks_finished: expected a boolean"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "vertex": []}', "vertex: unknown key"),
    ('{"vertices": [{"id": "a", "parallelism": 1}], "vertices": []}', "vertices: duplicate key"),
    ("[" * 100000 + "]" * 100000, "nesting too deep"),
]


@pytest.mark.parametrize("text,message", BAD_DOCUMENTS)
def test_bad_documents_name_the_field_and_the_problem(text, message):
    with pytest.raises(GraphFormatError) as caught:
        loads_graph(text)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_cycle_names_the_vertices_on_it():
    text = json.dumps({
        "vertices": [{"id": x, "parallelism": 1} for x in "abcd"],
        "edges": [{"source": s, "target": t, "pattern": "POINTWISE"} for s, t in ("ab", "bc", "cd", "db")],
    })
    with pytest.raises(GraphFormatError) as caught:
        loads_graph(text)
    message = str(caught.value)
    assert message.startswith("edges: cycle ")
    assert all(v in message for v in "bcd") and "a ->" not in message


def test_build_rejects_a_cycle_directly():
    with pytest.raises(ValueError):
        JobGraph.build([("a", 1), ("b", 1)], [("a", "b", ALL_TO_ALL), ("b", "a", POINTWISE)])

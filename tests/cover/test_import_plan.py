"""Importing Flink's JSON plans: both shapes, ship strategies, chaining, and every way to fail."""

import json
from pathlib import Path

import pytest

from flipcheck.flink.import_plan import (
    EXECUTION_PLAN,
    REST_PLAN,
    PlanFormatError,
    detect_format,
    import_plan,
    load_plan,
    loads_plan,
    ship_strategy_pattern,
)
from flipcheck.model.graph_json import graph_to_json, parse_graph
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE

FIXTURES = Path(__file__).parent.parent / "fixtures" / "flink_plans"


def _fixture(name):
    return json.loads((FIXTURES / name).read_text())


def _shape(graph):
    """Vertices as (name, parallelism) and edges as (source name, target name, pattern)."""
    name = {v.id: v.extra["name"] for v in graph.vertices}
    return (
        sorted((v.extra["name"], v.parallelism) for v in graph.vertices),
        sorted((name[e.source], name[e.target], e.pattern) for e in graph.edges),
    )


def _exec_node(node_id, name, parallelism, *inputs):
    node = {"id": node_id, "type": name, "pact": "Operator", "contents": name, "parallelism": parallelism}
    if inputs:
        node["predecessors"] = [{"id": i, "ship_strategy": s, "side": "second"} for i, s in inputs]
    return node


@pytest.mark.parametrize("strategy, pattern", [
    ("FORWARD", POINTWISE), ("RESCALE", POINTWISE), ("forward", POINTWISE), (" Forward ", POINTWISE),
    ("HASH", ALL_TO_ALL), ("REBALANCE", ALL_TO_ALL), ("BROADCAST", ALL_TO_ALL), ("SHUFFLE", ALL_TO_ALL),
    ("GLOBAL", ALL_TO_ALL), ("CUSTOM", ALL_TO_ALL), ("Hash Partition on [0]", ALL_TO_ALL), ("Forward-ish", ALL_TO_ALL),
])
def test_ship_strategies_map_to_patterns(strategy, pattern):
    assert ship_strategy_pattern(strategy) == pattern


def test_rest_plan_one_vertex_per_node_names_unescaped():
    imported = import_plan(_fixture("rest_socket_window_wordcount.json"))
    assert imported.format == REST_PLAN and imported.job_name == "Socket Window WordCount"
    vertices, edges = _shape(imported.graph)
    window = next(name for name, _ in vertices if name.startswith("Window("))
    assert vertices == sorted([("Source: Socket Stream -> Flat Map", 1), (window, 4), ("Sink: Print to Std. Out", 1)])
    assert edges == sorted([("Source: Socket Stream -> Flat Map", window, ALL_TO_ALL),
                            (window, "Sink: Print to Std. Out", ALL_TO_ALL)])
    first = imported.graph.vertices[0]
    assert first.extra["flink_id"] == "0f2d8e6b4a1c4937a5e2c7b9d1f30482"
    assert first.id.startswith("source-socket-stream-") and first.id.endswith("0f2d8e")


def test_rest_plan_wrapped_in_job_details_with_rescale_and_forward():
    imported = import_plan(_fixture("rest_job_details.json"))
    assert imported.job_name == "orders-enrichment"
    _, edges = _shape(imported.graph)
    assert edges == sorted([
        ("Source: orders -> Timestamps/Watermarks", "Map -> Filter", POINTWISE),
        ("Map -> Filter", "KeyedProcess", ALL_TO_ALL),
        ("KeyedProcess", "Sink: Committer", POINTWISE),
    ])
    assert [v.extra["name"] for v in imported.graph.vertices][0].startswith("Source")  # sources first


def test_plan_as_a_json_string_is_unwrapped_too():
    plan = _fixture("rest_socket_window_wordcount.json")
    assert import_plan({"plan": json.dumps(plan)}).graph == import_plan(plan).graph


def test_execution_plan_one_vertex_per_operator_without_chaining():
    imported = import_plan(_fixture("exec_plan_wordcount.json"))
    assert imported.format == EXECUTION_PLAN and imported.job_name is None
    assert [v.id for v in imported.graph.vertices] == [
        "source-collection-source-1", "flat-map-2", "keyed-aggregation-4", "sink-print-to-std-out-5"]
    assert [e.pattern for e in imported.graph.edges] == [POINTWISE, ALL_TO_ALL, POINTWISE]


def test_chaining_merges_forward_equal_parallelism_single_input_operators():
    graph = import_plan(_fixture("exec_plan_wordcount.json"), chain=True).graph
    assert [(v.id, v.parallelism, v.extra["name"], v.extra["chain"]) for v in graph.vertices] == [
        ("source-collection-source-1", 1, "Source: Collection Source -> Flat Map", [1, 2]),
        ("keyed-aggregation-4", 4, "Keyed Aggregation -> Sink: Print to Std. Out", [4, 5]),
    ]
    assert [(e.source, e.target, e.pattern) for e in graph.edges] == [
        ("source-collection-source-1", "keyed-aggregation-4", ALL_TO_ALL)]


def test_chaining_a_sql_plan_with_a_join_a_fork_and_a_rescale():
    graph = import_plan(_fixture("exec_plan_sql_join.json"), chain=True).graph
    vertices, edges = _shape(graph)
    join = "Join[5] -> Calc[6] -> (ConstraintEnforcer[7], Sink: audit[9])"  # Flink's name for a fork
    assert vertices == sorted([("Source: orders[1] -> Calc[2]", 4), ("Source: users[3] -> Calc[4]", 2),
                               (join, 4), ("Sink: results[8]", 2)])
    assert edges == sorted([("Source: orders[1] -> Calc[2]", join, ALL_TO_ALL),
                            ("Source: users[3] -> Calc[4]", join, ALL_TO_ALL),
                            (join, "Sink: results[8]", POINTWISE)])
    assert {v.id for v in graph.vertices} == {"source-orders-1", "source-users-3", "join-5", "sink-results-8"}


@pytest.mark.parametrize("why, nodes, vertices", [
    ("different parallelism", [_exec_node(1, "a", 2), _exec_node(2, "b", 3, (1, "FORWARD"))], 2),
    ("rescale is not forward", [_exec_node(1, "a", 2), _exec_node(2, "b", 2, (1, "RESCALE"))], 2),
    ("two inputs", [_exec_node(1, "a", 2), _exec_node(2, "b", 2),
                    _exec_node(3, "c", 2, (1, "FORWARD"), (2, "FORWARD"))], 3),
    ("same input twice", [_exec_node(1, "a", 2), _exec_node(2, "b", 2, (1, "FORWARD"), (1, "FORWARD"))], 2),
    ("a forward chain of three", [_exec_node(1, "a", 2), _exec_node(2, "b", 2, (1, "FORWARD")),
                                  _exec_node(3, "c", 2, (2, "forward"))], 1),
])
def test_chaining_rule(why, nodes, vertices):
    graph = import_plan({"nodes": nodes}, chain=True).graph
    assert len(graph.vertices) == vertices, why
    assert sum(v.parallelism for v in graph.vertices) <= import_plan({"nodes": nodes}).graph.num_tasks


def test_duplicate_job_edges_are_kept():
    nodes = [_exec_node(1, "a", 2), _exec_node(2, "b", 2, (1, "FORWARD"), (1, "HASH"))]
    assert [e.pattern for e in import_plan({"nodes": nodes}, chain=True).graph.edges] == [POINTWISE, ALL_TO_ALL]


def test_legacy_string_parallelism_and_unicode_names():
    nodes = [_exec_node(1, "数据源", "3"), _exec_node(2, "Reduce", 3, (1, "Hash Partition on [0]"))]
    graph = import_plan({"nodes": nodes}).graph
    assert [(v.id, v.parallelism) for v in graph.vertices] == [("vertex-1", 3), ("reduce-2", 3)]


def test_short_rest_ids_grow_until_unique():
    nodes = [{"id": "abcdef" + "0" * 26, "parallelism": 1, "description": "Map"},
             {"id": "abcdef" + "1" * 26, "parallelism": 1, "description": "Map",
              "inputs": [{"num": 0, "id": "abcdef" + "0" * 26, "ship_strategy": "FORWARD", "exchange": "pipelined_bounded"}]}]
    ids = [v.id for v in import_plan({"nodes": nodes}).graph.vertices]
    assert ids == ["map-abcdef00", "map-abcdef11"]


def test_output_round_trips_through_the_graph_format():
    for name in sorted(p.name for p in FIXTURES.glob("*.json")):
        for chain in ((False, True) if name.startswith("exec") else (False,)):
            graph = import_plan(_fixture(name), chain=chain).graph
            assert parse_graph(json.loads(json.dumps(graph_to_json(graph)))) == graph


@pytest.mark.parametrize("document, message", [
    ([], "top level: expected an object"),
    ({"jid": "x"}, "nodes: missing key"),
    ({"nodes": {}}, "nodes: expected an array"),
    ({"nodes": []}, "nodes: no nodes"),
    ({"nodes": [1]}, r"nodes\[0\]: expected an object"),
    ({"nodes": [{"id": 1, "parallelism": 1}]}, "nodes: unknown plan format"),
    ({"nodes": [{"id": 1, "parallelism": 1, "contents": "a", "inputs": []}]}, "nodes: unknown plan format"),
    ({"vertices": [{"id": "a", "parallelism": 1}]}, "already a flipcheck job graph"),
    ({"plan": 3}, "plan: expected an object"),
    ({"plan": "{nope"}, "plan: a string that is not JSON"),
    ({"nodes": [{"type": "a", "parallelism": 1}]}, r"nodes\[0\].id: missing key"),
    ({"nodes": [{"id": 1, "type": "a"}]}, r"nodes\[0\].parallelism: missing key"),
    ({"nodes": [{"id": 1, "type": "a", "parallelism": 0}]}, r"nodes\[0\].parallelism: 0 is outside 1..32768"),
    ({"nodes": [{"id": 1, "type": "a", "parallelism": -1}]}, r"nodes\[0\].parallelism: -1 is the cluster's default"),
    ({"nodes": [{"id": 1, "type": "a", "parallelism": 2.5}]}, r"nodes\[0\].parallelism: expected an integer"),
    ({"nodes": [{"id": 1, "type": "a", "parallelism": True}]}, r"nodes\[0\].parallelism: expected an integer"),
    ({"nodes": [{"id": None, "type": "a", "parallelism": 1}]}, r"nodes\[0\].id: expected a non-empty string"),
    ({"nodes": [{"id": 1, "description": "a", "parallelism": 1}]}, r"nodes\[0\].id: expected a non-empty string,"),
    ({"nodes": [{"id": 1, "type": 5, "parallelism": 1}]}, r"nodes\[0\].type: expected a string"),
    ({"nodes": [_exec_node(1, "a", 1), _exec_node(1, "b", 1)]}, r"nodes\[1\].id: duplicate id 1 \(also nodes\[0\]\)"),
    ({"nodes": [_exec_node(1, "a", 1, (7, "HASH"))]}, r"nodes\[0\].predecessors\[0\].id: unknown node 7"),
    ({"nodes": [dict(_exec_node(1, "a", 1), predecessors={})]}, r"nodes\[0\].predecessors: expected an array"),
    ({"nodes": [dict(_exec_node(1, "a", 1), predecessors=[3])]}, r"nodes\[0\].predecessors\[0\]: expected an object"),
    ({"nodes": [dict(_exec_node(2, "b", 1), predecessors=[{"id": 2}])]},
     r"nodes\[0\].predecessors\[0\].ship_strategy: missing key"),
    ({"nodes": [_exec_node(1, "a", 1), _exec_node(2, "b", 1, (1, "  "))]}, "empty ship strategy"),
    ({"nodes": [_exec_node(1, "a", 1), _exec_node(2, "b", 1, (1, None))]}, "ship_strategy: expected a string"),
    ({"nodes": [{"id": "x", "parallelism": 1, "description": "a",
                 "inputs": [{"num": 0, "id": "y", "ship_strategy": "HASH"}]}]}, r"nodes\[0\].inputs\[0\].id: unknown node 'y'"),
    ({"nodes": [_exec_node(1, "a", 1, (2, "HASH")), _exec_node(2, "b", 1, (1, "HASH"))]}, r"cycle b-2 -> a-1 -> b-2 \(iterations are not supported\)"),
])
def test_bad_documents_name_the_field(document, message):
    with pytest.raises(PlanFormatError, match=message) as error:
        import_plan(document)
    assert "\n" not in str(error.value)


def test_chain_is_refused_for_rest_plans():
    with pytest.raises(PlanFormatError, match="--chain: the REST plan's nodes are job vertices"):
        import_plan(_fixture("rest_job_details.json"), chain=True)


def test_detect_format_of_the_fixtures():
    assert detect_format(_fixture("rest_job_details.json")) == REST_PLAN
    assert detect_format(_fixture("exec_plan_sql_join.json")) == EXECUTION_PLAN


@pytest.mark.parametrize("text, message", [
    ("{", "invalid JSON at line 1"), (b"\xff\xfe", "not UTF-8|invalid JSON"), ("[" * 100000, "nesting too deep"),
])
def test_unreadable_text(text, message):
    with pytest.raises(PlanFormatError, match=message):
        loads_plan(text)


def test_missing_file(tmp_path):
    with pytest.raises(PlanFormatError, match="cannot read file"):
        load_plan(str(tmp_path / "absent.json"))

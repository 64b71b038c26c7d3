"""Pictures of plans: what the graphviz source says about each task, edge and vertex."""

import random
import re
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flipcheck.render import core as render
from flipcheck.errors import UsageError
from flipcheck.generators.job_graphs import job_graphs
from flipcheck.model.execution_graph import input_connections
from flipcheck.model.jobgraph import ALL_TO_ALL, FINISHED, POINTWISE, RUNNING, JobGraph
from flipcheck.model.plan import NOT_ALL_REQUIRED_TASKS_RUNNING, CheckpointPlan, Declined, TaskSet, checkpoint_plan
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS
from flipcheck.render.core import (
    MAX_GROUPS,
    PALETTE,
    Look,
    counterexample_dot_source,
    group_subtasks,
    plan_dot_source,
    render_counterexample,
    render_plan_graph,
)

FIGURE1 = JobGraph.build([("C", 1), ("A", 1), ("B", 1)], [("A", "C", ALL_TO_ALL), ("B", "C", ALL_TO_ALL)],
                         states={"A": [FINISHED]})
needs_dot = pytest.mark.usefixtures("dot_program")

_NODE = re.compile(r"^\s*(v(\d+)g\d+) \[(.*)\]$")
_EDGE = re.compile(r"^\s*(\S+) -> (\S+) \[(.*)\]$")


def _attribute(attributes: str, name: str):
    """One attribute of a DOT attribute list: quoted, a plain word, or an HTML label <...>."""
    match = re.search(rf'(?:^|\s){name}=', attributes)
    if not match:
        return None
    rest = attributes[match.end():]
    if rest.startswith("<"):  # HTML-like: up to the matching ">"
        depth = 0
        for end, char in enumerate(rest):
            depth += {"<": 1, ">": -1}.get(char, 0)
            if depth == 0:
                return rest[1:end]
    if rest.startswith('"'):
        return re.match(r'"((?:[^"\\]|\\.)*)"', rest).group(1)
    return rest.split()[0]


def _nodes(graph, source):
    """Task nodes: (vertex id, first index, last index, attributes), from the source text."""
    nodes = []
    for line in source.splitlines():
        match = _NODE.match(line)
        if match:
            vertex_id = graph.topological_order[int(match.group(2))]
            label = _attribute(match.group(3), "label")
            first, _, last = re.search(r"<B>([\d-]+)</B>", label).group(1).partition("-")
            nodes.append((vertex_id, int(first), int(last or first), match.group(3), match.group(1)))
    return nodes


def _edges(source):
    """Drawn edges (the invisible ones only keep subtasks in order)."""
    matches = [m for m in map(_EDGE.match, source.splitlines()) if m and "style=invis" not in m.group(3)]
    return [(m.group(1), m.group(2), m.group(3)) for m in matches]


def _task_fill(graph, source):
    fills = {}
    for vertex_id, first, last, attributes, _ in _nodes(graph, source):
        for index in range(first, last + 1):
            fills[(vertex_id, index)] = (_attribute(attributes, "fillcolor"), _attribute(attributes, "label"))
    return fills


def test_one_cluster_per_vertex_labelled_with_id_and_parallelism():
    graph = JobGraph.build([("src", 3), ("map", 5), ("sink", 1)], [("src", "map", POINTWISE), ("map", "sink", ALL_TO_ALL)],
                           states={"src": [FINISHED] * 3})
    source = plan_dot_source(graph, "flink")
    labels = re.findall(r"subgraph (cluster_v\d+) \{\s*(.*)", source)
    assert len(labels) == 3
    for (_, attributes), vertex_id in zip(labels, graph.topological_order):
        label = _attribute(attributes, "label")
        assert f"<B>{vertex_id}</B>" in label and f"parallelism {graph.parallelism(vertex_id)}" in label
        assert ("fully finished" in label) == (vertex_id == "src")


@settings(max_examples=60)
@given(graph=job_graphs(max_vertices=4, max_parallelism=4), algorithm=st.sampled_from(sorted(PLAN_ALGORITHMS)))
def test_every_task_is_drawn_by_its_state_and_the_plan(graph, algorithm):
    result = PLAN_ALGORITHMS[algorithm](graph)
    fills = _task_fill(graph, plan_dot_source(graph, algorithm, result=result))
    assert set(fills) == set(graph.tasks())
    triggered = set(result.tasks_to_trigger) if isinstance(result, CheckpointPlan) else set()
    for task, (fill, label) in fills.items():
        state = graph.state(task)
        if task in triggered:
            assert fill == PALETTE["triggered"]
        elif state == FINISHED:
            assert fill == PALETTE["finished"]
        elif state == RUNNING:
            assert fill == PALETTE["running"]
        else:
            assert fill == PALETTE["other state"] and state in label
    assert len(set(PALETTE.values())) == len(PALETTE)


def test_title_summarises_the_plan_or_names_the_decline_reason():
    assert "1 to trigger, 2 to wait for" in plan_dot_source(FIGURE1, "flink")
    canceled = FIGURE1.with_states({"B": ["CANCELED"]})
    assert f"declined: {NOT_ALL_REQUIRED_TASKS_RUNNING}" in plan_dot_source(canceled, "flink")
    done = FIGURE1.with_states({v: [FINISHED] for v in "ABC"})
    assert "declined: NO_TASKS_TO_WAIT_FOR" in plan_dot_source(done, "spec", title="all done")
    assert "all done" in plan_dot_source(done, "spec", title="all done")


def test_all_to_all_once_per_job_edge_between_clusters_pointwise_per_connection_dashed():
    graph = JobGraph.build([("a", 3), ("b", 5), ("c", 2), ("d", 4)],
                           [("a", "b", POINTWISE), ("b", "c", ALL_TO_ALL), ("a", "d", ALL_TO_ALL), ("c", "d", POINTWISE)])
    source = plan_dot_source(graph, "flink")
    edges = _edges(source)
    bold = [attributes for _, _, attributes in edges if "lhead=" in attributes]
    dashed = [attributes for _, _, attributes in edges if "style=dashed" in attributes]
    assert len(bold) == 2 and all("ltail=" in a and "ALL_TO_ALL" in a and "style=bold" in a for a in bold)
    connections = sum(1 for t in graph.tasks() for e, _ in input_connections(graph, t) if e.pattern == POINTWISE)
    assert len(dashed) == connections == len(edges) - len(bold)
    assert "compound=true" in source


@settings(max_examples=80)
@given(upstream=st.integers(1, 150), downstream=st.integers(1, 150), seed=st.integers(0, 3))
def test_collapsed_pointwise_edges_join_exactly_the_groups_the_wiring_connects(upstream, downstream, seed):
    rng = random.Random(seed)
    states = {"u": [rng.choice([FINISHED, RUNNING, RUNNING]) for _ in range(upstream)]}
    graph = JobGraph.build([("u", upstream), ("d", downstream)], [("u", "d", POINTWISE)], states=states)
    source = plan_dot_source(graph, "flink")
    group_of, node_vertex = {}, {}
    for vertex_id, first, last, _, node_id in _nodes(graph, source):
        node_vertex[node_id] = vertex_id
        for index in range(first, last + 1):
            assert (vertex_id, index) not in group_of
            group_of[(vertex_id, index)] = node_id
    drawn = {(a, b) for a, b, _ in _edges(source)}
    wired = {(group_of[up], group_of[task]) for task in graph.tasks() for _, up in input_connections(graph, task)}
    assert drawn == wired


def test_collapsing_keeps_a_10x100_graph_small_and_covers_every_subtask():
    rng = random.Random(7)
    names = [f"v{i}" for i in range(10)]
    states = {v: [rng.choice([FINISHED, RUNNING]) for _ in range(100)] for v in names[:5]}
    graph = JobGraph.build([(v, 100) for v in names],
                           [(names[i], names[i + 1], POINTWISE if i % 2 else ALL_TO_ALL) for i in range(9)], states=states)
    nodes = _nodes(graph, plan_dot_source(graph, "flink"))
    per_vertex = Counter(vertex_id for vertex_id, *_ in nodes)
    assert max(per_vertex.values()) <= MAX_GROUPS and len(nodes) <= 10 * MAX_GROUPS
    for vertex_id in names:
        covered = sorted(i for v, first, last, *_ in nodes if v == vertex_id for i in range(first, last + 1))
        assert covered == list(range(100))
    # All-running vertices downstream of running ones look the same throughout: one node each.
    assert all(per_vertex[v] == 1 for v in names[6:])


@settings(max_examples=200)
@given(looks=st.lists(st.sampled_from([Look(RUNNING), Look(FINISHED), Look(RUNNING, render.TRIGGERED), Look("CANCELED")]),
                      min_size=1, max_size=120))
def test_groups_partition_the_subtasks_and_keep_uniform_runs(looks):
    groups = group_subtasks(looks)
    assert [g.start for g in groups] == [0] + [g.stop for g in groups[:-1]] and groups[-1].stop == len(looks)
    for group in groups:
        assert sum(group.looks.values()) == group.stop - group.start
        assert group.looks == Counter(looks[group.start:group.stop])
    if len(looks) <= render.COLLAPSE_ABOVE:
        assert len(groups) == len(looks)
    else:
        assert len(groups) <= MAX_GROUPS
        runs = 1 + sum(1 for a, b in zip(looks, looks[1:]) if a != b)
        if runs <= MAX_GROUPS:
            assert all(g.look is not None for g in groups) and len(groups) == runs


def test_mixed_groups_are_striped_and_say_what_they_hold():
    graph = JobGraph.build([("v", 100)], states={"v": [FINISHED, RUNNING] * 50})
    source = plan_dot_source(graph, "spec")
    striped = [a for *_, a, _ in _nodes(graph, source) if "style=striped" in a]
    assert striped and all("mixed:" in _attribute(a, "label") for a in striped)


def test_legend_names_every_kind_of_task_and_edge():
    source = plan_dot_source(FIGURE1, "flink")
    legend = source[source.index("legend"):]
    for text in ("triggered", "running, waited for", "finished", "other state", "ALL_TO_ALL", "POINTWISE", "mixed"):
        assert text in legend
    compared = counterexample_dot_source(FIGURE1, "wiki-b")
    assert "algorithm only" in compared and "spec only" in compared


def test_counterexample_marks_tasks_triggered_by_one_side_only():
    graph = JobGraph.build([("a", 2), ("b", 2)], [("a", "b", ALL_TO_ALL)], states={"a": [FINISHED, RUNNING]})
    source = counterexample_dot_source(graph, "wiki-b")
    fills = _task_fill(graph, source)
    spec_trigger = set(checkpoint_plan(graph).tasks_to_trigger)
    wiki_b_trigger = set(PLAN_ALGORITHMS["wiki-b"](graph).tasks_to_trigger)
    assert wiki_b_trigger - spec_trigger, "wiki-b is known to over-trigger here"
    for task in wiki_b_trigger - spec_trigger:
        assert fills[task][0] == PALETTE["triggered by the algorithm only"]
    for task in wiki_b_trigger & spec_trigger:
        assert fills[task][0] == PALETTE["triggered"]
    assert "wiki-b differs from the spec" in source and "tasks_to_trigger: algorithm only b[0-1]" in source


def test_counterexample_marks_missed_triggers_and_other_set_differences():
    graph = FIGURE1
    spec = checkpoint_plan(graph)
    declined = counterexample_dot_source(graph, "x", result=Declined(NOT_ALL_REQUIRED_TASKS_RUNNING))
    missed = [a for v, *_, a, _ in _nodes(graph, declined) if v == "B"]
    assert "spec only" in _attribute(missed[0], "label") and "dashed" in _attribute(missed[0], "style")
    assert "x: declined" in declined
    waits_for_finished = CheckpointPlan(spec.tasks_to_trigger, TaskSet.of([*spec.tasks_to_wait_for, ("A", 0)]),
                                        spec.tasks_to_commit_to, spec.finished_tasks, spec.fully_finished_vertices)
    source = counterexample_dot_source(graph, "x", result=waits_for_finished)
    noted = [a for v, *_, a, _ in _nodes(graph, source) if v == "A"]
    assert "wait: algorithm only" in _attribute(noted[0], "label")
    assert "tasks_to_wait_for: algorithm only A[0]" in source
    assert "flink the same plan as the spec" in counterexample_dot_source(graph, "flink")


def test_plan_view_notes_a_plan_that_waits_for_a_finished_task():
    spec = checkpoint_plan(FIGURE1)
    wrong = CheckpointPlan(spec.tasks_to_trigger, TaskSet.of([*spec.tasks_to_wait_for, ("A", 0)]),
                           spec.tasks_to_commit_to, spec.finished_tasks, spec.fully_finished_vertices)
    nodes = _nodes(FIGURE1, plan_dot_source(FIGURE1, "x", result=wrong))
    assert [v for v, *_, a, _ in nodes if "waited for" in _attribute(a, "label")] == ["A"]


def test_output_format_comes_from_the_extension():
    assert render.output_format("x.SVG") == "svg" and render.output_format("dir.d/x.png") == "png"
    for bad in ("x.jpg", "x", "x.svg.gz"):
        with pytest.raises(UsageError, match="svg or .png|.svg or .png"):
            render.output_format(bad)


def test_missing_dot_is_a_one_line_error_naming_the_fix(monkeypatch, tmp_path):
    monkeypatch.setattr(render, "find_program", lambda name: None)
    with pytest.raises(render.DotNotFoundError, match="apt-get install graphviz") as error:
        render_plan_graph(FIGURE1, "flink", str(tmp_path / "x.svg"))
    assert "\n" not in str(error.value)
    assert not (tmp_path / "x.svg").exists()


@needs_dot
def test_dot_draws_an_svg_that_is_xml_and_names_the_vertices(tmp_path):
    odd = JobGraph.build([('src <1> & "q"', 2), ("sink", 30)], [('src <1> & "q"', "sink", POINTWISE)],
                         states={'src <1> & "q"': [FINISHED, RUNNING]})
    out = render_plan_graph(odd, "flink", str(tmp_path / "plan.svg"))
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    texts = {"".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")}
    assert {'src <1> & "q"', "sink", "0-14", "15-29"} <= texts  # sink's 30 subtasks: two groups
    png = render_counterexample(FIGURE1, "wiki-b", str(tmp_path / "cex.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_difference_inside_a_mixed_group_stays_visible():
    graph = JobGraph.build([("v", 60)], states={"v": [FINISHED, RUNNING] * 30})
    spec = checkpoint_plan(graph)
    missed_one = CheckpointPlan(TaskSet.of(t for t in spec.tasks_to_trigger if t != ("v", 31)), spec.tasks_to_wait_for,
                                spec.tasks_to_commit_to, spec.finished_tasks, spec.fully_finished_vertices)
    nodes = _nodes(graph, counterexample_dot_source(graph, "x", result=missed_one))
    holder = [a for v, first, last, a, _ in nodes if first <= 31 <= last]
    assert "style=striped" in holder[0] and _attribute(holder[0], "color") == PALETTE["triggered by the algorithm only"]  # red
    assert "1 spec only" in _attribute(holder[0], "label")
    others = [a for v, first, last, a, _ in nodes if not first <= 31 <= last]
    assert all(_attribute(a, "color") == "black" for a in others)


def test_dot_lays_out_every_vertex_subtasks_top_to_bottom_in_index_order(dot_program):
    from flipcheck.generators.choices import SeededChooser
    from flipcheck.generators.job_graphs import generate_job_graph
    for case in range(25):
        graph = generate_job_graph(SeededChooser.for_case("render-order", case), max_vertices=6, max_parallelism=12)
        source = plan_dot_source(graph, "flink")
        heights = {}
        layout = subprocess.run([dot_program, "-Tplain"], input=source.encode(), capture_output=True, check=True)
        for line in layout.stdout.decode().splitlines():
            parts = line.split()
            if parts[0] == "node" and _NODE.match(f"{parts[1]} []"):
                heights[parts[1]] = float(parts[3])
        nodes = _nodes(graph, source)
        for vertex_id, first, _, _, node_id in nodes:
            below = [n for v, f, *_, n in nodes if v == vertex_id and f > first]
            assert all(heights[node_id] > heights[n] for n in below), (case, vertex_id, first)

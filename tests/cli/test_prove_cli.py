"""`flipcheck prove` from the outside: exit codes, the counterexample on stdout is a graph that
`flipcheck plan` accepts, one-line summaries and errors."""

import json
import subprocess
import sys

import pytest

from flipcheck.cli import main
from flipcheck.model.graph_json import loads_graph
from flipcheck.model.jobgraph import RUNNING

PIPELINE = "examples/graphs/pipeline-80.json"
FIGURE1 = {
    "vertices": [{"id": "C", "parallelism": 1}, {"id": "A", "parallelism": 1}, {"id": "B", "parallelism": 1}],
    "edges": [{"source": "A", "target": "C", "pattern": "ALL_TO_ALL"}, {"source": "B", "target": "C", "pattern": "ALL_TO_ALL"}],
}


def test_proved_exits_0_with_one_summary_line(capsys):
    assert main(["prove", PIPELINE]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.count("\n") == 1
    assert out.startswith("proved: flink == spec on examples/graphs/pipeline-80.json: 80 tasks, all 2^80 ")


def test_all_states_domain_counts_ten_values_per_task(graph_file, capsys):
    assert main(["prove", "--states", "all", "--algorithm", "naive", graph_file(FIGURE1)]) == 0
    assert "all 10^3 ExecutionState assignments" in capsys.readouterr().out


@pytest.mark.parametrize("algorithm,states", [("wiki-b", "binary"), ("flink-before-40482", "all")])
def test_counterexample_exits_1_and_stdout_is_a_graph_plan_accepts(algorithm, states, capsys, tmp_path):
    assert main(["prove", "--algorithm", algorithm, "--states", states, PIPELINE]) == 1
    out, err = capsys.readouterr()
    graph = loads_graph(out)  # the graph format, states included
    assert [v.id for v in graph.vertices] == [v.id for v in loads_graph(open(PIPELINE).read()).vertices]
    assert any(s != RUNNING for states_ in graph.states.values() for s in states_)
    assert err.count("\n") == 1 and err.startswith(f"flipcheck prove: {algorithm} != spec on {PIPELINE}")
    assert json.loads(out)["comment"].startswith(f"flipcheck prove --algorithm {algorithm}")

    path = tmp_path / "cex.json"
    path.write_text(out)
    plans = {}
    for name in (algorithm, "spec"):
        assert main(["plan", "--json", "--algorithm", name, str(path)]) == 0
        plans[name] = json.loads(capsys.readouterr().out)
    assert plans[algorithm] != plans["spec"]


def test_binary_domain_summary_names_the_field_and_task(graph_file, capsys):
    assert main(["prove", "--algorithm", "wiki-b", graph_file(FIGURE1)]) == 1
    err = capsys.readouterr().err
    # A or B finished, the other running: wiki-b triggers C, which reads a running task.
    assert "tasks_to_trigger: extra ('C', 0)" in err


@pytest.mark.parametrize(
    "document,where",
    [
        ("{not json", "invalid JSON"),
        ({"vertices": [{"id": "a", "parallelism": 0}]}, "vertices[0].parallelism"),
        ({"vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}],
          "edges": [{"source": "a", "target": "b", "pattern": "ALL_TO_ALL"},
                    {"source": "b", "target": "a", "pattern": "ALL_TO_ALL"}]}, "cycle"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_nothing_on_stdout(document, where, graph_file, capsys):
    path = graph_file(document)
    assert main(["prove", path]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"flipcheck: {path}: ") and where in err


@pytest.mark.parametrize(
    "options",
    [["--algorithm", "nope"], ["--states", "some"], ["--render", "picture.pdf"]],
)
def test_bad_options_exit_2_with_nothing_on_stdout(options, capsys):
    try:
        code = main(["prove", *options, PIPELINE])
    except SystemExit as exit_:  # argparse rejects unknown choices itself
        code = exit_.code
    assert code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1


def test_missing_file_exits_2(capsys, tmp_path):
    assert main(["prove", str(tmp_path / "absent.json")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "cannot read file" in err


def test_render_draws_the_counterexample(graph_file, capsys, tmp_path, dot_program):
    picture = tmp_path / "cex.svg"
    code = main(["prove", "--algorithm", "wiki-b", "--render", str(picture), graph_file(FIGURE1)])
    _, err = capsys.readouterr()
    assert code == 1 and picture.read_text().lstrip().startswith(("<?xml", "<svg"))
    assert f"drawn to {picture}" in err


def test_render_without_dot_is_one_line_naming_the_fix(graph_file, capsys, tmp_path, monkeypatch):
    from flipcheck.render import core as render

    monkeypatch.setattr(render, "find_program", lambda name: None)
    picture = tmp_path / "cex.svg"
    code = main(["prove", "--algorithm", "wiki-b", "--render", str(picture), graph_file(FIGURE1)])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.splitlines()) == 1 and "apt-get install graphviz" in err
    assert not picture.exists()


def test_render_is_not_written_when_proved(capsys, tmp_path):
    picture = tmp_path / "none.svg"
    assert main(["prove", "--render", str(picture), PIPELINE]) in (0, 2)
    assert not picture.exists()


def test_end_to_end_in_subprocesses(tmp_path):
    """prove | plan, as a user runs it."""
    proved = subprocess.run([sys.executable, "-m", "flipcheck.cli", "prove", "--algorithm", "wiki-b", PIPELINE],
                            capture_output=True, text=True)
    assert proved.returncode == 1, proved.stderr
    path = tmp_path / "cex.json"
    path.write_text(proved.stdout)
    planned = subprocess.run([sys.executable, "-m", "flipcheck.cli", "plan", "--json", str(path)],
                             capture_output=True, text=True)
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["status"] == "ok"

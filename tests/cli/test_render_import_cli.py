"""`flipcheck render` and `flipcheck import-plan` from the outside: exit codes, outputs, one-line errors."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from flipcheck.render import core as render
from flipcheck.cli import main
from flipcheck.model.graph_json import loads_graph

FIXTURES = Path(__file__).parent.parent / "fixtures" / "flink_plans"
FIGURE1 = {
    "vertices": [{"id": "C", "parallelism": 1}, {"id": "A", "parallelism": 1}, {"id": "B", "parallelism": 1}],
    "edges": [{"source": "A", "target": "C", "pattern": "ALL_TO_ALL"}, {"source": "B", "target": "C", "pattern": "ALL_TO_ALL"}],
    "states": {"A": ["FINISHED"]},
}
needs_dot = pytest.mark.usefixtures("dot_program")


@pytest.fixture
def figure1(tmp_path):
    path = tmp_path / "figure1.json"
    path.write_text(json.dumps(FIGURE1))
    return str(path)


def _one_line_error(capsys, *needles):
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flipcheck"), captured.err
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


@needs_dot
@pytest.mark.parametrize("extension", ["svg", "png"])
def test_render_writes_the_picture_and_says_so(figure1, tmp_path, capsys, extension):
    out = tmp_path / f"plan.{extension}"
    assert main(["render", figure1, "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}: flink plan: 1 to trigger, 2 to wait for\n"
    if extension == "svg":
        assert ET.parse(out).getroot().tag.endswith("svg")
    else:
        assert out.read_bytes().startswith(b"\x89PNG")


@needs_dot
def test_render_compare_and_algorithm_options(figure1, tmp_path, capsys):
    out = tmp_path / "cex.svg"
    assert main(["render", figure1, "--out", str(out), "--algorithm", "wiki-b", "--compare", "--title", "Figure 1"]) == 0
    assert "wiki-b plan: 2 to trigger" in capsys.readouterr().out
    assert "Figure 1" in out.read_text()


@pytest.mark.parametrize("out", ["plan.jpg", "plan", "plan.svg.txt"])
def test_render_bad_extension_is_a_usage_error(figure1, tmp_path, capsys, out):
    assert main(["render", figure1, "--out", str(tmp_path / out)]) == 2
    _one_line_error(capsys, ".svg or .png")
    assert not (tmp_path / out).exists()


def test_render_malformed_graph(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"vertices": [{"id": "a", "parallelism": 0}]}')
    assert main(["render", str(bad), "--out", str(tmp_path / "x.svg")]) == 2
    _one_line_error(capsys, str(bad), "vertices[0].parallelism")


def test_render_without_dot_names_the_fix(figure1, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(render, "find_program", lambda name: None)
    assert main(["render", figure1, "--out", str(tmp_path / "x.svg")]) == 2
    _one_line_error(capsys, "apt-get install graphviz")


def test_render_unknown_algorithm(figure1, tmp_path, capsys):
    assert _exit_code(["render", figure1, "--out", str(tmp_path / "x.svg"), "--algorithm", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def _exit_code(argv):
    try:
        return main(argv)
    except SystemExit as exit:  # argparse
        return exit.code


@pytest.mark.parametrize("fixture, chain", [
    ("rest_socket_window_wordcount.json", False), ("rest_job_details.json", False),
    ("exec_plan_wordcount.json", False), ("exec_plan_wordcount.json", True),
    ("exec_plan_sql_join.json", False), ("exec_plan_sql_join.json", True),
])
def test_imported_graph_is_accepted_by_plan(fixture, chain, tmp_path, capsys):
    assert main(["import-plan", str(FIXTURES / fixture), *(["--chain"] if chain else [])]) == 0
    text = capsys.readouterr().out
    graph = loads_graph(text)
    assert "imported from Flink" in json.loads(text)["comment"]
    job = tmp_path / "job.json"
    job.write_text(text)
    assert main(["plan", "--json", str(job)]) == 0
    plan = json.loads(capsys.readouterr().out)
    # Every task runs, so the trigger roots are exactly the source vertices' tasks.
    sources = [v.id for v in graph.vertices if not graph.inputs(v.id)]
    assert plan["status"] == "ok"
    assert sorted(map(tuple, plan["tasks_to_trigger"])) == sorted((v, i) for v in sources for i in range(graph.parallelism(v)))


@pytest.mark.parametrize("content, needle", [
    ("{", "invalid JSON"),
    ('{"nodes": [{"id": 1, "parallelism": 1}]}', "unknown plan format"),
    ('{"nodes": [{"id": 1, "type": "a", "parallelism": 1, "predecessors": [{"id": 2, "ship_strategy": "HASH"}]}]}',
     "nodes[0].predecessors[0].id: unknown node 2"),
    (json.dumps(FIGURE1), "already a flipcheck job graph"),
])
def test_import_plan_bad_input(tmp_path, capsys, content, needle):
    path = tmp_path / "plan.json"
    path.write_text(content)
    assert main(["import-plan", str(path)]) == 2
    _one_line_error(capsys, str(path), needle)


def test_import_plan_refuses_to_chain_a_rest_plan(capsys):
    assert main(["import-plan", "--chain", str(FIXTURES / "rest_job_details.json")]) == 2
    _one_line_error(capsys, "--chain")


def test_real_processes_exit_codes(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "flipcheck.cli", "import-plan", "--chain",
                         str(FIXTURES / "exec_plan_wordcount.json")], capture_output=True, text=True)
    assert ok.returncode == 0 and loads_graph(ok.stdout).num_tasks == 5
    missing = subprocess.run([sys.executable, "-m", "flipcheck.cli", "import-plan", str(tmp_path / "none.json")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stdout == "" and "Traceback" not in missing.stderr
    assert missing.stderr.count("\n") == 1

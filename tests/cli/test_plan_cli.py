"""`flipcheck plan` from the outside: output contract, exit codes, one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flipcheck.cli import main

FIGURE1 = {
    "vertices": [{"id": "C", "parallelism": 1}, {"id": "A", "parallelism": 1}, {"id": "B", "parallelism": 1}],
    "edges": [{"source": "A", "target": "C", "pattern": "ALL_TO_ALL"}, {"source": "B", "target": "C", "pattern": "ALL_TO_ALL"}],
    "states": {"A": ["FINISHED"]},
}


def test_json_output_has_the_contract_fields_in_order(graph_file, capsys):
    assert main(["plan", "--json", graph_file(FIGURE1)]) == 0
    line = capsys.readouterr().out.strip()
    plan = json.loads(line)
    assert list(plan) == ["status", "tasks_to_trigger", "tasks_to_wait_for", "tasks_to_commit_to", "finished_tasks",
                          "fully_finished_vertices"]
    assert plan["status"] == "ok"
    assert plan["tasks_to_trigger"] == [["B", 0]]
    assert plan["tasks_to_wait_for"] == plan["tasks_to_commit_to"] == [["B", 0], ["C", 0]]
    assert plan["finished_tasks"] == [["A", 0]]
    assert plan["fully_finished_vertices"] == ["A"]


def test_one_line_per_file_in_order_and_declined_shape(graph_file, capsys):
    all_finished = dict(FIGURE1, states={v: ["FINISHED"] for v in "ABC"})
    files = [graph_file(FIGURE1, "a.json"), graph_file(all_finished, "b.json"), graph_file(FIGURE1, "c.json")]
    assert main(["plan", "--json", *files]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["status"] for x in lines] == ["ok", "declined", "ok"]
    assert lines[1] == {"status": "declined", "reason": "NO_TASKS_TO_WAIT_FOR"}


def test_algorithm_option_selects_the_algorithm(graph_file, capsys):
    assert main(["plan", "--json", "--algorithm", "wiki-b", graph_file(FIGURE1)]) == 0
    assert json.loads(capsys.readouterr().out)["tasks_to_trigger"] == [["B", 0], ["C", 0]]


def test_table_output_is_readable(graph_file, capsys):
    assert main(["plan", graph_file(FIGURE1)]) == 0
    out = capsys.readouterr().out
    assert "A (fully finished)" in out and "1 to trigger, 2 to wait for, 1 finished" in out


@pytest.mark.parametrize("content,fragment", [
    ("{not json", "invalid JSON"),
    ({"vertices": [{"id": "a", "parallelism": 40000}]}, "vertices[0].parallelism: 40000 is outside 1..32768"),
    ({"vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1}],
      "edges": [{"source": "a", "target": "b", "pattern": "POINTWISE"}, {"source": "b", "target": "a", "pattern": "POINTWISE"}]},
     "edges: cycle"),
])
def test_bad_graph_exit_2_one_line_nothing_on_stdout(graph_file, capsys, content, fragment):
    good = graph_file(FIGURE1, "good.json")
    bad = graph_file(content, "bad.json")
    assert main(["plan", "--json", good, bad]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"flipcheck: {bad}: ") and fragment in captured.err


def test_unreadable_file(tmp_path, capsys):
    missing = str(tmp_path / "missing.json")
    assert main(["plan", missing]) == 2
    assert capsys.readouterr().err == f"flipcheck: {missing}: cannot read file (No such file or directory)\n"


def test_bad_option_is_one_line_exit_2():
    result = subprocess.run([sys.executable, "-m", "flipcheck.cli", "plan", "--algorithm", "nope", "x.json"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "--algorithm" in result.stderr


def test_help_teaches_the_format_and_exit_codes():
    result = subprocess.run([sys.executable, "-m", "flipcheck.cli", "plan", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for fragment in ("ALL_TO_ALL", "checkpoints_after_tasks_finished", "wiki-b", "exit codes"):
        assert fragment in result.stdout


def test_example_graphs_all_plan(capsys):
    examples = sorted(Path(__file__).resolve().parents[2].joinpath("examples", "graphs").glob("*.json"))
    assert examples
    assert main(["plan", "--json", *map(str, examples)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(examples)

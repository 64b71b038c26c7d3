"""Issue 12's hostile inputs: each one exits 2 with exactly one line on stderr naming the field
or option at fault, before any work (a crash, a runaway or a silent success was the old answer).

The generated counterpart, which feeds every command mutated inputs, is tests/hostile/.
"""

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from flipcheck.cli import main
from flipcheck.model.protocol import MAX_CHANNELS, MAX_RECORDS, MAX_TASKS

ROOT = Path(__file__).resolve().parents[2]
PAIR = str(ROOT / "examples" / "graphs" / "protocol-pair.json")
FIGURE1 = str(ROOT / "examples" / "graphs" / "figure1.json")


def assert_one_line_exit_2(argv, capsys, *fragments):
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and captured.err.endswith("\n"), captured.err
    assert captured.out == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def one_vertex(vertex_id="a", **extra):
    return {"vertices": [{"id": vertex_id, "parallelism": 1, **extra}]}


BAD_IDS = {
    "lone surrogate": "\ud800",
    "NUL": "a\x00b",
    "ESC": "a\x1b[31mred",
    "CR": "a\rb",
    "newline": "a\nb",
    "right-to-left override": "a\u202eb",
    "line separator": "a\u2028b",
    "20,000 characters": "x" * 20_000,
}


@pytest.mark.parametrize("command", [["plan"], ["plan", "--json"], ["prove"], ["explore"], ["render", "--out", "x.svg"]])
@pytest.mark.parametrize("name", list(BAD_IDS))
def test_ids_that_are_not_printable_text_are_refused_at_load(command, name, capsys, graph_file):
    path = graph_file(one_vertex(BAD_IDS[name]))
    line = assert_one_line_exit_2([*command, path], capsys, "vertices[0].id")
    expected = {"lone surrogate": "surrogate", "20,000 characters": "longer than 1,000"}.get(name, "control character")
    assert expected in line


@pytest.mark.parametrize("document,field", [
    ({"vertices": [{"id": "a", "parallelism": 1}], "edges": [{"source": "a\x1b", "target": "a", "pattern": "POINTWISE"}]},
     "edges[0].source"),
    ({"vertices": [{"id": "a", "parallelism": 1}], "states": {"a\x00": ["RUNNING"]}}, "states key"),
    ({"vertices": [{"id": "a", "parallelism": 1, "name": "x\udc80"}]}, "vertices[0].name"),
    (one_vertex(records=-5), "vertices[0].records"),
    (one_vertex(records="x"), "vertices[0].records"),
    (one_vertex(records=True), "vertices[0].records"),
    (one_vertex(sink_v2="yes"), "vertices[0].sink_v2"),
])
def test_malformed_fields_are_refused_by_plan(document, field, capsys, graph_file):
    assert_one_line_exit_2(["plan", graph_file(document)], capsys, field)


@pytest.mark.parametrize("text,fragment", [
    ('{"vertices": [{"id": "a", "parallelism": 1, "records": NaN}]}', "NaN"),
    ('{"vertices": [{"id": "a", "parallelism": ' + "9" * 5000 + "}]}", "digits"),
])
def test_json_beyond_the_standard_is_refused(text, fragment, capsys, graph_file):
    assert_one_line_exit_2(["plan", graph_file(text)], capsys, fragment)


def test_import_plan_chains_a_chain_longer_than_the_recursion_limit(capsys, graph_file):
    # found by probing import-plan: _chain_name recursed once per chained operator
    nodes = [{"id": n, "type": f"op{n}", "pact": "Operator", "contents": "op", "parallelism": 1,
              "predecessors": [{"id": n - 1, "ship_strategy": "FORWARD"}] if n > 1 else []} for n in range(1, 5001)]
    assert main(["import-plan", "--chain", graph_file({"nodes": nodes})]) == 0
    (vertex,) = json.loads(capsys.readouterr().out)["vertices"]
    assert vertex["name"].count(" -> ") == 4999


def test_import_plan_refuses_a_lone_surrogate(capsys, graph_file):
    path = graph_file('{"nodes": [{"id": 1, "type": "\\ud800", "pact": "Data Source", "contents": "x", "parallelism": 1}]}')
    assert_one_line_exit_2(["import-plan", path], capsys, "nodes[0].type", "surrogate")


@pytest.mark.parametrize("args,fragment", [
    (["--channels", "99999999999999999999"], "--channels"),
    (["--channels", "9223372036854775807"], "--channels"),
    (["--channels", "1000000000"], "32,768"),
    (["--channels", "0"], "--channels"),
    (["--channels", "\u0661"], "--channels"),
    (["--channels", "2", "--alignment-timeout", "99999999999999999999"], "--alignment-timeout"),
])
def test_barriers_channel_count_is_bounded(args, fragment, capsys):
    assert_one_line_exit_2(["barriers", "--mode", "aligned", *args, "B1@0"], capsys, fragment)


@pytest.mark.parametrize("event", ["B999999999999999999999999999@0", "B9223372036854775808@0", "T1000001",
                                   "C4294967296@1", "B1@99999999999999999999999", "B\u0661@0"])
def test_barriers_event_numbers_are_bounded(event, capsys):
    assert_one_line_exit_2(["barriers", "--channels", "2", "--mode", "aligned", event], capsys, "event 1")


def test_barriers_chart_is_bounded(capsys):
    assert_one_line_exit_2(["barriers", "--channels", "32768", "--mode", "aligned", "--render", "x.svg", "B1@0"], capsys,
                           "--render", "256 channels")


def test_barriers_largest_channel_count_and_id_still_replay(capsys):
    assert main(["barriers", "--channels", "32768", "--mode", "aligned", "--json", "B1000000@0", "E@32767"]) == 0
    assert json.loads(capsys.readouterr().out)["pending"] == 1_000_000


@pytest.mark.parametrize("args,fragment", [
    (["--records", "99999999999999999999"], "--records"),
    (["--records", str(MAX_RECORDS + 1)], "--records"),
    (["--max-states", "0"], "--max-states"),
    (["--checkpoints", "1e3"], "--checkpoints"),
    (["--failures", "-1"], "--failures"),
])
def test_explore_counts_are_bounded(args, fragment, capsys):
    assert_one_line_exit_2(["explore", PAIR, *args], capsys, fragment)


def pair_graph(upstream, downstream, records=None):
    source = {"id": "a", "parallelism": upstream, **({} if records is None else {"records": records})}
    return {"vertices": [source, {"id": "b", "parallelism": downstream}],
            "edges": [{"source": "a", "target": "b", "pattern": "ALL_TO_ALL"}]}


def run_limited(argv, memory_bytes=1 << 30, timeout=60):
    """The CLI in a child process that may use at most ``memory_bytes`` of address space."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return subprocess.run([sys.executable, "-m", "flipcheck.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit)


@pytest.mark.parametrize("document,fragment", [
    (pair_graph(32768, 32768), f"65,536 tasks (limit {MAX_TASKS:,})"),
    (pair_graph(2000, 2000), f"4,000 tasks (limit {MAX_TASKS:,})"),
    (pair_graph(200, 200), f"40,000 channels (limit {MAX_CHANNELS:,})"),
    (pair_graph(1, 1, records=1_000_000_000), f"1,000,000,000 records from the sources (limit {MAX_RECORDS:,})"),
])
def test_explore_refuses_a_job_too_large_to_expand_up_front(document, fragment, graph_file):
    result = run_limited(["explore", graph_file(document), "--max-states", "100"])
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and fragment in result.stderr, result.stderr


@pytest.mark.parametrize("document,fragment", [
    (pair_graph(32768, 32768), "65,536 tasks (limit 10,000)"),
    (pair_graph(1024, 1024), "1,048,576 task-level connections (limit 1,000,000)"),
    ({"vertices": [{"id": f"v{n}", "parallelism": 1} for n in range(2001)]}, "2,001 vertices (limit 2,000)"),
])
def test_prove_refuses_a_graph_too_large_to_prove_up_front(document, fragment, graph_file):
    result = run_limited(["prove", graph_file(document)])
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and fragment in result.stderr, result.stderr


def test_render_refuses_a_graph_too_large_to_draw(capsys, graph_file):
    chain = {"vertices": [{"id": f"v{n}", "parallelism": 1} for n in range(1001)],
             "edges": [{"source": f"v{n}", "target": f"v{n + 1}", "pattern": "POINTWISE"} for n in range(1000)]}
    assert_one_line_exit_2(["render", graph_file(chain), "--out", "x.svg"], capsys, "1,001 vertices (limit 1,000)")


def test_explore_help_states_the_limits(capsys):
    main(["explore", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for limit in (f"{MAX_TASKS:,} tasks", f"{MAX_CHANNELS:,} channels", f"{MAX_RECORDS:,} records"):
        assert limit in out


def test_mutants_gallery_that_is_a_file_fails_before_hunting(capsys, tmp_path):
    existing = tmp_path / "gallery.md"
    existing.write_text("keep me")
    assert_one_line_exit_2(["mutants", "--gallery", str(existing)], capsys, "--gallery", "not a directory")
    assert existing.read_text() == "keep me"


@pytest.mark.parametrize("where", ["file/below", "/proc/flipcheck-gallery"])
def test_mutants_gallery_that_cannot_be_created_fails_before_hunting(where, capsys, tmp_path):
    (tmp_path / "file").write_text("")
    path = where if where.startswith("/") else str(tmp_path / where)
    assert_one_line_exit_2(["mutants", "--gallery", path], capsys, "--gallery", "cannot write")


def test_demo_out_that_is_a_file_fails_before_any_sweep(capsys, tmp_path):
    (tmp_path / "out").write_text("")
    assert_one_line_exit_2(["demo", "--out", str(tmp_path / "out")], capsys, "--out", "not a directory")


def test_mutants_contradictory_selection_is_a_usage_error(capsys):
    assert_one_line_exit_2(["mutants", "--only", "wiki-b", "--suite", "barriers"], capsys, "--only", "--suite")


@pytest.mark.parametrize("argv,option", [
    (["bench", "plan", "--budget", "nan"], "--budget"),
    (["bench", "plan", "--budget", "inf"], "--budget"),
    (["bench", "sweep", "--budget", "-inf"], "--budget"),
    (["verify", "--suite", "plan", "--budget", "inf"], "--budget"),
    (["verify", "--suite", "plan", "--budget", "1e308"], "--budget"),
    (["verify", "--suite", "plan", "--budget", "86401"], "--budget"),
    (["mutants", "--budget", "nan"], "--budget"),
    (["mutants", "--budget", "0"], "--budget"),
    (["demo", "--cases", "99999999999999999999"], "--cases"),
    (["demo", "--max-vertices", "\u0664"], "--max-vertices"),
    (["sweep", "--suite", "plan", "--cases", "1_000", "--out", "x"], "--cases"),
    (["sweep", "--suite", "plan", "--exhaustive", "--batch-size", "0", "--out", "x"], "--batch-size"),
    (["bench", "sweep", "--repeat", "0"], "--repeat"),
])
def test_numbers_are_finite_ascii_and_bounded_everywhere(argv, option, capsys):
    assert_one_line_exit_2(argv, capsys, option)


@pytest.mark.parametrize("argv,option", [
    (["bench", "plan", "--suites", "x"], "--suites"),
    (["bench", "plan", "--repeat", "5"], "--repeat"),
    (["bench", "barriers", "--budget", "5"], "--budget"),
    (["bench", "sweep", "--algorithms", "flink"], "--algorithms"),
    (["bench", "plan", "--flink", "1.14.6"], "--flink"),
    (["bench", "conform", "--flink-home", "/nonexistent"], "--flink-home"),
    (["bench", "plan", "--builds"], "--builds"),
])
def test_bench_options_that_do_not_apply_are_usage_errors(argv, option, capsys):
    assert_one_line_exit_2(argv, capsys, option, "does not apply")


@pytest.mark.parametrize("argv,fragment", [
    (["barriers", "--channels", "2", "--mode", "aligned", "B1\n@0"], "B1\\n@0"),
    (["plan", "no\nsuch\x1b.json"], "no\\nsuch\\x1b.json"),
    (["explore", PAIR, "--variant", "x\ny"], "x\\ny"),
    (["barriers", "--channels", "2", "--mode", "x\ny", "B1@0"], "x\\ny"),
    (["replay", "plan\r:1:1"], "plan\\r:1:1"),
])
def test_echoed_user_text_is_escaped_onto_one_line(argv, fragment, capsys):
    assert_one_line_exit_2(argv, capsys, fragment)


@pytest.mark.parametrize("option, fragment", [
    (["--flink-home", "no\nsuch\x1b"], "no\\nsuch\\x1b"), (["--flink", "1.\n2"], "1.\\n2"),
])
def test_echoed_release_options_are_escaped_onto_one_line(option, fragment, capsys, tmp_path):
    assert_one_line_exit_2(["flink", "run", PAIR, "--out", str(tmp_path / "o"), *option],
                           capsys, fragment)


@pytest.mark.parametrize("argv,option", [
    (["verify", "--suite", "plan", "--variant", ""], "--variant"),
    (["explore", PAIR, "--variant", " "], "--variant"),
    (["replay", "plan:1:1", "--algorithm", ""], "--algorithm"),
    (["sweep", "--suite", "plan", "--cases", "5", "--variant", "", "--out", "x"], "--variant"),
    (["mutants", "--only", ""], "--only"),
    (["bench", "plan", "--algorithms", ""], "--algorithms"),
])
def test_an_empty_name_is_not_read_as_no_name(argv, option, capsys):
    assert_one_line_exit_2(argv, capsys, option, "not a name")


def test_render_title_must_be_printable_text(capsys):
    # found by tests/hostile: an undecodable byte in --title crashed graphviz's input encoding
    assert_one_line_exit_2(["render", FIGURE1, "--out", "x.svg", "--title", "a\udc80b"], capsys, "--title")


@pytest.mark.parametrize("case_id", ["plan::5", "plan:\u0661:\u0661", "plan:1:\u0661", ":1:1", "plan:1:", "plan:1:1:1",
                                     "plan:1:-1", "plan:1: 1"])
def test_replay_case_ids_are_strict(case_id, capsys):
    assert_one_line_exit_2(["replay", "--no-render", case_id], capsys, "case id")


@pytest.mark.parametrize("case_id, fragment", [
    ("plan:choices-999999:0", "outside 1..6"),              # an answer the generator never gives
    ("protocol:choices-1:0", "end after 1 answers"),          # too few answers
    ("plan:choices-1:5", "one case, index 0"),
    ("plan:choices-1.x:0", "not choices-N.N"),
])
def test_replay_recorded_choices_that_do_not_fit_are_one_line(case_id, fragment, capsys):
    assert_one_line_exit_2(["replay", "--no-render", case_id], capsys, case_id.split(":")[1][:8], fragment)


def test_replay_render_and_no_render_contradict(capsys):
    assert_one_line_exit_2(["replay", "plan:1:1", "--render", "x.svg", "--no-render"], capsys, "--render", "--no-render")


def test_reproduce_command_is_shell_quoted(tmp_path):
    import shlex

    from flipcheck.designs.suite import get_suite
    from flipcheck.sweep.runner import plan_sweep
    from flipcheck.sweep.summary import regenerate_counterexample

    suite = get_suite("plan")
    target = plan_sweep(["plan"], "wiki-b", cases=1, seed="it's$HOME").targets[0]
    space = suite.space(target.token)
    index, outcome = next((i, o) for i in range(2000) if (o := space.check(space.case(i), "wiki-b")).violations)
    entry = regenerate_counterexample(tmp_path, target, suite, outcome.properties[0], index)
    assert shlex.split(entry["replay"]) == ["flipcheck", "replay", "plan:it's$HOME:" + str(index), "--algorithm", "wiki-b"]

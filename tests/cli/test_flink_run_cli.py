"""`flipcheck flink run` refusals that need no JVM: bad graphs and options, and a machine without
a JDK or without the Flink jars. Each is exit code 2 and one line naming what is wrong."""

import json
from importlib import metadata

import pytest

from flipcheck.cli import main
from flipcheck.flink import engine, releases

PAIR = {"vertices": [{"id": "src", "parallelism": 2, "records": 5},
                     {"id": "sink", "parallelism": 2, "two_phase_commit_sink": True}],
        "edges": [{"source": "src", "target": "sink", "pattern": "ALL_TO_ALL"}]}


def _refused(capsys, argv, *needles):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith("flipcheck"), captured.err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def no_jvm(monkeypatch):
    """Fails the test if the command got as far as compiling or starting Java."""
    def started(*_, **__):
        raise AssertionError("a refused run must not start javac or java")
    monkeypatch.setattr(engine, "compile_job", started)
    monkeypatch.setattr(engine.subprocess, "Popen", started)


@pytest.mark.parametrize("fail, needles", [
    ("sink0@3", ("--fail", "VERTEX:SUBTASK@RECORD")),
    ("sink:0@0", ("--fail", "VERTEX:SUBTASK@RECORD")),
    ("sink:x@1", ("--fail",)),
    ("nope:0@1", ("--fail", "unknown vertex 'nope'")),
    ("sink:2@1", ("--fail", "subtask 2 is outside 0..1")),
    ("src:0@6", ("--fail", "record 6 is never reached", "emits 5 records")),
])
def test_a_bad_fail_option_is_refused(fail, needles, graph_file, tmp_path, capsys, no_jvm):
    line = _refused(capsys, ["flink", "run", graph_file(PAIR), "--out", str(tmp_path / "out"), "--fail", fail], *needles)
    assert line.startswith("flipcheck flink") and "--fail" in line


def test_a_vertex_id_may_hold_colons_and_at_signs(graph_file, tmp_path, capsys, no_jvm):
    graph = {"vertices": [{"id": "s:1@2", "parallelism": 1, "records": 3}, {"id": "k", "parallelism": 1}],
             "edges": [{"source": "s:1@2", "target": "k", "pattern": "POINTWISE"}]}
    # Parsed as vertex "s:1@2", subtask 0, record 4: refused for the record, not the syntax.
    line = _refused(capsys, ["flink", "run", graph_file(graph), "--out", str(tmp_path / "o"), "--fail", "s:1@2:0@4"],
                    "record 4 is never reached", "'s:1@2'")
    assert "VERTEX:SUBTASK@RECORD" not in line   # the syntax was accepted


@pytest.mark.parametrize("option", [["--mode", "exactly"], ["--records", "-1"], ["--interval-ms", "5"],
                                    ["--seed", "x"]])
def test_bad_options_are_refused(option, graph_file, tmp_path, capsys, no_jvm):
    line = _refused(capsys, ["flink", "run", graph_file(PAIR), "--out", str(tmp_path / "o"), *option], option[0])
    assert "Traceback" not in line


@pytest.mark.parametrize("graph, needles", [
    ("{", ("g.json", "invalid JSON")),
    ({"vertices": [{"id": "a", "parallelism": 0}]}, ("g.json", "parallelism")),
    ({"vertices": [{"id": "a", "parallelism": 1}, {"id": "b", "parallelism": 1, "sink_v2": True, "union_list_state": True}],
      "edges": [{"source": "a", "target": "b", "pattern": "POINTWISE"}]}, ("union_list_state", "'b'")),
    ({"vertices": [{"id": "a", "parallelism": 1, "two_phase_commit_sink": True}, {"id": "b", "parallelism": 1}],
      "edges": [{"source": "a", "target": "b", "pattern": "POINTWISE"}]}, ("two_phase_commit_sink on a vertex with outputs",)),
])
def test_a_graph_flink_run_cannot_build_is_refused(graph, needles, graph_file, tmp_path, capsys, no_jvm):
    line = _refused(capsys, ["flink", "run", graph_file(graph), "--out", str(tmp_path / "o")], *needles)
    assert not (tmp_path / "o" / "run.json").exists(), line


def test_without_java_the_line_says_to_install_a_jdk(graph_file, tmp_path, capsys, monkeypatch, no_jvm):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no java, no javac
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(engine, "find_program", lambda name: None)  # not beside the venv's Python either
    line = _refused(capsys, ["flink", "run", graph_file(PAIR), "--out", str(tmp_path / "o")],
                    "java is not installed", "default-jdk-headless")
    assert "install" in line


def test_without_the_flink_extra_the_line_says_to_install_it(graph_file, tmp_path, capsys, monkeypatch, no_jvm):
    def missing(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(engine, "java_tools", lambda: ("java", "javac"))
    monkeypatch.setattr(releases.metadata, "distribution", missing)
    line = _refused(capsys, ["flink", "run", graph_file(PAIR), "--out", str(tmp_path / "o")],
                    "flipcheck[flink]", "apache-flink-libraries")
    assert "install" in line


def test_the_job_spec_maps_edges_to_partitionings_and_numbers_records_like_the_model(tmp_path):
    from flipcheck.model.graph_json import loads_graph

    graph = loads_graph(json.dumps({
        "vertices": [{"id": "a", "parallelism": 2, "records": 3}, {"id": "b", "parallelism": 1},
                     {"id": "j", "parallelism": 2}, {"id": "u", "parallelism": 3}, {"id": "out", "parallelism": 3, "sink_v2": True}],
        "edges": [{"source": "a", "target": "j", "pattern": "ALL_TO_ALL"}, {"source": "b", "target": "j", "pattern": "ALL_TO_ALL"},
                  {"source": "j", "target": "u", "pattern": "POINTWISE"}, {"source": "a", "target": "u", "pattern": "ALL_TO_ALL"},
                  {"source": "u", "target": "out", "pattern": "POINTWISE"}]}))
    spec = engine.job_spec(graph, out=tmp_path, records=None)
    by_id = {v["id"]: v for v in spec["vertices"]}
    assert [i["partitioning"] for i in by_id["j"]["inputs"]] == ["hash", "hash"]  # keyed co-map
    assert [i["partitioning"] for i in by_id["u"]["inputs"]] == ["rescale", "rebalance"]  # a union
    assert [i["partitioning"] for i in by_id["out"]["inputs"]] == ["forward"]
    assert {v: by_id[v]["role"] for v in by_id} == {"a": "source", "b": "source", "j": "operator", "u": "operator",
                                                     "out": "sink_v2"}
    # a: 2 subtasks x 3 records (ids 0-5), b: 50 by default (6-55); a reaches out on two paths.
    assert (by_id["a"]["first_record"], by_id["a"]["records"]) == (0, 3)
    assert (by_id["b"]["first_record"], by_id["b"]["records"]) == (6, engine.DEFAULT_RECORDS)
    assert spec["records_expected"] == 6 * 2 + engine.DEFAULT_RECORDS
    overridden = engine.job_spec(graph, out=tmp_path, records=4)
    assert [v.get("records") for v in overridden["vertices"] if v["role"] == "source"] == [4, 4]


def test_an_unwritable_class_cache_is_one_line(graph_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(engine, "java_tools", lambda: ("java", "javac"))
    monkeypatch.setattr(engine, "flink_lib", lambda: ("2.3.0", tmp_path))
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    line = _refused(capsys, ["flink", "run", graph_file(PAIR), "--out", str(tmp_path / "o")], "XDG_CACHE_HOME", str(blocker))
    assert "Traceback" not in line and blocker.read_text() == "not a directory"

"""`flipcheck flink run` on real Flink 2.3: a chain and a run with an injected failure, each a
real MiniCluster job (about 5 s), held to the contract of docs/conformance.md, "Running real jobs"."""

import json
from pathlib import Path

import pytest

from flipcheck.bench.flink import watch_jvm
from flipcheck.cli import main
from flipcheck.flink.import_plan import load_plan
from flipcheck.flink.logs import attempt_parts, read_logs
from flipcheck.model.graph_json import loads_graph

pytestmark = pytest.mark.flink

CHAIN = {
    "vertices": [{"id": "src", "parallelism": 2, "records": 30}, {"id": "map", "parallelism": 2},
                 {"id": "sink", "parallelism": 2, "two_phase_commit_sink": True}],
    "edges": [{"source": "src", "target": "map", "pattern": "POINTWISE"},
              {"source": "map", "target": "sink", "pattern": "ALL_TO_ALL"}],
}
# Two parallel sources into a sink with union list state (generators/protocol.py's "union").
UNION = {
    "vertices": [{"id": "src", "parallelism": 2, "records": 30},
                 {"id": "sink", "parallelism": 2, "union_list_state": True, "two_phase_commit_sink": True}],
    "edges": [{"source": "src", "target": "sink", "pattern": "POINTWISE"}],
}
RUN_FIELDS = {"job_id": str, "status": str, "checkpoints_completed": int, "records_committed": int, "seconds": float}


def _run(tmp_path_factory, name, graph, *options):
    folder = tmp_path_factory.mktemp(name)
    (folder / "g.json").write_text(json.dumps(graph))
    out = folder / "out"
    code, watch = watch_jvm(lambda: main(["flink", "run", str(folder / "g.json"), "--out", str(out), *options]))
    run = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else None
    return code, out, run, watch


def _committed(out: Path) -> list[int]:
    return sorted(int(line) for path in out.glob("output/*/committed/*") for line in path.read_text().split())


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return _run(tmp_path_factory, "chain", CHAIN)


@pytest.fixture(scope="module")
def failover(tmp_path_factory):
    return _run(tmp_path_factory, "failover", UNION, "--fail", "sink:1@10", "--interval-ms", "50")


def test_a_chain_finishes_and_run_json_keeps_the_contract(chain):
    code, out, run, _ = chain
    assert code == 0, (out / "jvm.out").read_text()[-2000:]
    for key, kind in RUN_FIELDS.items():
        assert isinstance(run[key], kind), (key, run)
    assert run["status"] == "FINISHED"
    assert run["failure_injected"] is False
    completed = [e for e in read_logs([str(out / "flink.log")]).events if e.kind == "completed"]
    assert run["checkpoints_completed"] == len(completed) >= 1


def test_a_chain_commits_every_source_record_exactly_once(chain):
    _, out, run, _ = chain
    # Two source subtasks of 30 records: ids 0..59, as the model numbers them (J1).
    assert _committed(out) == list(range(60))
    assert run["records_committed"] == run["records_expected"] == 60


def test_the_plan_node_ids_are_the_job_vertices_of_the_logs_attempt_ids(chain):
    _, out, run, _ = chain
    plan = json.loads((out / "plan.json").read_text())["plan"]
    nodes = {node["id"] for node in plan["nodes"]}
    events = read_logs([str(out / "flink.log")]).events
    attempts = {attempt_parts(e.task)[0] for e in events if e.task}
    assert nodes == attempts == set(run["vertices"].values())
    assert len(nodes) == len(CHAIN["vertices"])


def test_the_log_shows_triggers_acknowledgements_and_completions(chain):
    _, out, _, _ = chain
    kinds = {e.kind for e in read_logs([str(out / "flink.log")]).events}
    assert {"trigger", "trigger-task", "ack", "completed", "notify-complete", "task-state", "execution-state"} <= kinds
    header = (out / "flink.log").read_text().splitlines()[0]
    assert header[:4].isdigit() and " INFO  " in header  # Flink's default layout


def test_import_plan_gives_back_the_graph(chain):
    _, out, run, _ = chain
    imported = load_plan(str(out / "plan.json")).graph
    vertex_of = {flink_id: vertex for vertex, flink_id in run["vertices"].items()}
    back = {vertex_of[v.extra["flink_id"]]: v.parallelism for v in imported.vertices}
    graph = loads_graph(json.dumps(CHAIN))
    assert back == {v.id: v.parallelism for v in graph.vertices}
    by_id = {v.id: vertex_of[v.extra["flink_id"]] for v in imported.vertices}
    assert {(by_id[e.source], by_id[e.target], e.pattern) for e in imported.edges} == {
        (e.source, e.target, e.pattern) for e in graph.edges}


def test_the_jvm_listens_on_loopback_only(chain):
    _, _, _, watch = chain
    assert watch.listening, "no listening socket seen: the sampler missed the JVM"
    assert {address for address, _ in watch.listening} <= {"127.0.0.1", "::1"}


def test_an_injected_failure_restores_and_still_commits_each_record_once(failover):
    code, out, run, _ = failover
    assert code == 0, (out / "jvm.out").read_text()[-2000:]
    assert run["status"] == "FINISHED" and run["failure_injected"] is True
    assert _committed(out) == list(range(60))
    events = read_logs([str(out / "flink.log")]).events
    failed = [e for e in events if e.kind == "execution-state" and e.detail.endswith("to FAILED")]
    assert failed, "no task switched to FAILED"
    # The restarted tasks run as attempt 1.
    assert any(attempt_parts(e.task)[2] == 1 for e in events if e.task)


def test_two_compiles_at_once_leave_one_cache_entry(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from flipcheck.flink import engine

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _, javac = engine.java_tools()
    version, lib = engine.flink_lib()
    with ThreadPoolExecutor(2) as pool:  # two javac processes, racing to rename into place
        (first, _), (second, _) = pool.map(lambda _: engine.compile_job(javac, version, lib), range(2))
    assert first == second and (first / "FlipcheckJob.class").is_file()
    assert [p.name for p in (tmp_path / "flipcheck").iterdir()] == [first.name]  # no scratch left behind
    assert first.name.startswith(f"flink-{version}-")
    assert engine.compile_job(javac, version, lib) == (first, 0.0)  # cached


def test_a_job_that_fails_for_good_exits_1_with_one_line(tmp_path, monkeypatch, capsys):
    from flipcheck.flink import engine

    # No restarts: the injected failure ends the job.
    monkeypatch.setattr(engine, "RESTART_ATTEMPTS", 0)
    (tmp_path / "g.json").write_text(json.dumps(CHAIN))
    code = main(["flink", "run", str(tmp_path / "g.json"), "--out", str(tmp_path / "out"), "--fail", "map:0@5"])
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "FAILED" in lines[0] and "injected failure in map subtask 0 at record 5" in lines[0], captured.err
    assert json.loads((tmp_path / "out" / "run.json").read_text())["status"] == "FAILED"


def test_a_jvm_that_dies_before_the_job_ends_exits_1_with_one_line(tmp_path, monkeypatch, capsys):
    from flipcheck.flink import engine

    monkeypatch.setattr(engine, "MAIN_CLASS", "NoSuchFlipcheckJob")
    (tmp_path / "g.json").write_text(json.dumps(CHAIN))
    code = main(["flink", "run", str(tmp_path / "g.json"), "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().err.splitlines()
    assert code == 1 and len(lines) == 1, lines
    assert "the JVM exited with code 1 before the job ended" in lines[0] and "NoSuchFlipcheckJob" in lines[0]

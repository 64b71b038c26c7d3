"""The ``flink`` sweep suite without a JVM: its cases regenerate from their ids, every case is a
job the model and ``flipcheck flink run`` accept, a stored verdict is read back instead of run
again, a run that fails is an error row, and ``--suite all`` leaves the suite out."""

import json

import pytest

from flipcheck.designs import flink_jobs
from flipcheck.designs.suite import ERROR, resolve_case
from flipcheck.flink.engine import MODES, FlinkRunError, job_spec
from flipcheck.model.protocol import Job
from flipcheck.sweep.runner import COLUMNS, plan_sweep, run_batch, suite_names

SEEDS = ("1", "t5", "sweep")
INDICES = range(60)


def _cases():
    for seed in SEEDS:
        space = flink_jobs.suite.space(seed)
        for index in INDICES:
            yield space, index, space.case(index)


def test_a_case_id_regenerates_the_same_graph_and_options():
    for seed in SEEDS:
        for index in (0, 7, 41):
            suite, space, found = resolve_case(f"flink:{seed}:{index}")
            assert suite is flink_jobs.suite and found == index
            first, again = space.case(index), flink_jobs.suite.space(seed).case(index)
            assert first == again
            assert suite.describe(first) == suite.describe(again)


def test_different_ids_give_different_jobs():
    described = {json.dumps(flink_jobs.suite.describe(case), sort_keys=True) for _, _, case in _cases()}
    assert len(described) == len(SEEDS) * len(INDICES)


def test_every_case_is_a_job_the_model_and_flink_run_accept(tmp_path):
    for _, _, case in _cases():
        # Job(graph) checks the vertex flags; job_spec what flink run builds and --fail reaches.
        Job(case.graph, mode=case.mode, records=case.records)
        spec = job_spec(case.graph, out=tmp_path, **case.options())
        assert spec["checkpoints_after_tasks_finished"] is case.flip147


def test_cases_stay_small_and_flags_sit_where_the_model_allows_them():
    seen = {"fail": 0, "pre-flip-147": 0, "sink_v2": 0, "two_phase_commit_sink": 0, "union_list_state": 0}
    modes = set()
    for _, _, case in _cases():
        graph = case.graph
        assert 2 <= len(graph.vertices) <= 4 and all(1 <= v.parallelism <= 2 for v in graph.vertices)
        assert {end for e in graph.edges for end in (e.source, e.target)} == {v.id for v in graph.vertices}
        assert case.mode in MODES and 10 <= case.records <= 40
        for vertex in graph.vertices:
            flags = {k for k, on in vertex.extra.items() if on}
            if flags & {"two_phase_commit_sink", "sink_v2"}:
                assert not graph.outputs(vertex.id) and graph.inputs(vertex.id)
            if "union_list_state" in flags:
                assert graph.inputs(vertex.id) and (graph.outputs(vertex.id) or "two_phase_commit_sink" in flags)
            for flag in flags:
                seen[flag] += 1
        seen["fail"] += case.fail is not None
        seen["pre-flip-147"] += not case.flip147
        modes.add(case.mode)
    assert modes == set(MODES)
    assert all(count > 0 for count in seen.values()), seen


def test_all_leaves_the_flink_suite_out_and_exhaustive_is_refused():
    assert "flink" not in suite_names("all") and suite_names("flink") == ["flink"]
    with pytest.raises(ValueError, match="no exhaustive"):
        plan_sweep(["flink"], exhaustive=True)


def test_a_stored_verdict_is_read_back_not_run_again(tmp_path, monkeypatch):
    space = flink_jobs.suite.space("t5")
    space.workdir = str(tmp_path)
    folder = flink_jobs.case_folder(tmp_path, "t5", 1)
    folder.mkdir(parents=True)
    stored = {"violations": [["model", "line 9: unexplained"]], "error": None,
              "detail": {"id": "flink:t5:1", "status": "FINISHED", "conforms": False}}
    (folder / flink_jobs.CASE_FILE).write_text(json.dumps(stored))
    monkeypatch.setattr(flink_jobs, "run_graph", lambda *a, **k: pytest.fail("a finished case ran again"))
    outcome = space.check(space.case(1), "flink")
    assert [(v.property, v.message) for v in outcome.violations] == [("model", "line 9: unexplained")]
    assert outcome.detail == stored["detail"]


def test_a_run_that_fails_is_one_error_row_not_a_crash(tmp_path, monkeypatch):
    def jvm_dies(graph, out, **options):
        raise FlinkRunError("the JVM exited with code 1 before the job ended: Error: Could not create the Java VM")

    monkeypatch.setattr(flink_jobs, "run_graph", jvm_dies)
    rows = list(run_batch((("flink", "flink", "t5"),), 0, 0, 2, out_dir=str(tmp_path)))
    assert len(rows) == 2
    for row in rows:
        record = dict(zip([name for name, _ in COLUMNS], row))
        assert record["outcome"] == ERROR and record["properties"] == [] and record["property"] is None
        assert "\n" not in record["message"] and "Could not create the Java VM" in record["message"]
        assert json.loads(record["detail"])["status"] is None
    # Not kept as a verdict: a resumed sweep tries these cases again.
    assert list(tmp_path.glob(f"runs/*/{flink_jobs.CASE_FILE}")) == []


@pytest.mark.parametrize("stored", ['{"violations": []', '[]', '{"violations": [], "error": null, "detail": {"id": "flink:t5:2"}}'])
def test_a_damaged_or_foreign_case_file_is_run_again(tmp_path, monkeypatch, stored):
    space = flink_jobs.suite.space("t5")
    space.workdir = str(tmp_path)
    folder = flink_jobs.case_folder(tmp_path, "t5", 1)
    folder.mkdir(parents=True)
    (folder / flink_jobs.CASE_FILE).write_text(stored)
    ran = []

    def record_run(graph, out, **options):
        ran.append(out)
        raise FlinkRunError("stopped here: the test only needs to see that the job was started")

    monkeypatch.setattr(flink_jobs, "run_graph", record_run)
    outcome = space.check(space.case(1), "flink")
    assert ran == [folder] and outcome.error.startswith("flink run: stopped here")


def _one_error_line(argv, capsys) -> str:
    from flipcheck.cli import main

    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_sweep_flink_without_a_jdk_is_one_line_before_spark_starts(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    line = _one_error_line(["sweep", "--suite", "flink", "--cases", "2", "--out", str(tmp_path / "out")], capsys)
    assert "java is not installed" in line and "JDK" in line
    assert not (tmp_path / "out").exists()


def test_sweep_flink_exhaustive_is_one_line(capsys, tmp_path):
    line = _one_error_line(["sweep", "--suite", "flink", "--exhaustive", "--out", str(tmp_path / "out")], capsys)
    assert "flink" in line and "exhaustive" in line


def test_a_verdict_stored_for_another_release_is_run_again(tmp_path, monkeypatch):
    space = flink_jobs.suite.space("t5")
    space.workdir = str(tmp_path)
    folder = flink_jobs.case_folder(tmp_path, "t5", 1)
    folder.mkdir(parents=True)
    stored = {"violations": [], "error": None, "detail": {"id": "flink:t5:1", "status": "FINISHED", "flink": "1.14.6"}}
    (folder / flink_jobs.CASE_FILE).write_text(json.dumps(stored))
    given = []

    def record_run(graph, out, **options):
        given.append(options["flink"])
        raise FlinkRunError("stopped here: the test only needs to see the release the job was given")

    monkeypatch.setattr(flink_jobs, "run_graph", record_run)
    release = {"version": "1.14.6", "source": "cache", "lib": str(tmp_path / "lib")}
    # The release that judged it reads the verdict back ...
    monkeypatch.setenv(flink_jobs.RELEASE_ENV, json.dumps(release))
    assert space.check(space.case(1), "flink").detail == stored["detail"] and given == []
    # ... another runs the case, on itself.
    monkeypatch.setenv(flink_jobs.RELEASE_ENV, json.dumps(dict(release, version="1.17.2")))
    space.check(space.case(1), "flink")
    assert [(r.version, str(r.lib), r.source) for r in given] == [("1.17.2", release["lib"], "cache")]


def test_sweep_release_options_apply_to_the_flink_suite_only(capsys, tmp_path):
    line = _one_error_line(["sweep", "--suite", "plan", "--cases", "2", "--out", str(tmp_path / "o"), "--flink", "1.14.6"],
                           capsys)
    assert "--flink applies to --suite flink only" in line
    line = _one_error_line(["sweep", "--suite", "flink", "--cases", "2", "--out", str(tmp_path / "o"), "--flink", "9.9.9"],
                           capsys)
    assert "--flink 9.9.9" in line and not (tmp_path / "o").exists()

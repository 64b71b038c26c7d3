"""Sweeps on an embedded local[2] Spark: engines clean, wiki-b and barrier variants caught,
minimised and drawn, exhaustive coverage counted, task retries and lost chunks harmless."""

import json
import shutil

import pyarrow.compute as pc
import pytest

from flipcheck.cli import main
from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.designs.suite import get_suite
from flipcheck.sweep.runner import COLUMNS, TIMING_KEYS, plan_sweep, run_sweep
from flipcheck.sweep.summary import read_cases

pytestmark = pytest.mark.spark


def _deterministic(summary):
    return {k: v for k, v in summary.items() if k not in TIMING_KEYS}


def _rows(out):
    table = read_cases(str(out), [name for name, _ in COLUMNS if name != "seconds"])
    return sorted(table.to_pylist(), key=lambda r: (r["suite"], r["algorithm"], r["index"]))


@pytest.fixture(scope="module")
def engine_sweep(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("engine")
    spec = plan_sweep(["plan", "barriers"], None, cases=3000, seed="t", batch_size=400)
    return spec, out, run_sweep(spec, str(out), spark=spark)


def test_engines_show_no_violation_and_every_case_has_one_row(engine_sweep):
    spec, out, summary = engine_sweep
    assert summary["cases"] == 6000 and summary["violations"] == 0 and summary["by_property"] == {}
    assert summary["counterexamples"] == [] and summary["chunks"] == len(spec.chunks()) >= 2
    table = read_cases(str(out))
    assert table.num_rows == 6000
    assert [name for name, _ in COLUMNS] == table.column_names[:len(COLUMNS)]
    assert pc.count_distinct(table.column("id")).as_py() == 6000
    assert set(table.column("outcome").to_pylist()) == {"ok"}
    assert (out / "report.html").exists() and json.loads((out / "summary.json").read_text()) == summary


def test_wiki_b_is_caught_minimised_rendered_and_replayable(spark, tmp_path, capsys):
    spec = plan_sweep(["plan"], "wiki-b", cases=2000, seed="w")
    notes: list = []
    summary = run_sweep(spec, str(tmp_path), spark=spark, note=notes.append)
    assert summary["violations"] > 0 and "equals_spec" in summary["by_property"]
    assert sorted(c["property"] for c in summary["counterexamples"]) == sorted(summary["by_property"])
    # Minimising may search for minutes after the last case: each counterexample says it starts.
    assert notes == [f"counterexample {n} of {len(notes)}: minimising and drawing plan/wiki-b {c['property']}"
                     for n, c in enumerate(summary["counterexamples"], 1)]
    for cex in summary["counterexamples"]:
        assert cex["algorithm"] == "wiki-b" and cex["size"] <= 3 < cex["original_size"]
        assert (tmp_path / cex["picture"]).read_text().lstrip().startswith(("<?xml", "<svg"))
        first = read_cases(str(tmp_path), ["id", "properties", "index"]).to_pylist()
        earliest = min(r["index"] for r in first if cex["property"] in r["properties"])
        assert cex["case_id"] == f"plan:w:{earliest}"
        assert main(["replay", cex["case_id"], "--algorithm", "wiki-b", "--no-render"]) == 1
    capsys.readouterr()


def test_a_barrier_variant_is_caught_with_a_shortest_trace(spark, tmp_path):
    spec = plan_sweep(["barriers"], "eop-not-aligned", cases=1500, seed="b")
    summary = run_sweep(spec, str(tmp_path), spark=spark)
    assert summary["violations"] > 0
    for cex in summary["counterexamples"]:
        assert cex["size"] <= 3 and cex["minimised"]["events"][-1].startswith("E@")
        assert (tmp_path / cex["picture"]).exists()


def test_exhaustive_plan_sweep_covers_every_topology_and_state(spark, tmp_path):
    spec = plan_sweep(["plan"], "flink", exhaustive=True, max_vertices=3, max_parallelism=2)
    summary = run_sweep(spec, str(tmp_path), spark=spark)
    space = topology_space(3, 2)
    assert summary["shapes"] == 1 + 2 + 6 and summary["violations"] == 0
    assert summary["cases"] == 2 * len(space)
    (target,) = summary["targets"]
    assert target["assignments"] == 2 * space.state_assignments() == target["coverage"]["state_assignments"]
    assert set(target["methods"]) <= {"enumerate", "z3"}
    assert "the flink plan equals the spec" in target["statement"]


def test_exhaustive_sweep_catches_wiki_b(spark, tmp_path):
    summary = run_sweep(plan_sweep(["plan"], "wiki-b", exhaustive=True, max_vertices=2, max_parallelism=2),
                        str(tmp_path), spark=spark)
    assert summary["violations"] > 0 and summary["by_property"] == {"equals_spec": summary["violations"]}
    (cex,) = summary["counterexamples"]
    assert cex["case_id"].startswith("plan:exhaustive-v2-p2:") and cex["size"] <= 3


def test_a_failed_task_is_retried_without_duplicating_rows(spark, tmp_path, engine_sweep):
    spec, reference, reference_summary = engine_sweep
    marker = tmp_path / "fault-injected"
    summary = run_sweep(spec, str(tmp_path / "out"), spark=spark, fault_marker=str(marker))
    assert marker.exists()  # the fault did happen, and Spark retried the task
    assert _deterministic(summary) == _deterministic(reference_summary)
    assert _rows(tmp_path / "out") == _rows(reference)


def test_lost_chunks_are_recomputed_identically(spark, tmp_path, engine_sweep):
    spec, reference, reference_summary = engine_sweep
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    chunks = sorted((out / "cases.parquet").iterdir())
    shutil.rmtree(chunks[0])
    (chunks[-1] / "_chunk.json").unlink()  # written but never committed
    summary = run_sweep(spec, str(out), spark=spark)
    assert _deterministic(summary) == _deterministic(reference_summary)
    assert _rows(out) == _rows(reference)


def test_rerunning_a_finished_sweep_starts_no_job_and_gives_the_same_summary(engine_sweep):
    spec, out, reference_summary = engine_sweep
    summary = run_sweep(spec, str(out), spark=None, master="not used: nothing left to run")
    assert _deterministic(summary) == _deterministic(reference_summary)


def test_the_suites_report_their_names():
    assert get_suite("plan").engine == get_suite("barriers").engine == "flink"


def test_a_command_run_in_process_leaves_its_callers_session_running(spark):
    """getOrCreate hands start_spark the session a caller (a notebook, tests/spark/conftest.py)
    already has; stopping it then would stop the caller's. It stops only the last holder's."""
    from flipcheck.sweep.spark import start_spark, stop_spark

    borrowed = start_spark("local[2]", "flipcheck in a notebook")
    assert borrowed.sparkContext is spark.sparkContext
    stop_spark(borrowed)
    assert spark.sparkContext.parallelize(range(4), 2).count() == 4   # still running


def test_the_local_jvm_runs_the_jits_first_tier_only(spark):
    """The local JVM schedules and moves rows; the cases run in Python workers. Its JIT's first
    tier only (measured: a sweep of 500 cases per suite, 23.7 -> 16.8 s of CPU on the machine)."""
    from flipcheck.sweep.spark import LOCAL_DRIVER_JIT

    arguments = list(spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert LOCAL_DRIVER_JIT in arguments, arguments

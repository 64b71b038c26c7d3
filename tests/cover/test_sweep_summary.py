"""Sweep layout, rows, summary.json schema and report, without Spark: chunks are written the way
executors write them (Parquet, one row per case, committed chunk directories) with pyarrow."""

import io
import json
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flipcheck.designs.suite import get_suite
from flipcheck.sweep.runner import COLUMNS, TIMING_KEYS, Progress, plan_sweep, run_batch
from flipcheck.sweep.summary import SUMMARY_KEYS, finalise

_ARROW = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32(), "double": pa.float64(),
          "array<string>": pa.list_(pa.string())}
SCHEMA = pa.schema([(name, _ARROW[kind]) for name, kind in COLUMNS])


def _write_like_executors(spec, out):
    """Every chunk's rows from run_batch, committed as cases.parquet/chunk=N with its record."""
    started = time.time()
    for number, batches in enumerate(spec.chunks()):
        rows = [row for batch in batches for row in run_batch(spec.worker_targets(), *batch)]
        folder = out / "cases.parquet" / f"chunk={number:05d}"
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], SCHEMA), folder / "part-0.parquet")
        (folder / "_chunk.json").write_text(json.dumps({
            "chunk": number, "cases": len(rows), "violations": sum(r[6] == "violation" for r in rows),
            "run": "test", "run_started": started, "committed": time.time()}))


def test_layout_batches_and_chunks_cover_every_index_once():
    spec = plan_sweep(["plan", "barriers"], None, cases=23, seed="s", batch_size=4)
    seen = [(b.target, i) for chunk in spec.chunks() for b in chunk for i in range(b.start, b.stop)]
    assert sorted(seen) == [(t, i) for t in (0, 1) for i in range(23)] and len(seen) == len(set(seen))
    assert spec.total_cases == 46 and all(len(c) <= spec.batches_per_chunk for c in spec.chunks())
    assert spec.manifest() == plan_sweep(["plan", "barriers"], None, cases=23, seed="s", batch_size=4).manifest()


@pytest.mark.parametrize("kwargs,problem", [
    (dict(cases=None), "either --cases"),
    (dict(cases=10, exhaustive=True), "either --cases"),
    (dict(cases=0), "at least 1"),
    (dict(cases=5, seed="a:b"), "no ':'"),
    (dict(cases=5, seed="exhaustive-1"), "does not start"),
    (dict(exhaustive=True, seed="1"), "--seed applies"),
    (dict(cases=5, batch_size=0), "--batch-size"),
    (dict(exhaustive=True, max_vertices=7), "--max-vertices"),
    (dict(exhaustive=True, max_vertices=5, max_parallelism=3), "5 vertices"),
])
def test_bad_sweep_options_are_explained(kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        plan_sweep(["plan"], None, **kwargs)


def test_a_variant_applies_to_the_suites_that_know_it():
    spec = plan_sweep(["plan", "barriers"], "wiki-b", cases=5, seed="1")
    assert [(t.suite, t.algorithm) for t in spec.targets] == [("plan", "wiki-b")]
    with pytest.raises(ValueError, match="no suite"):
        plan_sweep(["barriers"], "wiki-b", cases=5, seed="1")


def test_rows_have_the_contract_columns():
    spec = plan_sweep(["plan", "barriers"], "flink", cases=3, seed="r")
    for target in range(2):
        for row in run_batch(spec.worker_targets(), target, 0, 3):
            record = dict(zip([name for name, _ in COLUMNS], row))
            assert record["id"] == f"{record['suite']}:r:{record['index']}"
            assert record["outcome"] == "ok" and record["property"] is None and record["properties"] == []
            assert record["seconds"] > 0 and record["assignments"] == 1 and record["method"] == "check"
            assert isinstance(record["shape"], str) and isinstance(record["size"], int)


def test_summary_schema_counterexamples_and_report(tmp_path):
    spec = plan_sweep(["plan"], "wiki-b", cases=60, seed="sum", batch_size=7)
    _write_like_executors(spec, tmp_path)
    summary = finalise(spec, tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    for key in SUMMARY_KEYS:
        assert key in summary
    assert isinstance(summary["cases"], int) and summary["cases"] == 60
    assert isinstance(summary["violations"], int) and 0 < summary["violations"] <= 60
    assert set(summary["by_property"]) <= set(get_suite("plan").property_names())
    assert max(summary["by_property"].values()) <= summary["violations"]
    assert isinstance(summary["cases_per_second"], float) and isinstance(summary["wall_seconds"], float)
    assert "shapes" not in summary and set(TIMING_KEYS) <= set(summary)
    (target,) = summary["targets"]
    assert sum(ok + bad for ok, bad in target["sizes"].values()) == 60
    assert sum(bad for _, bad in target["sizes"].values()) == summary["violations"]
    assert sorted(c["property"] for c in summary["counterexamples"]) == sorted(summary["by_property"])
    for cex in summary["counterexamples"]:
        assert cex["size"] <= cex["original_size"] and cex["replay"].startswith(f"flipcheck replay {cex['case_id']}")
        assert (tmp_path / cex["json"]).exists()
        assert cex["picture"] is None or (tmp_path / cex["picture"]).read_text().lstrip().startswith(("<?xml", "<svg"))
    report = (tmp_path / "report.html").read_text()
    assert report.count("<svg") >= 2 and "data:image/svg+xml;base64," in report
    assert all(cex["case_id"] in report for cex in summary["counterexamples"])


def test_exhaustive_summary_counts_shapes_and_states(tmp_path):
    spec = plan_sweep(["plan"], "flink", exhaustive=True, max_vertices=2, max_parallelism=2)
    _write_like_executors(spec, tmp_path)
    summary = finalise(spec, tmp_path)
    (target,) = summary["targets"]
    coverage = target["coverage"]
    assert summary["shapes"] == coverage["shapes"] == 3 and summary["violations"] == 0
    assert summary["cases"] == 2 * coverage["topologies"] == 26
    assert target["assignments"] == coverage["state_assignments"]
    assert "for every job graph with <= 2 vertices and parallelism <= 2" in target["statement"]


def test_progress_line_shows_cases_violations_rate_and_eta():
    stream = io.StringIO()
    progress = Progress(1000, stream=stream, interval=0)
    progress.update(0, 0, 0)
    time.sleep(0.01)
    progress.update(250, 3, 250, final=False)
    last = stream.getvalue().splitlines()[-1]
    assert "250/1,000 cases" in last and "3 violations" in last and "cases/s" in last and "ETA" in last

"""The end of a sweep: summary.json, minimised counterexamples, report.html.

Everything here is derived from the committed Parquet rows (read back with pyarrow) and the
chunks' commit records, so a resumed sweep ends with the same summary as an uninterrupted one
— except the keys in :data:`flipcheck.sweep.runner.TIMING_KEYS`, which measure time.

``summary.json``:

* ``cases`` (int), ``violations`` (int: cases with at least one violated property),
  ``by_property`` (cases violating each property; a case may violate several),
  ``cases_per_second`` and ``wall_seconds`` (time spent producing the rows, summed over the
  invocations that committed chunks, Spark start-up included);
* ``mode``, ``seed``, ``targets`` (per suite and algorithm: cases, violations, by_property,
  state assignments covered, cases per method, exhaustive coverage and the statement it
  proves), ``coverage_by_size`` (per target: cases and violations per size), and for
  ``--exhaustive`` ``shapes`` (DAG shapes up to isomorphism before patterns and parallelism);
* ``counterexamples``: one per distinct (suite, algorithm, property) — the first violating case
  id, its minimised form (JSON; a trace's steps structured: actor, action, checkpoint_id,
  sentence), its size, the picture, the graph it ran on (protocol), and the replay command
  (:mod:`flipcheck.designs.counterexamples`: it works from any folder; a user's variant is
  copied to ``DIR/variant/`` for it);
* ``timing``: chunk commits over time (for the throughput plot), seconds spent checking cases
  per target (summed over executors), finalisation time.

>>> _merge_counts([{"a": 1}, {"a": 2, "b": 1}])
{'a': 3, 'b': 1}
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Callable

from flipcheck.designs.counterexamples import save_counterexample, save_variant
from flipcheck.designs.suite import ERROR

__all__ = ["finalise", "target_summary", "read_cases", "regenerate_counterexample", "open_space", "SUMMARY_KEYS",
           "RUNS_FOLDER"]

# The keys summary.json always has (a contract).
SUMMARY_KEYS = ("cases", "violations", "by_property", "cases_per_second", "wall_seconds")
# Under DIR: where suites that leave files per case (real Flink runs) keep them.
RUNS_FOLDER = "runs"


def open_space(suite, token: str, out_dir=None):
    """``suite.space(token)``, keeping any per-case files under the sweep's ``DIR/runs`` (so the
    executors and the driver's counterexample find the same runs)."""
    space = suite.space(token)
    if out_dir is not None:
        space.workdir = str(Path(out_dir) / RUNS_FOLDER)
    return space


def read_cases(out_dir: str, columns: list[str] | None = None):
    """The sweep's rows as a pyarrow Table (``chunk`` is the partition column)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(Path(out_dir) / "cases.parquet"), format="parquet", partitioning="hive")
    return dataset.to_table(columns=columns)


def _merge_counts(counts: list[dict]) -> dict:
    total: Counter = Counter()
    for count in counts:
        total.update(count)
    return dict(sorted(total.items()))


def target_summary(table, target, suite) -> dict:
    """Counts for one target from its rows (a pyarrow Table filtered to the target)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cases = table.num_rows
    distinct = pc.count_distinct(table.column("id")).as_py() if cases else 0
    if distinct != cases:
        raise RuntimeError(f"{target.label}: {cases} rows but {distinct} distinct case ids")
    violating = table.filter(pc.equal(table.column("outcome"), "violation"))
    flat = pc.list_flatten(violating.column("properties"))
    parents = pc.list_parent_indices(violating.column("properties"))
    by_property, first_index = {}, {}
    if len(flat):
        grouped = pa.table({"property": flat, "index": pc.take(violating.column("index"), parents)}) \
            .group_by("property").aggregate([("index", "count"), ("index", "min")])
        order = {name: n for n, name in enumerate(suite.property_names())}
        for row in sorted(grouped.to_pylist(), key=lambda r: (order.get(r["property"], len(order)), r["property"])):
            by_property[row["property"]] = row["index_count"]
            first_index[row["property"]] = row["index_min"]
    methods = {row["method"]: row["index_count"]
               for row in table.group_by("method").aggregate([("index", "count")]).to_pylist()}
    sizes: dict[str, list[int]] = {}
    for row in table.group_by(["size", "outcome"]).aggregate([("index", "count")]).to_pylist():
        slot = sizes.setdefault(str(row["size"]), [0, 0])
        slot[row["outcome"] == "violation"] += row["index_count"]
    space = suite.space(target.token)
    summary = {
        "suite": target.suite, "algorithm": target.algorithm, "token": target.token,
        "title": suite.title, "size_unit": suite.size_unit,
        "cases": cases, "violations": violating.num_rows, "by_property": by_property,
        "errors": pc.sum(pc.equal(table.column("outcome"), ERROR)).as_py() or 0,
        "assignments": pc.sum(table.column("assignments")).as_py() or 0,
        "methods": dict(sorted(methods.items())),
        "cpu_seconds": round(pc.sum(table.column("seconds")).as_py() or 0.0, 3),
        "coverage": space.coverage(),
        "sizes": dict(sorted(sizes.items(), key=lambda item: int(item[0]))),
        "first_index": first_index,
    }
    statement = None if summary["violations"] else space.statement(target.algorithm, summary["assignments"])
    if statement:
        summary["statement"] = statement
    return summary


def regenerate_counterexample(out: Path, target, suite, prop: str, index: int, replay_variant: str | None = None) -> dict:
    """Regenerate the first case violating ``prop``, minimise it, draw it, and give the command
    that replays it (:func:`flipcheck.designs.counterexamples.save_counterexample`; the variant
    named as ``replay_variant``, a user's saved copy, default the target's algorithm)."""
    space = open_space(suite, target.token, out)
    case = space.case(index)
    outcome = space.check(case, target.algorithm)
    failing = outcome.counterexample if outcome.counterexample is not None else case
    return save_counterexample(out, suite, target.algorithm, prop, failing, replay_variant=replay_variant,
                               case_id=space.case_id(index),
                               message=next((v.message for v in outcome.violations if v.property == prop), None))


def _timing(out: Path) -> dict:
    """Wall time and the commit timeline from the chunks' commit records."""
    records = [json.loads(p.read_text()) for p in sorted((out / "cases.parquet").glob("chunk=*/_chunk.json"))]
    runs: dict[str, dict] = {}
    for record in records:
        run = runs.setdefault(record["run"], {"started": record["run_started"], "last": record["committed"]})
        run["last"] = max(run["last"], record["committed"])
    offset, base = {}, 0.0
    for run_id, run in sorted(runs.items(), key=lambda item: item[1]["started"]):
        offset[run_id] = base
        base += run["last"] - run["started"]
    timeline, done = [], 0
    for record in sorted(records, key=lambda r: offset[r["run"]] + r["committed"] - r["run_started"]):
        done += record["cases"]
        timeline.append([round(offset[record["run"]] + record["committed"] - record["run_started"], 3), done])
    return {"wall_seconds": base, "runs": len(runs), "timeline": timeline}


def finalise(spec, out_dir, note: Callable[[str], None] | None = None) -> dict:
    """Write summary.json, the counterexamples and report.html for a sweep whose chunks are all
    committed; returns the summary. ``note`` gets a line as each counterexample's minimising
    starts (it may search for minutes: the sweep's progress bar has ended by then)."""
    import pyarrow.compute as pc

    from flipcheck.designs.suite import get_suite
    from flipcheck.sweep.report import write_report

    began = time.perf_counter()
    out = Path(out_dir)
    table = read_cases(str(out), ["id", "suite", "algorithm", "index", "size", "outcome", "properties",
                                  "assignments", "method", "seconds"])
    if table.num_rows != spec.total_cases:
        raise RuntimeError(f"{out}: {table.num_rows} rows for {spec.total_cases} cases")
    targets, violated, cpu_seconds = [], [], {}
    for target in spec.targets:
        suite = get_suite(target.suite)
        mask = pc.and_(pc.equal(table.column("suite"), target.suite), pc.equal(table.column("algorithm"), target.algorithm))
        summary = target_summary(table.filter(mask), target, suite)
        cpu_seconds[target.label] = summary.pop("cpu_seconds")
        first_index = summary.pop("first_index")
        # a user's variant is copied next to the report once, for the replays to load
        replay_variant = save_variant(out, target.algorithm) if first_index else None
        violated += [(target, suite, prop, index, replay_variant) for prop, index in first_index.items()]
        targets.append(summary)
    counterexamples = []
    for number, (target, suite, prop, index, replay_variant) in enumerate(violated, 1):
        if note is not None:
            note(f"counterexample {number} of {len(violated)}: minimising and drawing {target.label} {prop}")
        counterexamples.append(regenerate_counterexample(out, target, suite, prop, index, replay_variant))
    timing = _timing(out)
    cases = sum(t["cases"] for t in targets)
    result = {
        "cases": cases,
        "violations": sum(t["violations"] for t in targets),
        "errors": sum(t["errors"] for t in targets),
        "by_property": _merge_counts([t["by_property"] for t in targets]),
        "cases_per_second": round(cases / timing["wall_seconds"], 1) if timing["wall_seconds"] > 0 else None,
        "wall_seconds": round(timing["wall_seconds"], 3),
        "mode": spec.mode,
        "seed": spec.seed,
    }
    if spec.mode == "exhaustive":
        shapes = [t["coverage"]["shapes"] for t in targets if "shapes" in t["coverage"]]
        result["shapes"] = shapes[0] if shapes else None
    result.update({
        "targets": targets,
        "counterexamples": counterexamples,
        "parquet": "cases.parquet",
        "report": "report.html",
        "chunks": len(spec.chunks()),
        "timing": {"runs": timing["runs"], "timeline": timing["timeline"], "cpu_seconds": cpu_seconds,
                   "finalise_seconds": round(time.perf_counter() - began, 3)},
    })
    (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    write_report(result, out)
    return result

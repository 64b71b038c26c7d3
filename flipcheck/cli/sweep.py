"""``flipcheck sweep``: many cases on Spark, random or exhaustive, resumable, with an HTML report."""

from __future__ import annotations

import sys

from flipcheck.designs import designs_help

HELP = "check many cases on Spark (random or exhaustive), resumable, with an HTML report"
ABOUT = """\
Generate and check many cases of one suite (or all of them) on Spark. Executors regenerate
every case from its id (SUITE:SEED:INDEX), check it with the suite's properties for the
engine's algorithm (or --algorithm / --variant NAME) and return one row per case.

"""
DETAILS = """
cases:
  --cases N --seed S   N random cases per suite, case i generated from (S, i)
  --exhaustive         plan: every job graph with <= V vertices (each DAG shape once up to
                       isomorphism), every pattern, every parallelism <= P, both values of
                       checkpoints_after_tasks_finished, proved equal to the spec for every
                       RUNNING/FINISHED assignment of its tasks (z3, or enumeration when
                       2^tasks is small); barriers: every configuration with 1-3 channels and
                       checkpoint ids 1-2 explored breadth-first; protocol: every state of
                       the example jobs (pair, chain: records <= 2, checkpoints <= 3,
                       failures <= 1, every mode; diamond, twin, union, join, parallel) explored
                       breadth-first with every property; the recovery designs: their pinned
                       exploration configurations (--max-* apply to plan only)

Spark: --master local[*] (default: embedded, nothing to start), local[N], spark://HOST:PORT,
yarn, k8s://... The Spark UI is disabled. DIR must be visible to the driver and the executors
(any path in local mode; a shared file system on a cluster; see docs/sweep.md).
"""


FLINK_SUITE_HELP = "random real jobs on a local Flink, 2.3 or --flink VERSION (not in all; needs a JDK)"
FLINK_DETAILS = """
flink suite: case i of seed S is a random job graph (2-4 vertices, parallelism 1-2, sink and
union-list-state flags), a checkpointing mode, 10-40 records per source subtask, sometimes a
--fail, FLIP-147 mostly on. Each case runs as a real job into DIR/runs/ on a local MiniCluster,
the cases of a Spark worker one after the other in one long-lived JVM (a job server, about 2 s
a job; FLIPCHECK_JOB_SERVER=0, or a server that cannot start, gives each its own JVM, about 5 s),
then the conform checks validate it (a FLIP-147-off run against pre-flip-147, by its model
check). A case whose JVM dies or whose job times out is an error row, not a verdict. Needs
pip install 'flipcheck[flink]' (make install) and a JDK 17; a rerun keeps the finished runs.
--flink VERSION / --flink-home DIR run the cases on another release (flipcheck flink run --help).
For example (about a minute on 2 cores; the exit code depends on what the runs show):
  flipcheck sweep --suite flink --cases 8 --seed 1 --master local[2] --out out/flink
"""


def description() -> str:
    """The description, listing the designs registered when the parser is built."""
    return (ABOUT + designs_help(flink=FLINK_SUITE_HELP,
                                 all="every design in this build; a --variant applies to the suites that know it")
            + DETAILS + FLINK_DETAILS)


EPILOG = """\
output in DIR:
  cases.parquet/     one row per case: id, suite, algorithm, index, shape, size, outcome,
                     property, properties, message, assignments, method, seconds, detail
                     (one chunk=N directory per committed Spark job; detail: JSON, flink suite
                     only: status, checkpoints, seconds, conforms, first_unexplained, checks)
  runs/              flink suite: each case's run (flink.log, plan.json, output, case.json)
  summary.json       cases, violations (cases with a violation), by_property, cases_per_second,
                     wall_seconds, targets, counterexamples, shapes (--exhaustive), ...
  counterexamples/   per distinct violation (suite, algorithm, property): the first violating
                     case minimised (fewest tasks / shortest trace), as SVG and JSON
  report.html        summary tables, throughput and coverage plots, the counterexamples
  manifest.json, spark.log

resume: run the same command again after an interruption (even kill -9): committed chunks are
kept, the rest is run, and the result equals an uninterrupted run. A different sweep into the
same DIR is refused.

examples:
  flipcheck sweep --suite all --cases 100000 --seed 1 --out out/sweep
  flipcheck sweep --suite plan --variant wiki-b --cases 20000 --seed 1 --out out/wiki-b    violations: exit 1
  flipcheck sweep --suite plan --exhaustive --max-vertices 4 --max-parallelism 3 --out out/exh
  flipcheck sweep --suite all --cases 1000000 --seed 7 --master spark://10.0.0.5:7077 --out /shared/s7
                                                       (needs a Spark cluster: docs/sweep.md, clusters)
  flipcheck sweep --suite plan --cases 10000000 --seed 8 --master yarn --out /nfs/s8 \\
      --conf spark.archives=hdfs:///apps/flipcheck-venv.tar.gz#environment \\
      --conf spark.pyspark.python=./environment/bin/python       (needs a Spark cluster, as above)
  flipcheck replay plan:1:4711 --algorithm wiki-b      one case again, by id: a violation, exit 1


progress (stderr): cases done, violations so far, cases per second (per minute when slower), ETA.
exit codes: 0 no violation, 1 violations found (or, flink suite, cases that could not run),
2 bad option or an output directory holding something else.
"""


def configure(parser) -> None:
    from flipcheck.cli.types import MAX_CASES, MAX_SIZE_BOUND, bounded_int, variant
    from flipcheck.designs import DESIGNS
    from flipcheck.designs.suite import SUITES_BESIDE_DESIGNS

    parser.add_argument("--suite", required=True, choices=[*DESIGNS, *SUITES_BESIDE_DESIGNS, "all"], metavar="NAME",
                        help="one of: %(choices)s")
    names = parser.add_mutually_exclusive_group()
    names.add_argument("--algorithm", type=variant, metavar="NAME", help="the algorithm to check (default: each suite's engine, flink)")
    names.add_argument("--variant", type=variant, metavar="NAME",
                       help="a named variant or mutant to check (same as --algorithm), or your own class: FILE.py:CLASS "
                            "or MODULE:CLASS, for the suites whose base class it subclasses (runs that file's code, "
                            "on every executor: docs/architecture.md)")
    parser.add_argument("--cases", type=bounded_int(1, MAX_CASES), metavar="N", help="random cases per suite")
    parser.add_argument("--seed", metavar="S", help="seed of the random cases (default: 0)")
    parser.add_argument("--exhaustive", action="store_true", help="enumerate every case within the bounds")
    parser.add_argument("--max-vertices", type=bounded_int(1, MAX_SIZE_BOUND), metavar="V", help="--exhaustive plan bound (default: 4)")
    parser.add_argument("--max-parallelism", type=bounded_int(1, MAX_SIZE_BOUND), metavar="P", help="--exhaustive plan bound (default: 3)")
    parser.add_argument("--master", metavar="URL", default=None, help="Spark master (default: local[*])")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark setting, repeatable (e.g. spark.archives=venv.tar.gz#environment)")
    parser.add_argument("--batch-size", type=bounded_int(1, MAX_SIZE_BOUND), metavar="N",
                        help="cases per Spark task (default: about one second of work per suite)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (created; resumed if it holds this sweep)")
    from flipcheck.cli.flink import add_release_options

    add_release_options(parser)  # --suite flink: the release its cases run on


def _options(args, conf: dict):
    from flipcheck.errors import UsageError
    from flipcheck.sweep.spark import DEFAULT_MASTER, check_master

    if not args.exhaustive and (args.max_vertices is not None or args.max_parallelism is not None):
        raise UsageError("--max-vertices and --max-parallelism need --exhaustive")
    if args.exhaustive and args.cases is not None:
        raise UsageError("give either --cases N (with --seed S) or --exhaustive, not both")
    if not args.exhaustive and args.cases is None:
        raise UsageError("give either --cases N (with --seed S) or --exhaustive")
    master = args.master or DEFAULT_MASTER
    check_master(master, conf)
    return master


def _require_flink(args, conf: dict) -> dict:
    """A missing JDK or Flink is one line before Spark starts, not an error row per case. The
    release (installed now if need be) goes to every worker in the environment: the variables
    to set while the sweep runs (``conf`` gets them for a cluster's executors)."""
    import json

    from flipcheck.errors import UsageError

    if args.suite != "flink":
        for option in ("flink", "flink_home"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option.replace('_', '-')} applies to --suite flink only")
        return {}
    from flipcheck.cli.flink import chosen_release
    from flipcheck.designs.flink_jobs import RELEASE_ENV
    from flipcheck.flink.engine import java_tools

    java_tools()
    release = json.dumps(chosen_release(args).describe())
    conf[f"spark.executorEnv.{RELEASE_ENV}"] = release
    return {RELEASE_ENV: release}


def spark_conf(pairs: list[str]) -> dict:
    """``--conf KEY=VALUE`` options as a dict; UsageError for a malformed one."""
    from flipcheck.errors import UsageError

    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.startswith("spark."):
            raise UsageError(f"--conf {pair!r} is not spark.KEY=VALUE")
        conf[key] = value
    return conf


def build_spec(args):
    """The sweep for the parsed options; UsageError with one line when they do not fit."""
    from flipcheck.errors import UsageError
    from flipcheck.designs import DesignUnavailable
    from flipcheck.reference_impl.user_variants import UserVariantError
    from flipcheck.sweep.runner import plan_sweep, suite_names

    try:
        suites = suite_names(args.suite)
        return plan_sweep(suites, args.algorithm or args.variant, cases=args.cases, seed=args.seed,
                          exhaustive=args.exhaustive, max_vertices=args.max_vertices,
                          max_parallelism=args.max_parallelism, batch_size=args.batch_size)
    except DesignUnavailable as error:
        raise UsageError(f"--suite {args.suite}: {error}") from None
    except UserVariantError as error:
        raise UsageError(f"{'--variant' if args.variant else '--algorithm'} {error}") from None
    except ValueError as error:
        raise UsageError(str(error)) from None


def print_result(summary: dict, out_dir: str, stream=None) -> None:
    """The few lines a sweep prints on stdout: per target, statements, counterexamples, report."""
    from pathlib import Path

    from flipcheck.designs.counterexamples import counterexample_lines
    from flipcheck.reference_impl.user_variants import is_spec

    stream = stream or sys.stdout
    for t in summary["targets"]:
        stream.write(f"{t['suite'] + '/' + t['algorithm']:<32} {t['cases']:>12,} cases {t['violations']:>10,} violations"
                     f"  ({t['token']})\n")
        if t.get("statement"):
            stream.write(f"  proved: {t['statement']}\n")
    if summary.get("shapes") is not None:
        stream.write(f"shapes: {summary['shapes']} DAG shapes up to isomorphism\n")
    for cex in summary["counterexamples"]:
        where = Path(out_dir) / (cex["picture"] or cex["json"])
        stream.write(f"counterexample {cex['suite']}/{cex['algorithm']} {cex['property']}: {cex['case_id']} minimised "
                     f"to {cex['size']} {cex['size_unit']}: {where}\n")
        if is_spec(cex["algorithm"]):  # your own variant: its trace and replay here (a catalogued one's in the report)
            stream.write("\n".join(counterexample_lines(cex, out_dir, indent="  ")[1:]) + "\n")
    undrawn = next((cex["picture_error"] for cex in summary["counterexamples"] if cex.get("picture_error")), None)
    if undrawn:
        # The verdict stands without pictures, but nobody should think they were drawn.
        sys.stderr.write(f"flipcheck: counterexamples not drawn: {undrawn}\n")
    from flipcheck.sweep.runner import rate_text

    errors = f", {summary['errors']:,} not run (outcome error in cases.parquet)" if summary.get("errors") else ""
    stream.write(f"{summary['cases']:,} cases, {summary['violations']:,} violations{errors}, "
                 f"{rate_text(summary['cases'] / summary['wall_seconds'] if summary['wall_seconds'] else 0)}, "
                 f"{summary['wall_seconds']:.1f} s\n")
    stream.write(f"report: {Path(out_dir) / 'report.html'}\n")
    stream.flush()


def run_spec(spec, out_dir: str, master: str, spark=None, conf: dict | None = None) -> dict:
    """Run a sweep with a progress bar; refusals and Spark failures become one-line errors."""
    from flipcheck.errors import InputError, UsageError
    from flipcheck.sweep.spark import spark_error_line
    from flipcheck.sweep.runner import Progress, SweepRefused, run_sweep

    progress = Progress(spec.total_cases)
    try:
        return run_sweep(spec, out_dir, master=master, spark=spark, progress=progress.update, conf=conf,
                         note=progress.note)
    except SweepRefused as error:
        raise InputError(out_dir, str(error)) from None
    except OSError as error:
        raise InputError(out_dir, error.strerror or str(error)) from None
    except Exception as error:  # noqa: BLE001 - Py4J / PySpark errors: one line, not a JVM stack trace
        if type(error).__module__.split(".")[0] not in ("py4j", "pyspark"):
            raise
        raise UsageError(f"Spark failed on {master}: {spark_error_line(error)} (details: {out_dir}/spark.log)") from None


def run(args) -> int:
    conf = spark_conf(args.conf)
    master = _options(args, conf)
    spec = build_spec(args)
    import os

    workers = _require_flink(args, conf)
    os.environ.update(workers)  # local mode: the workers inherit the driver's environment
    try:
        summary = run_spec(spec, args.out, master, conf=conf)
    finally:
        for name in workers:
            os.environ.pop(name, None)
    print_result(summary, args.out)
    return 1 if summary["violations"] or summary.get("errors") else 0

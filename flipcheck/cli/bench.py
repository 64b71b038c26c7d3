"""``flipcheck bench``: measured speed of flipcheck's algorithms."""

from __future__ import annotations

import json
import sys

HELP = "measure speed: plan algorithms, model exploration, Spark sweeps, real Flink jobs and their validation"
DESCRIPTION = """\
Benchmarks (speed goals are measured here, never by timed tests).

  flipcheck bench plan      tasks per second of `flink` and `naive` at 10k, 100k and 1M tasks,
                            on a typical pipeline and on the seed's adversarial O(n^2) case
  flipcheck bench barriers  distinct states per second exploring the barrier-handler model
                            (3 channels, checkpoint ids 1..3, every configuration)
  flipcheck bench explore   distinct states per second and bytes per state exploring the
                            whole-job protocol (generators/protocol.py example graphs, every
                            mode, 0 and 1 failover), keeping states and keeping fingerprints,
                            and with each reduction (--reduction por, symmetry, all);
                            with --builds instead: pure-Python and compiled states/s side by
                            side on every pinned configuration (docs/compiled.md); then
                            one process against --workers 2 in wall time, on every pinned
                            configuration over 50,000 states, with no reduction and with
                            --reduction all, the default (--tables stores,workers);
                            --tables spark: the Spark explorers (seen-set on the driver,
                            seen-set on the executors) on local[1] and local[2]: wall, driver
                            and executor CPU, the driver's share of CPU, the speedup
  flipcheck bench flink     one small real Flink job (source -> map -> two-phase-commit sink,
                            parallelism 2): wall time split into compile, JVM start, job,
                            total and validation (conform); the JVM's listening addresses and
                            peak memory; 2.3.0 unless --flink VERSION / --flink-home DIR;
                            with --jobs N: validated real jobs a minute, old (a JVM per
                            job) and new (one job server per Spark worker) side by side,
                            N jobs each as Spark tasks on --master (default local[2])
  flipcheck bench conform   `flipcheck conform` on a long real log (--lines, default 100,000:
                            a job of about 40 s): seconds and microseconds per line when 1/4,
                            1/2, 3/4 and all of it are explained (linear?), reading alone;
                            then the log with each alteration of the conformance suite:
                            seconds to reject against seconds to accept (--dir DIR: a stored
                            run directory instead of a new job, no JVM)
  flipcheck bench sweep     Spark sweeps: cases per second per core of each suite, local[1] ->
                            local[2] scaling, Spark overhead against a plain loop (--budget =
                            seconds of single-core work per measurement; use 60 or more)
"""
EPILOG = """\
examples:
  flipcheck bench plan
  flipcheck bench plan --algorithms flink,naive,wiki-a --budget 10 --json
  flipcheck bench explore --builds --budget 0.2

Measurements predicted to take longer than --budget seconds are skipped and shown as such.
Each option applies to the benchmarks named in its help (--repeat: 1..100); giving it to another
one is a usage error (exit 2).
End-to-end CLI timing (parse + plan + print) is in benchmarks/plan_cli.sh.
"""

TARGETS = ("plan", "barriers", "explore", "sweep", "flink", "conform")


# The options each benchmark reads; giving another is a usage error, not silently ignored.
OPTIONS = {
    "plan": ("algorithms", "budget", "json"),
    "barriers": ("json",),
    "explore": ("json", "builds", "budget", "tables", "repeat"),
    "sweep": ("budget", "repeat", "suites", "json"),
    "flink": ("json", "flink", "flink_home", "jobs", "master"),
    "conform": ("lines", "json", "dir"),
}
DEFAULTS = {"builds": False, "algorithms": "flink,naive", "budget": 30.0, "repeat": 1, "suites": None, "lines": 100_000,
            "dir": None, "jobs": None, "master": None, "tables": "stores,workers"}
MAX_JOBS = 10_000
MAX_REPEAT = 100


def configure(parser) -> None:
    from flipcheck.cli.types import bounded_int, name, seconds

    parser.add_argument("target", choices=TARGETS, metavar="TARGET", help="what to measure: %(choices)s")
    parser.add_argument("--algorithms", type=name, help="plan: comma-separated plan algorithms (default: flink,naive)")
    parser.add_argument("--builds", action="store_const", const=True,
                        help="explore: the pure-Python and the compiled build side by side, each in fresh processes, "
                             "on every pinned protocol configuration (tests/manifests/protocol.json) whose pinned "
                             "time fits --budget")
    parser.add_argument("--budget", type=seconds, metavar="SECONDS",
                        help="plan, sweep, explore --builds: skip a measurement predicted to exceed this many seconds, at most 86,400 "
                             "(default: 30)")
    parser.add_argument("--json", action="store_true", help="one JSON object per measurement")
    parser.add_argument("--repeat", type=bounded_int(1, MAX_REPEAT), metavar="N",
                        help="sweep: best of N runs per timing; explore's workers table and explore "
                             "--builds: N pairs of runs (--builds alternates which build goes first), the "
                             "median pair's speedup (default: 1)")
    parser.add_argument("--suites", type=name, metavar="A,B", help="sweep: comma-separated suites (default: every suite in this build)")
    parser.add_argument("--lines", type=bounded_int(1_000, 2_000_000), metavar="N",
                        help="conform: about how many lines the real job's log should have (default: 100,000)")
    parser.add_argument("--dir", metavar="DIR", help="conform: time accepting and rejecting (altered) logs of "
                                                     "this flipcheck flink run directory, without a new job")
    parser.add_argument("--jobs", type=bounded_int(1, MAX_JOBS), metavar="N",
                        help="flink: measure throughput instead: N jobs run the old way (a JVM each) and N the new "
                             "(one job server per Spark worker), each validated with conform; validated jobs a minute")
    parser.add_argument("--master", metavar="URL", help="flink --jobs: the Spark master the jobs run on (default: local[2])")
    parser.add_argument("--tables", type=name, metavar="A,B",
                        help="explore: stores (the stores and reductions, one process), workers (one "
                             "process against --workers 2, wall time) and/or spark (both Spark explorers on "
                             "local[1] and local[2], the driver's CPU share; needs a JVM); default: stores,workers")
    from flipcheck.cli.flink import add_release_options

    add_release_options(parser)  # flink: the release (flipcheck flink run --help)


def _check_options(args) -> None:
    """UsageError for an option the chosen benchmark does not read; then fill in the defaults."""
    from flipcheck.errors import UsageError

    repeat_given = args.repeat is not None
    for name, default in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
        elif name not in OPTIONS[args.target]:
            users = [t for t, names in OPTIONS.items() if name in names]
            raise UsageError(f"--{name} does not apply to `bench {args.target}` (it applies to bench {', '.join(users)})")
    for name in ("flink", "flink_home"):
        if getattr(args, name) is not None and name not in OPTIONS[args.target]:
            raise UsageError(f"--{name.replace('_', '-')} does not apply to `bench {args.target}` (it applies to bench flink)")
    if args.target == "explore" and repeat_given and not args.builds and "workers" not in args.tables.split(","):
        raise UsageError("--repeat applies to `bench explore --builds` and to its workers table (--tables workers), "
                         "not to the stores and spark tables")


def _bench_barriers(args) -> int:
    from flipcheck.properties.barriers_explore import explore_model
    from flipcheck.designs.barriers import all_configs

    if not args.json:
        print(f"{'mode':<15} {'after-finished':<15} {'timeout':<8} {'states':>8} {'seconds':>8} {'states/s':>10}")
    for config in all_configs(3):
        result = explore_model(config, max_id=3)
        row = {"mode": config.mode, "after_finished": config.after_finished, "alignment_timeout": config.alignment_timeout,
               "states": result.states, "seconds": round(result.seconds, 3), "states_per_second": round(result.states_per_second)}
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{config.mode:<15} {str(config.after_finished):<15} {str(config.alignment_timeout):<8} "
                  f"{result.states:>8} {result.seconds:>8.2f} {result.states_per_second:>10,.0f}")
    return 0


REDUCED = ("por", "symmetry", "all")   # the reductions bench explore measures beside none


def _bench_builds(args) -> int:
    """Pure-Python against compiled states/s per pinned configuration (flipcheck.bench.builds),
    ``--repeat`` pairs of runs each (the median of each column; the ratio is the median pair's);
    exit code 1 if the two builds disagree on any count, verdict or trace length."""
    from statistics import median

    from flipcheck.bench.builds import compare, pinned_configurations

    same_fields = ("states", "transitions", "complete", "violated", "trace_lengths")
    disagree, build = 0, "-"
    if not args.json:
        print(f"{'configuration':<32} {'states':>8} {'pure st/s':>10} {'compiled st/s':>13} {'ratio':>6} "
              f"{'wall ratio':>10} {'B/state':>8} {'same':>5}" + ("  ratios" if args.repeat > 1 else ""))
    for config, pinned_seconds in pinned_configurations():
        name = (f"{config['graph']}" + (f" p{config['parallelism']}" if config.get("parallelism", 1) > 1 else "")
                + f" {config['mode']} r{'*' if config['records'] is None else config['records']}"
                + f" c{config['checkpoints']} f{config['failures']}" + (" swsp" if config["stop_with_savepoint"] else ""))
        if pinned_seconds * args.repeat > args.budget:
            print(json.dumps({"config": config, "skipped_pinned_seconds": pinned_seconds}) if args.json else
                  f"{name:<32} skipped (pinned {pinned_seconds:,.1f} s x {args.repeat} > --budget)", flush=True)
            continue
        pairs = [compare(config, pure_first=i % 2 == 0) for i in range(args.repeat)]
        pure, compiled = pairs[0]
        built, build = compiled["compiled_modules"] > 0, compiled["build"]
        same = all(p[f] == pure[f] == c[f] for p, c in pairs for f in same_fields)
        disagree += not same
        ratios = sorted(c["states_per_cpu_second"] / p["states_per_cpu_second"] for p, c in pairs) if built else []
        wall_ratios = sorted(c["states_per_second"] / p["states_per_second"] for p, c in pairs) if built else []
        ratio, wall_ratio = (median(ratios), median(wall_ratios)) if built else (None, None)
        pure_rate = round(median(p["states_per_cpu_second"] for p, _ in pairs))
        compiled_rate = round(median(c["states_per_cpu_second"] for _, c in pairs)) if built else None
        if args.json:
            print(json.dumps({"config": config, "states": pure["states"], "build": compiled["build"],
                              "pure_states_per_cpu_second": pure_rate,
                              "compiled_states_per_cpu_second": compiled_rate,
                              "ratio": round(ratio, 2) if ratio else None,
                              "wall_ratio": round(wall_ratio, 2) if wall_ratio else None,
                              "ratios": [round(r, 2) for r in ratios], "pairs": args.repeat,
                              "pure_seconds": pure["seconds"], "compiled_seconds": compiled["seconds"],
                              "bytes_per_state": pure["bytes_per_state"], "same_verdict": same}), flush=True)
        else:
            print(f"{name:<32} {pure['states']:>8} {pure_rate:>10,} "
                  f"{(format(compiled_rate, ',') if built else 'not built'):>13} "
                  f"{(f'x{ratio:.2f}') if ratio else '-':>6} {(f'x{wall_ratio:.2f}') if wall_ratio else '-':>10} "
                  f"{pure['bytes_per_state']:>8} {str(same):>5}"
                  + ("  " + " ".join(f"{r:.2f}" for r in ratios) if args.repeat > 1 else ""), flush=True)
    if not args.json:
        print(f"the default build: {build}. States/s per core: CPU time of the search alone (imports excluded), "
              f"the median of {args.repeat} run(s) per build; ratio: the median pair's; wall ratio: the same in "
              "wall time. r* = the graph's own records, swsp = stop-with-savepoint")
    return 1 if disagree else 0


def _bench_explore(args) -> int:
    """Both stores of the explorer in the same run: states kept (the explorer before
    fingerprints) and 64-bit fingerprints, each without reduction, then fingerprints with each
    reduction (``por``, ``symmetry``, ``all``: states, seconds, and how many times fewer states
    and less time the whole verdict took). Speed untraced; memory is the peak ``tracemalloc`` sees
    per state in a second, traced run (configurations up to 100,000 states), and the exact size
    of the fingerprint table and graph arrays."""
    import tracemalloc

    from flipcheck.generators.protocol import example_graph
    from flipcheck.model.protocol import Job
    from flipcheck.properties.protocol_explore import explore_job

    def peak_bytes_per_state(job, store: str) -> float:
        tracemalloc.start()
        try:
            result = explore_job(job, store=store)
            return tracemalloc.get_traced_memory()[1] / result.states
        finally:
            tracemalloc.stop()

    if not args.json:
        print(f"{'graph':<8} {'mode':<14} {'fail':>4} {'states':>8} {'complete':>8} {'states/s':>9} "
              f"{'fp st/s':>9} {'peak B/st':>9} {'fp peak':>8} {'fp seen+graph':>13} {'collision':>9}"
              + "".join(f" {reduction + ' states':>15} {'faster':>6}" for reduction in REDUCED))
    for name in ("pair", "chain", "diamond"):
        for mode in ("aligned", "unaligned", "at-least-once"):
            for failures in (0, 1):
                job = Job(example_graph(name), mode=mode, records=1, failures=failures)
                kept = explore_job(job, max_states=200_000, store="states")
                fingerprinted = explore_job(job, max_states=200_000, store="fingerprints")
                reduced = {reduction: explore_job(job, max_states=200_000, store="fingerprints", reduction=reduction)
                           for reduction in REDUCED}
                graph = fingerprinted.graph
                traced = kept.complete and kept.states <= 100_000
                row = {"graph": name, "mode": mode, "failures": failures, "states": kept.states,
                       "complete": kept.complete, "seconds": round(kept.seconds, 3),
                       "states_per_second": round(kept.states_per_second),
                       "fingerprints_states": fingerprinted.states,  # fewer only after a collision
                       "fingerprints_seconds": round(fingerprinted.seconds, 3),
                       "fingerprints_states_per_second": round(fingerprinted.states_per_second),
                       "peak_bytes_per_state": round(peak_bytes_per_state(job, "states")) if traced else None,
                       "fingerprints_peak_bytes_per_state":
                           round(peak_bytes_per_state(job, "fingerprints")) if traced else None,
                       "fingerprints_seen_and_graph_bytes_per_state": round(graph.bytes_per_state, 1),
                       "collision_probability": graph.collision_probability}
                for reduction, result in reduced.items():
                    both = kept.complete and result.complete
                    row.update({f"{reduction}_states": result.states, f"{reduction}_complete": result.complete,
                                f"{reduction}_seconds": round(result.seconds, 3),
                                f"{reduction}_states_per_second": round(result.states_per_second),
                                f"{reduction}_fewer_states": round(kept.states / result.states, 2) if both else None,
                                f"{reduction}_faster": round(kept.seconds / result.seconds, 2) if both else None})
                if args.json:
                    print(json.dumps(row))
                else:
                    peak, fp_peak = row["peak_bytes_per_state"], row["fingerprints_peak_bytes_per_state"]
                    print(f"{name:<8} {mode:<14} {failures:>4} {kept.states:>8} {str(kept.complete):>8} "
                          f"{kept.states_per_second:>9,.0f} {fingerprinted.states_per_second:>9,.0f} "
                          f"{peak if peak is not None else '-':>9} {fp_peak if fp_peak is not None else '-':>8} "
                          f"{graph.bytes_per_state:>13.1f} {graph.collision_probability:>9.1e}"
                          + "".join(f" {row[f'{reduction}_states']:>15} "
                                    f"{(str(row[f'{reduction}_faster']) + 'x') if row[f'{reduction}_faster'] else '-':>6}"
                                    for reduction in REDUCED), flush=True)
    return 0


def _bench_flink_throughput(args) -> int:
    from flipcheck.bench.flink import bench_throughput, throughput_lines
    from flipcheck.cli.flink import chosen_release

    report = bench_throughput(args.jobs, args.master or "local[2]", flink=chosen_release(args))
    print(json.dumps(report) if args.json else "\n".join(throughput_lines(report)))
    return 0 if all(report[way]["validated"] == args.jobs for way in ("old", "new")) else 1


EXPLORE_TABLES = ("stores", "workers", "spark")


def _explore_tables(args) -> list[str]:
    from flipcheck.errors import UsageError

    tables = args.tables.split(",")
    unknown = [t for t in tables if t not in EXPLORE_TABLES]
    if unknown:
        raise UsageError(f"--tables: unknown table {unknown[0]!r} (expected {' or '.join(EXPLORE_TABLES)})")
    return tables


def _bench_explore_workers(args) -> int:
    """The single-process search against ``--workers 2`` (flipcheck/bench/explore_workers.py)."""
    from flipcheck.bench.explore_workers import HEADER, REDUCTIONS, configurations, measure, report_line

    if not args.json:
        print(HEADER)
    for config in configurations():
        for reduction in REDUCTIONS:
            row = measure(config, reduction=reduction, repeat=args.repeat)
            print(json.dumps(row) if args.json else report_line(row), flush=True)
    return 0


def _bench_explore_spark(args) -> int:
    """Both Spark explorers on local[1] and local[2] (flipcheck/bench/explore_spark.py)."""
    from flipcheck.bench.explore_spark import HEADER, configurations, measure, report_lines

    if not args.json:
        print(HEADER)
    for config in configurations():
        rows = measure(config)
        print("\n".join(json.dumps(row) for row in rows) if args.json else "\n".join(report_lines(rows)), flush=True)
    return 0


def _bench_flink(args) -> int:
    if args.jobs is not None:
        return _bench_flink_throughput(args)
    if args.master is not None:
        from flipcheck.errors import UsageError

        raise UsageError("--master: only with --jobs N (the single-job benchmark runs no Spark)")
    from flipcheck.bench.flink import bench_flink, report_lines
    from flipcheck.flink.engine import run_summary

    import tempfile
    import time
    from pathlib import Path

    from flipcheck.flink.conform import conform_files

    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-flink-") as scratch:
        from flipcheck.cli.flink import chosen_release

        result, watch = bench_flink(Path(scratch), flink=chosen_release(args))
        started = time.perf_counter()
        conformance = conform_files(str(Path(scratch) / "plan.json"), [str(Path(scratch) / "flink.log")])
        validation = (time.perf_counter() - started, conformance)
    if args.json:
        row = run_summary(result)
        row.update(listening=sorted(f"{a}:{p}" for a, p in watch.listening), peak_rss_mb=round(watch.peak_rss_mb),
                   validation_seconds=round(validation[0], 3), conforms=conformance.conforms)
        print(json.dumps(row))
    else:
        print("\n".join(report_lines(result, watch, validation)))
    return 0 if result.status == "FINISHED" and conformance.conforms else 1


def _bench_conform(args) -> int:
    import tempfile
    from pathlib import Path

    from flipcheck.bench.conform import bench_conform, bench_rejection, rejection_lines, report_lines

    def rejection(run: Path) -> bool:
        rows = bench_rejection(run)
        if args.json:
            for r in rows:
                print(json.dumps({"alteration": r.alteration, "seconds": round(r.seconds, 3), "states": r.states,
                                  "times_good": round(r.seconds / (rows[0].seconds or 1e-9), 2),
                                  "conforms": r.conforms, "first_unexplained": r.first or None}))
        else:
            print("\n".join(rejection_lines(rows)))
        return rows[0].conforms   # an altered log may still conform (a record twice, at least once)

    if args.dir is not None:
        from flipcheck.errors import UsageError

        if not (Path(args.dir) / "plan.json").is_file() or not (Path(args.dir) / "flink.log").is_file():
            raise UsageError(f"--dir: {args.dir} is not a flipcheck flink run directory (plan.json and flink.log)")
        return 0 if rejection(Path(args.dir)) else 1
    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-conform-") as scratch:
        result, parse, timings = bench_conform(args.lines, keep=Path(scratch))
        if args.json:
            for t in timings:
                print(json.dumps({"lines": t.lines, "events": t.events, "seconds": round(t.seconds, 3),
                                  "read_seconds": round(parse, 3), "conforms": t.conforms}))
        else:
            print("\n".join(report_lines(result, parse, timings)))
        rejected = rejection(Path(scratch))
    return 0 if timings[-1].conforms and rejected else 1


def run(args) -> int:
    _check_options(args)
    if args.target == "flink":
        return _bench_flink(args)
    if args.target == "conform":
        return _bench_conform(args)
    if args.target == "barriers":
        return _bench_barriers(args)
    if args.target == "explore":
        if args.builds:
            return _bench_builds(args)
        tables = _explore_tables(args)
        code = _bench_explore(args) if "stores" in tables else 0
        code = _bench_explore_workers(args) if "workers" in tables else code
        return _bench_explore_spark(args) if "spark" in tables else code
    if args.target == "sweep":
        from flipcheck.bench.sweep import report

        return report(args)
    from flipcheck.errors import UsageError
    from flipcheck.reference_impl.plan import PLAN_ALGORITHMS
    from flipcheck.bench.plan import bench_plan

    names = [n.strip() for n in args.algorithms.split(",") if n.strip()]
    unknown = [n for n in names if n not in PLAN_ALGORITHMS]
    if unknown or not names:
        raise UsageError(f"--algorithms: unknown algorithm {unknown[0] if unknown else '(none)'!r}")
    progress = None if args.json else (lambda text: sys.stderr.write(f"  measuring {text}...\r"))
    if not args.json:
        print(f"{'algorithm':<20} {'shape':<12} {'tasks':>10} {'seconds':>9} {'tasks/s':>12}")
    for row in bench_plan(tuple(names), budget=args.budget, progress=progress):
        if args.json:
            print(json.dumps({"algorithm": row.algorithm, "shape": row.shape, "tasks": row.tasks,
                              "seconds": row.seconds, "tasks_per_second": row.tasks_per_second,
                              "skipped_predicted_seconds": row.predicted_seconds}))
        elif row.seconds is None:
            print(f"{row.algorithm:<20} {row.shape:<12} {row.tasks:>10} {'skipped':>9} (predicted {row.predicted_seconds:,.0f} s)")
        else:
            print(f"{row.algorithm:<20} {row.shape:<12} {row.tasks:>10} {row.seconds:>9.3f} {row.tasks_per_second:>12,.0f}")
        sys.stdout.flush()
    return 0

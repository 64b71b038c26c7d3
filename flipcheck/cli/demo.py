"""``flipcheck demo``: the tour `make demo` runs — Spark sweeps over every FLIP-147 suite."""

from __future__ import annotations

import os
import sys

HELP = "the tour `make demo` runs: Spark sweeps of every FLIP-147 suite, wiki-b caught and drawn"
DESCRIPTION = """\
A tour of flipcheck on local Spark (one embedded session, nothing to start):

  1. a random sweep of every FLIP-147 suite (plan, barriers, protocol: the whole job) with
     the engine's algorithms -- zero violations expected -- and of the seed's second Appendix
     algorithm as written (wiki-b in the plan, wiki-b-trigger as the coordinator's trigger
     computation of the whole job), whose counterexamples are minimised and drawn (a job graph;
     a message-sequence chart); one report.html for all of them;
  2. an exhaustive sweep of the plan: every job graph with <= 4 vertices and parallelism <= 2
     (each DAG shape once up to isomorphism, both values of checkpoints_after_tasks_finished),
     proved equal to the spec for every RUNNING/FINISHED state assignment;
  3. z3 proofs of Flink's plan calculator on the example graphs (when z3 is available);
  4. the real engine: a join of two sources of different lengths runs on Flink 2.3 (a local
     MiniCluster flipcheck starts, every port on 127.0.0.1), and its log is validated against
     the whole-job model (`flipcheck conform`), the behaviour found drawn as a sequence chart.

Output goes to --out (default out/demo): sweep/ and exhaustive/ hold the sweeps (Parquet,
summary.json, counterexamples/, report.html); flink/ the real run (flink.log, plan.json,
output/, run.json) and behaviour.svg. The last line is the path of the main report.
"""
EPILOG = """\
examples:
  flipcheck demo                                  what `make demo` runs (about 3 minutes on 2 cores)
  flipcheck demo --cases 12000 --max-vertices 2 --out /tmp/demo    a quicker tour (about 1 minute)

exit codes: 0 the engines show no violation, the seed's algorithm is caught and drawn in every
suite and the real Flink run conforms, 1 otherwise, 2 bad option, or graphviz's dot, a JDK or the
flink extra missing (checked before any work).
"""

# The seed's second Appendix algorithm as written, per suite: the buggy design the demo must catch
# (in the plan, and as the coordinator's trigger computation of the whole job).
SEED_ALGORITHMS = {"plan": "wiki-b", "protocol": "wiki-b-trigger"}
# The suites of FLIP-147 (other designs have suites too; `flipcheck sweep --suite all` runs them).
FLIP147_SUITES = ("plan", "barriers", "protocol")


def configure(parser) -> None:
    from flipcheck.cli.types import MAX_CASES, MAX_SIZE_BOUND, bounded_int

    parser.add_argument("--out", default=os.path.join("out", "demo"), metavar="DIR", help="output directory (default: %(default)s)")
    parser.add_argument("--cases", type=bounded_int(1, MAX_CASES), default=250_000, metavar="N",
                        help="random cases per suite and algorithm, divided by the suite's relative cost "
                             "(protocol: 10) (default: %(default)s)")
    parser.add_argument("--seed", default="demo", metavar="S", help="seed of the random cases (default: %(default)s)")
    parser.add_argument("--max-vertices", type=bounded_int(1, MAX_SIZE_BOUND), default=4, metavar="V", help="exhaustive plan bound (default: %(default)s)")
    parser.add_argument("--max-parallelism", type=bounded_int(1, MAX_SIZE_BOUND), default=2, metavar="P", help="exhaustive plan bound (default: %(default)s)")
    parser.add_argument("--master", default=None, metavar="URL", help="Spark master (default: local[*])")


def _fresh(directory: str) -> None:
    """Remove an earlier demo sweep (only a directory holding a sweep manifest) so options may change."""
    import shutil
    from pathlib import Path

    path = Path(directory)
    if (path / "manifest.json").exists():
        shutil.rmtree(path)


def _prove_examples(say) -> bool:
    try:
        from flipcheck.properties.z3_plan import prove_plan
    except ImportError:  # z3 encodings not part of this build
        say("   (z3 plan encodings not available: skipped)")
        return True
    from flipcheck.model.graph_json import load_graph
    from flipcheck.designs.plan import EXAMPLE_GRAPHS

    all_proved = True
    for path in sorted(EXAMPLE_GRAPHS.glob("*.json")):
        graph = load_graph(str(path))
        if graph.num_tasks > 500:
            continue
        result = prove_plan(graph, "flink")
        all_proved &= result.proved
        verdict = "proved" if result.proved else "COUNTEREXAMPLE"
        say(f"   {verdict:<14} {path.name:<22} {graph.num_tasks:>4} tasks, 2^{graph.num_tasks} assignments, {result.seconds:.2f} s")
    return all_proved


def run(args) -> int:
    from pathlib import Path

    from flipcheck.cli.types import check_output_dir
    from flipcheck.cli.sweep import print_result, run_spec
    from flipcheck.errors import UsageError
    from flipcheck.sweep.spark import DEFAULT_MASTER, check_master, start_spark, stop_spark
    from flipcheck.designs import available_designs
    from flipcheck.designs.suite import get_suite
    from flipcheck.sweep.runner import plan_sweep
    from flipcheck.system_tools import find_program, missing_program_message

    master = args.master or DEFAULT_MASTER
    check_master(master)
    if find_program("dot") is None:
        # The demo's point is its pictures: say what is missing before minutes of sweeping.
        raise UsageError(missing_program_message("dot"))
    from flipcheck.flink.engine import flink_lib, java_tools

    java_tools(), flink_lib()  # the real-engine step needs both: say so before the sweeps
    suites = [name for name in available_designs() if name in FLIP147_SUITES]
    try:
        random_spec = plan_sweep(suites, None, cases=args.cases, seed=args.seed,
                                 extra_targets=[(name, SEED_ALGORITHMS[name]) for name in suites
                                                if name in SEED_ALGORITHMS], scale_by_cost=True)
        exhaustive_spec = plan_sweep(["plan"], None, exhaustive=True, max_vertices=args.max_vertices,
                                     max_parallelism=args.max_parallelism)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_output_dir(args.out, "--out")  # a file or an unwritable place fails now, not after the sweeps
    out = Path(args.out)
    sweep_dir, exhaustive_dir = out / "sweep", out / "exhaustive"
    for directory in (sweep_dir, exhaustive_dir):
        _fresh(str(directory))
    say = lambda text="": print(text, flush=True)  # noqa: E731

    names = ", ".join(f"{t.suite}/{t.algorithm} ({t.cases:,})" for t in random_spec.targets)
    say(f"1. Spark sweep on {master}: random cases of {names}")
    out.mkdir(parents=True, exist_ok=True)
    clock = _PhaseClock()
    spark = start_spark(master, "flipcheck demo", log_path=str(out / "spark.log"))
    clock.lap("Spark start")
    try:
        random_summary = run_spec(random_spec, str(sweep_dir), master, spark=spark)
        clock.lap("random sweep with minimising and drawing")
        print_result(random_summary, str(sweep_dir))
        say(f"\n2. exhaustive plan sweep: every job graph with <= {args.max_vertices} vertices and parallelism "
            f"<= {args.max_parallelism}")
        exhaustive_summary = run_spec(exhaustive_spec, str(exhaustive_dir), master, spark=spark)
        clock.lap("exhaustive sweep")
        print_result(exhaustive_summary, str(exhaustive_dir))
    finally:
        stop_spark(spark)

    say("\n3. z3: Flink's plan calculator equals the specification for every task-state assignment")
    proved = _prove_examples(say)
    clock.lap("z3 proofs")

    say("\n4. real Flink 2.3: a join of two sources of different lengths, validated against the model")
    conforms = _real_flink(say, out / "flink")
    clock.lap("real Flink job and validation")

    engines = {(name, get_suite(name).engine) for name in suites}
    engine_violations = sum(t["violations"] for t in random_summary["targets"] if (t["suite"], t["algorithm"]) in engines)
    seeds = [t for t in random_summary["targets"] if SEED_ALGORITHMS.get(t["suite"]) == t["algorithm"]]
    caught = all(t["violations"] for t in seeds)
    drawn = _say_pictures(say, [(sweep_dir, random_summary), (exhaustive_dir, exhaustive_summary)])
    ok = engine_violations == 0 and caught and exhaustive_summary["violations"] == 0 and proved and drawn and conforms
    verdicts = ", ".join(f"{t['suite']}/{t['algorithm']}: {'caught' if t['violations'] else 'NOT caught'}" for t in seeds)
    say(f"\nengines: {engine_violations} violations; {verdicts}; "
        f"exhaustive: {exhaustive_summary['violations']} violations")
    say(f"time: {clock}")
    say(f"exhaustive report: {(exhaustive_dir / 'report.html').resolve()}")
    say(f"report: {(sweep_dir / 'report.html').resolve()}")
    sys.stdout.flush()
    return 0 if ok else 1


def _real_flink(say, out) -> bool:
    """Run the conformance suite's join on a local MiniCluster, validate its log, draw the behaviour."""
    import shutil

    from flipcheck.flink.conform import render_conformance
    from flipcheck.flink.suite import case_named, run_case

    shutil.rmtree(out, ignore_errors=True)
    result, conformance = run_case(case_named("join-aligned"), out)
    say(f"   job {result.job_id} {result.status}: {result.checkpoints_completed} checkpoints completed, "
        f"{result.records_committed} of {result.records_expected} records committed, {result.times.total:.1f} s")
    say(f"   {'conforms' if conformance.conforms else 'does NOT conform'}: {len(conformance.observations)} log events "
        f"explained by the {conformance.job.protocol.name} model ({conformance.verdict.states:,} states searched)")
    for check in conformance.checks:
        say(f"   {'ok  ' if check.ok else 'FAIL'} {check.name:<17} {check.detail}")
    if conformance.first_unexplained is not None:
        first = conformance.first_unexplained
        say(f"   first unexplained: {first['file']}:{first['line']}: {first['event']} -- {first['why']}")
    picture = render_conformance(conformance, str(out / "behaviour.svg"))
    say(f"   behaviour found: {picture}")
    return conformance.conforms


class _PhaseClock:
    """Wall seconds per phase, for the demo's closing "time:" line."""

    def __init__(self):
        import time

        self._now = time.perf_counter
        self._started = self._last = self._now()
        self._laps: list[tuple[str, float]] = []

    def lap(self, phase: str) -> None:
        now = self._now()
        self._laps.append((phase, now - self._last))
        self._last = now

    def __str__(self) -> str:
        parts = ", ".join(f"{phase} {seconds:.0f} s" for phase, seconds in self._laps)
        return f"{parts}; {self._now() - self._started:.0f} s in all"


def _say_pictures(say, sweeps) -> bool:
    """List where every counterexample picture is; False when one could not be drawn."""
    say("\npictures (minimised counterexamples; each is also in its sweep's report.html):")
    drawn = True
    for directory, summary in sweeps:
        for cex in summary["counterexamples"]:
            label = f"{cex['suite']}/{cex['algorithm']} {cex['property']}"
            if cex["picture"]:
                say(f"   {label}: {(directory / cex['picture']).resolve()}")
            else:
                drawn = False
                say(f"   {label}: NOT DRAWN ({cex.get('picture_error', 'no picture')})")
    return drawn

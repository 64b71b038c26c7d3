"""``flipcheck explore``: explore the whole job (FLIP-147 end to end) exhaustively."""

from __future__ import annotations

import json
import sys

HELP = "explore every schedule of a whole job (coordinator, tasks, channels) and check FLIP-147's promises"
DESCRIPTION = """\
Expand a job graph (the plan JSON format; optional vertex flags "two_phase_commit_sink": true,
"sink_v2": true, "union_list_state": true, "records": N on sources) into tasks and FIFO channels and search
every reachable state breadth-first, checking the end-to-end properties (consistent cut,
exactly-once, no deadlock, the end stays reachable, final checkpoint before finish, no pending
checkpoint cancelled, ids complete in order, aborted never completes). A violation comes with
a shortest trace, printed step by step (a lasso's cycle is marked "loop").
"""
EPILOG = """\
examples:
  flipcheck explore examples/graphs/protocol-pair.json --records 1
  flipcheck explore examples/graphs/protocol-pair.json --mode unaligned --failures 1 --workers 1
                                                    one process; the same answer as on every core
  flipcheck explore examples/graphs/protocol-pair.json --mode unaligned --failures 1 --master "local[*]"
                                                    one exploration on Spark, every core
  flipcheck explore examples/graphs/protocol-pair.json --records 0 --master "local[2]" --seen executors --reduction none
                                                    the seen-set on the executors (see seen below)
  flipcheck explore examples/graphs/protocol-pair.json --mode unaligned --failures 1 --json
  flipcheck explore examples/graphs/protocol-pair.json --variant cancel-pending-on-finish --render trace.svg
                                                    a rejected design: its shortest trace, drawn, exit 1
  flipcheck explore examples/graphs/protocol-pair.json --records 0 --stop-with-savepoint \\
      --variant stop-without-drain-after-end-of-data          a real bug's trace, exit 1
  flipcheck explore examples/graphs/protocol-pair.json --variant cancel-pending-on-finish --failures 1 \\
      --property exactly_once             stop at that property's shortest trace (how verify replays), exit 1

output (--json): one object
  {"states": n, "transitions": n, "complete": true|false,
   "violations": [{"property": "...", "message": "...", "trace": [STEP, ...]}],
   "store": "fingerprints"|"states", "collision_probability": p,
   "reduction": "all"|"por"|"symmetry"|"none", "reduced_states": n,
   "coverage": {"rules": {"J1": n, ...}, "overrides": {"SWITCH": {"changed_successors": n}},
                "states": n} (null with --master)}
  STEP: {"actor": "src[0]"|"coordinator", "action": "emit"|"receive"|"trigger"|..., "checkpoint_id": n|null,
         "sentence": "src[0] emits record r0", "loop": false, "rules": ["J1", ...], "label": [...]}
         (docs/protocol.md, "Reading a trace")

coverage: every generated step is counted under the model's rules it took (J1-J9, S1-S4,
C1-C8, F1; docs/protocol.md), as TLC counts per action; a rule at 0 was never checked. For each
switch your --variant overrides (a boolean, or a rule method such as may_finish or plan),
"changed_successors" counts the expanded states whose successors differ with that override
removed; at 0 the change made no difference in any state searched, and the text output says so
and names a configuration where it does.

reduction (docs/protocol.md): with por the search follows, in a state where no failover can
happen any more, only a stubborn set of steps: those that may interfere with each other, closed
under the model's independence relation (which steps commute, rule by rule). With symmetry it
keeps one state per orbit of interchangeable tasks (subtasks of a vertex, equal vertices),
renaming tasks, channels and records. all (the default) does both. Every deadlock, end state,
violated step property, cycle that never ends the job and hopeless abort is still found, so
the verdict is the same; "states" counts the reduced graph, "reduced_states" the states where
only some steps were followed. Each violation's trace is searched again in the full model, so
it is the shortest one, the same as with --reduction none. A --variant overriding a rule method
(but plan) is searched with none: the reductions were worked out from the model's own rules.

fingerprints: two different states may share a 64-bit fingerprint, and the second is then
taken for seen. The probability printed is TLC's optimistic estimate, distinct x (generated -
distinct) / 2^64; with --store states nothing is missed, at about fifteen times the memory.

limits: a job of at most 1,024 tasks, 16,384 channels and 10,000 records from all sources is
expanded; a larger one is refused before any work (exit 2, naming the size and the limit).
--checkpoints and --failures are at most 1,000.

workers: by default the search runs on every core, in as many processes (--workers N: in N;
--workers 1: in this process; --property and --store states always search in one process).
Measured on 2 cores, 2 workers were 1.22-1.51x as fast as one process on the pinned
configurations over 50,000 states, with and without the default --reduction all (medians of
three pairs, 2026-11-28, compiled: the faster one process got, the more the workers' own costs
weigh; docs/protocol.md, "Every core"). The workers expand one
breadth-first level at a time, each the states it holds; one process (the driver) numbers the new
states in the single-process order, so the counts, the coverage and every trace are those of
--workers 1, number for number. A new state stays with the worker that made it; only what
balances the next level moves, and a worker that ends its share early is given half of what
another has left. Levels under 1,000 states are expanded by the driver, so a small
search forks nothing. Deadlocks are found by the workers; the searches after the end (end stays
reachable, hopeless aborts, the lasso) run in the driver on its graph.

resume: with --resume-dir DIR the graph and the next level are saved in DIR (JSON and binary
arrays; nothing is unpickled): by the workers explorer (also with --workers 1) after a level
whenever 10 s passed since the last save, and at the end; on Spark (--master) after every
level. Killed, the same command goes on from the last level saved; a DIR of
another search (graph, options, hash seed) is refused with exit 2. Fingerprints hash the
states' strings with Python's hash seed, so a resumable search needs PYTHONHASHSEED: when it is
not set, flipcheck starts itself again with PYTHONHASHSEED=0 (on Spark the executors get the
driver's, or 0). A save encodes every state of the level and rewrites the graph. A resumed
search prints no rule coverage (only a whole search counts it).

seen: with --master the driver numbers every state and keeps the seen-set and the graph (about
70 bytes a state: --seen driver, the default), so it checks every property and gives the traces of
the search in one process, number for number. With --seen executors the seen-set is partitioned
by fingerprint over the executors, which deduplicate; the driver only learns per-level counts and,
per violation, the path to it (walked back level by level). It gives the same counts and the same
violated step, state and deadlock properties, each with a shortest trace (the same length, not
always the same trace), with --reduction none or symmetry. It does not check
end_stays_reachable and checkpoint_after_abort (they need the whole graph in one place: use
--seen driver) and says so on stderr.

progress: a search running longer than a few seconds says how far it is on stderr every few
seconds (states so far, states a second, frontier, depth). A search --max-states cuts short stops
within the state it was expanding, prints "complete": false (text: INCOMPLETE) and one warning
line on stderr, and exits 0 unless it found a violation: the verdict covers only the states searched.

exit codes: 0 no violation (in every state, or with "complete": false in the states --max-states
allowed); 1 a violation; 2 bad input or option (nothing on stdout).
"""


# Counts beyond these only make a search that cannot end; the job's own size is bounded by
# model/protocol/structure.py (MAX_TASKS, MAX_CHANNELS, MAX_RECORDS).
MAX_COUNT = 1_000
MAX_STATES = 1_000_000_000
MAX_WORKERS = 1_024


def configure(parser) -> None:
    from flipcheck.cli.types import bounded_int, variant
    from flipcheck.model.protocol import MAX_RECORDS
    from flipcheck.properties.protocol_properties import JOB_PROPERTIES
    from flipcheck.properties.protocol_reduction import REDUCTIONS

    parser.add_argument("graph", metavar="GRAPH.json", help="job graph (plan JSON format)")
    parser.add_argument("--mode", default="aligned", choices=["aligned", "unaligned", "at-least-once"])
    parser.add_argument("--records", type=bounded_int(0, MAX_RECORDS), default=1, metavar="N",
                        help=f"records per source subtask (default 1, at most {MAX_RECORDS:,})")
    parser.add_argument("--checkpoints", type=bounded_int(0, MAX_COUNT), default=1, metavar="N",
                        help="checkpoints the coordinator may start while a source has data (default 1)")
    parser.add_argument("--failures", type=bounded_int(0, MAX_COUNT), default=0, metavar="N",
                        help="failovers (default 0)")
    parser.add_argument("--stop-with-savepoint", action="store_true",
                        help="the coordinator may stop the job once with a savepoint without drain "
                             "(aligned mode, no failures)")
    parser.add_argument("--variant", type=variant, default=None, metavar="NAME",
                        help="a named protocol variant, or your own subclass of flipcheck.Protocol overriding "
                             "a boolean or a rule method (may_finish, plan, ...; docs/api.md): "
                             "FILE.py:CLASS or MODULE:CLASS (runs that file's code; docs/architecture.md)")
    parser.add_argument("--max-states", type=bounded_int(1, MAX_STATES), default=None, metavar="N",
                        help="stop after N distinct states")
    parser.add_argument("--property", choices=list(JOB_PROPERTIES), default=None, metavar="NAME",
                        help="stop as soon as NAME's shortest counterexample is known (with the violations found "
                             "by then): how verify and sweep replay one; a property of the whole graph "
                             "(end_stays_reachable, ...) still needs every state. One of: %(choices)s")
    parser.add_argument("--store", choices=["fingerprints", "states"], default="fingerprints",
                        help="keep 64-bit fingerprints of the seen states (default; about 70 bytes a "
                             "state with the graph, and a collision probability reported as TLC does) "
                             "or the states themselves (about 1 KB a state; no collision possible)")
    parser.add_argument("--reduction", choices=list(REDUCTIONS), default="all",
                        help="all (default): partial-order and symmetry reduction, the same verdicts and traces "
                             "in fewer states; por or symmetry: one of them; none: every state (see below)")
    parser.add_argument("--master", metavar="URL", default=None,
                        help="explore on Spark: local[N], local[*], spark://HOST:PORT, yarn, k8s://...; one "
                             "level of the search per round, spread over the executors by fingerprint; the "
                             "same counts and counterexamples as without it (docs/protocol.md)")
    parser.add_argument("--workers", type=bounded_int(1, MAX_WORKERS), default=None, metavar="N",
                        help="explore in N processes of this machine (default: every core; 1: in this process); "
                             "the same counts and counterexamples whatever N (see workers below)")
    parser.add_argument("--seen", choices=["driver", "executors"], default=None,
                        help="with --master: where the seen-set is kept: driver (default; every property, the "
                             "single-process numbering) or executors (partitioned by fingerprint; the driver does "
                             "per-level work only; no liveness properties; --reduction none or symmetry; see seen below)")
    parser.add_argument("--partitions", type=bounded_int(1, 100_000), default=None, metavar="N",
                        help="with --master: at most N partitions per level, each of at least 500 states "
                             "(default: Spark's parallelism)")
    parser.add_argument("--resume-dir", metavar="DIR", default=None,
                        help="save the graph and the next level here as the search goes (on the workers every "
                             "10 s, on Spark with --master every level); run again with the same DIR and options "
                             "to continue a killed run (see resume below)")
    parser.add_argument("--spark-log", metavar="FILE", default=None,
                        help="with --master: where Spark's own log goes (default: flipcheck-explore-spark.log "
                             "in the temporary directory)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--render", metavar="FILE.svg", default=None,
                        help="draw the first violation's shortest trace as a message-sequence chart "
                             "(one lane per task and the coordinator; .svg or .png)")


def run(args) -> int:
    from flipcheck.errors import InputError, UsageError
    from flipcheck.model.graph_json import GraphFormatError, load_graph
    from flipcheck.render.protocol_labels import trace_json
    from flipcheck.render.trace_steps import step_lines
    from flipcheck.properties.protocol_explore import explore_job, replay
    from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS, make_job, protocol_class
    from flipcheck.reference_impl.user_variants import UserVariantError

    if args.render is not None:
        from flipcheck.render.core import output_format

        output_format(args.render)  # a bad extension is a UsageError (exit 2) before any work
    if args.stop_with_savepoint and (args.mode != "aligned" or args.failures):
        # model/protocol/ C7/J9: savepoints are aligned, and a restart during the stop is not modelled
        raise UsageError(f"--stop-with-savepoint is modelled with --mode aligned and --failures 0 "
                         f"(got --mode {args.mode} --failures {args.failures})")
    variant = args.variant or CORRECT_PROTOCOL
    try:
        protocol_class(variant)
    except UserVariantError as error:
        raise UsageError(f"--variant {error}") from None
    except ValueError:
        raise UsageError(f"unknown --variant {variant!r} (expected one of {', '.join(PROTOCOLS)})") from None
    try:
        graph = load_graph(args.graph)
    except (GraphFormatError, OSError) as error:
        raise InputError(args.graph, str(error)) from None
    try:
        job = make_job(graph, variant, mode=args.mode, records=args.records, checkpoints=args.checkpoints,
                       failures=args.failures, stop_with_savepoint=args.stop_with_savepoint)
    except ValueError as error:
        raise InputError(args.graph, str(error)) from None

    def progress(graph_, seconds):
        # "so far": the final count is the one on stdout, never one of these
        states = len(graph_)
        depth = graph_.depth[states - 1] if states else 0
        sys.stderr.write(f"flipcheck explore: searching: {states:,} states so far ({states / max(seconds, 1e-9):,.0f}/s), "
                         f"frontier {states - graph_.expanded:,}, depth {depth}, {seconds:.0f} s\n")

    if args.master is None:
        if args.partitions is not None or args.spark_log is not None or args.seen is not None:
            raise UsageError("--partitions, --seen and --spark-log need --master")
        workers = _workers(args)
        if args.resume_dir is not None:
            _resumable(args)
        if workers > 1 or args.resume_dir is not None:
            from flipcheck.parallel_explore.expansion import job_spec
            from flipcheck.parallel_explore.workers import WorkersReport, explore_job_on_workers

            report = WorkersReport(workers)
            result = explore_job_on_workers(job_spec(graph, variant, _job_options(args)), workers=workers,
                                            max_states=args.max_states, reduction=args.reduction, progress=progress,
                                            coverage=True, resume_dir=args.resume_dir, report=report)
            if report.resumed_at is not None:
                sys.stderr.write(f"flipcheck explore: went on from level {report.resumed_at} saved in {args.resume_dir}; "
                                 "rule coverage is counted only by a whole search, so none is printed\n")
        else:
            result = explore_job(job, max_states=args.max_states, store=args.store, reduction=args.reduction,
                                 progress=progress, coverage=True, shortest_of=args.property)
    elif args.workers is not None:
        raise UsageError("--workers explores on this machine; --master on Spark: give one of them")
    elif args.property is not None:
        raise UsageError("--property searches in one process; --master explores every state")
    else:
        result = _explore_on_spark(args, graph, variant, progress)
    collision = getattr(result, "graph", result).collision_probability   # no graph with --seen executors
    violations = []
    for number, c in enumerate(result.counterexamples):
        steps = replay(job, c.labels, c.cycle)
        if number == 0 and args.render is not None:
            from flipcheck.render.protocol import render_trace

            render_trace(job, steps, args.render, f"{variant}: {c.property} violated",
                         c.message if len(c.message) < 160 else c.message[:157] + "...")
        violations.append({"property": c.property, "message": c.message, "trace": trace_json(job, steps)})
    coverage = getattr(result, "coverage", None)
    if args.json:
        sys.stdout.write(json.dumps({"states": result.states, "transitions": result.transitions,
                                     "complete": result.complete, "violations": violations,
                                     "store": args.store, "collision_probability": collision,
                                     "reduction": result.reduction,
                                     "reduced_states": result.graph.reduced if hasattr(result, "graph") else 0,
                                     "coverage": coverage.as_json() if coverage is not None else None}) + "\n")
    else:
        lines = [f"{result.states} states, {result.transitions} transitions, "
                 f"{'complete' if result.complete else 'INCOMPLETE'}, {len(violations)} violation(s)"
                 + (f"; fingerprints: collision probability {collision:.1e}" if args.store == "fingerprints" else "")]
        for v in violations:
            lines.append(f"violated {v['property']}: {v['message']}")
            lines += step_lines(v["trace"])
        if coverage is not None:
            from flipcheck.properties.protocol_coverage import coverage_lines

            lines += coverage_lines(coverage)
        sys.stdout.write("\n".join(lines) + "\n")
    if args.render is not None and not violations:
        sys.stderr.write(f"flipcheck explore: no violation, nothing drawn to {args.render}\n")
    if not result.complete and not violations:
        from flipcheck.api import cut_message

        sys.stderr.write(f"flipcheck {cut_message('explore', result.states, args.max_states)}\n")
    return 1 if violations else 0


def _job_options(args) -> dict:
    return {"mode": args.mode, "records": args.records, "checkpoints": args.checkpoints,
            "failures": args.failures, "stop_with_savepoint": args.stop_with_savepoint}


def _workers(args) -> int:
    """How many processes explore: --workers, else every core (one with --property or --store
    states, which search in one process)."""
    from flipcheck.errors import UsageError
    from flipcheck.parallel_explore.workers import default_workers

    one_process = [option for option, given in (("--property", args.property is not None),
                                                ("--store states", args.store == "states")) if given]
    if args.workers is None:
        return 1 if one_process else default_workers()
    if args.workers > 1 and one_process:
        raise UsageError(f"{' and '.join(one_process)} need{'s' if len(one_process) == 1 else ''} the search in one "
                         "process: give --workers 1 or leave --workers out")
    return args.workers


def _resumable(args) -> None:
    """--resume-dir without --master: the workers explorer saves its levels (even --workers 1,
    then in one forked process). Its fingerprints hash strings with Python's seed, so every run
    must hash with one seed: from the command line, flipcheck starts again with
    PYTHONHASHSEED=0 when it is not set; called as a function, the explorer says to set it."""
    from flipcheck.errors import UsageError
    from flipcheck.parallel_explore.workers import fixed_hash_seed

    if args.property is not None or args.store == "states":
        raise UsageError("--resume-dir saves the workers' search; --property and --store states search in one "
                         "process, which cannot be resumed: leave them out")
    if fixed_hash_seed() or not getattr(args, "command_line", False):
        return
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, "PYTHONHASHSEED": "0"})


def _explore_on_spark(args, graph, variant, progress):
    import os
    import tempfile

    from flipcheck.errors import UsageError
    from flipcheck.parallel_explore.spark import explore_job_on_spark, job_spec
    from flipcheck.sweep.spark import check_master, start_spark, stop_spark

    if args.store != "fingerprints":
        raise UsageError("--master keeps fingerprints (the driver holds the seen-set); --store states is for one process")
    if args.seen == "executors":
        _check_seen_on_executors(args)
    check_master(args.master)
    spec = job_spec(graph, variant, _job_options(args))
    log = args.spark_log or os.path.join(tempfile.gettempdir(), "flipcheck-explore-spark.log")
    spark = start_spark(args.master, "flipcheck explore", log_path=log)
    try:
        if args.seen == "executors":
            from flipcheck.parallel_explore.spark_partitioned import explore_job_partitioned

            shown = [0.0]

            def level_progress(level, seconds):
                if seconds - shown[0] < 2.0:   # every few seconds, as the other searches report
                    return
                shown[0] = seconds
                sys.stderr.write(f"flipcheck explore: searching: {level.states:,} states so far "
                                 f"({level.states / max(seconds, 1e-9):,.0f}/s), frontier {level.frontier:,}, "
                                 f"depth {level.depth}, {seconds:.0f} s\n")

            result = explore_job_partitioned(spec, spark, partitions=args.partitions, reduction=args.reduction,
                                             progress=level_progress, resume_dir=args.resume_dir)
            sys.stderr.write("flipcheck explore: --seen executors checked the step, state and deadlock properties; "
                             "end_stays_reachable and checkpoint_after_abort need the whole graph: not checked "
                             "(use --seen driver)\n")
            return result
        return explore_job_on_spark(spec, spark, partitions=args.partitions, max_states=args.max_states,
                                    progress=progress, resume_dir=args.resume_dir, reduction=args.reduction)
    finally:
        stop_spark(spark)


def _check_seen_on_executors(args) -> None:
    from flipcheck.errors import UsageError
    from flipcheck.parallel_explore.spark_partitioned import PARTITIONED_REDUCTIONS

    if args.reduction not in PARTITIONED_REDUCTIONS:
        raise UsageError(f"--seen executors explores with --reduction none or symmetry, not {args.reduction} "
                         "(partial-order reduction's cycle proviso needs the whole seen-set): give --reduction symmetry")
    if args.max_states is not None:
        raise UsageError("--max-states stops at the Nth state in the single-process order, which --seen executors "
                         "does not number: use --seen driver")

"""``flipcheck flink run`` / ``flink releases``: run a job graph as a real Flink job (1.14.0 to 2.3.x)
on a local MiniCluster; list the releases installed and installable.

:func:`add_release_options` and :func:`chosen_release` give every command that starts Flink the
same ``--flink VERSION`` / ``--flink-home DIR``.

Example
-------
>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_release_options(parser)
>>> args = parser.parse_args(["--flink", "1.14.6"])
>>> args.flink, args.flink_home
('1.14.6', None)
"""

from __future__ import annotations

import argparse
import re
import sys

HELP = "run a job graph on real Flink, 1.14 to 2.3 (local MiniCluster; needs a JDK and Flink's jars)"
DESCRIPTION = """\
Real Flink, started by flipcheck:

  flipcheck flink run GRAPH.json --out DIR    run a job graph as a Flink job (see run --help)
  flipcheck flink releases [--json]           the Flink releases installed, and those installable
                                              (--install V,... fetches them ahead of a run)
  flipcheck flink matrix --out DIR            catalogued Flink bugs re-enacted on real releases,
                                              compared with JIRA's fix versions (see matrix --help)
  flipcheck flink component approximate-recovery
                                              Flink's own approximate subpartition (FLIP-135),
                                              driven through the model's sequences without a job
                                              (see component approximate-recovery --help)

It needs a JDK (java and javac, 17 or later) and Flink's jars: by default the flink extra's
(pip install 'flipcheck[flink]', apache-flink-libraries 2.3.0, about 330 MB; `make install`
installs it); --flink VERSION runs another release from 1.14.0 on (installed into
~/.cache/flipcheck/releases on first use), --flink-home DIR your own build.
"""
RELEASES_DESCRIPTION = """\
flipcheck flink releases lists the Flink releases flipcheck can run: those installed (the flink
extra's, in the venv, and those in the release cache $XDG_CACHE_HOME/flipcheck/releases/, with
where their jars are) and those --flink VERSION installs on first use: every release from 1.14.0
(FLIP-147's first) to 2.3.x, as flipcheck knows them, plus newer patch releases when the package
index answers within a few seconds (offline, the known list alone).

--install VERSION,... installs releases into the cache now rather than on first use: for a CI
image or a machine that will later run offline (`make test` fetches 1.20.0 this way while its
first tests run).
"""
RELEASES_EPILOG = """\
examples:
  flipcheck flink releases
  flipcheck flink releases --json
  flipcheck flink releases --install 1.14.6,1.20.0        about 250 MB each; needs network access

output: installed releases one a line (VERSION SOURCE LIB), then the installable ones; --json:
  {"installed": [{"version", "source", "lib"}, ...], "installable": [...], "index_answered": bool}.
"""
RUN_DESCRIPTION = """\
flipcheck flink run GRAPH.json --out DIR builds a real Flink streaming job from a job graph and
runs it on a local MiniCluster in a JVM of its own (every port on 127.0.0.1):

  * vertices without inputs are bounded sources: every subtask emits the vertex's "records"
    (or --records) record ids, one every 10-15 ms, numbered as the model numbers them;
  * every other vertex is one Flink operator with its parallelism, chaining disabled, so each
    vertex is one job vertex: one input a pass-through map, two a co-map (keyed when both
    edges are ALL_TO_ALL), more a map over their union;
  * POINTWISE edges are forward (same parallelism) or rescale; ALL_TO_ALL edges hash
    partitioning (keyBy) into a keyable vertex, rebalance otherwise;
  * "two_phase_commit_sink" vertices are Flink's TwoPhaseCommitSinkFunction, "sink_v2" vertices
    a Sink V2 with a committer: both commit files under DIR/output/ exactly once; other vertices
    without outputs drop what they receive; "union_list_state" vertices keep union list state;
  * a source with "splits": N is a lazy FLIP-27 source: its records cut into N splits that the
    enumerator hands out one per request, each step logged (FLIP-27 split assignment, validated
    by flipcheck conform; --fail VERTEX:SUBTASK@RECORD on it fails a reader, --fail-enumerator
    VERTEX its enumerator, --drop-split-event VERTEX one assignment's RPC; docs/split-assignment.md,
    "Real Flink runs").
    a "keyed_state" operator (one ALL_TO_ALL input) keeps a count per key in keyed state and
    emits each key's first id plus its count, so lost or doubled state shows in the output.

--local-recovery switches task-local recovery on (execution.state-recovery.from-local,
execution.checkpointing.local-backup.enabled, local copies under DIR/local-state) with
file-system checkpoint storage (DIR/checkpoints) on two TaskManagers; its faults strike where
--fail would: --lose-taskmanager terminates the TaskManager that subtask runs on and starts a new
one, --damage-local-copy deletes every file of the local copies, then throws. For example
(about 15 s; docs/local-recovery.md, "Real runs", shows how to validate it):

  flipcheck flink run examples/graphs/flink/keyed.json --out DIR --local-recovery \
      --interval-ms 200 --lose-taskmanager count:1@120

DIR receives flink.log (Flink's log; DEBUG where docs/conformance.md asks for it), plan.json
(the REST API's /jobs/<id>/plan), output/<vertex>/committed/ (one record id a line) and run.json
{"job_id", "status", "checkpoints_completed", "records_committed", "seconds", ..., "designs":
[the designs the run exercised: "protocol", and "split-assignment" with a "splits" source]}. The first
run compiles the job builder with javac into ~/.cache/flipcheck. See docs/conformance.md,
"Running real jobs".

--batch runs it as a BATCH job instead (Flink 2.0 or later): blocking exchanges, no checkpoints,
FLIP-383's batch job recovery on (execution.batch.job-recovery.enabled in the cluster's
configuration, the job events under DIR/ha/), the sources' enumerator snapshotted into the job
events (SupportsBatchSnapshot), "sink_v2" sinks committing at the end of their input.
--jm-failover VERTEX:SUBTASK,... holds those tasks at their first record; once the job waits on
them alone (the other tasks finished, or wait for them), the JobManager loses its leadership and
gets it back (a new JobMaster replays the job events, reconciles the partitions the TaskManager
kept, and continues), then the held tasks go on. --lose-task-manager replaces the TaskManager
while no JobManager runs: its partitions are missed, their producers run again;
--delete-shuffle-files deletes the partitions' files instead (the TaskManager still lists them). run.json's
"designs" says "batch-recovery": flipcheck conform validates it as that design (docs/batch-recovery.md).

The release: by default the flink extra's (2.3.0); --flink VERSION any release from 1.14.0 to
2.3.x, installed on first use into ~/.cache/flipcheck/releases/VERSION by pip (one line on
stderr; only the apache-flink-libraries package, about 250 MB); --flink-home DIR your own build:
a Flink distribution with lib/flink-dist*.jar (a release tarball, or flink-dist/target/
flink-*-bin/flink-* after mvn install), or that lib folder itself. run.json's "flink" says which
release ran and where its jars came from.
"""
EPILOG = """\
examples:
  flipcheck flink run examples/graphs/protocol-join.json --out run1 --records 40
  flipcheck flink run examples/graphs/protocol-union.json --out run2 --mode unaligned --fail sink:1@10
  flipcheck flink run examples/graphs/protocol-pair.json --out run3 --no-checkpoints-after-tasks-finished
  flipcheck flink run examples/graphs/flink/keyed.json --out run7 --lose-taskmanager count:1@120
                       exit 2: a TaskManager loss needs --local-recovery (two TaskManagers)
  flipcheck flink run examples/graphs/flink/batch-recovery.json --out run8 --batch --jm-failover map:1
                       a batch job; the JobManager fails over while map subtask 1 is held
  flipcheck flink run examples/graphs/flink/batch-recovery.json --out run9 --jm-failover map:1
                       exit 2: --jm-failover needs --batch
  flipcheck flink run examples/graphs/flink/chain.json --out run10 --fault fail:src:0@25 --fault restore-throw:sink:1 --fault delay-snapshot:map:0@2=300
                       three faults at protocol points; each logs "flipcheck fault ..." when it strikes
  flipcheck flink run examples/graphs/flink/chain.json --out run11 --fault snapshot-throw:map:5@2
                       exit 2: subtask 5 is outside 0..1
  flipcheck flink run examples/graphs/flink/join.json --out run12 --records short=1 --fault global-failure-at-start
                       source short sends one record (so it likely ends before checkpoint 1); the job fails over as it starts
  flipcheck flink run examples/graphs/flink/join.json --out run13 --records join=1
                       exit 2: join is not a source (VERTEX=N sets one source's records)
  flipcheck flink run examples/graphs/flink/chain.json --out run4 --records 20 --flink 1.14.6
                       another release, FLIP-147's first line (needs network access the first time)
  flipcheck flink run examples/graphs/flink/chain.json --out run5 --flink 9.9.9
                       exit 2: not a release from 1.14.0 to 2.3.x
  flipcheck flink run examples/graphs/flink/chain.json --out run6 --flink-home /nonexistent
                       exit 2: not a Flink distribution

output: one line on stdout: DIR: job <id> FINISHED, N checkpoints completed, N records committed
  (exactly once: N), T s (JVM start T s, job T s). "exactly once" counts each source record once
  per path to each committing sink; without FLIP-147 a two-phase-commit sink loses the records
  after its last checkpoint (no final checkpoint commits them).

exit codes: 0 the job finished; 1 the job did not finish (it failed for good after its
  restarts, or the JVM died or timed out: one line on stderr); 2 a malformed graph, a bad
  option, or no JDK / no Flink jars (the line says what to install), a release that is not
  supported or cannot be installed (offline, no such release), a --flink-home without jars.
"""

_TASK = re.compile(r"(?P<vertex>.+):(?P<subtask>[0-9]{1,6})")


def held_tasks(text: str) -> tuple:
    """argparse type of --jm-failover: ``VERTEX:SUBTASK[,VERTEX:SUBTASK...]``."""
    tasks = []
    for part in text.split(","):
        match = _TASK.fullmatch(part.strip())
        if not match:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not VERTEX:SUBTASK (e.g. map:1: subtask 1 of map is held while the JobManager fails over)")
        tasks.append((match["vertex"], int(match["subtask"])))
    return tuple(tasks)


_FAIL = re.compile(r"(?P<vertex>.+):(?P<subtask>[0-9]{1,6})@(?P<record>[0-9]{1,12})")


def fail_point(text: str, how: str = "task"):
    """argparse type of --fail: ``VERTEX:SUBTASK@RECORD`` (the vertex id may hold ':' and '@')."""
    from flipcheck.flink.engine import FailAt

    match = _FAIL.fullmatch(text)
    if not match or int(match["record"]) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not VERTEX:SUBTASK@RECORD (e.g. map:0@10: subtask 0 of map fails at its 10th record)")
    return FailAt(match["vertex"], int(match["subtask"]), int(match["record"]), how)


def _fault_spec(text: str):
    """argparse type of --fault: a spec of :mod:`flipcheck.flink.faults`."""
    from flipcheck.flink.faults import FaultSpecError, parse_fault

    try:
        return parse_fault(text)
    except FaultSpecError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


_fault_spec.__name__ = "fault spec"


def _records_value(text: str) -> tuple:
    """argparse type of --records: ``N`` or ``VERTEX=N`` (:func:`flipcheck.flink.engine.parse_records`)."""
    from flipcheck.flink.engine import parse_records

    try:
        return parse_records(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--records ")) from None


_records_value.__name__ = "records"


def _fail_point_by(how: str):
    def parse(text: str):
        return fail_point(text, how)
    parse.__name__ = "fail point"   # argparse names the type in its error
    return parse


def add_release_options(parser) -> None:
    """``--flink VERSION`` and ``--flink-home DIR`` (mutually exclusive) on ``parser``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--flink", metavar="VERSION",
                       help="the Flink release, 1.14.0 to 2.3.x (default: the flink extra's, 2.3.0); "
                            "installed into ~/.cache/flipcheck/releases on first use")
    group.add_argument("--flink-home", metavar="DIR",
                       help="your own Flink build: a distribution with lib/flink-dist*.jar, or that lib folder")


def chosen_release(args):
    """The :class:`~flipcheck.flink.releases.FlinkInstall` the options name (installing it, with
    one progress line on stderr); :class:`~flipcheck.errors.UsageError` naming the option."""
    from flipcheck.flink.releases import resolve_flink

    def progress(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    return resolve_flink(getattr(args, "flink", None), getattr(args, "flink_home", None), progress=progress)


def configure(parser) -> None:
    from flipcheck.cli.types import bounded_int

    commands = parser.add_subparsers(dest="flink_command", metavar="ACTION", required=True,
                                     parser_class=type(parser))
    from flipcheck.flink.faults import describe_kinds

    run_parser = commands.add_parser("run", help="run GRAPH.json as a Flink job",
                                     description=RUN_DESCRIPTION + describe_kinds(),
                                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run_parser.add_argument("graph", metavar="GRAPH.json", help="job-graph file (docs/graph-format.md)")
    run_parser.add_argument("--out", required=True, metavar="DIR", help="directory for the log, plan, output and run.json")
    run_parser.add_argument("--mode", default="aligned", choices=("aligned", "unaligned", "at-least-once"),
                            help="checkpointing mode: %(choices)s (default: %(default)s)")
    run_parser.add_argument("--records", type=_records_value, action="append", metavar="[VERTEX=]N",
                            help="records per source subtask, overriding the graph's \"records\": N for every "
                                 "source, VERTEX=N for that source (repeatable; a campaign ends a source before "
                                 "the first checkpoint with VERTEX=1) (default: the graph's, else 50)")
    run_parser.add_argument("--interval-ms", type=bounded_int(10, 3_600_000), default=100, metavar="N",
                            help="checkpoint interval in milliseconds, 10..3,600,000 (default: %(default)s)")
    faults = run_parser.add_mutually_exclusive_group()
    faults.add_argument("--fail", type=fail_point, metavar="VERTEX:SUBTASK@RECORD",
                        help="throw once in that subtask when it handles its RECORD-th record (from 1); "
                             "the job restarts from its latest checkpoint")
    faults.add_argument("--lose-taskmanager", dest="fail", type=_fail_point_by("taskmanager"),
                        metavar="VERTEX:SUBTASK@RECORD",
                        help="with --local-recovery: at that point terminate the TaskManager the subtask runs on "
                             "(its local copies go with it) and start a new one")
    faults.add_argument("--damage-local-copy", dest="fail", type=_fail_point_by("damage-local-copy"),
                        metavar="VERTEX:SUBTASK@RECORD",
                        help="with --local-recovery: at that point delete every file of the local copies, "
                             "then throw (restores must fall back to the primary copy)")
    run_parser.add_argument("--fault", action="append", default=[], type=_fault_spec,
                            metavar="KIND:VERTEX:SUBTASK[@AT][=VALUE]",
                            help="a fault at a protocol point, repeatable, added to the graph's \"faults\"; at most "
                                 "3 a run with --fail and its kin (see FAULTS below)")
    run_parser.add_argument("--local-recovery", action="store_true",
                            help="task-local recovery on, file-system checkpoint storage, two TaskManagers")
    run_parser.add_argument("--fail-enumerator", metavar="VERTEX",
                            help="the split enumerator of source VERTEX (a vertex with \"splits\", "
                                 "docs/graph-format.md) throws once, before it hands out its middle split: "
                                 "a global failover")
    run_parser.add_argument("--drop-split-event", metavar="VERTEX",
                            help="the RPC carrying the middle split of source VERTEX (a vertex with \"splits\") to "
                                 "its reader fails once, as a lost RPC (Flink 2.x): Flink fails that reader over")
    run_parser.add_argument("--no-checkpoints-after-tasks-finished", action="store_true",
                            help="turn FLIP-147 off (execution.checkpointing.checkpoints-after-tasks-finish: false)")
    run_parser.add_argument("--seed", type=bounded_int(0, 2**63 - 1), default=0, metavar="N",
                            help="seeds the sources' pacing jitter and the hash keys (default: %(default)s)")
    run_parser.add_argument("--batch", action="store_true",
                            help="a BATCH job with FLIP-383 batch job recovery on (Flink 2.0+; see above)")
    run_parser.add_argument("--jm-failover", type=held_tasks, metavar="VERTEX:SUBTASK,...",
                            help="with --batch: hold these tasks, fail the JobManager over while the job waits on them")
    run_parser.add_argument("--lose-task-manager", action="store_true",
                            help="with --jm-failover: replace the TaskManager while no JobManager runs")
    run_parser.add_argument("--delete-shuffle-files", action="store_true",
                            help="with --jm-failover: delete the blocking partitions' files while no JobManager runs")
    add_release_options(run_parser)
    releases_parser = commands.add_parser("releases", help="the Flink releases installed and installable",
                                          description=RELEASES_DESCRIPTION, epilog=RELEASES_EPILOG,
                                          formatter_class=argparse.RawDescriptionHelpFormatter)
    releases_parser.add_argument("--json", action="store_true", help="one JSON object")
    releases_parser.add_argument("--install", metavar="VERSION,...",
                                 help="install these releases into the cache first (as --flink VERSION would), "
                                      "then list")
    from flipcheck.cli import flink_campaign, flink_component, flink_matrix

    flink_matrix.configure(commands)
    flink_campaign.configure(commands, add_release_options)
    flink_component.configure(commands, add_release_options)


def batch_run(args):
    """The :class:`~flipcheck.flink.engine.BatchRun` of --batch, --jm-failover and
    --lose-task-manager (None without --batch); :class:`UsageError` for one without the other."""
    from flipcheck.errors import UsageError
    from flipcheck.flink.engine import BatchRun

    if not args.batch:
        for option, given in (("--jm-failover", args.jm_failover), ("--lose-task-manager", args.lose_task_manager),
                              ("--delete-shuffle-files", args.delete_shuffle_files)):
            if given:
                raise UsageError(f"{option}: only with --batch (a batch job's JobManager failover)")
        return None
    if args.fail is not None:
        raise UsageError("--fail: not with --batch (a batch run's fault is --jm-failover)")
    return BatchRun(hold=args.jm_failover or (), failover=args.jm_failover is not None,
                    lose_task_manager=args.lose_task_manager, delete_shuffle_files=args.delete_shuffle_files)


def _split_faults(args, graph) -> dict | None:
    """The split-assignment faults of --fail-enumerator and --drop-split-event (Faults.java's);
    UsageError naming the option when its vertex is no source with "splits"."""
    from flipcheck.errors import UsageError

    faults = {}
    for option, name, vertex in (("--fail-enumerator", "fail_in_enumerator", args.fail_enumerator),
                                 ("--drop-split-event", "drop_add_split_event", args.drop_split_event)):
        if vertex is None:
            continue
        if vertex not in {v.id for v in graph.vertices} or graph.inputs(vertex) or graph.vertex(vertex).extra.get("splits") is None:
            raise UsageError(f"{option}: {vertex!r} is not a source vertex with \"splits\" (docs/graph-format.md)")
        faults[name] = [vertex]
    return faults or None


def summary_line(result) -> str:
    times = result.times
    return (f"{result.out}: job {result.job_id} {result.status}, {result.checkpoints_completed} checkpoints completed, "
            f"{result.records_committed} records committed (exactly once: {result.records_expected}), "
            f"{times.total:.1f} s (JVM start {times.jvm_start:.1f} s, job {times.job:.1f} s"
            + (f", compile {times.compile:.1f} s" if times.compile else "") + ")")


def _install_releases(listed: str) -> None:
    """--install: each release of the comma-separated list, as --flink VERSION installs it; a
    refusal names --install."""
    from flipcheck.errors import UsageError
    from flipcheck.flink.releases import resolve_flink

    versions = [version.strip() for version in listed.split(",")]
    if not all(versions):
        raise UsageError(f"--install: {listed!r} is not a comma-separated list of releases such as 1.20.0,2.2.1")
    for version in versions:
        try:
            resolve_flink(version, None, progress=lambda line: print(line, file=sys.stderr, flush=True))
        except UsageError as refused:
            raise UsageError("--install" + str(refused).removeprefix("--flink")) from None


def list_releases(args) -> int:
    import json

    from flipcheck.flink.releases import available_releases, installed_releases, venv_flink

    if args.install is not None:
        _install_releases(args.install)
    venv = venv_flink()
    installed = [venv] if venv else []
    installed += [install for install in installed_releases() if venv is None or install.version != venv.version]
    installable, answered = available_releases()
    have = {install.version for install in installed}
    installable = [version for version in installable if version not in have]
    if args.json:
        print(json.dumps({"installed": [install.describe() for install in installed], "installable": installable,
                          "index_answered": answered}, indent=1))
        return 0
    print("installed:" if installed else "installed: none")
    for install in installed:
        print(f"  {install.version:<8} {install.source:<6} {install.lib}")
    where = "" if answered else " (the package index did not answer: flipcheck's own list)"
    print(f"installable with --flink VERSION{where}:")
    print("  " + ", ".join(installable))
    return 0


def run(args) -> int:
    from pathlib import Path

    if args.flink_command == "releases":
        return list_releases(args)
    if args.flink_command == "matrix":
        from flipcheck.cli import flink_matrix

        return flink_matrix.run(args)
    if args.flink_command == "campaign":
        from flipcheck.cli import flink_campaign

        return flink_campaign.run(args, chosen_release)
    if args.flink_command == "component":
        from flipcheck.cli import flink_component

        return flink_component.run(args, chosen_release)

    from flipcheck.cli.types import check_output_dir, one_line
    from flipcheck.errors import InputError, UsageError
    from flipcheck.flink.engine import FailAt, FlinkRunError, run_graph, source_records
    from flipcheck.model.graph_json import GraphFormatError, load_graph

    from flipcheck.flink.faults import FAIL_KINDS, FaultSpecError, graph_faults
    from flipcheck.model.graph_json import decode_json, parse_graph, read_input_file

    try:
        document = decode_json(read_input_file(args.graph))
        graph = parse_graph(document)
        faults = graph_faults(document) + list(args.fault)
    except (GraphFormatError, FaultSpecError) as error:
        raise InputError(args.graph, str(error)) from None
    fails = [fault for fault in faults if fault.kind in FAIL_KINDS]
    if fails and args.fail is None:
        first = fails[0]   # a second one is refused with the others (check_faults)
        args.fail = FailAt(first.vertex, first.subtask, first.at, FAIL_KINDS[first.kind])
        faults.remove(fails[0])
    check_output_dir(args.out, "--out")
    batch = batch_run(args)
    if batch is not None and faults:
        raise UsageError(f"fault {faults[0].spec!r}: not with --batch (a batch job takes no checkpoints; its fault is "
                         "--jm-failover)")
    try:
        flink = chosen_release(args)
        result = run_graph(graph, Path(args.out), mode=args.mode, records=source_records(args.records), interval_ms=args.interval_ms,
                           fail=args.fail, checkpoints_after_tasks_finished=not args.no_checkpoints_after_tasks_finished,
                           seed=args.seed, flink=flink, local_recovery=args.local_recovery, batch=batch,
                           faults=_split_faults(args, graph), points=tuple(faults))
    except FlinkRunError as error:
        sys.stderr.write(one_line(f"flipcheck flink run: {error}") + "\n")
        return 1
    print(summary_line(result))
    if result.status != "FINISHED":
        sys.stderr.write(one_line(f"flipcheck flink run: job {result.job_id} {result.status}: {result.cause or 'no cause given'}") + "\n")
        return 1
    return 0

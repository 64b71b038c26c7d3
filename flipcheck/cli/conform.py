"""``flipcheck conform``: does a real Flink run, read from its logs, conform to the model?"""

from __future__ import annotations

import json
import sys

HELP = "validate a real Flink run's logs against the whole-job model (trace validation)"
DESCRIPTION = """\
Read Flink's own logs of one job (JobManager and TaskManager files, Flink's default log4j layout,
in any order) and the job's plan as the REST API gives it (GET /jobs/<id>/plan), and decide
whether the run is a behaviour of flipcheck's whole-job model (model/protocol, FLIP-147).
Lines are ordered by their timestamps: the files are merged by time, each file keeps its own
order, and lines of the same millisecond come in the order of the files' paths.

Trace validation, as in the TLA+ trace-validation work and CCF's CI: every checkpoint event the
logs show (triggers, trigger RPCs, barriers, acknowledgements, declines, completions, failures,
notifications, end of input, closing, FINISHED switches and reports, failover) is matched to a
model step; the steps the logs cannot show (records, EndOfData and EndOfPartition in channels) are
filled in by a bounded search between events. Runs are not repeatable, so nothing is compared
with one expected trace: the search looks for any behaviour of the model that shows the log.

Besides the model, end-to-end checks read the run directly:
  trigger-plan      the tasks each checkpoint was triggered on = the spec plan on the
                    coordinator's view at that moment (needs TaskExecutor DEBUG lines)
  final-checkpoint  no task FINISHED before a checkpoint it acknowledged was confirmed to it
  ids-in-order      checkpoints triggered one by one, each completed after its trigger,
                    in increasing order
  committed-output  every source record committed exactly once (at least once in
                    at-least-once mode): read from a `flipcheck flink run` directory

Every design whose lines the logs hold is validated as well, each against its own model:
  split-assignment  FLIP-27 (model/split_assignment.py), a run of a source with "splits"
                    (docs/split-assignment.md, "Real Flink runs");
  local-recovery    task-local recovery (model/local_recovery.py), a run with --local-recovery
                    (docs/local-recovery.md, "Real runs");
  batch-recovery    FLIP-383 (model/batch_recovery.py), a --batch run with --jm-failover
                    (docs/batch-recovery.md, "Against real Flink").
The run conforms only when every design does; --design NAME validates one design only.

Next to a plan written by `flipcheck flink run`, conform also reads spec.json and run.json (the
mode, each vertex's sink and union-list-state flags) and output/ (the committed records). A plan
from any other cluster is validated with plain vertices. docs/conformance.md lists the log lines
read, the DEBUG loggers to switch on, every divergence found so far and what validation cannot see.
"""
EPILOG = """\
examples:
  flipcheck flink run examples/graphs/flink/join.json --out run1 && flipcheck conform --plan run1/plan.json run1/flink.log
                                          a real job, then its validation (about 8 s)
  flipcheck conform --plan tests/fixtures/flink_runs/join-race/plan.json tests/fixtures/flink_runs/join-race/flink.log
                                          a stored real run: conforms
  flipcheck conform --protocol pre-flip-147 --plan tests/fixtures/flink_runs/chain-flip147-off/plan.json tests/fixtures/flink_runs/chain-flip147-off/flink.log
                                          FLIP-147 off: the model holds, the sink lost its last
                                          records: exit 1
  flipcheck conform --json --render behaviour.svg --plan tests/fixtures/flink_runs/union-state/plan.json tests/fixtures/flink_runs/union-state/flink.log
  flipcheck conform --coverage 2000 --plan tests/fixtures/flink_runs/matrix-FLINK-25920-1.20.2/plan.json tests/fixtures/flink_runs/matrix-FLINK-25920-1.20.2/flink.log
  flipcheck conform --plan plan.json log/flink-*-standalonesession-*.log log/flink-*-taskexecutor-*.log
                                          your cluster's logs (needs a running Flink job)
  flipcheck conform --protocol examples/user-project/src/my_checkpointing/protocols.py:ForwardPassTrigger --plan tests/fixtures/flink_runs/union-state/plan.json tests/fixtures/flink_runs/union-state/flink.log
                                          against your own subclass of flipcheck.Protocol: conforms
  flipcheck conform --design split-assignment --plan tests/fixtures/flink_runs/splits-reader-failure/plan.json tests/fixtures/flink_runs/splits-reader-failure/flink.log
                                          FLIP-27 split assignment only: a reader failure's resets
                                          and the split given back, against model/split_assignment.py
  flipcheck conform --design split-asignment --plan tests/fixtures/flink_runs/splits-reader-failure/plan.json tests/fixtures/flink_runs/splits-reader-failure/flink.log
                                          exit 2: a misspelt design (the nearest is named)
  flipcheck conform --plan tests/fixtures/flink_runs/local-recovery-taskmanager-loss/plan.json tests/fixtures/flink_runs/local-recovery-taskmanager-loss/flink.log
                                          the protocol and task-local recovery: a TaskManager lost,
                                          one restore from the local copy, one from the primary
  flipcheck conform --design batch-recovery --plan tests/fixtures/flink_runs/batch-failover-some-finished/plan.json tests/fixtures/flink_runs/batch-failover-some-finished/flink.log
                                          FLIP-383: a JobManager failover while some tasks finished
  flipcheck conform --flink-version 1.14.6 --plan tests/fixtures/flink_runs/release-1.14.6-chain/plan.json tests/fixtures/flink_runs/release-1.14.6-chain/flink.log
                                          a MiniCluster log of Flink 1.14.6 (no start-up banner)

output: a summary per design, or with --json one object {"conforms", "events", "checkpoints",
  "first_unexplained": {"file", "line", "event", "why"} | null, "checks": [{"name", "ok",
  "detail"}], "designs": {"protocol" | "split-assignment" | "local-recovery" | "batch-recovery":
  {"conforms", "events", "first_unexplained", "checks"}}, "faults": [{"kind", "task", "at", "line"}]}:
  "faults" lists where each fault of `flink run --fault` struck (its "flipcheck fault" line;
  docs/reference/fault-points.md); the top level is the protocol's, and
  "conforms" holds only when every design present conforms. The first unexplained event is the earliest log line that no behaviour explains
  together with every line before it; a task that finishes too early is reported where it
  finishes, and the why names the later line that shows it still running. --render draws the
  behaviour found as a sequence chart up to that event (outlined red): one lane per Flink task,
  each step with the log lines it explains.

your own protocol: --protocol FILE.py:CLASS (or MODULE:CLASS) validates against your subclass of
  flipcheck.Protocol, loaded as explore's --variant loads it (a bad spec: exit 2, one line).

progress: a search running longer than a few seconds says how far it is on stderr every two
  seconds (observations explained, states so far, states a second, frontier). A second, deeper
  search ("searching again, 24 lines back") starts again from the first line; its states and
  seconds add to the first's.

coverage (--coverage): "coverage": {"covered", "targets", "outside", "missing", "missing_first",
  "target_states", "complete", "abstraction"}: the abstract transitions (docs/coverage.md) of the
  behaviour found that are targets of the run's graph and mode, and those beyond them counted
  apart. --abstraction task (the default) counts each step as the task or coordinator taking it
  sees it; --abstraction job counts the whole job's abstract state (far more targets).

exit codes: 0 the run conforms and every check holds; 1 it does not (the first unexplained event
  and the failing checks say why); 2 an unreadable log or plan, or a bad option (one line).
"""


def configure(parser) -> None:
    from flipcheck.cli.types import bounded_int, variant
    from flipcheck.flink.design_conformance import DESIGN_NAMES
    from flipcheck.properties.protocol_abstraction import ABSTRACTIONS
    from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS

    parser.add_argument("logs", nargs="+", metavar="LOG", help="Flink log files (JobManager and TaskManagers)")
    parser.add_argument("--plan", required=True, metavar="PLAN.json", help="the job's plan: GET /jobs/<id>/plan")
    parser.add_argument("--protocol", default=CORRECT_PROTOCOL, type=variant, metavar="NAME",
                        help=f"protocol variant of the model (default: {CORRECT_PROTOCOL}; one of: {', '.join(PROTOCOLS)}), "
                             "or your own subclass of flipcheck.Protocol as FILE.py:CLASS or MODULE:CLASS, as "
                             "explore's --variant takes it")
    parser.add_argument("--mode", choices=("aligned", "unaligned", "at-least-once"),
                        help="checkpointing mode of the run (default: the flink run directory's, else aligned)")
    parser.add_argument("--flink-version", metavar="X.Y.Z",
                        help="the Flink release that wrote the logs, 1.14 to 2.3 (default: the logs' start-up "
                             "banner's; a MiniCluster log has none: the release its flink run directory's run.json names, else "
                             "the newest format, older ones where unambiguous)")
    parser.add_argument("--design", type=design, metavar="NAME",
                        help="validate one design only: " + ", ".join(DESIGN_NAMES) + " (default: the protocol, "
                             "and every other design whose lines the logs hold)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--render", metavar="FILE.svg", help="draw the behaviour found (sequence chart) into FILE")
    parser.add_argument("--budget", type=bounded_int(1_000, 100_000_000), metavar="STATES",
                        help="model states the search may visit (default: 2,000,000)")
    parser.add_argument("--backtrack", type=bounded_int(1, 10_000), metavar="N",
                        help="observations the search explains again, every way, when it gets stuck (default: 6, "
                             "then 24 within 1,000,000 more states when 6 stops undecided); given, no second "
                             "search, and deeper than 6 it may use the whole --budget. A rejection that says "
                             "\"backtracking stopped\" is undecided: a deeper one settles it")
    parser.add_argument("--frontier", type=bounded_int(100, 10_000_000), metavar="WAYS",
                        help="ways to explain a line the search keeps, at most (default: 5,000). A verdict reached "
                             "after it dropped some says \"undecided\" and where: a larger one may settle it")
    parser.add_argument("--coverage", nargs="?", const=20_000, type=bounded_int(100, 10_000_000), metavar="STATES",
                        help="also report the coverage of the model by the behaviour found: covered / targets of "
                             "the run's graph and mode (the model's exploration, its first STATES states, default "
                             "20,000), the run's transitions outside them, the nearest targets missed "
                             "(docs/coverage.md); in --json, \"coverage\"")
    parser.add_argument("--abstraction", choices=ABSTRACTIONS, default=None,
                        help="with --coverage: the abstraction coverage is counted in: task (each step as the "
                             "task or coordinator taking it sees it; the default) or job (the whole job's state)")


# A search shorter than this stays quiet.
PROGRESS_AFTER_SECONDS = 2.0


def progress_line(p) -> str:
    """The stderr line of a long search (a :class:`~flipcheck.properties.protocol_trace_validation.SearchProgress`).

    >>> from flipcheck.properties.protocol_trace_validation import SearchProgress
    >>> progress_line(SearchProgress(93, 143, 120_000, 812, 5.0))
    'flipcheck conform: searching: 93 of 143 observations explained, 120,000 states so far (24,000/s), frontier 812, 5 s'
    >>> progress_line(SearchProgress(2, 143, 130_000, 9, 6.0, search="again, 24 lines back"))[:60]
    'flipcheck conform: searching again, 24 lines back: 2 of 143 '
    """
    search = f" {p.search}" if p.search else ""
    return (f"flipcheck conform: searching{search}: {p.explained:,} of {p.total:,} observations explained, {p.states:,} states "
            f"so far ({p.states / max(p.seconds, 1e-9):,.0f}/s), frontier {p.frontier:,}, {p.seconds:.0f} s")


def run(args) -> int:
    from flipcheck.flink.conform import conform_files

    def progress(p) -> None:
        if p.seconds >= PROGRESS_AFTER_SECONDS:
            sys.stderr.write(progress_line(p) + "\n")

    if args.abstraction is not None and args.coverage is None:
        from flipcheck.errors import UsageError

        raise UsageError("--abstraction: it says how --coverage counts, and --coverage is not given")
    if args.render and args.design not in (None, "protocol"):
        from flipcheck.errors import UsageError

        raise UsageError(f"--render draws the protocol's behaviour, and --design {args.design} leaves the protocol out")
    result = conform_files(args.plan, args.logs, protocol=args.protocol, mode=args.mode, budget=args.budget,
                           flink_version=args.flink_version, progress=progress, design=args.design,
                           backtrack=args.backtrack, frontier=args.frontier)
    if args.render:
        from flipcheck.flink.conform import render_conformance

        render_conformance(result, args.render)
    document = result.as_json()
    if args.coverage is not None:
        document["coverage"] = _coverage(result, args.coverage, args.abstraction)
    if args.json:
        sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_summary(result))
        if args.coverage is not None:
            sys.stdout.write(_coverage_lines(document["coverage"]))
    return 0 if result.conforms else 1


def _coverage(result, max_states: int, abstraction: str | None) -> dict | None:
    """conform's coverage of the model (None: the protocol was not validated, --design)."""
    from flipcheck.flink.campaign import conform_coverage

    if result.job is None or result.verdict is None:
        return None
    return conform_coverage(result, max_states, abstraction=abstraction)


def _coverage_lines(coverage: dict | None) -> str:
    if coverage is None:
        return "coverage: none (the protocol was not validated)\n"
    cap = "" if coverage["complete"] else f", the exploration cut at {coverage['target_states']:,} states"
    lines = [f"coverage: {coverage['covered']:,} of {coverage['targets']:,} targets{cap}; "
             f"{coverage['outside']:,} transitions of the run outside them (beyond the bound)"]
    lines += [f"  missed: {line}" for line in coverage["missing_first"][:5]]
    return "\n".join(lines) + "\n"


def design(text: str) -> str:
    """argparse type of --design: a design conform knows (a misspelt one: the nearest, exit 2)."""
    import argparse

    from flipcheck.flink.conform_designs import design_name

    try:
        return design_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _summary(result) -> str:
    formats = f" (Flink {result.release} log formats)" if result.release else ""
    lines = [f"{'conforms' if result.conforms else 'does NOT conform'}: {result.events:,} events read "
             f"({result.unrecognised:,} other log entries skipped)" + formats]
    for name, found in result.designs.items():
        what = (f"{len(result.observations):,} matched against the {result.job.protocol.name} model, "
                f"{result.checkpoints} checkpoints") if name == "protocol" else f"{found.events:,} events"
        lines.append(f"{name}: {'conforms' if found.conforms else 'does NOT conform'}: {what}")
        for check in found.checks:
            lines.append(f"  {'ok  ' if check.ok else 'FAIL'} {check.name:<17} {check.detail}")
        first = found.first_unexplained
        if first is not None:
            lines.append(f"  first unexplained: {first['file']}:{first['line']}: {first['event']}")
            lines.append(f"    why: {first['why']}")
    for fault in getattr(result, "faults", ()):
        lines.append(f"fault {fault['kind']}: {fault['task'] or ('the JVM' if fault['kind'] == 'cpu-contention' else 'the job')}" + (f", {fault['at']}" if fault['at'] else "")
                     + f" ({fault['line']})")
    return "\n".join(lines) + "\n"

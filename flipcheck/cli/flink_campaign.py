"""``flipcheck flink campaign``: real Flink runs whose faults the model chooses, on Spark, with
coverage of the model (issue 26)."""

from __future__ import annotations

import argparse
import sys

HELP = "run many real jobs with faults the model picks, validate each, and measure coverage of the model"
DESCRIPTION = """\
flipcheck flink campaign runs real Flink jobs of each GRAPH in each --modes mode, validates
every run with conform, and measures how much of the model the runs cover. The targets of a
graph and mode are the abstract transitions (docs/coverage.md) of the model's own exploration at
a small bound: the model conform validates with (Flink's periodic timer, no records) with one
failover, its first --target-states states breadth-first. A run covers the transitions of the
behaviour conform found for it; its transitions beyond the bound (deeper than the explored
prefix, or a second failover) are counted apart as "outside", never as covered.

Runs go in rounds. Guided runs (--guided) take their faults from the model's shortest path to a
target no run covered yet (which task fails, at which moment: before a checkpoint, while one is
pending, after one, after its input ended), or else mutate the faults of runs that covered
something new (ModelFuzz); the first run of each graph and mode has none. A path whose source
ends its input before the first checkpoint cuts that source to one record (--records VERTEX=1),
which is not a fault. Random runs (--random) take random faults and cut a random source short in
a third of the runs; --compare gives half the runs to each, so coverage is compared in the same
budget. Faults are written as `flipcheck flink run` takes them (--fail VERTEX:SUBTASK@RECORD).

Each round is a sweep on Spark (local[*] or --master URL), one MiniCluster per Spark task;
rerunning into the same DIR with the same options resumes: rounds already planned are read back
and only runs missing are run. A case id (flink-campaign:ROUND-TOKEN:N) holds the run's graph,
mode and faults.
"""
EPILOG = """\
examples:
  flipcheck flink campaign examples/graphs/flink/chain.json --modes aligned --runs 2 --target-states 2000 --out out/c1   # two real runs, a minute or two
  flipcheck flink campaign examples/graphs/flink/chain.json examples/graphs/flink/join.json --runs 40 --compare --master spark://HOST:7077 --out out/c2   # needs a Spark cluster
  flipcheck flink campaign examples/graphs/flink/*.json --runs 1000 --compare --master spark://HOST:7077 --out out/c3   # needs a Spark cluster

output in DIR: campaign.json {"runs", "validated", "conforming", "coverage": {"covered", "targets",
  "random_covered"}, "jobs_per_minute", "unexplained": [{"case", "why", "run"}]} (and beside
  them: "outside", "curves", "pairs", "missing_first", "run_list"), campaign.html (the coverage
  plot of each arm against runs, the divergences, the nearest targets not reached), graphs/,
  rounds/NNN.token (a round's cases) and rounds/NNN/ (its sweep; runs/ holds each run's folder:
  flink.log, plan.json, output/, and behaviour.svg for a run no behaviour explains).

exit codes: 0 every run conforms; 1 some run is unexplained (or could not be validated);
  2 bad input (a graph, an option, an unusable DIR, no JDK).
"""


def configure(commands, add_release_options) -> None:
    from flipcheck.cli.types import bounded_int

    parser = commands.add_parser("campaign", help=HELP, description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graphs", nargs="+", metavar="GRAPH.json", help="job-graph files (docs/graph-format.md)")
    parser.add_argument("--runs", required=True, type=bounded_int(1, 1_000_000), metavar="N",
                        help="real runs in all (with --compare, half guided and half random)")
    arms = parser.add_mutually_exclusive_group()
    arms.add_argument("--guided", dest="arms", action="store_const", const=("guided",),
                      help="faults chosen by the model (the default)")
    arms.add_argument("--random", dest="arms", action="store_const", const=("random",), help="random faults")
    arms.add_argument("--compare", dest="arms", action="store_const", const=("guided", "random"),
                      help="half the runs guided, half random: random_covered in campaign.json")
    parser.add_argument("--modes", default="aligned,unaligned,at-least-once", metavar="LIST",
                        help="checkpointing modes, comma-separated (default: %(default)s)")
    parser.add_argument("--seed", default="1", metavar="S", help="the seed of the random choices (default: 1)")
    parser.add_argument("--round-size", type=bounded_int(1, 1000), default=2, metavar="K",
                        help="runs of each arm planned at once, run side by side (default: 2, for local[2])")
    parser.add_argument("--target-states", type=bounded_int(100, 10_000_000), metavar="STATES",
                        help="model states explored for the targets of each graph and mode (default: 20,000)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the campaign, its rounds and runs go")
    parser.add_argument("--master", metavar="URL", help="Spark master (default: local[*])")
    parser.add_argument("--json", action="store_true", help="print campaign.json instead of the summary")
    add_release_options(parser)


def _modes(text: str) -> list[str]:
    from flipcheck.errors import UsageError
    from flipcheck.flink.engine import MODES

    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise UsageError("--modes: give a comma-separated list of modes")
    for mode in modes:
        if mode not in MODES:
            raise UsageError(f"--modes: {mode!r} is not a mode ({', '.join(MODES)})")
    return list(dict.fromkeys(modes))


def run(args, chosen_release) -> int:
    import json
    from pathlib import Path

    from flipcheck.cli.types import check_output_dir
    from flipcheck.errors import InputError, UsageError
    from flipcheck.flink.engine import java_tools
    from flipcheck.model.graph_json import GraphFormatError
    from flipcheck.sweep.campaign import run_campaign
    from flipcheck.sweep.runner import SweepRefused

    modes = _modes(args.modes)
    arms = args.arms or ("guided",)
    if args.runs < len(arms):
        raise UsageError(f"--runs: {args.runs} run(s) cannot be shared by {len(arms)} arms; give at least {len(arms)}")
    java_tools()
    install = None
    if args.flink is not None or args.flink_home is not None:
        install = chosen_release(args)
    check_output_dir(args.out, "--out")
    try:
        document = run_campaign(args.graphs, args.runs, Path(args.out), arms=arms, modes=modes, seed=args.seed,
                                master=args.master, round_size=args.round_size, target_states=args.target_states,
                                own_build=install,
                                progress=lambda done, total: sys.stderr.write(f"flipcheck flink campaign: {done}/{total} runs\n"))
    except GraphFormatError as error:
        raise InputError("GRAPH", str(error)) from None
    except SweepRefused as error:
        raise UsageError(f"--out: {error}") from None
    if args.json:
        print(json.dumps(document, indent=1))
    else:
        coverage = document["coverage"]
        random = "" if coverage["random_covered"] is None else f" (random: {coverage['random_covered']})"
        print(f"{document['runs']} runs, {document['validated']} validated, {document['conforming']} conforming; "
              f"covered {coverage['covered']}/{coverage['targets']} targets{random}, {document['outside']} transitions "
              f"outside them; {document['jobs_per_minute']} jobs a minute")
        for unexplained in document["unexplained"]:
            print(f"unexplained {unexplained['case']}: {unexplained['why']} ({unexplained['run']})")
        print(f"report: {Path(args.out) / 'campaign.html'}")
    return 0 if document["conforming"] == document["runs"] else 1

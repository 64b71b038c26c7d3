"""``flipcheck verify``: run one suite's properties with all its drivers."""

from __future__ import annotations

import json
import sys

from flipcheck.designs import designs_help

HELP = "run one suite's properties with all its drivers (hypothesis, seeded, z3, exploration)"
ABOUT = """\
Run every property of one suite with every driver that suite has, within a time budget, and
report per property and driver how many cases were checked and how many violated it. For each
violated property, print its shortest counterexample (a trace step by step, or the minimised
case), its picture and a replay command that works from any folder: the files it reads (the job
graph, a copy of your --variant file) are saved in --out (default .flipcheck/verify-SUITE).

"""


def description() -> str:
    """The description, listing the designs registered when the parser is built."""
    return ABOUT + designs_help()


EPILOG = """\
examples:
  flipcheck verify --suite plan
  flipcheck verify --suite plan --variant wiki-b --json      a buggy variant: violations, exit 1
  flipcheck verify --suite protocol --variant cancel-pending-on-finish --budget 4 --out out/verify
                                          each violated property's shortest trace and its replay, exit 1

output (--json): {"suite": NAME, "properties": [{"name", "cases", "violations", "driver"}], "violations": n,
                 "coverage": {"rules": {"J1": n, ...}, "never_fired": [...], "not_explored": {...},
                              "configurations": n, "of": n} or null,
                 "counterexamples": [{"property", "message", "driver", "case_id", "size", "size_unit",
                                      "minimised", "json", "graph", "picture", "replay", ...}],
                 "without_counterexample": [NAME, ...], "out": DIR or null (no counterexample saved)}
counterexamples: one per violated property: the first case a driver found (an exploration's trace,
a seeded case, a hypothesis case), minimised for that property (a shortest trace, fewest tasks);
"minimised" is the case as JSON, a trace's steps as {"actor", "action", "checkpoint_id", "sentence",
"loop", ...} (docs/protocol.md, "Reading a trace"). "replay" is a command line with absolute paths
that shows the violation again from any folder, after your file changed (a copy of it and the job
graph are saved in --out): flipcheck explore GRAPH.json ... --property NAME (protocol), flipcheck
barriers ... (barriers), else flipcheck replay CASE_ID (a seeded case or an explored configuration
by its id, a hypothesis case by the choices it drew: SUITE:choices-...:0); null for an exploration
below the pinned bounds (approximate-recovery under a 20 s budget): its case is shown. A property
only a stateful run or a z3 proof violated has no case to show ("without_counterexample").
coverage: the steps the exploration driver took per rule of the model, over the configurations it
explored within the budget (protocol, split-assignment and batch-recovery, whose explorers label
steps by rule; the other designs report null).
exit codes: 0 no violation, 1 a violation, 2 bad option or a suite not available.
"""


def configure(parser) -> None:
    from flipcheck.cli.types import seconds, variant
    from flipcheck.designs import DESIGNS

    parser.add_argument("--suite", required=True, choices=list(DESIGNS), metavar="NAME", help="one of: %(choices)s")
    parser.add_argument("--budget", type=seconds, default=20.0, metavar="SECONDS", help="time budget, at most 86,400 (default: %(default)s)")
    parser.add_argument("--variant", type=variant, metavar="NAME",
                        help="check a named variant (algorithm, handler, protocol variant, mutant) instead of the engine's, "
                             "or your own subclass of the suite's base class: FILE.py:CLASS or MODULE:CLASS "
                             "(runs that file's code; docs/architecture.md)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="where each violated property's counterexample (JSON, picture, job graph), a copy of "
                             "your --variant file and verify.json are saved (default: .flipcheck/verify-SUITE in "
                             "the current folder; kept across runs)")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def run(args) -> int:
    from pathlib import Path

    from flipcheck.cli.types import check_output_dir
    from flipcheck.errors import InputError, UsageError
    from flipcheck.designs import DesignUnavailable, verify_design
    from flipcheck.designs.counterexamples import counterexample_lines, default_folder
    from flipcheck.reference_impl.user_variants import UserVariantError, failure_in_variant

    if args.out is not None:
        check_output_dir(args.out, "--out")  # said before the budget is spent, not after it
    out = Path(args.out) if args.out is not None else default_folder("verify", args.suite)
    try:
        report = verify_design(args.suite, args.budget, args.variant, out=out)
    except DesignUnavailable as error:
        raise UsageError(str(error)) from None
    except UserVariantError as error:
        raise UsageError(f"--variant {error}") from None
    except (KeyError, ValueError) as error:
        if failure_in_variant(error):    # the variant's own code raised it: say where, not "unknown name"
            raise
        if args.variant:
            raise UsageError(f"--variant: {error.args[0] if error.args else error}") from None
        raise
    except OSError as error:  # --out cannot be written
        raise InputError(str(out), error.strerror or str(error)) from None
    report["out"] = str(out.resolve()) if report["counterexamples"] else None
    if report["counterexamples"]:  # the report beside the files its replays read
        (out / "verify.json").write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        print(json.dumps(report))
    else:
        print(f"suite {report['suite']}" + (f" (variant {args.variant})" if args.variant else ""))
        print(f"  {'property':<45} {'driver':<11} {'cases':>9} {'violations':>10}")
        for row in report["properties"]:
            print(f"  {row['name']:<45} {row['driver']:<11} {row['cases']:>9} {row['violations']:>10}")
        coverage = report.get("coverage")
        if coverage is None:
            print("rule coverage: not counted for this design")
        else:
            fired = sum(1 for n in coverage["rules"].values() if n)
            print(f"rule coverage: {fired} of {len(coverage['rules'])} rules fired over {coverage['configurations']} "
                  f"of {coverage['of']} exploration configurations"
                  + (f"; never fired: {', '.join(coverage['never_fired'])}" if coverage["never_fired"] else "")
                  + (f"; not explorable: {', '.join(coverage['not_explored'])}" if coverage["not_explored"] else ""))
        for entry in report["counterexamples"]:
            print("\n".join(counterexample_lines(entry, out)))
        for prop in report["without_counterexample"]:
            print(f"counterexample of {prop}: none kept (only drivers that keep no case found it: "
                  f"a stateful run, a proof)")
        print(f"{report['violations']} violations" + (f"; counterexamples in {report['out']}" if report["out"] else ""))
    sys.stdout.flush()
    return 1 if report["violations"] else 0

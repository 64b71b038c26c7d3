"""``flipcheck mutants``: hunt every mutant (historical bug or rejected design) with the suite."""

from __future__ import annotations

import json
import statistics
import sys

HELP = "hunt every mutant (real Flink bugs, rejected designs) and report the kill rate"
DESCRIPTION = """\
Each mutant re-creates one real bug (its FLINK issue) or a design the seeds reject, as a named
variant of a reference implementation. For each, the suite's drivers run cheapest first
(seeded generator, hypothesis, z3, exploration, sweep) until the first property violation or
the budget, and the detection is reported: property, driver, cases to detection, seconds, and
the size of the counterexample (tasks or trace steps).
"""
EPILOG = """\
examples:
  flipcheck mutants                         every mutant, a table and the kill rate
  flipcheck mutants --only wiki-b --json    one mutant, JSON
  flipcheck mutants --suite barriers --budget 5
                                            the barrier handler's mutants, at most 5 s each
  flipcheck mutants --gallery docs          also write docs/mutants.md and docs/img/mutant-*.svg

output (--json): {"mutants": [{"id", "flink_issue", "description", "caught", "property", "driver",
                  "cases_to_detection", "seconds", "counterexample_size"}], "kill_rate": x}
exit codes: 0 every mutant caught, 1 a mutant survived, 2 bad option.
"""


def configure(parser) -> None:
    from flipcheck.cli.types import name, seconds

    parser.add_argument("--json", action="store_true", help="one JSON object")
    # A hunt stops at its first violation, so the budget is spent only by a mutant that survives;
    # a generous default keeps a busy machine from reporting a slow catch as a survivor (the
    # slowest, flink-before-22863, took 53 s under a load of ~5 against 14 s idle).
    parser.add_argument("--budget", type=seconds, default=120.0, metavar="SECONDS",
                        help="budget per mutant: wall-clock seconds, spent only by a mutant that survives; at most 86,400 "
                             "(default: %(default)s)")
    parser.add_argument("--only", type=name, metavar="ID", action="append", help="hunt only this mutant (repeatable)")
    parser.add_argument("--suite", type=name, metavar="NAME", help="hunt only the mutants of this suite")
    parser.add_argument("--gallery", metavar="DIR", help="also write DIR/mutants.md with a picture of each counterexample")


def run(args) -> int:
    from flipcheck.cli.types import check_output_dir
    from flipcheck.errors import UsageError
    from flipcheck.designs.mutants import catalogue, hunt, write_gallery

    if args.only and args.suite:
        raise UsageError("give either --only ID or --suite NAME, not both")
    if args.gallery is not None:
        check_output_dir(args.gallery, "--gallery")  # before the hunt, not after it
    mutants = catalogue()
    selected = list(mutants.values())
    if args.only:
        unknown = [m for m in args.only if m not in mutants]
        if unknown:
            raise UsageError(f"--only: unknown mutant {unknown[0]!r} (see flipcheck mutants --json for the ids)")
        selected = [mutants[m] for m in args.only]
    if args.suite:
        suites = sorted({m.suite for m in mutants.values()})
        if args.suite not in suites:
            raise UsageError(f"--suite: unknown suite {args.suite!r} (expected one of {', '.join(suites)})")
        selected = [m for m in selected if m.suite == args.suite]
    if not selected:  # never "kill rate 100% (0/0)"
        raise UsageError("no mutant matches the options")

    rows, detections = [], []
    if not args.json:
        print(f"{'mutant':<38} {'issue':<12} {'caught':<6} {'by property':<42} {'driver':<10} {'cases':>6} {'s':>6} {'size':>5}")
    for mutant in selected:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\033[K  hunting {mutant.id} (budget {args.budget:g} s)...")
            sys.stderr.flush()
        found = hunt(mutant, args.budget)
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
        row = {
            "id": mutant.id, "flink_issue": mutant.flink_issue, "description": mutant.description,
            "caught": found.caught, "property": found.property, "driver": found.driver,
            "cases_to_detection": found.cases_to_detection, "seconds": round(found.seconds, 3),
            "counterexample_size": found.counterexample_size,
        }
        rows.append(row)
        detections.append((mutant, found))
        if not args.json:
            print(f"{mutant.id:<38} {mutant.flink_issue or '-':<12} {'yes' if found.caught else 'NO':<6} "
                  f"{found.property or '-':<42} {found.driver or '-':<10} {found.cases_to_detection or '-':>6} "
                  f"{found.seconds:>6.2f} {found.counterexample_size or '-':>5}")
            sys.stdout.flush()
    if args.gallery:
        page = write_gallery(detections, args.gallery)
        sys.stderr.write(f"gallery: {page}\n")
    kill_rate = sum(r["caught"] for r in rows) / len(rows)
    if args.json:
        print(json.dumps({"mutants": rows, "kill_rate": kill_rate}))
    else:
        times = [r["seconds"] for r in rows if r["caught"]]
        median = f", median time to detection {statistics.median(times):.2f} s" if times else ""
        print(f"kill rate {kill_rate:.0%} ({sum(r['caught'] for r in rows)}/{len(rows)}){median}")
    return 0 if all(r["caught"] for r in rows) else 1

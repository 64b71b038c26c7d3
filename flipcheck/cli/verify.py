"""``flipcheck verify``: run one suite's properties with all its drivers."""

from __future__ import annotations

import json
import sys

from flipcheck.designs import designs_help

HELP = "run one suite's properties with all its drivers (hypothesis, seeded, z3, exploration)"
ABOUT = """\
Run every property of one suite with every driver that suite has, within a time budget, and
report per property and driver how many cases were checked and how many violated it.

"""


def description() -> str:
    """The description, listing the designs registered when the parser is built."""
    return ABOUT + designs_help()


EPILOG = """\
examples:
  flipcheck verify --suite plan
  flipcheck verify --suite plan --variant wiki-b --json      a buggy variant: violations, exit 1

output (--json): {"suite": NAME, "properties": [{"name", "cases", "violations", "driver"}], "violations": n,
                 "coverage": {"rules": {"J1": n, ...}, "never_fired": [...], "not_explored": {...},
                              "configurations": n, "of": n} or null}
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
    parser.add_argument("--json", action="store_true", help="one JSON object")


def run(args) -> int:
    from flipcheck.errors import UsageError
    from flipcheck.designs import DesignUnavailable, verify_design
    from flipcheck.reference_impl.user_variants import UserVariantError

    try:
        report = verify_design(args.suite, args.budget, args.variant)
    except DesignUnavailable as error:
        raise UsageError(str(error)) from None
    except UserVariantError as error:
        raise UsageError(f"--variant {error}") from None
    except (KeyError, ValueError) as error:
        if args.variant:
            raise UsageError(f"--variant: {error.args[0] if error.args else error}") from None
        raise
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
        print(f"{report['violations']} violations")
    sys.stdout.flush()
    return 1 if report["violations"] else 0

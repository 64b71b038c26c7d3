"""``flipcheck replay``: re-run one case of a sweep locally, print the verdict, draw it."""

from __future__ import annotations

import json
import sys

HELP = "re-run one sweep case from its id (SUITE:SEED:INDEX), print the verdict, draw it"
DESCRIPTION = """\
Regenerate the case a sweep names by its id -- the id column of cases.parquet, the case_id of a
counterexample in summary.json -- check it with the suite's properties for the engine's
algorithm (or --algorithm / --variant NAME), print the verdict and the case, and draw it.

Case ids: SUITE:SEED:INDEX for random cases (plan:42:17), SUITE:exhaustive-...:INDEX for the
exhaustive spaces (plan:exhaustive-v4-p3:1234 is a topology checked for every state assignment;
the picture then shows the failing assignment), and SUITE:choices-N.N...:0 for a case hypothesis
found in `verify` (the answers it drew, recorded: plan:choices-3.1.0...:0). The same id gives the
same case on any machine, as long as the generator has not changed.
"""
EPILOG = """\
output: the verdict line, the violations, and the case as JSON (a job graph in the GRAPH.json
format that `plan`, `prove` and `render` accept; or a barrier configuration with its events and
the `flipcheck barriers` command that replays them). With --json one object:
  {"id", "suite", "algorithm", "shape", "size", "outcome", "violations": [{"property", "message"}],
   "assignments", "method", "case", "picture"}

examples:
  flipcheck replay plan:42:17
  flipcheck replay plan:1:4711 --algorithm wiki-b --minimise --render wiki-b.svg     wiki-b's violation, exit 1
  flipcheck replay barriers:3:99 --variant eop-not-aligned

exit codes: 0 the case satisfies every property, 1 a property is violated, 2 bad case id or option.
"""


def configure(parser) -> None:
    from flipcheck.cli.types import variant

    parser.add_argument("case_id", metavar="CASE_ID", help="SUITE:SEED:INDEX as a sweep reports it")
    names = parser.add_mutually_exclusive_group()
    names.add_argument("--algorithm", type=variant, metavar="NAME", help="algorithm to check (default: the suite's engine, flink)")
    names.add_argument("--variant", type=variant, metavar="NAME",
                       help="named variant or mutant (same as --algorithm), or your own class: FILE.py:CLASS or "
                            "MODULE:CLASS, as the sweep recorded it (runs that file's code; docs/architecture.md)")
    drawing = parser.add_mutually_exclusive_group()
    drawing.add_argument("--render", metavar="FILE.svg", help="where to draw the case (default: replay-SUITE-SEED-INDEX.svg)")
    drawing.add_argument("--no-render", action="store_true", help="do not draw")
    parser.add_argument("--minimise", action="store_true", help="shrink a violating case (fewest tasks / shortest trace) first")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


def run(args) -> int:
    from flipcheck.errors import UsageError
    from flipcheck.designs import DesignUnavailable
    from flipcheck.designs.suite import resolve_case
    from flipcheck.generators.choices import RecordedChoicesError
    from flipcheck.reference_impl.user_variants import UserVariantError

    try:
        suite, space, index = resolve_case(args.case_id)
        algorithm = suite.check_name(args.algorithm or args.variant or suite.engine)
    except UserVariantError as error:
        raise UsageError(f"{'--variant' if args.variant else '--algorithm'} {error}") from None
    except (ValueError, DesignUnavailable) as error:
        raise UsageError(str(error)) from None
    try:
        case = space.case(index)
    except RecordedChoicesError as error:
        raise UsageError(f"{args.case_id[:80]}: {error}") from None
    outcome = space.check(case, algorithm)
    shown = outcome.counterexample if outcome.counterexample is not None else case
    if args.minimise and outcome.violations:
        shown = suite.minimise(shown, algorithm, outcome.properties[0])
        outcome_shown = space.check(shown, algorithm) if space.size is None else outcome
    else:
        outcome_shown = outcome
    picture = None
    if not args.no_render:
        path = args.render or f"replay-{args.case_id.replace(':', '-')}.svg"
        picture = suite.render(shown, algorithm, path)
    verdict = "violation" if outcome.violations else "ok"
    document = {
        "id": args.case_id, "suite": suite.name, "algorithm": algorithm,
        "shape": space.shape(case), "size": space.magnitude(case), "outcome": verdict,
        "violations": [{"property": v.property, "message": v.message} for v in outcome_shown.violations or outcome.violations],
        "assignments": outcome.assignments, "method": outcome.method,
        "case": suite.describe(shown, algorithm), "picture": picture,
    }
    if args.json:
        print(json.dumps(document))
    else:
        print(f"{args.case_id} ({suite.name}, {algorithm}): {verdict.upper() if outcome.violations else 'ok'}"
              f" -- {document['shape']}, {outcome.assignments:,} assignment(s) checked by {outcome.method}")
        for v in document["violations"]:
            print(f"  {v['property']}: {v['message']}")
        label = "minimised case" if args.minimise and outcome.violations else "case"
        print(f"{label}: {json.dumps(document['case'])}")
        if picture:
            print(f"picture: {picture}")
    sys.stdout.flush()
    return 1 if outcome.violations else 0

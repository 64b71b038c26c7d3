"""``flipcheck flink matrix``: catalogued Flink bugs re-enacted on real releases, on Spark."""

from __future__ import annotations

import argparse
import sys

HELP = "run each catalogued bug's scenario on real Flink releases and compare with JIRA's fix versions"
DESCRIPTION = """\
flipcheck flink matrix runs the scenario of each catalogued Flink bug that a real job can show
(graph, mode, faults, FLIP-147 on or off) on each chosen release, installed on first use, and
validates every run with conform twice: against the correct model (the cell's verdict) and
against the bug's own variant. Rows are bugs, columns releases; a cell is

  conforms         every check holds
  flagged          a check fails: which one, and the first unexplained log line (or why the
                   job did not finish)
  not-applicable   the release lacks a feature the job needs
  error            the run could not be judged (one line says why)

Each cell's expectation comes from the releases JIRA gives as affected and fixed
(docs/reference/fix-versions.md): a release that shipped the bug should be flagged, and explained
by the bug's variant; a release with the fix should conform.

The cells run as a sweep (one MiniCluster per Spark task, local[*] or --master URL), resumable:
rerunning into the same DIR keeps every judged cell. Case ids (flink-matrix:RELEASES~BUGS:N)
replay one cell with `flipcheck replay`.
"""
EPILOG = """\
releases (--releases): the default is the newest release of every minor line from 1.14 to 2.3
  plus, for each chosen bug, each release that carries its fix and the one just before it on the
  same line; all is every release flipcheck can install (flipcheck flink releases); none, with
  --flink-home, only your build. Your build's column ("own") has no JIRA expectation: its cells
  say what your change does to each bug's scenario.

examples:
  flipcheck flink matrix --bugs FLINK-37605 --releases 1.20.1,1.20.2 --out out/matrix   # two cells, about a minute
  flipcheck flink matrix --out out/matrix-all --releases all --master spark://HOST:7077   # needs a Spark cluster
  flipcheck flink matrix --flink-home ~/flink/build-target --bugs FLINK-37605 --out out/mine   # needs network access (and your build)

output in DIR: matrix.json {"releases", "bugs", "cells": [{"bug", "release", "verdict", "expected",
  "variant_conforms", "why", "run"}]}, matrix.html, runs/ (one folder a cell: flink.log,
  plan.json, output/, behaviour.svg), and the sweep's cases.parquet and summary.json.

exit codes: 0 every cell as JIRA's versions predict; 1 some cell differs (or is an error);
  2 bad input (an unknown release or bug, an unusable DIR, no JDK).
"""


def configure(commands) -> None:
    parser = commands.add_parser("matrix", help=HELP, description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", metavar="LIST", help="comma-separated releases, or all (default: see below)")
    parser.add_argument("--bugs", metavar="LIST", help="comma-separated FLINK ids (default: every bug with a scenario)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the matrix, its runs and its sweep go")
    parser.add_argument("--flink-home", metavar="DIR",
                        help="your own Flink build (lib/flink-dist*.jar, or that lib folder): one more column, "
                             "\"own\"; alone, without --releases, the only one")
    parser.add_argument("--master", metavar="URL", help="Spark master (default: local[*])")
    parser.add_argument("--json", action="store_true", help="print matrix.json instead of the table")


def _table(document: dict) -> list[str]:
    from flipcheck.flink.matrix import cell_matches

    width = max([len(b["id"]) for b in document["bugs"]] + [3])
    short = {"conforms": "ok", "flagged": "FLAG", "not-applicable": "n/a", "error": "ERR"}
    lines = [" " * width + "  " + " ".join(f"{r:>8}" for r in document["releases"])]
    by = {(c["bug"], c["release"]): c for c in document["cells"]}
    for bug in document["bugs"]:
        marks = []
        for release in document["releases"]:
            cell = by.get((bug["id"], release))
            text = "" if cell is None else short[cell["verdict"]] + ("" if cell_matches(cell) else "!")
            marks.append(f"{text:>8}")
        lines.append(f"{bug['id']:<{width}}  " + " ".join(marks))
    lines.append(f"{document['matches']} cells as JIRA's versions predict, {document['mismatches']} not ('!')")
    return lines


def run(args) -> int:
    import json
    from pathlib import Path

    from flipcheck.cli.types import check_output_dir
    from flipcheck.errors import UsageError
    from flipcheck.flink.matrix import SCENARIOS, choose_releases, scenarios_for
    from flipcheck.sweep.matrix import run_matrix
    from flipcheck.sweep.runner import Progress, SweepRefused

    bugs = None if args.bugs is None else [b.strip() for b in args.bugs.split(",") if b.strip()]
    if bugs is not None and not bugs:
        raise UsageError("--bugs: give a comma-separated list of FLINK ids")
    chosen = list(dict.fromkeys(s.bug for s in scenarios_for(bugs)))
    if not SCENARIOS:
        raise UsageError("--bugs: no scenario is defined in this build")
    own_build = None
    if args.flink_home is not None:
        from flipcheck.flink.engine import java_tools
        from flipcheck.flink.releases import resolve_flink

        java_tools()
        own_build = resolve_flink(flink_home=args.flink_home)
    releases = choose_releases("none" if args.releases is None and own_build is not None else args.releases, chosen)
    if not releases and own_build is None:
        raise UsageError("--releases: none leaves no column; add --flink-home DIR, or name releases")
    check_output_dir(args.out, "--out")
    columns = len(releases) + (own_build is not None)
    bar = Progress(len(scenarios_for(chosen)) * columns, stream=sys.stderr)
    try:
        document = run_matrix(releases, chosen, Path(args.out), master=args.master, own_build=own_build,
                              progress=lambda done, bad, fresh, final: bar.update(done, bad, fresh, final))
    except SweepRefused as error:
        raise UsageError(f"--out: {error}") from None
    if args.json:
        print(json.dumps(document, indent=1))
    else:
        print("\n".join(_table(document)))
    return 0 if document["mismatches"] == 0 else 1

"""The release matrix: catalogued Flink bugs, each re-enacted by a real job on every chosen release.

A **scenario** (:data:`SCENARIOS`) is a real job that can show one catalogued bug
(:mod:`flipcheck.flink.catalogue`): a graph of ``examples/graphs/flink/``, the run's options
(mode, records, faults, FLIP-147 on or off) and the release from which the job's features exist.
A **cell** is one scenario run on one release and validated twice with ``conform``:

* against the correct model (``flip-147``, or ``pre-flip-147`` for a FLIP-147-off scenario): the
  cell's verdict, ``conforms`` or ``flagged`` (naming the failed check and the first unexplained
  log line, or why the job did not finish);
* against the bug's own variant (``variant_conforms``): a release that shipped the bug should be
  explained by its variant's model, as the fixed release is by the correct one.

``not-applicable`` is a release that lacks the scenario's features; ``error`` a run that could
not be judged (the JVM did not start, the release cannot run here, the model search ran out of
states without another check failing). The expectation of a cell comes from the releases JIRA
gives as affected and fixed (:func:`flipcheck.flink.catalogue.expected_verdict`).

The cells run as a sweep of the ``flink-matrix`` suite (:mod:`flipcheck.designs.flink_matrix`,
driven by :func:`flipcheck.sweep.matrix.run_matrix`): on Spark, one MiniCluster per Spark task,
resumable, each cell with a case id. :func:`write_matrix` then writes ``matrix.json`` (the
contract of :func:`matrix_document`) and ``matrix.html``.

Example
-------
>>> [s.name for s in scenarios_for(["FLINK-37605"])]
['FLINK-37605-sink-v2-commit-before-final']
>>> choose_releases("1.20.0,2.0.0")
['1.20.0', '2.0.0']
>>> cell_matches({"verdict": "flagged", "expected": "flagged"}), cell_matches({"verdict": "conforms", "expected": "flagged"})
(True, False)
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import NamedTuple, Sequence

from flipcheck.errors import UsageError

__all__ = ["Scenario", "SCENARIOS", "VERDICTS", "MATRIX_FILE", "MATRIX_HTML", "scenario_named", "scenarios_for",
           "choose_releases", "default_releases", "cell_matches", "matrix_document", "matrix_html", "write_matrix", "matrix_token",
           "parse_matrix_token", "OWN_BUILD"]

VERDICTS = ("conforms", "flagged", "not-applicable", "error")
# The column of a user's own build (--flink-home): its install reaches the cells through
# flipcheck.designs.flink_jobs.RELEASE_ENV, as a flink sweep's release does.
OWN_BUILD = "own"
MATRIX_FILE = "matrix.json"
MATRIX_HTML = "matrix.html"


class Scenario(NamedTuple):
    """One real job that can show one catalogued bug."""

    name: str
    bug: str                 # a FLINK id of :data:`flipcheck.flink.catalogue.KNOWN_BUGS`
    graph: str               # a file of examples/graphs/flink/
    options: dict            # flipcheck.flink.engine.run_graph's options (faults included)
    since: str               # the first release that has every feature the job uses
    about: str               # what the job does, and what the bug makes it show

    @property
    def protocol(self) -> str:
        """The correct model the run is validated against."""
        return "flip-147" if self.options.get("checkpoints_after_tasks_finished", True) else "pre-flip-147"


# Each re-enacts one bug as docs/reference/fix-versions.md describes it; the faults are Faults.java's
# (flipcheck.flink.engine.FAULTS). Sink V2's committer first exists in 1.15 (1.14 has Sink V1).
SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "FLINK-25920-sink-v2-restore-after-end-of-input", "FLINK-25920", "sink-v2-single.json",
        {"record_delay_ms": 0, "faults": {"fail_after_end_of_input_commit": ["sink"]}}, "1.15.0",
        "the source's 1,000 records and its end of input reach the sink before the first checkpoint; the "
        "committer throws once right after committing them, so the job restores from a checkpoint taken "
        "after the writer's endInput. With the bug the restored writer runs endInput again and the committer "
        "rejects the second end-of-input summary on every attempt: the job ends FAILED"),
    Scenario(
        "FLINK-37605-sink-v2-commit-before-final", "FLINK-37605", "sink-v2-beside-slow.json",
        {"faults": {"slow_snapshot_ms": {"slow": 500}, "end_after_checkpoint": ["src"],
                    "fail_in_notify_of_end_checkpoint": ["slow"]}}, "1.15.0",
        "slow's late acknowledgements keep each checkpoint pending for 500 ms; src stops pacing at its first "
        "checkpoint k, so its remaining records and end of input reach the sink while k is pending; slow "
        "throws once, 300 ms into k's completion notification, so the job restores from k after the sink "
        "handled k's. With the bug k's completion also commits the end-of-input committables (records after "
        "k's barrier), and the restore from k replays them: committed twice"),
)


def scenario_named(name: str) -> Scenario:
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(name)


def scenarios_for(bugs: Sequence[str] | None) -> list[Scenario]:
    """The scenarios of ``bugs`` (None: every scenario), in :data:`SCENARIOS` order; UsageError
    naming ``--bugs`` for an id without a scenario."""
    if bugs is None:
        return list(SCENARIOS)
    known = {s.bug for s in SCENARIOS}
    unknown = [b for b in bugs if b not in known]
    if unknown:
        raise UsageError(f"--bugs: no scenario re-enacts {unknown[0]} (scenarios exist for: {', '.join(sorted(known))}; "
                         "`flipcheck flink matrix --help` says why the others cannot be shown)")
    return [s for s in SCENARIOS if s.bug in bugs]


# -- which releases ------------------------------------------------------------------------------


def _known_releases() -> list[str]:
    from flipcheck.flink.releases import KNOWN_RELEASES

    return list(KNOWN_RELEASES)


def default_releases(bugs: Sequence[str] | None = None) -> list[str]:
    """The newest patch release of every minor line, plus, for each chosen bug, every release that
    carries its fix and the release just before it on the same line: the smallest set that shows
    each fix, and every line once."""
    from flipcheck.flink.catalogue import KNOWN_BUGS, release_key

    known = sorted(_known_releases(), key=release_key)
    chosen = {}
    for release in known:  # the last of each line wins
        chosen[release_key(release)[:2]] = release
    picked = set(chosen.values())
    for scenario in scenarios_for(bugs):
        for fixed in KNOWN_BUGS[scenario.bug].fixed:
            if fixed in known:
                picked.add(fixed)
                before = [r for r in known if release_key(r)[:2] == release_key(fixed)[:2]
                          and release_key(r) < release_key(fixed)]
                if before:
                    picked.add(before[-1])
    return sorted(picked, key=release_key)


def choose_releases(text: str | None, bugs: Sequence[str] | None = None) -> list[str]:
    """``--releases``: None (the default set), ``all`` (every known release), ``none`` or a comma list;
    UsageError naming ``--releases`` for a release flipcheck cannot install."""
    from flipcheck.flink.catalogue import release_key

    if text is None:
        return default_releases(bugs)
    if text.strip() == "none":
        return []
    known = _known_releases()
    if text.strip() == "all":
        return sorted(known, key=release_key)
    releases = [part.strip() for part in text.split(",") if part.strip()]
    if not releases:
        raise UsageError("--releases: give a comma-separated list of releases, or all")
    for release in releases:
        if release not in known:
            raise UsageError(f"--releases: {release!r} is not a Flink release flipcheck can install "
                             f"({known[0]} .. {known[-1]}; `flipcheck flink releases` lists them)")
    return sorted(dict.fromkeys(releases), key=release_key)


def matrix_token(releases: Sequence[str], bugs: Sequence[str]) -> str:
    """The case-id token of a matrix: its releases and bugs, so an id regenerates its cell."""
    return f"{'+'.join(releases)}~{'+'.join(bugs)}"


def parse_matrix_token(token: str) -> tuple[list[str], list[str]]:
    """``(releases, bugs)`` of :func:`matrix_token`; ValueError naming what is wrong."""
    releases, sep, bugs = token.partition("~")
    if not sep or not releases or not bugs:
        raise ValueError(f"matrix token {token!r}: expected RELEASE+RELEASE...~FLINK-N+FLINK-N...")
    return releases.split("+"), bugs.split("+")


# -- cells ---------------------------------------------------------------------------------------


def cell_matches(cell: dict) -> bool:
    """A cell meets its expectation: the verdict JIRA's versions predict, or no prediction and a
    verdict that is not an error."""
    if cell["verdict"] == "error":
        return False
    expected = cell.get("expected")
    if expected is None:
        return True
    return cell["verdict"] == expected


def matrix_document(releases: Sequence[str], bugs: Sequence[str], cells: Sequence[dict]) -> dict:
    """``matrix.json``: ``{"releases", "bugs", "cells"}``, each cell ``{"bug", "release",
    "verdict", "expected", "variant_conforms", "why", "run"}`` (and the scenario, the seconds and
    the picture of the behaviour, beside the contract's fields)."""
    from flipcheck.flink.catalogue import KNOWN_BUGS

    return {
        "releases": list(releases),
        "bugs": [{"id": bug, "title": KNOWN_BUGS[bug].title, "affected": list(KNOWN_BUGS[bug].affected),
                  "fixed": list(KNOWN_BUGS[bug].fixed), "variant": KNOWN_BUGS[bug].variant} for bug in bugs],
        "cells": list(cells),
        "matches": sum(1 for c in cells if cell_matches(c)),
        "mismatches": sum(1 for c in cells if not cell_matches(c)),
    }


_VERDICT_STYLE = {"conforms": "#d8f0d8", "flagged": "#f6d0d0", "not-applicable": "#eeeeee", "error": "#f4e0a0"}


def _cell_html(cell: dict | None) -> str:
    if cell is None:
        return "<td></td>"
    e = html.escape
    mark = "" if cell_matches(cell) else " <b title='differs from JIRA'>&#9888;</b>"
    expected = f"<br><small>expected {e(cell['expected'])}</small>" if cell.get("expected") else ""
    variant = {True: "variant: yes", False: "variant: no", None: ""}[cell.get("variant_conforms")]
    links = []
    if cell.get("run"):
        links.append(f"<a href='{e(cell['run'])}/'>run</a>")
    if cell.get("picture"):
        links.append(f"<a href='{e(cell['picture'])}'>behaviour</a>")
    return (f"<td style='background:{_VERDICT_STYLE.get(cell['verdict'], '#fff')}' title='{e(cell.get('why') or '')}'>"
            f"{e(cell['verdict'])}{mark}{expected}<br><small>{e(variant)}</small><br>{' '.join(links)}</td>")


def matrix_html(document: dict) -> str:
    """The matrix as one HTML page: rows are bugs (with JIRA's affected and fixed releases),
    columns releases; each cell links its run folder and the drawn behaviour."""
    e = html.escape
    by = {(c["bug"], c["release"]): c for c in document["cells"]}
    head = "".join(f"<th>{e(r)}</th>" for r in document["releases"])
    rows = []
    for bug in document["bugs"]:
        cells = "".join(_cell_html(by.get((bug["id"], r))) for r in document["releases"])
        rows.append(f"<tr><th style='text-align:left'>{e(bug['id'])}<br><small>{e(bug['title'])}</small><br>"
                    f"<small>affected: {e(', '.join(bug['affected']) or '-')}<br>fixed: {e(', '.join(bug['fixed']) or '-')}"
                    f"</small></th>{cells}</tr>")
    why = "".join(f"<li><b>{e(c['bug'])} on {e(c['release'])}</b>: {e(c['verdict'])} - {e(c.get('why') or '')}</li>"
                  for c in document["cells"] if c["verdict"] != "not-applicable")
    return ("<!doctype html><meta charset='utf-8'><title>flipcheck release matrix</title>"
            "<style>body{font-family:sans-serif}td,th{border:1px solid #999;padding:4px;vertical-align:top;font-size:13px}"
            "table{border-collapse:collapse}</style>"
            f"<h1>Release matrix</h1><p>{document['matches']} cells as JIRA's versions predict, "
            f"{document['mismatches']} not.</p><table><tr><th>bug</th>{head}</tr>{''.join(rows)}</table>"
            f"<h2>Why</h2><ul>{why}</ul>")


def write_matrix(out: Path, document: dict) -> None:
    """``out/matrix.json`` and ``out/matrix.html``, each written atomically."""
    for name, text in ((MATRIX_FILE, json.dumps(document, indent=1) + "\n"), (MATRIX_HTML, matrix_html(document))):
        scratch = out / f".{name}.{os.getpid()}"
        scratch.write_text(text)
        os.replace(scratch, out / name)

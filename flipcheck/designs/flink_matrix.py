"""The ``flink-matrix`` suite: the cells of the release matrix, as sweep cases.

Not a design: it re-enacts catalogued Flink bugs on real releases (:mod:`flipcheck.flink.matrix`).
Its token names the matrix, ``RELEASE+RELEASE...~FLINK-N+FLINK-N...``
(:func:`~flipcheck.flink.matrix.matrix_token`); case ``i`` is one (scenario, release) cell, the
scenarios of each bug in turn and the releases within each, so a case id such as
``flink-matrix:1.20.0+2.0.0~FLINK-37605:1`` regenerates its cell on any machine.

Checking a cell installs the release if needed (:func:`flipcheck.flink.releases.resolve_flink`),
runs the scenario on it into the sweep's ``runs/`` folder and judges it with the flink suite's
:func:`~flipcheck.designs.flink_jobs.judge_run` (a job that does not finish is a ``job-finished``
violation here: the scenario's faults fire once), then validates the same log against the bug's
own variant. The cell, as ``matrix.json`` holds it, is the outcome's ``detail["cell"]``; a judged
cell is stored in its folder (``case.json``) so a resumed matrix does not run it again.

Example (no JVM: the cells of a matrix)
-------
>>> space = suite.space("1.20.0+2.0.0~FLINK-37605")
>>> space.size, [(c.scenario.bug, c.release) for c in map(space.case, range(space.size))]
(2, [('FLINK-37605', '1.20.0'), ('FLINK-37605', '2.0.0')])
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import NamedTuple

from flipcheck.designs.flink_jobs import FlinkJobsSuite, case_folder, case_release, judge_run, stored_or_run
from flipcheck.designs.suite import CaseSpace, Outcome
from flipcheck.errors import UsageError
from flipcheck.flink.matrix import OWN_BUILD, Scenario, parse_matrix_token, scenarios_for

__all__ = ["MatrixCell", "FlinkMatrixSuite", "suite"]


class MatrixCell(NamedTuple):
    scenario: Scenario
    release: str
    index: int | None = None


def _release_key(release: str):
    from flipcheck.flink.catalogue import release_key

    return release_key(release)


def _relative(path: Path, root: str | None) -> str:
    """``path`` relative to the sweep's output folder (the parent of ``runs/``), as matrix.json
    links it."""
    if root is None:
        return str(path)
    try:
        return str(path.relative_to(Path(root).parent))
    except ValueError:
        return str(path)


class FlinkMatrixSpace(CaseSpace):
    def __init__(self, suite: "FlinkMatrixSuite", token: str):
        self.suite, self.token = suite, token
        self.releases, bugs = parse_matrix_token(token)
        self.cells = [(scenario, release) for scenario in scenarios_for(bugs) for release in self.releases]
        self.size = len(self.cells)

    def case(self, index: int) -> MatrixCell:
        scenario, release = self.cells[index]
        return MatrixCell(scenario, release, index)

    def shape(self, case: MatrixCell) -> str:
        return f"{case.scenario.name} on {case.release}"

    def magnitude(self, case: MatrixCell) -> int:
        return 1

    def check(self, case: MatrixCell, algorithm: str) -> Outcome:
        if self.workdir is None or case.index is None:
            folder = Path(tempfile.mkdtemp(prefix="flipcheck-matrix-cell-"))
        else:
            folder = case_folder(self.workdir, self.token, case.index)
        case_id = self.case_id(case.index) if case.index is not None else None
        release = case.release
        if release == OWN_BUILD:  # a stored cell of your build counts while the build is the same
            install = case_release()
            release = install.version if install is not None else None
        return stored_or_run(folder, case_id, lambda: _judge_cell(case, folder, self.workdir), release)


def _judge_cell(case: MatrixCell, folder: Path, workdir: str | None) -> Outcome:
    from flipcheck.flink.catalogue import KNOWN_BUGS, expected_verdict

    scenario, release = case.scenario, case.release
    bug = KNOWN_BUGS[scenario.bug]
    # JIRA's versions predict releases, not your build: its cells have no expectation.
    cell = {"bug": scenario.bug, "release": release, "scenario": scenario.name, "verdict": None,
            "expected": None if release == OWN_BUILD else expected_verdict(scenario.bug, release), "variant_conforms": None, "why": None,
            "run": _relative(folder, workdir), "picture": None, "seconds": 0.0}
    install = None
    if release == OWN_BUILD:
        install = case_release()
        if install is None:
            raise UsageError(f"the matrix has an {OWN_BUILD!r} column but no --flink-home build reached this worker")
        cell["build"] = install.describe()
    version = install.version if install is not None else release
    if _release_key(_numbered(version)) < _release_key(scenario.since):
        folder.mkdir(parents=True, exist_ok=True)
        cell.update(verdict="not-applicable", why=f"the job needs features that {release} lacks (first in {scenario.since})")
        return Outcome(method="flink", detail={"cell": cell, "final": True, "run_dir": str(folder), "flink": version})
    from flipcheck.flink.releases import resolve_flink

    outcome = judge_run(_graph(scenario), folder, scenario.options, flip147=scenario.protocol == "flip-147",
                        detail={"scenario": scenario.name, "release": release},
                        flink=install or resolve_flink(flink=release), unfinished_is_violation=True)
    detail = outcome.detail
    cell["seconds"] = detail.get("seconds") or 0.0
    if outcome.error is not None:
        cell.update(verdict="error", why=outcome.error)
    elif outcome.violations:
        first = outcome.violations[0]
        cell.update(verdict="flagged", why=f"{first.property}: {first.message}")
    else:
        cell.update(verdict="conforms", why=f"every check holds ({detail.get('checkpoints')} checkpoints completed)")
    if detail.get("status") is not None and (folder / "flink.log").is_file() and bug.variant:
        cell["variant_conforms"], cell["picture"] = _variant_verdict(folder, bug.variant, workdir)
    detail["cell"] = cell
    detail["final"] = cell["verdict"] != "error"
    return outcome


def _numbered(version: str) -> str:
    """A build's version as a release number (``2.2-SNAPSHOT`` -> ``2.2.0``) for feature checks."""
    from flipcheck.flink.releases import parse_version

    return ".".join(map(str, parse_version(version)))


def _variant_verdict(folder: Path, variant: str, workdir: str | None) -> tuple[bool | None, str | None]:
    """Whether the bug's variant explains the run's log (its model check), and the behaviour
    drawn; ``(None, None)`` when the log cannot be validated (an unfinished job's log may end
    mid-checkpoint: the search still answers, only a crash of the reader gives None)."""
    from flipcheck.errors import InputError, UsageError
    from flipcheck.flink.conform import conform_files, render_conformance

    try:
        result = conform_files(str(folder / "plan.json"), [str(folder / "flink.log")], protocol=variant)
    except (InputError, UsageError, OSError, ValueError):
        return None, None
    model = next(c for c in result.checks if c.name == "model")
    picture = None
    try:
        picture = _relative(Path(render_conformance(result, str(folder / "behaviour.svg"))), workdir)
    except (InputError, UsageError, OSError):  # graphviz missing: the cell says so by having none
        pass
    return model.ok, picture


def _graph(scenario: Scenario):
    from flipcheck.flink.suite import GRAPHS
    from flipcheck.model.graph_json import load_graph

    return load_graph(str(GRAPHS / scenario.graph))


class FlinkMatrixSuite(FlinkJobsSuite):
    """The flink suite's engine, checks and costs; cells instead of random jobs."""

    name = "flink-matrix"
    size_unit = "cells"
    exhaustive_batch = 1  # a cell is a JVM of its own: one per Spark task

    @property
    def title(self) -> str:
        return "catalogued Flink bugs re-enacted on real releases"

    def space(self, token: str) -> CaseSpace:
        if "~" not in token:
            raise ValueError("suite 'flink-matrix' has no random or exhaustive cases: its cells are made by "
                             "`flipcheck flink matrix`")
        return FlinkMatrixSpace(self, token)

    def render(self, counterexample: MatrixCell, algorithm: str, out_path: str) -> str:
        from flipcheck.render.core import render_plan_graph

        return render_plan_graph(_graph(counterexample.scenario), "spec", out_path,
                                 title=f"{counterexample.scenario.name} on Flink {counterexample.release}")

    def size_of(self, counterexample: MatrixCell) -> int:
        return 1

    def describe(self, counterexample: MatrixCell, algorithm: str | None = None) -> dict:
        scenario = counterexample.scenario
        return {"scenario": scenario.name, "bug": scenario.bug, "release": counterexample.release,
                "graph": scenario.graph,
                "options": {k: v if isinstance(v, (bool, int, str, list, dict)) else str(v)
                            for k, v in scenario.options.items()}}


suite = FlinkMatrixSuite()

"""The release matrix run as a sweep of the ``flink-matrix`` suite (:mod:`flipcheck.flink.matrix`
says what a scenario and a cell are; :mod:`flipcheck.designs.flink_matrix` checks a cell).

Example (no Spark: the sweep a matrix is)
-------
>>> spec = matrix_sweep(["1.20.0", "1.20.2"], ["FLINK-25920", "FLINK-37605"])
>>> [(t.suite, t.token, t.cases, t.batch_size) for t in spec.targets]
[('flink-matrix', '1.20.0+1.20.2~FLINK-25920+FLINK-37605', 4, 1)]
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from flipcheck.flink.matrix import OWN_BUILD, matrix_document, matrix_token, scenarios_for, write_matrix

__all__ = ["matrix_sweep", "run_matrix"]


def matrix_sweep(columns: Sequence[str], bugs: Sequence[str]):
    """The sweep whose cases are the cells of ``columns`` (releases, maybe :data:`OWN_BUILD`) x
    the scenarios of ``bugs``: one cell a Spark task (a JVM of its own)."""
    from flipcheck.sweep.runner import SweepSpec, Target

    size = len(scenarios_for(bugs)) * len(columns)
    return SweepSpec("exhaustive", (Target("flink-matrix", "flink", matrix_token(columns, bugs), size, 1),), None)


def run_matrix(releases: Sequence[str], bugs: Sequence[str], out: Path, *, master: str | None = None,
               progress=None, own_build=None) -> dict:
    """Run (or resume) the matrix of ``releases`` x the scenarios of ``bugs`` into ``out`` as a
    sweep of the ``flink-matrix`` suite, then write ``matrix.json`` and ``matrix.html``; returns
    the matrix document. ``own_build`` (a :class:`~flipcheck.flink.releases.FlinkInstall`, from
    ``--flink-home``) adds its column, :data:`OWN_BUILD`. A rerun into the same ``out`` keeps every
    judged cell."""
    from flipcheck.designs.flink_jobs import RELEASE_ENV
    from flipcheck.sweep.runner import run_sweep
    from flipcheck.sweep.summary import read_cases

    columns = [*releases, *([OWN_BUILD] if own_build is not None else [])]
    spec = matrix_sweep(columns, bugs)
    token = spec.targets[0].token
    conf, saved = {}, os.environ.get(RELEASE_ENV)
    if own_build is not None:
        described = json.dumps(own_build.describe())
        conf[f"spark.executorEnv.{RELEASE_ENV}"] = described
        os.environ[RELEASE_ENV] = described  # local mode: the workers inherit the driver's environment
    try:
        run_sweep(spec, str(out), master=master, progress=progress, conf=conf)
    finally:
        if own_build is not None and saved is None:
            os.environ.pop(RELEASE_ENV, None)
        elif own_build is not None:
            os.environ[RELEASE_ENV] = saved
    releases = columns
    table = read_cases(str(out), ["index", "detail", "outcome", "message"]).to_pylist()
    cells = []
    for row in sorted(table, key=lambda r: r["index"]):
        detail = json.loads(row["detail"]) if row["detail"] else {}
        cell = detail.get("cell")
        if cell is None:  # the cell's check itself failed: its one line is the row's message
            from flipcheck.designs.flink_matrix import suite

            case = suite.space(token).case(row["index"])
            cell = {"bug": case.scenario.bug, "release": case.release, "scenario": case.scenario.name,
                    "verdict": "error", "expected": None, "variant_conforms": None, "why": row["message"],
                    "run": None, "picture": None, "seconds": 0.0}
        cells.append(cell)
    document = matrix_document(releases, bugs, cells)
    if own_build is not None:
        document["own_build"] = own_build.describe()
    write_matrix(out, document)
    return document

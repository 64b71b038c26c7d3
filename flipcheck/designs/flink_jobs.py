"""The ``flink`` sweep suite: random real jobs, each run on a local Flink and validated.

Not a design (no spec or engine variants of its own): it holds real Flink to the whole-job
model. Case ``i`` of seed ``S`` (id ``flink:S:i``) is a small random job graph from
:func:`flipcheck.generators.job_graphs.generate_topology` (2-4 vertices, parallelism 1-2) with
vertex flags the model accepts (a sink kind only on vertices without outputs, union list state
only on operators and two-phase-commit sinks), and seeded run options: the checkpointing mode,
10-40 records per source subtask, sometimes an injected failure, FLIP-147 mostly on.

Checking a case runs it with :func:`flipcheck.flink.engine.run_graph` into a folder of its own
(under :attr:`CaseSpace.workdir`, ``DIR/runs`` in a sweep) and validates that run with
:func:`flipcheck.flink.conform.conform_files`: every check must hold; a FLIP-147-off run is
validated against ``pre-flip-147`` and judged by the model check alone (its committed output
loses records, the known pre-FLIP-147 data loss, recorded in the row's detail). The verdict
of a job that finished is stored in the folder as ``case.json``, last, so a resumed sweep reads
it back instead of running the job again (a run that did not finish is tried again). A JVM
that does not start, a job that times out or fails for good, and a model search that ran out
of its state budget without another check failing are errors (one line), not verdicts.

The release is the venv's (2.3.0) unless the variable :data:`RELEASE_ENV` names another
(``sweep --suite flink --flink VERSION`` sets it before Spark starts, for every worker); a stored
verdict of another release is not read back: the case runs again.

Example (no JVM: generating cases)
-------
>>> space = suite.space("7")
>>> case = space.case(3)
>>> case == space.case(3)                      # ids regenerate their case
True
>>> 2 <= len(case.graph.vertices) <= 4 and case.mode in MODES and 10 <= case.records <= 40
True
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from flipcheck.designs.suite import CaseSpace, Outcome, Suite
from flipcheck.errors import InputError, UsageError
from flipcheck.flink.engine import MODES, FailAt, FlinkRunError, run_graph
from flipcheck.flink.releases import FlinkInstall, venv_flink
from flipcheck.generators.choices import SeededChooser, choice
from flipcheck.generators.job_graphs import generate_topology
from flipcheck.model.graph_json import graph_to_json
from flipcheck.model.jobgraph import JobGraph, JobVertex
from flipcheck.properties.violation import Violation

__all__ = ["FlinkCase", "FlinkJobsSuite", "CHECKS", "CASE_FILE", "CASE_TIMEOUT_SECONDS", "RELEASE_ENV",
           "case_release", "generate_case", "case_folder", "stored_or_run", "judge_run", "suite"]

# conform's checks, in its order: the properties a real run can violate.
CHECKS = ("model", "trigger-plan", "final-checkpoint", "ids-in-order", "committed-output", "job-finished")
CASE_FILE = "case.json"
# A small job takes 5-15 s; a JVM still running after this long is stuck.
CASE_TIMEOUT_SECONDS = 180
_PRE_FLIP_147 = "pre-flip-147"
# JSON of FlinkInstall.describe(): the release the CLI resolved once, read by every worker.
RELEASE_ENV = "FLIPCHECK_FLINK_RELEASE"
_DRAWS = 20
_MESSAGE_LIMIT = 300


class FlinkCase(NamedTuple):
    graph: JobGraph
    mode: str
    records: int            # per source subtask
    fail: FailAt | None
    flip147: bool           # checkpoints_after_tasks_finished
    seed: int               # the job's record-delay jitter
    index: int | None = None  # the case's index in its space (where its run folder is)

    def options(self) -> dict:
        return {"mode": self.mode, "records": self.records, "fail": self.fail,
                "checkpoints_after_tasks_finished": self.flip147, "seed": self.seed}


def _with_flags(chooser, graph: JobGraph) -> JobGraph:
    """Sink kinds on some vertices without outputs, union list state on some operators and
    two-phase-commit sinks: the flags the model and ``flink run`` both accept."""
    vertices = []
    for vertex in graph.vertices:
        flags = {}
        if graph.inputs(vertex.id):
            if not graph.outputs(vertex.id):
                kind = choice(chooser, ("two_phase_commit_sink", "two_phase_commit_sink", "sink_v2", None))
                if kind:
                    flags[kind] = True
            if (graph.outputs(vertex.id) or flags.get("two_phase_commit_sink")) and chooser.boolean(0.3):
                flags["union_list_state"] = True
        vertices.append(JobVertex(vertex.id, vertex.parallelism, MappingProxyType(flags)))
    return JobGraph(tuple(vertices), graph.edges, graph.states, graph.checkpoints_after_tasks_finished)


def _connected_topology(chooser) -> JobGraph:
    """A topology in which every vertex has an edge (a lone source runs nothing worth checking);
    redrawn a bounded number of times, which the seeded chooser makes deterministic."""
    for _ in range(_DRAWS):
        graph = generate_topology(chooser, min_vertices=2, max_vertices=4, max_parallelism=2, edge_probability=0.6)
        touched = {end for edge in graph.edges for end in (edge.source, edge.target)}
        if touched == {v.id for v in graph.vertices}:
            break
    return graph


def generate_case(chooser) -> FlinkCase:
    """A random job graph with flags, and the options of its run."""
    graph = _with_flags(chooser, _connected_topology(chooser))
    mode = choice(chooser, MODES)
    records = chooser.integer(10, 40)
    fail = None
    if chooser.boolean(0.3):
        vertex = choice(chooser, [v.id for v in graph.vertices])
        # Early enough that every subtask reaches it (an operator subtask may see few records).
        fail = FailAt(vertex, chooser.integer(0, graph.parallelism(vertex) - 1), chooser.integer(1, records // 2))
    flip147 = chooser.boolean(0.8)
    # The graph says it too, so its graph.json reproduces the run with `flipcheck flink run`.
    return FlinkCase(graph.with_flag(flip147), mode, records, fail, flip147, chooser.integer(0, 2**31))


def case_folder(workdir: str | Path, token: str, index: int) -> Path:
    """The run folder of case ``index``: the token made safe for a file name, then the index."""
    return Path(workdir) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', token)}-{index}"


def _fail_text(fail: FailAt | None) -> str | None:
    """``--fail``'s own notation, VERTEX:SUBTASK@RECORD."""
    return None if fail is None else f"{fail.vertex}:{fail.subtask}@{fail.record}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:_MESSAGE_LIMIT]


class FlinkJobsSpace(CaseSpace):
    def __init__(self, suite: "FlinkJobsSuite", token: str):
        self.suite, self.token = suite, token

    def case(self, index: int) -> FlinkCase:
        return generate_case(SeededChooser.for_case(self.token, index))._replace(index=index)

    def shape(self, case: FlinkCase) -> str:
        g = case.graph
        fail = f" fail {_fail_text(case.fail)}" if case.fail else ""
        flip = "" if case.flip147 else " pre-flip-147"
        return f"{len(g.vertices)}v {len(g.edges)}e {g.num_tasks}t {case.mode} r{case.records}{fail}{flip}"

    def magnitude(self, case: FlinkCase) -> int:
        return case.graph.num_tasks

    def check(self, case: FlinkCase, algorithm: str) -> Outcome:
        index = case.index
        if self.workdir is None or index is None:
            folder = Path(tempfile.mkdtemp(prefix="flipcheck-flink-case-"))
        else:
            folder = case_folder(self.workdir, self.token, index)
        case_id = self.case_id(index) if index is not None else None
        return stored_or_run(folder, case_id, lambda: _run_and_conform(case, folder))


def stored_or_run(folder: Path, case_id: str | None, run, release: str | None = None) -> Outcome:
    """The verdict a finished run on ``release`` (None: :func:`case_release`'s) left in ``folder``
    for ``case_id``, else ``run()``'s, stored there when its job finished. Anything ``run`` raises
    is the case's error, not the sweep's."""
    stored = _stored(folder, case_id, release)
    if stored is not None:
        return stored
    try:
        outcome = run()
    except Exception as error:  # noqa: BLE001 - one case that cannot be judged must not end the sweep
        outcome = Outcome(method="flink", error=_one_line(f"{type(error).__name__}: {error}"),
                          detail={"run_dir": str(folder), "status": None})
    outcome.detail["id"] = case_id
    if outcome.detail.get("status") == "FINISHED" or outcome.detail.get("final"):
        # Written last and atomically: its presence means the run and its verdict are complete.
        # A run that did not end in a verdict is not kept: a resumed sweep tries it again.
        scratch = folder / f".{CASE_FILE}.{os.getpid()}"
        scratch.write_text(json.dumps(_outcome_json(outcome), indent=1) + "\n")
        os.replace(scratch, folder / CASE_FILE)
    return outcome


def case_release() -> FlinkInstall | None:
    """The release :data:`RELEASE_ENV` names (None: the venv's)."""
    text = os.environ.get(RELEASE_ENV)
    if not text:
        return None
    found = json.loads(text)
    return FlinkInstall(found["version"], Path(found["lib"]), found["source"])


def _stored(folder: Path, case_id: str | None, release: str | None = None) -> Outcome | None:
    """The verdict a finished run left in ``folder`` (None: not run, or run for another case)."""
    try:
        saved = json.loads((folder / CASE_FILE).read_text())
    except (OSError, ValueError):
        return None
    try:
        if case_id is None or saved["detail"]["id"] != case_id:
            return None
        if release is None:
            installed = case_release() or venv_flink()
            release = installed.version if installed is not None else None
        if release is not None and saved["detail"].get("flink", release) != release:
            return None  # judged on another release
        return Outcome([Violation(p, m) for p, m in saved["violations"]], method="flink",
                       error=saved["error"], detail=saved["detail"])
    except (KeyError, TypeError, ValueError):  # damaged: run the case again
        return None


def _outcome_json(outcome: Outcome) -> dict:
    return {"violations": [[v.property, v.message] for v in outcome.violations], "error": outcome.error,
            "detail": outcome.detail}


def _run_and_conform(case: FlinkCase, folder: Path) -> Outcome:
    """Run the case into ``folder`` and validate it (:func:`judge_run`)."""
    detail = {"flip147": case.flip147, "mode": case.mode, "records": case.records, "fail": _fail_text(case.fail)}
    from flipcheck.flink.job_server import shared_server

    release = case_release()
    # One job server per Spark Python worker: its cases run one after the other in one JVM.
    return judge_run(case.graph, folder, case.options(), flip147=case.flip147, detail=detail, flink=release,
                     server=shared_server(release))


def judge_run(graph: JobGraph, folder: Path, options: dict, *, flip147: bool = True, detail: dict | None = None,
              flink=None, unfinished_is_violation: bool = False, server=None, inspect=None) -> Outcome:
    """Run ``graph`` with ``run_graph``'s ``options`` into ``folder`` (emptied first: a run cut
    short leaves a partial one) on the Flink install ``flink`` (None: the default one) and validate
    it with conform; run failures become :attr:`Outcome.error`. A FLIP-147-off run is validated
    against ``pre-flip-147`` by its model check alone. A job that did not finish is an error, or
    with ``unfinished_is_violation`` a ``job-finished`` violation (a bounded job whose faults
    fire once must finish: the release matrix's scenarios). ``server``: run_graph's job server.
    ``inspect(conformance)`` returns more of the detail from conform's result (a campaign's coverage)."""
    from flipcheck.flink.conform import conform_files

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "graph.json").write_text(json.dumps(graph_to_json(graph, include_states=False), indent=1) + "\n")
    detail = {"run_dir": str(folder), **(detail or {}),
              "status": None, "checkpoints": None, "seconds": None, "conforms": None, "first_unexplained": None}
    began = time.perf_counter()
    try:
        result = run_graph(graph, folder, timeout_seconds=CASE_TIMEOUT_SECONDS, flink=flink, server=server, **options)
    except (FlinkRunError, UsageError, OSError) as error:
        detail["seconds"] = round(time.perf_counter() - began, 3)
        return Outcome(method="flink", error=_one_line(f"flink run: {error}"), detail=detail)
    detail.update(flink=result.flink.version if result.flink else None,
                  status=result.status, checkpoints=result.checkpoints_completed, seconds=round(result.times.total, 3),
                  failure_injected=result.failure_injected, records_committed=result.records_committed,
                  records_expected=result.records_expected)
    if result.status != "FINISHED":
        if not unfinished_is_violation:
            return Outcome(method="flink", error=_one_line(f"the job ended {result.status}: {result.cause}"),
                           detail=detail)
        detail["final"] = True  # conform's job-finished check judges it
    protocol = {} if flip147 else {"protocol": _PRE_FLIP_147}
    try:
        conformance = conform_files(str(folder / "plan.json"), [str(folder / "flink.log")], **protocol)
    except (InputError, UsageError, OSError) as error:
        return Outcome(method="flink", error=_one_line(f"conform: {error}"), detail=detail)
    checks = {c.name: c for c in conformance.checks}
    judged = [c for c in conformance.checks if flip147 or c.name == "model"]
    first = conformance.first_unexplained
    detail.update(conforms=all(c.ok for c in judged), first_unexplained=first, events=conformance.events,
                  checks={c.name: c.ok for c in conformance.checks})
    if inspect is not None:
        detail.update(inspect(conformance))
    if not flip147:
        detail["committed_output"] = checks["committed-output"].detail if "committed-output" in checks else None
    # A search that ran out of states has not shown a violation: undecided, not a finding.
    undecided = conformance.verdict.exhausted_budget and not checks["model"].ok
    detail["model_undecided"] = undecided
    violations = []
    for check in judged:
        if not check.ok and not (check.name == "model" and undecided):
            message = check.detail
            if check.name == "model" and first:
                message = f"{first['file']}:{first['line']} {first['event']}: {first['why']} ({check.detail})"
            violations.append(Violation(check.name, _one_line(message)))
    if undecided and not violations:
        return Outcome(method="flink", detail=detail,
                       error=_one_line(f"model check undecided: {first['why'] if first else checks['model'].detail}"))
    return Outcome(violations, method="flink", detail=detail)


class FlinkJobsSuite(Suite):
    name = "flink"
    engine = "flink"
    size_unit = "tasks"
    random_batch = 1      # a case takes 2-15 s (a job server's JVM or one of its own): one per Spark task balances best
    relative_cost = 10_000

    @property
    def title(self) -> str:
        return "random real jobs on a local Flink, validated against the whole-job model"

    def algorithms(self):
        return (self.engine,)

    def property_names(self):
        return CHECKS

    def space(self, token: str) -> CaseSpace:
        from flipcheck.designs.suite import EXHAUSTIVE_PREFIX

        if token.startswith(EXHAUSTIVE_PREFIX):
            raise ValueError("suite 'flink' has random cases only (--cases N --seed S)")
        return FlinkJobsSpace(self, token)

    def render(self, counterexample: FlinkCase, algorithm: str, out_path: str) -> str:
        from flipcheck.render.core import render_plan_graph

        return render_plan_graph(counterexample.graph, "spec", out_path,
                                 title=f"real Flink run: {FlinkJobsSpace(self, '-').shape(counterexample)}")

    def size_of(self, counterexample: FlinkCase) -> int:
        return counterexample.graph.num_tasks

    def describe(self, counterexample: FlinkCase, algorithm: str | None = None) -> dict:
        options = {**counterexample.options(), "fail": _fail_text(counterexample.fail)}
        return {"graph": graph_to_json(counterexample.graph, include_states=False), **options}


suite = FlinkJobsSuite()

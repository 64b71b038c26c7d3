"""The ``flink-campaign`` suite: the runs of one round of a campaign, as sweep cases.

Not a design: it steers real Flink with the model (:mod:`flipcheck.flink.campaign`). Its token
is a round's cases whole (:func:`~flipcheck.flink.campaign.encode_round`), so case ``i`` of a
token regenerates its run, faults included, on any machine that has the graph (a campaign's own
graphs are in its ``DIR/graphs``, the standard ones in ``examples/graphs/flink``).

Checking a case runs its graph with its faults into the sweep's ``runs/`` folder and judges it
with the flink suite's :func:`~flipcheck.designs.flink_jobs.judge_run` (a job that does not
finish is judged too: its ``job-finished`` check fails), and records in the outcome's detail the
abstract transitions of the behaviour ``conform`` found (``"transitions"``, keys of
:func:`~flipcheck.properties.protocol_abstraction.transition_key`) and, for a run no behaviour
explains, the behaviour drawn up to its first unexplained line (``"picture"``).

Example (no JVM: the cases of a round)
-------
>>> space = suite.space("guided.chain.aligned.fail=map,1@25~random.join.unaligned.none")
>>> space.size, space.shape(space.case(0))
(2, 'guided chain aligned --fail map:1@25')
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from flipcheck.designs.flink_jobs import FlinkJobsSuite, case_release, judge_run, stored_or_run
from flipcheck.designs.suite import CaseSpace, Outcome
from flipcheck.flink.campaign import CampaignCase, decode_round, same_tasks, target_job, vertex_names

__all__ = ["FlinkCampaignSuite", "suite", "campaign_graph"]

GRAPHS_FOLDER = "graphs"


def campaign_graph(name: str, workdir: str | None = None):
    """The graph ``name`` of a campaign: ``DIR/graphs/NAME.json`` of the campaign whose round's
    runs are in ``workdir`` (``DIR/rounds/NNN/runs``), else the standard graph of that name."""
    from flipcheck.flink.suite import GRAPHS
    from flipcheck.model.graph_json import load_graph

    if workdir is not None:
        own = Path(workdir).parents[2] / GRAPHS_FOLDER / f"{name}.json"
        if own.is_file():
            return load_graph(str(own))
    return load_graph(str(GRAPHS / f"{name}.json"))


class FlinkCampaignSpace(CaseSpace):
    def __init__(self, suite: "FlinkCampaignSuite", token: str):
        self.suite, self.token = suite, token
        self.cases = decode_round(token)
        self.size = len(self.cases)
        for case in self.cases:
            _check_faults(case)

    def case(self, index: int) -> tuple:
        return self.cases[index], index

    def shape(self, case: tuple) -> str:
        c = case[0]
        return " ".join([c.arm, c.graph, c.mode, *c.faults])

    def magnitude(self, case: tuple) -> int:
        return 1

    def check(self, case: tuple, algorithm: str) -> Outcome:
        c, index = case
        if self.workdir is None:
            folder = Path(tempfile.mkdtemp(prefix="flipcheck-campaign-run-"))
        else:
            folder = Path(self.workdir) / f"{index}-{c.arm}-{c.graph}-{c.mode}"
        return stored_or_run(folder, self.case_id(index), lambda: _run_case(c, folder, self.workdir))


def _check_faults(case: CampaignCase) -> None:
    """ValueError naming the fault when a case of a standard graph has one its job cannot build
    (a graph of the campaign's own is checked when its run starts)."""
    from flipcheck.errors import UsageError
    from flipcheck.flink.engine import job_spec
    from flipcheck.flink.guidance import fault_options
    from flipcheck.flink.suite import GRAPHS
    from flipcheck.model.graph_json import load_graph

    if not (GRAPHS / f"{case.graph}.json").is_file():
        return
    try:
        job_spec(load_graph(str(GRAPHS / f"{case.graph}.json")), out=Path("."), mode=case.mode,
                 **fault_options(case.faults))
    except UsageError as error:
        raise ValueError(f"campaign token: {case.graph} {' '.join(case.faults)}: {error}") from None


def _run_case(c: CampaignCase, folder: Path, workdir: str | None) -> Outcome:
    from flipcheck.flink.guidance import fault_options
    from flipcheck.flink.job_server import shared_server

    graph = campaign_graph(c.graph, workdir)
    detail = {"arm": c.arm, "graph": c.graph, "mode": c.mode, "faults": list(c.faults)}
    release = case_release()
    # One job server per Spark Python worker, as the flink suite's cases (issue 26, item 5).
    outcome = judge_run(graph, folder, {"mode": c.mode, **fault_options(c.faults)}, detail=detail,
                        flink=release, server=shared_server(release), unfinished_is_violation=True,
                        inspect=lambda conformance: _coverage(conformance, graph, c.mode, folder))
    outcome.detail["final"] = outcome.detail.get("conforms") is not None
    return outcome


def _coverage(conformance, graph, mode: str, folder: Path) -> dict:
    """The run's abstract transitions, and its behaviour drawn when no behaviour explains it."""
    from flipcheck.errors import InputError, UsageError
    from flipcheck.flink.conform import render_conformance
    from flipcheck.properties.protocol_abstraction import covered, transition_key, with_vertex_names

    found: dict = {"transitions": None, "picture": None}
    if conformance.job is None or conformance.verdict is None:
        return found
    flink_ids = json.loads((folder / "run.json").read_text()).get("vertices", {})
    if same_tasks(target_job(graph, mode), conformance.job, flink_ids):
        names = vertex_names(conformance.job, flink_ids)
        found["transitions"] = sorted(transition_key(with_vertex_names(t, names))
                                      for t in covered(conformance.job, conformance.verdict.behaviour))
    else:  # the plan numbers tasks otherwise: its states do not compare with the targets
        found["coverage_note"] = "conform's model job numbers the tasks or channels unlike the graph file"
    if not conformance.conforms:
        try:
            found["picture"] = render_conformance(conformance, str(folder / "behaviour.svg"))
        except (InputError, UsageError, OSError):  # graphviz missing: the run says so by having none
            pass
    return found


class FlinkCampaignSuite(FlinkJobsSuite):
    """The flink suite's engine, checks and costs; a round's planned runs instead of random jobs."""

    name, title = "flink-campaign", "a campaign's real runs, faults chosen by the model"
    size_unit = "runs"
    exhaustive_batch = 1  # a run is a JVM of its own: one per Spark task

    def space(self, token: str) -> CaseSpace:
        try:
            return FlinkCampaignSpace(self, token)
        except ValueError as error:
            raise ValueError(f"suite 'flink-campaign': {error} (its tokens are made by `flipcheck flink campaign`)") \
                from None

    def render(self, counterexample: tuple, algorithm: str, out_path: str) -> str:
        from flipcheck.render.core import render_plan_graph

        c = counterexample[0]
        return render_plan_graph(campaign_graph(c.graph), "spec", out_path, title=f"campaign run: {' '.join(c.faults)}")

    def size_of(self, counterexample: tuple) -> int:
        return 1

    def describe(self, counterexample: tuple, algorithm: str | None = None) -> dict:
        c = counterexample[0]
        return {"arm": c.arm, "graph": c.graph, "mode": c.mode, "faults": list(c.faults)}


suite = FlinkCampaignSuite()

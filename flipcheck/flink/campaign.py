"""Campaigns of real Flink runs steered by the model (issue 26, items 2-4; docs/coverage.md).

A campaign runs real jobs of some graphs in some checkpointing modes, validates each with
``conform``, and measures how much of the model they cover: the **targets** of a graph and mode
are the abstract transitions of the model's exploration at a small bound
(:func:`~flipcheck.properties.protocol_abstraction.targets` of :func:`target_job`: conform's own
model job, one failover, no records, its first ``target_states`` states breadth-first), a run covers the transitions of the behaviour
``conform`` found (:func:`~flipcheck.properties.protocol_abstraction.covered`).

It runs in **rounds**: a round's cases are planned from what the runs so far covered
(:mod:`flipcheck.flink.guidance`), then run as one sweep of the ``flink-campaign`` suite on Spark
(:mod:`flipcheck.designs.flink_campaign`). A round's token holds its cases whole, faults included
(:func:`encode_round`), so a case id such as
``flink-campaign:guided.chain.aligned.fail=map,1@25~random.join.unaligned.none:0`` regenerates its
run anywhere; a killed campaign reads each round's token back and reruns only the runs missing.

Two **arms** share the budget when compared: ``guided`` (faults from the model's shortest path to
an uncovered target, else mutations of runs that covered something new) and ``random`` (random
faults). ``DIR/campaign.json`` is :func:`campaign_document`'s contract.

>>> cases = [CampaignCase("guided", "chain", "aligned", ("--fail map:1@25", "--fault snapshot-throw:sink:0@2")),
...          CampaignCase("random", "join", "unaligned", ())]
>>> token = encode_round(cases)
>>> token
'guided.chain.aligned.fail=map,1@25+fault=snapshot-throw,sink,0@2~random.join.unaligned.none'
>>> decode_round(token) == cases
True
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import NamedTuple, Sequence

from flipcheck.errors import UsageError

__all__ = ["CampaignCase", "ARMS", "CAMPAIGN_FILE", "CAMPAIGN_HTML", "TARGET_STATES", "encode_round", "decode_round",
           "check_graph_for_campaign", "target_job", "vertex_names", "same_tasks", "conform_coverage", "campaign_document", "campaign_html", "coverage_svg", "write_campaign"]

ARMS = ("guided", "random")
CAMPAIGN_FILE = "campaign.json"
CAMPAIGN_HTML = "campaign.html"
# States of the bounded exploration the targets come from: a six-task graph's full exploration
# takes minutes, its first 20,000 states 5-10 s (docs/coverage.md).
TARGET_STATES = 20_000
# What a vertex id or a graph name in a token may hold: the token separators are . ~ + , =
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_FAIL = re.compile(r"fail=(?P<vertex>[A-Za-z0-9_-]+),(?P<subtask>[0-9]+)@(?P<record>[0-9]+)")
_RECORDS = re.compile(r"records=(?P<vertex>[A-Za-z0-9_-]+),(?P<count>[0-9]{1,6})")


class CampaignCase(NamedTuple):
    arm: str                 # ARMS
    graph: str               # the graph's name: a file stem of DIR/graphs or examples/graphs/flink
    mode: str                # flipcheck.flink.engine.MODES
    faults: tuple            # fault specs, `flipcheck flink run` syntax (flipcheck.flink.guidance)


def _encode_fault(spec: str) -> str:
    """``--fail V:S@R`` as ``fail=V,S@R``; ``--fault KIND:V:S@AT=VALUE`` as ``fault=KIND,V,S@AT=VALUE``;
    ``--records V=N`` as ``records=V,N``
    (a case id holds no ``:`` or space; vertex ids hold no ``,``: :func:`check_graph_for_campaign`)."""
    from flipcheck.flink.guidance import FAIL_SPEC, RECORDS_OPTION

    found = FAIL_SPEC.fullmatch(spec)
    if found is not None:
        return f"fail={found['vertex']},{found['subtask']}@{found['record']}"
    shaped = RECORDS_OPTION.fullmatch(spec)
    if shaped is not None and "=" in shaped["value"]:
        return "records=" + shaped["value"].replace("=", ",")
    if spec.startswith("--fault "):
        return "fault=" + _fault_spec(spec.partition(" ")[2], spec).replace(":", ",")
    raise ValueError(f"fault {spec!r}: a campaign's token holds --fail, --fault and --records VERTEX=N only")


def _decode_fault(text: str) -> str:
    found = _FAIL.fullmatch(text)
    if found is not None:
        return f"--fail {found['vertex']}:{found['subtask']}@{found['record']}"
    if text.startswith("fault="):
        return "--fault " + _fault_spec(text.removeprefix("fault=").replace(",", ":"), text)
    shaped = _RECORDS.fullmatch(text)
    if shaped is not None:
        return f"--records {shaped['vertex']}={int(shaped['count'])}"
    raise ValueError(f"campaign token: fault {text!r} is none of fail=VERTEX,SUBTASK@RECORD, fault=KIND,... and records=VERTEX,N")


def _fault_spec(spec: str, shown: str) -> str:
    """``spec`` as flipcheck.flink.faults writes it; ValueError naming ``shown`` when it is none."""
    from flipcheck.flink.faults import parse_fault

    try:
        return parse_fault(spec).spec
    except ValueError as error:
        raise ValueError(f"campaign token: fault {shown!r}: {error}") from None


def encode_round(cases: Sequence[CampaignCase]) -> str:
    """The token of a round: ``ARM.GRAPH.MODE.FAULTS`` per case, joined by ``~`` (FAULTS joined
    by ``+``, ``none`` for none); no ``:`` or space, as a case id needs."""
    parts = []
    for case in cases:
        faults = "+".join(_encode_fault(f) for f in case.faults) or "none"
        parts.append(f"{case.arm}.{case.graph}.{case.mode}.{faults}")
    return "~".join(parts)


def decode_round(token: str) -> list[CampaignCase]:
    """Inverse of :func:`encode_round`; ValueError naming what is wrong."""
    from flipcheck.flink.engine import MODES

    cases = []
    for part in token.split("~"):
        fields = part.split(".", 3)
        if len(fields) != 4:
            raise ValueError(f"campaign token: {part!r} is not ARM.GRAPH.MODE.FAULTS")
        arm, graph, mode, faults = fields
        if arm not in ARMS or not _NAME.fullmatch(graph) or mode not in MODES:
            raise ValueError(f"campaign token: {part!r}: arm one of {ARMS}, a graph name, a mode one of {MODES}")
        specs = () if faults == "none" else tuple(_decode_fault(f) for f in faults.split("+"))
        cases.append(CampaignCase(arm, graph, mode, specs))
    return cases


def check_graph_for_campaign(name: str, graph) -> None:
    """UsageError naming the graph when its name or a vertex id cannot travel in a case id."""
    if not _NAME.fullmatch(name):
        raise UsageError(f"GRAPH: {name!r}: a campaign's graph file name may hold letters, digits, _ and - only")
    for vertex in graph.vertices:
        if not _NAME.fullmatch(vertex.id):
            raise UsageError(f"GRAPH: {name}: vertex id {vertex.id!r} may hold letters, digits, _ and - only "
                             "in a campaign (its faults travel in case ids)")


def target_job(graph, mode: str, failures: int = 1, protocol=None):
    """The model job whose exploration gives the targets of ``graph`` in ``mode``: conform's model
    job of a run of it (sources without records, Flink's periodic timer:
    flipcheck.flink.conform.model_job) with ``failures`` failovers; the small bound is the
    exploration's state cap (:data:`TARGET_STATES`). Not ``bounded_job``'s C3 bound: without
    records, C3 triggers no checkpoint while a source runs, and every real run's first trigger
    comes while its sources run, so no run would cover any target (measured on chain: 0 of
    74,163; docs/coverage.md)."""
    from types import MappingProxyType

    from flipcheck.model.jobgraph import JobGraph, JobVertex
    from flipcheck.model.protocol import Job

    vertices = []
    for v in graph.vertices:
        extra = {k: val for k, val in v.extra.items() if k != "records"}
        if not graph.inputs(v.id):
            extra["records"] = 0
        vertices.append(JobVertex(v.id, v.parallelism, MappingProxyType(extra)))
    more = {} if protocol is None else {"protocol": protocol}
    return Job(JobGraph.build(vertices, graph.edges), mode=mode, records=0, checkpoints=0, failures=failures,
               periodic_timer=True, **more)


def conform_coverage(conformance, max_states: int = TARGET_STATES, failures: int = 1,
                     abstraction: str | None = None) -> dict:
    """``conform --coverage``: the coverage of the targets of the run's own graph and mode
    (:func:`target_job`, ``failures`` failovers, or the run's if more) by the behaviour conform
    found, in ``abstraction`` (default: the task views), as
    :func:`~flipcheck.properties.protocol_abstraction.coverage_document`'s fields, and
    ``target_states``, ``complete`` (whether the exploration ended before the cap) and
    ``abstraction``."""
    from flipcheck.properties.protocol_abstraction import (
        DEFAULT_ABSTRACTION, coverage_document, coverage_of, covered, explored_targets,
    )

    abstraction = abstraction or DEFAULT_ABSTRACTION
    job = conformance.job
    found, complete = explored_targets(target_job(job.graph, job.mode, max(failures, job.failures), job.protocol),
                                       max_states, abstraction)
    reached = covered(job, conformance.verdict.behaviour, abstraction=abstraction)
    document = coverage_document(job, coverage_of(found, reached))
    document.update(target_states=max_states, complete=complete, abstraction=abstraction)
    return document


def vertex_names(theirs, flink_ids: dict) -> dict:
    """The graph file's vertex id of each vertex of conform's model job ``theirs`` (named after
    Flink's plan), from ``flink_ids`` (run.json ``vertices``: our id -> Flink's)."""
    ours_by_flink = {flink: vertex for vertex, flink in flink_ids.items()}
    return {v.id: ours_by_flink.get(v.extra.get("flink_id")) for v in theirs.graph.vertices}


def same_tasks(ours, theirs, flink_ids: dict) -> bool:
    """Whether conform's model job ``theirs`` (vertices named after Flink's plan) numbers its
    tasks and channels as ``ours`` (the graph file's) does, so abstract states of both compare:
    ``flink_ids`` maps our vertex ids to Flink's (run.json ``vertices``)."""
    theirs_ids = vertex_names(theirs, flink_ids)
    tasks = [(theirs_ids[t.vertex], t.subtask) for t in theirs.tasks]
    return (tasks == [(t.vertex, t.subtask) for t in ours.tasks]
            and [(c.source, c.target, c.local) for c in theirs.channels] == [(c.source, c.target, c.local) for c in ours.channels])


def campaign_document(runs: Sequence[dict], targets: int, arms: Sequence[str], covered: dict,
                      seconds: float, extra: dict | None = None) -> dict:
    """``campaign.json``: the contract ``{"runs", "validated", "conforming", "coverage":
    {"covered", "targets", "random_covered"}, "jobs_per_minute", "unexplained": [{"case", "why",
    "run"}]}``, then more beside it (the curve, the outside counts, the missing targets).
    ``runs`` are the run records (``case``, ``arm``, ``validated``, ``conforms``, ``why``, ``run``);
    ``covered`` the covered target count per arm. ``covered`` of the contract is the guided
    arm's (the random arm's when only it ran); ``random_covered`` is null without a random arm."""
    lead = "guided" if "guided" in arms else "random"
    validated = [r for r in runs if r["validated"]]
    document = {
        "runs": len(runs),
        "validated": len(validated),
        "conforming": sum(1 for r in validated if r["conforms"]),
        "coverage": {"covered": covered.get(lead, 0), "targets": targets,
                     "random_covered": covered["random"] if "random" in arms and "guided" in arms else None},
        "jobs_per_minute": round(len(runs) / (seconds / 60), 2) if seconds > 0 else 0.0,
        "unexplained": [{"case": r["case"], "why": r["why"], "run": r["run"]} for r in runs if not r["conforms"]],
    }
    document.update(extra or {})
    return document


_COLOURS = {"guided": "#1f6fb4", "random": "#d9822b"}


def coverage_svg(curves: dict, targets: int, width: int = 560, height: int = 300) -> str:
    """A plot of covered targets against runs, one line per arm (``curves``: arm -> covered
    after each of its runs)."""
    left, bottom, top, right = 60, 40, 20, 110
    most_runs = max((len(c) for c in curves.values()), default=0) or 1
    most = max([max(c, default=0) for c in curves.values()] + [1])
    x = lambda n: left + (width - left - right) * n / most_runs  # noqa: E731
    y = lambda v: height - bottom - (height - bottom - top) * v / most  # noqa: E731
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-family='sans-serif' "
             "font-size='12'>",
             f"<line x1='{left}' y1='{y(0)}' x2='{x(most_runs)}' y2='{y(0)}' stroke='#333'/>",
             f"<line x1='{left}' y1='{y(0)}' x2='{left}' y2='{top}' stroke='#333'/>",
             f"<text x='{(left + x(most_runs)) / 2}' y='{height - 8}' text-anchor='middle'>runs</text>",
             f"<text x='12' y='{top + 10}'>covered</text>",
             f"<text x='{left - 6}' y='{y(most) + 4}' text-anchor='end'>{most}</text>",
             f"<text x='{left - 6}' y='{y(0) + 4}' text-anchor='end'>0</text>",
             f"<text x='{x(most_runs)}' y='{y(0) + 16}' text-anchor='middle'>{most_runs}</text>"]
    for row, (arm, curve) in enumerate(sorted(curves.items())):
        colour = _COLOURS.get(arm, "#555")
        points = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in enumerate([0, *curve]))
        parts.append(f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='{points}'/>")
        parts.append(f"<text x='{width - right + 8}' y='{top + 16 * (row + 1)}' fill='{colour}'>"
                     f"{html.escape(arm)}: {curve[-1] if curve else 0}</text>")
    parts.append(f"<text x='{width - right + 8}' y='{top + 16 * (len(curves) + 1)}'>of {targets} targets</text>")
    parts.append("</svg>")
    return "".join(parts)


def campaign_html(document: dict) -> str:
    """The campaign as one page: the counts, the coverage plot, the unexplained runs (each
    linking its folder and drawn behaviour) and the targets no run reached. Every text from a
    run or a graph is escaped."""
    e = html.escape
    coverage = document["coverage"]
    rows = "".join(f"<li><b>{e(u['case'])}</b>: {e(u['why'] or '')} <a href='{e(u['run'] or '')}/'>run</a>"
                   + (f" <a href='{e(u['picture'])}'>behaviour</a>" if u.get("picture") else "") + "</li>"
                   for u in document.get("unexplained_detail", document["unexplained"]))
    missing = "".join(f"<li><code>{e(line)}</code></li>" for line in document.get("missing_first", []))
    pairs = "".join(f"<tr><td>{e(p['graph'])}</td><td>{e(p['mode'])}</td><td>{p['targets']}</td>"
                    + "".join(f"<td>{p['covered'].get(arm, 0)}</td>" for arm in ARMS)
                    + f"<td>{e(str(p['complete']))}</td></tr>" for p in document.get("pairs", []))
    random_covered = coverage["random_covered"]
    return ("<!doctype html><meta charset='utf-8'><title>flipcheck campaign</title>"
            "<style>body{font-family:sans-serif}td,th{border:1px solid #999;padding:3px 6px;font-size:13px}"
            "table{border-collapse:collapse}</style><h1>Campaign</h1>"
            f"<p>{document['runs']} runs, {document['validated']} validated, {document['conforming']} conforming; "
            f"{document['jobs_per_minute']} jobs a minute.</p>"
            f"<p>Coverage: {coverage['covered']} of {coverage['targets']} targets"
            + (f" (random faults in the same budget: {random_covered})" if random_covered is not None else "")
            + f"; transitions of the runs outside the targets (beyond the small bound): {document.get('outside', 0)}.</p>"
            + coverage_svg(document.get("curves", {}), coverage["targets"])
            + "<h2>Graphs and modes</h2><table><tr><th>graph</th><th>mode</th><th>targets</th>"
            + "".join(f"<th>{arm}</th>" for arm in ARMS) + f"<th>targets complete</th></tr>{pairs}</table>"
            + f"<h2>Divergences: runs no behaviour of the model explains</h2><ul>{rows or '<li>none</li>'}</ul>"
            + f"<h2>Targets not reached (first {len(document.get('missing_first', []))})</h2><ul>{missing}</ul>")


def write_campaign(out: Path, document: dict) -> None:
    """``out/campaign.json`` and ``out/campaign.html``, each written atomically."""
    for name, text in ((CAMPAIGN_FILE, json.dumps(document, indent=1) + "\n"), (CAMPAIGN_HTML, campaign_html(document))):
        scratch = out / f".{name}.{os.getpid()}"
        scratch.write_text(text)
        os.replace(scratch, out / name)

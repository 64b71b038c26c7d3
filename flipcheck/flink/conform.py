"""Does a real Flink run conform to the model? Flink's logs and REST plan, validated.

:func:`conform` reads a job's REST plan (``/jobs/<id>/plan``, through
:mod:`flipcheck.flink.import_plan`) and the Flink logs of its run (:mod:`flipcheck.flink.logs`),
turns the log events into the observations of :mod:`flipcheck.properties.protocol_trace_validation` and
asks whether some behaviour of the whole-job model shows them. It adds end-to-end checks that
read the run directly:

* ``trigger-plan``: for every checkpoint whose trigger RPCs are logged, the tasks Flink
  triggered equal the spec plan (:func:`flipcheck.model.plan.checkpoint_plan`) on the
  coordinator's view at that moment: the tasks whose FINISHED switch the JobManager had logged;
* ``final-checkpoint``: no task switched to FINISHED before it was notified of a completed
  checkpoint it had acknowledged (FLIP-147 on; flip147 facts §3.1 ``afterInvoke``);
* ``ids-in-order``: checkpoint ids are triggered one by one (a failover may use up as many ids as
  the log shows triggers failed without an id: triggers under way or released while it stopped
  the scheduler and cancelled the tasks, flip147 facts §4.6), and complete in increasing order;
* ``committed-output``: with the run's committed output (``flipcheck flink run`` writes it
  next to the plan), every source record is committed exactly once (at least once in
  at-least-once mode).

The model job is built from the plan: one model task per Flink subtask, sources with no
records (records are not logged, so only where a source *ends* its data matters, and the
search places it), the periodic timer Flink runs (C3p), and as many failovers as the log shows.
Vertex flags the plan cannot show (union list state, exactly-once sinks) come from the
``flipcheck flink run`` directory the plan lies in, matched by Flink job vertex id; a plan from
another cluster is validated with plain vertices.

Example
-------
>>> result = conform_files("tests/fixtures/flink_runs/join-failover/plan.json",
...                        ["tests/fixtures/flink_runs/join-failover/flink.log"])
>>> result.conforms, result.first_unexplained, [check.name for check in result.checks if not check.ok]
(True, None, [])
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple, Sequence

from flipcheck.errors import InputError
from flipcheck.flink.faults import faults_struck
from flipcheck.flink.import_plan import PlanFormatError, import_plan
from flipcheck.flink.logs import LogEvent, LogReading, TaskIdentity, read_logs, supported_release
from flipcheck.flink.observations import observations_of
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobGraph, JobVertex
from flipcheck.model.protocol import Job
from flipcheck.properties.protocol_trace_validation import DEFAULT_BUDGET, KINDS, MAX_FRONTIER, Verdict, validate
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS, protocol as protocol_named, protocol_class
from flipcheck.reference_impl.user_variants import UserVariantError

__all__ = ["Check", "Conformance", "RunDirectory", "Tasks", "conform", "conform_files", "model_job", "observations_of",
           "read_run_directory", "render_conformance", "flink_task_names", "plans_from", "ids_check", "ids_per_failover", "coordinator_failures", "vertex_names",
           "FLAG_KEYS", "REJECTED_BUDGET", "DEEPER_BACKTRACK", "DEEPER_BUDGET", "committed_output_check", "job_finished_check", "committed_counts", "failing_tasks"]

# The vertex flags a run's job graph lends the plan's vertices (the plan cannot show them).
FLAG_KEYS = ("union_list_state", "two_phase_commit_sink", "sink_v2")
# Model states the search may visit once a cheap check has rejected the run (about 15 s).
REJECTED_BUDGET = 150_000
# When the default backtrack stops undecided (it may search only as many states as the search
# took to get there, and keep only so many ways per line), the search runs again, backtracking
# this deep, within at most this many more states: the lazy search decides early which of two
# orders a later line needs, and the campaign's undecided runs needed up to 24 lines back
# (docs/conformance.md, "Cost").
DEEPER_BACKTRACK = 24
DEEPER_BUDGET = 1_000_000


@dataclass
class Check:
    name: str
    ok: bool
    detail: str

    def as_json(self) -> dict:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class Conformance:
    """What :func:`conform` found. ``events``: the log events read; ``observations``: those the
    validation matched against the model, with the log event each came from. ``designs``: each
    design's verdict (:class:`~flipcheck.flink.design_conformance.DesignConformance`), FLIP-147's
    ``protocol`` first; ``conforms`` holds when every one does. With ``--design`` another than
    the protocol, the protocol is not validated: ``verdict`` and ``job`` are None."""

    conforms: bool
    events: int
    checkpoints: int
    first_unexplained: dict | None
    checks: list[Check]
    verdict: Verdict | None
    job: Job | None
    observations: list = field(default_factory=list)
    unrecognised: int = 0
    release: str | None = None   # the Flink minor line whose formats were read (None: every one)
    designs: dict = field(default_factory=dict)
    faults: list = field(default_factory=list)   # where each injected fault struck (flipcheck.flink.faults.faults_struck)

    def as_json(self) -> dict:
        return {"conforms": self.conforms, "events": self.events, "checkpoints": self.checkpoints,
                "first_unexplained": self.first_unexplained, "checks": [c.as_json() for c in self.checks],
                "designs": {name: d.as_json() for name, d in self.designs.items()}, "faults": self.faults}


class Tasks:
    """Flink's subtasks as model tasks: an event's :class:`~flipcheck.flink.logs.TaskIdentity`
    (job vertex, subtask) -> the model task; a barrier's gate and channel -> the model input."""

    def __init__(self, plan: dict, graph: JobGraph, job: Job):
        self.by_flink_id = {v.extra.get("flink_id"): v.id for v in graph.vertices}
        self.job = job
        # Per job vertex, its input gates in order: the upstream vertex of each (REST plan "inputs").
        self.gates: dict[str, list[str]] = {}
        inner = plan.get("plan", plan) if isinstance(plan.get("plan"), dict) else plan   # REST wraps it
        for node in inner.get("nodes", ()):
            inputs = sorted(node.get("inputs") or (), key=lambda i: i.get("num", 0))
            self.gates[str(node.get("id"))] = [self.by_flink_id.get(str(i.get("id"))) for i in inputs]

    def task(self, identity: TaskIdentity | None) -> int | None:
        """The model task of an event's task (None: not a subtask of the plan's, or not known)."""
        if identity is None:
            return None
        vertex_id = self.by_flink_id.get(identity.vertex)
        return self.job.task_index.get((vertex_id, identity.subtask)) if vertex_id is not None else None

    def input(self, identity: TaskIdentity | None, detail: str) -> int | None:
        """The model input of a barrier's ``gate G channel C``: gate G reads the G-th input job
        edge, channel C the C-th upstream subtask connected to this one (None: not mappable)."""
        try:
            _, gate, _, channel = detail.split()
            upstream = self.gates.get(identity.vertex, [])[int(gate)]
        except (ValueError, IndexError, AttributeError):
            return None
        t = self.task(identity)
        if upstream is None or t is None:
            return None
        job = self.job
        sources = [(local, job.channels[c].source) for local, c in enumerate(job.tasks[t].inputs)
                   if job.tasks[job.channels[c].source].vertex == upstream]
        sources.sort(key=lambda pair: job.tasks[pair[1]].subtask)
        return sources[int(channel)][0] if int(channel) < len(sources) else None


class RunDirectory(NamedTuple):
    """What ``flipcheck flink run`` wrote beside the plan: the graph as run, with each source's
    records and each vertex's flags (``spec.json``), each vertex's Flink job vertex id
    (``run.json``) and the checkpointing mode."""

    path: Path
    graph: JobGraph
    flink_ids: dict
    mode: str
    status: str | None = None   # Flink's JobStatus at the end (run.json), None when not recorded
    cause: str | None = None
    batch: bool = False         # a --batch run: a BATCH job, which takes no checkpoints
    flink_version: str | None = None   # the release that ran it (run.json), None when not recorded


# spec.json's vertex roles and partitionings, as graph flags and edge patterns.
_ROLE_FLAGS = {"two_phase_commit_sink": "two_phase_commit_sink", "sink_v2": "sink_v2"}
_POINTWISE_PARTITIONINGS = ("forward", "rescale")


def read_run_directory(folder: Path) -> RunDirectory | None:
    """The run directory ``folder`` if ``flipcheck flink run`` wrote it (else None)."""
    if not all((folder / name).is_file() for name in ("run.json", "spec.json")):
        return None
    try:
        run = json.loads((folder / "run.json").read_text())
        spec = json.loads((folder / "spec.json").read_text())
        vertices, edges = [], []
        for v in spec["vertices"]:
            extra = {"union_list_state": bool(v.get("union_list_state"))}
            if v["role"] in _ROLE_FLAGS:
                extra[_ROLE_FLAGS[v["role"]]] = True
            if v["role"] == "source":
                extra["records"] = int(v["records"])
            vertices.append(JobVertex(str(v["id"]), int(v["parallelism"]), MappingProxyType(extra)))
            for i in v["inputs"]:
                pattern = POINTWISE if i["partitioning"] in _POINTWISE_PARTITIONINGS else ALL_TO_ALL
                edges.append((str(i["source"]), str(v["id"]), pattern))
        return RunDirectory(folder, JobGraph.build(vertices, edges), dict(run["vertices"]), str(spec["mode"]),
                            run.get("status"), run.get("cause"), spec.get("batch") is not None,
                            (run.get("flink") or {}).get("version"))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(str(folder), f"not a readable flipcheck flink run directory: {error}") from None


def vertex_names(plan: dict) -> dict[str, str]:
    """Task name -> Flink job vertex id, from the REST plan's node descriptions (``Source:
    src<br/>``): how lines of releases before 1.16, whose attempt ids do not name their job
    vertex, find it.

    >>> vertex_names({"nodes": [{"id": "f362", "description": "Source: src<br/>"},
    ...                         {"id": "2e58", "description": "sink: Writer<br/>+- sink: Committer<br/>"}]})
    {'Source: src': 'f362', 'sink: Writer -> sink: Committer': '2e58'}
    """
    inner = plan.get("plan", plan) if isinstance(plan.get("plan"), dict) else plan   # REST wraps it
    names: dict = {}
    for node in inner.get("nodes", ()) if isinstance(inner.get("nodes"), list) else ():
        if isinstance(node, dict) and isinstance(node.get("description"), str):
            # A chain is described one operator a line ("a<br/>+- b<br/>"); its task is "a -> b".
            operators = [part.strip().removeprefix("+- ").strip() for part in node["description"].split("<br/>")]
            names[" -> ".join(o for o in operators if o)] = str(node.get("id"))
    return names


def model_job(plan: dict, run: RunDirectory | None = None, protocol: str = CORRECT_PROTOCOL,
              mode: str = "aligned", failures: int = 0, ids_used_up: int = 1,
              coordinator_failures: bool = False) -> tuple[JobGraph, Job]:
    """The plan's job graph (vertex flags from the ``run`` that produced it, matched by Flink
    job vertex id; sources without records) and the model job that validates a run of it."""
    try:
        graph = import_plan(plan).graph
    except PlanFormatError as error:
        raise InputError("--plan", str(error)) from None
    flags: dict = {}
    if run is not None:
        for vertex in run.graph.vertices:
            flags[run.flink_ids.get(vertex.id)] = {k: vertex.extra[k] for k in FLAG_KEYS if k in vertex.extra}
    vertices = []
    for v in graph.vertices:
        extra = {k: val for k, val in v.extra.items() if k not in FLAG_KEYS and k != "records"}
        extra.update(flags.get(v.extra.get("flink_id"), {}))
        if not graph.inputs(v.id):
            extra["records"] = 0
        vertices.append(JobVertex(v.id, v.parallelism, MappingProxyType(extra)))
    # FLIP-147 on or off is the protocol's to say (--protocol pre-flip-147), not the run's.
    graph = JobGraph.build(vertices, graph.edges)
    job = Job(graph, mode=mode, records=0, checkpoints=0, failures=failures, protocol=protocol_named(protocol),
              periodic_timer=True, ids_per_failover=ids_used_up, coordinator_failures=coordinator_failures)
    return graph, job


# Log lines carry local time, a trigger's own timestamp is UTC: their difference, rounded to
# the quarter hour every time zone offset is a multiple of, is the log's offset.
_ZONE_STEP_MS = 15 * 60 * 1000


def plans_from(observed: Sequence[tuple]) -> dict[int, int]:
    """For each trigger observation whose line gives its own timestamp, the index of the first
    observation logged at or after that timestamp: the coordinator takes the timestamp, then
    computes the plan on the JobManager's main thread, then logs the line (flip147 facts §4.9),
    so every line logged before the timestamp precedes the plan and any line after may follow it.

    >>> from flipcheck.flink.logs import LogEvent
    >>> def line(t, kind="execution-state", at=None):
    ...     return LogEvent(kind, "jm.log", 1, f"2026-11-25 11:00:03,{t:03d}", 5, None, "", at)
    >>> observed = [(("reported", 0), line(531)), (("reported", 1), line(540)), (("reported", 2), line(542)),
    ...             (("trigger", 5), line(547, "trigger", at=1795600803538))]   # 10:00:03.538 UTC, logged at UTC+1
    >>> plans_from(observed)
    {3: 1}
    """
    found: dict[int, int] = {}
    times: list = []
    for j, (o, e) in enumerate(observed):
        times.append(_millis(e.time))
        if o[0] != "trigger" or e.at is None or times[j] is None:
            continue
        offset = round((times[j] - e.at) / _ZONE_STEP_MS) * _ZONE_STEP_MS
        first = j
        while first > 0 and times[first - 1] is not None and times[first - 1] >= e.at + offset:
            first -= 1
        found[j] = first
    return found


def _millis(logged: str) -> int | None:
    """A log line's time as milliseconds since the epoch, read as if it were UTC."""
    try:
        day, clock = logged.split(" ")
        hms, millis = clock.split(",")
        moment = datetime.datetime.fromisoformat(f"{day}T{hms}+00:00")
    except ValueError:
        return None
    return int(moment.timestamp()) * 1000 + int(millis)


def failing_tasks(observed: Sequence[tuple], tasks: Tasks) -> dict[int, int]:
    """For each failover observation a task's own line shows (its switch to FAILED, or the
    decline its failing snapshot sent first), that task: F0 fails it and no other. A global
    failure's line (the JobManager's own, divergence 22) is no task's: -1, so only F1 shows it."""
    found = {}
    for j, (o, e) in enumerate(observed):
        if o == ("failover",) and e.kind in ("task-state", "execution-state", "decline"):
            t = tasks.task(e.identity)
            if t is not None:
                found[j] = t
        elif o == ("failover",) and e.kind == "global-failure":
            found[j] = -1
    return found


def _plan_check(reading: LogReading, tasks: Tasks, spec: Job) -> Check:
    """The tasks each checkpoint was triggered on, against the spec plan on the JobManager's
    view. The coordinator computes the plan before it logs the trigger (flip147 facts §4.1), so
    any view it held since the previous trigger may be the one: the FINISHED switches logged
    in between.

    An RPC that reached a task no longer running logs no checkpoint id (flip147 facts §4.3). It
    belongs to the oldest checkpoint, triggered after the last one the RPC lines of the same
    execution attempt named, whose plan may hold the task: an attempt's RPCs arrive in the
    order of their ids, and the next trigger's line may come first (divergence 32). An attempt
    first seen after a failover runs from the restart, so its first RPC is for a trigger after
    the failover; a late RPC to the attempt that failed belongs before it."""
    view, last = 0, 0
    views: list = [0]                  # the views since the previous trigger line
    planned: dict[int, set] = {}
    triggered: dict[int, int] = {}
    named: dict[tuple, int] = {}       # per (task, attempt), the last checkpoint its RPC lines belong to
    restarted_after = 0                # the last trigger before the latest failover
    shown = False
    for e in reading.events:
        t = tasks.task(e.identity)
        if e.kind == "execution-state" and t is not None:
            if e.detail.endswith(" to FINISHED"):
                view |= 1 << t
                views.append(view)
            elif e.detail.endswith(" to FAILED") or e.detail.endswith(" to CANCELED"):
                view, views = 0, [0]   # F1: the restarted tasks run again
                restarted_after = last
                # An attempt the log does not number cannot be told from its restart.
                named = {key: k for key, k in named.items() if key[1] is not None}
        elif e.kind == "trigger":
            plans = {spec.plan(v) for v in views}
            planned[e.checkpoint] = {plan[0] if isinstance(plan, tuple) else 0 for plan in plans}
            last, views = e.checkpoint, [view]
        elif e.kind in ("trigger-task", "trigger-unknown") and t is not None:
            shown = True
            attempt = (t, e.identity.attempt)
            if e.kind == "trigger-task":
                k = e.checkpoint
            else:
                after = named.get(attempt, restarted_after)
                # Not a checkpoint whose tasks triggered so far, with t, fit none of its plans: the
                # RPC of the next one, whose line came first, reached t (ci38: FLINK-37605's cell).
                k = min((i for i, masks in planned.items() if i > after and any(
                    m >> t & 1 and not (triggered.get(i, 0) | 1 << t) & ~m for m in masks)), default=last)
            named[attempt] = max(named.get(attempt, restarted_after), k)
            triggered[k] = triggered.get(k, 0) | 1 << t
    if not shown:
        return Check("trigger-plan", True, "not checked: the log has no TaskExecutor DEBUG trigger lines")
    names = lambda mask: ", ".join(sorted(spec.name(u) for u in range(len(spec.tasks)) if mask >> u & 1))  # noqa: E731
    for k in sorted(planned):
        if k in triggered and triggered[k] not in planned[k]:
            return Check("trigger-plan", False, f"checkpoint {k}: Flink triggered {names(triggered[k])}; the spec plan "
                                                f"triggers {' or '.join(names(m) for m in sorted(planned[k]))}")
    both = sum(1 for k in planned if k in triggered)
    return Check("trigger-plan", True, f"{both} checkpoints: the triggered tasks equal the spec plan on the view")


def _final_checkpoint_check(observed: list, job: Job) -> Check:
    """FLIP-147: a task switches to FINISHED only after a completed checkpoint it took part in
    was confirmed to it. Which checkpoint was its final one the log cannot tell: a source's end
    of data is logged only later (``Finished task``, flip147 facts §4.4), so any acknowledged and
    confirmed checkpoint may have been it; the model check places it exactly."""
    if not job.after_finished:
        return Check("final-checkpoint", True, "not checked: FLIP-147 is off, tasks finish without a final checkpoint")
    kinds = {o[0] for o, _ in observed}
    if not {"ack", "notify"} <= kinds:
        return Check("final-checkpoint", True, "not checked: the log has no acknowledgement or notification lines")
    acked: dict[int, set] = {}
    confirmed: dict[int, bool] = {}
    finished = 0
    for o, e in observed:
        if o[0] == "ack":
            acked.setdefault(o[1], set()).add(o[2])
        elif o[0] == "notify" and o[2] in acked.get(o[1], ()):
            confirmed[o[1]] = True
        elif o[0] == "failover-known":
            # F1 restarts the attempts: what the old ones acknowledged and were told is theirs.
            # Not at F0 (a task failed): until the JobManager handles it the others run on, and
            # one may still finish on a checkpoint confirmed before (flip147 facts §4.10).
            acked, confirmed = {}, {}
        elif o[0] == "finished":
            if not confirmed.get(o[1]):
                return Check("final-checkpoint", False, f"{job.name(o[1])} switched to FINISHED ({e.file}:{e.line}) "
                                                         "before any checkpoint it acknowledged was confirmed to it")
            finished += 1
    return Check("final-checkpoint", True, f"{finished} tasks finished, each after a confirmed checkpoint it took part in")


def ids_check(observed: list, reading: LogReading | None = None) -> Check:
    """Ids are triggered one by one, except that a failover may use up ids (F1b, flip147 facts
    §4.6): as many as the log shows triggers that failed with no pending checkpoint
    (``UNKNOWN_CHECKPOINT_ID``) since the trigger before (one, without a ``reading``); a completed
    id was triggered before, and completions come in increasing order. The ids a failover uses
    up are drawn while the JobManager handles the failure: a trigger logged after a task's FAILED
    line but before the JobManager's own (its timer did not know yet) leaves the failover's
    allowance to the next one."""
    events = {id(e): i for i, e in enumerate(reading.events)} if reading is not None else {}
    handled = [i for i, e in enumerate(reading.events)
               if e.kind == "execution-state" and e.detail.endswith(" to FAILED")] if reading is not None else []
    failed_triggers = [i for i, e in enumerate(reading.events) if e.kind == "trigger-failed"] if reading is not None else []
    last_trigger, last_completed, open_failovers, skipped, failed_at, trigger_at = 0, 0, 0, 0, None, -1
    triggered: set = set()
    for o, e in observed:
        if o[0] == "trigger":
            at = events.get(id(e))
            gap = o[1] - last_trigger - 1 if last_trigger else 0
            if reading is not None and at is not None:
                shown = sum(1 for i in failed_triggers if trigger_at < i < at)
                allowed = shown if open_failovers else 0
            else:
                shown = allowed = open_failovers
            if last_trigger and not (last_trigger < o[1] and gap <= allowed):
                unshown = f" ({shown} failed trigger{'s' if shown != 1 else ''} without an id logged since)" if gap else ""
                return Check("ids-in-order", False,
                             f"checkpoint {o[1]} triggered after {last_trigger}{unshown} ({e.file}:{e.line})")
            known = failed_at is None or at is None or not handled or any(failed_at <= h < at for h in handled)
            if known or gap:  # the allowance is spent once the JobManager knew, or by the skip itself
                open_failovers = 0
            skipped += gap
            last_trigger, trigger_at = o[1], at if at is not None else trigger_at
            triggered.add(o[1])
        elif o[0] == "failover":
            open_failovers += 1
            failed_at = events.get(id(e))
        elif o[0] == "completed":
            if o[1] not in triggered:
                return Check("ids-in-order", False, f"checkpoint {o[1]} completed, never triggered before ({e.file}:{e.line})")
            if o[1] <= last_completed:
                return Check("ids-in-order", False, f"checkpoint {o[1]} completed after {last_completed} ({e.file}:{e.line})")
            last_completed = o[1]
    burned = f", {skipped} id{'s' if skipped != 1 else ''} used up by failovers" if skipped else ""
    return Check("ids-in-order", True, f"triggered 1..{last_trigger} one by one{burned}; completions in increasing order")


def coordinator_failures(reading: LogReading) -> bool:
    """Whether the log shows a checkpoint that failed as it was triggered, no task ever hearing
    of it: its trigger line, its failure line followed by "Trigger checkpoint failure", and no
    trigger RPC, barrier, snapshot or decline of it. Only then does the model get C2f (a
    coordinator's snapshot failing the trigger, flip147 facts §4.16): the step doubles every
    trigger's choices, which a search pays for."""
    triggered, heard, failures = set(), set(), []
    for e in reading.events:
        if e.kind == "trigger":
            triggered.add(e.checkpoint)
        elif e.kind == "failed":
            failures.append(e)
        elif e.kind in ("trigger-task", "barrier", "ack", "decline", "checkpoint-started", "aligned"):
            heard.add(e.checkpoint)
    files: dict = {}
    for e in failures:
        if e.checkpoint in triggered and e.checkpoint not in heard:
            if e.file not in files:
                files[e.file] = Path(e.file).read_text(errors="replace").splitlines()
            lines = files[e.file]
            if e.line < len(lines) and "Trigger checkpoint failure" in lines[e.line]:
                return True
    return False


def ids_per_failover(reading: LogReading) -> int:
    """F1b's bound for the model: the most triggers that failed with no pending checkpoint
    (``UNKNOWN_CHECKPOINT_ID``) the log shows between two trigger lines; each may have used up
    the id it drew (flip147 facts §4.6)."""
    most = count = 0
    for e in reading.events:
        if e.kind == "trigger":
            count = 0
        elif e.kind == "trigger-failed":
            count += 1
            most = max(most, count)
    return most


def committed_counts(run: RunDirectory | None, check: str) -> tuple[dict, dict] | Check:
    """``(expected, counts)``: per source record, the commits an exactly-once run makes (one per
    path to each committing sink), and the commits ``run``'s output holds; or the passing
    ``check`` that says why there is nothing to count (no run directory, no committing sink)."""
    from flipcheck.flink.engine import committed_records

    if run is None:
        return Check(check, True, "not checked: no flipcheck flink run directory beside the plan")
    job = Job(run.graph)
    sinks = [v.id for v in run.graph.vertices if v.extra.get("two_phase_commit_sink") or v.extra.get("sink_v2")]
    if not sinks:
        return Check(check, True, "not checked: the job has no committing sink")
    expected = {r: sum(job.paths.get((info.vertex, sink), 0) for sink in sinks)
                for info in job.tasks for r in info.records}
    counts: dict = {}
    for record in committed_records(run.path):
        counts[record] = counts.get(record, 0) + 1
    return expected, counts


def _output_check(run: RunDirectory | None, mode: str) -> Check:
    """Every source record committed exactly once per path to each committing sink (at least
    once in at-least-once mode), read from the output ``flipcheck flink run`` committed."""
    found = committed_counts(run, "committed-output")
    if isinstance(found, Check):
        return found
    expected, counts = found
    missing = sorted(r for r, n in expected.items() if counts.get(r, 0) < n)
    extra = sorted(r for r, n in counts.items() if n > expected.get(r, 0))
    if missing:
        return Check("committed-output", False, f"{len(missing)} source records committed too few times, "
                                                f"e.g. record {missing[0]} ({counts.get(missing[0], 0)} of {expected[missing[0]]})")
    if extra and mode != "at-least-once":
        return Check("committed-output", False, f"{len(extra)} records committed too often, e.g. record {extra[0]} "
                                                f"({counts[extra[0]]} times, {expected.get(extra[0], 0)} expected)")
    how = "at least" if mode == "at-least-once" else "exactly"
    return Check("committed-output", True, f"{sum(expected.values())} commits of {len(expected)} source records, "
                                           f"each {how} once per path to a committing sink")


def conform(plan: dict, logs: Sequence[str], *, protocol: str = CORRECT_PROTOCOL, run: RunDirectory | None = None,
            mode: str | None = None, budget: int | None = None, progress=None,
            flink_version: str | None = None, design: str | None = None, backtrack: int | None = None,
            frontier: int | None = None) -> Conformance:
    """Validate the run the ``logs`` show against the model built from ``plan`` (and the
    ``run`` directory's flags and output); ``mode`` defaults to the run's, else aligned.
    ``protocol``: a named protocol variant or a user's class spec (``FILE.py:CLASS``).
    ``flink_version`` (``1.14.6``): the release that wrote the logs (default: their
    banner's, else the run directory's ``run.json``, else the newest format, older ones where
    unambiguous). ``backtrack``: observations the search explains again, every way, when it gets
    stuck (default :data:`~flipcheck.properties.protocol_trace_validation.DEFAULT_BACKTRACK`, and
    when that stops undecided :data:`DEEPER_BACKTRACK` within :data:`DEEPER_BUDGET` more states;
    a deeper one given here may use the whole ``budget``). ``frontier``: the ways the
    search keeps per observation (default
    :data:`~flipcheck.properties.protocol_trace_validation.MAX_FRONTIER`; a verdict reached after
    a cut is undecided). ``progress`` gets the search's
    :class:`~flipcheck.properties.protocol_trace_validation.SearchProgress` now and then.
    ``design`` (a name of :data:`~flipcheck.flink.design_conformance.DESIGN_NAMES`): validate
    that design only; default: the protocol and every design whose lines the logs hold."""
    from flipcheck.flink.conform_designs import design_functions, design_name
    from flipcheck.flink.design_conformance import DesignConformance

    if design is not None:
        try:
            design = design_name(design)
        except ValueError as error:
            raise InputError("--design", str(error)) from None
    # Imported before the logs are read: each design module adds its log lines.
    others = {} if design == "protocol" else design_functions(design)
    mode = mode or (run.mode if run is not None else "aligned")
    try:
        protocol_class(protocol)   # a named variant, or a user's class (FILE.py:CLASS, MODULE:CLASS)
    except UserVariantError as error:
        raise InputError("--protocol", str(error)) from None
    except ValueError:
        raise InputError("--protocol", f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)}, "
                                       "or your own class as FILE.py:CLASS)") from None
    release = None
    if flink_version is not None:
        try:
            release = supported_release(flink_version)
        except ValueError as error:
            raise InputError("--flink-version", str(error)) from None
    unbannered = None   # a MiniCluster's log has no banner: the release its run directory names
    if run is not None and run.flink_version is not None:
        try:
            unbannered = supported_release(run.flink_version)
        except ValueError:
            unbannered = None
    reading = read_logs(logs, release, vertex_names(plan), unbannered=unbannered)
    run_designs = {}
    for name, conform_design in others.items():
        verdict = conform_design(reading, run)
        if verdict is not None:
            run_designs[name] = verdict
    if design not in (None, "protocol"):
        if design not in run_designs:
            raise InputError("--design", f"the logs hold no line of design {design!r}")
        found = run_designs[design]
        return Conformance(found.conforms, len(reading.events), 0, found.first_unexplained, found.checks, None, None,
                           unrecognised=reading.unrecognised, release=reading.release, designs=run_designs,
                           faults=faults_struck(reading.events))
    if run is not None and run.batch:
        return _batch_run(plan, reading, run, run_designs)
    failures = sum(1 for e in reading.events if e.kind == "execution-state" and e.detail.endswith(" to FAILED")
                   or e.kind == "global-failure")
    _, job = model_job(plan, run, protocol, mode, failures, ids_per_failover(reading), coordinator_failures(reading))
    tasks = Tasks(plan, job.graph, job)
    observed, observations, visible, hidden = observations_of(reading, tasks)
    _, spec = model_job(plan, run, CORRECT_PROTOCOL, mode, failures)
    # The end-to-end checks are cheap: one that fails has rejected the run already, and the
    # search then only looks, within a hard bound, for the first line no behaviour explains.
    # So is the committed output where the model promises it: a record lost or committed twice
    # has rejected the run (in a racing diamond run, a duplicated record cost a whole 1.7M-state
    # search to accept the log). With FLIP-147 off a finishing sink's loss is a behaviour of the
    # model (J7, flip147 facts §4.7), which the search must still find in full.
    cheap = [_plan_check(reading, tasks, spec), _final_checkpoint_check(observed, job), ids_check(observed, reading)]
    output = _output_check(run, mode)
    budget = budget or DEFAULT_BUDGET
    if not all(c.ok for c in cheap) or not output.ok and job.after_finished:
        budget = min(budget, REJECTED_BUDGET)
    search = dict(visible=sorted(visible & set(KINDS)), hidden=hidden, plans_from=plans_from(observed),
                  progress=progress, where=lambda j: f"{observed[j][1].file}:{observed[j][1].line}",
                  failing=failing_tasks(observed, tasks))
    if frontier is not None:
        search["max_frontier"] = frontier
    started = time.monotonic()
    verdict = validate(job, observations, budget=budget, **({} if backtrack is None else {"backtrack": backtrack}),
                       **search)
    if backtrack is None and _undecided(verdict, budget):
        verdict = _search_deeper(job, observations, search, verdict, budget, time.monotonic() - started)
    first = None
    if verdict.first_unexplained is not None:
        o, e = observed[verdict.first_unexplained]
        first = {"file": e.file, "line": e.line, "event": e.kind + _event_text(e), "why": verdict.why}
    elif not verdict.conforms:
        last = reading.events[-1] if reading.events else None
        first = {"file": last.file if last else "", "line": last.line if last else 0, "event": "end of log",
                 "why": verdict.why}
    checks = [Check("model", verdict.conforms,
                    f"{verdict.explained} of {len(observations)} observations explained by a behaviour of the "
                    f"{job.protocol.name} model ({verdict.states:,} states searched)"),
              *cheap, output, _finished_check(run)]
    checkpoints = len({e.checkpoint for e in reading.events if e.kind == "trigger"})
    ok = all(c.ok for c in checks)
    designs = {"protocol": DesignConformance("protocol", ok, len(observed), first, checks), **run_designs}
    return Conformance(ok and all(d.conforms for d in run_designs.values()), len(reading.events), checkpoints, first,
                       checks, verdict, job, observed, reading.unrecognised, reading.release, designs,
                       faults_struck(reading.events))


def _batch_run(plan: dict, reading: LogReading, run: RunDirectory, run_designs: dict) -> Conformance:
    """FLIP-147's verdict on a BATCH job: it takes no checkpoint, so no line shows the protocol
    (its JobManager failover is batch recovery's to validate, docs/batch-recovery.md)."""
    from flipcheck.flink.design_conformance import DesignConformance

    _, job = model_job(plan)
    checks = [Check("model", True, "not checked: a BATCH job takes no checkpoints, FLIP-147's protocol has nothing "
                                   "to show (its recovery is the batch-recovery design's)"), _finished_check(run)]
    ok = all(c.ok for c in checks)
    designs = {"protocol": DesignConformance("protocol", ok, 0, None, checks), **run_designs}
    return Conformance(ok and all(d.conforms for d in run_designs.values()), len(reading.events), 0, None, checks,
                       Verdict(True, 0), job, [], reading.unrecognised, reading.release, designs)


def _undecided(verdict: Verdict, budget: int) -> bool:
    """The search stopped at a bound with budget left: its backtracking at its floor, or its
    frontier at its cap. A rejection after a whole backtrack is not searched again: a genuine
    one (a line deleted) would cost the whole second search and end undecided."""
    return not verdict.conforms and verdict.exhausted_budget and verdict.states < budget


def _search_deeper(job, observations: Sequence[tuple], search: dict, first: Verdict, budget: int,
                   first_seconds: float) -> Verdict:
    """The second search of a run the first left undecided: :data:`DEEPER_BACKTRACK` lines back,
    within :data:`DEEPER_BUDGET` states (and the budget left), keeping four times the ways per
    line if the first had to drop some. Its progress and its states continue the first's; a why
    that stops at the cap says so, and names the search that may use the whole budget."""
    progress = search["progress"]
    again = f"again, {DEEPER_BACKTRACK} lines back"
    wider = {} if first.frontier_cut is None else {"max_frontier": 4 * search.get("max_frontier", MAX_FRONTIER)}
    deeper = validate(job, observations, **{**search, **wider, "progress": None if progress is None else (
                          lambda p: progress(p._replace(states=first.states + p.states,
                                                        seconds=first_seconds + p.seconds, search=again)))},
                      budget=min(budget - first.states, DEEPER_BUDGET), backtrack=DEEPER_BACKTRACK,
                      budget_named=f"the cap of a second search {DEEPER_BACKTRACK} lines back, after "
                                   f"{first.states:,} states of the first; conform --backtrack {DEEPER_BACKTRACK} "
                                   f"lets one search use the whole budget")
    return dataclasses.replace(deeper, states=first.states + deeper.states)


def _finished_check(run: RunDirectory | None) -> Check:
    """``job-finished``: a bounded job whose injected faults fire once ends FINISHED (its restarts
    suffice); a job that failed for good has not shown FLIP-147's promise, whatever its log shows."""
    if run is None or run.status is None:
        return Check("job-finished", True, "no run.json status to read (a log from another cluster)")
    if run.status == "FINISHED":
        return Check("job-finished", True, "the job ended FINISHED")
    return Check("job-finished", False, f"the job ended {run.status}" + (f": {run.cause}" if run.cause else ""))


# The end-to-end checks a design's own conformance reuses (flipcheck/flink/conform_<design>.py).
committed_output_check, job_finished_check = _output_check, _finished_check


def _event_text(e: LogEvent) -> str:
    parts = []
    if e.checkpoint is not None:
        parts.append(f"checkpoint {e.checkpoint}")
    if e.task:
        parts.append(f"task {e.task}")
    if e.detail:
        parts.append(e.detail)
    return (" " + ", ".join(parts)) if parts else ""


def render_conformance(result: Conformance, path: str) -> str:
    """Draw the behaviour found as a sequence chart (``flipcheck explore``'s), up to the first
    unexplained log event, which is the last row, outlined red. The lanes are Flink's tasks as its
    log names them (``Source: src (1/2)``); each step names the log lines it explains
    (``flink.log:284``); and steps share rows and cells where nothing orders them (the compact
    layout of :func:`~flipcheck.render.protocol.chart_source`), so a real run's chart stays small."""
    from flipcheck.properties.protocol_explore import TraceStep
    from flipcheck.properties.protocol_trace_validation import model_label, replay_behaviour, shown_by_step
    from flipcheck.render.protocol import render_trace

    job, verdict = result.job, result.verdict
    steps = replay_behaviour(job, verdict.behaviour)
    observations = [o for o, _ in result.observations]
    refs = {step: _line_refs([result.observations[i][1] for i in shown])
            for step, shown in shown_by_step(job, steps, observations, verdict.explained_after).items()}
    first = result.first_unexplained
    if first is None:
        title = f"conforms: {len(result.observations):,} log events explained by the {job.protocol.name} model"
        subtitle = ""
    else:
        title = f"first unexplained: {first['file']}:{first['line']}: {first['event']}"
        subtitle = f"why: {first['why']}"
        if verdict.first_unexplained is not None:
            o, e = result.observations[verdict.first_unexplained]
            state = steps[-1].state if steps else None
            if state is not None or not steps:
                from flipcheck.model.protocol import initial_state

                steps.append(TraceStep(model_label(o), (), state or initial_state(job), False))
                refs[len(steps)] = _line_refs([e])
    return render_trace(job, steps, path, title, subtitle, task_names=flink_task_names(job), step_refs=refs,
                        compact=True, outline_last=first is not None)


def flink_task_names(job: Job) -> list[str]:
    """Each model task as Flink's log names it, ``<vertex name> (<subtask>/<parallelism>)``, from
    the plan's vertex names; the model's name where the plan gives none, or where two vertices
    share one.

    >>> from flipcheck.model.jobgraph import JobGraph, JobVertex
    >>> graph = JobGraph.build([JobVertex("source-src-f362c8", 2, {"name": "Source: src"}), ("sink", 1)],
    ...                        [("source-src-f362c8", "sink", ALL_TO_ALL)])
    >>> flink_task_names(Job(graph))
    ['Source: src (1/2)', 'Source: src (2/2)', 'sink[0]']
    """
    vertices = {v.id: v for v in job.graph.vertices}
    names = [vertices[info.vertex].extra.get("name") for info in job.tasks]
    shared = {n for n in names if n is not None and len({info.vertex for info, m in zip(job.tasks, names) if m == n}) > 1}
    return [f"{n} ({info.subtask + 1}/{vertices[info.vertex].parallelism})" if n is not None and n not in shared
            else job.name(t) for t, (info, n) in enumerate(zip(job.tasks, names))]


def _line_refs(events: Sequence[LogEvent]) -> list[str]:
    """Where ``events`` were logged: ``flink.log:284,311`` (one entry per file, in order)."""
    lines: dict = {}
    for e in events:
        lines.setdefault(Path(e.file).name, []).append(e.line)
    return [f"{name}:{','.join(map(str, sorted(numbers)))}" for name, numbers in lines.items()]


def conform_files(plan_path: str, logs: Sequence[str], **options: Any) -> Conformance:
    """:func:`conform` on files: the plan and the logs; a ``flipcheck flink run`` directory
    holding the plan lends its flags, mode and committed output."""
    from flipcheck.model.graph_json import decode_json, read_input_file

    try:
        plan = decode_json(read_input_file(plan_path, PlanFormatError), PlanFormatError)
    except PlanFormatError as error:
        raise InputError(plan_path, str(error)) from None
    for log in logs:
        if not os.path.isfile(log):
            raise InputError(log, "no such log file")
    run = read_run_directory(Path(plan_path).resolve().parent)
    return conform(plan, logs, run=run, **options)

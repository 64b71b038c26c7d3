"""Does a real Flink run conform to the model? Flink's logs and REST plan, validated.

:func:`conform` reads a job's REST plan (``/jobs/<id>/plan``, through
:mod:`flipcheck.flink.import_plan`) and the Flink logs of its run (:mod:`flipcheck.flink.logs`),
turns the log events into the observations of :mod:`flipcheck.properties.trace_validation` and
asks whether some behaviour of the whole-job model shows them. It adds end-to-end checks that
read the run directly:

* ``trigger-plan``: for every checkpoint whose trigger RPCs are logged, the tasks Flink
  triggered equal the spec plan (:func:`flipcheck.model.plan.checkpoint_plan`) on the
  coordinator's view at that moment: the tasks whose FINISHED switch the JobManager had logged;
* ``final-checkpoint``: no task switched to FINISHED before it was notified of a completed
  checkpoint it had acknowledged (FLIP-147 on; flip147 facts §3.1 ``afterInvoke``);
* ``ids-in-order``: checkpoint ids are triggered one by one, and complete in increasing order;
* ``committed-output``: with the run's committed output (``flipcheck flink run`` writes it
  next to the plan), every source record is committed exactly once (at least once in
  at-least-once mode).

The model job is built from the plan: one model task per Flink subtask, sources with no
records (records are not logged, so only where a source *ends* its data matters, and the
search places it), the periodic timer Flink runs (C3p), and as many failovers as the log shows.
Vertex flags the plan cannot show (union list state, exactly-once sinks) come from the job
graph the run was built from (``graph``), matched by vertex name.

Example
-------
>>> import json
>>> plan = json.load(open("tests/fixtures/flink_runs/chain/plan.json"))
>>> result = conform(plan, ["tests/fixtures/flink_runs/chain/flink.log"])
>>> result.conforms, result.first_unexplained
(True, None)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Sequence

from flipcheck.errors import InputError
from flipcheck.flink.import_plan import PlanFormatError, import_plan
from flipcheck.flink.logs import LogEvent, LogReading, attempt_parts, read_logs
from flipcheck.model.jobgraph import JobGraph, JobVertex
from flipcheck.model.protocol import Job
from flipcheck.properties.trace_validation import KINDS, Verdict, validate
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS, protocol as protocol_named

__all__ = ["Check", "Conformance", "conform", "conform_files", "model_job", "observations_of", "FLAG_KEYS"]

# The vertex flags a run's job graph lends the plan's vertices (the plan cannot show them).
FLAG_KEYS = ("union_list_state", "two_phase_commit_sink", "sink_v2")
# Log kinds only DEBUG shows: visible to the validation only when the log has one of them.
# Log kinds that name a task by its name, not its attempt id.
_BY_NAME = {"task-ended": "ended", "operators-finished": "closing"}
_DEBUG_KINDS = {"trigger-task": "trigger-task", "barrier": "barrier", "ack": "ack", "notify-complete": "notify"}


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
    validation matched against the model, with the log event each came from."""

    conforms: bool
    events: int
    checkpoints: int
    first_unexplained: dict | None
    checks: list[Check]
    verdict: Verdict
    job: Job
    observations: list = field(default_factory=list)
    unrecognised: int = 0

    def as_json(self) -> dict:
        return {"conforms": self.conforms, "events": self.events, "checkpoints": self.checkpoints,
                "first_unexplained": self.first_unexplained, "checks": [c.as_json() for c in self.checks]}


class _Tasks:
    """Flink's subtasks as model tasks: an attempt id's job vertex and subtask index."""

    def __init__(self, plan: dict, graph: JobGraph, job: Job):
        self.by_flink_id = {v.extra.get("flink_id"): v.id for v in graph.vertices}
        self.job = job
        # Per job vertex, its input gates in order: the upstream vertex of each (REST plan "inputs").
        self.gates: dict[str, list[str]] = {}
        for node in plan.get("nodes", ()):
            inputs = sorted(node.get("inputs") or (), key=lambda i: i.get("num", 0))
            self.gates[str(node.get("id"))] = [self.by_flink_id.get(str(i.get("id"))) for i in inputs]

    def learn_names(self, events) -> None:
        """``<name> (<subtask>/<parallelism>)#<attempt>`` -> attempt id, from the state switches:
        the lines that name a task without its attempt id (``Finished task ...``) need it."""
        self.by_name: dict = {}
        for e in events:
            if e.kind == "task-state" and e.task:
                name = e.detail.rsplit(": ", 1)[0]
                known = self.by_name.setdefault(name, e.task)
                if known != e.task:
                    self.by_name[name] = None   # two vertices of one name: such lines are not read

    def task(self, attempt: str | None) -> int | None:
        if attempt is None:
            return None
        try:
            vertex, subtask, _ = attempt_parts(attempt)
        except ValueError:
            return None
        vertex_id = self.by_flink_id.get(vertex)
        return self.job.task_index.get((vertex_id, subtask)) if vertex_id is not None else None

    def input(self, attempt: str, detail: str) -> int | None:
        """The model input of a barrier's ``gate G channel C``: gate G reads the G-th input job
        edge, channel C the C-th upstream subtask connected to this one (None: not mappable)."""
        try:
            vertex, _, _ = attempt_parts(attempt)
            _, gate, _, channel = detail.split()
            upstream = self.gates.get(vertex, [])[int(gate)]
        except (ValueError, IndexError):
            return None
        t = self.task(attempt)
        if upstream is None or t is None:
            return None
        job = self.job
        sources = [(local, job.channels[c].source) for local, c in enumerate(job.tasks[t].inputs)
                   if job.tasks[job.channels[c].source].vertex == upstream]
        sources.sort(key=lambda pair: job.tasks[pair[1]].subtask)
        return sources[int(channel)][0] if int(channel) < len(sources) else None


def model_job(plan: dict, graph_flags: JobGraph | None = None, protocol: str = CORRECT_PROTOCOL,
              mode: str = "aligned", failures: int = 0) -> tuple[JobGraph, Job]:
    """The plan's job graph (flags from ``graph_flags`` by vertex name, sources without
    records) and the model job that validates a run of it."""
    try:
        graph = import_plan(plan).graph
    except PlanFormatError as error:
        raise InputError("--plan", str(error)) from None
    flags = {}
    if graph_flags is not None:
        for vertex in graph_flags.vertices:
            flags[vertex.id] = {k: vertex.extra[k] for k in FLAG_KEYS if k in vertex.extra}
    vertices = []
    for v in graph.vertices:
        extra = {k: val for k, val in v.extra.items() if k not in FLAG_KEYS and k != "records"}
        extra.update(flags.get(str(v.extra.get("name", "")).strip(), {}))
        if not graph.inputs(v.id):
            extra["records"] = 0
        vertices.append((v.id, v.parallelism, extra))
    after_finished = graph_flags.checkpoints_after_tasks_finished if graph_flags is not None else True
    graph = JobGraph.build([JobVertex(i, p, MappingProxyType(extra)) for i, p, extra in vertices], graph.edges,
                           checkpoints_after_tasks_finished=after_finished)
    job = Job(graph, mode=mode, records=0, checkpoints=0, failures=failures, protocol=protocol_named(protocol),
              periodic_timer=True)
    return graph, job


def observations_of(reading: LogReading, tasks: _Tasks) -> tuple[list, list, set]:
    """The observations the log events show, each with its event, and the kinds the log can show."""
    observed: list = []
    visible = {"trigger", "decline", "completed", "failed", "finished", "reported", "failover"}
    failing = False
    failed: set = set()
    tasks.learn_names(reading.events)
    for e in reading.events:
        if e.kind in _DEBUG_KINDS:
            visible.add(_DEBUG_KINDS[e.kind])
        if e.kind in _BY_NAME:
            visible.add(_BY_NAME[e.kind])
            t = tasks.task(tasks.by_name.get(e.detail))
            if t is not None:
                observed.append(((_BY_NAME[e.kind], t), e))
            continue
        t = tasks.task(e.task)
        k = e.checkpoint
        o = None
        if e.kind == "trigger":
            o = ("trigger", k)
        elif e.kind in ("completed", "failed"):
            o = (e.kind, k)
        elif t is None:
            o = None
        elif e.kind == "trigger-task":
            o = ("trigger-task", t, k)
        elif e.kind == "barrier":
            o = ("barrier", t, tasks.input(e.task, e.detail), k)
        elif e.kind == "ack":
            o = ("ack", t, k)
        elif e.kind == "decline":
            o = ("decline", t, k)
        elif e.kind == "notify-complete":
            o = ("notify", t, k)
        elif e.kind == "task-state" and e.detail.endswith(" to FINISHED"):
            o = ("finished", t)
        elif e.kind == "execution-state":
            if e.detail.endswith(" to FINISHED"):
                o = ("reported", t)
            elif e.detail.endswith(" to FAILED") and not failing:
                o, failing = ("failover",), True   # the first failure of an attempt: F1
            elif e.detail.endswith(" to RUNNING"):
                failing = False
        if o is not None and o[0] == "failed":
            # One failure may be reported twice (the trigger's future and the abort both reach
            # CheckpointFailureManager): the first line counts.
            if o in failed:
                o = None
            failed.add(o)
        if o is not None:
            observed.append((o, e))
    # Tasks whose name-only lines cannot be told apart (two vertices of one name) show none.
    hidden = {(kind, t) for kind in _BY_NAME.values() for t in range(len(tasks.job.tasks))
              if tasks.by_name.get(_name_with_subtask(tasks, t)) is None}
    return observed, [o for o, _ in observed], visible, hidden


def _name_with_subtask(tasks: _Tasks, t: int) -> str | None:
    """The ``<name> (<subtask>/<parallelism>)#<attempt>`` a task's lines use, if the log named it."""
    for name, attempt in tasks.by_name.items():
        if attempt is not None and tasks.task(attempt) == t:
            return name
    return None


def _plan_check(reading: LogReading, tasks: _Tasks, spec: Job) -> Check:
    """The tasks each checkpoint was triggered on, against the spec plan on the JobManager's view."""
    view = 0
    planned: dict[int, int] = {}
    triggered: dict[int, int] = {}
    shown = False
    for e in reading.events:
        t = tasks.task(e.task)
        if e.kind == "execution-state" and t is not None:
            if e.detail.endswith(" to FINISHED"):
                view |= 1 << t
            elif e.detail.endswith(" to FAILED") or e.detail.endswith(" to CANCELED"):
                view = 0   # F1: the restarted tasks run again
        elif e.kind == "trigger":
            plan = spec.plan(view)
            planned[e.checkpoint] = plan[0] if isinstance(plan, tuple) else 0
        elif e.kind == "trigger-task" and t is not None:
            shown = True
            triggered[e.checkpoint] = triggered.get(e.checkpoint, 0) | 1 << t
    if not shown:
        return Check("trigger-plan", True, "not checked: the log has no TaskExecutor DEBUG trigger lines")
    names = lambda mask: sorted(spec.name(u) for u in range(len(spec.tasks)) if mask >> u & 1)  # noqa: E731
    for k in sorted(planned):
        if k in triggered and triggered[k] != planned[k]:
            return Check("trigger-plan", False, f"checkpoint {k}: Flink triggered {', '.join(names(triggered[k]))}; "
                                                f"the spec plan triggers {', '.join(names(planned[k]))}")
    both = sum(1 for k in planned if k in triggered)
    return Check("trigger-plan", True, f"{both} checkpoints: the triggered tasks equal the spec plan on the view")


def _final_checkpoint_check(observed: list, job: Job) -> Check:
    """FLIP-147: a task switches to FINISHED only after a completed checkpoint it took part in
    was confirmed to it."""
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
        elif o[0] == "failover":
            acked, confirmed = {}, {}
        elif o[0] == "finished":
            if not confirmed.get(o[1]):
                return Check("final-checkpoint", False, f"{job.name(o[1])} switched to FINISHED ({e.file}:{e.line}) "
                                                         "before any checkpoint it acknowledged was confirmed to it")
            finished += 1
    return Check("final-checkpoint", True, f"{finished} tasks finished, each after a confirmed checkpoint it took part in")


def _ids_check(observed: list) -> Check:
    last_trigger, last_completed = 0, 0
    for o, e in observed:
        if o[0] == "trigger":
            if o[1] != last_trigger + 1 and last_trigger:
                return Check("ids-in-order", False, f"checkpoint {o[1]} triggered after {last_trigger} ({e.file}:{e.line})")
            last_trigger = o[1]
        elif o[0] == "completed":
            if o[1] <= last_completed:
                return Check("ids-in-order", False, f"checkpoint {o[1]} completed after {last_completed} ({e.file}:{e.line})")
            last_completed = o[1]
    return Check("ids-in-order", True, f"triggered 1..{last_trigger} one by one; completions in increasing order")


def _output_check(output_dir: str | None, mode: str) -> Check:
    """Every source record committed exactly once (at least once in at-least-once mode), read
    from the committed output ``flipcheck flink run`` writes (docs/conformance.md)."""
    if output_dir is None:
        return Check("committed-output", True, "not checked: no committed output given (--output)")
    from flipcheck.flink.output import committed_records  # the run's own format

    expected, committed = committed_records(output_dir)
    counts: dict = {}
    for record in committed:
        counts[record] = counts.get(record, 0) + 1
    twice = sorted(r for r, n in counts.items() if n > 1)
    missing = sorted(set(expected) - set(counts))
    if missing:
        return Check("committed-output", False, f"{len(missing)} source records never committed, e.g. {missing[0]}")
    if twice and mode != "at-least-once":
        return Check("committed-output", False, f"{len(twice)} records committed more than once, e.g. {twice[0]}")
    how = "at least once" if mode == "at-least-once" else "exactly once"
    return Check("committed-output", True, f"{len(expected)} source records, each committed {how}")


def conform(plan: dict, logs: Sequence[str], *, protocol: str = CORRECT_PROTOCOL, graph: JobGraph | None = None,
            mode: str = "aligned", output: str | None = None, budget: int | None = None) -> Conformance:
    """Validate the run the ``logs`` show against the model built from ``plan``."""
    if protocol not in PROTOCOLS:
        raise InputError("--protocol", f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    reading = read_logs(logs)
    failures = sum(1 for e in reading.events if e.kind == "execution-state" and e.detail.endswith(" to FAILED"))
    _, job = model_job(plan, graph, protocol, mode, failures)
    tasks = _Tasks(plan, job.graph, job)
    observed, observations, visible, hidden = observations_of(reading, tasks)
    options = {"budget": budget} if budget else {}
    verdict = validate(job, observations, visible=sorted(visible & set(KINDS)), hidden=hidden, **options)
    first = None
    if verdict.first_unexplained is not None:
        o, e = observed[verdict.first_unexplained]
        first = {"file": e.file, "line": e.line, "event": e.kind + _event_text(e), "why": verdict.why}
    elif not verdict.conforms:
        last = reading.events[-1] if reading.events else None
        first = {"file": last.file if last else "", "line": last.line if last else 0, "event": "end of log",
                 "why": verdict.why}
    _, spec = model_job(plan, graph, CORRECT_PROTOCOL, mode, failures)
    checks = [Check("model", verdict.conforms,
                    f"{verdict.explained} of {len(observations)} observations explained by a behaviour of the "
                    f"{job.protocol.name} model ({verdict.states:,} states searched)"),
              _plan_check(reading, tasks, spec), _final_checkpoint_check(observed, job), _ids_check(observed),
              _output_check(output, mode)]
    checkpoints = len({e.checkpoint for e in reading.events if e.kind == "trigger"})
    return Conformance(all(c.ok for c in checks), len(reading.events), checkpoints, first, checks, verdict, job,
                       observed, reading.unrecognised)


def _event_text(e: LogEvent) -> str:
    parts = []
    if e.checkpoint is not None:
        parts.append(f"checkpoint {e.checkpoint}")
    if e.task:
        parts.append(f"task {e.task}")
    if e.detail:
        parts.append(e.detail)
    return (" " + ", ".join(parts)) if parts else ""


def conform_files(plan_path: str, logs: Sequence[str], *, graph_path: str | None = None, **options: Any) -> Conformance:
    """:func:`conform` on files: the plan, the logs and (optional) the job graph the run was built from."""
    from flipcheck.model.graph_json import GraphFormatError, decode_json, load_graph, read_input_file

    try:
        plan = decode_json(read_input_file(plan_path, PlanFormatError), PlanFormatError)
    except PlanFormatError as error:
        raise InputError(plan_path, str(error)) from None
    graph = None
    if graph_path is not None:
        try:
            graph = load_graph(graph_path)
        except GraphFormatError as error:
            raise InputError(graph_path, str(error)) from None
    for log in logs:
        if not os.path.isfile(log):
            raise InputError(log, "no such log file")
    return conform(plan, logs, graph=graph, **options)

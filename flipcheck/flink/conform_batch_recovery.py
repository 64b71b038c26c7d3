"""Batch job recovery (FLIP-383) of a real run, held against :mod:`flipcheck.model.batch_recovery`.

``flipcheck flink run --batch --jm-failover ...`` runs a BATCH job whose JobManager loses and
regains its leadership; this module reads what Flink logged about it and asks whether some
behaviour of the model shows it (:mod:`flipcheck.properties.batch_recovery_trace_validation`).

The lines read (each a row of :data:`PATTERNS`, registered with
:func:`flipcheck.flink.logs.add_pattern`, listed in docs/conformance.md) and what each shows:

* ``ExecutionGraph`` state switches: ``SCHEDULED to DEPLOYING`` starts an attempt (B1),
  ``RUNNING to FINISHED`` finishes it (B3), ``CREATED to FINISHED`` while RECONCILING is the
  replay restoring a task (B8); the job's own switch to FINISHED ends the run;
* ``DefaultBatchJobRecoveryHandler``: ``Snapshot operator coordinators of V`` (the finish just
  before carried a snapshot, of the job vertices V named: B3's ``need``), ``Try to recover
  status ...`` (the event log was not empty: RECONCILING), ``All operator coordinators of
  jobVertex V support batch snapshot, add N unfinished tasks to revise`` (B8's reset),
  ``Partitions to be released: ..., missed partitions: ..., partitions to be reserved: ...`` (B10,
  each partition with its producer's attempt), ``... successfully recovered from JM failover`` and
  ``... recover failed from JM failover, fail global`` (B10's end, B11);
* ``JobMasterServiceLeadershipRunner``: ``was revoked leadership`` (B6) and, after the first,
  ``was granted leadership`` (B8); ``ExecutionGraph``'s job switch ``RESTARTING to RUNNING`` after the
  JobMaster's ``N tasks will be restarted to recover from a global failure.`` (B12); ``... to recover
  the failed task T.``: a task failover, which the model does not have (never explained);
* ``FileSystemJobEventStore`` (DEBUG): ``Write job event ExecutionVertexFinishedEvent(...)``:
  the check ``events-written`` holds them against the finishes.

The model's job is the REST plan's (``plan.json`` of the run directory): one task per Flink
subtask, a coordinator on every source vertex, one split per source subtask; crashes, lost
partitions and failed recoveries as many as the log shows.

Example
-------
>>> from flipcheck.flink.conform import read_run_directory
>>> from flipcheck.flink.logs import read_logs
>>> from pathlib import Path
>>> run = read_run_directory(Path("tests/fixtures/flink_runs/batch-failover-some-finished"))
>>> verdict = conform_batch_recovery(read_logs([str(run.path / "flink.log")]), run)
>>> verdict.conforms, verdict.first_unexplained, [c.name for c in verdict.checks]
(True, None, ['model', 'events-written', 'failure-free-output', 'job-finished'])
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from flipcheck.errors import InputError
from flipcheck.flink.design_conformance import DesignConformance
from flipcheck.flink.logs import LogEvent, LogReading, Pattern, add_pattern, attempt_parts
from flipcheck.flink.observations import add_design, add_observer, observations_of
from flipcheck.model import batch_recovery as spec
from flipcheck.model.jobgraph import JobGraph, JobVertex
from flipcheck.properties.batch_recovery_trace_validation import describe, validate

__all__ = ["DESIGN", "PATTERNS", "KINDS", "BatchTasks", "model_config", "observations", "conform_batch_recovery"]

DESIGN = "batch-recovery"
_RECOVERY = "DefaultBatchJobRecoveryHandler"
_LEADERSHIP = "JobMasterServiceLeadershipRunner"


def _handler_line(kind: str, message: str, method: str, level: str = "INFO") -> Pattern:
    """A line DefaultBatchJobRecoveryHandler writes (batch job recovery came with 1.20)."""
    return Pattern(kind, _RECOVERY, level, re.compile(message), f"DefaultBatchJobRecoveryHandler.{method}", since="1.20")


PATTERNS = (
    _handler_line("batch-snapshot", r"^Snapshot operator coordinators of (?P<detail>.+) to job event, checkpointId -1\.$",
                  "snapshotOperatorCoordinators, from onExecutionFinished"),
    _handler_line("batch-recovering", r"^Try to recover status from previously failed job master\.$",
                  "startRecoveringInternal"),
    _handler_line("batch-revise", r"^All operator coordinators of jobVertex (?P<detail>.+) support batch snapshot, "
                                  r"add (?P<checkpoint>\d+) unfinished tasks to revise\.$",
                  "determineVerticesForResetAfterRestoreOpCoordinator"),
    _handler_line("batch-replayed", r"^Replay all job events successfully\.$", "startRecovering"),
    _handler_line("batch-partitions", r"^(?P<detail>Partitions to be released: \[.*\], missed partitions: \[.*\], "
                                      r"partitions to be reserved: \[.*\])\.$", "recoverPartitions"),
    _handler_line("batch-recovered", r"^Job \w+ successfully recovered from JM failover$", "recoverFinished"),
    _handler_line("batch-recover-failed", r"^Job \w+ recover failed from JM failover, fail global\.$", "recoverFailed",
                  "WARN"),
    Pattern("jm-revoked", _LEADERSHIP, "INFO",
            re.compile(r"^JobMasterServiceLeadershipRunner for job \w+ was revoked leadership"),
            "JobMasterServiceLeadershipRunner.revokeLeadership", since="1.16"),
    Pattern("jm-granted", _LEADERSHIP, "INFO",
            re.compile(r"^JobMasterServiceLeadershipRunner for job \w+ was granted leadership with leader id \S+\. Creating new"),
            "JobMasterServiceLeadershipRunner.grantLeadership", since="1.16"),
    Pattern("job-event-written", "FileSystemJobEventStore", "DEBUG",
            re.compile(r"^Write job event ExecutionVertexFinishedEvent\(executionVertexId='(?P<detail>\w+_\d+)', "
                       r"attemptNumber='(?P<attempt>\d+)'\)\.$"),
            "FileSystemJobEventStore.writeEventRunnable (ExecutionVertexFinishedEvent.toString)", since="1.20"),
    Pattern("task-failover", "JobMaster", "INFO",
            re.compile(r"^\d+ tasks will be restarted to recover the failed task (?P<task>\w+_\w+_\d+_\d+)\.$"),
            "DefaultScheduler.restartTasksWithDelay (the JobMaster's logger): a task failover", since="1.16"),
    Pattern("global-failover", "JobMaster", "INFO",
            re.compile(r"^\d+ tasks will be restarted to recover from a global failure\.$"),
            "DefaultScheduler.restartTasksWithDelay (the JobMaster's logger): a global failover", since="1.16"),
    Pattern("job-state", "ExecutionGraph", "INFO",
            re.compile(r"^Job .* \(\w+\) switched from state (?P<detail>\w+ to \w+)\.$"),
            "DefaultExecutionGraph.transitionState: the job's status"),
)
KINDS = tuple(dict.fromkeys(p.kind for p in PATTERNS))
for _pattern in PATTERNS:
    add_pattern(_pattern)

# One partition as ResultPartitionID.toString writes it: "<IntermediateResultPartitionID>@<attempt id>",
# the partition id being "<IntermediateDataSetID>#<partition number>".
_PARTITION = re.compile(r"(?P<partition>\w+#\d+)@(?P<attempt>\w+_\w+_\d+_\d+)")
_SETS = re.compile(r"Partitions to be released: \[(?P<release>.*)\], missed partitions: \[(?P<missing>.*)\], "
                   r"partitions to be reserved: \[(?P<reserve>.*)\]")


class BatchTasks:
    """Flink's subtasks as the model's task indices: a Flink job vertex id and subtask ->
    the index in :func:`flipcheck.model.batch_recovery.topology`'s tasks."""

    def __init__(self, config: spec.Config):
        topo = spec.topology(config)
        self.by_flink_id = {v.extra.get("flink_id"): v.id for v in config.graph.vertices}
        self.by_name = {v.extra.get("name"): v.id for v in config.graph.vertices}
        self.index = {task: i for i, task in enumerate(topo.tasks)}

    def task(self, identity) -> int | None:
        if identity is None:
            return None
        return self.at(identity.vertex, identity.subtask)

    def at(self, flink_vertex: str | None, subtask: int) -> int | None:
        vertex = self.by_flink_id.get(flink_vertex)
        return None if vertex is None else self.index.get((vertex, subtask))


@dataclass
class _Progress:
    """What the lines so far said (the run's phase as the log shows it, the attempts seen)."""

    grants: int = 0
    phase: str = "running"             # running | down | reconciling
    attempts: dict = field(default_factory=dict)   # model task -> Flink attempt ids, in start order
    restored: set = field(default_factory=set)
    global_failover: bool = False      # a global failover's restart is under way (B11's, then B12)
    replay_shown: bool = False

    def ordinal(self, t: int, attempt_id: str) -> int:
        """The model's attempt number of a Flink attempt id (0: never started)."""
        seen = self.attempts.get(t, [])
        return seen.index(attempt_id) + 1 if attempt_id in seen else 0


def _progress(follow) -> _Progress:
    if not hasattr(follow, "batch"):
        follow.batch = _Progress()
    return follow.batch


def _state_switch(e: LogEvent, t, follow) -> list:
    p = _progress(follow)
    if t is None or p.phase == "down":
        return []   # the stopped JobMaster's own cancellations: the model's crash took them
    if p.phase == "reconciling":
        if e.detail.endswith("CREATED to FINISHED"):
            p.restored.add((t, p.ordinal(t, e.task)))
        return []
    if e.detail.endswith("SCHEDULED to DEPLOYING"):
        p.attempts.setdefault(t, []).append(e.task)
        return [("start", t, p.ordinal(t, e.task))]
    if e.detail.endswith("RUNNING to FINISHED"):
        return [("finish", t, None)]
    return []


def _replayed(p: _Progress) -> list:
    if p.replay_shown:
        return []
    p.replay_shown = True
    return [("replayed", frozenset(p.restored))]


def _revise(e: LogEvent, t, follow) -> list:
    p = _progress(follow)
    return _replayed(p) + [("revise", follow.tasks.by_name.get(e.detail, e.detail), e.checkpoint)]


def _partitions(e: LogEvent, t, follow) -> list:
    p = _progress(follow)
    sets = _SETS.match(e.detail)
    found = []
    for name in ("release", "missing", "reserve"):
        tasks = set()
        for partition in _PARTITION.finditer(sets[name]):
            vertex, subtask, _ = attempt_parts(partition["attempt"])
            producer = follow.tasks.at(vertex, subtask)
            tasks.add((producer, p.ordinal(producer, partition["attempt"])))
        found.append(frozenset(tasks))
    return _replayed(p) + [("reconcile", *found)]


def _leadership(e: LogEvent, t, follow) -> list:
    p = _progress(follow)
    if e.kind == "jm-revoked":
        p.phase = "down"
        return [("crash",)]
    p.grants += 1
    if p.grants == 1:
        return []   # the first JobMaster: the model's initial state
    p.phase, p.restored, p.replay_shown = "running", set(), False
    return [("restart",)]


def _recovering(e: LogEvent, t, follow) -> list:
    _progress(follow).phase = "reconciling"
    return [("recovering",)]


def _recovery_ended(e: LogEvent, t, follow) -> list:
    p = _progress(follow)
    p.phase = "running"
    return [("recovered",) if e.kind == "batch-recovered" else ("fail_recovery",)]


def _job_state(e: LogEvent, t, follow) -> list:
    p = _progress(follow)
    if e.detail == "RUNNING to FINISHED":
        return [("done",)]
    if e.detail == "RESTARTING to RUNNING" and p.global_failover:
        p.global_failover = False
        return [("global_restart",)]   # a global failover's delayed restart (a failed recovery's: B12)
    return []


def _failover(e: LogEvent, t, follow) -> list:
    if e.kind == "global-failover":
        _progress(follow).global_failover = True
        return []
    return [("task_failover", t)]


def _snapshot(e: LogEvent, t, follow) -> list:
    return [("snapshot", follow.tasks.by_name.get(e.detail, e.detail))]


add_design(DESIGN, ("start", "finish", "crash", "restart", "recovering", "replayed", "revise", "reconcile",
                    "recovered", "fail_recovery", "global_restart", "done", "task_failover"))
for _kind, _observe in (("execution-state", _state_switch), ("batch-snapshot", _snapshot),
                        ("batch-recovering", _recovering), ("batch-revise", _revise),
                        ("batch-replayed", lambda e, t, follow: _replayed(_progress(follow))),
                        ("batch-partitions", _partitions), ("batch-recovered", _recovery_ended),
                        ("batch-recover-failed", _recovery_ended), ("jm-revoked", _leadership),
                        ("jm-granted", _leadership), ("job-state", _job_state), ("task-failover", _failover),
                        ("global-failover", _failover)):
    add_observer(DESIGN, _kind, _observe)


def observations(reading: LogReading, config: spec.Config) -> list[tuple]:
    """``(observation, log event)`` in log order: the log read through this design's rows, each
    coordinator snapshot folded into the finish it went with (logged right after it, on the
    JobManager's main thread)."""
    tasks = BatchTasks(config)
    observed, _, _, _ = observations_of(reading, tasks, DESIGN)
    folded: list = []
    for o, e in observed:
        if o[0] == "snapshot":
            finish = next((k for k in range(len(folded) - 1, -1, -1) if folded[k][0][0] == "finish"), None)
            if finish is None:
                # A snapshot no finish went with: no task explains it (B3 snapshots only at a finish).
                folded.append((("finish", -1, frozenset({o[1]})), e))
                continue
            (_, t, vertices), at = folded[finish]
            folded[finish] = (("finish", t, (vertices or frozenset()) | {o[1]}), at)
        else:
            folded.append((o, e))
    return folded


def model_config(plan: dict, reading: LogReading) -> spec.Config:
    """The model's configuration for a run of ``plan`` whose log is ``reading``."""
    from flipcheck.flink.import_plan import PlanFormatError, import_plan

    try:
        graph = import_plan(plan).graph
    except PlanFormatError as error:
        raise InputError("plan.json", str(error)) from None
    kinds = [e.kind for e in reading.events]
    missed = sum(len(_PARTITION.findall(_SETS.match(e.detail)["missing"]))
                 for e in reading.events if e.kind == "batch-partitions")
    sources = [v for v in graph.vertices if not graph.inputs(v.id)]
    # One split per source subtask (RangeEnumerator's); the model's splits are per source vertex.
    splits = max((v.parallelism for v in sources), default=1)
    vertices = [JobVertex(v.id, v.parallelism, MappingProxyType(dict(v.extra))) for v in graph.vertices]
    return spec.Config(JobGraph.build(vertices, graph.edges), splits=splits, crashes=kinds.count("jm-revoked"),
                       losses=missed, recovery_failures=kinds.count("batch-recover-failed"), initialized_events=True)


def _events_written_check(reading: LogReading, observed: list, tasks: BatchTasks):
    """B3 writes one ExecutionVertexFinishedEvent per finish, in the order of the finishes."""
    from flipcheck.flink.conform import Check

    written = [e for e in reading.events if e.kind == "job-event-written"]
    if not written:
        return Check("events-written", True, "not checked: no FileSystemJobEventStore DEBUG lines")
    finishes = [o[1] for o, _ in observed if o[0] == "finish"]
    events = []
    for e in written:
        vertex, _, subtask = e.detail.rpartition("_")
        events.append(tasks.at(vertex, int(subtask)))
    if events != finishes:
        first = next((k for k, (a, b) in enumerate(zip(events, finishes)) if a != b), min(len(events), len(finishes)))
        where = f"{written[first].file}:{written[first].line}" if first < len(written) else "the end of the log"
        return Check("events-written", False, f"the job events written differ from the finishes at event {first + 1} "
                                              f"({where}): {len(events)} events for {len(finishes)} finishes")
    return Check("events-written", True, f"{len(events)} ExecutionVertexFinishedEvents, one per finish, in order")


def _output_check(run):
    """The committed output equals a run without failover: each source record once per path."""
    from flipcheck.flink.conform import Check, committed_output_check

    found = committed_output_check(run, "aligned")
    return Check("failure-free-output", found.ok, found.detail)


def conform_batch_recovery(reading: LogReading, run, plan: dict | None = None) -> DesignConformance | None:
    """This design's verdict on a run (None: the log holds no line of batch job recovery).
    ``plan``: the REST plan (default: ``plan.json`` in the ``run`` directory)."""
    from flipcheck.flink.conform import Check, job_finished_check

    ours = [e for e in reading.events if e.kind in KINDS and e.kind != "job-state"]
    if not any(e.kind.startswith("batch-") or e.kind == "job-event-written" for e in ours):
        return None
    if plan is None and run is not None and (run.path / "plan.json").is_file():
        try:
            plan = json.loads((Path(run.path) / "plan.json").read_text())
        except (OSError, ValueError) as error:
            raise InputError(str(run.path / "plan.json"), f"not a readable plan: {error}") from None
    if plan is None:
        first = {"file": ours[0].file, "line": ours[0].line, "event": ours[0].kind,
                 "why": "no plan.json: the job's topology, which the model needs, is not known"}
        return DesignConformance(DESIGN, False, len(ours), first, [])
    config = model_config(plan, reading)
    observed = observations(reading, config)
    verdict = validate(config, [o for o, _ in observed])
    first = None
    if verdict.first_unexplained is not None:
        o, e = observed[verdict.first_unexplained]
        first = {"file": e.file, "line": e.line, "event": f"{e.kind} {describe(o)}", "rule": verdict.rule,
                 "why": verdict.why}
    checks = [Check("model", verdict.conforms, f"{verdict.explained} of {len(observed)} observations explained by a "
                                               f"behaviour of model/batch_recovery.py ({verdict.states:,} states)"),
              _events_written_check(reading, observed, BatchTasks(config)),
              _output_check(run), job_finished_check(run)]
    return DesignConformance(DESIGN, all(c.ok for c in checks), len(ours), first, checks)

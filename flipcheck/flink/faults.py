"""Faults at protocol points: the one vocabulary of ``flink run --fault``, a graph's ``"faults"``,
the job builder (``flipcheck/flink/java/Faults.java``) and the fault lines ``conform`` reports.

A fault is named by a spec ``KIND:VERTEX:SUBTASK[@AT][=VALUE]`` (a fault of the whole JVM:
``KIND=VALUE``). :data:`FAULT_KINDS` says, per kind, whether it takes ``@AT`` (a checkpoint id or a
record number) and ``=VALUE`` (milliseconds, threads), which vertex roles it applies to and in which
Flink method it strikes (docs/reference/fault-points.md). :func:`parse_fault` reads a spec,
:func:`check_faults` holds faults against a job graph (at most :data:`MAX_FAULTS` a run), and
:func:`faults_struck` reads the line each fault logs when it strikes::

    flipcheck fault KIND VERTEX[SUBTASK] WHERE      e.g. flipcheck fault snapshot-throw map[0] checkpoint 2
    flipcheck fault KIND job WHERE                  e.g. flipcheck fault cpu-contention job 4 threads

(logger ``flipcheck.Faults``, INFO; a row of :mod:`flipcheck.flink.logs` read through
:func:`~flipcheck.flink.logs.add_pattern`). A throw fails the task: the task's and the JobManager's
``FAILED`` lines show it to the model (F0, then F1); the fault line only says where it struck.

Example
-------
>>> fault = parse_fault("snapshot-throw:map:0@2")
>>> fault.kind, fault.vertex, fault.subtask, fault.at, fault.spec
('snapshot-throw', 'map', 0, 2, 'snapshot-throw:map:0@2')
>>> parse_fault("delay-snapshot:map:0@2=500").value, parse_fault("cpu-contention=4").spec
(500, 'cpu-contention=4')
>>> parse_fault("snapshot-throw:map:0")
Traceback (most recent call last):
...
flipcheck.flink.faults.FaultSpecError: fault 'snapshot-throw:map:0': snapshot-throw needs @CHECKPOINT (e.g. snapshot-throw:map:0@2)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Sequence

from flipcheck.errors import UsageError

__all__ = ["FaultKind", "FAULT_KINDS", "Fault", "FaultSpecError", "MAX_FAULTS", "FAIL_KINDS", "parse_fault",
           "check_faults", "graph_faults", "fault_of_fail", "faults_struck", "FAULT_LINE", "describe_kinds"]

MAX_FAULTS = 3

# The roles of flipcheck.flink.engine.roles whose vertices the job builder builds from our own
# functions and operators (a Sink V2's writer and committer are the release's API: no hooks).
_FUNCTIONS = ("operator", "discard", "two_phase_commit_sink")
_ALL = ("source",) + _FUNCTIONS


@dataclass(frozen=True)
class FaultKind:
    name: str
    at: str | None          # what @AT counts ("checkpoint", "record"), None: takes no @AT
    value: str | None       # what =VALUE is ("ms", "threads"), None: takes none
    roles: tuple            # the vertex roles it applies to; () for a fault of the whole JVM
    does: str               # what it does, for --help and the docs
    flink: str              # where Flink calls into the code that strikes

    @property
    def of_task(self) -> bool:
        return bool(self.roles)

    def example(self) -> str:
        return (self.name + (":map:0" if self.of_task else "") + {"checkpoint": "@2", "record": "@10", None: ""}[self.at]
                + {"ms": "=500", "threads": "=4", None: ""}[self.value])


FAULT_KINDS = MappingProxyType({kind.name: kind for kind in (
    FaultKind("snapshot-throw", "checkpoint", None, _ALL,
              "throws in the subtask's snapshotState of checkpoint AT",
              "SubtaskCheckpointCoordinatorImpl.checkpointState -> StreamOperatorStateHandler.snapshotState -> "
              "CheckpointedFunction.snapshotState (a source: SourceOperator.snapshotState -> SourceReader.snapshotState)"),
    FaultKind("notify-throw", "checkpoint", None, ("source", "operator", "discard"),
              "throws in the subtask's notifyCheckpointComplete(AT) (a two-phase-commit sink's is final in Flink)",
              "SubtaskCheckpointCoordinatorImpl.notifyCheckpointComplete -> StreamOperatorWrapper.notifyCheckpointComplete "
              "-> AbstractUdfStreamOperator.notifyCheckpointComplete -> CheckpointListener (a source: SourceReader)"),
    FaultKind("after-end-of-input-throw", None, None, _ALL,
              "throws in the first snapshotState after the subtask's input ended: before its final checkpoint completes",
              "StreamTask.endData -> finishOperators, then the final checkpoint's snapshotState (StreamTask.afterInvoke "
              "waits for it)"),
    FaultKind("finish-throw", None, None, _FUNCTIONS,
              "throws in the subtask's finish(), at the end of its input (a FLIP-27 reader has no finish)",
              "StreamTask.endData -> RegularOperatorChain.finishOperators -> StreamOperatorWrapper.finish -> "
              "StreamOperator.finish (AbstractUdfStreamOperator.finish -> SinkFunction.finish)"),
    FaultKind("close-throw", None, None, _ALL,
              "throws in the subtask's close(), after its final checkpoint",
              "StreamTask.afterInvoke -> closeAllOperators -> StreamOperatorWrapper.close -> AbstractUdfStreamOperator.close "
              "-> RichFunction.close (a source: SourceOperator.close -> SourceReader.close)"),
    FaultKind("restore-throw", None, None, _FUNCTIONS,
              "throws once in initializeState when the subtask restores from a checkpoint (the next attempt recovers); "
              "only a subtask with state restores (a two-phase-commit sink, union_list_state)",
              "StreamTask.restoreInternal -> RegularOperatorChain.initializeStateAndOpenOperators -> "
              "AbstractStreamOperator.initializeState -> StreamOperatorStateHandler.initializeOperatorState -> "
              "CheckpointedFunction.initializeState (context.isRestored())"),
    FaultKind("delay-snapshot", "checkpoint", "ms", _ALL,
              "sleeps VALUE ms in the subtask's snapshotState of checkpoint AT: its acknowledgement comes that much later",
              "the synchronous part of SubtaskCheckpointCoordinatorImpl.checkpointState (the task thread): the "
              "acknowledgement follows the asynchronous part"),
    FaultKind("delay-first-poll", None, "ms", ("source",),
              "sleeps VALUE ms in the reader's first pollNext: a split event arriving meanwhile waits in the task's "
              "mailbox with the next checkpoint's trigger (if it arrives after the poll began: likely, not certain)",
              "the task thread's SourceOperator.emitNext -> SourceReader.pollNext, after SourceOperator.open registered "
              "the reader (StreamTask.dispatchOperatorEvent and triggerCheckpointAsync queue their mails meanwhile)"),
    FaultKind("delay-after-split-request", "checkpoint", "ms", ("source",),
              "a lazy source (\"splits\": N): at its first poll after its snapshot of checkpoint AT the reader asks for one "
              "more split and sleeps VALUE ms: the answer and the next checkpoint's trigger wait in the task's mailbox together",
              "the task thread's SourceOperator.emitNext -> SourceReader.pollNext, after SourceReaderContext.sendSplitRequest "
              "(StreamTask.dispatchOperatorEvent and triggerCheckpointAsync queue their mails meanwhile)"),
    FaultKind("backpressure", None, "ms", _FUNCTIONS,
              "sleeps VALUE ms per record the subtask consumes: its input channels fill, its producers back up",
              "the task thread's processElement (StreamOneInputProcessor / StreamTwoInputProcessor)"),
    FaultKind("coordinator-snapshot-throw", "checkpoint", None, (),
              "a source's split enumerator throws in its snapshot of checkpoint AT: that checkpoint fails as it is "
              "triggered, before any task hears of it; the job runs on",
              "CheckpointCoordinator.startTriggeringCheckpoint -> OperatorCoordinatorHolder.checkpointCoordinator -> "
              "SourceCoordinator.checkpointCoordinator -> SplitEnumerator.snapshotState; the exception completes the "
              "coordinator checkpoint's future exceptionally -> CheckpointCoordinator.onTriggerFailure"),
    FaultKind("global-failure", "checkpoint", None, (),
              "at its snapshot of checkpoint AT a source's split enumerator hands the coordinator an action that throws: "
              "the JobManager fails the whole job over while AT is pending (a global failure: no task fails)",
              "SourceCoordinator.checkpointCoordinator -> SplitEnumerator.snapshotState -> SplitEnumeratorContext.callAsync; "
              "the handler throws in the coordinator thread, SourceCoordinatorContext fails the job (failJob) -> "
              "DefaultScheduler.handleGlobalFailure"),
    FaultKind("global-failure-at-start", None, None, (),
              "when a source's split enumerator starts, it hands the coordinator an action that throws: the JobManager "
              "fails the whole job over before its first checkpoint is triggered (a global failure: no task fails)",
              "SourceCoordinator.start -> SplitEnumerator.start -> SplitEnumeratorContext.callAsync; the handler throws "
              "in the coordinator thread, SourceCoordinatorContext fails the job (failJob) -> "
              "DefaultScheduler.handleGlobalFailure"),
    FaultKind("cpu-contention", None, "threads", (),
              "VALUE busy threads in the JVM from before the job's start to its end (some races show only under contention: docs/reference/fault-points.md)",
              "none: it slows every thread of the MiniCluster"),
    FaultKind("fail", "record", None, _ALL + ("sink_v2",),
              "throws when the subtask handles its AT-th record (--fail VERTEX:SUBTASK@AT)",
              "the task thread's processElement, or SourceReader.pollNext"),
    FaultKind("lose-taskmanager", "record", None, _ALL + ("sink_v2",),
              "with --local-recovery: at the AT-th record terminates the subtask's TaskManager and starts a new one",
              "MiniCluster.terminateTaskManager (LocalRecovery.java)"),
    FaultKind("damage-local-copy", "record", None, _ALL + ("sink_v2",),
              "with --local-recovery: at the AT-th record deletes the local copies, then throws",
              "TaskLocalStateStoreImpl's files (LocalRecovery.java)"),
)})
# The kinds flipcheck.flink.engine.FailAt carries (one per run): kind -> FailAt.how (the engine
# imports this module, so the FailAt is built where a fault becomes one: flipcheck/cli/flink.py).
FAIL_KINDS = MappingProxyType({"fail": "task", "lose-taskmanager": "taskmanager", "damage-local-copy": "damage-local-copy"})
# A keyed_state vertex is LocalRecovery.java's keyed map, with no snapshot or lifecycle hooks.
_KEYED_STATE_KINDS = tuple(FAIL_KINDS) + ("backpressure",)
_VALUE_RANGE = {"ms": (0, 60_000), "threads": (1, 64)}

_SPEC = re.compile(r"(?P<kind>[a-z-]+)(?::(?P<vertex>.+):(?P<subtask>\d{1,6}))?(?:@(?P<at>\d{1,12}))?(?:=(?P<value>\d{1,9}))?")


class FaultSpecError(ValueError):
    """A spec that names no fault: the message is one line naming the spec and the problem."""


@dataclass(frozen=True)
class Fault:
    kind: str
    vertex: str | None = None
    subtask: int | None = None
    at: int | None = None
    value: int | None = None

    @property
    def spec(self) -> str:
        """The spec :func:`parse_fault` reads back into this fault."""
        text = self.kind
        if self.vertex is not None:
            text += f":{self.vertex}:{self.subtask}"
        if self.at is not None:
            text += f"@{self.at}"
        if self.value is not None:
            text += f"={self.value}"
        return text

    @property
    def task(self) -> str | None:
        """``VERTEX[SUBTASK]`` as the fault line names it (None: a fault of the whole JVM)."""
        return None if self.vertex is None else f"{self.vertex}[{self.subtask}]"

    def as_json(self) -> dict:
        """The job spec's entry (``"fault_points"``), which Faults.java reads."""
        return {"spec": self.spec, "kind": self.kind, "vertex": self.vertex, "subtask": self.subtask,
                "at": self.at, "value": self.value}


def describe_kinds() -> str:
    """The kinds, for ``flink run --help`` (and docs/graph-format.md's table)."""
    lines = ["\nFAULTS (--fault SPEC, repeatable, or the graph's top-level \"faults\": [SPEC, ...]; at most "
             f"{MAX_FAULTS} a run,\ncounting --fail, --lose-taskmanager and --damage-local-copy). SPEC is "
             "KIND:VERTEX:SUBTASK[@AT][=VALUE];\neach strikes once and logs \"flipcheck fault KIND VERTEX[SUBTASK] WHERE\""
             " (flipcheck conform reports it):\n"]
    for kind in FAULT_KINDS.values():
        lines.append(f"  {kind.example():<34} {kind.does}")
    lines.append("\nNo delayed acknowledgement on its own: Flink sends it from its asynchronous snapshot thread, which no\n"
                 "user code runs in; delay-snapshot delays it by delaying the snapshot (docs/reference/fault-points.md).\n")
    return "\n".join(lines)


def parse_fault(spec: str) -> Fault:
    """The :class:`Fault` a spec names; :class:`FaultSpecError` saying what is wrong with it."""
    def bad(problem: str) -> FaultSpecError:
        return FaultSpecError(f"fault {spec!r}: {problem}")

    if not isinstance(spec, str):
        raise FaultSpecError(f"fault {spec!r}: not a string (expected KIND:VERTEX:SUBTASK[@AT][=VALUE])")
    match = _SPEC.fullmatch(spec.strip())
    kind = FAULT_KINDS.get(match["kind"] if match else spec.split(":", 1)[0].split("=", 1)[0].split("@", 1)[0])
    if kind is None:
        raise bad(f"unknown kind (known: {', '.join(FAULT_KINDS)})")
    if match is None:
        raise bad(f"not {kind.name}'s form (e.g. {kind.example()})")
    if kind.of_task and match["vertex"] is None:
        raise bad(f"{kind.name} needs VERTEX:SUBTASK (e.g. {kind.example()})")
    if not kind.of_task and match["vertex"] is not None:
        raise bad(f"{kind.name} strikes the whole JVM: no VERTEX:SUBTASK (e.g. {kind.example()})")
    if kind.at is not None and match["at"] is None:
        raise bad(f"{kind.name} needs @{kind.at.upper()} (e.g. {kind.example()})")
    if kind.at is None and match["at"] is not None:
        raise bad(f"{kind.name} takes no @AT (e.g. {kind.example()})")
    if kind.value is not None and match["value"] is None:
        raise bad(f"{kind.name} needs ={kind.value.upper()} (e.g. {kind.example()})")
    if kind.value is None and match["value"] is not None:
        raise bad(f"{kind.name} takes no =VALUE (e.g. {kind.example()})")
    at = None if match["at"] is None else int(match["at"])
    if at is not None and at < 1:
        raise bad(f"@{at}: {kind.at}s count from 1")
    value = None if match["value"] is None else int(match["value"])
    if value is not None and not _VALUE_RANGE[kind.value][0] <= value <= _VALUE_RANGE[kind.value][1]:
        low, high = _VALUE_RANGE[kind.value]
        raise bad(f"={value} is outside {low}..{high:,} {kind.value}")
    return Fault(kind.name, match["vertex"], None if match["subtask"] is None else int(match["subtask"]), at, value)


def fault_of_fail(fail) -> Fault:
    """The fault an existing option names (``--fail``, ``--lose-taskmanager``, ``--damage-local-copy``:
    a :class:`~flipcheck.flink.engine.FailAt`)."""
    kind = {how: kind for kind, how in FAIL_KINDS.items()}[fail.how]
    return Fault(kind, fail.vertex, fail.subtask, fail.record)


def graph_faults(document) -> list[Fault]:
    """The faults of a graph document's top-level ``"faults"`` (a list of specs; absent: none);
    :class:`FaultSpecError` naming the field."""
    specs = document.get("faults", []) if isinstance(document, dict) else []
    if not isinstance(specs, list):
        raise FaultSpecError(f"faults: expected a list of fault specs like \"snapshot-throw:map:0@2\", got {type(specs).__name__}")
    return [parse_fault(spec) for spec in specs]


def check_faults(faults: Sequence[Fault], graph, roles: dict, local_recovery: bool = False) -> None:
    """:class:`UsageError` (one line naming the spec) for faults the job cannot strike: more than
    :data:`MAX_FAULTS`, an unknown vertex, a subtask out of range, a role the kind has no hook in,
    more than one of :data:`FAIL_KINDS`, two faults of one kind at one place."""
    if len(faults) > MAX_FAULTS:
        raise UsageError(f"fault {faults[MAX_FAULTS].spec!r}: more than {MAX_FAULTS} faults in one run "
                         f"({', '.join(f.spec for f in faults)})")
    seen = set()
    for fault in faults:
        kind = FAULT_KINDS[fault.kind]
        where = f"fault {fault.spec!r}"
        if (fault.kind, fault.vertex, fault.subtask) in seen:
            raise UsageError(f"{where}: a second {fault.kind} of the same subtask (one per subtask)")
        seen.add((fault.kind, fault.vertex, fault.subtask))
        if not kind.of_task:
            continue
        if fault.vertex not in roles:
            raise UsageError(f"{where}: unknown vertex {fault.vertex!r} (vertices: {', '.join(roles)})")
        parallelism = graph.parallelism(fault.vertex)
        if not 0 <= fault.subtask < parallelism:
            raise UsageError(f"{where}: subtask {fault.subtask} is outside 0..{parallelism - 1} "
                             f"(vertex {fault.vertex!r} has parallelism {parallelism})")
        if graph.vertex(fault.vertex).extra.get("keyed_state") and fault.kind not in _KEYED_STATE_KINDS:
            raise UsageError(f"{where}: {fault.kind} has no hook in a keyed_state vertex "
                             f"(it takes: {', '.join(_KEYED_STATE_KINDS)})")
        if fault.kind == "delay-after-split-request" and not graph.vertex(fault.vertex).extra.get("splits"):
            raise UsageError(f"{where}: {fault.kind} needs a lazy source, one with \"splits\": N (vertex "
                             f"{fault.vertex!r} is handed its split at registration and never asks)")
        if roles[fault.vertex] not in kind.roles:
            role = roles[fault.vertex].replace('_', ' ')
            raise UsageError(f"{where}: {fault.kind} has no hook in {'an' if role[0] in 'aeiou' else 'a'} {role} vertex "
                             f"(it applies to: {', '.join(r.replace('_', ' ') for r in kind.roles)})")
    fails = [f for f in faults if f.kind in FAIL_KINDS]
    if len(fails) > 1:
        raise UsageError(f"fault {fails[1].spec!r}: at most one of {', '.join(FAIL_KINDS)} per run "
                         f"(already {fails[0].spec!r})")
    if fails and fails[0].kind != "fail" and not local_recovery:
        raise UsageError(f"fault {fails[0].spec!r}: {fails[0].kind} needs --local-recovery (two TaskManagers, local copies)")


# -- the fault lines --------------------------------------------------------------------------

# "flipcheck fault KIND VERTEX[SUBTASK] WHERE" / "flipcheck fault KIND job WHERE"; a vertex id may
# hold anything printable, WHERE never a "[": the last "[N]" closes the task.
FAULT_LINE = re.compile(r"^flipcheck fault (?P<kind>[a-z-]+) (?:(?P<vertex>.+)\[(?P<subtask>\d+)\]|job)(?: (?P<where>[^\[]*))?$")


def _register_line() -> None:
    from flipcheck.flink.logs import Pattern, add_pattern

    add_pattern(Pattern("fault", "Faults", "INFO", re.compile(r"^(?P<detail>flipcheck fault .+)$"),
                        "FlipcheckJob's Faults.struck (flipcheck/flink/java/Faults.java): a fault strikes"))


_register_line()


def faults_struck(events: Iterable) -> list[dict]:
    """conform's ``"faults"``: ``{"kind", "task", "at", "line"}`` per fault line among the log
    ``events`` (``task``: ``VERTEX[SUBTASK]`` or None, ``at``: where it struck, ``line``: file:line).

    >>> from flipcheck.flink.logs import parse_log
    >>> log = "2026-11-26 06:00:00,000 INFO  flipcheck.Faults [] - flipcheck fault snapshot-throw map[0] checkpoint 2"
    >>> faults_struck(parse_log(log, "flink.log").events)
    [{'kind': 'snapshot-throw', 'task': 'map[0]', 'at': 'checkpoint 2', 'line': 'flink.log:1'}]
    """
    struck = []
    for e in events:
        match = FAULT_LINE.match(e.detail) if e.kind == "fault" else None
        if match:
            task = None if match["vertex"] is None else f"{match['vertex']}[{match['subtask']}]"
            struck.append({"kind": match["kind"], "task": task, "at": match["where"] or "",
                           "line": f"{e.file.rsplit('/', 1)[-1]}:{e.line}"})
    return struck

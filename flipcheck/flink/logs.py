"""Reading Flink's own logs: the checkpoint events of a run, from any Flink cluster.

Flink writes its logs with the default log4j layout ``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c
%x - %m%n``: a timestamp, the level, the logger (a class name), ``[]`` (the MDC, maybe with a
job id) and the message. An entry can run over several lines (a stack trace, a decline's
cause); a line that does not start with a timestamp continues the entry before it.

:func:`read_logs` turns JobManager and TaskManager logs, given in any order, into
:class:`LogEvent` s sorted by time, each with its file and line. The messages it recognises are
listed in :data:`PATTERNS` with the Flink class and method that writes them; every other entry
is counted, never an error. Which checkpoint events need DEBUG is said per pattern: a cluster
at INFO shows triggers, declines, completions and task state switches, not acknowledgements or
barriers.

Execution attempt ids have the form ``<graph>_<jobVertex>_<subtask>_<attempt>`` (Flink 1.17+):
:func:`attempt_parts` splits one.

Example
-------
>>> text = '''2026-11-25 00:29:14,840 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator    [] - Decline checkpoint 2 by task 2945_bc76_0_0 of job 7023 at b6db @ localhost (dataPort=-1)
... org.apache.flink.util.SerializedThrowable: org.apache.flink.runtime.checkpoint.CheckpointException: Task name with subtask : Source (1/2)#0 Failure reason: Checkpoint was declined (task is closing)
... 2026-11-25 00:29:14,857 INFO  org.apache.flink.runtime.source.coordinator.SourceCoordinator [] - Marking checkpoint 2 as aborted.'''
>>> reading = parse_log(text, "jobmanager.log")
>>> [(e.kind, e.checkpoint, e.task, e.line, e.detail) for e in reading.events]
[('decline', 2, '2945_bc76_0_0', 1, 'Checkpoint was declined (task is closing)')]
>>> reading.entries, reading.unrecognised
(2, 1)
>>> attempt_parts("2945_bc76_0_1")
('bc76', 0, 1)
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple

from flipcheck.errors import InputError

__all__ = ["LogEvent", "LogReading", "Pattern", "PATTERNS", "KINDS", "parse_log", "read_logs", "attempt_parts"]

# The start of an entry: date, time with milliseconds, level, logger, the MDC, " - ".
_ENTRY = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\s+([A-Z]+)\s+([\w.$]+)\s+(?:\[[^\]]*\]\s+)?- (.*)$")
_DECLINE_REASON = re.compile(r"Failure reason: (.*)$")


class Pattern(NamedTuple):
    kind: str
    logger: str      # the simple class name of the logger
    level: str       # the level Flink logs it at
    message: re.Pattern
    writer: str      # the Flink method that writes it


# Groups by name: ``checkpoint``, ``task`` (an execution attempt id) and ``detail``.
PATTERNS = (
    Pattern("trigger", "CheckpointCoordinator", "INFO",
            re.compile(r"Triggering checkpoint (?P<checkpoint>\d+) \(type=(?P<detail>.*)\) @ (?P<at>\d+) for job \w+\.?$"),
            "CheckpointCoordinator.createPendingCheckpoint"),
    Pattern("trigger-task", "TaskExecutor", "DEBUG",
            re.compile(r"Trigger checkpoint (?P<checkpoint>\d+)@\d+ for (?P<task>\S+?)\.?$"),
            "TaskExecutor.triggerCheckpoint: the RPC that starts a checkpoint on one task"),
    Pattern("trigger-unknown", "TaskExecutor", "DEBUG",
            re.compile(r"TaskManager received a checkpoint request for unknown task (?P<task>\S+?)\.?$"),
            "TaskExecutor.triggerCheckpoint: a trigger RPC for a task it no longer runs (no checkpoint id logged)"),
    Pattern("barrier", "SingleCheckpointBarrierHandler", "DEBUG",
            re.compile(r"(?P<detail>.*) \((?P<task>\S+)\): Received barrier from channel "
                       r"InputChannelInfo\{gateIdx=(?P<gate>\d+), inputChannelIdx=(?P<channel>\d+)\} @ (?P<checkpoint>\d+)\.?$"),
            "SingleCheckpointBarrierHandler.processBarrier"),
    Pattern("aligned", "SingleCheckpointBarrierHandler", "DEBUG",
            re.compile(r"(?P<detail>.*) \((?P<task>\S+)\): All the channels are aligned for checkpoint (?P<checkpoint>\d+)\.?$"),
            "SingleCheckpointBarrierHandler.markCheckpointAlignedAndTransformState"),
    Pattern("ack", "CheckpointCoordinator", "DEBUG",
            re.compile(r"Received acknowledge message for checkpoint (?P<checkpoint>\d+) from task (?P<task>\S+) of job \w+"),
            "CheckpointCoordinator.receiveAcknowledgeMessage"),
    Pattern("decline", "CheckpointCoordinator", "INFO",
            re.compile(r"Decline checkpoint (?P<checkpoint>\d+) by task (?P<task>\S+) of job \w+"),
            "CheckpointCoordinator.receiveDeclineMessage"),
    Pattern("completed", "CheckpointCoordinator", "INFO",
            re.compile(r"Completed checkpoint (?P<checkpoint>\d+) for job \w+"),
            "CheckpointCoordinator.logCheckpointInfo, on completePendingCheckpoint"),
    Pattern("failed", "CheckpointFailureManager", "WARN",
            re.compile(r"Failed to trigger or complete checkpoint (?P<checkpoint>\d+) for job \w+"),
            "CheckpointFailureManager.handleCheckpointException"),
    Pattern("notify-complete", "TaskExecutor", "DEBUG",
            re.compile(r"Confirm completed checkpoint (?P<checkpoint>\d+)@\d+ and last subsumed checkpoint "
                       r"(?P<detail>-?\d+) for (?P<task>\S+?)\.?$"),
            "TaskExecutor.confirmCheckpoint"),
    Pattern("notify-abort", "TaskExecutor", "DEBUG",
            re.compile(r"Abort checkpoint (?P<checkpoint>\d+)@\d+ for (?P<task>\S+?)\.?$"),
            "TaskExecutor.abortCheckpoint"),
    Pattern("task-ended", "StreamTask", "DEBUG",
            re.compile(r"^Finished task (?P<name>.+)$"),
            "StreamTask.afterInvoke: the task's input ended (a source: its data)"),
    Pattern("checkpoint-started", "StreamTask", "DEBUG",
            re.compile(r"^Starting checkpoint (?P<checkpoint>\d+) \S.* on task (?P<name>.+)$"),
            "StreamTask.performCheckpoint: the task takes its snapshot"),
    Pattern("operators-finished", "StreamTask", "DEBUG",
            re.compile(r"^Finished operators for task (?P<name>.+)$"),
            "StreamTask.afterInvoke: the task's operators finished, it closes"),
    Pattern("task-state", "Task", "INFO",
            re.compile(r"(?P<name>.*) \((?P<task>\w+_\w+_\d+_\d+)\) switched from (?P<detail>\w+ to \w+)"),
            "Task.transitionState: the task's own view"),
    Pattern("execution-state", "ExecutionGraph", "INFO",
            re.compile(r"(?P<name>.*) \((?P<task>\w+_\w+_\d+_\d+)\) switched from (?P<detail>\w+ to \w+)"),
            "Execution.transitionState: the JobManager's view"),
)
KINDS = tuple(dict.fromkeys(p.kind for p in PATTERNS))
_BY_LOGGER: dict[str, list[Pattern]] = {}
for _pattern in PATTERNS:
    _BY_LOGGER.setdefault(_pattern.logger, []).append(_pattern)


@dataclass(frozen=True)
class LogEvent:
    kind: str
    file: str
    line: int                # 1-based line of the entry's first line
    time: str                # as logged: "2026-11-25 00:29:14,840"
    checkpoint: int | None
    task: str | None         # an execution attempt id
    detail: str              # what else the entry says: a reason, a state switch, a channel
    at: int | None = None    # a trigger's own timestamp (ms since the epoch), taken before its plan


class LogReading(NamedTuple):
    events: list[LogEvent]
    entries: int             # log entries read (a multi-line entry counts once)
    unrecognised: int        # entries no pattern knows: counted, skipped


def attempt_parts(attempt: str) -> tuple[str, int, int]:
    """``(job vertex id, subtask index, attempt number)`` of an execution attempt id."""
    parts = attempt.split("_")
    if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
        raise ValueError(f"{attempt!r} is not an execution attempt id <graph>_<vertex>_<subtask>_<attempt>")
    return parts[1], int(parts[2]), int(parts[3])


def _entries(text: str):
    """``(line, time, logger, message, continuation lines)`` per entry; lines before the first
    entry are skipped."""
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _ENTRY.match(line)
        if match:
            if current is not None:
                yield current
            time, _, logger, message = match.groups()
            current = (number, time, logger.rsplit(".", 1)[-1], message, [])
        elif current is not None:
            current[4].append(line)
    if current is not None:
        yield current


def _event(file: str, number: int, time: str, logger: str, message: str, more: list[str]) -> LogEvent | None:
    for pattern in _BY_LOGGER.get(logger, ()):
        match = pattern.message.search(message)
        if match is None:
            continue
        groups = match.groupdict()
        detail = groups.get("detail") or ""
        if pattern.kind == "barrier":
            detail = f"gate {groups['gate']} channel {groups['channel']}"
        elif pattern.kind in ("task-state", "execution-state"):
            detail = f"{groups['name']}: {detail}"
        elif pattern.kind in ("task-ended", "operators-finished", "checkpoint-started"):
            detail = groups["name"]   # "<task name> (<subtask>/<parallelism>)#<attempt>": no attempt id
        elif pattern.kind == "decline":
            reasons = [r.group(1) for r in map(_DECLINE_REASON.search, more) if r]
            detail = reasons[0] if reasons else ""
        checkpoint = groups.get("checkpoint")
        at = groups.get("at")
        return LogEvent(pattern.kind, file, number, time, int(checkpoint) if checkpoint else None,
                        groups.get("task"), detail.strip(), int(at) if at else None)
    return None


def parse_log(text: str, file: str = "<log>") -> LogReading:
    """The recognised events of one log's text, in the file's order."""
    events, entries, unrecognised = [], 0, 0
    for number, time, logger, message, more in _entries(text):
        entries += 1
        event = _event(file, number, time, logger, message, more)
        if event is None:
            unrecognised += 1
        else:
            events.append(event)
    return LogReading(events, entries, unrecognised)


def read_logs(paths: Iterable[str]) -> LogReading:
    """Every log's events, each file's in its order, files merged by time: JobManager and
    TaskManager logs may be given in any order. An unreadable file, or one with no log entry at
    all, is an :class:`~flipcheck.errors.InputError`."""
    per_file, entries, unrecognised = [], 0, 0
    for path in paths:
        try:
            text = Path(path).read_text(errors="replace")
        except OSError as error:
            raise InputError(path, f"cannot read the log: {error.strerror or error}") from None
        reading = parse_log(text, path)
        if reading.entries == 0:
            raise InputError(path, "no Flink log entry (expected lines like "
                                   "'2026-11-25 00:29:14,840 INFO  org.apache.flink... [] - message')")
        entries += reading.entries
        unrecognised += reading.unrecognised
        per_file.append(reading.events)
    # Within a file the order is the order of writing, which a timestamp taken earlier by
    # another thread must not change; files are interleaved by time.
    per_file.sort(key=lambda file_events: file_events[0].file if file_events else "")
    events = list(heapq.merge(*per_file, key=lambda e: e.time))
    return LogReading(events, entries, unrecognised)

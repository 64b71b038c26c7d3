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

The reader is one table, :data:`PATTERNS`: a row says which releases write a message
(``since``/``until``, minor lines of :data:`RELEASES`), and what event it is. Messages changed
between releases: execution attempt ids are ``<graph>_<jobVertex>_<subtask>_<attempt>`` from
Flink 1.16 on (``ExecutionAttemptID.toString``: ``"%s_%s_%d"``), random 32-hex ids before; 1.14
confirms a checkpoint without its last subsumed one. Every event carries its task's identity
(:class:`TaskIdentity`: job vertex, subtask, attempt), resolved once: from a 1.16+ attempt id
itself, else from the lines that name a task with its subtask and attempt and give its id (the
JobManager's ``Deploying ... (attempt #a) with attempt id ...``, the TaskManager's state
switches ``Source: src (1/2)#0 (<id>) switched from ...``), and the vertex from a 1.16+ id of
the same name, or from ``vertex_names`` (the REST plan's).

The release is read from the start-up banner a JobManager or TaskManager log begins with
(``EnvironmentInformation.logEnvironmentInfo``: `` Starting StandaloneSessionClusterEntrypoint
(Version: 1.14.6, Scala: 2.12, ...)``), or given; a MiniCluster log has none: then every row is
tried, newest first (old and new formats differ in their ids, so a line is never read twice).
:func:`add_pattern` adds a row (a release's changed message).

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
>>> old = parse_log('''2021-05-01 10:00:00,000 INFO  org.apache.flink.runtime.util.EnvironmentInformation [] -  Starting TaskManagerRunner (Version: 1.14.6, Scala: 2.12, Rev:2a4b1d3, Date:2022-09-10T16:06:00+02:00)
... 2021-05-01 10:00:01,000 INFO  org.apache.flink.runtime.taskmanager.Task [] - Map (2/2)#1 (0c1d8e0b8bb5a8a6b3e9d0c6f25a4d21) switched from INITIALIZING to RUNNING.
... 2021-05-01 10:00:02,000 DEBUG org.apache.flink.runtime.taskexecutor.TaskExecutor [] - Confirm checkpoint 3@1619863202000 for 0c1d8e0b8bb5a8a6b3e9d0c6f25a4d21.''', "tm.log")
>>> old.release, [(e.kind, e.identity) for e in old.events]
('1.14', [('task-state', TaskIdentity(vertex=None, name='Map', subtask=1, attempt=1)), ('notify-complete', TaskIdentity(vertex=None, name='Map', subtask=1, attempt=1))])
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple

from flipcheck.errors import InputError

__all__ = ["LogEvent", "LogReading", "Pattern", "PATTERNS", "KINDS", "RELEASES", "TaskIdentity", "add_pattern",
           "release_of", "supported_release", "parse_log", "read_logs", "attempt_parts"]

# The minor lines read, oldest first; a row's ``until=None`` reaches the newest.
RELEASES = ("1.14", "1.15", "1.16", "1.17", "1.18", "1.19", "1.20", "2.0", "2.1", "2.2", "2.3")

# The start of an entry: date, time with milliseconds, level, logger, the MDC, " - ".
_ENTRY = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\s+([A-Z]+)\s+([\w.$]+)\s+(?:\[[^\]]*\]\s+)?- (.*)$")
_DECLINE_REASON = re.compile(r"Failure reason: (.*)$")


_BANNER = re.compile(r"^\s*Starting .+ \(Version: (?P<version>[^,\s]+),")
# A task as Flink names it: TaskInfo.getTaskNameWithSubtasks, "<name> (<i>/<n>)#<attempt>", or
# ExecutionVertex.getTaskNameWithSubtaskIndex, "<name> (<i>/<n>)" (the JobManager's).
_NAMED = re.compile(r"^(?P<name>.*) \((?P<index>\d+)/\d+\)(?:#(?P<attempt>\d+))?$")
# Attempt ids: 1.16+ (ExecutionAttemptID "%s_%s_%d" of graph, ExecutionVertexID "vertex_subtask",
# attempt), and before (an AbstractID: 32 hex digits).
_NEW_ID = r"\w+_\w+_\d+_\d+"
_OLD_ID = r"[0-9a-f]{32}"


def _switched(attempt_id: str) -> re.Pattern:
    """Task.transitionState and Execution.transitionState: ``"{} ({}) switched from {} to {}."``."""
    return re.compile(rf"(?P<name>.*) \((?P<task>{attempt_id})\) switched from (?P<detail>\w+ to \w+)")


class Pattern(NamedTuple):
    kind: str
    logger: str      # the simple class name of the logger
    level: str       # the level Flink logs it at
    message: re.Pattern
    writer: str      # the Flink method that writes it
    since: str = RELEASES[0]     # the first minor line that writes it
    until: str | None = None     # the last one (None: still written)

    def written_by(self, release: str | None) -> bool:
        """Whether ``release`` writes this message (None: a release not known, every row)."""
        if release is None:
            return True
        at = _RANK[release]
        return _RANK[self.since] <= at and (self.until is None or at <= _RANK[self.until])

    def releases(self) -> str:
        """The releases that write it, as the conformance page lists them."""
        if self.until is None:
            return f"{self.since}+"
        return self.since if self.since == self.until else f"{self.since}–{self.until}"


_RANK = {release: n for n, release in enumerate(RELEASES)}


class TaskIdentity(NamedTuple):
    """Which task an event is about: its Flink job vertex id (None: known by name only), its
    task name as logged, subtask index (0-based) and execution attempt (None: not known)."""

    vertex: str | None
    name: str | None
    subtask: int
    attempt: int | None


# Groups by name: ``checkpoint``, ``task`` (an execution attempt id), ``name`` (a task named with
# its subtask), ``attempt`` (an attempt number) and ``detail``.
PATTERNS = (
    Pattern("trigger", "CheckpointCoordinator", "INFO",
            re.compile(r"Triggering checkpoint (?P<checkpoint>\d+) \(type=(?P<detail>.*)\) @ (?P<at>\d+) for job \w+\.?$"),
            "CheckpointCoordinator.createPendingCheckpoint"),
    Pattern("trigger-task", "TaskExecutor", "DEBUG",
            re.compile(r"Trigger checkpoint (?P<checkpoint>\d+)@\d+ for (?P<task>\S+?)\.?$"),
            "TaskExecutor.triggerCheckpoint: the RPC that starts a checkpoint on one task"),
    Pattern("trigger-unknown", "TaskExecutor", "DEBUG",
            re.compile(r"TaskManager received a checkpoint request for unknown task (?P<task>\S+?)\.?$"),
            "TaskExecutor.triggerCheckpoint: a trigger RPC for a task it no longer runs (no checkpoint id logged; "
            "before 1.20 its 'Trigger checkpoint' line came first and stands for it)", since="1.20"),
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
    Pattern("trigger-failed", "CheckpointFailureManager", "WARN",
            re.compile(r"Failed to trigger or complete checkpoint UNKNOWN_CHECKPOINT_ID for job \w+"),
            "CheckpointFailureManager.handleCheckpointException: a trigger failed with no pending checkpoint "
            "(an id it drew is used up)"),
    Pattern("notify-complete", "TaskExecutor", "DEBUG",
            re.compile(r"Confirm completed checkpoint (?P<checkpoint>\d+)@\d+ and last subsumed checkpoint "
                       r"(?P<detail>-?\d+) for (?P<task>\S+?)\.?$"),
            "TaskExecutor.confirmCheckpoint", since="1.15"),
    Pattern("notify-complete", "TaskExecutor", "DEBUG",
            re.compile(r"Confirm checkpoint (?P<checkpoint>\d+)@\d+ for (?P<task>\S+?)\.?$"),
            "TaskExecutor.confirmCheckpoint (no last subsumed checkpoint yet)", until="1.14"),
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
            _switched(_NEW_ID),
            "Task.transitionState: the task's own view", since="1.16"),
    Pattern("task-state", "Task", "INFO",
            _switched(_OLD_ID),
            "Task.transitionState: the task's own view (a 32-hex attempt id)", until="1.15"),
    Pattern("execution-state", "ExecutionGraph", "INFO",
            _switched(_NEW_ID),
            "Execution.transitionState: the JobManager's view", since="1.16"),
    Pattern("execution-state", "ExecutionGraph", "INFO",
            _switched(_OLD_ID),
            "Execution.transitionState: the JobManager's view (no attempt number, a 32-hex attempt id)",
            until="1.15"),
    Pattern("deploy", "ExecutionGraph", "INFO",
            re.compile(rf"Deploying (?P<name>.*) \(attempt #(?P<attempt>\d+)\) with attempt id (?P<task>{_OLD_ID}) "),
            "Execution.deploy: names the 32-hex attempt id's task and attempt number", until="1.15"),
    Pattern("global-failure", "JobMaster", "INFO",
            re.compile(r"^Trying to recover from a global failure\.?$"),
            "DefaultScheduler.handleGlobalFailure (the JobMaster's logger): e.g. an OperatorCoordinator failed the job"),
)
KINDS = tuple(dict.fromkeys(p.kind for p in PATTERNS))
_BY_LOGGER: dict[str, list[Pattern]] = {}


def add_pattern(pattern: Pattern) -> None:
    """Read one more message: a release's changed format, or a line a design needs (its event
    kind then reaches :mod:`flipcheck.flink.conform`'s observation table). Rows of newer
    releases are tried first, so a line two rows would read is read by the newest."""
    global PATTERNS, KINDS
    if pattern.since not in _RANK or pattern.until is not None and pattern.until not in _RANK:
        raise ValueError(f"pattern {pattern.kind!r}: releases must be among {', '.join(RELEASES)}")
    PATTERNS = PATTERNS + (pattern,) if pattern not in PATTERNS else PATTERNS
    KINDS = tuple(dict.fromkeys(p.kind for p in PATTERNS))
    _BY_LOGGER.clear()
    for row in sorted(PATTERNS, key=lambda p: -_RANK[p.until or RELEASES[-1]]):
        _BY_LOGGER.setdefault(row.logger, []).append(row)


for _pattern in PATTERNS:
    add_pattern(_pattern)


def supported_release(version: str) -> str:
    """The minor line of a Flink version (``1.14.6`` -> ``1.14``); ValueError if malformed or
    not read."""
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?(?:-\w+)?", version.strip())
    if match is None:
        raise ValueError(f"{version!r} is not a Flink version like 1.17.2")
    line = f"{int(match.group(1))}.{int(match.group(2))}"
    if line not in _RANK:
        raise ValueError(f"Flink {version} is not supported (supported: {RELEASES[0]} to {RELEASES[-1]})")
    return line


def release_of(text: str) -> str | None:
    """The release a log's start-up banner names (None: no banner, or a release not read)."""
    for _, _, logger, message, _ in _entries(text):
        if logger == "EnvironmentInformation":
            match = _BANNER.match(message)
            if match:
                try:
                    return supported_release(match.group("version"))
                except ValueError:
                    return None
    return None


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
    identity: TaskIdentity | None = None   # the task it is about, resolved once (read_logs)
    name: str | None = None  # the task as the line names it: "<name> (<i>/<n>)[#<attempt>]"


class LogReading(NamedTuple):
    events: list[LogEvent]
    entries: int             # log entries read (a multi-line entry counts once)
    unrecognised: int        # entries no pattern knows: counted, skipped
    release: str | None = None   # the minor line read (given, or from a banner); None: every row


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


def _event(file: str, number: int, time: str, logger: str, message: str, more: list[str],
           release: str | None) -> LogEvent | None:
    for pattern in _BY_LOGGER.get(logger, ()):
        if not pattern.written_by(release):
            continue
        match = pattern.message.search(message)
        if match is None:
            continue
        groups = match.groupdict()
        detail = groups.get("detail") or ""
        name = groups.get("name")
        if pattern.kind == "barrier":
            name, detail = detail, f"gate {groups['gate']} channel {groups['channel']}"
        elif pattern.kind == "aligned":
            name = detail
        elif pattern.kind in ("task-state", "execution-state"):
            detail = f"{groups['name']}: {detail}"
        elif pattern.kind in ("task-ended", "operators-finished", "checkpoint-started"):
            detail = groups["name"]   # "<task name> (<subtask>/<parallelism>)#<attempt>": no attempt id
        elif pattern.kind == "deploy":
            name = f"{name}#{groups['attempt']}"
        elif pattern.kind == "decline":
            reasons = [r.group(1) for r in map(_DECLINE_REASON.search, more) if r]
            detail = reasons[0] if reasons else ""
        checkpoint = groups.get("checkpoint")
        at = groups.get("at")
        return LogEvent(pattern.kind, file, number, time, int(checkpoint) if checkpoint else None,
                        groups.get("task"), detail.strip(), int(at) if at else None, name=name)
    return None


def _identify(events: list[LogEvent], vertex_names: Mapping[str, str] | None = None) -> list[LogEvent]:
    """``events`` with each one's :class:`TaskIdentity`. Lines that give both a task's name with
    its subtask and its attempt id teach what an old (32-hex) id stands for and, with a 1.16+ id,
    which job vertex a name is; other names take their vertex from ``vertex_names``."""
    by_id: dict[str, tuple] = {}        # attempt id -> (name, subtask, attempt)
    vertices: dict[str, set] = {}       # task name -> job vertices of that name
    for e in events:
        named = _NAMED.match(e.name) if e.name else None
        if named is None or e.task is None:
            continue
        known = by_id.get(e.task, (None, None, None))
        attempt = int(named.group("attempt")) if named.group("attempt") else known[2]
        by_id[e.task] = (named.group("name"), int(named.group("index")) - 1, attempt)
        try:
            vertex = attempt_parts(e.task)[0]
        except ValueError:
            continue
        vertices.setdefault(named.group("name"), set()).add(vertex)
    names = dict(vertex_names or {})
    names.update({name: next(iter(found)) if len(found) == 1 else None for name, found in vertices.items()})
    identified = []
    for e in events:
        identity = None
        try:
            vertex, subtask, attempt = attempt_parts(e.task) if e.task else (None, None, None)
        except ValueError:
            vertex = subtask = attempt = None
        named = _NAMED.match(e.name) if e.name else None
        name = named.group("name") if named else by_id.get(e.task, (None,))[0]
        if subtask is None and e.task in by_id:
            _, subtask, attempt = by_id[e.task]
        elif subtask is None and named:
            subtask = int(named.group("index")) - 1
            attempt = int(named.group("attempt")) if named.group("attempt") else None
        if subtask is not None:
            identity = TaskIdentity(vertex or names.get(name), name, subtask, attempt)
        identified.append(replace(e, identity=identity) if identity != e.identity else e)
    return identified


def _register_design_lines() -> None:
    """Import every design conform knows (each registers its lines with :func:`add_pattern`), so
    a log reads the same whichever modules a program imported before (conform_designs imports a
    design's module only when asked: the modules import this one)."""
    from flipcheck.flink.conform_designs import design_functions

    design_functions()


def parse_log(text: str, file: str = "<log>", release: str | None = None, unbannered: str | None = None) -> LogReading:
    """The recognised events of one log's text, in the file's order; ``release`` (a minor line
    of :data:`RELEASES`) defaults to the one its banner names, else to ``unbannered``."""
    _register_design_lines()
    release = release or release_of(text) or unbannered
    events, entries, unrecognised = [], 0, 0
    for number, time, logger, message, more in _entries(text):
        entries += 1
        event = _event(file, number, time, logger, message, more, release)
        if event is None:
            unrecognised += 1
        else:
            events.append(event)
    return LogReading(_identify(events), entries, unrecognised, release)


def _failures_at_their_time(events: list) -> list:
    """A task's own FAILED line (``Task.transitionState``) moved up before the lines of its file
    stamped after it. The task switches its state first and logs after, and the WARN line carries
    the failure's whole stack trace: under load it was written 66 ms after its timestamp, after
    the same task's decline of a trigger (``Task.triggerCheckpointBarrier`` found it not RUNNING:
    "tasks not ready", stamped 06:20:06,113, the FAILED line 06:20:06,047; docs/conformance.md,
    divergence 29). Any line stamped after the switch may have seen it; no other line moves."""
    ordered = list(events)
    for i, event in enumerate(events):
        if event.kind != "task-state" or not event.detail.endswith("to FAILED"):
            continue
        at = ordered.index(event)
        first = at
        while first > 0 and ordered[first - 1].time > event.time:
            first -= 1
        if first < at:
            ordered.insert(first, ordered.pop(at))
    return ordered


def read_logs(paths: Iterable[str], release: str | None = None,
              vertex_names: Mapping[str, str] | None = None, *, unbannered: str | None = None) -> LogReading:
    """Every log's events, each file's in its order, files merged by time: JobManager and
    TaskManager logs may be given in any order. ``release``: the minor line the logs are of
    (default: each file's banner's); ``vertex_names``: task name -> Flink job vertex id, for
    lines that name their task only (the REST plan's names); ``unbannered``: the release of a
    file with no banner (a MiniCluster's), when known otherwise. An unreadable file, or one with no
    log entry at all, is an :class:`~flipcheck.errors.InputError`."""
    per_file, entries, unrecognised, releases = [], 0, 0, set()
    for path in paths:
        try:
            text = Path(path).read_text(errors="replace")
        except OSError as error:
            raise InputError(path, f"cannot read the log: {error.strerror or error}") from None
        reading = parse_log(text, path, release, unbannered)
        if reading.entries == 0:
            raise InputError(path, "no Flink log entry (expected lines like "
                                   "'2026-11-25 00:29:14,840 INFO  org.apache.flink... [] - message')")
        entries += reading.entries
        unrecognised += reading.unrecognised
        releases.add(reading.release)
        per_file.append(_failures_at_their_time(reading.events))
    # Within a file the order is the order of writing, which a timestamp taken earlier by
    # another thread must not change (but for a task's own FAILED line: _failures_at_their_time);
    # files are interleaved by time.
    per_file.sort(key=lambda file_events: file_events[0].file if file_events else "")
    events = list(heapq.merge(*per_file, key=lambda e: e.time))
    # One TaskManager's lines may name a task the JobManager's lines give the id of.
    known = {r for r in releases if r is not None}
    return LogReading(_identify(events, vertex_names), entries, unrecognised,
                      known.pop() if len(known) == 1 else release)

"""Does a real run's FLIP-27 split assignment conform to ``model/split_assignment.py``?

A run of a source with ``"splits"`` (``flipcheck flink run``, docs/graph-format.md) writes our
own lines about every split (logger ``flipcheck.SplitAssignment``: Flink logs neither an
assignment nor what a reader holds), beside ``SourceCoordinator``'s own: reader registration,
a subtask's failure and reset, checkpoint completion and abortion. :func:`observations` turns
them into the observations of :mod:`flipcheck.properties.split_assignment_trace_validation`,
and :func:`conform_split_assignment` asks whether some behaviour of the model's coordinator
design shows them, then checks the committed output split by split. The lines are rows of
:mod:`flipcheck.flink.logs` (added here, :func:`~flipcheck.flink.logs.add_pattern`), listed in
docs/conformance.md.

Example
-------
>>> from flipcheck.flink.logs import read_logs
>>> reading = read_logs(["tests/fixtures/flink_runs/splits-reader-failure/flink.log"])
>>> verdict = conform_split_assignment(reading, None)
>>> verdict.conforms, verdict.first_unexplained
(True, None)
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from flipcheck.flink.conform import Check, RunDirectory, committed_counts
from flipcheck.flink.design_conformance import DesignConformance
from flipcheck.flink.logs import LogEvent, LogReading, Pattern, add_pattern
from flipcheck.properties.split_assignment_trace_validation import DEFAULT_BUDGET, validate

__all__ = ["DESIGN", "SPLIT_LINES", "SOURCE_LINES", "MAX_PARALLELISM", "parse_line", "live_lines", "observations",
           "conform_split_assignment", "split_ranges"]

DESIGN = "split-assignment"
MAX_PARALLELISM = 32768   # Flink's upper bound, as the graph format's

# Our job's lines (FlipcheckJob.java's LazyEnumerator and LazyReader), event kind -> message.
_SPLITS = r"flipcheck splits (?P<source>.+?): "
_LIST = r"\[(?P<splits>[\d, ]*)\]"
SPLIT_LINES = {
    "split-start": (_SPLITS + r"enumerator started, pending " + _LIST, "FlipcheckJob.LazyEnumerator.start"),
    "split-assign": (_SPLITS + r"assigned split (?P<split>\d+) to subtask (?P<subtask>\d+)", "FlipcheckJob.LazyEnumerator.handleSplitRequest"),
    "split-no-more": (_SPLITS + r"no more splits for subtask (?P<subtask>\d+)", "FlipcheckJob.LazyEnumerator.handleSplitRequest"),
    "split-add-back": (_SPLITS + r"splits " + _LIST + r" added back from subtask (?P<subtask>\d+)",
                       "FlipcheckJob.LazyEnumerator.addSplitsBack"),
    "split-coordinator-snapshot": (_SPLITS + r"enumerator snapshot for checkpoint (?P<checkpoint>\d+), pending " + _LIST,
                                   "FlipcheckJob.LazyEnumerator.snapshotState"),
    "split-restored": (_SPLITS + r"subtask (?P<subtask>\d+) restored splits " + _LIST,
                       "FlipcheckJob.LazyReader.addSplits, before SourceOperator starts the reader"),
    "split-received": (_SPLITS + r"subtask (?P<subtask>\d+) received splits " + _LIST, "FlipcheckJob.LazyReader.addSplits"),
    "split-snapshot": (_SPLITS + r"subtask (?P<subtask>\d+) snapshot for checkpoint (?P<checkpoint>\d+), splits " + _LIST,
                       "FlipcheckJob.LazyReader.snapshotState"),
    "split-finished": (_SPLITS + r"subtask (?P<subtask>\d+) finished split (?P<split>\d+)", "FlipcheckJob.LazyReader.pollNext"),
    "split-end": (_SPLITS + r"subtask (?P<subtask>\d+) end of input", "FlipcheckJob.LazyReader.pollNext"),
    "split-dropped": (_SPLITS + r"dropped the event carrying splits " + _LIST + r" to subtask (?P<subtask>\d+)",
                      "Faults.dropAddSplitEvent, from EventDrops.Dropping.sendOperatorEventToTask (drop_add_split_event)"),
}
# SourceCoordinator's lines (release-2.3 sources, recovery facts §3), kind -> (message, writer).
_SOURCE = r"(?:source |Source )Source: (?P<source>.+?)"
SOURCE_LINES = {
    "source-register": (r"Source Source: (?P<source>.+?) registering reader for parallel task (?P<subtask>\d+) \(#\d+\)",
                        "SourceCoordinator.handleReaderRegistrationEvent"),
    "source-failed": (r"Removing registered reader after failure for subtask (?P<subtask>\d+) \(#\d+\) of source "
                      r"Source: (?P<source>.+?)\.$", "SourceCoordinator.executionAttemptFailed"),
    "source-reset": (r"Recovering subtask (?P<subtask>\d+) to checkpoint (?P<checkpoint>-?\d+) for source "
                     r"Source: (?P<source>.+?) to checkpoint\.$", "SourceCoordinator.subtaskReset"),
    "source-completed": (r"Marking checkpoint (?P<checkpoint>\d+) as completed for source Source: (?P<source>.+?)\.$",
                         "SourceCoordinator.notifyCheckpointComplete"),
    "source-aborted": (r"Marking checkpoint (?P<checkpoint>\d+) as aborted for source Source: (?P<source>.+?)\.$",
                       "SourceCoordinator.notifyCheckpointAborted"),
}
# The reader's own lines: an attempt the coordinator reported failed may still write them.
_READER_LINES = ("split-received", "split-snapshot", "split-finished", "split-end")
_MESSAGES = {kind: re.compile(message) for kind, (message, _) in {**SPLIT_LINES, **SOURCE_LINES}.items()}

for _kind, (_message, _writer) in SPLIT_LINES.items():
    # The dropped RPC needs Flink 2.x's RPC service (compat/flink2/EventDrops.java).
    add_pattern(Pattern(_kind, "SplitAssignment", "INFO", re.compile(rf"^(?P<detail>{_message})$"),
                        f"{_writer} (flipcheck's job, not Flink)", since="2.0" if _kind == "split-dropped" else "1.14"))
for _kind, (_message, _writer) in SOURCE_LINES.items():
    # The "(#attempt)" forms are 1.16's and later; read on 2.3 runs.
    add_pattern(Pattern(_kind, "SourceCoordinator", "INFO", re.compile(rf"^(?P<detail>{_message})"), _writer, since="1.16"))


class _Line(NamedTuple):
    kind: str
    source: str
    subtask: int | None
    checkpoint: int | None
    split: int | None
    splits: frozenset | None
    event: LogEvent


def parse_line(e: LogEvent) -> _Line | None:
    """The design's reading of one log event (None: not a line of this design)."""
    match = _MESSAGES[e.kind].search(e.detail) if e.kind in _MESSAGES else None
    if match is None:
        return None
    groups = match.groupdict()
    number = lambda name: int(groups[name]) if groups.get(name) is not None else None  # noqa: E731
    splits = groups.get("splits")
    return _Line(e.kind, groups["source"], number("subtask"), number("checkpoint"), number("split"),
                 frozenset(int(x) for x in splits.replace(",", " ").split()) if splits is not None else None, e)


def live_lines(events: list[LogEvent]) -> list[_Line]:
    """The design's lines, without the enumerator's snapshots of checkpoints that had failed
    already: the coordinator's snapshot runs on its own thread after the trigger, and may come
    after the checkpoint was aborted (recovery facts §3.9). Nothing completes or restores it; the
    tracker files the assignments so far under its id, which returns and forgets them as the next
    snapshot would."""
    failed: set = set()
    lines = []
    for e in events:
        if e.kind == "failed" and e.checkpoint is not None:
            failed.add(e.checkpoint)
        line = parse_line(e)
        if line is not None and not (line.kind == "split-coordinator-snapshot" and line.checkpoint in failed):
            lines.append(line)
    return lines


def observations(lines: list[_Line]) -> tuple[list[tuple], list[LogEvent], dict[int, int]]:
    """One source's lines as observations, with the event of each and the model id of each
    real checkpoint id (the enumerator's snapshots in order: 1, 2, ...)."""
    ids: dict[int, int] = {}
    for line in lines:
        if line.kind == "split-coordinator-snapshot" and line.checkpoint not in ids:
            ids[line.checkpoint] = len(ids) + 1
    found: list[tuple] = []
    events: list[LogEvent] = []

    def add(o: tuple, line: _Line) -> None:
        found.append(o)
        events.append(line.event)

    # A subtask restarted with the others is reported failed when its cancellation starts, and
    # runs on until it stops (recovery facts §3.9): its reader's later lines are of an attempt
    # the model has failed already, whose state is discarded. A reset or a restart ends that.
    dying: set = set()
    for line in lines:
        r, k = line.subtask, line.checkpoint
        model_id = ids.get(k, -k if k is not None else None)   # an id with no coordinator snapshot: never completed
        kind = line.kind.split("-", 1)[1]
        if line.kind in _READER_LINES and r in dying:
            continue
        if kind == "failed":
            dying.add(r)
        elif kind in ("reset", "restored", "register"):
            dying.discard(r)
        elif kind == "start":
            dying.clear()
        if kind == "start":
            add(("start", line.splits), line)
        elif kind in ("register", "failed", "no-more", "end"):
            add((kind, r), line)
        elif kind in ("assign", "finished"):
            add((kind, r, line.split), line)
        elif kind == "dropped":
            for x in sorted(line.splits):
                add(("lose", r, x), line)
        elif kind == "received":
            for x in sorted(line.splits):
                add(("received", r, x), line)
        elif kind == "snapshot":
            add(("snapshot", r, model_id, line.splits), line)
        elif kind == "coordinator-snapshot":
            add(("coordinator-snapshot", model_id, line.splits), line)
        elif kind in ("add-back", "restored"):
            add((kind, r, line.splits), line)
        elif kind == "reset":
            add(("reset", r, None if k == -1 else model_id), line)
        elif kind == "completed":
            add(("completed", model_id), line)
        elif kind == "aborted" and k in ids:   # a checkpoint aborted before its coordinator snapshot shows nothing
            add(("aborted", model_id), line)
    return found, events, ids


def split_ranges(run: RunDirectory, source: str) -> list[range] | None:
    """The record ids of each split of ``source`` as the run's spec.json cut them (None: not a
    lazy source of that run)."""
    try:
        spec = json.loads((run.path / "spec.json").read_text())
        vertex = next(v for v in spec["vertices"] if v["id"] == source)
        count, first, total = int(vertex["splits"]), int(vertex["first_record"]), int(vertex["records"]) * int(vertex["parallelism"])
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
    return [range(first + total * i // count, first + total * (i + 1) // count) for i in range(count)]


def _read_once_check(run: RunDirectory | None, sources: list[str]) -> Check:
    """``splits-read-once``: every record of every split committed exactly once per path to a
    committing sink (the protocol's ``committed-output`` counts records; this names the split)."""
    found = committed_counts(run, "splits-read-once")
    if isinstance(found, Check):
        return found
    expected, counts = found
    checked = 0
    for source in sources:
        splits = split_ranges(run, source)
        if splits is None:
            return Check("splits-read-once", False, f"source {source!r} has no \"splits\" in the run's spec.json")
        for number, ids in enumerate(splits):
            wrong = [r for r in ids if counts.get(r, 0) != expected.get(r, 0)]
            if wrong:
                return Check("splits-read-once", False, f"split {number} of {source}: record {wrong[0]} committed "
                                                        f"{counts.get(wrong[0], 0)} times, {expected.get(wrong[0], 0)} expected")
            checked += 1
    return Check("splits-read-once", True, f"{checked} splits: every record of each committed exactly once per path "
                                           "to a committing sink")


def _real_ids(why: str, ids: dict[int, int]) -> str:
    """The model's checkpoint ids in ``why`` as the log's."""
    real = {model: k for k, model in ids.items()}
    return re.sub(r"checkpoint (\d+)", lambda m: f"checkpoint {real.get(int(m.group(1)), m.group(1))}", why)


def conform_split_assignment(reading: LogReading, run: RunDirectory | None, *,
                             budget: int = DEFAULT_BUDGET) -> DesignConformance | None:
    """The design's verdict on the run the log shows (None: no lazy source's lines in it)."""
    lines = live_lines(reading.events)
    sources = sorted({line.source for line in lines if line.kind.startswith("split-")})
    if not sources:
        return None
    first, checks = None, []
    for source in sources:
        mine = [line for line in lines if line.source == source]
        found, events, ids = observations(mine)
        # A line naming a subtask past Flink's largest parallelism is one no behaviour shows.
        readers = min(MAX_PARALLELISM, 1 + max((line.subtask for line in mine if line.subtask is not None), default=0))
        if run is not None:
            readers = next((v.parallelism for v in run.graph.vertices if v.id == source), readers)
        starts = [o for o in found if o[0] == "start"]
        splits = len(starts[0][1]) if starts else 0
        verdict = validate(readers, splits, found, budget=budget)
        if not verdict.conforms and first is None:
            e = events[verdict.first_unexplained] if verdict.first_unexplained < len(events) else events[-1]
            first = {"file": e.file, "line": e.line, "event": f"{e.kind} {e.detail}", "why": _real_ids(verdict.why, ids)}
        checks.append(Check("model", verdict.conforms,
                            f"source {source}: {verdict.explained} of {len(found)} split events explained by a behaviour "
                            f"of model/split_assignment.py, coordinator design ({verdict.states:,} states searched)"))
    checks.append(_read_once_check(run, sources))
    return DesignConformance(DESIGN, all(c.ok for c in checks), len(lines), first, checks)

"""Task-local recovery against real Flink: does a run's log show a behaviour of
:mod:`flipcheck.model.local_recovery`?

A run of ``flipcheck flink run --local-recovery`` (two TaskManagers, file-system checkpoint
storage, local copies under ``DIR/local-state``) logs, per subtask, its local store's steps
(``TaskLocalStateStoreImpl``, ``TaskExecutorLocalStateStoresManager``), which alternative each
keyed restore read (``BackendRestorerProcedure``), the slot of each attempt (``Execution.deploy``)
and the faults ``LocalRecovery.java`` injected. :data:`LOCAL_RECOVERY_PATTERNS` reads them
(registered with :func:`flipcheck.flink.logs.add_pattern` on import); :func:`observations_of`
turns them into the observations of :mod:`flipcheck.properties.local_recovery_trace_validation`,
whose search decides. End-to-end checks read the run:

* ``local-recovery-model``: the search's verdict, with which copy each keyed restore read;
* ``keyed-state``: the keyed counts were right after every restore: a ``keyed_state`` vertex
  emits each key's first id plus its count, so each key's committed ids are exactly its block's;
* ``restored``: a run whose fault fired restored keyed state from a checkpoint at least once (a
  fault before the first completed checkpoint shows nothing of local recovery).

Example
-------
>>> from flipcheck.flink.conform import read_run_directory
>>> from flipcheck.flink.logs import read_logs
>>> from pathlib import Path
>>> run = Path("tests/fixtures/flink_runs/local-recovery-taskmanager-loss")
>>> result = conform_local_recovery(read_logs([str(run / "flink.log")]), read_run_directory(run))
>>> result.conforms, [(c.name, c.ok) for c in result.checks]
(True, [('local-recovery-model', True), ('keyed-state', True), ('restored', True)])
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from flipcheck.flink.conform import Check
from flipcheck.flink.design_conformance import DesignConformance
from flipcheck.flink.logs import LogEvent, LogReading, Pattern, add_pattern
from flipcheck.properties.local_recovery_trace_validation import validate

if TYPE_CHECKING:
    from flipcheck.flink.conform import RunDirectory

__all__ = ["DESIGN", "LOCAL_RECOVERY_PATTERNS", "KEY_BLOCK", "observations_of", "conform_local_recovery"]

DESIGN = "local-recovery"
# LocalRecovery.java's KEY_BLOCK: a keyed_state vertex's key is id // KEY_BLOCK.
KEY_BLOCK = 8

_SUBTASK = r"\((?P<job>\w+) - (?P<vertex>\w+) - (?P<subtask>\d+)\)"
_FIELDS: dict[str, re.Pattern] = {}


def _row(kind: str, logger: str, level: str, before: str, fields: str, after: str, writer: str,
         since: str = "1.14") -> Pattern:
    """A log pattern whose message is ``before``, then ``fields`` (the event's detail, read again
    by :func:`observations_of`), then ``after``."""
    _FIELDS[kind] = re.compile(fields)
    return Pattern(kind, logger, level, re.compile(f"{before}(?P<detail>{fields}){after}"), writer, since=since)


LOCAL_RECOVERY_PATTERNS = (
    _row("local-deploy", "ExecutionGraph", "INFO", "^Deploying ",
         r"(?P<name>.*) \((?P<index>\d+)/(?P<parallelism>\d+)\) \(attempt #(?P<attempt>\d+)\) with attempt id "
         r"\w+_(?P<vertex>\w+)_\d+_\d+ and vertex id \S+ to (?P<tm>\S+) @ .* with allocation id (?P<slot>\w+)", "",
         "Execution.deploy: the slot (allocation id) and TaskManager of each attempt", since="1.16"),
    _row("local-store-created", "TaskExecutorLocalStateStoresManager", "DEBUG",
         "^Registered new local state store with configuration .* for ",
         r"\w+ - (?P<vertex>\w+) - (?P<subtask>\d+) under allocation id (?P<slot>\w+)", r"\.?$",
         "TaskExecutorLocalStateStoresManager.localStateStoreForSubtask: a new store for a subtask in a slot"),
    _row("local-store-reused", "TaskExecutorLocalStateStoresManager", "DEBUG", "^Found existing local state store for ",
         r"\w+ - (?P<vertex>\w+) - (?P<subtask>\d+) under allocation id (?P<slot>\w+)", ":",
         "TaskExecutorLocalStateStoresManager.localStateStoreForSubtask: the slot's store of the subtask, reused"),
    _row("local-released", "TaskExecutorLocalStateStoresManager", "DEBUG", "^Releasing local state under allocation id ",
         r"(?P<slot>\w+)", r"\.?$",
         "TaskExecutorLocalStateStoresManager.releaseLocalStateForAllocationId: the slot's stores are disposed"),
    # TaskLocalStateStoreImpl's "<words> <checkpoint> in subtask (job - vertex - subtask)" lines.
    *(_row(kind, "TaskLocalStateStoreImpl", level, f"^{words} ", rf"(?P<checkpoint>\d+) in subtask {_SUBTASK}", "", writer)
      for kind, level, words, writer in (
          ("local-stored", "DEBUG", "Stored local state for checkpoint", "TaskLocalStateStoreImpl.storeLocalState"),
          ("local-confirmed", "DEBUG", "Received confirmation for checkpoint",
           "TaskLocalStateStoreImpl.confirmCheckpoint: prunes the older copies"),
          ("local-aborted", "DEBUG", "Received abort information for checkpoint", "TaskLocalStateStoreImpl.abortCheckpoint"),
          ("local-found", "INFO", "Found registered local state for checkpoint",
           "TaskLocalStateStoreImpl.retrieveLocalState: a local copy of the restored checkpoint"),
          ("local-not-found", "INFO", "Did not find registered local state for checkpoint",
           "TaskLocalStateStoreImpl.retrieveLocalState: no local copy"))),
    _row("local-discarded", "TaskLocalStateStoreImpl", "DEBUG", "^Discarding local task state snapshot .* of checkpoint ",
         rf"(?P<checkpoint>\d+) for subtask {_SUBTASK}", r"\.$",
         "TaskLocalStateStoreImpl.discardLocalStateForCheckpoint (\"Discarding local task state snapshot ...\")"),
    _row("local-restore-attempt", "BackendRestorerProcedure", "DEBUG", r"^Creating keyed state backend for \w+?_",
         r"(?P<vertex>[0-9a-f]{32})_\((?P<index>\d+)/\d+\) and restoring with state from alternative \((?P<k>\d+)/(?P<m>\d+)\)",
         "", "BackendRestorerProcedure.createAndRestore: the alternative a keyed restore reads"),
    _row("local-restore-failed", "BackendRestorerProcedure", "WARN", r"^Exception while restoring keyed state backend for \w+?_",
         r"(?P<vertex>[0-9a-f]{32})_\((?P<index>\d+)/\d+\) from alternative \((?P<k>\d+)/(?P<m>\d+)\)", "",
         "BackendRestorerProcedure.createAndRestore: an alternative failed, the next is tried"),
    _row("local-fault-damaged", "LocalRecovery", "INFO", "^flipcheck fault damage-local-copy: deleted ",
         r"\d+ files of the local copy of checkpoint (?P<checkpoint>\d+) of subtask \((?P<vertex>\w+) - (?P<subtask>\d+)\) "
         r"under allocation id (?P<slot>\w+)", "",
         "flipcheck's LocalRecovery.damageLocalCopies (--damage-local-copy), not Flink"),
    _row("local-fault-taskmanager", "LocalRecovery", "INFO", "^flipcheck fault lose-taskmanager: terminating TaskManager ",
         r"(?P<tm>\S+)", " ", "flipcheck's LocalRecovery.loseTaskManagerOf (--lose-taskmanager), not Flink"),
)
for _pattern in LOCAL_RECOVERY_PATTERNS:
    add_pattern(_pattern)
# Lines written only when local recovery is on: a log without them did not exercise the design
# (the slot and restore lines appear in every run).
_DESIGN_KINDS = ("local-stored", "local-found", "local-not-found", "local-fault-damaged", "local-fault-taskmanager")


def _observation(e: LogEvent) -> tuple:
    g = _FIELDS[e.kind].fullmatch(e.detail).groupdict()
    kind = e.kind.removeprefix("local-")
    if kind == "deploy":
        return ("deploy", g["vertex"], int(g["index"]) - 1, int(g["attempt"]), g["slot"], g["tm"], int(g["parallelism"]))
    if kind in ("store-created", "store-reused"):
        return (kind, g["vertex"], int(g["subtask"]), g["slot"])
    if kind == "released":
        return ("released", g["slot"])
    if kind in ("stored", "confirmed", "aborted", "discarded"):
        return (kind, g["vertex"], int(g["subtask"]), int(g["checkpoint"]))
    if kind in ("found", "not-found"):
        return ("retrieved", g["vertex"], int(g["subtask"]), int(g["checkpoint"]), kind == "found")
    if kind in ("restore-attempt", "restore-failed"):
        return (kind, g["vertex"], int(g["index"]) - 1, int(g["k"]), int(g["m"]))
    if kind == "fault-damaged":
        return ("damaged", g["vertex"], int(g["subtask"]), int(g["checkpoint"]), g["slot"])
    return ("taskmanager-lost", g["tm"])


def observations_of(reading: LogReading) -> list[tuple[tuple, LogEvent]]:
    """The local-recovery observations of a log reading, each with the event it came from."""
    return [(_observation(e), e) for e in reading.events if e.kind in _FIELDS]


def _names(observed: list) -> dict[str, str]:
    """Flink job vertex id -> the task name its deployment lines give."""
    return {o[1]: _FIELDS["local-deploy"].fullmatch(e.detail).group("name") for o, e in observed if o[0] == "deploy"}


def _readable(text: str, names: dict) -> str:
    for vertex, name in names.items():
        text = text.replace(vertex, name)
    return text


def _keyed_check(run: "RunDirectory | None") -> Check:
    """Each key's committed ids are exactly its block's ids: its count was right after every restore."""
    if run is None:
        return Check("keyed-state", True, "not checked: no flipcheck flink run directory")
    from flipcheck.flink.engine import committed_records

    try:
        spec = json.loads((run.path / "spec.json").read_text())
        keyed = [v["id"] for v in spec["vertices"] if v.get("keyed_state")]
        sources = [(int(v["first_record"]), int(v["records"]), int(v["parallelism"]))
                   for v in spec["vertices"] if v["role"] == "source"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        return Check("keyed-state", False, f"spec.json unreadable: {error}")
    if not keyed:
        return Check("keyed-state", True, "not checked: no keyed_state vertex")
    expected: dict[int, list] = {}
    for first, records, parallelism in sources:
        for record in range(first, first + records * parallelism):
            expected.setdefault(record // KEY_BLOCK, []).append(record)
    committed: dict[int, list] = {}
    for record in committed_records(run.path):
        committed.setdefault(record // KEY_BLOCK, []).append(record)
    wrong = [key for key in sorted(set(expected) | set(committed))
             if sorted(committed.get(key, [])) != sorted(expected.get(key, []))]
    if wrong:
        key = wrong[0]
        return Check("keyed-state", False, f"{len(wrong)} of {len(expected)} keys were counted wrong after a restore: "
                                           f"key {key} committed {sorted(committed.get(key, []))}, expected "
                                           f"{sorted(expected.get(key, []))}")
    return Check("keyed-state", True, f"all {len(expected)} keys of {', '.join(keyed)} counted exactly once per record "
                                      "across the restores (committed ids = each key's block)")


def conform_local_recovery(reading: LogReading, run: "RunDirectory | None") -> DesignConformance | None:
    """Task-local recovery's verdict on the run ``reading`` shows (None: the logs hold no line
    written only with local recovery on)."""
    observed = observations_of(reading)
    if not any(e.kind in _DESIGN_KINDS for _, e in observed):
        return None
    names = _names(observed)
    verdict = validate([o for o, _ in observed])
    first = None
    if not verdict.conforms:
        _, e = observed[verdict.first_unexplained] if verdict.first_unexplained is not None else observed[-1]
        first = {"file": e.file, "line": e.line, "event": _readable(f"{e.kind} {e.detail}", names),
                 "why": _readable(verdict.why, names)}
    local = [r for r in verdict.restores if r.local]
    described = "; ".join(f"{_readable(r.vertex, names)}[{r.subtask}] checkpoint {r.checkpoint} "
                          f"{'local copy' if r.local else 'primary'}" for r in verdict.restores)
    checks = [Check("local-recovery-model", verdict.conforms,
                    f"{verdict.explained} of {len(observed)} observations explained by a behaviour of the local-recovery "
                    f"model ({verdict.states} states); keyed restores: {len(local)} from the local copy, "
                    f"{len(verdict.restores) - len(local)} from the primary" + (f" ({described})" if described else "")),
              _keyed_check(run)]
    restored = {(o[1], o[2], e.line) for o, e in observed if o[0] == "restore-attempt" and o[3] == 1}
    if run is not None and _fault_fired(run) and not restored:
        checks.append(Check("restored", False, "the fault fired but no keyed state was restored from a checkpoint "
                                               "(it struck before the first completed checkpoint)"))
    else:
        checks.append(Check("restored", True, f"{len(restored)} keyed restores from a checkpoint logged"
                            if restored else "no keyed restore logged, and no fault fired"))
    return DesignConformance(DESIGN, all(c.ok for c in checks), len(observed), first, checks)


def _fault_fired(run: "RunDirectory") -> bool:
    try:
        return bool(json.loads((run.path / "run.json").read_text()).get("failure_injected"))
    except (OSError, ValueError, AttributeError):
        return False

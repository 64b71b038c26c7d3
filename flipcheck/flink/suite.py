"""The conformance suite: real Flink jobs that must conform, and their logs altered so they must not.

:data:`CONFORMANCE_SUITE` lists the jobs (graphs under ``examples/graphs/flink/``): a chain, a
diamond, a join of two sources of different lengths, union list state, both exactly-once sink
kinds, every checkpointing mode, with and without a failover, FLIP-147 on and off. :func:`run_case`
runs one on real Flink (:func:`flipcheck.flink.engine.run_graph`) and validates it
(:func:`flipcheck.flink.conform.conform_files`) against its protocol: ``flip-147``, or
``pre-flip-147`` for a run with FLIP-147 off, whose two-phase-commit sinks then lose their last
transaction (``expect_loss``: the end-of-job loss FLIP-147 was written to remove).

:data:`ALTERATIONS` turn a run directory into a copy that shows a protocol violation; each must
not conform:

* ``finished-before-final-checkpoint``: a source's switch to FINISHED moved up to just after the
  first checkpoint's trigger, before any checkpoint completed;
* ``completed-without-acknowledgement``: one acknowledgement of a completed checkpoint deleted;
* ``committed-twice``: one committed record written a second time;
* ``completed-never-triggered``: a line "Completed checkpoint 49" (an id never triggered) added
  after the last completion: no search is needed to reject it;
* ``late-ack-deleted``: the last acknowledgement of the last completed checkpoint deleted: a
  violation at the log's end, which must be rejected as fast as the log is accepted.

Example
-------
>>> [case.name for case in CONFORMANCE_SUITE][:3]
['chain-aligned', 'chain-unaligned', 'chain-at-least-once']
>>> len(CONFORMANCE_SUITE) >= 12
True
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Callable, NamedTuple

from flipcheck.data import example_graphs

__all__ = ["FlinkCase", "CONFORMANCE_SUITE", "GRAPHS", "ALTERATIONS", "DESIGN_ALTERATIONS", "case_named", "run_case",
           "alter_run"]

GRAPHS = example_graphs() / "flink"


class FlinkCase(NamedTuple):
    name: str
    graph: str                 # a file of examples/graphs/flink/
    options: dict              # flipcheck.flink.engine.run_graph's options
    protocol: str = "flip-147"
    expect_loss: bool = False  # FLIP-147 off: the committed output misses the last transaction

    def describe(self) -> str:
        parts = [f"{self.graph} {self.options.get('mode', 'aligned')}"]
        if "fail" in self.options:
            fail = self.options["fail"]
            parts.append(f"failover at {fail[0]}:{fail[1]}@{fail[2]}")
        if self.protocol != "flip-147":
            parts.append(f"FLIP-147 off, validated as {self.protocol}")
        return ", ".join(parts)


def _case(name: str, graph: str, protocol: str = "flip-147", **options) -> FlinkCase:
    return FlinkCase(name, graph, options, protocol, expect_loss=protocol == "pre-flip-147")


CONFORMANCE_SUITE = (
    _case("chain-aligned", "chain.json"),
    _case("chain-unaligned", "chain.json", mode="unaligned"),
    _case("chain-at-least-once", "chain.json", mode="at-least-once"),
    _case("chain-unaligned-failover", "chain.json", mode="unaligned", fail=("map", 1, 15)),
    _case("diamond-aligned", "diamond.json"),
    _case("diamond-unaligned", "diamond.json", mode="unaligned"),
    _case("join-aligned", "join.json"),
    _case("join-failover", "join.json", fail=("join", 0, 20)),
    _case("union-state", "union-state.json"),
    _case("union-state-failover", "union-state.json", fail=("counter", 1, 10)),
    _case("sink-v2-aligned", "sink-v2.json"),
    _case("sink-v2-at-least-once", "sink-v2.json", mode="at-least-once"),
    _case("chain-flip147-off", "chain.json", "pre-flip-147", checkpoints_after_tasks_finished=False),
    _case("join-flip147-off", "join.json", "pre-flip-147", checkpoints_after_tasks_finished=False),
)


def case_named(name: str) -> FlinkCase:
    for case in CONFORMANCE_SUITE:
        if case.name == name:
            return case
    raise KeyError(f"no conformance case {name!r} (known: {', '.join(c.name for c in CONFORMANCE_SUITE)})")


def run_case(case: FlinkCase, out: Path):
    """Run ``case`` on real Flink into ``out`` and validate it: ``(RunResult, Conformance)``."""
    from flipcheck.flink.conform import conform_files
    from flipcheck.flink.engine import FailAt, run_graph
    from flipcheck.model.graph_json import load_graph

    options = dict(case.options)
    if "fail" in options:
        options["fail"] = FailAt(*options["fail"])
    result = run_graph(load_graph(str(GRAPHS / case.graph)), Path(out), **options)
    return result, conform_files(str(Path(out) / "plan.json"), [str(Path(out) / "flink.log")], protocol=case.protocol)


# ----------------------------------------------------------------------------------------------
# Alterations: each returns the altered log lines (or changes the copied output) and says what it did

_TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")


def _finished_before_final_checkpoint(lines: list[str], folder: Path) -> str:
    trigger = next(i for i, line in enumerate(lines) if "CheckpointCoordinator" in line and "Triggering checkpoint 1 " in line)
    moved = next(i for i, line in enumerate(lines)
                 if " org.apache.flink.runtime.taskmanager.Task " in line and "Source: " in line
                 and line.rstrip().endswith("switched from RUNNING to FINISHED."))
    line = lines.pop(moved)
    # Keep the file's time order honest: the moved line takes the trigger's timestamp.
    lines.insert(trigger + 1, _TIME.sub(lines[trigger][:24], line, count=1))
    return f"line {moved + 1} (a source's switch to FINISHED) moved to just after the trigger of checkpoint 1"


def _completed_without_acknowledgement(lines: list[str], folder: Path) -> str:
    completed = {m.group(1) for line in lines for m in [re.search(r"Completed checkpoint (\d+) for job", line)] if m}
    for i, line in enumerate(lines):
        match = re.search(r"Received acknowledge message for checkpoint (\d+) from task", line)
        if match and match.group(1) in completed:
            del lines[i]
            return f"line {i + 1} (an acknowledgement of completed checkpoint {match.group(1)}) deleted"
    raise ValueError("the log shows no acknowledgement of a completed checkpoint")


def _committed_twice(lines: list[str], folder: Path) -> str:
    for path in sorted(folder.glob("output/*/committed/*")):
        records = path.read_text().split()
        if records:
            path.write_text(path.read_text() + records[0] + "\n")
            return f"record {records[0]} written a second time into {path.relative_to(folder)}"
    raise ValueError("the run committed nothing")


_COMPLETED = re.compile(r"Completed checkpoint (\d+) for job")


def _completed_never_triggered(lines: list[str], folder: Path) -> str:
    last = max(i for i, line in enumerate(lines) if _COMPLETED.search(line))
    # 49: past any id the stored runs trigger, as in issue 23's measurement.
    lines.insert(last + 1, _COMPLETED.sub("Completed checkpoint 49 for job", lines[last], count=1))
    return f"line {last + 2} (\"Completed checkpoint 49\", an id never triggered) added after the last completion"


def _late_ack_deleted(lines: list[str], folder: Path) -> str:
    last = [m.group(1) for line in lines for m in [_COMPLETED.search(line)] if m][-1]
    acks = [i for i, line in enumerate(lines) if f"Received acknowledge message for checkpoint {last} from task" in line]
    if not acks:
        raise ValueError("the log shows no acknowledgement of its last completed checkpoint")
    del lines[acks[-1]]
    return f"line {acks[-1] + 1} (the last acknowledgement of the last completed checkpoint {last}) deleted"


ALTERATIONS: dict[str, Callable[[list, Path], str]] = {
    "finished-before-final-checkpoint": _finished_before_final_checkpoint,
    "completed-without-acknowledgement": _completed_without_acknowledgement,
    "committed-twice": _committed_twice,
    "completed-never-triggered": _completed_never_triggered,
    "late-ack-deleted": _late_ack_deleted,
}


# Split assignment (flipcheck/flink/conform_split_assignment.py): a run of a source with
# "splits", altered so that its split history is no behaviour of model/split_assignment.py.
_ASSIGNED = re.compile(r"flipcheck splits (.+?): assigned split (\d+) to subtask (\d+)")


def _split_assigned_twice(lines: list[str], folder: Path) -> str:
    assigned = [(i, m) for i, line in enumerate(lines) for m in [_ASSIGNED.search(line)] if m]
    (_, first), (i, second) = assigned[0], assigned[-1]
    lines[i] = lines[i].replace(f"assigned split {second.group(2)} ", f"assigned split {first.group(2)} ")
    return f"line {i + 1}: the last assignment hands out split {first.group(2)} again, the first split assigned"


def _drop_first_listed(lines: list[str], listing: str, what: str) -> str:
    """The first split listed on the first line where ``listing`` (a regex ending where a
    non-empty ``[...]`` list begins) matches, dropped from that list."""
    for i, line in enumerate(lines):
        match = re.search(rf"({listing})\[(\d+)(?:, )?([\d, ]*)\]", line)
        if match:
            lines[i] = line.replace(match.group(0), f"{match.group(1)}[{match.group(3)}]")
            return f"line {i + 1}: split {match.group(2)} left out of {what}"
    raise ValueError(f"the log shows no line listing a split in {what}")


def _split_add_back_dropped(lines: list[str], folder: Path) -> str:
    return _drop_first_listed(lines, r"flipcheck splits .+?: splits ", "the splits a reset gave back")


def _split_snapshot_missing_split(lines: list[str], folder: Path) -> str:
    return _drop_first_listed(lines, r"subtask \d+ snapshot for checkpoint \d+, splits ", "a reader's snapshot")


def _split_reset_to_older_checkpoint(lines: list[str], folder: Path) -> str:
    for i, line in enumerate(lines):
        match = re.search(r"Recovering subtask (\d+) to checkpoint (\d+) for source", line)
        if match and int(match.group(2)) > 1:
            older = int(match.group(2)) - 1
            lines[i] = line.replace(f"to checkpoint {match.group(2)} for", f"to checkpoint {older} for")
            return f"line {i + 1}: subtask {match.group(1)} reset to checkpoint {older}, not the latest completed"
    raise ValueError("the log shows no subtask reset to a checkpoint after the first")


def _split_dropped_other_split(lines: list[str], folder: Path) -> str:
    for i, line in enumerate(lines):
        match = re.search(r"dropped the event carrying splits \[(\d+)\]", line)
        if match:
            other = int(match.group(1)) + 1
            lines[i] = line.replace(match.group(0), f"dropped the event carrying splits [{other}]")
            return f"line {i + 1}: the dropped RPC carries split {other}, not split {match.group(1)}"
    raise ValueError("the log shows no dropped RPC")


DESIGN_ALTERATIONS: dict[str, dict[str, Callable[[list, Path], str]]] = {
    "split-assignment": {
        "split-dropped-other-split": _split_dropped_other_split,
        "split-assigned-twice": _split_assigned_twice,
        "split-add-back-dropped": _split_add_back_dropped,
        "split-snapshot-missing-split": _split_snapshot_missing_split,
        "split-reset-to-older-checkpoint": _split_reset_to_older_checkpoint,
    },
}


def alter_run(run: Path, alteration: str, out: Path) -> str:
    """Copy the run directory ``run`` to ``out`` with ``alteration`` applied (the protocol's
    :data:`ALTERATIONS` or a design's :data:`DESIGN_ALTERATIONS`); what was changed."""
    table = dict(ALTERATIONS)
    for alterations in DESIGN_ALTERATIONS.values():
        table.update(alterations)
    shutil.copytree(run, out, dirs_exist_ok=True)
    log = out / "flink.log"
    lines = log.read_text().splitlines(keepends=True)
    what = table[alteration](lines, out)
    log.write_text("".join(lines))
    return what

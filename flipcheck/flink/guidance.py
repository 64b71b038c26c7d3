"""Guidance: which faults the next real runs get, so that they reach targets no run covered yet
(issue 26, item 3; docs/coverage.md, "Campaigns").

A run's faults are a tuple of **fault specs** in ``flipcheck flink run``'s own syntax
(``"--fail map:1@12"``): what a person would type to replay the run. Guidance makes them three
ways:

* **from the model** (:func:`faults_for_path`): the model's shortest path to an uncovered target
  (:func:`~flipcheck.properties.protocol_abstraction.shortest_paths`) says which task fails (its
  F0 step, ``("fail", t)``) and at which moment of the protocol (no checkpoint yet, the first one
  pending, one completed, its input ended). :data:`FAULT_TEMPLATES` maps each moment to fault
  templates, best first; a template of a fault kind the job builder lacks is skipped, so a new
  kind plugs in as one more row;
* **by mutation** (:func:`mutate`, ModelFuzz): the faults of a run that covered something new,
  changed a little (another record, subtask or vertex; one fault more or less);
* **at random** (:func:`random_faults`): the baseline guidance is compared with.

A run's specs may also shape its workload: ``--records VERTEX=1`` (:data:`EARLY_END`) makes a
source end its input at once, likely before Flink's first checkpoint, as a model path whose source
ends before the first trigger needs (most of the targets' shortest paths do: the model job has
no records, docs/coverage.md). It is not a fault: :data:`MAX_FAULTS` does not count it.

A moment maps to a record count, because ``--fail`` strikes at a record: sources emit one record
every ``record_delay_ms`` (10 ms) and Flink's timer triggers every ``interval_ms`` (100 ms), so a
checkpoint interval is about ten records (flipcheck/flink/engine.py ``RECORD_DELAY_MS``,
``DEFAULT_INTERVAL_MS``). The mapping is a heuristic, not a promise: what a run reached is
measured from its log (coverage), never assumed from its faults.

>>> from flipcheck.model.graph_json import parse_graph
>>> graph = parse_graph({"vertices": [{"id": "src", "parallelism": 2, "records": 30},
...                                       {"id": "sink", "parallelism": 1}],
...                          "edges": [{"source": "src", "target": "sink", "pattern": "ALL_TO_ALL"}]})
>>> fault_for_moment(graph, "src", 1, "checkpoint-pending")
'--fault snapshot-throw:src:1@1'
>>> fault_for_moment(graph, "src", 1, "checkpoint-pending", kinds=frozenset())   # --fail only
'--fail src:1@10'
>>> from flipcheck.generators.choices import SeededChooser
>>> mutate(graph, ("--fail src:1@10",), SeededChooser.for_case("doc", 0)) != ("--fail src:1@10",)
True
>>> fault_options(("--fail sink:0@5",))["fail"]
FailAt(vertex='sink', subtask=0, record=5, how='task')
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from flipcheck.errors import UsageError
from flipcheck.generators.choices import choice

__all__ = ["MOMENTS", "FaultTemplate", "FAULT_TEMPLATES", "MAX_FAULTS", "moment_of", "fault_for_moment",
           "faults_for_path", "GLOBAL_FAILURE", "mutate", "random_faults", "fault_options", "records_per_subtask", "fault_kinds",
           "FAIL_SPEC", "GLOBAL_FAILURE_AT_START", "EARLY_END", "RECORDS_OPTION", "shaped_graph", "faults_only"]

# A run's faults: at most three (issue 26); `--fail` takes one, the job builder's --fault more.
MAX_FAULTS = 3
_RECORDS_PER_INTERVAL = 10   # DEFAULT_INTERVAL_MS / RECORD_DELAY_MS

# The moments of the protocol a failing task's F0 step can be at, read from the abstract state
# before the step (moment_of).
MOMENTS = ("start", "checkpoint-pending", "after-checkpoint", "after-checkpoint-pending", "after-end-of-input")


class FaultTemplate(NamedTuple):
    """One way to make a task fail at a moment. ``spec`` is formatted with ``vertex``,
    ``subtask`` and ``record``; ``kind`` names the ``--fault`` kind it needs (None: ``--fail``,
    which every job builder has)."""

    spec: str
    kind: str | None = None


# Best first; a row whose kind the job builder lacks (fault_kinds) is skipped.
FAULT_TEMPLATES: dict = {
    "start": (FaultTemplate("--fail {vertex}:{subtask}@1"),),
    "checkpoint-pending": (FaultTemplate("--fault snapshot-throw:{vertex}:{subtask}@1", "snapshot-throw"),
                           FaultTemplate("--fail {vertex}:{subtask}@{record}")),
    "after-checkpoint": (FaultTemplate("--fault notify-throw:{vertex}:{subtask}@1", "notify-throw"),
                         FaultTemplate("--fail {vertex}:{subtask}@{record}")),
    "after-checkpoint-pending": (FaultTemplate("--fault snapshot-throw:{vertex}:{subtask}@2", "snapshot-throw"),
                                 FaultTemplate("--fail {vertex}:{subtask}@{record}")),
    "after-end-of-input": (FaultTemplate("--fault after-end-of-input-throw:{vertex}:{subtask}",
                                         "after-end-of-input-throw"),
                           FaultTemplate("--fail {vertex}:{subtask}@{record}")),
}

# The record --fail strikes at for a moment, in checkpoint intervals (None: the subtask's last).
_INTERVALS = {"start": None, "checkpoint-pending": 1.0, "after-checkpoint": 2.5, "after-checkpoint-pending": 2.0,
              "after-end-of-input": None}


def fault_kinds() -> frozenset:
    """The ``--fault`` kinds the job builder knows (``flipcheck.flink.faults.FAULT_KINDS`` once
    it exists; none before)."""
    try:
        from flipcheck.flink import faults  # type: ignore[attr-defined]
    except ImportError:
        return frozenset()
    return frozenset(getattr(faults, "FAULT_KINDS", ()))


def records_per_subtask(graph, vertex: str) -> int:
    """The records each subtask of ``vertex`` surely handles: a source's own count; an operator's
    the fewest any source upstream sends each of its subtasks (a lower bound, so --fail is
    reached: a subtask of an all-to-all edge may see more)."""
    if not graph.inputs(vertex):
        return int(graph.vertex(vertex).extra.get("records", 0) or 0)
    upstream = [records_per_subtask(graph, e.source) * graph.parallelism(e.source) // graph.parallelism(vertex)
                for e in graph.inputs(vertex)]
    return max(1, min(upstream))


def moment_of(source_state, task: int) -> str:
    """The moment of a failing task's F0 step, from the abstract state before it."""
    task_state = source_state.tasks[task]
    if task_state.phase != "RUNNING" or task_state.final != "none":
        return "after-end-of-input"
    if source_state.completed:
        return "after-checkpoint-pending" if source_state.pending else "after-checkpoint"
    return "checkpoint-pending" if source_state.pending else "start"


def fault_for_moment(graph, vertex: str, subtask: int, moment: str, kinds: frozenset | None = None) -> str:
    """The first template of ``moment`` the job builder can run, for that subtask: a ``--fault``
    kind of ``kinds`` (default: every kind flipcheck.flink.faults knows) with a hook in that
    vertex, else ``--fail`` at a record of that moment."""
    kinds = fault_kinds() if kinds is None else kinds
    last = max(1, records_per_subtask(graph, vertex))
    intervals = _INTERVALS[moment]
    record = last if intervals is None else int(intervals * _RECORDS_PER_INTERVAL)
    record = max(1, min(record, last))
    for template in FAULT_TEMPLATES[moment]:
        spec = template.spec.format(vertex=vertex, subtask=subtask, record=record)
        if template.kind is None or template.kind in kinds and _runs_on(graph, spec):
            return spec
    raise KeyError(moment)


def _runs_on(graph, spec: str) -> bool:
    """Whether the job builder can strike ``spec`` in ``graph`` (a kind with a hook in that
    vertex's role: :func:`flipcheck.flink.faults.check_faults`, through ``job_spec``)."""
    from pathlib import Path

    from flipcheck.errors import UsageError
    from flipcheck.flink.engine import job_spec

    try:
        job_spec(graph, out=Path("."), **fault_options((spec,)))
    except UsageError:
        return False
    return True


def faults_for_path(graph, tasks: Sequence[tuple], states: Sequence, labels: Sequence[tuple],
                    kinds: frozenset | None = None) -> tuple:
    """The faults that steer a run along a model path: one per F0 step (``("fail", t)``) of
    ``labels``, at the moment its abstract state before it (``states[i]``) shows, and
    :data:`GLOBAL_FAILURE` for a failover with no task failed (:data:`GLOBAL_FAILURE_AT_START`
    before the path's first trigger); before them, :data:`EARLY_END` for
    each source vertex one of whose tasks ends its input before the path's first trigger, unless
    a ``--fail`` would then strike earlier than its moment. ``tasks`` maps a model task to
    ``(vertex, subtask)`` of ``graph``. Empty: the path needs no fault (a fault-free run, or a
    mutation, may take it)."""
    kinds = fault_kinds() if kinds is None else kinds
    early = []
    for label in labels[:_first_trigger(labels)]:
        vertex = tasks[label[1]][0] if label[0] == "end-of-data" else None
        if vertex is not None and not graph.inputs(vertex) and EARLY_END.format(vertex=vertex) not in early:
            early.append(EARLY_END.format(vertex=vertex))
    faults = _path_faults(graph, tasks, states, labels, kinds)
    if early and _path_faults(shaped_graph(graph, early), tasks, states, labels, kinds) == faults:
        return tuple(early) + faults
    # A --fail at a record past the source's one would strike at its start, not at its moment:
    # the faults keep their moments, the sources their records.
    return faults


def _first_trigger(labels: Sequence[tuple]) -> int:
    """The index of the path's first trigger (its length when it has none)."""
    return next((i for i, label in enumerate(labels) if label[0] == "trigger"), len(labels))


def _path_faults(graph, tasks: Sequence[tuple], states: Sequence, labels: Sequence[tuple], kinds: frozenset) -> tuple:
    first_trigger = _first_trigger(labels)
    faults = []
    for i, (label, before) in enumerate(zip(labels, states)):
        if label[0] == "fail" and len(faults) < MAX_FAULTS:
            vertex, subtask = tasks[label[1]]
            faults.append(fault_for_moment(graph, vertex, subtask, moment_of(before, label[1]), kinds))
        elif label == ("failover",) and len(faults) < MAX_FAULTS and \
                not any(task.phase == "FAILED" for task in before.tasks):
            if i < first_trigger and GLOBAL_FAILURE_AT_START.partition(" ")[2] in kinds:
                faults.append(GLOBAL_FAILURE_AT_START)
            elif "global-failure" in kinds:
                faults.append(GLOBAL_FAILURE.format(checkpoint=2 if before.completed else 1))
    return _runnable(tuple(faults))


# A source that ends its input at once, likely before Flink's first checkpoint (its one record
# takes RECORD_DELAY_MS; Flink's first trigger comes after a random delay of up to an interval,
# once every task runs; a busy machine may trigger first): flink run's --records for that vertex.
EARLY_END = "--records {vertex}=1"
RECORDS_OPTION = re.compile(r"--records (?P<value>\S+)")


def _records_of(faults: Sequence[str]) -> dict:
    """``{vertex: n}`` of the ``--records VERTEX=N`` specs among ``faults``; UsageError for one
    that names no vertex or no count."""
    from flipcheck.flink.engine import parse_records

    counts: dict = {}
    for spec in faults:
        found = RECORDS_OPTION.fullmatch(spec)
        if found is None:
            continue
        try:
            vertex, count = parse_records(found["value"])
        except ValueError as error:
            raise UsageError(f"faults: {error}") from None
        if vertex is None:
            raise UsageError(f"faults: {spec!r}: a campaign's --records names its source (--records VERTEX=N)")
        counts[vertex] = count
    return counts


def shaped_graph(graph, faults: Sequence[str]):
    """``graph`` with the record counts of ``faults``' ``--records VERTEX=N`` specs (the graph
    the run's faults are chosen and checked against: a ``--fail`` must reach its record).

    >>> from flipcheck.model.graph_json import parse_graph
    >>> graph = parse_graph({"vertices": [{"id": "src", "parallelism": 1, "records": 30},
    ...                                   {"id": "sink", "parallelism": 1}],
    ...                      "edges": [{"source": "src", "target": "sink", "pattern": "ALL_TO_ALL"}]})
    >>> records_per_subtask(shaped_graph(graph, ("--records src=1", "--fail sink:0@1")), "sink")
    1
    """
    from flipcheck.flink.engine import with_source_records

    counts = _records_of(faults)
    return with_source_records(graph, counts) if counts else graph


def faults_only(faults: Sequence[str]) -> tuple:
    """``faults`` without the specs that shape the workload (``--records``): the faults proper,
    which :data:`MAX_FAULTS` bounds."""
    return tuple(f for f in faults if RECORDS_OPTION.fullmatch(f) is None)


# F1 on its own (a failover with no task failed: the JobManager's own failure, divergence 22):
# the enumerator fails the job while checkpoint 1 is pending (none completed yet), or 2 (after
# the first completed), flipcheck.flink.faults.
GLOBAL_FAILURE = "--fault global-failure@{checkpoint}"
# ... and before the path's first trigger: the enumerator fails the job as it starts.
GLOBAL_FAILURE_AT_START = "--fault global-failure-at-start"


def _runnable(faults: tuple) -> tuple:
    """At most one ``--fail`` (the job builder's one fail point), one ``--fault`` of a kind per
    subtask (flipcheck.flink.faults.check_faults), and :data:`MAX_FAULTS` in all; the
    ``--records`` specs first, one per source."""
    kept, places = [], set()
    shapes: dict = {}   # source vertex -> its --records spec, the first one kept
    for spec in faults:
        found = RECORDS_OPTION.fullmatch(spec)
        if found is not None:
            shapes.setdefault(found["value"].partition("=")[0], spec)
    for fault in faults_only(faults):
        place = ("fail",) if fault.startswith("--fail ") else tuple(fault.partition("@")[0].split(":")[:3])
        if place not in places:
            places.add(place)
            kept.append(fault)
    return tuple(shapes.values()) + tuple(kept[:MAX_FAULTS])


# A --fail fault as flipcheck flink run writes it (a campaign token encodes it from this).
FAIL_SPEC = re.compile(r"--fail (?P<vertex>.+):(?P<subtask>[0-9]+)@(?P<record>[0-9]+)")


def _random_fail(graph, chooser) -> str:
    vertex = choice(chooser, [v.id for v in graph.vertices])
    subtask = chooser.integer(0, graph.parallelism(vertex) - 1)
    return f"--fail {vertex}:{subtask}@{chooser.integer(1, max(1, records_per_subtask(graph, vertex)))}"


def random_faults(graph, chooser) -> tuple:
    """The random baseline, from guidance's vocabulary: a uniformly chosen source ends early
    (:data:`EARLY_END`, a third of the runs), then no fault (a third) or one ``--fail`` at a
    uniformly chosen subtask and record it surely reaches."""
    shape = ()
    if chooser.integer(0, 2) == 0:
        shape = (EARLY_END.format(vertex=choice(chooser, [v.id for v in graph.vertices if not graph.inputs(v.id)])),)
    if chooser.integer(0, 2) == 0:
        return shape
    return shape + (_random_fail(shaped_graph(graph, shape), chooser),)


def mutate(graph, faults: Sequence[str], chooser) -> tuple:
    """ModelFuzz's step: ``faults`` changed once (another record near the old one, another
    subtask or vertex, a fault added or removed); never the same faults back when another is
    possible."""
    faults = tuple(faults)
    graph = shaped_graph(graph, faults)   # a source cut short stays so: its records bound the --fail
    for _ in range(8):
        found = _mutated_once(graph, faults, chooser)
        if found != faults:
            return found
    return found


def _mutated_once(graph, faults: tuple, chooser) -> tuple:
    fails = [i for i, f in enumerate(faults) if FAIL_SPEC.fullmatch(f)]
    if not fails:
        return _runnable(faults + (_random_fail(graph, chooser),))
    i = choice(chooser, fails)
    found = FAIL_SPEC.fullmatch(faults[i])
    vertex, subtask, record = found["vertex"], int(found["subtask"]), int(found["record"])
    how = chooser.integer(0, 3)
    if how == 0:       # another record, within a checkpoint interval either side
        last = max(1, records_per_subtask(graph, vertex))
        record = max(1, min(last, record + chooser.integer(-_RECORDS_PER_INTERVAL, _RECORDS_PER_INTERVAL)))
    elif how == 1:     # another subtask of the vertex
        subtask = chooser.integer(0, graph.parallelism(vertex) - 1)
    elif how == 2:     # another vertex, the record kept where it is reached
        vertex = choice(chooser, [v.id for v in graph.vertices])
        subtask = min(subtask, graph.parallelism(vertex) - 1)
        record = max(1, min(record, records_per_subtask(graph, vertex)))
    else:              # no fault at all: what the others owe to it
        return faults[:i] + faults[i + 1:]
    return faults[:i] + (f"--fail {vertex}:{subtask}@{record}",) + faults[i + 1:]


def fault_options(faults: Sequence[str]) -> dict:
    """``run_graph``'s options for fault specs; UsageError naming the spec for one it cannot run
    (``job_spec`` then checks that the vertex, subtask and record exist)."""
    from flipcheck.flink.engine import FailAt

    options: dict = {}
    records = _records_of(faults)
    if records:
        options["records"] = records
    for spec in faults_only(faults):
        found = FAIL_SPEC.fullmatch(spec)
        if found is not None and "fail" not in options and int(found["record"]) >= 1:
            options["fail"] = FailAt(found["vertex"], int(found["subtask"]), int(found["record"]))
        elif spec.startswith("--fault ") and fault_kinds():
            from flipcheck.flink import faults as registry  # type: ignore[attr-defined]

            options["points"] = options.get("points", ()) + (registry.parse_fault(spec.partition(" ")[2]),)
        else:
            raise UsageError(f"faults: {spec!r} cannot run here (one --fail VERTEX:SUBTASK@RECORD per run, RECORD >= 1; "
                             "--fault needs flipcheck.flink.faults; --records VERTEX=N)")
    return options

"""Real Flink (1.14.0 to 2.3.x), started by flipcheck: a job graph run as a streaming job on a local MiniCluster.

:func:`run_graph` turns a flipcheck job graph into a job spec (:func:`job_spec`: which vertex is a
source, an operator or a sink, how each input is partitioned, which record ids each source subtask
emits), compiles the job builder ``flipcheck/flink/java/FlipcheckJob.java`` with the release's
adapters (:func:`adapters`) against the jars of a Flink release
(:func:`flipcheck.flink.releases.resolve_flink`: by default the ``apache-flink-libraries`` package
of the ``flink`` extra) on first use, and runs it in a JVM of its own. The JVM starts a MiniCluster whose every port is bound to 127.0.0.1, submits the job,
stores the REST plan, and waits for the job to end. Everything lands in the output directory:

* ``flink.log``: Flink's log in its default layout, DEBUG on the five checkpointing classes
  :mod:`flipcheck.flink.logs` reads (:data:`DEBUG_LOGGERS`), INFO elsewhere;
* ``plan.json``: ``GET /jobs/<id>/plan`` of the running job, byte for byte;
* ``output/<vertex>/committed/``: what the exactly-once sinks committed, one record id a line
  (``pending/`` holds transactions never committed: those of a failed attempt);
* ``run.json``: :func:`run_summary` (with the Flink version and where its jars came from);
* ``spec.json``, ``log4j2.properties``, ``jvm.out``: what the JVM was given and printed.

The compiled classes are cached under ``$XDG_CACHE_HOME/flipcheck`` (default ``~/.cache/flipcheck``)
in a directory named for the Flink version and the hash of the Java sources (and of the
flink-dist jar's name, size and time); a compile goes into a
temporary directory first and is renamed into place, so two processes may compile at once
(:func:`compile_classes`, which the component harnesses of :mod:`flipcheck.flink.component` use too).

Records follow the model (:class:`flipcheck.model.protocol.Job`, J1): every subtask of a source
emits ``records`` ids (the vertex's ``"records"``, or the default), numbered from 0 in the model's
task order, so the committed ids can be held against the model's record ids.

Example
-------
>>> adapters("1.14.6"), adapters("2.3.0")
(('flink1', 'sinkv1_1_14'), ('flink2', 'sink2', 'sinkv2_2_0'))
>>> flink_configuration({"interval_ms": 100, "mode": "aligned", "checkpoints_after_tasks_finished": True,
...                      "restart_attempts": 3}, "1.14.6")["execution.checkpointing.checkpoints-after-tasks-finish.enabled"]
'true'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Callable

from flipcheck.errors import UsageError
from flipcheck.flink.releases import FLINK_DISTRIBUTION, FlinkInstall, cache_root, dist_jar, parse_version, resolve_flink
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph, JobVertex
from flipcheck.system_tools import find_program

__all__ = [
    "FLINK_DISTRIBUTION",
    "FAULTS",
    "FlinkInstall",
    "resolve_flink",
    "JDK_PACKAGE",
    "DEBUG_LOGGERS",
    "MODES",
    "DEFAULT_RECORDS",
    "DEFAULT_INTERVAL_MS",
    "RECORD_DELAY_MS",
    "JOB_TIMEOUT_SECONDS",
    "RESTART_ATTEMPTS",
    "FailAt",
    "with_source_records",
    "parse_records",
    "source_records",
    "RECORDS_SPEC",
    "MAX_SOURCE_RECORDS",
    "FAIL_HOWS",
    "FAIL_OPTIONS",
    "BatchRun",
    "FlinkRunError",
    "RunTimes",
    "RunResult",
    "java_tools",
    "JVM_OPENS",
    "flink_lib",
    "cache_root",
    "adapters",
    "java_sources",
    "compile_classes",
    "compile_job",
    "flink_configuration",
    "roles",
    "job_spec",
    "log4j_properties",
    "LOG_LAYOUT",
    "HEAP",
    "committed_records",
    "run_summary",
    "run_graph",
    "reported_line",
    "designs_exercised",
]

JDK_PACKAGE = "default-jdk-headless"
JAVA_SOURCE = Path(__file__).with_name("java") / "FlipcheckJob.java"
FAULTS_SOURCE = JAVA_SOURCE.with_name("Faults.java")
LOCAL_RECOVERY_SOURCE = JAVA_SOURCE.with_name("LocalRecovery.java")
COMPAT = JAVA_SOURCE.parent / "compat"
# The adapters of compat/: (directory, first release, first release past it). One of each kind
# (Compat, SinkV2) is compiled with FlipcheckJob.java; the API each absorbs is in its header.
_ADAPTERS = (
    ("flink1", (1, 14, 0), (2, 0, 0)),        # RuntimeContext.getIndexOfThisSubtask()
    ("flink2", (2, 0, 0), None),              # RuntimeContext.getTaskInfo()
    ("sinkv1_1_14", (1, 14, 0), (1, 15, 0)),  # Sink V1 only
    ("sink2", (1, 15, 0), None),              # Sink V2's writer and committer
    ("sinkv2_1_15", (1, 15, 0), (2, 0, 0)),   # TwoPhaseCommittingSink
    ("sinkv2_2_0", (2, 0, 0), None),          # SupportsCommitter, WriterInitContext
)
# 2.0 moved the legacy SinkFunction classes, unchanged, into a package of their own; for older
# releases the builder is compiled from a copy whose imports name the old package.
_LEGACY_SINKS = ((2, 0, 0), "org.apache.flink.streaming.api.functions.sink.legacy.",
                 "org.apache.flink.streaming.api.functions.sink.")
# Configuration keys renamed across releases: (first release spelling it so, key), oldest first.
# The old spellings stay deprecated aliases, but each release gets its own.
_KEYS = {
    "unaligned": (((1, 14, 0), "execution.checkpointing.unaligned"),
                  ((1, 17, 0), "execution.checkpointing.unaligned.enabled")),
    "after_finish": (((1, 14, 0), "execution.checkpointing.checkpoints-after-tasks-finish.enabled"),
                     ((1, 20, 0), "execution.checkpointing.checkpoints-after-tasks-finish")),
    "restart": (((1, 14, 0), "restart-strategy"), ((1, 17, 0), "restart-strategy.type")),
    # Task-local recovery (--local-recovery): before 2.0 the keys 2.3 still reads as deprecated
    # fallbacks (CheckpointingOptions, StateRecoveryOptions).
    "from_local": (((1, 14, 0), "state.backend.local-recovery"), ((2, 0, 0), "execution.state-recovery.from-local")),
    "local_backup": (((1, 14, 0), "state.backend.local-recovery"),
                     ((2, 0, 0), "execution.checkpointing.local-backup.enabled")),
    "local_dirs": (((1, 14, 0), "taskmanager.state.local.root-dirs"),
                   ((2, 0, 0), "execution.checkpointing.local-backup.dirs")),
    "storage": (((1, 14, 0), "state.checkpoint-storage"), ((2, 0, 0), "execution.checkpointing.storage")),
    "checkpoint_dir": (((1, 14, 0), "state.checkpoints.dir"), ((2, 0, 0), "execution.checkpointing.dir")),
}
# Flink opens these JDK internals itself from 1.18 on (env.java.opts.all); older releases fail on
# JDK 17 without them (InaccessibleObjectException on java.lang.String.value), newer ignore repeats.
JVM_OPENS = tuple(f"--add-opens={module}=ALL-UNNAMED" for module in (
    "java.base/java.lang", "java.base/java.lang.reflect", "java.base/java.io", "java.base/java.math",
    "java.base/java.net", "java.base/java.nio", "java.base/java.text", "java.base/java.time",
    "java.base/java.util", "java.base/java.util.concurrent", "java.base/java.util.concurrent.atomic",
    "java.base/java.util.concurrent.locks", "java.base/sun.nio.ch", "java.base/sun.net.util",
    "java.rmi/sun.rmi.transport", "java.security.jgss/sun.security.krb5"))
MAIN_CLASS = "FlipcheckJob"
_COMPILED = f"{MAIN_CLASS}.class"  # the mark of a complete cache entry
# The loggers docs/conformance.md asks for at DEBUG: triggers per task, acknowledgements,
# barriers, notifications, task-side checkpoint steps.
DEBUG_LOGGERS = (
    "org.apache.flink.runtime.checkpoint.CheckpointCoordinator",
    "org.apache.flink.runtime.taskexecutor.TaskExecutor",
    "org.apache.flink.streaming.runtime.tasks.StreamTask",
    "org.apache.flink.streaming.runtime.io.checkpointing.SingleCheckpointBarrierHandler",
    "org.apache.flink.streaming.runtime.tasks.SubtaskCheckpointCoordinatorImpl",
    # Task-local recovery (docs/conformance.md): the local store's steps, which copy a restore read.
    "org.apache.flink.runtime.state.TaskLocalStateStoreImpl",
    "org.apache.flink.runtime.state.TaskExecutorLocalStateStoresManager",
    "org.apache.flink.streaming.api.operators.BackendRestorerProcedure",
)
MODES = ("aligned", "unaligned", "at-least-once")
DEFAULT_RECORDS = 50
DEFAULT_INTERVAL_MS = 100
# Sleep per source record (plus up to half as much seeded jitter): 50 records take about 0.6 s,
# several checkpoints at 100 ms, and a small job stays well under 15 s with the JVM's start.
RECORD_DELAY_MS = 10
JOB_TIMEOUT_SECONDS = 600
# Flink's fixed-delay restart strategy: enough for one --fail, few enough that a job failing at
# every attempt ends soon.
RESTART_ATTEMPTS = 3
HEAP = "-Xmx512m"
LOG_LAYOUT = "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n"


class FlinkRunError(Exception):
    """The engine could not run the job to its end (compile error, JVM crash, timeout, the job
    failed for good); the message is one line."""


@dataclass(frozen=True)
class FailAt:
    """``--fail VERTEX:SUBTASK@RECORD``: throw once when that subtask handles its RECORD-th record.
    ``how`` (:data:`FAIL_HOWS`): ``task`` throws; with local recovery, ``taskmanager`` loses the
    TaskManager the subtask runs on, ``damage-local-copy`` deletes the local copies, then throws."""

    vertex: str
    subtask: int
    record: int
    how: str = "task"


# FailAt.how: what strikes at the fail point (the last two in LocalRecovery.java), and the
# flink run option that asks for it.
FAIL_OPTIONS = MappingProxyType({"task": "--fail", "taskmanager": "--lose-taskmanager",
                                 "damage-local-copy": "--damage-local-copy"})
FAIL_HOWS = tuple(FAIL_OPTIONS)


@dataclass(frozen=True)
class RunTimes:
    """Wall-clock seconds of a run, measured from this process."""

    compile: float        # javac, 0 when the cache had the classes
    jvm_start: float      # launching the JVM until the MiniCluster is up
    job: float            # submission until the job ended
    total: float          # launching the JVM until it exited


@dataclass(frozen=True)
class RunResult:
    job_id: str
    status: str                   # Flink's JobStatus at the end: FINISHED, FAILED, ...
    cause: str | None             # the failure's message when the job did not finish
    checkpoints_completed: int
    records_committed: int
    records_expected: int         # records an exactly-once run commits (once per source-to-sink path)
    vertex_ids: dict              # flipcheck vertex -> Flink job vertex id
    failure_injected: bool
    times: RunTimes
    out: Path
    flink: FlinkInstall | None = None   # the release that ran it
    designs: tuple = ("protocol",)      # the designs the run exercised (run.json "designs"; conform validates each)
    faults: tuple = ()                  # the specs of the faults asked for (run.json "faults"; flipcheck.flink.faults)


# -- the installation -----------------------------------------------------------------------


def java_tools() -> tuple[str, str]:
    """``(java, javac)``: from ``$JAVA_HOME/bin`` when set, else found like any program;
    :class:`UsageError` naming the JDK package when either is missing."""
    home = os.environ.get("JAVA_HOME")
    found = []
    for tool in ("java", "javac"):
        path = None
        if home and os.access(os.path.join(home, "bin", tool), os.X_OK):
            path = os.path.join(home, "bin", tool)
        path = path or find_program(tool)
        if path is None:
            raise UsageError(f"{tool} is not installed: real Flink runs need a JDK 17 or later "
                             f"(apt-get install {JDK_PACKAGE}, or set JAVA_HOME)")
        found.append(path)
    return found[0], found[1]


def flink_lib() -> tuple[str, Path]:
    """``(Flink version, the directory of its jars)`` of the default release: the installed
    ``apache-flink-libraries`` (found through its package metadata, without importing pyflink)."""
    install = resolve_flink()
    return install.version, install.lib


def adapters(version: str) -> tuple[str, ...]:
    """The compat/ directories compiled with FlipcheckJob.java for ``version``."""
    release = parse_version(version)
    return tuple(name for name, first, past in _ADAPTERS if first <= release and (past is None or release < past))


def java_sources(version: str) -> list[Path]:
    return [JAVA_SOURCE, FAULTS_SOURCE, LOCAL_RECOVERY_SOURCE] + [path for name in adapters(version) for path in sorted((COMPAT / name).glob("*.java"))]


def _release_sources(sources: list[Path], version: str, scratch: Path) -> list[Path]:
    """``sources``, with the builder copied into ``scratch/src`` with the legacy sinks' old
    package for a release before 2.0 (the copy is removed with the scratch's other files)."""
    moved, new, old = _LEGACY_SINKS
    if parse_version(version) >= moved:
        return sources
    copy = scratch / "src" / JAVA_SOURCE.name
    copy.parent.mkdir()
    copy.write_text(JAVA_SOURCE.read_text(encoding="utf-8").replace(f"import {new}", f"import {old}"), encoding="utf-8")
    return [copy] + sources[1:]


def compile_classes(javac: str, version: str, lib: Path, sources: list[Path], mark: str,
                    prepare: Callable[[list[Path], Path], list[Path]] | None = None) -> tuple[Path, float]:
    """Compile ``sources`` against the jars in ``lib`` into the cache: ``(classes directory,
    seconds spent compiling)``, 0 seconds when the cache had them. ``mark`` is a class file (path
    under the classes directory) that only a complete compile leaves; ``prepare(sources, scratch)``
    may rewrite sources into ``scratch/src`` first (removed afterwards). Shared by the job builder
    and the component harnesses (:mod:`flipcheck.flink.component`)."""
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    jar = dist_jar(lib)
    if jar is not None:
        # A build of one's own (--flink-home) keeps its version while its jars change.
        stat = jar.stat()
        digest.update(f"{jar.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    key = f"flink-{version}-{digest.hexdigest()[:16]}"
    target = cache_root() / key
    if (target / mark).is_file():
        return target, 0.0
    started = time.perf_counter()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
    except OSError as error:
        raise UsageError(f"cannot write the compiled classes to {target.parent} ({error.strerror or error}): "
                         "set XDG_CACHE_HOME to a writable directory") from None
    try:
        compiled = prepare(sources, scratch) if prepare is not None else sources
        done = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-cp", str(lib / "*"), "-d", str(scratch)]
                              + [str(path) for path in compiled], capture_output=True, text=True)
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()
            raise FlinkRunError(f"javac could not compile {sources[0].name} against Flink {version}: "
                                f"{(errors or ['no output'])[0]}")
        shutil.rmtree(scratch / "src", ignore_errors=True)
        try:
            os.rename(scratch, target)
        except OSError:
            if not (target / mark).is_file():
                raise
            # Another process compiled the same source meanwhile: use its classes.
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target, time.perf_counter() - started


def compile_job(javac: str, version: str, lib: Path, extra: tuple = (), mark: str = _COMPILED) -> tuple[Path, float]:
    """The job builder's classes for ``version`` (:func:`compile_classes`), with the ``extra``
    sources (the job server's) whose class ``mark`` only a complete compile leaves."""
    return compile_classes(javac, version, lib, java_sources(version) + list(extra), mark,
                           lambda sources, scratch: _release_sources(sources, version, scratch))


# -- graph -> job spec ----------------------------------------------------------------------


def roles(graph: JobGraph) -> dict[str, str]:
    """Each vertex's part in the Flink job: ``source`` (no inputs), ``two_phase_commit_sink``,
    ``sink_v2``, ``discard`` (no outputs and no sink flag) or ``operator``."""
    found = {}
    for vertex in graph.vertices:
        if not graph.inputs(vertex.id):
            found[vertex.id] = "source"
        elif vertex.extra.get("two_phase_commit_sink"):
            found[vertex.id] = "two_phase_commit_sink"
        elif vertex.extra.get("sink_v2"):
            found[vertex.id] = "sink_v2"
        elif not graph.outputs(vertex.id):
            found[vertex.id] = "discard"
        else:
            found[vertex.id] = "operator"
    return found


def _partitioning(graph: JobGraph, role: str, edge) -> str:
    """forward / rescale for POINTWISE; hash where the target can be keyed (one input, or an
    operator with two ALL_TO_ALL inputs: a keyed co-map), rebalance for the other ALL_TO_ALL."""
    if edge.pattern != ALL_TO_ALL:
        same = graph.parallelism(edge.source) == graph.parallelism(edge.target)
        return "forward" if same else "rescale"
    inputs = graph.inputs(edge.target)
    if len(inputs) == 1 or (role == "operator" and len(inputs) == 2 and all(e.pattern == ALL_TO_ALL for e in inputs)):
        return "hash"
    return "rebalance"


MAX_SOURCE_RECORDS = 10_000
# `--records N` (every source) or `--records VERTEX=N` (that source): flink run's option and a
# campaign case's spec.
RECORDS_SPEC = re.compile(r"(?:(?P<vertex>[^=\s]+)=)?(?P<count>[0-9]{1,6})")


def parse_records(text: str) -> tuple:
    """``(vertex or None, n)`` of a ``--records`` value ``N`` or ``VERTEX=N``; ValueError saying
    what is wrong.

    >>> parse_records("40"), parse_records("short=1")
    ((None, 40), ('short', 1))
    >>> parse_records("short=x")
    Traceback (most recent call last):
    ...
    ValueError: --records 'short=x': N or VERTEX=N, N a count of records 0..10,000
    """
    found = RECORDS_SPEC.fullmatch(text)
    if found is None or int(found["count"]) > MAX_SOURCE_RECORDS:
        raise ValueError(f"--records {text[:40]!r}: N or VERTEX=N, N a count of records 0..{MAX_SOURCE_RECORDS:,}")
    return found["vertex"], int(found["count"])


def source_records(values) -> int | dict | None:
    """:func:`job_spec`'s ``records`` from parsed ``--records`` values (:func:`parse_records`):
    None for none, N for one ``N``, ``{vertex: n}`` when some name a source (a later value wins;
    an ``N`` among them sets every source's count first: ``"*"`` stands for it)."""
    values = list(values or ())
    if not values:
        return None
    if all(vertex is None for vertex, _ in values):
        return values[-1][1]
    named: dict = {}
    for vertex, count in values:
        if vertex is None:
            named = {"*": count}
        else:
            named[vertex] = count
    return named


def with_source_records(graph: JobGraph, records) -> JobGraph:
    """The graph with its sources' ``"records"`` set: ``records`` an int sets every source's, a
    mapping ``{vertex: n}`` only those sources' (a campaign's source that ends before the first
    checkpoint: docs/coverage.md), None leaves the graph as it is. :class:`UsageError` naming a
    vertex that is not a source of the graph.

    >>> from flipcheck.model.graph_json import parse_graph
    >>> graph = parse_graph({"vertices": [{"id": "a", "parallelism": 1, "records": 30}, {"id": "b", "parallelism": 1},
    ...                                   {"id": "c", "parallelism": 1}],
    ...                      "edges": [{"source": "a", "target": "c", "pattern": "ALL_TO_ALL"},
    ...                                {"source": "b", "target": "c", "pattern": "ALL_TO_ALL"}]})
    >>> shaped = with_source_records(graph, {"a": 1})
    >>> shaped.vertex("a").extra["records"], shaped.vertex("b").extra.get("records")
    (1, None)
    >>> with_source_records(graph, {"c": 1})
    Traceback (most recent call last):
    ...
    flipcheck.errors.UsageError: --records c=1: vertex 'c' is not a source of the graph (its sources: a, b)
    """
    if records is None:
        return graph
    counts = {"*": records} if isinstance(records, int) else dict(records)   # "*": every source
    sources = [v.id for v in graph.vertices if not graph.inputs(v.id)]
    for vertex, count in counts.items():
        if vertex != "*" and vertex not in sources:
            raise UsageError(f"--records {vertex}={count}: vertex {vertex!r} is not a source of the graph "
                             f"(its sources: {', '.join(sources)})")
    vertices = []
    for vertex in graph.vertices:
        extra = dict(vertex.extra)
        count = counts.get(vertex.id, counts.get("*")) if vertex.id in sources else None
        if count is not None:
            extra["records"] = count
        vertices.append(JobVertex(vertex.id, vertex.parallelism, MappingProxyType(extra)))
    return JobGraph(tuple(vertices), graph.edges, graph.states, graph.checkpoints_after_tasks_finished)


def job_spec(graph: JobGraph, *, out: Path, mode: str = "aligned", records: int | dict | None = None,
             interval_ms: int = DEFAULT_INTERVAL_MS, fail: FailAt | None = None,
             checkpoints_after_tasks_finished: bool = True, seed: int = 0,
             record_delay_ms: int = RECORD_DELAY_MS, faults: dict | None = None,
             local_recovery: bool = False, batch: BatchRun | None = None, points: tuple = ()) -> dict:
    """The document FlipcheckJob.java builds the job from. ``records`` overrides every source's
    ``"records"`` (an int) or the named sources' (``{vertex: n}``, :func:`with_source_records`);
    without it a source's flag counts, else :data:`DEFAULT_RECORDS`. ``faults``
    are the protocol-point faults of ``Faults.java`` (:data:`FAULTS`), by vertex.
    ``local_recovery``: task-local recovery on, file-system checkpoint storage, two TaskManagers;
    ``batch`` makes it a batch job with FLIP-383 job recovery (:class:`BatchRun`, ``compat/flink2/Batch.java``).
    ``points``: the faults at protocol points (:class:`flipcheck.flink.faults.Fault`), held with
    ``fail`` against the graph (:func:`flipcheck.flink.faults.check_faults`).
    :class:`UsageError` for what the Flink job cannot build or --fail cannot reach."""
    from flipcheck.model.protocol import Job

    graph = with_source_records(graph, records)
    try:
        # The model's expansion checks the vertex flags and numbers the records (J1).
        job = Job(graph, mode=mode, records=DEFAULT_RECORDS)
    except ValueError as error:
        raise UsageError(f"graph: {error}") from None
    part = roles(graph)
    for vertex in graph.vertices:
        if vertex.extra.get("union_list_state") and part[vertex.id] in ("source", "sink_v2"):
            raise UsageError(f"graph: vertex {vertex.id!r}: union_list_state on a {part[vertex.id].replace('_', ' ')} "
                             "is not built by flink run (a FLIP-27 source and a Sink V2 writer keep no operator list state)")
    first = {}
    for task in job.tasks:
        if task.is_source and task.subtask == 0:
            first[task.vertex] = (task.records[0] if task.records else 0, len(task.records))
    if fail is not None:
        _check_fail(graph, fail, first)
        if fail.how != "task" and not local_recovery:
            raise UsageError(f"{FAIL_OPTIONS[fail.how]}: needs --local-recovery (two TaskManagers, local copies)")
    _check_faults(faults or {}, part)
    from flipcheck.flink.faults import check_faults, fault_of_fail

    given = tuple(points) + ((fault_of_fail(fail),) if fail is not None else ())
    check_faults(given, graph, part, local_recovery)
    _check_keyed_state(graph, part)
    if batch is not None:
        _check_batch(graph, batch, part)
    for name in ("fail_in_enumerator", "drop_add_split_event"):
        for vertex_id in (faults or {}).get(name, ()):
            if graph.vertex(vertex_id).extra.get("splits") is None:
                raise UsageError(f"faults: {name} needs a source with \"splits\", and {vertex_id!r} has none")
    vertices = []
    for vertex_id in graph.topological_order:
        vertex = graph.vertex(vertex_id)
        entry = {
            "id": vertex_id,
            "parallelism": vertex.parallelism,
            "role": part[vertex_id],
            "union_list_state": bool(vertex.extra.get("union_list_state")),
            "keyed_state": bool(vertex.extra.get("keyed_state")),
            "inputs": [{"source": e.source, "partitioning": _partitioning(graph, part[vertex_id], e)}
                       for e in graph.inputs(vertex_id)],
            "outputs": len(graph.outputs(vertex_id)),
        }
        if vertex_id in first:
            entry["first_record"], entry["records"] = first[vertex_id]
            if vertex.extra.get("splits") is not None:
                entry["splits"] = _split_count(vertex, first[vertex_id][1])
        vertices.append(entry)
    return {
        "job_name": f"flipcheck {graph.num_tasks} tasks",
        "out": str(out.resolve()),
        "mode": mode,
        "interval_ms": interval_ms,
        "checkpoints_after_tasks_finished": checkpoints_after_tasks_finished and graph.checkpoints_after_tasks_finished,
        "seed": seed,
        "record_delay_ms": record_delay_ms,
        "restart_attempts": RESTART_ATTEMPTS,
        "fail": None if fail is None else {"vertex": fail.vertex, "subtask": fail.subtask, "record": fail.record,
                                           "how": fail.how},
        "faults": faults or {},
        "fault_points": [point.as_json() for point in points],
        "fault_specs": [fault.spec for fault in given],
        "local_recovery": local_recovery,
        "taskmanagers": 2 if local_recovery else 1,
        "local_backup_dir": str((out / "local-state").resolve()),
        "batch": None if batch is None else {"hold": [f"{v}:{s}" for v, s in batch.hold], "failover": batch.failover,
                                             "lose_task_manager": batch.lose_task_manager,
                                             "delete_shuffle_files": batch.delete_shuffle_files,
                                             "tmp_dir": str(out.resolve() / "tmp")},
        "vertices": vertices,
        "records_expected": _records_expected(job, part),
    }


def _records_expected(job, part: dict) -> int:
    """Records the committing sinks hold after an exactly-once run: each source record once per
    job-graph path from its source to each such sink (the model's J2 path counts)."""
    sinks = [v for v, role in part.items() if role in ("two_phase_commit_sink", "sink_v2")]
    return sum(len(task.records) * job.paths.get((task.vertex, sink), 0)
               for task in job.tasks if task.is_source for sink in sinks)


# Faults.java's faults: name -> (the role of the vertices it applies to, whether it takes a value
# in milliseconds). Each is read from the spec's "faults" before the job starts.
FAULTS = MappingProxyType({
    "slow_snapshot_ms": ("source", True),              # every snapshot sleeps first: late acknowledgements
    "end_after_checkpoint": ("source", False),         # unpaced after its first checkpoint: end of input while it is pending
    "fail_after_end_of_input_commit": ("sink_v2", False),  # throw once after the first commit past end of input
    "fail_in_notify_of_end_checkpoint": ("source", False),  # throw once, 300 ms into that checkpoint's notification
    "fail_in_enumerator": ("source", False),           # a "splits" source's enumerator throws once: a global failover
    "drop_add_split_event": ("source", False),         # the RPC of its middle split fails once (Flink 2.x)
})


def _split_count(vertex: JobVertex, records: int) -> int:
    """A source's ``"splits"``: its records cut into that many splits, handed out lazily (split
    assignment, docs/split-assignment.md); every split holds at least one record."""
    splits, total = vertex.extra.get("splits"), records * vertex.parallelism
    if isinstance(splits, bool) or not isinstance(splits, int) or not 1 <= splits <= max(total, 1):
        raise UsageError(f"graph: vertex {vertex.id!r}: splits must be an integer 1..{max(total, 1)} "
                         f"(its {total} records), got {splits!r}")
    return splits


def designs_exercised(spec: dict) -> list[str]:
    """run.json's ``"designs"``: the designs whose lines a run of ``spec`` writes
    (``flipcheck conform`` validates each; docs/conformance.md).

    >>> designs_exercised({"vertices": [{"id": "src", "splits": 4}]})
    ['protocol', 'split-assignment']
    """
    designs = ["protocol"]
    if any(v.get("splits") for v in spec["vertices"]):
        designs.append("split-assignment")
    if spec.get("local_recovery"):
        designs.append("local-recovery")
    if spec.get("batch") is not None:
        designs.append("batch-recovery")
    return designs


def _check_faults(faults: dict, part: dict) -> None:
    for name, targets in faults.items():
        if name not in FAULTS:
            raise UsageError(f"faults: unknown fault {name!r} (known: {', '.join(FAULTS)})")
        role, timed = FAULTS[name]
        if not isinstance(targets, dict if timed else list):
            raise UsageError(f"faults: {name} takes " + ("{VERTEX: MILLISECONDS}" if timed else "[VERTEX, ...]"))
        for vertex in targets:
            if part.get(vertex) != role:
                raise UsageError(f"faults: {name} applies to a {role.replace('_', ' ')} vertex, and {vertex!r} is "
                                 + ("not a vertex" if vertex not in part else f"a {part[vertex].replace('_', ' ')}"))
            if timed and not (isinstance(targets[vertex], int) and 0 <= targets[vertex] <= 60_000):
                raise UsageError(f"faults: {name} of {vertex!r} is {targets[vertex]!r}, not 0..60000 milliseconds")


def _check_keyed_state(graph: JobGraph, part: dict) -> None:
    for vertex in graph.vertices:
        if vertex.extra.get("keyed_state") and (part[vertex.id] != "operator" or len(graph.inputs(vertex.id)) != 1
                                                or graph.inputs(vertex.id)[0].pattern != ALL_TO_ALL):
            raise UsageError(f"graph: vertex {vertex.id!r}: keyed_state needs an operator with one ALL_TO_ALL input "
                             "(its keyBy) and an output")


@dataclass(frozen=True)
class BatchRun:
    """``--batch``: a BATCH job (blocking exchanges) with batch job recovery on. ``hold``: the
    (vertex, subtask) a latch holds at their first record; ``failover``: once the job waits on
    them only, the JobManager loses and regains its leadership; ``lose_task_manager``: while no
    JobManager runs, the TaskManager is replaced (its partitions are missed);
    ``delete_shuffle_files``: meanwhile the blocking partitions' files are deleted instead."""

    hold: tuple = ()
    failover: bool = False
    lose_task_manager: bool = False
    delete_shuffle_files: bool = False


# Batch job recovery came with 1.20 (SupportsBatchSnapshot); the job builder's batch hooks with
# compat/flink2.
BATCH_SINCE = (2, 0, 0)
# What a batch run logs at DEBUG besides DEBUG_LOGGERS: each job event written.
BATCH_DEBUG_LOGGERS = ("org.apache.flink.runtime.jobmaster.event.FileSystemJobEventStore",)
# How long a recovering JobManager waits for TaskManagers to report their partitions
# (execution.batch.job-recovery.previous-worker.recovery.timeout, 30 s by default): a lost
# TaskManager never reports, and the run waits this long.
BATCH_WORKER_TIMEOUT = "5 s"


def _check_batch(graph: JobGraph, batch: BatchRun, part: dict) -> None:
    for role in ("two_phase_commit_sink",):
        for vertex, found in part.items():
            if found == role:
                raise UsageError(f"graph: vertex {vertex!r}: a two_phase_commit_sink commits on checkpoints, which a "
                                 "--batch run takes none of (use sink_v2: it commits at the end of its input)")
    for vertex, subtask in batch.hold:
        if part.get(vertex) not in ("source", "operator"):
            raise UsageError(f"--jm-failover: {vertex!r} is " + ("not a vertex" if vertex not in part else
                                                                 f"a {part[vertex].replace('_', ' ')}, not a source or operator"))
        if not 0 <= subtask < graph.parallelism(vertex):
            raise UsageError(f"--jm-failover: subtask {subtask} is outside 0..{graph.parallelism(vertex) - 1} "
                             f"(vertex {vertex!r})")
    for option, given in (("--lose-task-manager", batch.lose_task_manager),
                          ("--delete-shuffle-files", batch.delete_shuffle_files)):
        if given and not batch.failover:
            raise UsageError(f"{option}: only with --jm-failover (it happens while no JobManager runs)")


def _check_fail(graph: JobGraph, fail: FailAt, sources: dict) -> None:
    option = FAIL_OPTIONS[fail.how]
    if fail.vertex not in {v.id for v in graph.vertices}:
        raise UsageError(f"{option}: unknown vertex {fail.vertex!r}")
    parallelism = graph.parallelism(fail.vertex)
    if not 0 <= fail.subtask < parallelism:
        raise UsageError(f"{option}: subtask {fail.subtask} is outside 0..{parallelism - 1} (vertex {fail.vertex!r} "
                         f"has parallelism {parallelism})")
    if fail.vertex in sources and fail.record > sources[fail.vertex][1]:
        raise UsageError(f"{option}: record {fail.record} is never reached: each subtask of source {fail.vertex!r} "
                         f"emits {sources[fail.vertex][1]} records")


def _key(option: str, version: str) -> str:
    release = parse_version(version)
    return [key for first, key in _KEYS[option] if first <= release][-1]


def flink_configuration(spec: dict, version: str) -> dict[str, str]:
    """The Flink configuration of a run of ``spec`` on release ``version``: string keys as that
    release names them (FLIP-147's switch always set: 1.14 defaults it to off)."""
    conf = {key: "127.0.0.1" for key in ("rest.bind-address", "rest.address", "jobmanager.bind-host",
                                         "taskmanager.bind-host", "taskmanager.host")}
    conf["rest.bind-port"] = "0"  # any free port: runs side by side do not collide
    conf["execution.checkpointing.interval"] = f"{spec['interval_ms']} ms"
    conf["execution.checkpointing.mode"] = "AT_LEAST_ONCE" if spec["mode"] == "at-least-once" else "EXACTLY_ONCE"
    conf[_key("unaligned", version)] = str(spec["mode"] == "unaligned").lower()
    conf[_key("after_finish", version)] = str(bool(spec["checkpoints_after_tasks_finished"])).lower()
    # The model's failover (F1) restarts every task: Flink's "full" strategy, not "region".
    conf["jobmanager.execution.failover-strategy"] = "full"
    conf[_key("restart", version)] = "fixed-delay"
    conf["restart-strategy.fixed-delay.attempts"] = str(spec["restart_attempts"])
    conf["restart-strategy.fixed-delay.delay"] = "100 ms"
    if spec.get("local_recovery"):
        out = Path(spec["out"])
        conf[_key("from_local", version)] = conf[_key("local_backup", version)] = "true"
        conf[_key("local_dirs", version)] = str(out / "local-state")
        conf[_key("storage", version)] = "filesystem"
        conf[_key("checkpoint_dir", version)] = (out / "checkpoints").as_uri()
    if spec.get("batch") is not None:
        _batch_configuration(conf, spec)
    return conf


def _batch_configuration(conf: dict, spec: dict) -> None:
    """A BATCH job with job recovery on: set in the cluster's configuration, which the
    TaskExecutors read too (they keep their partitions when the JobManager goes), the events
    stored under the run's ``ha/``; no checkpoints; region failover (the model's restarts)."""
    del conf["execution.checkpointing.interval"]
    conf["execution.runtime-mode"] = "BATCH"
    conf["execution.batch.job-recovery.enabled"] = "true"
    conf["execution.batch.job-recovery.previous-worker.recovery.timeout"] = BATCH_WORKER_TIMEOUT
    conf["high-availability.storageDir"] = str(Path(spec["out"]) / "ha")
    conf["io.tmp.dirs"] = spec["batch"]["tmp_dir"]   # the TaskManager's shuffle files, which a fault may delete
    conf["jobmanager.execution.failover-strategy"] = "region"


def log4j_properties(log_file: Path | None, debug_loggers: tuple = DEBUG_LOGGERS) -> str:
    """log4j2 properties: Flink's default layout (:data:`LOG_LAYOUT`) into ``log_file``, DEBUG on
    ``debug_loggers``; without a file no appender (the job server attaches one per job)."""
    lines = ["rootLogger.level = INFO"]
    if log_file is not None:
        lines += [
            "rootLogger.appenderRef.file.ref = FileAppender",
            "appender.file.type = File",
            "appender.file.name = FileAppender",
            f"appender.file.fileName = {log_file}",
            "appender.file.layout.type = PatternLayout",
            f"appender.file.layout.pattern = {LOG_LAYOUT}",
        ]
    for n, logger in enumerate(debug_loggers):
        lines += [f"logger.flipcheck{n}.name = {logger}", f"logger.flipcheck{n}.level = DEBUG"]
    return "\n".join(lines) + "\n"


# -- running --------------------------------------------------------------------------------


def committed_records(out: Path) -> list[int]:
    """Every record id committed under ``out/output/*/committed``, repeats kept."""
    ids = []
    for path in sorted(out.glob("output/*/committed/*")):
        ids += [int(line) for line in path.read_text().split()]
    return ids


def run_summary(result: RunResult) -> dict:
    """run.json: the five fields of the issue, then what else a reader of the run needs."""
    summary = {
        "job_id": result.job_id,
        "status": result.status,
        "cause": result.cause,
        "checkpoints_completed": result.checkpoints_completed,
        "records_committed": result.records_committed,
        "seconds": round(result.times.total, 3),
        "records_expected": result.records_expected,
        "failure_injected": result.failure_injected,
        "vertices": result.vertex_ids,
        "designs": list(result.designs),
        "faults": list(result.faults),
        "times": {"compile": round(result.times.compile, 3), "jvm_start": round(result.times.jvm_start, 3),
                  "job": round(result.times.job, 3), "total": round(result.times.total, 3)},
    }
    if result.flink is not None:
        summary["flink"] = result.flink.describe()
    return summary


def _expected_vertex_name(vertex_id: str, role: str, version: str = "2.3.0") -> str:
    # How StreamingJobGraphGenerator names each job vertex of FlipcheckJob's pipeline; 1.14
    # translates its Sink V1 (writer and committer) into one operator named "Sink <id>".
    if role == "sink_v2" and parse_version(version) < (1, 15, 0):
        return f"Sink {vertex_id}"
    return {"source": f"Source: {vertex_id}", "two_phase_commit_sink": f"Sink: {vertex_id}",
            "discard": f"Sink: {vertex_id}", "sink_v2": f"{vertex_id}: Writer -> {vertex_id}: Committer"}.get(role, vertex_id)


def _vertex_ids(graph: JobGraph, names: dict, version: str = "2.3.0") -> dict:
    part = roles(graph)
    by_name = {name: flink_id for flink_id, name in names.items()}
    found = {}
    for vertex in graph.vertices:
        name = _expected_vertex_name(vertex.id, part[vertex.id], version)
        if part[vertex.id] == "source" and not graph.outputs(vertex.id):
            name += f" -> Sink: {vertex.id}-discard"
        if name not in by_name and part[vertex.id] == "sink_v2":
            name = f"{vertex.id}: Writer"   # a BATCH job does not chain the committer to its writer
        if name not in by_name:
            raise FlinkRunError(f"no Flink job vertex named {name!r} for vertex {vertex.id!r}")
        found[vertex.id] = by_name[name]
    return found


def run_graph(graph: JobGraph, out: Path, *, timeout_seconds: float = JOB_TIMEOUT_SECONDS,
              flink: FlinkInstall | None = None, server=None, **options) -> RunResult:
    """Run ``graph`` on real Flink into ``out`` (created; see the module's docstring); ``options``
    as :func:`job_spec`; ``flink`` the release (:func:`flipcheck.flink.releases.resolve_flink`;
    default: the venv's). ``server``: a :class:`flipcheck.flink.job_server.JobServer` that runs the
    job in its long-lived JVM when it can (:meth:`~flipcheck.flink.job_server.JobServer.accepts`);
    otherwise, or without one, the job gets a JVM of its own. :class:`UsageError` for a missing JDK
    or Flink, or a graph the job cannot build; :class:`FlinkRunError` when the JVM did not report a
    result within ``timeout_seconds``."""
    import flipcheck.flink.faults  # noqa: F401  (its fault line is read with the log)
    spec = job_spec(graph, out=out, **options)  # bad input first, even on a machine without Java
    java, javac = java_tools()
    if flink is None:
        version, lib = flink_lib()
        flink = FlinkInstall(version, lib, "venv")
    version, lib = flink.version, flink.lib
    spec["flink"] = version
    if spec["batch"] is not None and parse_version(version) < BATCH_SINCE:
        raise UsageError(f"--batch: Flink {version} has no batch job recovery the job builder can use (2.0 or later)")
    spec["configuration"] = flink_configuration(spec, version)
    out.mkdir(parents=True, exist_ok=True)
    log_file = out / "flink.log"
    for stale in [log_file, out / "plan.json", out / "run.json"]:
        stale.unlink(missing_ok=True)
    shutil.rmtree(out / "output", ignore_errors=True)
    for stale_dir in ("local-state", "checkpoints"):   # a --local-recovery run's
        shutil.rmtree(out / stale_dir, ignore_errors=True)
    (out / "spec.json").write_text(json.dumps(spec, indent=1) + "\n")
    for stale_dir in ("ha", "tmp"):   # a batch run's job events (a stale file would be replayed), shuffle files
        shutil.rmtree(out / stale_dir, ignore_errors=True)
    if server is not None and server.accepts(spec, flink):
        compile_seconds = 0.0
        started = time.perf_counter()
        reported, marks = server.run(out / "spec.json", out, timeout_seconds)
    else:
        classes, compile_seconds = compile_job(javac, version, lib)
        (out / "log4j2.properties").write_text(log4j_properties(
            log_file.resolve(), DEBUG_LOGGERS + (BATCH_DEBUG_LOGGERS if spec["batch"] is not None else ())))
        command = [java, HEAP, *JVM_OPENS, f"-Dlog4j.configurationFile={(out / 'log4j2.properties').resolve()}",
                   "-cp", f"{classes}{os.pathsep}{lib / '*'}", MAIN_CLASS, str((out / "spec.json").resolve())]
        started = time.perf_counter()
        reported, marks = _run_jvm(command, out, timeout_seconds)
    return _finish_run(graph, out, spec, flink, reported, marks, started, compile_seconds)


def reported_line(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a job builder's ``FLIPCHECK <key> <value>`` line, None for another line.

    >>> reported_line("FLIPCHECK job_id 3f2a"), reported_line("log4j: hello")
    (('job_id', '3f2a'), None)
    """
    if not line.startswith("FLIPCHECK "):
        return None
    _, key, value = (line.rstrip("\n").split(" ", 2) + [""])[:3]
    return key, value


def _run_jvm(command: list, out: Path, timeout_seconds: float) -> tuple[dict, dict]:
    """One JVM of its own for one job: what it reported and when (``perf_counter``) it said each."""
    started = time.perf_counter()
    marks: dict[str, float] = {}
    reported: dict[str, str] = {}
    with open(out / "jvm.out", "w") as transcript:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   stdin=subprocess.DEVNULL)
        # A hung JVM prints nothing, so the time limit cannot wait for the next line.
        watchdog = threading.Timer(timeout_seconds, process.kill)
        watchdog.start()
        try:
            for line in process.stdout:
                transcript.write(line)
                if (found := reported_line(line)) is not None:
                    reported[found[0]] = found[1]
                    marks[found[0]] = time.perf_counter()
            process.wait()
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
    if time.perf_counter() - started >= timeout_seconds and "result" not in reported:
        raise FlinkRunError(f"the job did not end within {timeout_seconds:g} s (see {out / 'jvm.out'})")
    if "result" not in reported:
        tail = [line for line in (out / "jvm.out").read_text(errors="replace").splitlines() if line.strip()]
        raise FlinkRunError(f"the JVM exited with code {process.returncode} before the job ended: "
                            f"{tail[-1] if tail else 'no output'} (see {out / 'jvm.out'})")
    return reported, marks


def _finish_run(graph: JobGraph, out: Path, spec: dict, flink: FlinkInstall, reported: dict, marks: dict,
                started: float, compile_seconds: float) -> RunResult:
    """The run's result from what its JVM reported, and run.json (either kind of JVM)."""
    from flipcheck.flink.logs import read_logs

    ended = time.perf_counter()
    outcome = json.loads(reported["result"])
    reading = read_logs([str(out / "flink.log")])
    committed = committed_records(out)
    # A reused JVM whose cluster was already up spent no time starting.
    jvm_start = marks["cluster_up"] - started if marks.get("cluster_up", 0) >= started else 0.0
    times = RunTimes(compile=compile_seconds, jvm_start=jvm_start,
                     job=marks["done"] - marks["submitted"], total=ended - started)
    result = RunResult(
        job_id=reported["job_id"], status=outcome["status"], cause=outcome.get("cause"),
        checkpoints_completed=sum(1 for e in reading.events if e.kind == "completed"),
        records_committed=len(committed), records_expected=spec["records_expected"],
        vertex_ids=_vertex_ids(graph, json.loads(reported["vertices"]), flink.version),
        failure_injected="failure_injected" in reported or "jm_revoke" in reported, times=times, out=out, flink=flink,
        designs=tuple(designs_exercised(spec)), faults=tuple(spec["fault_specs"]))
    (out / "run.json").write_text(json.dumps(run_summary(result), indent=1) + "\n")
    return result

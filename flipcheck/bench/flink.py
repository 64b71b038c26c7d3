"""``flipcheck bench flink``: one small real Flink job, its wall time split, its ports and memory.

The job is :data:`BENCH_GRAPH` (a source, a map and a two-phase-commit sink, parallelism 2, 50
records per source subtask, a checkpoint every 100 ms), run by
:func:`flipcheck.flink.engine.run_graph`. Reported, in seconds of wall time:

* ``compile``: javac, when the class cache was empty (0 otherwise; run twice to see both);
* ``jvm_start``: launching the JVM until its MiniCluster is up (FlipcheckJob prints the moment);
* ``job``: submission until the job ended;
* ``total``: launching the JVM until it exited (``jvm_start`` + ``job`` + submission and
  shutdown);
* ``validation``: ``flipcheck conform`` of the run's log against the model.

``bench flink --jobs N`` measures throughput instead (:func:`bench_throughput`): N jobs of
:data:`BENCH_GRAPH` (every checkpointing mode in turn) as Spark tasks, each run and validated
with conform, first each in a JVM of its own (``old``), then through one job server per Spark
Python worker (``new``, :mod:`flipcheck.flink.job_server`); validated jobs a minute of each.

While the job runs, :func:`watch_jvm` samples the JVM's listening TCP sockets (from ``/proc``)
and its resident memory: every address it listened on is reported (the issue asks for 127.0.0.1
only) with the peak RSS.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable

from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobGraph, JobVertex

__all__ = ["BENCH_GRAPH", "JvmWatch", "java_children", "listening_addresses", "watch_jvm", "bench_flink", "report_lines",
           "THROUGHPUT_WAYS", "throughput_options", "bench_throughput", "throughput_lines"]

BENCH_GRAPH = JobGraph.build(
    vertices=[JobVertex("src", 2, MappingProxyType({"records": 50})), JobVertex("map", 2),
              JobVertex("sink", 2, MappingProxyType({"two_phase_commit_sink": True}))],
    edges=[("src", "map", POINTWISE), ("map", "sink", ALL_TO_ALL)],
)


@dataclass
class JvmWatch:
    """What :func:`watch_jvm` saw of the JVMs this process started."""

    listening: set = field(default_factory=set)   # {(address, port)}
    peak_rss_mb: float = 0.0
    pids: set = field(default_factory=set)


def java_children(parent: int | None = None) -> list[int]:
    """Pids of the running ``java`` processes whose parent is ``parent`` (default: this process)."""
    parent = parent or os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        except (OSError, ValueError):
            continue
        if name == "java" and int(rest[1]) == parent:
            found.append(int(entry.name))
    return found


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ".".join(str(b) for b in reversed(raw))
    # IPv6: four little-endian 32-bit words; an IPv4-mapped address (a JVM's IPv6 socket bound
    # to an IPv4 address) is shown as the IPv4 address.
    address = ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))
    return str(address.ipv4_mapped or address)


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """The ``(address, port)`` of every TCP socket ``pid`` listens on (``/proc/net/tcp{,6}``)."""
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return set()
    found = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                address, port = fields[1].split(":")
                found.add((_address(address), int(port, 16)))
    return found


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def watch_jvm(work: Callable[[], object], interval: float = 0.1) -> tuple[object, JvmWatch]:
    """Run ``work()`` here while a thread samples the JVMs it starts; ``(its result, JvmWatch)``.
    JVMs this process ran before (a Spark session's gateway, say) are not the work's."""
    watch = JvmWatch()
    done = threading.Event()
    before = set(java_children())

    def sample():
        while not done.is_set():
            for pid in set(java_children()) - before:
                watch.pids.add(pid)
                watch.listening |= listening_addresses(pid)
                watch.peak_rss_mb = max(watch.peak_rss_mb, _rss_mb(pid))
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = work()
    finally:
        done.set()
        sampler.join()
    return result, watch


def bench_flink(out: Path | None = None, flink=None):
    """``(RunResult, JvmWatch)`` of one run of :data:`BENCH_GRAPH` (in a temporary directory
    unless ``out`` is given) on release ``flink`` (a :class:`~flipcheck.flink.releases.FlinkInstall`;
    default: the venv's)."""
    from flipcheck.flink.engine import run_graph

    if out is not None:
        return watch_jvm(lambda: run_graph(BENCH_GRAPH, out, flink=flink))
    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-flink-") as scratch:
        return watch_jvm(lambda: run_graph(BENCH_GRAPH, Path(scratch), flink=flink))


def report_lines(result, watch: JvmWatch, validation=None) -> list[str]:
    """The report; ``validation``: ``(seconds, Conformance)`` of validating the run's log."""
    times = result.times
    listening = ", ".join(f"{a}:{p}" for a, p in sorted(watch.listening)) or "none seen"
    loopback = all(ipaddress.ip_address(a).is_loopback for a, _ in watch.listening)
    return [
        f"{'phase':<12} {'seconds':>8}",
        f"{'compile':<12} {times.compile:>8.2f}" + ("  (cached)" if not times.compile else ""),
        f"{'jvm start':<12} {times.jvm_start:>8.2f}  launch -> MiniCluster up",
        f"{'job':<12} {times.job:>8.2f}  submission -> job ended",
        f"{'total':<12} {times.total:>8.2f}  launch -> JVM exited",
    ] + ([f"{'validation':<12} {validation[0]:>8.2f}  flipcheck conform: "
          f"{'conforms' if validation[1].conforms else 'does NOT conform'} "
          f"({len(validation[1].observations)} log events)"] if validation else []) + [
        f"job {result.status}: {result.checkpoints_completed} checkpoints completed, "
        f"{result.records_committed} records committed (exactly once: {result.records_expected})",
        f"listening: {listening} ({'loopback only' if loopback else 'NOT loopback only'}); "
        f"peak JVM RSS {watch.peak_rss_mb:.0f} MB",
    ]


# --jobs N: the two ways of running a job, in the order measured.
THROUGHPUT_WAYS = ("old", "new")


def throughput_options(index: int) -> dict:
    """The run options of job ``index`` of a throughput run: the checkpointing modes in turn.

    >>> [throughput_options(i)["mode"] for i in range(4)]
    ['aligned', 'unaligned', 'at-least-once', 'aligned']
    """
    from flipcheck.flink.engine import MODES

    return {"mode": MODES[index % len(MODES)], "seed": index}


def _throughput_job(way: str, scratch: str, release: str | None, index: int) -> dict:
    """One job of a throughput run, on a Spark worker: run (``old``: a JVM of its own; ``new``:
    this worker's job server) and validate it; a row, never an exception."""
    import json

    from flipcheck.designs.flink_jobs import judge_run
    from flipcheck.flink.job_server import shared_server
    from flipcheck.flink.releases import FlinkInstall

    flink = None
    if release is not None:
        found = json.loads(release)
        flink = FlinkInstall(found["version"], Path(found["lib"]), found["source"])
    server = shared_server(flink) if way == "new" else None
    outcome = judge_run(BENCH_GRAPH, Path(scratch) / way / f"job-{index}", throughput_options(index), flink=flink,
                        server=server)
    return {"index": index, "status": outcome.detail.get("status"), "conforms": outcome.detail.get("conforms"),
            "error": outcome.error, "seconds": outcome.detail.get("seconds"),
            "server": server is not None and server.unavailable is None}


def bench_throughput(jobs: int, master: str, flink=None) -> dict:
    """Both ways, ``jobs`` jobs each, on one Spark session of ``master``: for each way, jobs run,
    validated (finished and conforming), errors, wall seconds of the Spark job and validated
    jobs a minute. ``flink``: the release (default: the venv's)."""
    import json

    from flipcheck.sweep.spark import start_spark, stop_spark

    from flipcheck.flink.engine import compile_job, flink_lib, java_tools
    from flipcheck.flink.job_server import JobServer

    release = None if flink is None else json.dumps(flink.describe())
    # Both ways' classes compiled before the clocks start: javac is paid once, not measured.
    _, javac = java_tools()
    version, lib = (flink.version, flink.lib) if flink is not None else flink_lib()
    compile_job(javac, version, lib)
    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-compile-") as scratch:
        JobServer(flink).command(Path(scratch))
    spark = start_spark(master, app_name="flipcheck-bench-flink")
    found = {}
    try:
        with tempfile.TemporaryDirectory(prefix="flipcheck-bench-throughput-") as scratch:
            for way in THROUGHPUT_WAYS:
                started = time.perf_counter()
                rows = (spark.sparkContext.parallelize(range(jobs), jobs)
                        .map(_job_runner(way, scratch, release)).collect())
                seconds = time.perf_counter() - started
                validated = sum(1 for row in rows if row["status"] == "FINISHED" and row["conforms"])
                found[way] = {"jobs": jobs, "validated": validated,
                              "errors": [row["error"] for row in rows if row["error"]][:5],
                              "seconds": round(seconds, 3), "validated_per_minute": round(validated * 60 / seconds, 2),
                              "server": way == "new" and all(row["server"] for row in rows)}
    finally:
        stop_spark(spark)
    return {"master": master, "jobs": jobs, **found,
            "speedup": round(found["new"]["validated_per_minute"] / (found["old"]["validated_per_minute"] or 1e-9), 2)}


def _job_runner(way: str, scratch: str, release: str | None):
    from functools import partial

    return partial(_throughput_job, way, scratch, release)


def throughput_lines(report: dict) -> list[str]:
    """The throughput report as text: one line per way, then the speed-up."""
    lines = [f"{'way':<5} {'jobs':>5} {'validated':>10} {'seconds':>9} {'validated/min':>14}  (master {report['master']})"]
    for way in THROUGHPUT_WAYS:
        row = report[way]
        what = "one JVM per job" if way == "old" else ("one job server per Spark worker" if row["server"]
                                                       else "job server unavailable: one JVM per job")
        lines.append(f"{way:<5} {row['jobs']:>5} {row['validated']:>10} {row['seconds']:>9.1f} "
                     f"{row['validated_per_minute']:>14.1f}  {what}")
        lines += [f"      error: {error}" for error in row["errors"]]
    lines.append(f"new/old: {report['speedup']}x")
    return lines

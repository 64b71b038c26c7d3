"""``flipcheck bench sweep``: sweep throughput per suite, 1 -> 2 core scaling, Spark's overhead.

For each suite the same random cases are checked three ways:

* a plain loop in this process (:func:`flipcheck.sweep.runner.run_batch` over every batch, no Spark):
  cases per second per core;
* a sweep on ``local[1]`` and one on ``local[2]`` (each in a new Spark session, Parquet
  written, summary and report produced): scaling = time on one core / time on two;
* Spark's overhead = sweep time on ``local[1]`` / plain loop time - 1, without the JVM's
  start-up (reported separately).

Wall-clock times suffer from whatever else runs on the machine, so every run also records the
CPU seconds spent by all processes involved (this process, the JVM, the Python workers: the
whole process tree): ``overhead_cpu`` is Spark's extra work, which other load hardly changes.
The 1-minute load average at the end is recorded too.

The number of cases is chosen so that the plain loop takes about ``budget`` seconds (the issue
asks for the overhead "on a sweep of a minute or more": use ``--budget 60``).

>>> cpu = process_tree_cpu_seconds()
>>> cpu > 0
True
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SweepBenchRow", "bench_sweep", "plain_loop", "process_tree_cpu_seconds", "report"]


def process_tree_cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds (user + system, including reaped children) of ``pid`` and all its descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total, queue = 0.0, [pid or os.getpid()]
    while queue:
        current = queue.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15]) / tick  # utime stime cutime cstime
            for task in Path(f"/proc/{current}/task").iterdir():
                queue.extend(int(child) for child in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited meanwhile
    return total


@dataclass
class SweepBenchRow:
    suite: str
    cases: int
    plain_seconds: float
    plain_cpu_seconds: float
    local1_seconds: float
    local1_cpu_seconds: float
    local1_startup_seconds: float
    local2_seconds: float
    local2_cpu_seconds: float
    local2_startup_seconds: float
    load_average: float = 0.0  # 1-minute load average when the measurement ended

    @property
    def cases_per_second_per_core(self) -> float:
        """Plain loop, per CPU second (what one core does without Spark)."""
        return self.cases / self.plain_cpu_seconds

    @property
    def scaling(self) -> float:
        """local[1] sweep time / local[2] sweep time (JVM start-up excluded)."""
        return self.local1_seconds / self.local2_seconds

    @property
    def overhead(self) -> float:
        """Wall time of the sweep on local[1] against the plain loop, JVM start-up excluded."""
        return self.local1_seconds / self.plain_seconds - 1

    @property
    def overhead_cpu(self) -> float:
        """CPU seconds of the whole sweep (driver, JVM, workers) on local[1] against the plain loop."""
        return self.local1_cpu_seconds / self.plain_cpu_seconds - 1

    def as_dict(self) -> dict:
        numbers = {k: round(v, 3) for k, v in vars(self).items() if isinstance(v, float)}
        return {"suite": self.suite, "cases": self.cases, **numbers,
                "cases_per_second_per_core": round(self.cases_per_second_per_core, 1),
                "scaling": round(self.scaling, 3), "overhead": round(self.overhead, 4),
                "overhead_cpu": round(self.overhead_cpu, 4)}


def plain_loop(spec) -> tuple[float, float]:
    """(wall, CPU) seconds to generate and check every case of ``spec`` here, batch by batch."""
    from flipcheck.sweep.runner import run_batch

    targets = spec.worker_targets()
    started, cpu = time.perf_counter(), time.process_time()
    for batch in spec.batches():
        for _ in run_batch(targets, *batch):
            pass
    return time.perf_counter() - started, time.process_time() - cpu


def _calibrate(suite: str, seconds: float = 2.0) -> float:
    """Plain-loop cases per CPU second of ``suite`` (generation and check), measured briefly."""
    from flipcheck.sweep.runner import plan_sweep

    cases = 200
    while True:
        _, cpu = plain_loop(plan_sweep([suite], cases=cases, seed="calibrate"))
        if cpu >= seconds or cases >= 10_000_000:
            return cases / cpu
        cases = int(cases * max(2.0, 1.2 * seconds / max(cpu, 1e-3)))


def _spark_run(spec, master: str) -> tuple[float, float, float]:
    """(sweep seconds, sweep CPU seconds, start-up seconds) of ``spec`` on a new session for ``master``."""
    from flipcheck.sweep.spark import start_spark, stop_spark
    from flipcheck.sweep.runner import run_sweep

    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-") as out:
        began = time.perf_counter()
        spark = start_spark(master, "flipcheck bench", log_path=f"{out}/spark.log")
        ready, cpu = time.perf_counter(), process_tree_cpu_seconds()
        try:
            run_sweep(spec, f"{out}/sweep", spark=spark)
            cpu = process_tree_cpu_seconds() - cpu
        finally:
            stop_spark(spark)
        return time.perf_counter() - ready, cpu, ready - began


def bench_sweep(budget: float, suites=("plan", "barriers"), progress=None, repeat: int = 1) -> list[SweepBenchRow]:
    """One row per suite; with ``repeat`` > 1 each timing is the best of that many runs (on a
    shared machine other processes only ever make a run slower)."""
    from flipcheck.sweep.runner import plan_sweep

    rows = []
    for suite in suites:
        if progress:
            progress(f"{suite}: calibrating")
        cases = max(1000, int(_calibrate(suite, min(2.0, budget)) * budget))
        spec = plan_sweep([suite], cases=cases, seed="bench")
        plain, one, two = (float("inf"),) * 2, (float("inf"),) * 3, (float("inf"),) * 3
        for _ in range(repeat):
            if progress:
                progress(f"{suite}: plain loop over {cases:,} cases")
            plain = min(plain, plain_loop(spec))
            if progress:
                progress(f"{suite}: Spark local[1]")
            one = min(one, _spark_run(spec, "local[1]"))
            if progress:
                progress(f"{suite}: Spark local[2]")
            two = min(two, _spark_run(spec, "local[2]"))
        rows.append(SweepBenchRow(suite, cases, *plain, *one, *two, os.getloadavg()[0]))
    return rows


def _suites(text: str | None) -> tuple[str, ...]:
    """The suites named by ``--suites`` (default: every suite this build has)."""
    from flipcheck.errors import UsageError
    from flipcheck.designs import available_designs

    available = available_designs()
    if not text:
        return tuple(available)
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in available]
    if unknown or not names:
        raise UsageError(f"--suites: unknown suite {', '.join(unknown) or repr(text)} (choose from {', '.join(available)})")
    return names


def report(args) -> int:
    """``flipcheck bench sweep``: run :func:`bench_sweep` and print a table (or JSON lines)."""
    import json
    import sys

    from flipcheck.errors import UsageError

    if args.budget <= 0:
        raise UsageError("--budget: must be positive")
    if getattr(args, "repeat", 1) < 1:
        raise UsageError("--repeat: must be at least 1")
    progress = None if args.json else (lambda text: sys.stderr.write(f"  measuring {text}...\n"))
    rows = bench_sweep(args.budget, suites=_suites(getattr(args, "suites", None)), progress=progress,
                       repeat=getattr(args, "repeat", 1))
    if args.json:
        for row in rows:
            print(json.dumps(row.as_dict()))
        return 0
    print(f"{'suite':<10} {'cases':>10} {'cases/s/core':>13} {'plain s':>8} {'local[1] s':>11} {'local[2] s':>11} "
          f"{'scaling':>8} {'overhead':>9} {'cpu overhead':>13} {'JVM start s':>12} {'load':>5}")
    for row in rows:
        print(f"{row.suite:<10} {row.cases:>10,} {row.cases_per_second_per_core:>13,.0f} {row.plain_seconds:>8.1f} "
              f"{row.local1_seconds:>11.1f} {row.local2_seconds:>11.1f} {row.scaling:>7.2f}x {row.overhead:>8.1%} "
              f"{row.overhead_cpu:>12.1%} {row.local1_startup_seconds:>12.1f} {row.load_average:>5.1f}")
    print("scaling = local[1] / local[2] sweep time; overhead = local[1] sweep time / plain loop - 1 (wall, JVM "
          "start-up excluded); cpu overhead = CPU seconds of driver + JVM + workers / plain loop's - 1")
    return 0

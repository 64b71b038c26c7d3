"""``flipcheck bench sweep``: sweep throughput per suite, 1 -> 2 core scaling, Spark's overhead.

For each suite the same random cases are checked three ways:

* a plain loop in this process (:func:`flipcheck.sweep.run_batch` over every batch, no Spark):
  cases per second per core;
* a sweep on ``local[1]`` and one on ``local[2]`` (each in a fresh Spark session, Parquet
  written, summary and report produced): scaling = time on one core / time on two;
* Spark's overhead = sweep time on ``local[1]`` / plain loop time - 1, both with the JVM's
  start-up (end to end) and without it.

The number of cases is chosen so that the plain loop takes about ``budget`` seconds (the issue
asks for the overhead "on a sweep of a minute or more": use ``--budget 60``).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass

__all__ = ["SweepBenchRow", "bench_sweep", "plain_loop", "report"]


@dataclass
class SweepBenchRow:
    suite: str
    cases: int
    plain_seconds: float
    local1_seconds: float
    local1_startup_seconds: float
    local2_seconds: float
    local2_startup_seconds: float
    load_average: float = 0.0  # 1-minute load average when the measurement ended (other work on the machine)

    @property
    def cases_per_second_per_core(self) -> float:
        return self.cases / self.plain_seconds

    @property
    def scaling(self) -> float:
        """local[1] time / local[2] time, sweeps only (JVM start-up excluded)."""
        return self.local1_seconds / self.local2_seconds

    @property
    def scaling_end_to_end(self) -> float:
        return (self.local1_seconds + self.local1_startup_seconds) / (self.local2_seconds + self.local2_startup_seconds)

    @property
    def overhead(self) -> float:
        """Spark on one core against the plain loop, JVM start-up excluded."""
        return self.local1_seconds / self.plain_seconds - 1

    @property
    def overhead_end_to_end(self) -> float:
        return (self.local1_seconds + self.local1_startup_seconds) / self.plain_seconds - 1

    def as_dict(self) -> dict:
        return {"suite": self.suite, "cases": self.cases, "plain_seconds": round(self.plain_seconds, 3),
                "cases_per_second_per_core": round(self.cases_per_second_per_core, 1),
                "local1_seconds": round(self.local1_seconds, 3), "local1_startup_seconds": round(self.local1_startup_seconds, 3),
                "local2_seconds": round(self.local2_seconds, 3), "local2_startup_seconds": round(self.local2_startup_seconds, 3),
                "scaling": round(self.scaling, 3), "scaling_end_to_end": round(self.scaling_end_to_end, 3),
                "overhead": round(self.overhead, 4), "overhead_end_to_end": round(self.overhead_end_to_end, 4),
                "load_average": round(self.load_average, 2)}


def plain_loop(spec) -> float:
    """Seconds to generate and check every case of ``spec`` in this process, batch by batch."""
    from flipcheck.sweep import run_batch

    targets = spec.worker_targets()
    started = time.perf_counter()
    for batch in spec.batches():
        for _ in run_batch(targets, *batch):
            pass
    return time.perf_counter() - started


def _calibrate(suite: str, seconds: float = 2.0) -> float:
    """Plain-loop cases per second of ``suite`` (generation and check), measured briefly."""
    from flipcheck.sweep import plan_sweep

    cases = 200
    while True:
        elapsed = plain_loop(plan_sweep([suite], cases=cases, seed="calibrate"))
        if elapsed >= seconds or cases >= 10_000_000:
            return cases / elapsed
        cases = int(cases * max(2.0, 1.2 * seconds / max(elapsed, 1e-3)))


def _spark_run(spec, master: str) -> tuple[float, float]:
    """(sweep seconds, JVM start-up seconds) of ``spec`` on a fresh session for ``master``."""
    from flipcheck.spark_session import start_spark, stop_spark
    from flipcheck.sweep import run_sweep

    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-") as out:
        began = time.perf_counter()
        spark = start_spark(master, "flipcheck bench", log_path=f"{out}/spark.log")
        ready = time.perf_counter()
        try:
            run_sweep(spec, f"{out}/sweep", spark=spark)
        finally:
            stop_spark(spark)
        return time.perf_counter() - ready, ready - began


def bench_sweep(budget: float, suites=("plan", "barriers"), progress=None, repeat: int = 1) -> list[SweepBenchRow]:
    """One row per suite; with ``repeat`` > 1 each of the three timings is the best of that many
    runs (on a shared machine other processes only ever make a run slower)."""
    import os

    from flipcheck.sweep import plan_sweep

    rows = []
    for suite in suites:
        if progress:
            progress(f"{suite}: calibrating")
        cases = max(1000, int(_calibrate(suite, min(2.0, budget)) * budget))
        spec = plan_sweep([suite], cases=cases, seed="bench")
        if progress:
            progress(f"{suite}: plain loop over {cases:,} cases")
        plain, one, two = float("inf"), (float("inf"), 0.0), (float("inf"), 0.0)
        for _ in range(repeat):
            plain = min(plain, plain_loop(spec))
            if progress:
                progress(f"{suite}: Spark local[1]")
            one = min(one, _spark_run(spec, "local[1]"))
            if progress:
                progress(f"{suite}: Spark local[2]")
            two = min(two, _spark_run(spec, "local[2]"))
        rows.append(SweepBenchRow(suite, cases, plain, *one, *two, os.getloadavg()[0]))
    return rows


def report(args) -> int:
    """``flipcheck bench sweep``: run :func:`bench_sweep` and print a table (or JSON lines)."""
    import json
    import sys

    from flipcheck.errors import UsageError

    if args.budget <= 0:
        raise UsageError("--budget: must be positive")
    progress = None if args.json else (lambda text: sys.stderr.write(f"  measuring {text}...\n"))
    rows = bench_sweep(args.budget, progress=progress, repeat=getattr(args, "repeat", 1))
    if args.json:
        for row in rows:
            print(json.dumps(row.as_dict()))
        return 0
    print(f"{'suite':<10} {'cases':>10} {'plain s':>8} {'cases/s/core':>13} {'local[1] s':>11} {'local[2] s':>11} "
          f"{'scaling':>8} {'overhead':>9} {'JVM start s':>12}")
    for row in rows:
        print(f"{row.suite:<10} {row.cases:>10,} {row.plain_seconds:>8.1f} {row.cases_per_second_per_core:>13,.0f} "
              f"{row.local1_seconds:>11.1f} {row.local2_seconds:>11.1f} {row.scaling:>7.2f}x {row.overhead:>8.1%} "
              f"{row.local1_startup_seconds:>12.1f}")
    print("scaling = local[1] / local[2] sweep time; overhead = local[1] sweep time / plain loop - 1 "
          "(both without the JVM start-up, shown last; end to end in --json)")
    return 0

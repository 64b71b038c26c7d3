"""``flipcheck bench explore``'s workers table: the single-process search (``--workers 1``, the
explorer before ``--workers``) and the workers explorer with 2 processes, side by side on every
pinned configuration of more than 50,000 states (tests/manifests/protocol.json), without a
reduction (every state: the counts pinned) and with ``--reduction all``, what ``flipcheck
explore`` runs by default (fewer states, each dearer to expand: the stubborn sets and the
symmetry representative are worked out by the workers).

Per configuration: wall and CPU seconds of each, the speedup in wall time, the driver's serial
share of the wall time (numbering after the last worker ended, and placing the next level), the
driver's share of all CPU seconds, and how many states crossed to another process per state: to
balance the next level (``moved``), and given by a busy worker to an idle one at a level's end
(``given``). The machine's load average is printed with each row: on shared cores the wall times
say as much about the others as about the explorer. So each row also has the run's critical path
in CPU seconds (per level the busiest worker, plus the driver's CPU that did not overlap the
workers': the wall time on a core per process, IPC waits aside) and the projected speedup, one
process's CPU seconds over it.

>>> [row["graph"] for row in configurations(min_states=200_000)]
['join', 'pair']
"""

from __future__ import annotations

import os
import time

from flipcheck.bench.builds import pinned_entries
from flipcheck.generators.protocol import example_graph
from flipcheck.parallel_explore.workers import (
    MIN_LEVEL, WorkersReport, explore_job_on_workers, job_from_spec, job_spec,
)
from flipcheck.properties.protocol_explore import explore_job

__all__ = ["configurations", "measure", "report_line", "HEADER", "MIN_STATES", "REDUCTIONS"]

MIN_STATES = 50_000   # smaller spaces finish in a few seconds: not where the cores matter


def configurations(min_states: int = MIN_STATES) -> list[dict]:
    """The pinned configurations of the correct protocol with more than ``min_states`` states,
    each a ``{"graph", "parallelism", options..., "states"}`` dict."""
    found = []
    for entry in pinned_entries():
        if entry["distinct_states"] <= min_states:
            continue
        config = dict(entry["config"])
        config.setdefault("parallelism", 1)
        found.append(dict(config, states=entry["distinct_states"]))
    return found


#: The reductions each configuration is measured with: none, and the command line's default.
REDUCTIONS = ("none", "all")


def measure(config: dict, workers: int = 2, min_level: int = MIN_LEVEL, reduction: str = "none",
            repeat: int = 1) -> dict:
    """One row: the single-process search and ``workers`` processes on ``config`` (``min_level``:
    :func:`~flipcheck.parallel_explore.workers.explore_job_on_workers`'s), both with
    ``reduction``. With ``repeat`` above 1 the two run in turn that many times, and the row is the
    pair whose speedup is the median (``speedups`` lists every pair's): on shared cores one pair
    says little (the same configuration measured 1.26x and 1.68x within the hour)."""
    options = {k: v for k, v in config.items() if k not in ("graph", "parallelism", "states")}
    if options.get("records") is None:
        options.pop("records", None)   # the graph's per-source flags
    spec = job_spec(example_graph(config["graph"], config["parallelism"]), "flip-147", options)
    rows = sorted((_pair(config, spec, workers, min_level, reduction) for _ in range(repeat)), key=lambda r: r["speedup"])
    row = rows[(len(rows) - 1) // 2]
    return dict(row, runs=repeat, speedups=[r["speedup"] for r in rows])


def _pair(config: dict, spec: dict, workers: int, min_level: int, reduction: str) -> dict:
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    alone = explore_job(job_from_spec(spec), store="fingerprints", reduction=reduction)
    alone_wall, alone_cpu = time.perf_counter() - wall, time.process_time() - cpu
    report = WorkersReport(workers)
    spread = explore_job_on_workers(spec, workers=workers, report=report, min_level=min_level, reduction=reduction)
    if (spread.states, spread.transitions) != (alone.states, alone.transitions):
        raise AssertionError(f"{config}: {workers} workers found {spread.states} states, one process {alone.states}")
    return {"graph": config["graph"], "parallelism": config["parallelism"], "mode": config["mode"],
            "records": config.get("records"), "checkpoints": config["checkpoints"], "failures": config["failures"],
            "stop_with_savepoint": config["stop_with_savepoint"], "reduction": reduction, "states": alone.states,
            "load_average": round(load, 2), "one_process_seconds": round(alone_wall, 2),
            "one_process_cpu_seconds": round(alone_cpu, 2), "workers": workers,
            "workers_seconds": round(report.wall_seconds, 2),
            "workers_cpu_seconds": round(report.driver_cpu_seconds + report.workers_cpu_seconds, 2),
            "speedup": round(alone_wall / report.wall_seconds, 2),
            "critical_cpu_seconds": round(report.critical_cpu_seconds, 2),
            "projected_speedup": round(alone_cpu / report.critical_cpu_seconds, 2),
            "driver_serial_share": round(report.serial_share, 3),
            "driver_cpu_share": round(report.driver_cpu_share, 3),
            "moved_per_state": round(report.states_moved / max(spread.states, 1), 2),
            "given_per_state": round(report.states_given / max(spread.states, 1), 2)}


HEADER = (f"{'graph':<8} {'p':>1} {'mode':<13} {'rec':>3} {'cp':>2} {'fail':>4} {'red':<4} {'states':>8} {'load':>5} "
          f"{'1 proc s':>8} {'cpu s':>6} {'2 work s':>8} {'cpu s':>6} {'speedup':>7} {'serial':>6} "
          f"{'drv cpu':>7} {'moved':>5} {'given':>5} {'critical':>8} {'projected':>9}  speedups")


def report_line(row: dict) -> str:
    records = "-" if row["records"] is None else row["records"]
    return (f"{row['graph']:<8} {row['parallelism']:>1} {row['mode']:<13} {records:>3} {row['checkpoints']:>2} "
            f"{row['failures']:>4} {row['reduction']:<4} {row['states']:>8} {row['load_average']:>5.1f} {row['one_process_seconds']:>8.1f} "
            f"{row['one_process_cpu_seconds']:>6.1f} {row['workers_seconds']:>8.1f} {row['workers_cpu_seconds']:>6.1f} "
            f"{row['speedup']:>6.2f}x {row['driver_serial_share']:>6.1%} {row['driver_cpu_share']:>7.1%} "
            f"{row['moved_per_state']:>5.2f} {row['given_per_state']:>5.2f} {row['critical_cpu_seconds']:>8.1f} {row['projected_speedup']:>8.2f}x"
            + (f"  {' '.join(f'{x:.2f}' for x in row['speedups'])}" if row.get("runs", 1) > 1 else ""))

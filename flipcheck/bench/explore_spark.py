"""``flipcheck bench explore --tables spark``: the two Spark explorers on ``local[1]`` and
``local[2]``, side by side on pinned configurations of 20,000-90,000 states
(tests/manifests/protocol.json, no reduction): the driver-numbered search (``--seen driver``,
:mod:`flipcheck.parallel_explore.spark`) and the one with the seen-set on the executors
(``--seen executors``, :mod:`flipcheck.parallel_explore.spark_partitioned`).

Per run: wall seconds of the search (the JVM's start left out), the driver's CPU seconds (this
Python process), the executors' Python CPU seconds (every process under the JVM: PySpark's
daemon and its workers, ended ones included through their parent's ``cutime``), the JVM's own
CPU seconds (in local mode it is both the driver's and the executors' JVM, so it is shown apart),
and the driver's share, driver / (driver + executors' Python). Per configuration and explorer:
the speedup local[1] -> local[2] in wall time. With each row the load average: the machine may
be shared, and then the wall times say as much about the others as about the explorer.

Per configuration, what the driver-numbered path keeps central and the other cannot: the graph
(bytes a state) and the seconds the liveness properties take on it (``violated_properties`` with
and without liveness, on the driver).

>>> chosen = configurations()     # pinned counts: tests/manifests/protocol.json
>>> len(chosen), all(20_000 <= c["states"] <= 90_000 for c in chosen), chosen[0]["states"] < chosen[1]["states"]
(2, True, True)
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from flipcheck.bench.explore_workers import configurations as pinned_configurations
from flipcheck.generators.protocol import example_graph
from flipcheck.parallel_explore.expansion import job_spec
from flipcheck.properties.protocol_explore import violated_properties

__all__ = ["configurations", "measure", "report_lines", "HEADER", "MASTERS", "EXPLORERS"]

MASTERS = ("local[1]", "local[2]")
EXPLORERS = ("driver", "executors")


def configurations(min_states: int = 20_000, max_states: int = 90_000) -> list[dict]:
    """The smallest and the largest pinned configuration of the correct protocol with
    ``min_states`` to ``max_states`` states (a run on local[1] takes minutes at the top end)."""
    found = sorted((c for c in pinned_configurations(min_states) if c["states"] <= max_states),
                   key=lambda c: c["states"])
    return [found[0], found[-1]] if len(found) > 1 else found


def _spec(config: dict) -> dict:
    options = {k: v for k, v in config.items() if k not in ("graph", "parallelism", "states")}
    if options.get("records") is None:
        options.pop("records", None)   # the graph's per-source flags
    return job_spec(example_graph(config["graph"], config["parallelism"]), "flip-147", options)


def _ticks(pid: int) -> tuple[int, int]:
    """(own CPU ticks, CPU ticks of ended children it waited for) of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def _cpu_under(root: int) -> tuple[float, float]:
    """CPU seconds of process ``root`` itself, and of every process below it (ended ones
    counted by their parents)."""
    children: dict = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    below = 0
    waiting = list(children.get(root, []))
    while waiting:
        pid = waiting.pop()
        try:
            own, ended = _ticks(pid)
        except (OSError, IndexError, ValueError):
            continue
        below += own + ended
        waiting += children.get(pid, [])
    tick = os.sysconf("SC_CLK_TCK")
    return _ticks(root)[0] / tick, below / tick


def _run(explorer: str, master: str, spec: dict) -> tuple[dict, Any]:
    from flipcheck.parallel_explore.spark import explore_job_on_spark
    from flipcheck.parallel_explore.spark_partitioned import explore_job_partitioned
    from flipcheck.sweep.spark import start_spark, stop_spark

    import tempfile

    spark = start_spark(master, "flipcheck bench explore", log_path=os.path.join(tempfile.gettempdir(), "flipcheck-bench-spark.log"))
    try:
        jvm = spark.sparkContext._gateway.proc.pid
        load = os.getloadavg()[0]
        jvm_before, python_before = _cpu_under(jvm)
        wall, cpu = time.perf_counter(), time.process_time()
        if explorer == "driver":
            result = explore_job_on_spark(spec, spark, reduction="none")
        else:
            result = explore_job_partitioned(spec, spark, reduction="none")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        jvm_after, python_after = _cpu_under(jvm)
    finally:
        stop_spark(spark)
    executors = python_after - python_before
    return {"explorer": explorer, "master": master, "load_average": round(load, 2), "seconds": round(wall, 2),
            "driver_cpu_seconds": round(cpu, 2), "executors_cpu_seconds": round(executors, 2),
            "jvm_cpu_seconds": round(jvm_after - jvm_before, 2),
            "driver_cpu_share": round(cpu / max(cpu + executors, 1e-9), 3), "states": result.states}, result


def measure(config: dict) -> list[dict]:
    """Rows of one configuration: each explorer on each master, then what stays central."""
    spec = _spec(config)
    rows = []
    for explorer in EXPLORERS:
        for master in MASTERS:
            row, result = _run(explorer, master, spec)
            if row["states"] != config["states"]:
                raise AssertionError(f"{config}: {explorer} on {master} found {row['states']} states, "
                                     f"pinned {config['states']}")
            row.update(graph=config["graph"], mode=config["mode"], pinned_states=config["states"])
            rows.append(row)
            if explorer == "driver" and master == MASTERS[0]:
                central = _central_cost(result.graph)
    for explorer in EXPLORERS:
        one, two = (r for r in rows if r["explorer"] == explorer)
        two["speedup"] = round(one["seconds"] / two["seconds"], 2)
    rows.append(dict(central, graph=config["graph"], mode=config["mode"], pinned_states=config["states"],
                     explorer="central"))
    return rows


def _central_cost(graph) -> dict:
    """What the liveness properties cost the driver on the driver-numbered path's graph."""
    cpu = time.process_time()
    violated_properties(graph, liveness=False)
    safety = time.process_time() - cpu
    cpu = time.process_time()
    violated_properties(graph, liveness=True)
    return {"graph_bytes_per_state": round(graph.bytes_per_state, 1),
            "liveness_cpu_seconds": round(time.process_time() - cpu - safety, 2)}


HEADER = (f"{'graph':<8} {'mode':<13} {'states':>8} {'seen on':<9} {'master':<8} {'load':>5} {'wall s':>7} "
          f"{'drv cpu':>7} {'exec cpu':>8} {'jvm cpu':>7} {'drv share':>9} {'speedup':>7}")


def report_lines(rows: list[dict]) -> list[str]:
    lines = []
    for row in rows:
        head = f"{row['graph']:<8} {row['mode']:<13} {row['pinned_states']:>8}"
        if row["explorer"] == "central":
            lines.append(f"{head} central: the driver-numbered graph {row['graph_bytes_per_state']:.0f} B/state, "
                         f"liveness judged on it in {row['liveness_cpu_seconds']:.2f} s of driver CPU")
            continue
        speedup = f"{row['speedup']:>6.2f}x" if "speedup" in row else f"{'':>7}"
        lines.append(f"{head} {row['explorer']:<9} {row['master']:<8} {row['load_average']:>5.1f} {row['seconds']:>7.1f} "
                     f"{row['driver_cpu_seconds']:>7.1f} {row['executors_cpu_seconds']:>8.1f} {row['jvm_cpu_seconds']:>7.1f} "
                     f"{row['driver_cpu_share']:>9.1%} {speedup}")
    return lines

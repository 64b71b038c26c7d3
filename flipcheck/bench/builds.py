"""The pure-Python and the compiled explorer side by side (docs/compiled.md).

Each configuration is explored in a fresh process per build, once with ``FLIPCHECK_PURE_PYTHON=1``
and once without (a process never mixes the two builds of a module: :mod:`flipcheck.compiled`),
back to back, so both meet the same load. A process runs ``python -m flipcheck.bench.builds
CONFIG_JSON ...`` and prints one JSON line per configuration: the build, the counts, the
properties violated with their trace lengths, the wall and CPU seconds of the search alone
(imports excluded) and its states/s per core (CPU time: other processes on a shared machine do
not stretch it). ``flipcheck bench explore --builds`` and tests/cover/test_compiled_build.py
use it; the configurations are the pinned ones of tests/manifests/protocol.json.

A configuration is a :class:`~flipcheck.model.protocol.Job`'s options as the manifest writes
them, plus an optional ``variant`` (reference_impl/protocol_variants.py) and ``reduction``:

>>> job = job_of({"graph": "pair", "mode": "aligned", "records": 1, "checkpoints": 1, "failures": 0})
>>> (len(job.tasks), job.mode, job.checkpoints, job.protocol.name)
(2, 'aligned', 1, 'flip-147')
>>> measure({"graph": "pair", "mode": "aligned", "records": 1, "checkpoints": 1, "failures": 0,
...          "variant": "cancel-pending-on-finish"})["trace_lengths"]
[5, 7, 7, 10]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from flipcheck.compiled import PURE_PYTHON_VARIABLE, active_modules, build_label

__all__ = ["PINNED", "pinned_entries", "pinned_configurations", "job_of", "measure", "measure_in_fresh_process", "compare"]

_ROOT = Path(__file__).resolve().parents[2]
#: The pinned protocol configurations (a repository file: the compiled build is a repository's too).
PINNED = _ROOT / "tests" / "manifests" / "protocol.json"
_NOT_JOB_OPTIONS = ("graph", "parallelism", "variant", "reduction")


def pinned_entries(path: Path = PINNED) -> list[dict]:
    """The manifest's entries of the correct protocol (``config``, ``distinct_states``,
    ``seconds``...); UsageError outside a source checkout, where the manifest is not."""
    from flipcheck.errors import UsageError

    if not path.is_file():
        raise UsageError(f"the benchmarks of the pinned configurations need a source checkout; {path} is not there")
    return [entry for entry in json.loads(path.read_text())["entries"]
            if entry["model"] == "flip-147" and entry["check"] == "properties"]


def pinned_configurations(path: Path = PINNED) -> list[tuple[dict, float]]:
    """``(config, seconds)`` of every pinned configuration of the correct protocol; ``seconds``
    is the pinned (informational) time of its exploration, for a budget."""
    return [(entry["config"], float(entry.get("seconds", 0.0))) for entry in pinned_entries(path)]


def job_of(config: dict):
    """The job a configuration stands for (``records`` None: the graph's per-source flags)."""
    from flipcheck.generators.protocol import example_graph
    from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, make_job

    options = {k: v for k, v in config.items() if k not in _NOT_JOB_OPTIONS and v is not None}
    graph = example_graph(config["graph"], config.get("parallelism", 1))
    return make_job(graph, config.get("variant", CORRECT_PROTOCOL), **options)


def measure(config: dict) -> dict:
    """Explore ``config`` in this process's build (fingerprints kept, liveness judged)."""
    from flipcheck.properties.protocol_explore import explore_job

    job = job_of(config)
    started, cpu_started = time.perf_counter(), time.process_time()
    found = explore_job(job, store="fingerprints", reduction=config.get("reduction", "none"))
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return {"config": config, "build": build_label(), "compiled_modules": len(active_modules()),
            "states": found.states, "transitions": found.transitions, "complete": found.complete,
            "violated": sorted({c.property for c in found.counterexamples}),
            "trace_lengths": sorted(c.length for c in found.counterexamples),
            "seconds": round(seconds, 3), "states_per_second": round(found.states / max(seconds, 1e-9)),
            # per core: the CPU time of this process, which other processes on the machine do not stretch
            "cpu_seconds": round(cpu_seconds, 3), "states_per_cpu_second": round(found.states / max(cpu_seconds, 1e-9)),
            "bytes_per_state": round(found.graph.bytes_per_state, 1)}


def measure_in_fresh_process(configs: list[dict], pure: bool) -> list[dict]:
    """:func:`measure` of each configuration in one new process, pure Python or the default build."""
    env = dict(os.environ)
    env.pop(PURE_PYTHON_VARIABLE, None)
    if pure:
        env[PURE_PYTHON_VARIABLE] = "1"
    done = subprocess.run([sys.executable, "-m", "flipcheck.bench.builds", *map(json.dumps, configs)], env=env,
                          capture_output=True, text=True, check=True, cwd=_ROOT)
    return [json.loads(line) for line in done.stdout.splitlines()]


def compare(config: dict, pure_first: bool = True) -> tuple[dict, dict]:
    """``(pure, default build)`` measurements of ``config``, back to back in fresh processes
    (the pure one first unless ``pure_first`` is False: alternating the order over repeated
    pairs keeps a machine that speeds up or slows down from favouring one build)."""
    if pure_first:
        pure = measure_in_fresh_process([config], pure=True)[0]
        return pure, measure_in_fresh_process([config], pure=False)[0]
    compiled = measure_in_fresh_process([config], pure=False)[0]
    return measure_in_fresh_process([config], pure=True)[0], compiled


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(json.dumps(measure(json.loads(argument))), flush=True)

"""Explore a few protocol configurations in this process's build and print one JSON line each:
the build, the counts, the properties violated and the states/s. Run it twice, once with
``FLIPCHECK_PURE_PYTHON=1``, to compare the compiled build with the pure-Python one (docs/compiled.md).

Usage: ``.venv/bin/python scripts/compare_builds.py CONFIG ...`` where CONFIG is
``GRAPH:MODE:RECORDS:CHECKPOINTS:FAILURES[:VARIANT[:REDUCTION]]``
(``pair:aligned:1:1:0:cancel-pending-on-finish``, ``diamond:aligned:1:1:0:flip-147:all``).
"""

from __future__ import annotations

import json
import sys
import time

from flipcheck.compiled import active_modules, build_label
from flipcheck.generators.protocol import example_graph
from flipcheck.properties.protocol_explore import explore_job
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, make_job


def measure(config: str) -> dict:
    graph, mode, records, checkpoints, failures, *rest = config.split(":")
    variant, reduction = (rest + [CORRECT_PROTOCOL, "none"][len(rest):])[:2]
    job = make_job(example_graph(graph), variant, mode=mode,
                   records=int(records), checkpoints=int(checkpoints), failures=int(failures))
    started = time.perf_counter()
    found = explore_job(job, store="fingerprints", reduction=reduction)
    seconds = time.perf_counter() - started
    return {"config": config, "build": build_label(), "compiled_modules": len(active_modules()),
            "states": found.states, "transitions": found.transitions,
            "violated": sorted({c.property for c in found.counterexamples}),
            "trace_lengths": sorted(c.length for c in found.counterexamples),
            "seconds": round(seconds, 3), "states_per_second": round(found.states / seconds)}


if __name__ == "__main__":
    for config in sys.argv[1:]:
        print(json.dumps(measure(config)), flush=True)

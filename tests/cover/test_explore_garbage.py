"""The searches pause Python's cycle collector while they run
(:func:`flipcheck.properties.explore.cycle_collector_paused`): their states are immutable tuples,
which form no reference cycle, and the collector walked every live one again and again. That is
sound only while the steps of a search make no cyclic garbage, which would pile up, one lot per
step, until the search ends. Building a job may leave a little (a job's own memo tables and
classes), once; so after each design's search ``gc.collect()`` must find fewer objects than a
tenth of its states."""

import gc

import pytest

import manifest
import flipcheck
from flipcheck.designs.batch_recovery import GRAPHS
from flipcheck.generators.protocol import example_graph
from flipcheck.model.barriers import Config as BarriersConfig
from flipcheck.model.batch_recovery import Config as BatchConfig
from flipcheck.model.split_assignment import Config as SplitConfig
from flipcheck.properties import batch_recovery_explore, split_assignment_explore
from flipcheck.properties.barriers_explore import explore_task
from flipcheck.properties.explore import explore_graph


def _config(design: str) -> dict:
    """The configuration of the design's largest pinned search of the model under 5,000 states."""
    return max((e for e in manifest.entries(design) if e["model"] in ("spec", "flink")
                and e.get("distinct_states", 10**9) < 5_000), key=lambda e: e["distinct_states"])["config"]


def _barriers():
    c = _config("barriers")
    return explore_task(BarriersConfig(c["channels"], c["mode"], c["after_finished"], c["alignment_timeout"]),
                        "flink", c["max_id"])


def _batch():
    c = _config("batch_recovery")
    return batch_recovery_explore.explore_job(BatchConfig(**dict(c, graph=GRAPHS[c["graph"]])))


SEARCHES = {
    "protocol": lambda: flipcheck.explore(example_graph("pair"), records=1, reduction="none", failures=1),
    "protocol, every reduction": lambda: flipcheck.explore(example_graph("pair"), records=1, reduction="all", failures=1),
    "split assignment": lambda: split_assignment_explore.explore_job(SplitConfig(**_config("split_assignment"))),
    "batch recovery": _batch,
    "barriers": _barriers,
}


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_search_leaves_no_cyclic_garbage_per_step(name):
    gc.collect()
    result = SEARCHES[name]()
    states = result.counts["states"] if hasattr(result, "counts") else result.states   # the public API's Result
    assert states > 100
    assert gc.collect() < states / 10


def test_the_collector_is_paused_during_a_search_and_running_after_it():
    seen = []

    def successors(n):
        seen.append(gc.isenabled())
        return [("+1", n + 1, [])] if n < 3 else []

    assert gc.isenabled()
    explore_graph([0], successors)
    assert seen and not any(seen) and gc.isenabled()


def test_a_step_that_makes_a_cycle_leaves_garbage_the_check_above_counts():
    def successors(n):
        node: list = []
        node.append(node)   # a reference cycle, garbage once the step returns
        return [("+1", n + 1, [])] if n < 500 else []

    gc.collect()
    graph = explore_graph([0], successors)
    assert gc.collect() >= len(graph) > 100

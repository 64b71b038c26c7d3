"""Exhaustive exploration of the approximate-recovery model, with the counts pinned in
tests/manifests/approximate_recovery.json (like the manifests of tlaplus/Examples): a change of
the model's behaviour shows up here; update the manifest on purpose and say why.

Every path of the subpartition is checked with every property and against the engine, every
barrier scenario with its liveness, every failure set of every topology up to 3 vertices and
parallelism 2 (and z3 for all failures at once), every failure point of the small dataflows.
"""

import pytest

import manifest
from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.model.graph_json import graph_to_json
from flipcheck.properties.approximate_recovery_explore import (
    barrier_scenarios, explore_barriers, explore_dataflow, explore_restart_sets, explore_subpartition,
)
from flipcheck.properties.z3_approximate_recovery import prove_restart_set
from flipcheck.designs.approximate_recovery import DATAFLOW_GRAPHS

DESIGN = "approximate-recovery"


def bounds(entry: dict) -> dict:
    return {k: v for k, v in entry["config"].items() if k != "part"}


def test_subpartition_every_path_pinned():
    pinned = manifest.entry(DESIGN, config={"part": "subpartition"})
    with manifest.measured(pinned):
        result = explore_subpartition(pinned["model"], **bounds(pinned))
    assert result.complete and result.problems == []
    manifest.pin(pinned, distinct_states=result.states, transitions=result.transitions, depth=result.depth)


def test_barrier_scenarios_every_interleaving_pinned():
    pinned = manifest.entry(DESIGN, config={"part": "barriers"})
    with manifest.measured(pinned):
        scenarios = barrier_scenarios(pinned["config"]["max_channels"], pinned["config"]["max_id"])
        results = [explore_barriers(pinned["model"], s) for s in scenarios]
    assert all(r.complete and not r.problems for r in results)
    manifest.pin(pinned, scenarios=len(scenarios), distinct_states=sum(r.states for r in results),
                 transitions=sum(r.transitions for r in results))


def restart_graphs(pinned: dict) -> list:
    space = topology_space(pinned["config"]["max_vertices"], pinned["config"]["max_parallelism"])
    return [space.job_graph(i) for i in range(len(space))]


def test_restart_sets_every_failure_of_every_topology():
    pinned = manifest.entry(DESIGN, config={"part": "restart-sets"}, check="enumeration")
    with manifest.measured(pinned):
        graphs = restart_graphs(pinned)
        cases, found = explore_restart_sets(pinned["model"], graphs)
    assert found == []
    manifest.pin(pinned, topologies=len(graphs), cases=cases)


def test_restart_sets_z3_all_failures_at_once():
    pinned = manifest.entry(DESIGN, config={"part": "restart-sets"}, check="z3")
    with manifest.measured(pinned):
        graphs = restart_graphs(pinned)
        proved = all(prove_restart_set(g, pinned["model"]).proved for g in graphs)
    assert proved
    manifest.pin(pinned, topologies=len(graphs))


DATAFLOWS = manifest.entries(DESIGN, config={"part": "dataflow"})


@pytest.mark.parametrize("index", range(len(DATAFLOW_GRAPHS)))
def test_dataflow_every_failure_point_pinned(index):
    assert len(DATAFLOWS) == len(DATAFLOW_GRAPHS)
    pinned, graph = DATAFLOWS[index], DATAFLOW_GRAPHS[index]
    assert graph_to_json(graph) == pinned["config"]["graph"]
    with manifest.measured(pinned):
        result = explore_dataflow(pinned["model"], graph, records=pinned["config"]["records"])
    assert result.complete and result.problems == []
    manifest.pin(pinned, distinct_states=result.states, transitions=result.transitions,
                 failures_checked=result.failures_checked)

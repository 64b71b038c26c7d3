"""Exhaustive exploration of the approximate-recovery model, with the counts pinned in
tests/manifests/approximate_recovery.json (like the manifests of tlaplus/Examples): a change of
the model's behaviour shows up here; update the manifest on purpose and say why.

Every path of the subpartition is checked with every property and against the engine, every
barrier scenario with its liveness, every failure set of every topology up to 3 vertices and
parallelism 2 (and z3 for all failures at once), every failure point of the small dataflows.
"""

import json
from pathlib import Path

import pytest

from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.model.graph_json import graph_to_json
from flipcheck.properties.approximate_recovery_explore import (
    barrier_scenarios, explore_barriers, explore_dataflow, explore_restart_sets, explore_subpartition,
)
from flipcheck.properties.z3_approximate_recovery import prove_restart_set
from flipcheck.designs.approximate_recovery import DATAFLOW_GRAPHS

pytestmark = pytest.mark.slow
MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "approximate_recovery.json").read_text())


def test_subpartition_every_path_pinned():
    pinned = MANIFEST["subpartition"]
    result = explore_subpartition("flip135", **pinned["bounds"])
    assert result.complete and result.problems == []
    assert (result.states, result.transitions, result.depth) == (
        pinned["distinct_states"], pinned["transitions"], pinned["depth"])


def test_barrier_scenarios_every_interleaving_pinned():
    pinned = MANIFEST["barriers"]
    scenarios = barrier_scenarios(pinned["max_channels"], pinned["max_id"])
    results = [explore_barriers("flip135", s) for s in scenarios]
    assert all(r.complete and not r.problems for r in results)
    assert (len(scenarios), sum(r.states for r in results), sum(r.transitions for r in results)) == (
        pinned["scenarios"], pinned["distinct_states"], pinned["transitions"])


def test_restart_sets_every_failure_of_every_topology_and_z3():
    pinned = MANIFEST["restart_sets"]
    space = topology_space(pinned["max_vertices"], pinned["max_parallelism"])
    graphs = [space.job_graph(i) for i in range(len(space))]
    cases, found = explore_restart_sets("flip135", graphs)
    assert (len(graphs), cases, found) == (pinned["topologies"], pinned["failure_cases"], [])
    assert all(prove_restart_set(g, "flip135").proved for g in graphs)


@pytest.mark.parametrize("index", range(len(DATAFLOW_GRAPHS)))
def test_dataflow_every_failure_point_pinned(index):
    pinned = MANIFEST["dataflow"][index]
    graph = DATAFLOW_GRAPHS[index]
    assert graph_to_json(graph) == pinned["graph"]
    result = explore_dataflow("flip135", graph, records=pinned["records"])
    assert result.complete and result.problems == []
    assert (result.states, result.transitions, result.failures_checked) == (
        pinned["run_states"], pinned["transitions"], pinned["failures_checked"])

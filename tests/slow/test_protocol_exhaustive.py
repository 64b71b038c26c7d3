"""Exhaustive exploration of the whole-job protocol, distinct-state counts pinned in
tests/manifests/protocol.json (like tlaplus/Examples manifests): the correct protocol explores
completely with zero violations, with and without partial-order and symmetry reduction (the
reduced counts pinned too; a job without symmetries pins the unreduced and partial-order counts
for symmetry and both, the searches they are), and a behaviour change of the model shows up as
a new count (update the manifest on purpose, and say why)."""

import pytest

import manifest
from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import Job
from flipcheck.properties.protocol_explore import explore_job
from test_reduction_keeps_verdicts import reductions_that_differ

CONFIGS = manifest.entries("protocol")


@pytest.mark.parametrize("entry", CONFIGS, ids=manifest.entry_id)
def test_correct_protocol_complete_without_violation(entry):
    options = dict(entry["config"])
    graph = options.pop("graph")
    parallelism = options.pop("parallelism", 1)
    if options["records"] is None:
        del options["records"]     # the graph's per-source flags
    job = Job(example_graph(graph, parallelism), **options)
    with manifest.measured(entry):
        result = explore_job(job)
    assert result.complete
    assert result.counterexamples == []
    reduced = {}
    for reduction in reductions_that_differ(job):
        reduced[reduction] = explore_job(job, store="fingerprints", reduction=reduction)
        assert reduced[reduction].complete and reduced[reduction].counterexamples == []
        assert reduced[reduction].states <= result.states
    reduced.setdefault("symmetry", result)       # no symmetries: the same search as without reduction
    reduced.setdefault("all", reduced["por"])    # and "all" the same as "por"
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions,
                 por_states=reduced["por"].states, por_transitions=reduced["por"].transitions,
                 symmetry_states=reduced["symmetry"].states, all_states=reduced["all"].states)

"""Exhaustive exploration of the whole-job protocol, distinct-state counts pinned in
tests/manifests/protocol.json (like tlaplus/Examples manifests): the correct protocol explores
completely with zero violations, and a behaviour change of the model shows up as a new count
(update the manifest on purpose, and say why)."""

import pytest

import manifest
from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import Job
from flipcheck.properties.protocol_explore import explore_job

CONFIGS = manifest.entries("protocol")


@pytest.mark.parametrize("entry", CONFIGS, ids=manifest.entry_id)
def test_correct_protocol_complete_without_violation(entry):
    options = dict(entry["config"])
    graph = options.pop("graph")
    if options["records"] is None:
        del options["records"]     # the graph's per-source flags
    with manifest.measured(entry):
        result = explore_job(Job(example_graph(graph), **options))
    assert result.complete
    assert result.counterexamples == []
    manifest.pin(entry, distinct_states=result.states, transitions=result.transitions)

"""Exhaustive exploration of the whole-job protocol, distinct-state counts pinned in
tests/manifests/protocol.json (like tlaplus/Examples manifests): the correct protocol explores
completely with zero violations, and a behaviour change of the model shows up as a new count
(update the manifest on purpose, and say why)."""

import json
from pathlib import Path

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import Job
from flipcheck.properties.protocol_explore import explore_job

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "protocol.json").read_text())
CONFIGS = MANIFEST["configs"]


def _id(entry):
    return (f"{entry['graph']}-{entry['mode']}-r{entry['records']}-c{entry['checkpoints']}-f{entry['failures']}"
            + ("-stop" if entry.get("stop_with_savepoint") else ""))


@pytest.mark.slow
@pytest.mark.parametrize("entry", CONFIGS, ids=[_id(e) for e in CONFIGS])
def test_correct_protocol_complete_without_violation(entry):
    options = {"mode": entry["mode"], "checkpoints": entry["checkpoints"], "failures": entry["failures"],
               "stop_with_savepoint": entry.get("stop_with_savepoint", False)}
    if entry["records"] is not None:
        options["records"] = entry["records"]
    result = explore_job(Job(example_graph(entry["graph"]), **options))
    assert result.complete
    assert result.counterexamples == []
    assert (result.states, result.transitions) == (entry["distinct_states"], entry["transitions"])

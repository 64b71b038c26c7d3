"""The longer half of tests/quality/test_first_configurations.py: the catalogued protocol mutants
the first configuration set catches past its first few thousand states, and the example
project's bug; FLIP-147 as Flink ships it passes the whole set, every state searched within the ci
profile's bound, and the larger jobs added for a change to one switch."""

from pathlib import Path

import pytest

import flipcheck
from flipcheck.designs.protocol import FIRST_CONFIGURATIONS, FIRST_CONFIGURATIONS_FOR_SWITCHES
from flipcheck.generators.protocol import example_graph
from flipcheck.properties.protocol_coverage import NOT_EXPLORED
from flipcheck.pytest_plugin import PROFILES, Checker
from test_first_configurations import SLOW, assert_the_default_search_fails


@pytest.mark.parametrize("mutant", SLOW)
def test_the_default_search_catches_the_mutant(mutant, tmp_path):
    assert_the_default_search_fails(mutant, tmp_path)


def test_the_default_search_catches_the_example_projects_plan_bug(tmp_path):
    # A plan deciding per vertex: wrong over a POINTWISE edge only once part of the upstream
    # vertex finished, which the two pipelines added for a plan change show.
    protocols = Path(__file__).resolve().parents[2] / "examples" / "user-project" / "src" / "my_checkpointing"
    report = assert_the_default_search_fails(f"{protocols / 'protocols.py'}:VertexLevelTrigger", tmp_path)
    assert "searched: parallel graph, aligned, records 0, checkpoints 1, failures 0: " in report


def test_the_shipped_protocol_passes_the_whole_first_set_and_fires_every_explorable_rule(tmp_path):
    result = Checker(PROFILES["ci"], "first-set", tmp_path).explore()
    assert result.ok and result.counts["complete"] and result.warnings == ()
    assert result.counts["configurations"] == len(result.detail["configurations"]) == len(FIRST_CONFIGURATIONS)
    never = [rule for rule, steps in result.detail["coverage"]["rules"].items() if not steps]
    assert sorted(never) == sorted(NOT_EXPLORED)


@pytest.mark.parametrize("config", [config for config, _ in FIRST_CONFIGURATIONS_FOR_SWITCHES], ids=str)
def test_the_shipped_protocol_passes_each_job_added_for_a_switch(config):
    bounds = config._asdict()
    result = flipcheck.explore(example_graph(bounds.pop("graph")), max_states=PROFILES["ci"].max_states, **bounds)
    assert result.ok and result.counts["complete"]

"""The suite registry the sweep, replay and verify drive: case ids, checks, minimising, describing."""

import json
import os
import subprocess
import sys

import pytest

from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.model.graph_json import parse_graph
from flipcheck.model.plan import checkpoint_plan
from flipcheck.properties.barriers_explore import explore_task
from flipcheck.reference_impl.plan import plan_algorithm
from flipcheck.designs import DesignUnavailable, available_designs
from flipcheck.designs.suite import CRASH, checked, get_suite, resolve_case

IDS = ["plan:42:0", "plan:42:977", "plan:x-1:5", "barriers:42:0", "barriers:7:1234", "plan:exhaustive-v3-p2:77",
       "barriers:exhaustive-c2-i2:5", "protocol:42:3", "protocol:exhaustive-default:40"]


def _describe(case_id):
    suite, space, index = resolve_case(case_id)
    return suite.describe(space.case(index))


def test_case_ids_regenerate_the_same_case_in_another_process():
    """Another interpreter, another hash seed: the same cases (nothing depends on set order or hash())."""
    here = {case_id: _describe(case_id) for case_id in IDS}
    script = ("import json, sys; sys.path.insert(0, {path!r}); from test_suites import _describe; "
              "print(json.dumps({{i: _describe(i) for i in {ids!r}}}))").format(path=os.path.dirname(__file__), ids=IDS)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    there = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                                      check=True).stdout)
    assert there == json.loads(json.dumps(here))


def test_registry_names_and_unavailable_suites(monkeypatch):
    from flipcheck import designs

    assert available_designs()[:3] == ["plan", "barriers", "protocol"]
    monkeypatch.setitem(designs.DESIGNS, "protocol", designs.Registered("flipcheck.designs.not_in_this_build", "gone"))
    with pytest.raises(DesignUnavailable, match="not available in this build"):
        get_suite("protocol")
    assert "protocol" not in available_designs()
    with pytest.raises(KeyError):
        get_suite("nonsense")


@pytest.mark.parametrize("text,problem", [
    ("plan:42", "is not SUITE:SEED:INDEX"),
    ("plan:42:x", "is not SUITE:SEED:INDEX"),
    ("mystery:42:1", "unknown suite"),
    ("plan:exhaustive-v3-p2:100000", "outside"),
    ("plan:exhaustive-v9-p2:1", "--max-vertices"),
    ("plan:exhaustive-bogus:1", "is not exhaustive"),
    ("barriers:exhaustive-c7-i2:1", "is not exhaustive"),
])
def test_bad_case_ids_are_explained(text, problem):
    with pytest.raises(ValueError, match=problem):
        resolve_case(text)


def test_plan_random_case_is_checked_with_every_plan_property():
    suite, space, index = resolve_case("plan:1:0")
    graph = space.case(index)
    assert space.check(graph, "flink").violations == []
    bad = space.check(graph, "wiki-b")
    assert set(bad.properties) >= {"equals_spec"}
    assert space.shape(graph).startswith(f"{len(graph.vertices)}v ") and space.magnitude(graph) == graph.num_tasks
    assert parse_graph(suite.describe(graph)) == graph


def test_plan_exhaustive_uses_enumeration_or_z3_and_both_find_wiki_b():
    space = get_suite("plan").space("exhaustive-v4-p3")
    topologies = topology_space(4, 3)
    small = next(i for i in range(len(topologies)) if topologies[i].tasks == 4 and topologies[i].edges)
    large = next(i for i in range(len(topologies)) if topologies[i].tasks == 9 and len(topologies[i].edges) >= 3)
    for index, method in ((2 * small, "enumerate"), (2 * large, "z3")):
        graph = space.case(index)
        ok = space.check(graph, "flink")
        assert (ok.violations, ok.method, ok.assignments) == ([], method, 2 ** graph.num_tasks)
    found = [space.check(space.case(2 * i), "wiki-b") for i in (small, large)]
    for outcome in found:
        if outcome.violations:  # a concrete, re-checked counterexample
            cex = outcome.counterexample
            assert plan_algorithm("wiki-b")(cex) != checkpoint_plan(cex)
    assert any(o.violations for o in found)


def test_flag_off_cases_follow_flag_on_cases():
    space = get_suite("plan").space("exhaustive-v2-p2")
    assert space.case(6).checkpoints_after_tasks_finished and not space.case(7).checkpoints_after_tasks_finished
    assert space.case(6).with_flag(False) == space.case(7)


def test_plan_minimise_keeps_the_property_and_shrinks():
    suite, space, _ = resolve_case("plan:1:0")
    graph = space.case(0)
    small = suite.minimise(graph, "wiki-b", "no_triggered_task_has_running_predecessor")
    assert small.num_tasks < graph.num_tasks and small.num_tasks <= 3
    assert "no_triggered_task_has_running_predecessor" in space.check(small, "wiki-b").properties


def test_barrier_minimise_finds_a_shortest_trace():
    suite = get_suite("barriers")
    space = suite.space("5")
    outcome = next(o for o in (space.check(space.case(i), "eop-not-aligned") for i in range(200)) if o.violations)
    prop = outcome.properties[0]
    config, events = suite.minimise(outcome.counterexample, "eop-not-aligned", prop)
    assert prop in space.check((config, events), "eop-not-aligned").properties
    # Breadth-first exploration of every configuration this small gives no shorter trace.
    others = set(suite.property_names()) - {prop, CRASH}
    for channels in range(1, config.channels + 1):
        shorter = explore_task(config.__class__(channels, config.mode, config.after_finished, config.alignment_timeout),
                               "eop-not-aligned", max_id=2, refinement=prop == "refines_model",
                               check_properties=prop != "refines_model", skip=others)
        if any(v.property == prop for v in shorter.problems):
            assert len(shorter.trace) >= len(events)
    assert len(events) <= 2


def test_barrier_check_cuts_where_the_handler_blocks_differently():
    """`no-blocking` never blocks; sequences follow the model, so they stay receivable, and
    refinement reports the difference at the first barrier."""
    suite = get_suite("barriers")
    space = suite.space("9")
    outcome = next(o for o in (space.check(space.case(i), "no-blocking") for i in range(100)) if o.violations)
    assert outcome.properties[0] == "refines_model"
    config, events = outcome.counterexample
    assert suite.describe((config, events))["events"]


def test_a_crash_of_the_checked_code_is_a_violation():
    def explode(*_):
        raise ZeroDivisionError("boom")

    outcome = checked(explode, 1)
    assert outcome.properties == [CRASH] and "ZeroDivisionError: boom" in outcome.violations[0].message


def test_unknown_algorithm_names_the_known_ones():
    with pytest.raises(ValueError, match="flink"):
        get_suite("barriers").check_name("wiki-b")

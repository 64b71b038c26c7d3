"""Barrier properties (properties/barriers_properties.py) and the generic explorer (properties/explore.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flipcheck.generators.channel_events import configs, event_sequences
from flipcheck.model.barriers import (
    ABORTED, AT_LEAST_ONCE, INPUT_END_OF_STREAM, SUBSUMED, Config, Step, View, barrier, data, end_of_partition,
    rpc_trigger, run,
)
from flipcheck.properties.barriers_explore import EXPECTED_FAILURES, explore_model, explore_task
from flipcheck.properties.barriers_properties import BARRIER_PROPERTIES, MONITORS, PROPERTY_NAMES, check_trace
from flipcheck.properties.explore import explore
from flipcheck.reference_impl.barriers import make_task


def expected_to_hold(config):
    return [p for p in BARRIER_PROPERTIES if (config.mode, p.name) not in EXPECTED_FAILURES]


@given(data=st.data())
@settings(max_examples=100)
def test_model_traces_satisfy_every_property(data):
    config = data.draw(configs())
    trace = run(config, data.draw(event_sequences(config, max_length=20)))
    assert check_trace(config, trace, expected_to_hold(config)) == []


@given(data=st.data())
@settings(max_examples=100)
def test_flink_implementation_refines_the_model(data):
    config = data.draw(configs())
    events = data.draw(event_sequences(config, max_length=20))
    task = make_task(config)
    trace = [Step(e, task.process(e), task.view()) for e in events]
    assert check_trace(config, trace, expected_to_hold(config)) == []


def test_registry():
    assert len(set(PROPERTY_NAMES)) == len(PROPERTY_NAMES) == len(MONITORS) + 1  # + refines_model
    for prop in BARRIER_PROPERTIES:
        assert prop.meaning and prop.source and prop.check.__doc__


def fake(config, *steps):
    """A hand-written trace: (event, outputs, pending, blocked) per step, all channels open."""
    return [Step(e, outputs, View(pending, blocked, config.all_channels)) for e, outputs, pending, blocked in steps]


def names(config, trace):
    return {v.property for v in check_trace(config, trace) if v.property != "refines_model"}


def test_out_of_order_trigger_is_reported():
    cfg = Config(2)
    trace = fake(cfg, (barrier(2, 0), (("triggered", 2, "aligned"),), None, 0),
                 (barrier(1, 1), (("triggered", 1, "aligned"),), None, 0))
    assert "triggered_ids_increase" in names(cfg, trace)


def test_abort_on_end_of_partition_with_the_feature_on_is_reported():
    cfg = Config(2)
    trace = fake(cfg, (barrier(1, 0), (("alignment_start", 1), ("blocked", 0)), 1, 1),
                 (end_of_partition(1), (("unblocked", 0), (ABORTED, 1, INPUT_END_OF_STREAM)), None, 0))
    trace[-1] = trace[-1]._replace(view=View(None, 0, 0b01))
    assert {"end_of_partition_alignment", "abort_reasons"} <= names(cfg, trace)


def test_subsumption_in_the_tracker_is_reported():
    cfg = Config(2, AT_LEAST_ONCE)
    trace = fake(cfg, (barrier(1, 0), (), 1, 0), (barrier(2, 0), ((ABORTED, 1, SUBSUMED),), 2, 0))
    assert "abort_reasons" in names(cfg, trace)


def test_rpc_trigger_that_waits_is_reported():
    cfg = Config(1)
    trace = fake(cfg, (rpc_trigger(1), (), 1, 0))
    assert "rpc_trigger_completes_at_once" in names(cfg, trace)


def test_missing_in_flight_record_is_reported():
    cfg = Config(2, "unaligned")
    trace = fake(cfg, (barrier(1, 0), (("alignment_start", 1), ("triggered", 1, "unaligned")), 1, 0),
                 (data(1), (), 1, 0))
    assert "in_flight_exact" in names(cfg, trace)


def test_violations_name_their_step():
    cfg = Config(1)
    trace = fake(cfg, (data(0), (), None, 0), (rpc_trigger(1), (), 1, 0))
    [violation] = [v for v in check_trace(cfg, trace) if v.property == "rpc_trigger_completes_at_once"]
    assert violation.message.startswith("step 2:") and violation.witness == 1


# -- explorer ----------------------------------------------------------------------------------------


def test_generic_bfs_finds_shortest_trace_and_counts_states():
    graph = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": ["e"], "e": []}

    def successors(node):
        return [(f"{node}->{n}", n, ["reached e"] if n == "e" else []) for n in graph[node]]

    result = explore(["a"], successors)
    assert result.trace == ["a->b", "b->d", "d->e"] and result.problems == ["reached e"] and not result.complete
    full = explore(["a"], lambda n: [(None, m, []) for m in graph[n]])
    assert (full.states, full.transitions, full.depth, full.complete) == (5, 5, 3, True)
    bounded = explore(["a"], lambda n: [(None, m, []) for m in graph[n]], max_states=3)
    assert bounded.states == 3 and not bounded.complete
    flagged = explore(["a"], lambda n: [(None, m, []) for m in graph[n]], check_state=lambda n: ["d"] if n == "d" else [])
    assert flagged.final_state == "d" and len(flagged.trace) == 2


def test_small_exploration_of_model_and_implementation():
    cfg = Config(2)
    model = explore_model(cfg, max_id=2, check_properties=True)
    assert model.complete and model.problems == []
    task = explore_task(cfg, "flink", max_id=2)
    assert task.complete and task.problems == []
    bad = explore_task(cfg, "eop-aborts-pending", max_id=2)
    assert {v.property for v in bad.problems} >= {"refines_model"} and len(bad.trace) == 2

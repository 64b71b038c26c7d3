"""The abstraction of model states that coverage by real runs is measured in (issue 26, item 2;
docs/coverage.md)."""

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import Job, initial_state, run
from flipcheck.properties.protocol_abstraction import (
    abstract_state, coverage_of, covered, describe, step_kind, targets,
)
from flipcheck.properties.protocol_explore import rename_ids


def _pair(failures=0, records=0):
    return Job(example_graph("pair"), records=records, checkpoints=1, failures=failures)


def test_targets_are_deterministic_and_hold_a_failover_only_when_one_may_happen():
    without = targets(_pair(failures=0))
    assert without and without == targets(_pair(failures=0))
    assert "failover" not in {kind for _, kind, _ in without}
    with_one = targets(_pair(failures=1))
    failovers = [t for t in with_one if t.kind == "failover"]
    assert failovers and all(t.target.failovers == t.source.failovers + 1 == 1 for t in failovers)
    # every failure-free target is still a target when a failure may happen: the bound only adds
    assert without <= with_one


def test_the_abstraction_forgets_checkpoint_ids_and_records_but_keeps_kinds():
    job = _pair(records=1)
    s = run(job, [("trigger", 1), ("rpc", 0, 1), ("emit", 0, 0)])
    assert abstract_state(job, rename_ids(s, {1: 5})) == abstract_state(job, s)
    a = abstract_state(job, s)
    assert a.channels == (("B", "D"),) and a.pending and a.tasks[0].checkpointing
    assert "src[0]->sink[0]:B,D" in describe(job, a)


def test_step_kinds_name_the_polled_message():
    assert step_kind(("receive", 1, 0, ("B", 3))) == "receive B"
    assert step_kind(("failover",)) == "failover"


def test_a_behaviour_inside_the_bound_is_covered_and_one_beyond_it_is_counted_outside():
    job = _pair(failures=1)
    behaviour = [("end-of-data", 0), ("failover",), ("end-of-data", 0)]
    reached = covered(job, behaviour)
    assert len(reached) == 3
    inside = coverage_of(targets(job), reached)
    assert (inside.covered, inside.outside) == (3, 0) and len(inside.missing) == len(inside.targets) - 3
    # The same run measured against failure-free targets: its failover and what follows are outside.
    beyond = coverage_of(targets(_pair(failures=0)), reached)
    assert beyond.covered == 1 and beyond.outside == 2
    assert {t.kind for t in beyond.outside_targets} == {"failover", "end-of-data"}


def test_the_initial_state_is_every_task_running_and_every_channel_empty():
    job = _pair()
    a = abstract_state(job, initial_state(job))
    assert [t.phase for t in a.tasks] == ["RUNNING", "RUNNING"] and a.channels == ((),) and a.failovers == 0

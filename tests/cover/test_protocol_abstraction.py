"""The abstraction of model states that coverage by real runs is measured in (issue 26, item 2;
docs/coverage.md)."""

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import Job, initial_state, run
from flipcheck.properties.protocol_abstraction import (
    ABSTRACTIONS, abstract_state, coverage_of, covered, describe, step_kind, targets, task_view, transition_from_key,
    transition_key, with_vertex_names,
)
from flipcheck.properties.protocol_explore import rename_ids


def _pair(failures=0, records=0, parallelism=1):
    return Job(example_graph("pair", parallelism), records=records, checkpoints=1, failures=failures)


@pytest.mark.parametrize("abstraction", ABSTRACTIONS)
def test_targets_are_deterministic_and_hold_a_failover_only_when_one_may_happen(abstraction):
    without = targets(_pair(failures=0), abstraction=abstraction)
    assert without and without == targets(_pair(failures=0), abstraction=abstraction)
    assert "failover" not in {kind for _, kind, _ in without}
    with_one = targets(_pair(failures=1), abstraction=abstraction)
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


@pytest.mark.parametrize("abstraction", ABSTRACTIONS)
def test_a_behaviour_inside_the_bound_is_covered_and_one_beyond_it_is_counted_outside(abstraction):
    job = _pair(failures=1)
    behaviour = [("end-of-data", 0), ("failover",), ("end-of-data", 0)]
    reached = covered(job, behaviour, abstraction=abstraction)
    assert len(reached) == 3
    inside = coverage_of(targets(job, abstraction=abstraction), reached)
    assert (inside.covered, inside.outside) == (3, 0) and len(inside.missing) == len(inside.targets) - 3
    # The same run measured against failure-free targets: its failover and what follows are outside.
    beyond = coverage_of(targets(_pair(failures=0), abstraction=abstraction), reached)
    assert beyond.covered == 1 and beyond.outside == 2
    assert {t.kind for t in beyond.outside_targets} == {"failover", "end-of-data"}


def test_the_initial_state_is_every_task_running_and_every_channel_empty():
    job = _pair()
    a = abstract_state(job, initial_state(job))
    assert [t.phase for t in a.tasks] == ["RUNNING", "RUNNING"] and a.channels == ((),) and a.failovers == 0


def test_a_task_sees_itself_and_its_inputs_not_the_other_tasks_nor_the_coordinator():
    job = _pair(records=1, parallelism=2)          # src[0], src[1] -> sink[0], sink[1], all to all
    s = run(job, [("trigger", 1), ("rpc", 0, 1)])  # src[0] snapshots and sends its barriers
    sink = job.task_index[("sink", 0)]
    view = task_view(job, s, sink)
    assert view.actor == "sink" and view.task.phase == "RUNNING" and not view.task.checkpointing
    # one of its channels holds a barrier, the other nothing: the distinct kinds, per upstream vertex
    assert view.around == (("src", ((), ("B",))),) and view.coordinator == () and view.failovers == 0
    # once src[1] has sent its barrier too, both channels hold one: one kind, channels merged
    later = run(job, [("rpc", 1, 1)], s)
    assert task_view(job, later, sink).around == (("src", (("B",),)),)
    # the pending checkpoint is the coordinator's, not the task's
    assert task_view(job, run(job, [("trigger", 1)]), sink) == task_view(job, initial_state(job), sink)
    # subtasks are merged: src[0] and src[1] are both "src"
    assert task_view(job, s, 1).actor == task_view(job, s, 0).actor == "src"
    coordinator = task_view(job, s, None)
    assert coordinator.actor == "coordinator" and coordinator.coordinator[0]      # a checkpoint is pending
    assert coordinator.around == (("src", ("RUNNING",)), ("sink", ("RUNNING",)))
    assert "sink:RUNNING | src->:empty/B | failovers 0" == describe(job, view)


def test_the_task_views_do_not_grow_with_parallelism_as_the_whole_job_does():
    # pair x2 explores 372,406 states in full: the first 3,000 of them, breadth-first, suffice
    one, two = _pair(), _pair(parallelism=2)
    views = len(targets(one, abstraction="task")), len(targets(two, 3_000, abstraction="task"))
    whole = len(targets(one, abstraction="job")), len(targets(two, 3_000, abstraction="job"))
    assert views[1] / views[0] < whole[1] / whole[0]
    assert views[1] < whole[1] / 10


def test_task_view_transitions_travel_as_keys_and_take_the_graph_files_names():
    job = _pair(failures=1, parallelism=2)
    found = targets(job, 3_000, abstraction="task")
    assert all(transition_from_key(transition_key(t)) == t for t in found)
    renamed = {with_vertex_names(t, {"src": "source", "sink": "out"}) for t in found}
    assert {t.source.actor for t in renamed} == {"source", "out", "coordinator"}
    assert all(name in ("source", "out") for t in renamed for name, _ in t.source.around)
    # the whole-job abstraction names no vertex: nothing to rename
    whole = next(iter(targets(job, 100, abstraction="job")))
    assert with_vertex_names(whole, {"src": "source"}) is whole

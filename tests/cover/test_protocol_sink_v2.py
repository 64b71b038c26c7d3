"""Sink V2 writers with a chained committer in the whole-job model (rules S1-S4; FLINK-24131,
FLINK-25920, FLINK-37605) and the committer's promise of one summary per subtask and checkpoint."""

from types import MappingProxyType

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import EOI, Job, Protocol, initial_state, run, successors
from flipcheck.model.jobgraph import ALL_TO_ALL, JobEdge, JobGraph, JobVertex
from flipcheck.properties.protocol_explore import explore_job
from flipcheck.properties.protocol_properties import one_committable_summary_per_checkpoint
from flipcheck.reference_impl.protocol_variants import make_job

# pair-v2: src[0] -> sink[0]; the sink's endInput runs before its final checkpoint 1.
END_INPUT = [("emit", 0, 0), ("end-of-data", 0), ("receive", 1, 0, ("D", 0)), ("receive", 1, 0, ("EOD",))]
FINAL_SNAPSHOT = END_INPUT + [("trigger", 1), ("rpc", 0, 1), ("receive", 1, 0, ("B", 1))]
FAILOVER_AFTER_FINAL = FINAL_SNAPSHOT + [("ack", 0, 1), ("ack", 1, 1), ("failover",)]
REPLAYED_END_INPUT = FAILOVER_AFTER_FINAL + [("end-of-data", 0), ("receive", 1, 0, ("EOD",))]


def _graph(**sink_flags):
    sink = JobVertex("sink", 1, MappingProxyType(sink_flags))
    return JobGraph.build([("src", 1), sink], [JobEdge("src", "sink", ALL_TO_ALL)])


def test_sink_v2_flag_is_checked_like_the_other_sink_flags():
    with pytest.raises(ValueError, match="'sink_v2' must be true or false"):
        Job(_graph(sink_v2="yes"))
    with pytest.raises(ValueError, match="two sink kinds"):
        Job(_graph(sink_v2=True, two_phase_commit_sink=True))
    graph = JobGraph.build([JobVertex("src", 1, MappingProxyType({"sink_v2": True})), ("sink", 1)],
                           [JobEdge("src", "sink", ALL_TO_ALL)])
    with pytest.raises(ValueError, match="sink_v2 on a vertex with outputs"):
        Job(graph)
    for flag in ("sink_v2", "two_phase_commit_sink"):   # a source's records never reach its own sink
        alone = JobGraph.build([JobVertex("src", 3, MappingProxyType({flag: True}))], [])
        with pytest.raises(ValueError, match=f"{flag} on a vertex without inputs"):
            Job(alone)
    assert [(t.sink_v2, t.two_phase_commit) for t in Job(_graph(sink_v2=True)).tasks] == [(False, False), (True, True)]


def test_end_input_flushes_into_a_committable_for_the_next_checkpoint_id():
    sink = run(Job(example_graph("pair-v2"), records=1), END_INPUT).tasks[1]
    assert sink.precommitted == ((1, (0,)),)  # S1: lastKnownCheckpointId 0, + 1
    assert sink.txn is None


def test_final_snapshot_after_end_input_prepares_no_second_commit():
    job = Job(example_graph("pair-v2"), records=1)
    assert run(job, FINAL_SNAPSHOT).tasks[1].precommitted == ((1, (0,)),)
    twice = make_job(example_graph("pair-v2"), "prepare-commit-twice-at-end", records=1)
    before = run(twice, FINAL_SNAPSHOT[:-1])
    label = FINAL_SNAPSHOT[-1]
    notes, after = next((notes, nxt) for lb, nxt, notes in successors(twice, before) if lb == label)
    assert after.tasks[1].precommitted == ((1, (0,)), (1, ()))
    found = one_committable_summary_per_checkpoint(twice, before, label, notes, after)
    assert [(v.property, v.witness) for v in found] == [("one_committable_summary_per_checkpoint", (1, 1))]


def test_restored_writer_ignores_the_replayed_end_input():
    job = Job(example_graph("pair-v2"), records=1, failures=1)
    restored = run(job, FAILOVER_AFTER_FINAL)
    assert restored.committed[1] == ((1, (0,)),)  # S4: the restored committable is committed
    assert restored.tasks[1].input_ended_before and restored.tasks[1].last_checkpoint == 1
    assert run(job, REPLAYED_END_INPUT).tasks[1].precommitted == ()


def test_with_next_checkpoint_ids_a_replayed_end_input_is_harmless():
    """FLINK-37605 alone fixes FLINK-25920: the replayed end-of-input committable gets a new id."""

    class NoRestoredEndOfInput(Protocol):
        name = "no-restored-end-of-input"
        restore_end_of_input = False

    job = Job(example_graph("pair-v2"), records=1, failures=1, protocol=NoRestoredEndOfInput())
    assert run(job, REPLAYED_END_INPUT).tasks[1].precommitted == ((2, ()),)
    result = explore_job(job)
    assert result.complete and result.counterexamples == []


def test_end_input_again_after_restore_sends_a_second_eoi_summary():
    job = make_job(example_graph("pair-v2"), "end-input-again-after-restore", records=1, failures=1)
    restored = run(job, FAILOVER_AFTER_FINAL)
    assert restored.tasks[1].recovered == ((EOI, (0,)),)  # EOI committables wait for endInput (S3)
    before = run(job, REPLAYED_END_INPUT[:-1])
    label = REPLAYED_END_INPUT[-1]
    notes, after = next((notes, nxt) for lb, nxt, notes in successors(job, before) if lb == label)
    found = one_committable_summary_per_checkpoint(job, before, label, notes, after)
    assert [v.witness for v in found] == [(1, EOI)]
    assert "EOI" in found[0].message


def test_a_first_summary_is_no_violation():
    job = Job(example_graph("pair-v2"), records=1)
    before = run(job, END_INPUT[:-1])
    label = END_INPUT[-1]
    notes, after = next((notes, nxt) for lb, nxt, notes in successors(job, before) if lb == label)
    assert ("committable", 1, 1) in notes
    assert one_committable_summary_per_checkpoint(job, before, label, notes, after) == []
    assert initial_state(job).tasks[1].txn == ()

"""The approximate-recovery model and engine against Flink's own tests (recovery facts §1) and hand cases."""

import pytest

from flipcheck.model import approximate_recovery as spec
from flipcheck.model.approximate_recovery import (
    barrier_event, connect, emit, poll, release_partition, release_view, resume,
)
from flipcheck.model.barriers import View
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobGraph
from flipcheck.reference_impl.approximate_recovery_variants import APPROXIMATE_RECOVERY_ENGINES, engine

DIAMOND = JobGraph.build([("v1", 1), ("v2", 1), ("v3", 1), ("v4", 1)],
                         [("v1", "v2", ALL_TO_ALL), ("v1", "v3", ALL_TO_ALL), ("v2", "v4", ALL_TO_ALL),
                          ("v3", "v4", ALL_TO_ALL)])


@pytest.mark.parametrize("failed,restarted", [("v1", {"v1", "v2", "v3", "v4"}), ("v2", {"v2", "v4"}),
                                              ("v3", {"v3", "v4"}), ("v4", {"v4"})])
def test_region_failover_for_pipelined_approximate(failed, restarted):
    """RestartPipelinedRegionFailoverStrategyTest.testRegionFailoverForPipelinedApproximate."""
    expected = {(v, 0) for v in restarted}
    assert spec.restart_set(DIAMOND, {(failed, 0)}) == expected
    assert engine().restart_set(DIAMOND, {(failed, 0)}) == expected


def test_every_approximate_edge_is_a_region_boundary():
    """PipelinedRegionComputeUtilTest.testPipelinedApproximateDifferentRegions: 4 regions."""
    strategy = engine().failover_strategy_class(DIAMOND, engine().partition_type)
    assert len(set(strategy.regions.values())) == 4


def test_a_lost_partition_restarts_its_producer_and_the_producers_consumers():
    graph = JobGraph.build([("src", 1), ("map", 2), ("sink", 1)],
                           [("src", "map", POINTWISE), ("map", "sink", ALL_TO_ALL)])
    restart = spec.restart_set(graph, {("sink", 0)}, unavailable={("map", 0)})
    assert restart == {("sink", 0), ("map", 0)}
    assert engine().restart_set(graph, {("sink", 0)}, {("map", 0)}) == restart


def test_itcase_source_map_map_sink():
    """ApproximateLocalRecoveryDownstreamITCase: map(1/2) fails, map(1/2) and the sink restart."""
    graph = JobGraph.build([("source", 1), ("map", 2), ("sink", 1)],
                           [("source", "map", ALL_TO_ALL), ("map", "sink", ALL_TO_ALL)])
    assert engine().restart_set(graph, {("map", 0)}) == {("map", 0), ("sink", 0)}


def test_milestone_one_restarts_the_region_unless_a_sink_fails():
    assert spec.milestone_one_restart_set(DIAMOND, {("v4", 0)}) == {("v4", 0)}
    assert spec.milestone_one_restart_set(DIAMOND, {("v2", 0)}) == set(DIAMOND.tasks())


# -- the writer and the subpartition (PipelinedApproximateSubpartitionTest, buffers of 16 bytes) ----


def run(events, capacity=16, name="flip135"):
    harness = engine(name).subpartition_harness(capacity)
    model = spec.initial_subpartition(capacity)
    outputs = []
    for event in events:
        got = harness.process(event)
        model, expected = spec.subpartition_step(model, event)
        assert got == expected, f"{event}: engine {got}, model {expected}"
        outputs.append(got)
    return outputs


def data(attempt, sequence, low, high):
    return (("data", attempt, sequence, low, high),)


def test_writer_records_partial_lengths_of_continuations():
    sp = spec.write(spec.write(spec.initial_subpartition(4), emit(10)), emit(1))
    assert [(b.start, b.end, b.partial) for b in sp.buffers] == [(0, 4, 0), (4, 8, 4), (8, 11, 2)]


def test_recreate_read_view_cleans_only_after_a_reconnect():
    """testRecreateReadView: the first view leaves the flag unset, the second sets it."""
    harness = engine().subpartition_harness(16)
    harness.process(connect(0))
    assert not harness.subpartition.is_partial_buffer_cleanup_required
    harness.process(connect(1))
    assert harness.subpartition.is_partial_buffer_cleanup_required


def test_skip_partial_data_ends_in_buffer_with_no_more_data():
    """emit [0,1,2,3,42]; poll [0..3]; reconnect; poll gives nothing; emit [8,9]; poll [8,9]."""
    out = run([emit(20), connect(0), poll(0), connect(1), poll(1), emit(8), poll(1)])
    assert out[2] == data(0, 0, 0, 16)
    assert out[4] == (("none", 1),)
    assert out[6] == data(1, 0, 20, 28)


def test_skip_partial_data_long_record_occupying_entire_buffers():
    """testSkipPartialDataLongRecordOccupyEntireBufferWithMoreData: a 40-byte record, then 12."""
    out = run([emit(40), emit(12), connect(0), poll(0), connect(1), poll(1)])
    assert out[3] == data(0, 0, 0, 16)
    assert out[5] == data(1, 0, 40, 48)  # both continuation buffers skipped: the next record


def test_skip_partial_data_start_with_full_record():
    """testSkipPartialDataStartWithFullRecord: nothing to skip at a record boundary."""
    out = run([emit(16), emit(12), connect(0), connect(1), poll(1), poll(1)])
    assert out[4] == data(1, 0, 0, 16) and out[5] == data(1, 1, 16, 28)


def test_release_of_the_view_keeps_the_partition():
    """PipelinedApproximateSubpartitionWithReadViewTest.testRelease."""
    out = run([emit(4), connect(0), release_view(0), connect(1), poll(1)])
    assert out[2] == (("view_released", 0),) and out[3] == (("view_created", 1),)
    assert out[4] == data(1, 0, 0, 4)
    harness = engine().subpartition_harness(16)
    harness.process(connect(0))
    harness.process(release_view(0))
    assert not harness.subpartition.is_released


def test_a_zombie_cannot_connect_over_a_newer_attempt_but_flink_lets_it():
    assert run([connect(2), connect(1)])[1] == (("rejected", 1, spec.ZOMBIE),)
    harness = engine("flink-no-attempt-check").subpartition_harness(16)
    harness.process(connect(2))
    assert harness.process(connect(1)) == (("view_released", 2), ("view_created", 1))


def test_blocking_barrier_blocks_until_resume_and_a_new_view_starts_unblocked():
    out = run([barrier_event(True), emit(3), connect(0), poll(0), poll(0), resume(0), poll(0)])
    assert out[3] == (("event", 0, 0, 0, True),) and out[4] == (("none", 0),) and out[6] == data(0, 1, 0, 3)
    out = run([barrier_event(True), emit(3), connect(0), poll(0), connect(1), poll(1)])
    assert out[5] == data(1, 0, 0, 3)


def test_partition_release_releases_the_view_and_refuses_new_ones():
    out = run([connect(0), release_partition(), connect(1)])
    assert out[1] == (("view_released", 0), ("partition_released",))
    assert out[2] == (("rejected", 1, spec.RELEASED),)


# -- barriers after the restart ---------------------------------------------------------------------


def test_old_barriers_are_dropped_and_a_new_checkpoint_completes():
    scenario = spec.BarrierScenario(channels=2, max_triggered=2, last_completed=1, consumed=(2, 1))
    system = spec.initial_barrier_system(scenario)
    assert system.queues == ((), (2,)) and system.pending == frozenset()
    label, system, outputs, view = next(s for s in spec.barrier_successors(scenario, system) if s[0][0] == "deliver")
    assert outputs == ((spec.DROPPED, 2, 1),) and view == View(None, 0, 3)
    for _ in range(4):
        label, system, outputs, view = next(iter(spec.barrier_successors(scenario, system)))
    assert system.completed_new


def test_flink_without_dropping_blocks_a_channel_on_an_old_barrier():
    scenario = spec.BarrierScenario(channels=2, max_triggered=1, last_completed=0, consumed=(1, 0))
    run_ = engine("flink-no-barrier-drop").barrier_run(scenario)
    label, state, outputs, view = next(s for s in run_.successors(run_.initial()) if s[0][0] == "deliver")
    assert view.blocked == 0b10 and view.pending == 1


# -- the dataflow -------------------------------------------------------------------------------------


def test_failure_free_outcome_does_not_depend_on_the_schedule():
    flow = spec.Dataflow(DIAMOND, records=2)
    reference = spec.failure_free(flow)
    state = spec.initial_flow(flow)
    for _ in range(40):  # a different schedule: always the last enabled step
        actions = [a for a in spec.flow_actions(flow, state, checkpoints=False)]
        if not actions:
            break
        state = spec.flow_step(flow, state, actions[-1])
    assert tuple(__import__("collections").Counter(p) for p in state.processed) == reference
    assert sum(reference[3].values()) == 4  # two records, each along two paths


def test_sink_failure_loses_what_it_took_since_the_checkpoint():
    graph = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
    flow = spec.Dataflow(graph, records=3)
    state = spec.initial_flow(flow)
    for action in [("emit", 0), ("take", 0), ("trigger",), ("snapshot", 0), ("take", 0), ("emit", 0), ("take", 0),
                   ("emit", 0)]:
        assert action in spec.flow_actions(flow, state)
        state = spec.flow_step(flow, state, action)
    assert spec.checkpoint_complete(state)
    outcome = engine().recovery().recover(flow, state, {1})
    lost = spec.failure_free(flow)[1] - outcome.final[1]
    assert [c.seq for c in lost] == [1]  # record 0 is in the checkpoint, record 2 was still in flight
    assert outcome.final == spec.expected_final(flow, state, frozenset({1}), frozenset())


def test_every_variant_has_a_part_and_a_mechanism():
    for name, cls in APPROXIMATE_RECOVERY_ENGINES.items():
        if name != "flip135":
            assert cls.part in ("failover", "subpartition", "barriers", "dataflow", "shipped"), name
            assert cls.__doc__ and cls.source, name

"""Behaviour Flink's own barrier-handler tests pin, replayed on the model and on the Flink-style
implementation (reference_impl/barriers).

Each test names the Flink test it comes from (apache/flink, flink-runtime/src/test/java/org/
apache/flink/streaming/runtime/io/checkpointing/ and .../runtime/tasks/). The event sequences
are those tests' sequences written as CLI tokens (buffers become ``D@ch``); only the assertions
Flink makes about triggers, aborts, blocked channels and pending checkpoints are checked.
"""

import pytest

from flipcheck.properties.barriers_replay import replay, summary
from flipcheck.model.barriers import (
    AT_LEAST_ONCE, INPUT_END_OF_STREAM, ON_CANCELLATION_BARRIER, SUBSUMED, TRIGGERED, UNALIGNED, UNBLOCKED, Config,
    channels_of, final_state, parse_event, run,
)
from flipcheck.reference_impl.barriers import make_task

HANDLERS = ["model", "flink"]


def play(tokens: str, channels: int, handler: str, mode: str = "aligned", after_finished: bool = True,
         timeout: bool = False):
    config = Config(channels, mode, after_finished, timeout)
    return replay(config, [parse_event(t) for t in tokens.split()], handler=handler)


def blocked_after(result, step: int) -> list:
    """Blocked channels after the 1-based ``step``."""
    return channels_of(result.steps[step - 1].view.blocked)


def trigger_kinds(result) -> list:
    return [o[2] for s in result.steps for o in s.outputs if o[0] == TRIGGERED]


# -- AlignedCheckpointsTest ----------------------------------------------------------------------


@pytest.mark.parametrize("handler", HANDLERS)
def test_multi_channel_with_barriers(handler):
    """AlignedCheckpointsTest#testMultiChannelWithBarriers: checkpoints 1..4 in order, blocked
    channels grow with each barrier and are empty after each checkpoint."""
    r = play("D@0 D@2 D@0 B1@1 B1@2 D@0 B1@0 D@0 D@0 D@1 D@1 D@2 B2@0 B2@1 B2@2 D@2 D@2 B3@2 D@0 D@0 B3@0 B3@1 "
             "B4@1 B4@2 B4@0 D@0 E@0 E@1 E@2", 3, handler)
    assert summary(r)["triggered"] == [1, 2, 3, 4]
    assert blocked_after(r, 4) == [1] and blocked_after(r, 5) == [1, 2] and blocked_after(r, 7) == []
    assert all(blocked_after(r, i) == [] for i in (15, 22, 25))


@pytest.mark.parametrize("handler", HANDLERS)
def test_multi_channel_jumping_over_checkpoint(handler):
    """AlignedCheckpointsTest#testMultiChannelJumpingOverCheckpoint (checkpoints after tasks
    finished off): a later barrier subsumes the pending checkpoint; EndOfPartition aborts one."""
    r = play("D@0 D@2 D@0 B1@1 B1@2 D@0 B1@0 D@1 D@0 B2@1 D@2 B2@0 D@2 B3@2 D@1 D@0 B3@0 B4@1 D@2 D@0 E@0 D@2 "
             "E@2 D@1 E@1", 3, handler, after_finished=False)
    info = summary(r)
    assert info["triggered"] == [1]
    assert info["aborted"] == [[2, SUBSUMED], [3, SUBSUMED], [4, INPUT_END_OF_STREAM]]
    assert blocked_after(r, 13) == [0, 1] and blocked_after(r, 14) == [2]
    assert blocked_after(r, 17) == [0, 2] and blocked_after(r, 18) == [1] and blocked_after(r, 21) == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_missing_cancellation_barriers(handler):
    """AlignedCheckpointsTest#testMissingCancellationBarriers: nothing stays blocked."""
    r = play("B1@0 C3@1 C2@0 C3@0 D@0", 2, handler)
    assert r.steps[-1].view.blocked == 0
    assert summary(r)["aborted"] == [[3, ON_CANCELLATION_BARRIER]]


@pytest.mark.parametrize("handler", HANDLERS)
def test_start_alignment_with_closed_channels(handler):
    """AlignedCheckpointsTest#testStartAlignmentWithClosedChannels: checkpoints after channels
    closed align on the open ones only; the last one is a single-channel checkpoint."""
    r = play("E@2 E@1 D@0 D@0 D@3 B2@3 B2@0 B3@0 B3@3 D@0 D@0 D@3 E@0 D@3 B4@3 D@3 E@3", 4, handler)
    assert summary(r)["triggered"] == [2, 3, 4]
    assert blocked_after(r, 7) == [] and blocked_after(r, 9) == [] and blocked_after(r, 15) == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_end_of_stream_while_checkpoint(handler):
    """AlignedCheckpointsTest#testEndOfStreamWhileCheckpoint: after the first EndOfPartition
    nothing is blocked; with FLIP-147 the EndOfPartition completes checkpoint 2 instead of
    cancelling it."""
    r = play("B1@0 B1@1 B1@2 D@0 D@0 D@2 B2@2 B2@0 D@1 E@1 E@2 D@0 E@0", 3, handler)
    assert blocked_after(r, 10) == []
    assert summary(r)["triggered"] == [1, 2] and summary(r)["aborted"] == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_single_channel_abort_checkpoint(handler):
    """AlignedCheckpointsTest#testSingleChannelAbortCheckpoint: 3 triggered, 2 cancelled."""
    r = play("D@0 B1@0 D@0 B2@0 D@0 C4@0 B5@0 D@0 C6@0 D@0", 1, handler)
    info = summary(r)
    assert info["triggered"] == [1, 2, 5]
    assert info["aborted"] == [[4, ON_CANCELLATION_BARRIER], [6, ON_CANCELLATION_BARRIER]]


@pytest.mark.parametrize("handler", HANDLERS)
def test_multi_channel_abort_checkpoint(handler):
    """AlignedCheckpointsTest#testMultiChannelAbortCheckpoint: aborted on the last barrier, on
    the first, and by several cancellations; 3 triggered and 3 aborted."""
    r = play("D@0 D@2 D@0 B1@1 B1@2 D@0 B1@0 D@0 D@2 B2@0 B2@2 D@1 C2@1 D@2 D@1 B3@1 B3@2 B3@0 D@0 D@1 C4@1 "
             "B4@2 D@2 B4@0 D@0 D@1 D@2 B5@2 B5@1 B5@0 D@0 D@1 C6@1 C6@2 B6@0 D@0", 3, handler)
    info = summary(r)
    assert info["triggered"] == [1, 3, 5]
    assert [a[0] for a in info["aborted"]] == [2, 4, 6]
    assert blocked_after(r, 10) == [0] and blocked_after(r, 11) == [0, 2] and blocked_after(r, 13) == []
    assert blocked_after(r, 22) == [] and blocked_after(r, 35) == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_abort_on_canceled_barriers(handler):
    """AlignedCheckpointsTest#testAbortOnCanceledBarriers: a barrier of the cancelled checkpoint
    is ignored (its channel is not blocked), the next checkpoint completes normally."""
    r = play("D@1 B1@1 D@2 D@0 C1@0 D@1 B2@1 D@2 D@0 B1@2 D@0 D@2 B2@0 B2@2 D@0 D@1 D@2", 3, handler)
    assert blocked_after(r, 6) == [] and blocked_after(r, 10) == [1] and blocked_after(r, 14) == []
    assert summary(r)["triggered"] == [2] and summary(r)["aborted"] == [[1, ON_CANCELLATION_BARRIER]]


@pytest.mark.parametrize("handler", HANDLERS)
def test_ignore_cancel_barrier_if_checkpoint_subsumed(handler):
    """AlignedCheckpointsTest#testIgnoreCancelBarrierIfCheckpointSubsumed."""
    r = play("D@2 B3@1 B3@0 D@2 B5@2 D@1 D@0 C3@0 D@0 D@1 B5@0 B5@1 D@0 D@1 D@2", 3, handler)
    assert blocked_after(r, 4) == [0, 1] and blocked_after(r, 5) == [2] and blocked_after(r, 12) == []
    assert summary(r)["triggered"] == [5] and summary(r)["aborted"] == [[3, SUBSUMED]]


@pytest.mark.parametrize("handler", HANDLERS)
def test_trigger_checkpoints_with_end_of_partition(handler):
    """AlignedCheckpointsTest#testTriggerCheckpointsWithEndOfPartition (FLINK-21086)."""
    r = play("B1@0 B1@1 E@2", 3, handler)
    assert summary(r)["triggered"] == [1] and summary(r)["aborted"] == [] and summary(r)["pending"] is None


@pytest.mark.parametrize("handler", HANDLERS)
def test_deduplicate_channels_with_both_barrier_and_end_of_partition(handler):
    """AlignedCheckpointsTest#testDeduplicateChannelsWithBothBarrierAndEndOfPartition: a channel
    that sent its barrier and then ended counts once. Flink's mock gate delivers the
    EndOfPartition of a blocked channel, which the network would hold back (channel_env V3), so
    this one drives the handler directly, without the environment."""
    events = [parse_event(t) for t in "B2@0 B2@1 E@1 B2@2".split()]
    config = Config(3)
    if handler == "model":
        outputs = [s.outputs for s in run(config, events)]
    else:
        task = make_task(config, handler)
        outputs = [task.process(e) for e in events]
    assert not any(o[0] == TRIGGERED for step in outputs[:3] for o in step)
    assert [o[1] for step in outputs for o in step if o[0] == TRIGGERED] == [2]


@pytest.mark.parametrize("handler", HANDLERS)
def test_trigger_checkpoints_after_received_end_of_partition(handler):
    """AlignedCheckpointsTest#testTriggerCheckpointsAfterReceivedEndOfPartition."""
    r = play("E@2 B6@0 B6@1 E@1 B7@0", 3, handler)
    assert summary(r)["triggered"] == [6, 7] and summary(r)["aborted"] == [] and summary(r)["pending"] is None


# -- CheckpointBarrierTrackerTest -------------------------------------------------------------------


def tracker(tokens: str, channels: int, handler: str):
    return play(tokens, channels, handler, mode=AT_LEAST_ONCE)


def tracker_pending_ids(tokens: str, channels: int) -> list:
    state = final_state(Config(channels, AT_LEAST_ONCE), [parse_event(t) for t in tokens.split()])
    return [entry.id for entry in state.entries]


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_complete_checkpoints_on_late_barriers(handler):
    """CheckpointBarrierTrackerTest#testCompleteCheckpointsOnLateBarriers: a newer barrier does
    not discard a pending checkpoint."""
    r = tracker("D@1 D@1 D@0 D@2 B2@1 B2@0 B2@2 D@1 D@0 B3@1 B3@2 D@1 D@0 B4@2 B4@1 D@1 D@2 B3@0 D@0 B4@0 "
                "D@1 D@2 B5@1 D@0 B5@0 D@1 B5@2 D@1 B6@1 D@0 B6@0 D@1 B7@1 D@0 B7@2 D@2 B8@2 D@0 B8@1 D@1 B9@1 "
                "B7@0 D@0 B9@2 D@2 B10@2 B8@0 D@1 D@2 B9@0 D@1 D@0 D@2 B10@0 B10@1", 3, handler)
    assert summary(r)["triggered"] == [2, 3, 4, 5, 7, 8, 9, 10]


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_multi_channel_skipping_checkpoints(handler):
    """CheckpointBarrierTrackerTest#testMultiChannelSkippingCheckpoints: 3 is dropped silently."""
    r = tracker("D@0 D@2 D@0 B1@1 B1@2 D@2 D@1 B1@0 D@0 D@0 D@1 D@1 D@2 B2@0 B2@1 B2@2 D@2 D@2 B3@2 D@2 D@2 "
                "B4@0 D@0 D@1 D@2 B4@1 D@1 B4@2 D@0", 3, handler)
    assert summary(r)["triggered"] == [1, 2, 4] and summary(r)["aborted"] == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_multi_channel_abort_checkpoint(handler):
    """CheckpointBarrierTrackerTest#testMultiChannelAbortCheckpoint: 1, -2, 3, -4, 5, -6."""
    r = tracker("D@0 D@2 D@0 B1@1 B1@2 D@2 D@1 B1@0 D@0 D@2 B2@0 B2@2 D@0 D@2 C2@1 D@2 D@1 B3@1 B3@2 B3@0 D@0 "
                "D@1 C4@1 B4@2 D@0 B4@0 D@0 D@1 D@2 B5@2 B5@1 B5@0 D@0 D@1 C6@1 C6@2 B6@0 D@0", 3, handler)
    assert summary(r)["triggered"] == [1, 3, 5]
    assert summary(r)["aborted"] == [[2, ON_CANCELLATION_BARRIER], [4, ON_CANCELLATION_BARRIER],
                                     [6, ON_CANCELLATION_BARRIER]]


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_interleaved_cancellation_barriers(handler):
    """CheckpointBarrierTrackerTest#testInterleavedCancellationBarriers: each aborted once."""
    r = tracker("B1@0 C2@0 C1@1 C2@1 C1@2 C2@2 D@0", 3, handler)
    assert summary(r)["aborted"] == [[1, ON_CANCELLATION_BARRIER], [2, ON_CANCELLATION_BARRIER]]


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_trigger_checkpoints_with_end_of_partition(handler):
    """CheckpointBarrierTrackerTest#testTriggerCheckpointsWithEndOfPartition: only 4 triggers,
    older pending checkpoints are dropped, 5 stays pending, 2 channels open."""
    tokens = "B1@0 B2@0 B2@1 B3@0 B4@0 B4@1 B5@1 E@2"
    r = tracker(tokens, 3, handler)
    assert summary(r)["triggered"] == [4] and summary(r)["aborted"] == []
    assert summary(r)["open_channels"] == 2
    assert tracker_pending_ids(tokens, 3) == [5]


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_deduplicate_and_after_end_of_partition(handler):
    """CheckpointBarrierTrackerTest#testDeduplicateChannelsWithBothBarrierAndEndOfPartition and
    #testTriggerCheckpointsAfterReceivedEndOfPartition."""
    assert summary(tracker("B2@0 B2@1 E@1 B2@2", 3, handler))["triggered"] == [2]
    r = tracker("E@2 B5@0 B6@0 B6@1 E@1 B7@0", 3, handler)
    assert summary(r)["triggered"] == [6, 7] and summary(r)["aborted"] == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_no_fast_path_with_channel_finished_during_checkpoints(handler):
    """CheckpointBarrierTrackerTest#testNoFastPathWithChannelFinishedDuringCheckpoints and
    #...Cancel: the last barrier (or cancellation) finishes the pending checkpoint."""
    r = tracker("B1@0 E@0 B1@1", 2, handler)
    assert summary(r)["triggered"] == [1] and summary(r)["pending"] is None
    r = tracker("B1@0 E@0 C1@1", 2, handler)
    assert summary(r)["aborted"] == [[1, ON_CANCELLATION_BARRIER]]
    assert tracker_pending_ids("B1@0 E@0 C1@1", 2) == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_complete_and_remove_aborted_checkpoint_with_end_of_partition(handler):
    """CheckpointBarrierTrackerTest#testCompleteAndRemoveAbortedCheckpointWithEndOfPartition."""
    tokens = "C4@0 B4@1 B5@1 E@2"
    r = tracker(tokens, 3, handler)
    assert summary(r)["aborted"] == [[4, ON_CANCELLATION_BARRIER]] and summary(r)["triggered"] == []
    assert tracker_pending_ids(tokens, 3) == [5] and summary(r)["open_channels"] == 2


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_abort_checkpoints_after_end_of_partition_received(handler):
    """CheckpointBarrierTrackerTest#testAbortCheckpointsAfterEndOfPartitionReceived."""
    r = tracker("E@2 B5@0 B6@0 C6@1 E@1 C7@0", 3, handler)
    assert [a[0] for a in summary(r)["aborted"]] == [5, 6, 7] and summary(r)["triggered"] == []


@pytest.mark.parametrize("handler", HANDLERS)
def test_tracker_next_first_barrier_overtakes_cancellation(handler):
    """CheckpointBarrierTrackerTest#testNextFirstCheckpointBarrierOvertakesCancellationBarrier and
    #testTwoLastBarriersOneByOne."""
    assert summary(tracker("B1@1 B2@1 C1@0 B2@0", 2, handler))["triggered"] == [2]
    assert summary(tracker("B1@1 B2@1 B1@0 B2@0", 2, handler))["triggered"] == [1, 2]


# -- AlternatingCheckpointsTest (unaligned mode with an alignment timeout) ---------------------------


def alternating(tokens: str, channels: int, handler: str):
    return play(tokens, channels, handler, mode=UNALIGNED, timeout=True)


@pytest.mark.parametrize("handler", HANDLERS)
def test_aligned_never_timeoutable_checkpoint(handler):
    """AlternatingCheckpointsTest#testAlignedNeverTimeoutableCheckpoint: without a timeout the
    checkpoint waits (records on the other channel are processed) and triggers aligned."""
    r = alternating("B1@0 D@1 D@1 D@1", 2, handler)
    assert summary(r)["triggered"] == []
    r = alternating("B1@0 D@1 D@1 D@1 B1@1", 2, handler)
    assert summary(r)["triggered"] == [1] and trigger_kinds(r) == ["aligned"]


@pytest.mark.parametrize("handler", HANDLERS)
def test_timeout_alignment(handler):
    """AlternatingCheckpointsTest#testTimeoutAlignment: announcements, timeout, then one unaligned
    trigger; the records overtaken by the late barrier are in-flight data."""
    r = alternating("A1@0 A1@1 TIMEOUT B1@0 D@1 B1@1", 2, handler)
    assert summary(r)["triggered"] == [1] and trigger_kinds(r) == ["unaligned"]
    assert summary(r)["in_flight"] == {"1": [[1, 0]]} and summary(r)["pending"] is None


@pytest.mark.parametrize("handler", HANDLERS)
def test_timeout_alignment_after_processing_barrier(handler):
    """AlternatingCheckpointsTest#testTimeoutAlignmentAfterProcessingBarrier: a barrier already
    aligned, the timeout triggers the unaligned checkpoint at once."""
    r = alternating("B1@2 A1@0 A1@1 TIMEOUT", 3, handler)
    assert summary(r)["triggered"] == [1] and trigger_kinds(r) == ["unaligned"]
    assert summary(r)["blocked"] == [2]  # stays blocked until the checkpoint completes (FLINK-22638)


@pytest.mark.parametrize("handler", HANDLERS)
def test_aligned_after_timed_out(handler):
    """AlternatingCheckpointsTest#testAlignedAfterTimedOut: after a timed-out checkpoint the next
    one is aligned again."""
    r = alternating("A1@0 TIMEOUT B1@0 A2@0 B2@0", 1, handler)
    assert summary(r)["triggered"] == [1, 2] and trigger_kinds(r) == ["unaligned", "aligned"]


@pytest.mark.parametrize("handler", HANDLERS)
def test_alternation(handler):
    """AlternatingCheckpointsTest#testAlternation (scaled down): every checkpoint in order."""
    tokens = " ".join(f"B{i}@{c}" for i in range(1, 6) for c in range(4))
    assert summary(alternating(tokens, 4, handler))["triggered"] == [1, 2, 3, 4, 5]


# -- StreamTaskFinalCheckpointsTest -------------------------------------------------------------------


@pytest.mark.parametrize("handler", HANDLERS)
@pytest.mark.parametrize("mode,timeout", [("aligned", False), ("unaligned", False), ("unaligned", True)])
def test_triggering_checkpoint_with_finished_channels(handler, mode, timeout):
    """StreamTaskFinalCheckpointsTest#testTriggering{AlignedNoTimeout,Unaligned,AlignedWithTimeout}
    CheckpointWithFinishedChannels: RPC-triggered checkpoints with all, some and no inputs alive
    all complete, and no channel is ever resumed (nor blocked)."""
    r = play("T2 E@0 T4 E@1 E@2 T6", 3, handler, mode=mode, timeout=timeout)
    assert summary(r)["triggered"] == [2, 4, 6] and summary(r)["pending"] is None
    assert not any(o[0] in ("blocked", UNBLOCKED) for s in r.steps for o in s.outputs)

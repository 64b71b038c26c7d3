"""Rule J5u of the whole-job model: an unaligned barrier overtakes the records and EndOfData
queued on its output channel (after earlier barriers), the overtaken records are the upstream's
output in-flight data, and a failover restores a channel as the downstream's captured input
records followed by the upstream's captured output records (F1). Aligned and at-least-once
barriers stay FIFO."""

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.barriers import ALIGNED, AT_LEAST_ONCE, UNALIGNED
from flipcheck.model.protocol import Job, Step, run
from flipcheck.model.protocol.tasks import send_barrier
from flipcheck.properties.protocol_explore import replay
from flipcheck.properties.protocol_properties import check_trace
from flipcheck.render.protocol import chart_source

# pair: src[0] = task 0 -> sink[0] = task 1, one channel.
PAIR_STEPS = [("trigger", 1), ("emit", 0, 0), ("end-of-data", 0), ("rpc", 0, 1)]


def _pair(mode):
    return Job(example_graph("pair"), mode=mode, records=1, checkpoints=1)


def test_unaligned_barrier_overtakes_records_and_end_of_data():
    job = _pair(UNALIGNED)
    s = run(job, PAIR_STEPS)
    assert s.queues[0] == (("B", 1), ("D", 0), ("EOD",))
    (k, snapshot), = s.tasks[0].outbox
    assert k == 1 and snapshot.output_in_flight == ((0,),)  # the record, not the EndOfData event
    assert snapshot.sent == (1,)


@pytest.mark.parametrize("mode", [ALIGNED, AT_LEAST_ONCE])
def test_aligned_and_at_least_once_barriers_stay_fifo(mode):
    s = run(_pair(mode), PAIR_STEPS)
    assert s.queues[0] == (("D", 0), ("EOD",), ("B", 1))
    assert s.tasks[0].outbox[0][1].output_in_flight == ((),)


def test_overtaking_barriers_keep_their_order():
    # A barrier already at the head is a priority event too: the next one goes behind it.
    job = _pair(UNALIGNED)
    n = Step(job, run(job, PAIR_STEPS))
    assert send_barrier(n, 0, 2) == ((0,),)
    assert n.queues[0] == (("B", 1), ("B", 2), ("D", 0), ("EOD",))


def test_failover_restores_input_then_output_in_flight_records():
    # twin: a (task 0, records 0 1) and b (task 1, records 2 3) -> join (task 2); join's input 0
    # comes from a. join triggers on b's barrier and captures r0 from a; then a's barrier
    # overtakes r1, which a captures as output in-flight data.
    job = Job(example_graph("twin"), mode=UNALIGNED, records=2, checkpoints=1, failures=1)
    steps = [("trigger", 1), ("emit", 0, 0), ("rpc", 1, 1), ("receive", 2, 1, ("B", 1)),
             ("receive", 2, 0, ("D", 0)), ("emit", 0, 1), ("rpc", 0, 1), ("receive", 2, 0, ("B", 1)),
             ("ack", 0, 1), ("ack", 1, 1), ("ack", 2, 1)]
    s = run(job, steps)
    assert s.coordinator.completed == 1
    snapshots = s.coordinator.restore.snapshots
    assert snapshots[2].in_flight == ((0,), ()) and snapshots[0].output_in_flight == ((1,),)
    assert check_trace(job, steps + [("failover",)]) == []
    restored = run(job, [("failover",)], s)
    assert restored.queues[job.tasks[2].inputs[0]] == (("D", 0), ("D", 1))
    assert restored.tasks[0].emitted == 2  # a resumes after r1: nothing is sent twice


def test_a_trace_with_an_overtaking_barrier_is_drawn():
    job = _pair(UNALIGNED)
    steps = replay(job, PAIR_STEPS + [("receive", 1, 0, ("B", 1)), ("receive", 1, 0, ("D", 0))],
                   canonical_labels=False)
    source = chart_source(job, steps, "overtaking")
    assert "poll barrier 1 from src[0]" in source and "poll r0 from src[0]" in source

"""Two-phase-commit sink transactions in the whole-job model (rules J2, J5, J7; FLINK-23473)."""

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import FINISHED_TASK, initial_state, is_end, run
from flipcheck.properties.protocol_properties import no_dangling_transaction
from flipcheck.reference_impl.protocol_variants import make_job

# pair: src[0] -> sink[0]; the sink performs its final checkpoint 1 after its end of data.
FINAL_SNAPSHOT = [("emit", 0, 0), ("end-of-data", 0), ("receive", 1, 0, ("D", 0)), ("receive", 1, 0, ("EOD",)),
                  ("trigger", 1), ("rpc", 0, 1), ("receive", 1, 0, ("B", 1))]


def test_a_sink_starts_with_an_open_transaction_and_only_sinks_have_one():
    job = make_job(example_graph("pair"), records=1)
    assert [ts.txn for ts in initial_state(job).tasks] == [None, ()]


def test_the_final_snapshot_pre_commits_the_last_transaction_and_opens_none():
    job = make_job(example_graph("pair"), records=1)
    sink = run(job, FINAL_SNAPSHOT).tasks[1]
    assert sink.precommitted == ((1, (0,)),)
    assert sink.txn is None


def test_new_transaction_after_finish_opens_one_in_the_final_snapshot():
    job = make_job(example_graph("pair"), "new-transaction-after-finish", records=1)
    sink = run(job, FINAL_SNAPSHOT).tasks[1]
    assert sink.precommitted == ((1, (0,)),)
    assert sink.txn == ()


def test_an_empty_open_transaction_is_pre_committed_but_commits_no_data():
    job = make_job(example_graph("pair"), records=1)
    steps = [("trigger", 1), ("rpc", 0, 1), ("receive", 1, 0, ("B", 1))]  # before src[0] emits r0
    state = run(job, steps)
    assert state.tasks[1].precommitted == ((1, ()),)
    state = run(job, [("ack", 0, 1), ("ack", 1, 1), ("notify", 1, 1)], state)
    assert state.tasks[1].precommitted == ()
    assert state.committed == ((), ())


def test_no_dangling_transaction_judges_only_the_end_of_the_job():
    job = make_job(example_graph("pair"), records=1)
    ended = initial_state(job)._replace(tasks=(FINISHED_TASK, FINISHED_TASK._replace(precommitted=((2, ()),))))
    assert is_end(job, ended)
    found = no_dangling_transaction(job, ended)
    assert [(v.property, v.witness) for v in found] == [("no_dangling_transaction", 1)]
    assert "sink[0]" in found[0].message
    assert no_dangling_transaction(job, ended._replace(tasks=(FINISHED_TASK,) * 2)) == []
    running = initial_state(job)._replace(tasks=(initial_state(job).tasks[0], ended.tasks[1]))
    assert no_dangling_transaction(job, running) == []

"""The FLIP-383 batch-recovery specification and Flink's implementation against it (small DAGs,
every crash point), plus the replay rule and the finding with two crashes."""

from flipcheck.model.batch_recovery import Config, recoverable, replay_order, run
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.properties.batch_recovery_explore import explore_job, explore_model

PAIR = JobGraph.build([("src", 2), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])


def test_replay_keeps_entries_up_to_the_last_snapshot_in_linked_hash_map_order():
    log = [("finished", 0, None, 1), ("finished", 1, ("snap",), 1), ("finished", 2, None, 1),
           ("reset", frozenset({0})), ("finished", 0, None, 2), ("finished", 1, ("snap",), 2)]
    assert [t for t, _ in replay_order(log)] == [1, 2, 0]      # a re-put keeps its place
    assert [t for t, _ in recoverable(log)] == [1]


def test_unflushed_finish_is_lost_and_the_task_reruns():
    cfg = Config(PAIR, splits=1)
    state = run(cfg, [("start", 0), ("assign", 0), ("finish", 0), ("crash",), ("restart",)])
    assert state.phase == "running" and state.status == ("CREATED",) * 3 and state.log == ()


def test_flink_refines_the_model_at_every_crash_point():
    cfg = Config(PAIR, splits=1, crashes=1, losses=1, recovery_failures=1)
    model = explore_model(cfg, stop_at_first=False)
    flink = explore_job(cfg, stop_at_first=False)
    assert model.complete and flink.complete and model.problems == flink.problems == []
    assert model.states == flink.states and model.crash_points == flink.crash_points > 0

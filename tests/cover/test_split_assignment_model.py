"""The FLIP-27 split-assignment specification, rule by rule (model/split_assignment.py)."""

import pytest

from flipcheck.model.split_assignment import (
    COORDINATOR, DESIGNS, NO_CHECKPOINT, TASK_PERSISTENT, TASK_RECONNECT, Config, enabled, initial_state, owners,
    run, settled, step, view,
)

ONE = Config(readers=1, splits=2)


def test_only_a_registered_reader_gets_splits():
    state = initial_state(ONE)
    assert ("assign", 0) not in enabled(ONE, state)
    state = run(ONE, [("register", 0)], state)
    assert ("assign", 0) in enabled(ONE, state)


def test_the_epoch_of_an_assignment_is_the_next_checkpoint_id():
    state = run(ONE, [("register", 0), ("assign", 0), ("deliver", 0), ("trigger",), ("assign", 0)])
    assert state.readers[0].splits == {(0, 1)}
    assert state.held == (((1, 2),),)


def test_the_gateway_holds_events_until_the_reader_processed_the_barrier():
    state = run(ONE, [("register", 0), ("trigger",), ("assign", 0)])
    assert state.channels == ((),) and state.held == (((0, 2),),)
    assert view(ONE, state).inbox == ((("split", 0),),)       # observed: on its way
    state = run(ONE, [("trigger_tasks",), ("deliver", 0)], state)
    assert state.channels == ((("split", 0, 2),),) and state.held == ((),)
    assert state.completed.readers == ((frozenset(), frozenset()),)


def test_tasks_are_triggered_only_after_earlier_events_are_confirmed():
    state = run(ONE, [("register", 0), ("assign", 0), ("trigger",)])
    assert ("trigger_tasks",) not in enabled(ONE, state)
    state = run(ONE, [("deliver", 0)], state)
    assert ("trigger_tasks",) in enabled(ONE, state)


def test_a_lost_event_fails_the_checkpoint_waiting_for_it_and_the_reader():
    state = run(ONE, [("register", 0), ("assign", 0), ("trigger",), ("lose", 0)])
    assert ("trigger_tasks",) not in enabled(ONE, state)      # it waits for the lost event forever
    assert not settled(view(ONE, state))
    state = run(ONE, [("detect", 0)], state)
    assert state.pending is None and not state.readers[0].alive


def test_reset_returns_only_epochs_after_the_restored_checkpoint():
    state = run(ONE, [("register", 0), ("assign", 0), ("deliver", 0), ("trigger",), ("trigger_tasks",),
                      ("deliver", 0), ("assign", 0), ("deliver", 0), ("fail", 0)])
    assert state.completed.id == 1 and state.notified == 0    # completed, not yet notified
    state = run(ONE, [("reset", 0)], state)
    assert state.pool == {1}                                  # epoch 2 > 1 comes back
    assert state.readers[0].splits == {(0, 1)}                # epoch 1 is in the restored state


def test_reset_without_a_completed_checkpoint_restores_nothing_and_returns_everything():
    state = run(ONE, [("register", 0), ("assign", 0), ("deliver", 0), ("finish", 0), ("fail", 0), ("reset", 0)])
    assert NO_CHECKPOINT == -1
    assert state.pool == {0, 1} and state.readers[0].done == frozenset()


def test_global_failover_restores_the_enumerator_and_every_reader():
    two = Config(readers=2, splits=2, checkpoints=1, failures=1)
    state = run(two, [("register", 0), ("assign", 0), ("deliver", 0), ("trigger",), ("trigger_tasks",),
                      ("deliver", 0), ("deliver", 1), ("register", 1), ("assign", 1), ("global",)])
    assert state.pool == {1} and state.readers[0].splits == {(0, 1)} and state.readers[1].splits == frozenset()
    assert all(not r.registered for r in state.readers) and state.notified == 1


def test_failures_are_bounded():
    state = run(ONE, [("register", 0), ("fail", 0)])
    assert ("global",) not in enabled(ONE, state) and ("fail", 0) not in enabled(ONE, state)
    assert ("reset", 0) in enabled(ONE, state)


@pytest.mark.parametrize("design", [TASK_PERSISTENT, TASK_RECONNECT])
def test_task_designs_send_barriers_with_the_splits(design):
    cfg = ONE._replace(design=design)
    state = run(cfg, [("register", 0), ("assign", 0), ("trigger",), ("assign", 0)])
    assert state.channels == ((("split", 0, 1), ("barrier", 1), ("split", 1, 2)),)
    assert ("trigger_tasks",) not in enabled(cfg, state) and ("lose", 0) not in enabled(cfg, state)


def test_persistent_channel_gives_a_failed_readers_splits_back_to_it():
    cfg = Config(readers=2, splits=2, checkpoints=1, failures=1, design=TASK_PERSISTENT)
    state = run(cfg, [("register", 0), ("assign", 0), ("deliver", 0), ("fail", 0), ("reset", 0)])
    assert state.pool == {1} and state.channels[0] == (("split", 0, 1),)
    reconnect = cfg._replace(design=TASK_RECONNECT)
    state = run(reconnect, [("register", 0), ("assign", 0), ("deliver", 0), ("fail", 0), ("reset", 0)])
    assert state.pool == {0, 1} and state.channels[0] == ()


def test_persistent_channel_is_pruned_at_the_completed_barrier():
    cfg = ONE._replace(design=TASK_PERSISTENT)
    state = run(cfg, [("register", 0), ("assign", 0), ("deliver", 0), ("trigger",), ("assign", 0), ("deliver", 0)])
    assert state.completed.id == 1 and state.logs == ((),)
    state = run(cfg, [("deliver", 0)], state)
    assert state.logs == ((("split", 1, 2),),)


def test_owners_name_every_place_a_split_can_be():
    state = run(ONE, [("register", 0), ("assign", 0), ("assign", 0), ("deliver", 0), ("finish", 0)])
    v = view(ONE, state)
    assert owners(v, 0) == ["reader 0 (done)"] and owners(v, 1) == ["to reader 0"]


def test_a_disabled_action_is_refused():
    with pytest.raises(ValueError, match="not enabled"):
        run(ONE, [("assign", 0)])
    with pytest.raises(ValueError, match="unknown action"):
        step(ONE, initial_state(ONE), ("jump",))


def test_every_design_is_known():
    assert DESIGNS[0] == COORDINATOR and len(set(DESIGNS)) == 3

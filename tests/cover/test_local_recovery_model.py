"""The task-local recovery model and engine against Flink's own tests (recovery facts §2) and hand cases."""

import pytest

from flipcheck.model import local_recovery as spec
from flipcheck.model.local_recovery import (
    LOCAL, MISALIGNED, OK, OPEN_FAILED, REMOTE, WRITE_FAILED, HandleWrite, KeyedHandle, Slot, SlotRequest,
)
from flipcheck.reference_impl.local_recovery import (
    BackendRestorerProcedure, CheckpointStateOutputStream, DuplicatingCheckpointOutputStream,
    PreviousAllocationSlotSelectionStrategy, PrioritizedOperatorSubtaskStateBuilder, RestoreFailed, SlotProfile,
    StreamFailure, TaskLocalStateStoreImpl,
)
from flipcheck.reference_impl.local_recovery_variants import LOCAL_RECOVERY_ENGINES, engine

H = KeyedHandle(0, 4, 1)


# -- writing (DuplicatingCheckpointOutputStreamTest, CheckpointStreamWithResultProviderTest) -------


def test_duplicated_write_gives_both_handles():
    stream = DuplicatingCheckpointOutputStream(CheckpointStateOutputStream(H, REMOTE), CheckpointStateOutputStream(H, LOCAL))
    stream.write(3)
    assert stream.close_and_get_primary_handle().location == REMOTE
    assert stream.close_and_get_secondary_handle().location == LOCAL


def test_secondary_write_fail_keeps_the_primary():
    stream = DuplicatingCheckpointOutputStream(CheckpointStateOutputStream(H, REMOTE), CheckpointStateOutputStream(H, LOCAL, 0))
    stream.write(1)
    stream.write(1)  # the secondary is never written again
    assert stream.secondary.writes == 0 and stream.primary.writes == 2
    assert stream.close_and_get_primary_handle() == H
    with pytest.raises(StreamFailure):
        stream.close_and_get_secondary_handle()


def test_primary_write_fail_is_immediate():
    stream = DuplicatingCheckpointOutputStream(CheckpointStateOutputStream(H, REMOTE, 0), CheckpointStateOutputStream(H, LOCAL))
    with pytest.raises(StreamFailure):
        stream.write(1)


def test_unaligned_streams_close_the_secondary():
    stream = DuplicatingCheckpointOutputStream(CheckpointStateOutputStream(H, REMOTE),
                                               CheckpointStateOutputStream(H, LOCAL, position=1))
    assert stream.secondary_failure is not None and stream.secondary.closed


@pytest.mark.parametrize("secondary,local", [(OK, True), (OPEN_FAILED, False), (WRITE_FAILED, False), (MISALIGNED, False)])
def test_snapshot_report_per_secondary_outcome(secondary, local):
    writes = [HandleWrite(H, True, secondary)]
    report = engine().snapshot(writes, local_backup=True)
    assert report == spec.snapshot_report(writes, local_backup=True)
    assert report.acknowledged and bool(report.local_state) == local


def test_a_failed_primary_declines_even_with_a_good_local_copy():
    writes = [HandleWrite(H, False, OK)]
    assert engine().snapshot(writes, True) == spec.SnapshotReport(False) == spec.snapshot_report(writes, True)


# -- the local store (TaskLocalStateStoreImplTest) -----------------------------------------------------


def store_with(ids):
    store = TaskLocalStateStoreImpl()
    for n in ids:
        store.begin(n)
        store.store_local_state(n, ("state", n))
    return store


def test_store_and_retrieve():
    store = store_with([0, 1, 2])
    assert store.retrieve_local_state(1) == (1, ("state", 1)) and store.retrieve_local_state(7) is None


def test_prune_checkpoints():
    store = store_with([0, 1, 2, 3])
    store.prune_matching_checkpoints(lambda n: n != 2)
    assert sorted(store.stored) == [2]


def test_confirm_checkpoint_keeps_the_confirmed_one():
    store = store_with([0, 1, 2])
    store.confirm_checkpoint(2)
    assert sorted(store.stored) == [2]


def test_abort_checkpoint_drops_only_that_one():
    store = store_with([0, 1, 2, 3])
    store.abort_checkpoint(2)
    assert sorted(store.stored) == [0, 1, 3]


def test_abort_of_a_never_registered_checkpoint_deletes_its_directory():
    store = TaskLocalStateStoreImpl()
    store.begin(5)
    store.abort_checkpoint(5)
    assert store.directories.directories == set()


def test_dispose_discards_everything_and_later_stores():
    store = store_with([0, 1])
    store.dispose()
    store.store_local_state(2, ("state", 2))
    assert store.stored == {} and store.directories.directories == set()


@pytest.mark.parametrize("ops", [
    [("begin", 1), ("store", 1), ("begin", 2), ("store", 2), ("confirm", 2), ("restore", 2)],
    [("begin", 1), ("begin", 2), ("store", 2), ("abort", 1), ("restore", 1)],
    [("begin", 1), ("store", 1), ("dispose",), ("begin", 2), ("store", 2)],
])
def test_engine_store_equals_the_model(ops):
    harness = engine().store_harness()
    model = spec.initial_store()
    for op in ops:
        assert harness.process(op) == spec.store_step(model, op)[1]
        model, _ = spec.store_step(model, op)
        assert harness.view() == model


# -- restoring (PrioritizedOperatorSubtaskStateTest, BackendRestorerProcedureTest) --------------------


def kg(group, location=LOCAL, readable=True):
    return KeyedHandle(group, group + 1, 1, location, readable)


def test_try_create_mixed_local_and_remote_alternative():
    """JM = {r0..r3}; alternatives [{l0, l3a}, {}, {l1, l3b, l5}] give {l0, l1, r2, l3a}."""
    jm = tuple(kg(g, REMOTE) for g in range(4))
    l3b = kg(3, readable=False)  # distinguishable from l3a
    alternatives = [(kg(0), kg(3)), (), (kg(1), l3b, kg(5))]
    mixed, last = PrioritizedOperatorSubtaskStateBuilder(jm, alternatives).build()
    assert mixed == (kg(0), kg(1), kg(2, REMOTE), kg(3)) and last == jm


def test_without_local_alternatives_only_the_primary():
    jm = (kg(0, REMOTE),)
    assert PrioritizedOperatorSubtaskStateBuilder(jm, []).build() == (jm,)
    assert spec.prioritized_alternatives(jm, ()) == (jm,)


def test_restore_procedure_order_and_failure():
    bad, good = (kg(0, readable=False),), (kg(0, REMOTE),)
    assert BackendRestorerProcedure().create_and_restore([bad, good]) == (good, 2)
    with pytest.raises(RestoreFailed, match="any of the 2 provided restore options"):
        BackendRestorerProcedure().create_and_restore([bad, bad])


def test_model_restore_prefers_readable_local_parts():
    jm = (kg(0, REMOTE), kg(1, REMOTE))
    outcome = spec.restore(spec.prioritized_alternatives(jm, (kg(1),)))
    assert outcome == spec.RestoreOutcome((kg(0, REMOTE), kg(1)), 1)
    assert spec.content(outcome.handles) == spec.content(jm)


# -- scheduling (PreviousAllocationSlotSelectionStrategyTest) ---------------------------------------


def profile(preferred=(), reserved=(), locations=()):
    return SlotProfile(frozenset(preferred), frozenset(reserved), tuple(locations))


def test_previous_allocation_overrides_preferred_location():
    free = [Slot(1, tm=1), Slot(2, tm=2)]
    assert PreviousAllocationSlotSelectionStrategy().select_best_slot_for_profile(free, profile({2}, {2}, [1])) == Slot(2, 2)


def test_previous_not_available_but_by_locality():
    free = [Slot(1, tm=1), Slot(2, tm=2)]
    assert PreviousAllocationSlotSelectionStrategy().select_best_slot_for_profile(free, profile({9}, {9}, [2])) == Slot(2, 2)


def test_previous_not_available_and_all_others_blacklisted():
    free = [Slot(1, tm=1), Slot(2, tm=2)]
    assert PreviousAllocationSlotSelectionStrategy().select_best_slot_for_profile(free, profile({9}, {1, 2, 9})) is None


def test_previous_not_available_and_some_others_blacklisted():
    free = [Slot(1, tm=1), Slot(2, tm=2), Slot(3, tm=3)]
    chosen = PreviousAllocationSlotSelectionStrategy().select_best_slot_for_profile(free, profile({9}, {1, 3, 9}))
    assert chosen == Slot(2, 2)


def test_a_task_that_lost_its_slot_takes_a_fresh_one_not_a_neighbours():
    requests = [SlotRequest(0, 0, 0), SlotRequest(1, 1, 0)]
    assignment = engine().assign_slots(requests, free=[Slot(1, 0)], fresh=1)
    assert assignment.slots[1] == Slot(1, 0) and assignment.slots[0].allocation not in (0, 1)
    assert spec.check_assignment(requests, [Slot(1, 0)], 1, assignment) == []
    assert spec.max_local_recoveries(requests, [Slot(1, 0)], 1) == 1


# -- a cluster (LocalRecoveryITCase) ------------------------------------------------------------------


def test_tasks_on_surviving_task_managers_recover_locally():
    """testRecoverLocallyFromProcessCrash: restored tasks keep their AllocationID and local state."""
    cluster = engine().cluster(tasks=4, slots_per_tm=2, handles_per_task=1)
    ok = ((True, OK),)
    cluster.process(("checkpoint", (ok,) * 4, frozenset()))
    before = list(cluster.placement)
    observation = cluster.process(("lose_tm", 0))
    restores = observation[5]
    for task in (2, 3):  # on the surviving TaskManager
        assert cluster.placement[task] == before[task]
        assert all(h.location == LOCAL for h in restores[task][3].handles)
    for task in (0, 1):
        assert all(h.location == REMOTE for h in restores[task][3].handles)
    assert all(spec.content(cluster.state[t]) == ((t, 1),) for t in range(4))


def test_every_variant_has_a_part_and_a_mechanism():
    for name, cls in LOCAL_RECOVERY_ENGINES.items():
        if name != "flink":
            assert cls.part in ("write", "store", "restore", "scheduling"), name
            assert cls.__doc__ and cls.source, name

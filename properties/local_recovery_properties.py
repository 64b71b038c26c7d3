"""Properties of task-local state recovery (seed "Task-Local Recovery"; recovery facts §2).

Five groups, each property a plain function returning a list of :class:`~.violation.Violation`:

* writing a snapshot — ``(writes, local_backup, report)``;
* the local store — over a trace of ``(op, outputs, view)`` steps (``view`` is the store's
  :class:`~flipcheck.model.local_recovery.LocalStore` afterwards);
* restoring — ``(jm, local, alternatives, outcome)``;
* scheduling — ``(requests, free, fresh, assignment)``, with the optimum computed by a
  networkx matching (:func:`~flipcheck.model.local_recovery.max_local_recoveries`);
* the whole cluster — :class:`ClusterChecker` follows a
  :class:`~flipcheck.reference_impl.local_recovery.LocalRecoveryCluster` run event by event with
  the model's local stores as a shadow and judges every checkpoint and failover with the groups
  above plus ``restored_state_equals_primary`` and ``local_recovery_when_possible``.

Example
-------
>>> from flipcheck.model.local_recovery import KeyedHandle, HandleWrite, OK
>>> from flipcheck.reference_impl.local_recovery_variants import engine
>>> writes = [HandleWrite(KeyedHandle(0, 1, 1), True, "write-failed")]
>>> check_write(writes, True, engine("flink").snapshot(writes, True))
[]
>>> [v.property for v in check_write(writes, True, engine("secondary-failure-fails-checkpoint").snapshot(writes, True))]
['checkpoint_succeeds_iff_primary_succeeds']
"""

from __future__ import annotations

from typing import Sequence

from flipcheck.model import local_recovery as spec
from flipcheck.model.local_recovery import LOCAL, REMOTE

from .violation import Property, Violation

__all__ = [
    "checkpoint_succeeds_iff_primary_succeeds", "ack_carries_primary_only", "local_copy_only_with_primary",
    "check_write",
    "confirm_drops_older_keeps_latest", "abort_drops_that_checkpoint", "restore_keeps_only_restored",
    "retrieve_returns_requested_id", "dispose_empties_store", "no_orphan_directories", "STORE_STEP_CHECKS",
    "check_store_trace",
    "restore_equals_primary", "local_first", "fails_only_if_all_alternatives_fail", "primary_is_last_alternative",
    "partial_local_merged_by_key_group_range", "check_restore",
    "takes_previous_slot_when_free", "no_cascading_steals", "slots_used_once", "maximal_local_recovery",
    "every_task_placed_when_possible", "check_scheduling",
    "restored_state_equals_primary", "local_recovery_when_possible", "store_retention_matches_spec", "ClusterChecker",
    "LOCAL_RECOVERY_PROPERTIES", "PROPERTY_NAMES", "GROUPS",
]


def _ranges(handles) -> list:
    return sorted((h.start, h.end) for h in handles)


# ------------------------------------------------------------------------------------------------
# 1. Writing a snapshot


def checkpoint_succeeds_iff_primary_succeeds(writes, local_backup, report) -> list[Violation]:
    """The task acknowledges iff every primary write succeeded, whatever happened locally (W1)."""
    expected = all(w.primary_ok for w in writes)
    if report.acknowledged == expected:
        return []
    outcome = "acknowledged" if report.acknowledged else "declined"
    return [Violation("checkpoint_succeeds_iff_primary_succeeds",
                      f"{outcome} with primary writes {[w.primary_ok for w in writes]} and local writes "
                      f"{[w.secondary for w in writes]}")]


def ack_carries_primary_only(writes, local_backup, report) -> list[Violation]:
    """The acknowledgement holds exactly the primary handles, every one of them (W2)."""
    if not report.acknowledged:
        return [] if not report.jm_state else [Violation("ack_carries_primary_only", "a decline carries state")]
    if any(h.location != REMOTE for h in report.jm_state) or _ranges(report.jm_state) != _ranges(w.handle for w in writes):
        return [Violation("ack_carries_primary_only", f"acknowledged {report.jm_state}")]
    return []


def local_copy_only_with_primary(writes, local_backup, report) -> list[Violation]:
    """The local copy exists only with an acknowledged primary, is a subset of it, and holds every
    handle whose local write succeeded (W3: "Primary state must always be complete and is a
    superset of the task-local state")."""
    expected = spec.snapshot_report(writes, local_backup)
    if _ranges(report.local_state) == _ranges(expected.local_state) and all(h.location == LOCAL for h in report.local_state):
        return []
    return [Violation("local_copy_only_with_primary",
                      f"local copy {_ranges(report.local_state)}, expected {_ranges(expected.local_state)}")]


WRITE_CHECKS = (checkpoint_succeeds_iff_primary_succeeds, ack_carries_primary_only, local_copy_only_with_primary)


def check_write(writes, local_backup, report) -> list[Violation]:
    return [v for check in WRITE_CHECKS for v in check(writes, local_backup, report)]


# ------------------------------------------------------------------------------------------------
# 2. The local store: step checks over (before, op, outputs, after, model after)


def confirm_drops_older_keeps_latest(before, op, outputs, after, model) -> str | None:
    """``confirm(n)`` leaves no local copy older than ``n`` and keeps ``n`` and newer (L1)."""
    if op[0] != "confirm":
        return None
    older = sorted(i for i in after.snapshots if i < op[1])
    lost = sorted(i for i in before.snapshots if i >= op[1] and i not in after.snapshots)
    if older or lost:
        return f"after confirm({op[1]}) older copies {older} remain, newer {lost} are gone"
    return None


def abort_drops_that_checkpoint(before, op, outputs, after, model) -> str | None:
    """``abort(n)`` discards exactly the local copy of ``n`` (L2)."""
    if op[0] == "abort" and after.snapshots != before.snapshots - {op[1]}:
        return f"abort({op[1]}) turned {sorted(before.snapshots)} into {sorted(after.snapshots)}"
    return None


def restore_keeps_only_restored(before, op, outputs, after, model) -> str | None:
    """After a restore of ``n`` only the copy of ``n`` remains (L3, FLINK-8777)."""
    if op[0] == "restore" and not after.snapshots <= {op[1]}:
        return f"after restoring {op[1]} copies {sorted(after.snapshots)} remain"
    return None


def retrieve_returns_requested_id(before, op, outputs, after, model) -> str | None:
    """A restore of ``n`` gets the copy of ``n`` if there is one, and never another's (L3)."""
    if op[0] != "restore":
        return None
    expected = op[1] if op[1] in before.snapshots else None
    got = next((o[2] for o in outputs if o[0] == "retrieved"), "nothing")
    if got != expected:
        return f"restore({op[1]}) retrieved {got}, expected {expected}"
    return None


def dispose_empties_store(before, op, outputs, after, model) -> str | None:
    """After ``dispose`` the store is empty and stays empty (L4)."""
    if after.disposed and (after.snapshots or after.directories):
        return f"a disposed store holds {sorted(after.snapshots)} / directories {sorted(after.directories)}"
    return None


def no_orphan_directories(before, op, outputs, after, model) -> str | None:
    """No checkpoint directory outlives its copy or its checkpoint (L5, FLINK-28515)."""
    orphans = sorted(after.directories - model.directories)
    if orphans:
        return f"directories {orphans} remain after {op}"
    return None


STORE_STEP_CHECKS = (confirm_drops_older_keeps_latest, abort_drops_that_checkpoint, restore_keeps_only_restored,
                     retrieve_returns_requested_id, dispose_empties_store, no_orphan_directories)


def check_store_trace(steps) -> list[Violation]:
    """Every store check over ``(op, outputs, view)`` steps, with the model run alongside; each
    property reported once, at its first violating step."""
    model, before, found, seen = spec.initial_store(), spec.initial_store(), [], set()
    for index, (op, outputs, after) in enumerate(steps):
        model, _ = spec.store_step(model, op)
        for check in STORE_STEP_CHECKS:
            message = None if check.__name__ in seen else check(before, op, outputs, after, model)
            if message:
                seen.add(check.__name__)
                found.append(Violation(check.__name__, f"step {index + 1}: {message}", index))
        before = after
    return found


# ------------------------------------------------------------------------------------------------
# 3. Restoring


def restore_equals_primary(jm, local, alternatives, outcome) -> list[Violation]:
    """A successful restore holds exactly the primary's state: every key group once, from the
    restored checkpoint ("the ground truth of the checkpoint state is the primary copy")."""
    if outcome.handles is None or spec.content(outcome.handles) == spec.content(jm):
        return []
    return [Violation("restore_equals_primary",
                      f"restored {spec.content(outcome.handles)}, the primary holds {spec.content(jm)}")]


def local_first(jm, local, alternatives, outcome) -> list[Violation]:
    """When the local parts can be read they are used: the restore reads exactly the mixed
    alternative of the model ("Flink will always attempt to restore from task-local state first")."""
    expected = spec.restore(spec.prioritized_alternatives(jm, local))
    used = [h for h in outcome.handles or () if h.location == LOCAL]
    wanted = [h for h in expected.handles or () if h.location == LOCAL]
    if _ranges(used) == _ranges(wanted) or outcome.handles is None:
        return []
    return [Violation("local_first", f"restored key groups {_ranges(used)} locally, {_ranges(wanted)} were readable")]


def fails_only_if_all_alternatives_fail(jm, local, alternatives, outcome) -> list[Violation]:
    """The restore fails iff every alternative fails ("Recovery only fails, if primary and the
    (optional) secondary copy failed")."""
    expected = spec.restore(spec.prioritized_alternatives(jm, local))
    if (outcome.handles is None) == (expected.handles is None):
        return []
    return [Violation("fails_only_if_all_alternatives_fail",
                      "the restore failed although an alternative reads" if outcome.handles is None
                      else "the restore succeeded although no alternative reads")]


def primary_is_last_alternative(jm, local, alternatives, outcome) -> list[Violation]:
    """The primary state is always the last alternative (P2)."""
    if alternatives and tuple(alternatives[-1]) == tuple(jm):
        return []
    return [Violation("primary_is_last_alternative", f"alternatives {alternatives} do not end with {jm}")]


def partial_local_merged_by_key_group_range(jm, local, alternatives, outcome) -> list[Violation]:
    """A local handle only replaces a primary handle of the same key-group range (P1)."""
    ranges = {(h.start, h.end) for h in jm}
    bad = [h for a in alternatives for h in a if h.location == LOCAL and (h.start, h.end) not in ranges]
    if not bad:
        return []
    return [Violation("partial_local_merged_by_key_group_range", f"local handles {bad} match no primary range")]


RESTORE_CHECKS = (restore_equals_primary, local_first, fails_only_if_all_alternatives_fail,
                  primary_is_last_alternative, partial_local_merged_by_key_group_range)


def check_restore(jm, local, alternatives, outcome) -> list[Violation]:
    return [v for check in RESTORE_CHECKS for v in check(jm, local, alternatives, outcome)]


# ------------------------------------------------------------------------------------------------
# 4. Scheduling


def _rule_violations(requests, free, fresh, assignment, rule: str) -> list[str]:
    return [p for p in spec.check_assignment(requests, free, fresh, assignment) if p.startswith(rule)]


def takes_previous_slot_when_free(requests, free, fresh, assignment) -> list[Violation]:
    """Each task first takes its previous slot (A1)."""
    return [Violation("takes_previous_slot_when_free", p) for p in _rule_violations(requests, free, fresh, assignment, "A1")]


def no_cascading_steals(requests, free, fresh, assignment) -> list[Violation]:
    """No task takes another recovering task's previous slot (A2)."""
    return [Violation("no_cascading_steals", p) for p in _rule_violations(requests, free, fresh, assignment, "A2")]


def slots_used_once(requests, free, fresh, assignment) -> list[Violation]:
    """Slots are free or fresh ones, each used once (A3)."""
    return [Violation("slots_used_once", p) for p in _rule_violations(requests, free, fresh, assignment, "A3")]


def maximal_local_recovery(requests, free, fresh, assignment) -> list[Violation]:
    """As many tasks recover locally as in the best valid assignment (seed: "we give the maximum
    number of tasks a chance to recover from their local state"), by an exact matching."""
    got = len(spec.local_recoveries(requests, assignment))
    best = spec.max_local_recoveries(requests, free, fresh)
    if got >= best:
        return []
    return [Violation("maximal_local_recovery", f"{got} tasks recover locally, {best} could")]


def every_task_placed_when_possible(requests, free, fresh, assignment) -> list[Violation]:
    """Every task gets a slot when the free and fresh slots suffice."""
    placed = sum(s is not None for s in assignment.slots)
    possible = spec.placeable(requests, free, fresh)
    if placed >= possible:
        return []
    return [Violation("every_task_placed_when_possible", f"{placed} of {len(requests)} tasks placed, {possible} could be")]


SCHEDULING_CHECKS = (takes_previous_slot_when_free, no_cascading_steals, slots_used_once, maximal_local_recovery,
                     every_task_placed_when_possible)


def check_scheduling(requests, free, fresh, assignment) -> list[Violation]:
    return [v for check in SCHEDULING_CHECKS for v in check(requests, free, fresh, assignment)]


# ------------------------------------------------------------------------------------------------
# 5. The whole cluster


def restored_state_equals_primary(task: int, expected_jm, outcome) -> list[Violation]:
    """After a failover a task's state is the last completed checkpoint's (or empty before any)."""
    if outcome is None or outcome.handles is None or spec.content(outcome.handles) == spec.content(expected_jm):
        return []
    return [Violation("restored_state_equals_primary",
                      f"task {task} restored {spec.content(outcome.handles)}, the checkpoint holds {spec.content(expected_jm)}")]


def local_recovery_when_possible(task: int, expected_local, outcome) -> list[Violation]:
    """A task back in its previous slot, whose local copy survived and reads, restores those key
    groups locally ("it is very likely that in a recovery most tasks can return to their previous
    location and find their local state intact")."""
    used = [h for h in (outcome.handles or ()) if h.location == LOCAL] if outcome is not None else []
    if _ranges(used) == _ranges(expected_local):
        return []
    return [Violation("local_recovery_when_possible",
                      f"task {task} restored {_ranges(used)} locally, expected {_ranges(expected_local)}")]


class ClusterChecker:
    """Follows a cluster run with the model: the local store of every (allocation, task) and what
    its local copies hold, the last completed checkpoint; judges each observation.

    TaskManager liveness, slot ids and the assignment are taken from the run (the environment and
    the scheduler, which is judged by the scheduling properties), everything else from the model.
    """

    def __init__(self, cluster):
        self.n, self.local_backup = cluster.n, cluster.local_backup
        self.stores: dict = {}      # (allocation, task) -> spec.LocalStore
        self.copies: dict = {}      # (allocation, task, checkpoint) -> local handles
        self.placement = list(cluster.placement)
        self.completed: tuple | None = None  # (id, jm handles per task)

    def _key(self, task):
        slot = self.placement[task]
        return None if slot is None else (slot.allocation, task)

    def _op(self, key, op) -> tuple:
        store, outputs = spec.store_step(self.stores.get(key, spec.initial_store()), op)
        self.stores[key] = store
        return outputs

    def step(self, event: tuple, observation: tuple, cluster) -> list[Violation]:
        found: list[Violation] = []
        kind = event[0]
        if kind == "checkpoint":
            found += self._checkpoint(event, observation, cluster)
        elif kind == "corrupt_local":
            key = self._key(event[1])
            for (allocation, task, checkpoint), handles in list(self.copies.items()):
                if (allocation, task) == key:
                    self.copies[(allocation, task, checkpoint)] = tuple(h._replace(readable=False) for h in handles)
        elif kind == "lose_primary" and self.completed is not None:
            jm = list(self.completed[1])
            jm[event[1]] = tuple(h._replace(readable=False) for h in jm[event[1]])
            self.completed = (self.completed[0], tuple(jm))
        if observation and observation[0] == "failover":
            found += self._failover(observation, cluster)
        found += self._stores_agree(cluster)
        return found

    def _checkpoint(self, event, observation, cluster) -> list[Violation]:
        _, checkpoint_id, completed, reports = observation
        outcomes, lost = event[1], set(event[2])
        running = [t for t in range(self.n) if self.placement[t] is not None]
        found, acked = [], []
        for task, report in zip(running, reports):
            writes = [spec.HandleWrite(h, *outcomes[task][k]) for k, h in enumerate(cluster.handles(task, checkpoint_id))]
            found += check_write(writes, self.local_backup, report)
            expected = spec.snapshot_report(writes, self.local_backup)
            key = self._key(task)
            self._op(key, ("begin", checkpoint_id))
            if expected.acknowledged:
                self._op(key, ("store", checkpoint_id))
                self.copies[key + (checkpoint_id,)] = expected.local_state
            acked.append(expected)
        should_complete = len(running) == self.n and all(r.acknowledged for r in acked)
        if completed != should_complete:
            found.append(Violation("checkpoint_succeeds_iff_primary_succeeds",
                                   f"checkpoint {checkpoint_id} {'completed' if completed else 'failed'}, "
                                   f"the primaries say {'complete' if should_complete else 'fail'}"))
        if should_complete:
            self.completed = (checkpoint_id, tuple(r.jm_state for r in acked))
        for task in running:
            if task not in lost:
                self._op(self._key(task), ("confirm" if should_complete else "abort", checkpoint_id))
        return found

    def _failover(self, observation, cluster) -> list[Violation]:
        _, requests, free, fresh, assignment, restores = observation
        found = check_scheduling(requests, free, fresh, assignment)
        # Local state goes with its TaskManager.
        self.stores = {k: v for k, v in self.stores.items() if any(k[0] in tm.slots for tm in cluster.tms.values())}
        self.placement = list(assignment.slots)
        for task, record in enumerate(restores):
            if record is None:
                continue
            jm_seen, local_seen, alternatives, outcome = record
            key = self._key(task)
            if self.completed is None:
                found += restored_state_equals_primary(task, cluster.handles(task, 0), outcome)
                continue
            restore_id, jm = self.completed
            retrieved = self._op(key, ("restore", restore_id))
            local = self.copies.get(key + (restore_id,), ()) if retrieved and retrieved[0][2] is not None else ()
            found += check_restore(jm[task], local_seen, alternatives, outcome)
            found += restored_state_equals_primary(task, jm[task], outcome)
            expected = spec.restore(spec.prioritized_alternatives(jm[task], local))
            found += local_recovery_when_possible(task, [h for h in expected.handles or () if h.location == LOCAL],
                                                  outcome)
        return found

    def _stores_agree(self, cluster) -> list[Violation]:
        found = []
        for tm in cluster.tms.values():
            for key, store in tm.stores.items():
                view = spec.LocalStore(frozenset(store.stored), frozenset(store.directories.directories), store.disposed)
                found += store_retention_matches_spec(key, view, self.stores.get(key, spec.initial_store()))
        return found


def store_retention_matches_spec(key, view: spec.LocalStore, model: spec.LocalStore) -> list[Violation]:
    """A local store of a cluster run holds the copies the model's store holds, and no directory
    the model's lacks (rules L1-L5 applied to the run's checkpoints, confirmations and restores)."""
    found = []
    if view.snapshots != model.snapshots:
        found.append(Violation("store_retention_matches_spec",
                               f"store {key} holds {sorted(view.snapshots)}, the model {sorted(model.snapshots)}"))
    if view.directories - model.directories:
        found.append(Violation("no_orphan_directories", f"store {key} keeps directories {sorted(view.directories)}"))
    return found


# ------------------------------------------------------------------------------------------------
# Registry


def _store_trace_check(step_check):
    def check(steps) -> list[Violation]:
        return [v for v in check_store_trace(steps) if v.property == step_check.__name__]

    check.__name__, check.__doc__ = step_check.__name__, step_check.__doc__
    return check


_SEED = "seed Task-Local Recovery"
LOCAL_RECOVERY_PROPERTIES = (
    Property("checkpoint_succeeds_iff_primary_succeeds", checkpoint_succeeds_iff_primary_succeeds,
             "A checkpoint succeeds iff the primary copy succeeds, whatever happens to the local copy.",
             f"{_SEED}: 'the primary copy must be successful and a failure to produce the secondary, local copy will not "
             "fail the checkpoint. A checkpoint will fail if the primary copy could not be created, even if the secondary "
             "copy was successfully created.'"),
    Property("ack_carries_primary_only", ack_carries_primary_only,
             "The acknowledgement carries the primary handles only.",
             f"{_SEED}: 'Only the primary copy is acknowledged and managed by the job manager'"),
    Property("local_copy_only_with_primary", local_copy_only_with_primary,
             "The local copy exists only with the primary, and holds every handle written locally.",
             f"{_SEED}: 'Primary state must always be complete and is a superset of the task-local state.'"),
    Property("confirm_drops_older_keeps_latest", _store_trace_check(confirm_drops_older_keeps_latest),
             "confirm(n) drops local copies older than n and keeps n.",
             f"{_SEED}: 'only keep the task-local state of the latest checkpoint'; recovery facts §2.4 Retention"),
    Property("abort_drops_that_checkpoint", _store_trace_check(abort_drops_that_checkpoint),
             "abort(n) drops exactly n.", "recovery facts §2.4 Retention: abortCheckpoint(n)"),
    Property("restore_keeps_only_restored", _store_trace_check(restore_keeps_only_restored),
             "A restore keeps only the restored checkpoint's local copy.", "recovery facts §2.4 Retention: FLINK-8777"),
    Property("retrieve_returns_requested_id", _store_trace_check(retrieve_returns_requested_id),
             "The store returns the requested checkpoint's copy, never another's.",
             "recovery facts §2.7 Invariants: 'The local store returns a snapshot for a checkpoint id other than the one requested' (never)"),
    Property("dispose_empties_store", _store_trace_check(dispose_empties_store),
             "A disposed store is empty and stays empty.", "recovery facts §2.7 Invariants: 'After dispose, the store is empty'"),
    Property("no_orphan_directories", _store_trace_check(no_orphan_directories),
             "No local checkpoint directory outlives its copy or its checkpoint.", "recovery facts §2.4: FLINK-28515"),
    Property("restore_equals_primary", restore_equals_primary,
             "A restore yields exactly the primary's state.",
             f"{_SEED}: 'the ground truth of the checkpoint state is the primary copy'"),
    Property("local_first", local_first,
             "Readable local parts are restored locally.",
             f"{_SEED}: 'Flink will always attempt to restore from task-local state first, if a matching secondary copy is available'"),
    Property("fails_only_if_all_alternatives_fail", fails_only_if_all_alternatives_fail,
             "The restore falls back transparently and fails only if every alternative fails.",
             f"{_SEED}: 'Flink will transparently retry to recover the task from the primary copy. Recovery only fails, if "
             "primary and the (optional) secondary copy failed.'"),
    Property("primary_is_last_alternative", primary_is_last_alternative,
             "The primary state is the last alternative.", "recovery facts §2.5 Restore path: 'JM state is always the last alternative'"),
    Property("partial_local_merged_by_key_group_range", partial_local_merged_by_key_group_range,
             "Partial local copies are merged with the primary by key-group range.",
             f"{_SEED}: 'Flink will first try to recover local parts locally, non-local state is restored from the primary copy'; FLINK-33341"),
    Property("takes_previous_slot_when_free", takes_previous_slot_when_free,
             "Each task first takes its previous slot.",
             f"{_SEED}: 'Each task remembers its previous allocation and requests the exact same slot to restart in recovery.'"),
    Property("no_cascading_steals", no_cascading_steals,
             "No task takes another recovering task's previous slot.",
             f"{_SEED}: 'a task that cannot return to its previous location will not drive other recovering tasks out of their previous slots'"),
    Property("slots_used_once", slots_used_once,
             "Only free or fresh slots are used, each once.", "recovery facts §2.6 Allocation-preserving scheduling"),
    Property("maximal_local_recovery", maximal_local_recovery,
             "As many tasks recover locally as in the best valid assignment (exact matching).",
             f"{_SEED}: 'we give the maximum number of tasks a chance to recover from their local state'"),
    Property("every_task_placed_when_possible", every_task_placed_when_possible,
             "Every task gets a slot when free and fresh slots suffice.",
             f"{_SEED}: 'If this slot is not available, the task will request a new, fresh slot from the resource manager.'"),
    Property("restored_state_equals_primary", restored_state_equals_primary,
             "After a failover every task holds the last completed checkpoint's state.",
             f"{_SEED}: 'the ground truth of the checkpoint state is the primary copy'"),
    Property("local_recovery_when_possible", local_recovery_when_possible,
             "A task back in its previous slot with an intact local copy recovers locally.",
             f"{_SEED}: 'most tasks can return to their previous location and find their local state intact'"),
    Property("store_retention_matches_spec", store_retention_matches_spec,
             "Every local store of a cluster run holds what the model's store holds.",
             "model/local_recovery.py rules L1-L5"),
)
PROPERTY_NAMES = tuple(p.name for p in LOCAL_RECOVERY_PROPERTIES)
GROUPS = {
    "write": tuple(f.__name__ for f in WRITE_CHECKS),
    "store": tuple(f.__name__ for f in STORE_STEP_CHECKS) + ("refines_spec",),
    "restore": tuple(f.__name__ for f in RESTORE_CHECKS),
    "scheduling": tuple(f.__name__ for f in SCHEDULING_CHECKS),
    "cluster": ("checkpoint_succeeds_iff_primary_succeeds", "restored_state_equals_primary",
                "local_recovery_when_possible", "store_retention_matches_spec", "no_orphan_directories",
                *(f.__name__ for f in RESTORE_CHECKS), *(f.__name__ for f in SCHEDULING_CHECKS)),
}

"""Exhaustive checks of task-local recovery for small bounds.

* :func:`all_writes` — every combination of primary and local write outcomes for up to three
  handles, local backup on and off;
* :func:`explore_store` — every sequence of store operations on checkpoint ids ``1..max_id``,
  the engine's store next to the model (``refines_spec``) with every store property;
* :func:`all_restores` — every layout of the primary's handles over ``key_groups`` key groups,
  every readability of them, and for each primary handle every kind of local copy (none, same
  range, unreadable), plus local copies with another layout (the store hands out copies of the
  requested checkpoint only: a copy of another checkpoint is the store's fault, checked there);
* :func:`all_schedulings` — every bulk of up to ``max_tasks`` tasks whose previous slots are
  free or lost, with 0-2 other free slots and 0-2 fresh slots from the resource manager, in
  every request order.

Each ``check_*`` function runs a variant over such a list and returns ``(cases, first failure)``.

Example
-------
>>> cases, failure = check_all(check_scheduling_cases, "flink", all_schedulings(3))
>>> cases, failure
(522, None)
>>> cases, (case, violations) = check_all(check_scheduling_cases, "flink-before-9635", all_schedulings(3))
>>> sorted({v.property for v in violations})
['maximal_local_recovery', 'no_cascading_steals', 'takes_previous_slot_when_free']
"""

from __future__ import annotations

import itertools
from typing import Callable, Iterable, NamedTuple

from flipcheck.model import local_recovery as spec
from flipcheck.model.local_recovery import LOCAL, REMOTE, SECONDARY_OUTCOMES, HandleWrite, KeyedHandle, Slot, SlotRequest
from flipcheck.reference_impl.local_recovery_variants import engine as make_engine

from . import local_recovery_properties as props
from .explore import Exploration, explore
from .violation import Violation

__all__ = [
    "WriteCase", "StoreCase", "RestoreCase", "SchedulingCase",
    "all_writes", "explore_store", "all_restores", "all_schedulings", "scheduling_instance", "compositions",
    "check_write_case", "check_store_case", "check_restore_case", "check_scheduling_cases", "check_all", "store_steps"]


class WriteCase(NamedTuple):
    writes: tuple
    local_backup: bool
    kind: str = "write"


class StoreCase(NamedTuple):
    ops: tuple
    kind: str = "store"


class RestoreCase(NamedTuple):
    jm: tuple
    local: tuple
    kind: str = "restore"


class SchedulingCase(NamedTuple):
    requests: tuple
    free: tuple
    fresh: int
    kind: str = "scheduling"


# ------------------------------------------------------------------------------------------------
# Enumerations


def all_writes(max_handles: int = 3) -> list[WriteCase]:
    cases = []
    outcomes = [(p, s) for p in (True, False) for s in SECONDARY_OUTCOMES]
    for count in range(1, max_handles + 1):
        handles = [KeyedHandle(k, k + 1, 1) for k in range(count)]
        for combination in itertools.product(outcomes, repeat=count):
            writes = tuple(HandleWrite(h, p, s) for h, (p, s) in zip(handles, combination))
            cases += [WriteCase(writes, True), WriteCase(writes, False)]
    return cases


def compositions(key_groups: int) -> list[tuple]:
    """Every split of ``[0, key_groups)`` into consecutive ranges."""
    result = []
    for cuts in itertools.product((False, True), repeat=key_groups - 1):
        bounds = [0] + [k + 1 for k, cut in enumerate(cuts) if cut] + [key_groups]
        result.append(tuple(zip(bounds, bounds[1:])))
    return result


_LOCAL_KINDS = ("none", "same", "unreadable")


def all_restores(key_groups: int = 4, checkpoint: int = 2) -> list[RestoreCase]:
    cases = []
    layouts = compositions(key_groups)
    for layout in layouts:
        for readable in itertools.product((True, False), repeat=len(layout)):
            jm = tuple(KeyedHandle(a, b, checkpoint, REMOTE, r) for (a, b), r in zip(layout, readable))
            for kinds in itertools.product(_LOCAL_KINDS, repeat=len(layout)):
                local = tuple(KeyedHandle(a, b, checkpoint, LOCAL, kind != "unreadable")
                              for (a, b), kind in zip(layout, kinds) if kind != "none")
                cases.append(RestoreCase(jm, local))
            for other in layouts:  # a local copy written with another handle layout
                if other != layout:
                    cases.append(RestoreCase(jm, tuple(KeyedHandle(a, b, checkpoint, LOCAL) for a, b in other)))
    return cases


def scheduling_instance(previous_free: Iterable[bool], extra: int, fresh: int, order: Iterable[int],
                        slots_per_tm: int = 2) -> SchedulingCase:
    """Tasks ``0..n-1`` had slots ``0..n-1`` (``slots_per_tm`` per TaskManager); the flags say
    which are still free (the others died with their TaskManager); ``extra`` more free slots
    nobody had (on the first TaskManager, then on a new one); ``order`` is the request order."""
    previous_free = list(previous_free)
    n = len(previous_free)
    requests = {t: SlotRequest(t, t, t // slots_per_tm) for t in range(n)}
    free = [Slot(t, t // slots_per_tm) for t in range(n) if previous_free[t]]
    free += [Slot(n + k, 0 if k % 2 == 0 else (n + slots_per_tm - 1) // slots_per_tm) for k in range(extra)]
    return SchedulingCase(tuple(requests[t] for t in order), tuple(sorted(free)), fresh)


def all_schedulings(max_tasks: int = 4, max_extra: int = 2, max_fresh: int = 2) -> list[SchedulingCase]:
    cases = []
    for n in range(1, max_tasks + 1):
        for flags in itertools.product((True, False), repeat=n):
            for extra in range(max_extra + 1):
                for fresh in range(max_fresh + 1):
                    for order in itertools.permutations(range(n)):
                        cases.append(scheduling_instance(flags, extra, fresh, order))
    return cases


# ------------------------------------------------------------------------------------------------
# Checks of single cases


def check_write_case(case: WriteCase, variant: str) -> list[Violation]:
    return props.check_write(case.writes, case.local_backup, make_engine(variant).snapshot(case.writes, case.local_backup))


def store_steps(case: StoreCase, variant: str):
    harness = make_engine(variant).store_harness()
    model, steps, refinement = spec.initial_store(), [], []
    for index, op in enumerate(case.ops):
        outputs = harness.process(op)
        model, expected = spec.store_step(model, op)
        view = harness.view()
        if (outputs != expected or view != model) and not refinement:
            refinement.append(Violation("refines_spec", f"step {index + 1} {op}: store {view} {outputs}, model {model} "
                                                        f"{expected}", index))
        steps.append((op, outputs, view))
    return steps, refinement


def check_store_case(case: StoreCase, variant: str) -> list[Violation]:
    steps, refinement = store_steps(case, variant)
    return props.check_store_trace(steps) + refinement


def check_restore_case(case: RestoreCase, variant: str) -> list[Violation]:
    engine = make_engine(variant)
    alternatives = engine.prioritized_alternatives(case.jm, case.local)
    return props.check_restore(case.jm, case.local, alternatives, engine.restore(case.jm, case.local))


def check_scheduling_cases(case: SchedulingCase, variant: str) -> list[Violation]:
    assignment = make_engine(variant).assign_slots(case.requests, case.free, case.fresh)
    return props.check_scheduling(case.requests, case.free, case.fresh, assignment)


def check_all(check: Callable, variant: str, cases: Iterable) -> tuple[int, tuple | None]:
    """Check every case; ``(cases checked, (first failing case, its violations) or None)``."""
    count = 0
    for case in cases:
        count += 1
        violations = check(case, variant)
        if violations:
            return count, (case, violations)
    return count, None


# ------------------------------------------------------------------------------------------------
# The store, explored


def explore_store(variant: str = "flink", max_id: int = 3, refinement: bool = True,
                  check_properties: bool = True) -> Exploration:
    """Every operation sequence on ids ``1..max_id`` (each checkpoint begins before it is stored),
    the engine's store next to the model; the state is (model, engine store, previous view)."""
    engine = make_engine(variant)
    ops = [(kind, n) for kind in ("begin", "store", "confirm", "abort", "restore") for n in range(1, max_id + 1)]
    ops.append(("dispose",))

    def successors(state):
        model, snapshot, before = state
        for op in ops:
            if op[0] == "store" and op[1] not in model.directories and not model.disposed:
                continue  # a copy is stored only after its checkpoint began
            harness = engine.store_harness().restore(snapshot)
            outputs = harness.process(op)
            view = harness.view()
            model2, expected = spec.store_step(model, op)
            problems = []
            if refinement and (outputs != expected or view != model2):
                problems.append(Violation("refines_spec", f"{op}: store {view} {outputs}, model {model2} {expected}"))
            if check_properties:
                for check in props.STORE_STEP_CHECKS:
                    message = check(before, op, outputs, view, model2)
                    if message:
                        problems.append(Violation(check.__name__, f"{op}: {message}"))
            yield op, (model2, harness.snapshot(), view), problems

    start = (spec.initial_store(), engine.store_harness().snapshot(), spec.initial_store())
    return explore([start], successors)

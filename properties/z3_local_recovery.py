"""z3: allocation-preserving scheduling gives the most local recoveries.

* :func:`max_local_z3` — the optimum for one bulk by z3's ``Optimize``: place as many tasks as
  possible, then as many as possible in their previous slot. An independent oracle next to the
  networkx matching of :func:`~flipcheck.model.local_recovery.max_local_recoveries`.
* :func:`prove_seed_rule_optimal` — the seed's claim for *every* bulk of ``n`` tasks at once:
  whichever previous slots survive, with up to ``max_extra`` other free slots and ``max_fresh``
  fresh ones, no valid assignment places more tasks than the seed's rule (A1: previous slot
  first; A2: never another's previous slot; then free or fresh slots), or as many with more of
  them local. The rule's outcome is the closed form ``local = #surviving previous slots``,
  ``placed = local + min(n - local, extra + fresh)``; exhaustive enumeration checks that the
  engine reaches it (:func:`~.local_recovery_explore.all_schedulings`).

Example
-------
>>> from flipcheck.properties.local_recovery_explore import scheduling_instance
>>> case = scheduling_instance([True, False, True], extra=1, fresh=0, order=[1, 0, 2])
>>> max_local_z3(case.requests, case.free, case.fresh)
2
>>> prove_seed_rule_optimal(4).proved
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from flipcheck.model.local_recovery import Slot, SlotRequest

__all__ = ["max_local_z3", "SchedulingProof", "prove_seed_rule_optimal"]


def max_local_z3(requests: Sequence[SlotRequest], free: Sequence[Slot], fresh: int) -> int:
    import z3

    slots = [s.allocation for s in free] + [("fresh", k) for k in range(fresh)]
    optimizer = z3.Optimize()
    choice = [z3.Int(f"slot_{r.task}") for r in requests]  # -1: not placed
    for c in choice:
        optimizer.add(c >= -1, c < len(slots))
    for i in range(len(choice)):
        for j in range(i + 1, len(choice)):
            optimizer.add(z3.Or(choice[i] == -1, choice[i] != choice[j]))
    placed = z3.Sum([z3.If(c >= 0, 1, 0) for c in choice])
    local = z3.Sum([z3.If(z3.Or([c == k for k, s in enumerate(slots) if s == r.previous] or [z3.BoolVal(False)]), 1, 0)
                    for r, c in zip(requests, choice)])
    optimizer.maximize(placed * (len(requests) + 1) + local)
    optimizer.check()
    model = optimizer.model()
    return model.eval(local, model_completion=True).as_long()


@dataclass
class SchedulingProof:
    proved: bool
    tasks: int
    seconds: float
    counterexample: dict | None = None


def prove_seed_rule_optimal(n: int, max_extra: int = 2, max_fresh: int = 2) -> SchedulingProof:
    """No bulk of ``n`` tasks has an assignment better than the seed rule's (see module doc)."""
    import z3

    started = time.perf_counter()
    solver = z3.Solver()
    survives = [z3.Bool(f"previous_{i}_free") for i in range(n)]
    extra, fresh = z3.Int("extra"), z3.Int("fresh")
    solver.add(extra >= 0, extra <= max_extra, fresh >= 0, fresh <= max_fresh)
    # Slots: 0..n-1 the previous ones, then the other free ones, then the fresh ones.
    total = n + max_extra + max_fresh
    usable = [survives[j] if j < n else (j - n < extra if j < n + max_extra else j - n - max_extra < fresh)
              for j in range(total)]
    choice = [z3.Int(f"task_{i}") for i in range(n)]  # the alternative assignment; -1: not placed
    for i, c in enumerate(choice):
        solver.add(c >= -1, c < total)
        solver.add(z3.Implies(c >= 0, z3.Or([z3.And(c == j, usable[j]) for j in range(total)])))
        for k in range(i + 1, n):
            solver.add(z3.Or(c == -1, c != choice[k]))
    alt_placed = z3.Sum([z3.If(c >= 0, 1, 0) for c in choice])
    alt_local = z3.Sum([z3.If(choice[i] == i, 1, 0) for i in range(n)])
    rule_local = z3.Sum([z3.If(s, 1, 0) for s in survives])
    others = n - rule_local
    rule_placed = rule_local + z3.If(others < extra + fresh, others, extra + fresh)
    solver.add(z3.Or(alt_placed > rule_placed, z3.And(alt_placed == rule_placed, alt_local > rule_local)))
    if solver.check() == z3.unsat:
        return SchedulingProof(True, n, time.perf_counter() - started)
    model = solver.model()
    counterexample = {
        "previous_free": [z3.is_true(model.eval(s, model_completion=True)) for s in survives],
        "extra": model.eval(extra, model_completion=True).as_long(),
        "fresh": model.eval(fresh, model_completion=True).as_long(),
        "assignment": [model.eval(c, model_completion=True).as_long() for c in choice],
    }
    return SchedulingProof(False, n, time.perf_counter() - started, counterexample)

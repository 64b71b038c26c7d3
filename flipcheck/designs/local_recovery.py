"""The ``local-recovery`` design's front end (the members of
:class:`~flipcheck.designs.contract.Design` are at the end of this module). ``verify``: task-
local state recovery, every property with every driver.

Drivers (``verify``), for the engine ``flink`` or a named variant:

* ``exhaustive`` — every write outcome of up to 3 handles; every store operation sequence on
  checkpoint ids 1..3 (explored, next to the model); every restore over 4 key groups (layouts,
  readability, local copies); every bulk of up to 4 tasks (surviving previous slots, other free
  slots, fresh slots, request orders) against an exact networkx matching;
* ``z3`` — the seed rule is optimal for every bulk of up to 5 tasks, and the engine reaches z3's
  optimum on every bulk of up to 3 tasks;
* ``seeded`` and ``hypothesis`` — random cases of each kind, including whole cluster runs;
* ``stateful`` — the cluster ``RuleBasedStateMachine`` (checkpoints, failures, TaskManager
  losses, corrupt local copies, unreadable primaries), every property after every step.

It is also the sweep's suite (:data:`SUITE`) and feeds the mutant catalogue (:data:`MUTANTS`,
:func:`mutants`, :func:`hunt`).

Example
-------
>>> rows = verify(budget_seconds=2)
>>> sorted({row["driver"] for row in rows})
['exhaustive', 'hypothesis', 'seeded', 'stateful', 'z3']
>>> sum(row["violations"] for row in rows)
0
"""

from __future__ import annotations

import html
import time
from collections import Counter
from typing import NamedTuple

from flipcheck.designs import title_of
from flipcheck.generators import local_recovery as gen
from flipcheck.model import local_recovery as spec_rules
from flipcheck.properties import local_recovery_explore as explore
from flipcheck.properties import local_recovery_properties as props
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.local_recovery_variants import LOCAL_RECOVERY_ENGINES, VARIANTS
from flipcheck.reference_impl.local_recovery_variants import engine as make_engine, variant_class
from flipcheck.designs.generated_suite import GeneratedSuite
from flipcheck.designs.common import hunt_with, merged, mutant_list, random_rows, rows, stateful_rows
from flipcheck.designs.drivers import report_problems
from flipcheck.render.tables import table_source

__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "variant_class", "ENGINE", "ENGINES", "PROPERTY_NAMES", "MUTANTS", "EXHAUSTIVE_BOUNDS", "SUITE", "ExhaustiveUnit", "generate_case", "check_case", "exhaustive_cases", "explore_case", "render_case", "describe_case", "case_size", "case_shape", "exact_scheduling"]

ENGINE = "flink"
ENGINES = tuple(LOCAL_RECOVERY_ENGINES)
PROPERTY_NAMES = (*props.PROPERTY_NAMES, "refines_spec")
MUTANTS = {name: (cls.flink_issue, " ".join((cls.__doc__ or "").split())) for name, cls in VARIANTS.items()}
EXHAUSTIVE_BOUNDS = {"write_handles": 3, "store_max_id": 3, "restore_key_groups": 4, "scheduling_max_tasks": 4,
                     "scheduling_max_extra": 2, "scheduling_max_fresh": 2, "proof_max_tasks": 5}
# The kinds of random case (generate_case's ``kind``): a space KIND@SEED generates one of them.
CASE_KINDS = gen.KINDS
SUITE = GeneratedSuite("local-recovery", __name__)


class ExhaustiveUnit(NamedTuple):
    part: str
    bound: int
    kind: str = "exhaustive"


# ------------------------------------------------------------------------------------------------
# Cases


def generate_case(chooser, kind: str | None = None):
    return gen.generate_case(chooser, kind)


_CHECKS = {
    "write": explore.check_write_case,
    "store": explore.check_store_case,
    "restore": explore.check_restore_case,
    "scheduling": explore.check_scheduling_cases,
    "cluster": lambda case, variant: gen.check_cluster_case(case, variant)[0],
}


def check_case(case, variant: str = ENGINE) -> list[Violation]:
    """Every property that applies to ``case``, on ``variant``."""
    make_engine(variant)
    if isinstance(case, ExhaustiveUnit):
        return explore_case(case, variant)[0]
    return _CHECKS[case.kind](case, variant)


def exhaustive_cases() -> list[ExhaustiveUnit]:
    return [ExhaustiveUnit("write", 3), ExhaustiveUnit("store", 3), ExhaustiveUnit("restore", 4),
            *(ExhaustiveUnit("scheduling", n) for n in range(1, 5)),
            *(ExhaustiveUnit("proof", n) for n in range(1, 6))]


def exact_scheduling(n: int) -> list:
    return [c for c in explore.all_schedulings(n) if len(c.requests) == n]


def explore_case(unit: ExhaustiveUnit, variant: str = ENGINE, refinement: bool = True) -> tuple[list[Violation], int, object]:
    """(violations, cases or states covered, a failing case); ``refinement`` also compares the
    store with the model after every operation."""
    if unit.part == "store":
        result = explore.explore_store(variant, unit.bound, refinement=refinement)
        return result.problems, result.states, (explore.StoreCase(tuple(result.trace)) if result.problems else None)
    if unit.part == "proof":
        from flipcheck.properties.z3_local_recovery import prove_seed_rule_optimal

        proof = prove_seed_rule_optimal(unit.bound)
        found = [] if proof.proved else [Violation("maximal_local_recovery", f"the seed rule is not optimal: {proof.counterexample}")]
        return found, 1, None
    cases = {"write": lambda: explore.all_writes(unit.bound), "restore": lambda: explore.all_restores(unit.bound),
             "scheduling": lambda: exact_scheduling(unit.bound)}[unit.part]()
    count, failure = explore.check_all(_CHECKS[unit.part], variant, cases)
    if failure is None:
        return [], count, None
    return failure[1], count, failure[0]


# ------------------------------------------------------------------------------------------------
# Describing and drawing


def case_size(case) -> int:
    if isinstance(case, ExhaustiveUnit):
        return case.bound
    return {"write": lambda c: len(c.writes), "store": lambda c: len(c.ops), "restore": lambda c: len(c.jm),
            "scheduling": lambda c: len(c.requests), "cluster": lambda c: len(c.events)}[case.kind](case)


def case_shape(case) -> str:
    if isinstance(case, ExhaustiveUnit):
        return f"exhaustive {case.part} {case.bound}"
    return f"{case.kind} {case_size(case)}"


def describe_case(case) -> dict:
    if isinstance(case, ExhaustiveUnit):
        return {"kind": "exhaustive", "part": case.part, "bound": case.bound}
    if case.kind == "write":
        return {"kind": "write", "local_backup": case.local_backup,
                "writes": [{"key_groups": [w.handle.start, w.handle.end], "primary_ok": w.primary_ok,
                            "secondary": w.secondary} for w in case.writes]}
    if case.kind == "store":
        return {"kind": "store", "ops": [list(op) for op in case.ops]}
    if case.kind == "restore":
        return {"kind": "restore", "jm": [h._asdict() for h in case.jm], "local": [h._asdict() for h in case.local]}
    if case.kind == "scheduling":
        return {"kind": "scheduling", "requests": [r._asdict() for r in case.requests],
                "free": [s._asdict() for s in case.free], "fresh": case.fresh}
    return {"kind": "cluster", **{k: v for k, v in case._asdict().items() if k not in ("events", "kind")},
            "events": [[e[0], *[sorted(x) if isinstance(x, frozenset) else x for x in e[1:]]] for e in case.events]}


def _q(text) -> str:
    return html.escape(str(text), quote=True)


def _scheduling_source(case, variant: str, title: str) -> str:
    assignment = make_engine(variant).assign_slots(case.requests, case.free, case.fresh)
    free = {s.allocation: s for s in case.free}
    previous = {r.previous: r.task for r in case.requests}
    lines = [f'digraph slots {{\n\trankdir=LR labelloc=t label="{_q(title)}" fontname="Helvetica"',
             '\tnode [fontname="Helvetica" fontsize=10]']
    tms: dict = {}
    for r in case.requests:
        tms.setdefault(r.location, set()).add(r.previous)
    for s in case.free:
        tms.setdefault(s.tm, set()).add(s.allocation)
    for slot in assignment.slots:
        if slot is not None and slot.allocation not in free:
            tms.setdefault(f"{slot.tm} (fresh)", set()).add(slot.allocation)
    for tm, allocations in sorted(tms.items(), key=str):
        lines.append(f'\tsubgraph "cluster_{_q(tm)}" {{ label="TaskManager {_q(tm)}" style=dashed')
        for allocation in sorted(allocations):
            lost = allocation in previous and allocation not in free and not any(
                s is not None and s.allocation == allocation for s in assignment.slots)
            fill = "#cccccc" if lost else "white"
            note = " (gone)" if lost else f" (task {previous[allocation]}'s)" if allocation in previous else ""
            lines.append(f'\t\ts{allocation} [shape=box style=filled fillcolor="{fill}" label="slot {allocation}{note}"]')
        lines.append("\t}")
    for request, slot in zip(case.requests, assignment.slots):
        local = slot is not None and slot.allocation == request.previous
        stolen = slot is not None and slot.allocation in previous and previous[slot.allocation] != request.task
        colour = "#93c47d" if local else "#e06666" if stolen else "#f6b26b" if slot else "#ffe599"
        lines.append(f'\tt{request.task} [shape=ellipse style=filled fillcolor="{colour}" label="task {request.task}"]')
        if slot is not None:
            lines.append(f'\tt{request.task} -> s{slot.allocation} [penwidth=2]')
        if request.previous is not None and not local:
            lines.append(f'\tt{request.task} -> s{request.previous} [style=dashed color="#888888" label="previous"]')
    lines.append('\tlegend [shape=note label="green: back in its previous slot\\norange: another slot\\n'
                 'red: another task\'s previous slot\\nyellow: no slot\\ngrey: previous slot no longer offered"]')
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_case(case, out_path: str, variant: str = ENGINE) -> str:
    """Draw a case as the variant ran it: the slots of a scheduling bulk (which task went where),
    or a table (writes, store steps, restore handles, cluster events)."""
    from flipcheck.render.core import output_format, render_source

    output_format(out_path)
    if isinstance(case, ExhaustiveUnit):
        counterexample = explore_case(case, variant)[2]
        if counterexample is None:
            return render_source(table_source(f"{variant}: {case.part} up to {case.bound}: no violation", ["part", "bound"],
                                        [[case.part, case.bound]]), out_path)
        case = counterexample
    found = check_case(case, variant)
    title = f"{variant}: " + (", ".join(dict.fromkeys(v.property for v in found)) or "no violation")
    if case.kind == "scheduling":
        return render_source(_scheduling_source(case, variant, title), out_path)
    if case.kind == "write":
        report = make_engine(variant).snapshot(case.writes, case.local_backup)
        expected = spec_rules.snapshot_report(case.writes, case.local_backup)
        rows = [[f"{w.handle.start}..{w.handle.end}", "ok" if w.primary_ok else "fails", w.secondary,
                 any(h.start == w.handle.start for h in report.local_state),
                 any(h.start == w.handle.start for h in expected.local_state)] for w in case.writes]
        rows.append(["acknowledged", "", "", report.acknowledged, expected.acknowledged])
        return render_source(table_source(f"{title} (local backup {'on' if case.local_backup else 'off'})",
                                    ["key groups", "primary", "local write", f"{variant}: local copy", "model"], rows),
                             out_path)
    if case.kind == "store":
        steps, _ = explore.store_steps(case, variant)
        model, rows = spec_rules.initial_store(), []
        for op, outputs, view in steps:
            model, _ = spec_rules.store_step(model, op)
            rows.append([" ".join(map(str, op)), sorted(view.snapshots), sorted(view.directories), sorted(model.snapshots),
                         sorted(model.directories)])
        bad = {v.witness for v in found if isinstance(v.witness, int)}
        return render_source(table_source(title, ["operation", "copies", "directories", "model copies", "model directories"],
                                    rows, bad), out_path)
    if case.kind == "restore":
        outcome = make_engine(variant).restore(case.jm, case.local)
        expected = spec_rules.restore(spec_rules.prioritized_alternatives(case.jm, case.local))
        rows = []
        for h in case.jm:
            local = [x for x in case.local if x.start < h.end and h.start < x.end]
            used = [x for x in outcome.handles or () if x.start < h.end and h.start < x.end]
            want = [x for x in expected.handles or () if x.start < h.end and h.start < x.end]
            rows.append([f"{h.start}..{h.end}", "reads" if h.readable else "unreadable",
                         ", ".join(f"{x.start}..{x.end}{'' if x.readable else ' unreadable'}" for x in local) or "-",
                         ", ".join(f"{x.location} {x.start}..{x.end}" for x in used) or "failed",
                         ", ".join(f"{x.location} {x.start}..{x.end}" for x in want) or "failed"])
        return render_source(table_source(title, ["primary handle", "primary", "local copies", variant, "model"], rows), out_path)
    found_steps, observations = gen.check_cluster_case(case, variant, stop_at_first=False)
    rows = []
    for event, observation in zip(case.events, observations):
        summary = "-"
        if observation and observation[0] == "checkpoint":
            summary = f"checkpoint {observation[1]} {'completed' if observation[2] else 'failed'}"
        elif observation and observation[0] == "failover":
            summary = "; ".join(
                f"task {t}: slot {s.allocation if s else '-'}" + (
                    f", {sum(h.location == 'local' for h in r[3].handles or ())} local" if r else "")
                for t, (s, r) in enumerate(zip(observation[4].slots, observation[5])))
        rows.append([event[0], " ".join(map(str, event[1:]))[:60], summary])
    bad = {int(v.message.split()[1]) - 1 for v in found_steps if v.message.startswith("event ")}
    return render_source(table_source(title, ["event", "details", "observed"], rows, bad), out_path)


# ------------------------------------------------------------------------------------------------
# The verify suite


def _exhaustive_rows(variant: str, full: bool) -> list[dict]:
    largest = 4 if full else 3  # bulks of 4 tasks take 2 s of the budget
    result = []
    for part, units in (("write", [ExhaustiveUnit("write", 3)]), ("store", [ExhaustiveUnit("store", 3)]),
                        ("restore", [ExhaustiveUnit("restore", 4)]),
                        ("scheduling", [ExhaustiveUnit("scheduling", n) for n in range(1, largest + 1)])):
        count, found = 0, Counter()
        for unit in units:
            violations, covered, case = explore_case(unit, variant)
            count += covered
            found.update({v.property for v in violations})
            if case is not None:  # verify shows it, replayed by the exhaustive unit's id
                report_problems(violations, case, "exhaustive", SUITE.exhaustive_id(unit))
        result += rows(props.GROUPS[part], count, found, "exhaustive")
    return result


def _z3_rows(variant: str, budget_seconds: float) -> list[dict]:
    from flipcheck.properties.z3_local_recovery import max_local_z3, prove_seed_rule_optimal

    proofs = [prove_seed_rule_optimal(n) for n in range(1, 6)]
    result = [{"name": "maximal_local_recovery", "cases": len(proofs), "violations": sum(not p.proved for p in proofs),
               "driver": "z3"}]
    deadline = time.perf_counter() + budget_seconds
    engine, checked, worse = make_engine(variant), 0, 0
    for case in explore.all_schedulings(3):
        if time.perf_counter() > deadline and checked:
            break
        assignment = engine.assign_slots(case.requests, case.free, case.fresh)
        checked += 1
        worse += len(spec_rules.local_recoveries(case.requests, assignment)) < max_local_z3(case.requests, case.free, case.fresh)
    result.append({"name": "maximal_local_recovery", "cases": checked, "violations": worse, "driver": "z3"})
    return result


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names an engine variant
    (default ``flink``). The exhaustive and z3 parts are fixed (about 4 s, 1.5 s below a 10 s
    budget); random cases and the stateful machine fill the rest."""
    variant = variant or ENGINE
    make_engine(variant)
    started = time.perf_counter()
    result = _exhaustive_rows(variant, full=budget_seconds >= 10)
    result += _z3_rows(variant, budget_seconds * 0.05)
    remaining = max(0.5, budget_seconds - (time.perf_counter() - started))
    result += random_rows(gen.KINDS, props.GROUPS, gen.generate_case, lambda case: check_case(case, variant),
                          remaining * 0.65, suite=SUITE.name)
    result += stateful_rows(lambda: gen.cluster_machine(variant), props.GROUPS["cluster"],
                            "restored_state_equals_primary", "local-recovery",
                            max(0.2, budget_seconds - (time.perf_counter() - started)), steps=20)
    return merged(result)


# ------------------------------------------------------------------------------------------------
# Mutants


def mutants() -> list:
    """The suite's mutants for ``flipcheck mutants``."""
    return mutant_list("local-recovery", VARIANTS)


_UNITS = {"write": [ExhaustiveUnit("write", 3)], "store": [ExhaustiveUnit("store", 3)],
          "restore": [ExhaustiveUnit("restore", 4)],
          "scheduling": [ExhaustiveUnit("scheduling", n) for n in range(1, 5)]}


def hunt(mutant, budget_seconds: float):
    """The exhaustive check of the part the mutant changes (smallest first; the store first with
    its properties alone, then next to the model), then random cases."""
    units = _UNITS.get(VARIANTS[mutant.variant].part, [])
    steps = [(u, False) for u in units] + [(u, True) for u in units if u.part == "store"]
    return hunt_with(mutant, budget_seconds, steps, "exhaustive", explore_case, generate_case, check_case, case_size)


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "local-recovery"
title = title_of(name)
seed = "Task-local recovery: Approach (primary and secondary state copies, allocation-preserving scheduling)"
spec = "flipcheck.model.local_recovery"
engine = ENGINE
variants = ENGINES
properties = PROPERTY_NAMES
drivers = ("seeded", "hypothesis", "stateful", "exhaustive", "z3")
suite = SUITE
render = SUITE.render

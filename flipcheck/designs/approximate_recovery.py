"""The ``approximate-recovery`` design's front end (the members of
:class:`~flipcheck.designs.contract.Design` are at the end of this module). ``verify``: FLIP-135
approximate task-local recovery, every property with every driver.

Drivers (``verify``), for the engine ``flip135`` or a named variant:

* ``exploration`` — exhaustive for small bounds: every event sequence of one subpartition
  (:func:`~flipcheck.properties.approximate_recovery_explore.explore_subpartition`, with
  refinement of the model), every barrier scenario after a restart with liveness on the whole
  state graph, every failure set of every topology up to 3 vertices × parallelism 2, every
  failure point of small dataflows;
* ``z3`` — the restart set equals the specification's for all failures at once, per topology;
* ``seeded`` and ``hypothesis`` — random cases of each kind through one generator
  (:mod:`flipcheck.generators.approximate_recovery`);
* ``stateful`` — the subpartition's ``RuleBasedStateMachine`` (engine next to the model).

The same module is the sweep's suite (:data:`SUITE`, through
:class:`~flipcheck.designs.generated_suite.GeneratedSuite`): ``generate_case``, ``check_case``,
``exhaustive_cases`` / ``explore_case``, ``render_case`` (graphviz), ``describe_case``. The
mutant catalogue reads :data:`MUTANTS`, :func:`mutants` and :func:`hunt`.

Example
-------
>>> rows = verify(budget_seconds=2)
>>> sorted({row["driver"] for row in rows})
['exploration', 'hypothesis', 'seeded', 'stateful', 'z3']
>>> sum(row["violations"] for row in rows)
0
>>> from flipcheck.generators.choices import SeededChooser
>>> check_case(generate_case(SeededChooser.for_case("doc", 0)), "flip135")
[]
"""

from __future__ import annotations

import html
import time
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

from flipcheck.designs import title_of
from flipcheck.generators import approximate_recovery as gen
from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.model import approximate_recovery as spec_rules
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobGraph
from flipcheck.properties import approximate_recovery_explore as explore
from flipcheck.properties import approximate_recovery_properties as props
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.approximate_recovery_variants import APPROXIMATE_RECOVERY_ENGINES, VARIANTS
from flipcheck.reference_impl.approximate_recovery_variants import engine as make_engine, variant_class
from flipcheck.designs.generated_suite import GeneratedSuite
from flipcheck.designs.common import hunt_with, merged, mutant_list, random_rows, rows, stateful_rows
from flipcheck.designs.drivers import report_problems
from flipcheck.render.tables import table_source

__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "variant_class", "ENGINE", "ENGINES", "PROPERTY_NAMES", "MUTANTS", "EXHAUSTIVE_BOUNDS", "SUITE", "DATAFLOW_GRAPHS", "ExplorationUnit", "generate_case", "check_case", "exhaustive_cases", "explore_case", "render_case", "describe_case", "case_size", "case_shape",
]

ENGINE = "flip135"
ENGINES = tuple(APPROXIMATE_RECOVERY_ENGINES)
PROPERTY_NAMES = (*props.PROPERTY_NAMES, "refines_spec")
MUTANTS = {name: (cls.flink_issue, " ".join((cls.__doc__ or "").split())) for name, cls in VARIANTS.items()}

# Exhaustive bounds (docs/approximate-recovery.md, tests/manifests/approximate_recovery.json).
SUBPARTITION_BOUNDS = explore.SubpartitionBounds(capacity=2, max_records=3, lengths=(1, 5), attempts=2, max_events=1)
SMALL_SUBPARTITION_BOUNDS = explore.SubpartitionBounds(capacity=2, max_records=2, lengths=(1, 5), attempts=2, max_events=1)
BARRIER_BOUNDS = (3, 2)       # channels, max checkpoint id triggered before the restart
TOPOLOGY_BOUNDS = (3, 2)      # vertices, parallelism
DATAFLOW_RECORDS = 2
EXHAUSTIVE_BOUNDS = {
    "subpartition": SUBPARTITION_BOUNDS._asdict(),
    "barriers": {"max_channels": BARRIER_BOUNDS[0], "max_id": BARRIER_BOUNDS[1], "new_checkpoints": 2},
    "topologies": {"max_vertices": TOPOLOGY_BOUNDS[0], "max_parallelism": TOPOLOGY_BOUNDS[1]},
    "dataflow": {"records_per_source": DATAFLOW_RECORDS},
}
# The kinds of random case (generate_case's ``kind``): a space KIND@SEED generates one of them.
CASE_KINDS = gen.KINDS
SUITE = GeneratedSuite("approximate-recovery", __name__)


def _graph(vertices, edges) -> JobGraph:
    return JobGraph.build(vertices, edges)


# Small dataflows whose every failure point is explored: a chain, two sources into one task,
# a diamond, a pointwise fan-out.
DATAFLOW_GRAPHS = (
    _graph([("src", 1), ("map", 1), ("sink", 1)], [("src", "map", ALL_TO_ALL), ("map", "sink", ALL_TO_ALL)]),
    _graph([("s1", 1), ("s2", 1), ("join", 1)], [("s1", "join", ALL_TO_ALL), ("s2", "join", ALL_TO_ALL)]),
    _graph([("a", 1), ("b", 1), ("c", 1), ("d", 1)],
           [("a", "b", ALL_TO_ALL), ("a", "c", ALL_TO_ALL), ("b", "d", ALL_TO_ALL), ("c", "d", ALL_TO_ALL)]),
    _graph([("src", 1), ("map", 2)], [("src", "map", POINTWISE)]),
)


# ------------------------------------------------------------------------------------------------
# Cases


def generate_case(chooser, kind: str | None = None):
    """A random case (see :mod:`flipcheck.generators.approximate_recovery`)."""
    return gen.generate_case(chooser, kind)


def _subpartition_steps(case: gen.SubpartitionCase, variant: str):
    harness = make_engine(variant).subpartition_harness(case.capacity)
    model, steps, refinement = spec_rules.initial_subpartition(case.capacity), [], []
    for index, event in enumerate(case.events):
        outputs = harness.process(event)
        model, expected = spec_rules.subpartition_step(model, event)
        if outputs != expected and not refinement:
            refinement.append(Violation("refines_spec", f"step {index + 1} {event}: engine {list(outputs)}, "
                                                        f"model {list(expected)}", index))
        steps.append((event, outputs, expected))
    return steps, refinement


@lru_cache(maxsize=4096)
def _liveness(variant: str, scenario: spec_rules.BarrierScenario) -> tuple:
    run = make_engine(variant).barrier_run(scenario)
    return tuple(props.checkpoint_after_restart_completes(scenario, run.initial(), run.successors, lambda s: s[-1]))


def _barrier_walk(case: gen.BarrierCase, variant: str):
    """Replay the schedule on the variant next to the model: (steps, refinement violations)."""
    scenario = case.scenario
    run = make_engine(variant).barrier_run(scenario)
    state, model, steps, refinement = run.initial(), spec_rules.initial_barrier_system(scenario), [], []
    for pick in case.schedule:
        options = list(run.successors(state))
        if not options:
            break
        label, state, outputs, view = options[pick % len(options)]
        expected = {lab: (nxt, out, v) for lab, nxt, out, v in spec_rules.barrier_successors(scenario, model)}.get(label)
        if expected is None or expected[1] != outputs or expected[2] != view:
            if not refinement:
                refinement.append(Violation("refines_spec", f"step {len(steps) + 1} {label}: engine {list(outputs)}, "
                                                            f"model {'cannot' if expected is None else list(expected[1])}"))
        else:
            model = expected[0]
        steps.append((label, outputs, view))
    return steps, refinement


def _recovery(case: gen.DataflowCase, variant: str):
    flow, state, failed, partial = gen.failure_state(case)
    return flow, state, failed, partial, make_engine(variant).recovery().recover(flow, state, failed, partial)


def check_case(case, variant: str = ENGINE) -> list[Violation]:
    """Every property that applies to ``case``, on ``variant``."""
    make_engine(variant)  # unknown names fail here with the list of known ones
    if isinstance(case, ExplorationUnit):
        return explore_case(case, variant)[0]
    if case.kind == "failover":
        restart = make_engine(variant).restart_set(case.graph, case.failed, case.unavailable)
        return props.check_restart_set(case.graph, case.failed, case.unavailable, restart)
    if case.kind == "subpartition":
        steps, refinement = _subpartition_steps(case, variant)
        return props.check_subpartition_trace([(e, o) for e, o, _ in steps]) + refinement
    if case.kind == "barriers":
        steps, refinement = _barrier_walk(case, variant)
        return props.check_barrier_steps(case.scenario, steps) + list(_liveness(variant, case.scenario)) + refinement
    return props.check_recovery(*_recovery(case, variant))


# ------------------------------------------------------------------------------------------------
# Exhaustive exploration units


class ExplorationUnit(NamedTuple):
    """One exhaustive exploration: a part of the design and its bounds (or scenario, or graph)."""

    part: str
    value: object
    kind: str = "exploration"


def exhaustive_cases() -> list[ExplorationUnit]:
    """The fixed, numbered list the exhaustive sweep runs: the subpartition, every barrier
    scenario, every topology (restart sets), every small dataflow."""
    space = topology_space(*TOPOLOGY_BOUNDS)
    return ([ExplorationUnit("subpartition", SUBPARTITION_BOUNDS)]
            + [ExplorationUnit("barriers", s) for s in explore.barrier_scenarios(*BARRIER_BOUNDS)]
            + [ExplorationUnit("failover", space.job_graph(i)) for i in range(len(space))]
            + [ExplorationUnit("dataflow", g) for g in DATAFLOW_GRAPHS])


def _picks(case_labels, successors_of, start):
    """Turn a trace of labels into schedule picks (positions among the enabled steps)."""
    picks, state = [], start
    for label in case_labels:
        options = list(successors_of(state))
        position = next(i for i, option in enumerate(options) if option[0] == label)
        picks.append(position)
        state = options[position][1]
    return tuple(picks)


def explore_case(unit: ExplorationUnit, variant: str = ENGINE, refinement: bool = True) -> tuple[list[Violation], int, object]:
    """Explore one unit: (violations, states or cases covered, a concrete counterexample case);
    ``refinement`` also compares the engine with the model step by step."""
    if unit.part == "subpartition":
        result = explore.explore_subpartition(variant, refinement=refinement, **unit.value._asdict())
        return result.problems, result.states, gen.SubpartitionCase(unit.value.capacity, tuple(result.trace)) \
            if result.problems else None
    if unit.part == "barriers":
        result = explore.explore_barriers(variant, unit.value, refinement=refinement)
        if not result.problems:
            return [], result.states, None
        run = make_engine(variant).barrier_run(unit.value)
        labels = [t for t in result.trace if t[0] in ("deliver", "trigger")]
        try:
            schedule = _picks(labels, run.successors, run.initial())
        except StopIteration:  # the model's step the engine cannot take ends the trace
            schedule = _picks(labels[:-1], run.successors, run.initial())
        return result.problems, result.states, gen.BarrierCase(unit.value, schedule)
    if unit.part == "failover":
        cases, found = explore.explore_restart_sets(variant, [unit.value])
        if not found:
            return [], cases, None
        graph, failed, unavailable, violations = found[0]
        return violations, cases, gen.FailoverCase(graph, failed, unavailable)
    result = explore.explore_dataflow(variant, unit.value, records=DATAFLOW_RECORDS)
    if not result.problems:
        return [], result.states, None
    flow = spec_rules.Dataflow(unit.value, DATAFLOW_RECORDS)
    schedule = _picks(result.trace, lambda s: [(a, spec_rules.flow_step(flow, s, a)) for a in spec_rules.flow_actions(flow, s)],
                      spec_rules.initial_flow(flow))
    for failed, partial in explore.recovery_cases(flow, result.final_state):
        case = gen.DataflowCase(unit.value, DATAFLOW_RECORDS, schedule, next(iter(failed)), bool(partial))
        if check_case(case, variant):
            return result.problems, result.states, case
    return result.problems, result.states, None


# ------------------------------------------------------------------------------------------------
# Describing and drawing cases


def case_size(case) -> int:
    if isinstance(case, ExplorationUnit):
        return 1
    if case.kind in ("failover", "dataflow"):
        return case.graph.num_tasks
    if case.kind == "subpartition":
        return len(case.events)
    return len(case.schedule)


def case_shape(case) -> str:
    if isinstance(case, ExplorationUnit):
        return f"explore {case.part}"
    if case.kind in ("failover", "dataflow"):
        return f"{case.kind} {len(case.graph.vertices)}v {case.graph.num_tasks}t"
    if case.kind == "subpartition":
        return f"subpartition c{case.capacity} {len(case.events)}ev"
    return f"barriers {case.scenario.channels}ch {len(case.schedule)}st"


def describe_case(case) -> dict:
    from flipcheck.model.graph_json import graph_to_json

    if isinstance(case, ExplorationUnit):
        value = case.value._asdict() if hasattr(case.value, "_asdict") else graph_to_json(case.value)
        return {"kind": "exploration", "part": case.part, "bounds": value}
    if case.kind == "failover":
        return {"kind": case.kind, "graph": graph_to_json(case.graph), "failed": sorted(map(list, case.failed)),
                "unavailable": sorted(map(list, case.unavailable))}
    if case.kind == "subpartition":
        return {"kind": case.kind, "capacity": case.capacity, "events": [list(e) for e in case.events]}
    if case.kind == "barriers":
        return {"kind": case.kind, "scenario": case.scenario._asdict(), "schedule": list(case.schedule)}
    return {"kind": case.kind, "graph": graph_to_json(case.graph), "records": case.records,
            "schedule": list(case.schedule), "failed": case.failed, "half_read": case.half_read}


def _quote(text) -> str:
    return html.escape(str(text), quote=True)


def _graph_source(graph: JobGraph, title: str, fill: dict, border: dict, notes: dict) -> str:
    lines = [f'digraph restart {{\n\trankdir=LR labelloc=t label="{_quote(title)}" fontname="Helvetica"',
             '\tnode [shape=box style="rounded,filled" fontname="Helvetica" fontsize=10]']
    ids = {t: f"t{i}" for i, t in enumerate(graph.tasks())}
    for vertex in graph.topological_order:
        lines.append(f'\tsubgraph "cluster_{_quote(vertex)}" {{ label="{_quote(vertex)}" style=dashed color="#999999"')
        for index in range(graph.parallelism(vertex)):
            task = (vertex, index)
            label = f"{vertex}[{index}]" + (f"\\n{notes[task]}" if task in notes else "")
            style = f'fillcolor="{fill.get(task, "white")}"'
            if task in border:
                style += f' color="{border[task]}" penwidth=3'
            lines.append(f'\t\t{ids[task]} [label="{_quote(label)}" {style}]')
        lines.append("\t}")
    from flipcheck.model.execution_graph import input_connections

    for task in graph.tasks():
        for _, upstream in input_connections(graph, task):
            lines.append(f"\t{ids[upstream]} -> {ids[task]}")
    lines.append("}")
    return "\n".join(lines) + "\n"


_FAILED, _RESTARTED, _MISSED = "#e06666", "#f6b26b", "#ffe599"


def _restart_picture(graph, failed, restart, expected, title, notes=None) -> str:
    fill, border = {}, {}
    for task in graph.tasks():
        if task in failed:
            fill[task] = _FAILED
        elif task in restart:
            fill[task] = _RESTARTED
        elif task in expected:
            fill[task] = _MISSED
        if (task in restart) != (task in expected):
            border[task] = "#cc0000"
    legend = "red: failed, orange: restarted, yellow: should have restarted, red border: differs from the spec"
    return _graph_source(graph, f"{title}\\n{legend}", fill, border, notes or {})


def render_case(case, out_path: str, variant: str = ENGINE) -> str:
    """Draw a case as the variant ran it (SVG or PNG by extension): the task graph with the failed
    and restarted tasks (failover, dataflow), or a step table (subpartition, barriers)."""
    from flipcheck.render.core import output_format, render_source

    output_format(out_path)
    found = check_case(case, variant)
    verdict = ", ".join(dict.fromkeys(v.property for v in found)) or "no violation"
    title = f"{variant}: {verdict}"
    if isinstance(case, ExplorationUnit):
        counterexample = explore_case(case, variant)[2]
        if counterexample is None:
            return render_source(table_source(title, ["exploration", "bounds"], [[case.part, describe_case(case)["bounds"]]],
                                        set()), out_path)
        case = counterexample
    if case.kind == "failover":
        restart = make_engine(variant).restart_set(case.graph, case.failed, case.unavailable)
        expected = spec_rules.restart_set(case.graph, case.failed, case.unavailable)
        notes = {t: "partition lost" for t in case.unavailable}
        return render_source(_restart_picture(case.graph, case.failed, restart, expected, title, notes), out_path)
    if case.kind == "dataflow":
        flow, state, failed, partial, outcome = _recovery(case, variant)
        expected_final = spec_rules.expected_final(flow, state, frozenset(
            i for i, t in enumerate(flow.tasks) if t in spec_rules.restart_set(case.graph, {flow.tasks[f] for f in failed})),
            partial)
        reference = spec_rules.failure_free(flow)
        notes = {}
        for i, task in enumerate(flow.tasks):
            lost, extra = reference[i] - outcome.final[i], outcome.final[i] - reference[i]
            wanted = reference[i] - expected_final[i]
            notes[task] = f"lost {sum(lost.values())} (spec {sum(wanted.values())}), extra {sum(extra.values())}"
        restart = {flow.tasks[i] for i in outcome.restart}
        expected = spec_rules.restart_set(case.graph, {flow.tasks[f] for f in failed})
        return render_source(_restart_picture(case.graph, {flow.tasks[f] for f in failed}, restart, expected,
                                              title, notes), out_path)
    if case.kind == "subpartition":
        steps, _ = _subpartition_steps(case, variant)
        bad = {v.witness for v in found if isinstance(v.witness, int)}
        rows = [[n + 1, " ".join(map(str, e)), "; ".join(map(str, o)) or "-", "; ".join(map(str, x)) or "-"]
                for n, (e, o, x) in enumerate(steps)]
        return render_source(table_source(f"{title} (capacity {case.capacity} bytes)",
                                    ["#", "event", variant, "model"], rows, bad), out_path)
    steps, _ = _barrier_walk(case, variant)
    bad = {v.witness for v in found if isinstance(v.witness, int)}
    rows = [[n + 1, label, "; ".join(map(str, out)) or "-", f"{view.blocked:b}", view.pending]
            for n, (label, out, view) in enumerate(steps)]
    return render_source(table_source(f"{title}\\n{case.scenario}", ["#", "step", "outputs", "blocked", "pending"], rows,
                                bad), out_path)


# ------------------------------------------------------------------------------------------------
# The verify suite


def _report_counterexample(unit: ExplorationUnit, variant: str) -> None:
    """Keep a concrete counterexample of the exploration ``unit`` found violating (explored once
    more, by :func:`explore_case`, only when it did), so verify shows it with its replay: the
    exhaustive space's case id when the unit is one of :func:`exhaustive_cases`."""
    problems, _, case = explore_case(unit, variant)
    if case is not None:
        report_problems(problems, case, "exploration", SUITE.exhaustive_id(unit))


def _exploration_rows(variant: str, budget_seconds: float) -> list[dict]:
    started = time.perf_counter()
    result = []
    full = budget_seconds >= 20  # the pinned bounds take about 10 s; smaller budgets get smaller bounds
    bounds = SUBPARTITION_BOUNDS if full else SMALL_SUBPARTITION_BOUNDS
    explored = explore.explore_subpartition(variant, **bounds._asdict())
    result += rows(props.GROUPS["subpartition"], explored.states, Counter({v.property for v in explored.problems}),
                   "exploration")
    if explored.problems:
        _report_counterexample(ExplorationUnit("subpartition", bounds), variant)
    states, found = 0, Counter()
    for scenario in explore.barrier_scenarios(*BARRIER_BOUNDS):
        explored = explore.explore_barriers(variant, scenario)
        states += explored.states
        found.update({v.property for v in explored.problems})
        if explored.problems:
            _report_counterexample(ExplorationUnit("barriers", scenario), variant)
    result += rows(props.GROUPS["barriers"], states, found, "exploration")
    space = topology_space(*TOPOLOGY_BOUNDS)
    cases, failures = explore.explore_restart_sets(variant, (space.job_graph(i) for i in range(len(space))))
    result += rows(props.GROUPS["failover"], cases, Counter({v.property for *_, vs in failures for v in vs}),
                   "exploration")
    for graph, *_ in failures[:1]:
        _report_counterexample(ExplorationUnit("failover", graph), variant)
    states, found = 0, Counter()
    for graph in DATAFLOW_GRAPHS:
        if time.perf_counter() - started > budget_seconds * 0.5 and states:
            break
        explored = explore.explore_dataflow(variant, graph, records=DATAFLOW_RECORDS if full else 1)
        states += explored.states
        found.update({v.property for v in explored.problems})
        if explored.problems and full:  # explore_case explores with the pinned records only
            _report_counterexample(ExplorationUnit("dataflow", graph), variant)
    result += rows(props.GROUPS["dataflow"], states, found, "exploration")
    return result


def _z3_rows(variant: str, budget_seconds: float) -> list[dict]:
    from flipcheck.properties.z3_approximate_recovery import prove_restart_set

    deadline = time.perf_counter() + budget_seconds
    space = topology_space(*TOPOLOGY_BOUNDS)
    proved = failed = 0
    found = Counter()
    for index in range(len(space)):
        if time.perf_counter() > deadline and proved + failed:
            break
        proof = prove_restart_set(space.job_graph(index), variant)
        proved += proof.proved
        failed += not proof.proved
        found.update({v.property for v in proof.violations})
    return rows(props.GROUPS["failover"], proved + failed, found, "z3")


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names an engine variant
    (default ``flip135``); deterministic for a given budget on a given machine."""
    variant = variant or ENGINE
    make_engine(variant)
    started = time.perf_counter()
    result = _exploration_rows(variant, budget_seconds)
    result += _z3_rows(variant, budget_seconds * 0.1)
    remaining = max(0.5, budget_seconds - (time.perf_counter() - started))
    result += random_rows(gen.KINDS, props.GROUPS, gen.generate_case, lambda case: check_case(case, variant),
                          remaining * 0.6, suite=SUITE.name)
    result += stateful_rows(lambda: gen.subpartition_machine(variant), props.GROUPS["subpartition"], "refines_spec",
                            "approximate-recovery", max(0.2, budget_seconds - (time.perf_counter() - started)))
    return merged(result)


# ------------------------------------------------------------------------------------------------
# Mutants


def mutants() -> list:
    """The suite's mutants for ``flipcheck mutants``."""
    return mutant_list("approximate-recovery", VARIANTS)


def hunt(mutant, budget_seconds: float):
    """Exhaustive exploration of the part the mutant changes (smallest bounds first, so the
    counterexample is a shortest one), first with the properties alone, then next to the model;
    then random cases of every kind."""
    part = VARIANTS[mutant.variant].part
    units: list = []
    if part == "subpartition":
        units = [ExplorationUnit("subpartition", b) for b in (SMALL_SUBPARTITION_BOUNDS, SUBPARTITION_BOUNDS)]
    elif part == "barriers":
        units = [ExplorationUnit("barriers", s) for s in explore.barrier_scenarios(*BARRIER_BOUNDS)]
    elif part in ("failover", "dataflow"):
        space = topology_space(*TOPOLOGY_BOUNDS)
        units = [ExplorationUnit("failover", space.job_graph(i)) for i in range(len(space))] if part == "failover" else []
        units += [ExplorationUnit("dataflow", g) for g in DATAFLOW_GRAPHS]
    steps = [(u, False) for u in units] + [(u, True) for u in units if u.part in ("subpartition", "barriers")]
    return hunt_with(mutant, budget_seconds, steps, "exploration", explore_case, generate_case, check_case, case_size)


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "approximate-recovery"
title = title_of(name)
seed = "FLIP-135 milestone one: 1. Task Failure Handling to 7. Frequent Failed Task"
spec = "flipcheck.model.approximate_recovery"
engine = ENGINE
variants = ENGINES
properties = PROPERTY_NAMES
drivers = ("seeded", "hypothesis", "stateful", "exploration", "z3")
suite = SUITE
render = SUITE.render

"""The ``plan`` design's front end (the members of :class:`~flipcheck.designs.contract.Design` are
at the end of this module). ``verify``: every plan property with all its drivers.

* ``seeded`` and ``hypothesis`` — every property of :data:`PLAN_PROPERTIES` on generated job
  graphs of every state kind (:mod:`flipcheck.generators.job_graphs`);
* ``z3`` — ``equals_spec`` proved for every state assignment on the example topologies
  (:func:`flipcheck.properties.z3_plan.prove_plan`);
* ``exhaustive`` — ``pointwise_wiring`` for every ``U, D <= 64``.

>>> rows = verify(budget_seconds=1.5)
>>> sorted({row["driver"] for row in rows})
['exhaustive', 'hypothesis', 'seeded', 'z3']
>>> sum(row["violations"] for row in rows)
0

The sweep suite
---------------

The ``plan`` suite: checkpoint plans with finished tasks, random and exhaustive.

* Random space (token = a seed): case ``i`` is
  ``generate_job_graph(SeededChooser.for_case(seed, i), max_vertices=6, max_parallelism=4)``
  (:mod:`flipcheck.generators.job_graphs`: random DAGs, both patterns, every state kind),
  checked with every plan property (:func:`flipcheck.properties.plan_properties.check_plan`).
* Exhaustive space (token ``exhaustive-v{V}-p{P}``): case ``2t`` is topology ``t`` of
  :class:`~flipcheck.generators.enumerate_dags.TopologySpace` with checkpoints after tasks
  finished on, case ``2t + 1`` the same topology with it off. Checking a case proves
  ``equals_spec`` for **every** RUNNING/FINISHED assignment of its tasks: by enumerating the
  ``2^tasks`` assignments when there are at most :data:`ENUMERATE_MAX_TASKS` tasks, else with
  z3 (the encodings of :mod:`flipcheck.properties.z3_plan`), whichever is faster (measured:
  one z3 query takes 5-8 ms per topology of 5-12 tasks, enumeration about 60 us per
  assignment, so the crossover is between 6 and 7 tasks).

Example
-------
>>> space = PLAN_SUITE.space(PLAN_SUITE.exhaustive_token(2, 2))
>>> space.size, space.coverage()["shapes"]
(26, 3)
>>> outcome = space.check(space.case(25), "flink")
>>> outcome.violations, outcome.assignments, outcome.method
([], 16, 'enumerate')
>>> bad = space.check(space.case(24), "wiki-b")
>>> [v.property for v in bad.violations]
['equals_spec']
>>> small = PLAN_SUITE.minimise(bad.counterexample, "wiki-b", "equals_spec")
>>> small.num_tasks <= bad.counterexample.num_tasks
True
"""

from __future__ import annotations

from functools import cache
import random
import re
import time

from flipcheck.data import example_graphs
from flipcheck.designs import title_of
from flipcheck.designs.contract import Detection, Mutant
from flipcheck.designs.common import first_paragraph
from flipcheck.designs.drivers import hypothesis_driver, seeded_driver
from flipcheck.designs.shrink import shrink_graph
from flipcheck.designs.suite import CRASH, EXHAUSTIVE_PREFIX, CaseSpace, Outcome, Suite, checked
from flipcheck.generators.choices import chooser_for
from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.generators.job_graphs import generate_job_graph
from flipcheck.model.graph_json import load_graph
from flipcheck.model.jobgraph import FINISHED, RUNNING, JobGraph
from flipcheck.model.plan import checkpoint_plan
from flipcheck.properties.plan_properties import PLAN_PROPERTIES, WIRING_PROPERTY, check_plan, equals_spec
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS, calculator_class, plan_algorithm
from flipcheck.reference_impl.user_variants import is_spec


__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "EXAMPLE_GRAPHS", "PLAN_SUITE", "PlanSuite", "generate_case", "RandomPlanSpace", "ExhaustivePlanSpace", "ENUMERATE_MAX_TASKS", "RANDOM_MAX_VERTICES", "RANDOM_MAX_PARALLELISM", "MAX_EXHAUSTIVE_VERTICES",
]

EXAMPLE_GRAPHS = example_graphs()
_MAX_PROOF_TASKS = 100


def generate_case(chooser):
    """A random case of the plan suite's random space (so its case ids replay verify's cases)."""
    return generate_job_graph(chooser, max_vertices=RANDOM_MAX_VERTICES, max_parallelism=RANDOM_MAX_PARALLELISM)


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` is a plan algorithm name
    (default ``flink``) or a user's calculator (``FILE.py:CLASS``), which has no z3 encoding and so
    no ``z3`` row."""
    algorithm_name = variant or "flink"
    algorithm = plan_algorithm(algorithm_name)

    def check(graph):
        return check_plan(graph, algorithm(graph))

    rows = []
    for tally in (
        seeded_driver(generate_case, check, budget_seconds=budget_seconds * 0.35, seed="verify-plan", suite=PLAN_SUITE.name),
        hypothesis_driver(generate_case, check, budget_seconds=budget_seconds * 0.35, suite=PLAN_SUITE.name),
    ):
        rows += [
            {"name": p.name, "cases": tally.cases, "violations": tally.violations[p.name], "driver": tally.driver}
            for p in PLAN_PROPERTIES
        ]
    if algorithm_name != "spec" and not is_spec(algorithm_name):
        rows.append(_z3_row(algorithm_name))
    wiring = algorithm.__self__.wiring if hasattr(algorithm, "__self__") else None
    if wiring is not None:
        pairs = [(u, d) for u in range(1, 65) for d in range(1, 65)]
        bad = sum(1 for u, d in pairs if WIRING_PROPERTY.check(u, d, wiring))
        rows.append({"name": WIRING_PROPERTY.name, "cases": len(pairs), "violations": bad, "driver": "exhaustive"})
    return rows


def _z3_row(algorithm_name: str) -> dict:
    from flipcheck.properties.z3_plan import prove_plan

    graphs = [load_graph(str(p)) for p in sorted(EXAMPLE_GRAPHS.glob("*.json"))]
    graphs = [g for g in graphs if g.num_tasks <= _MAX_PROOF_TASKS]
    failed = sum(1 for g in graphs if not prove_plan(g, algorithm_name, shrink=False).proved)
    return {"name": "equals_spec", "cases": len(graphs), "violations": failed, "driver": "z3"}


# Random cases: the sizes `flipcheck verify --suite plan` uses too.
RANDOM_MAX_VERTICES = 6
RANDOM_MAX_PARALLELISM = 4
# Enumerate the 2^tasks assignments up to this many tasks, prove with z3 above (crossover measured).
ENUMERATE_MAX_TASKS = 6
# A user's calculator has no z3 encoding: its assignments are enumerated up to this many tasks
# (65,536 assignments, a few seconds); a larger topology is an error row, not a verdict.
ENUMERATE_MAX_USER_TASKS = 16
# Shapes on 6 vertices take n! * 2^15 relabellings to canonicalise; 5 is the practical limit.
MAX_EXHAUSTIVE_VERTICES = 5
MAX_EXHAUSTIVE_PARALLELISM = 8
DEFAULT_EXHAUSTIVE = (4, 3)
_TOKEN = re.compile(rf"{EXHAUSTIVE_PREFIX}-v([0-9]+)-p([0-9]+)")


def _shape(graph: JobGraph) -> str:
    flag = "" if graph.checkpoints_after_tasks_finished else " off"
    return f"{len(graph.vertices)}v {len(graph.edges)}e {graph.num_tasks}t{flag}"


def _check_concrete(graph: JobGraph, algorithm: str) -> Outcome:
    return Outcome(check_plan(graph, plan_algorithm(algorithm)(graph)))


class RandomPlanSpace(CaseSpace):
    def __init__(self, suite: "PlanSuite", seed: str):
        self.suite, self.token = suite, seed

    def case(self, index: int) -> JobGraph:
        return generate_case(chooser_for(self.token, index))

    def check(self, case: JobGraph, algorithm: str) -> Outcome:
        return checked(_check_concrete, case, algorithm)

    def shape(self, case: JobGraph) -> str:
        return _shape(case)

    def magnitude(self, case: JobGraph) -> int:
        return case.num_tasks


def _assignments(graph: JobGraph):
    """Every RUNNING/FINISHED assignment of ``graph``'s tasks, as ``graph`` with those states."""
    vertices = graph.topological_order
    widths = [graph.parallelism(v) for v in vertices]
    for bits in range(1 << graph.num_tasks):
        states, shift = {}, 0
        for vertex_id, width in zip(vertices, widths):
            states[vertex_id] = tuple(FINISHED if bits >> (shift + k) & 1 else RUNNING for k in range(width))
            shift += width
        yield graph.with_states(states)


def _prove_all_states(graph: JobGraph, algorithm: str) -> Outcome:
    """``equals_spec`` for every RUNNING/FINISHED assignment of ``graph``'s tasks."""
    count = 1 << graph.num_tasks
    user = is_spec(algorithm)
    if user and graph.num_tasks > ENUMERATE_MAX_USER_TASKS:
        return Outcome([], 0, "enumerate", error=f"{graph.num_tasks} tasks: a user's algorithm has no z3 encoding and "
                                                 f"2^{graph.num_tasks} assignments are too many to enumerate "
                                                 f"(at most {ENUMERATE_MAX_USER_TASKS} tasks)")
    if graph.num_tasks <= ENUMERATE_MAX_TASKS or user:
        compute = plan_algorithm(algorithm)
        for candidate in _assignments(graph):
            found = equals_spec(candidate, compute(candidate), checkpoint_plan(candidate))
            if found:
                return Outcome(found, count, "enumerate", candidate)
        return Outcome([], count, "enumerate")
    import z3

    from flipcheck.properties.z3_plan import difference_queries, encode, prove_plan

    # One query for all differences: a third faster than prove_plan's query-by-query search on
    # graphs this small. Only when it is satisfiable does prove_plan find, decode and re-check
    # the counterexample.
    encoding = encode(graph, algorithm, "binary")
    solver = z3.SolverFor("QF_FD")
    solver.add(z3.Or([query for _, query in difference_queries(encoding.plan, encoding.spec)]))
    if solver.check() == z3.unsat:
        return Outcome([], count, "z3")
    proof = prove_plan(graph, algorithm, domain="binary", shrink=False)
    if proof.proved:
        return Outcome([], count, "z3")
    return Outcome(list(proof.differences), count, "z3", proof.counterexample)


class ExhaustivePlanSpace(CaseSpace):
    def __init__(self, suite: "PlanSuite", max_vertices: int, max_parallelism: int):
        self.suite = suite
        self.max_vertices, self.max_parallelism = max_vertices, max_parallelism
        self.token = f"{EXHAUSTIVE_PREFIX}-v{max_vertices}-p{max_parallelism}"
        self.topologies = topology_space(max_vertices, max_parallelism)
        self.size = 2 * len(self.topologies)

    def case(self, index: int) -> JobGraph:
        graph = self.topologies.job_graph(index // 2)
        return graph if index % 2 == 0 else graph.with_flag(False)

    def check(self, case: JobGraph, algorithm: str) -> Outcome:
        return checked(_prove_all_states, case, algorithm)

    def shape(self, case: JobGraph) -> str:
        return _shape(case)

    def magnitude(self, case: JobGraph) -> int:
        return case.num_tasks

    def coverage(self) -> dict:
        space = self.topologies
        return {
            "max_vertices": self.max_vertices,
            "max_parallelism": self.max_parallelism,
            "shapes": space.shapes,
            "shapes_by_vertices": {str(n): c for n, c in space.shapes_per_size.items()},
            "topologies": len(space),
            "topologies_by_vertices": {str(n): c for n, c in space.topologies_per_size.items()},
            "flag_values": 2,
            "state_assignments": 2 * space.state_assignments(),
            "states": "RUNNING/FINISHED",
        }

    def statement(self, algorithm: str, assignments: int) -> str:
        c = self.coverage()
        return (f"for every job graph with <= {c['max_vertices']} vertices and parallelism <= {c['max_parallelism']} "
                f"({c['topologies']:,} topologies up to isomorphism from {c['shapes']} DAG shapes, both values of "
                f"checkpoints_after_tasks_finished, all {c['state_assignments']:,} RUNNING/FINISHED task-state "
                f"assignments), the {algorithm} plan equals the spec")


class PlanSuite(Suite):
    name = "plan"
    engine = "flink"
    size_unit = "tasks"
    random_batch = 10000    # ~10,000 cases/s per core: about a second per Spark task
    exhaustive_batch = 100  # ~8 ms per topology and flag value

    def algorithms(self):
        return tuple(PLAN_ALGORITHMS)

    def variant_class(self, spec: str) -> type:
        return calculator_class(spec)

    def property_names(self):
        return (*(p.name for p in PLAN_PROPERTIES), CRASH)

    def space(self, token: str) -> CaseSpace:
        return _space(self, token)

    def exhaustive_token(self, max_vertices, max_parallelism):
        vertices = DEFAULT_EXHAUSTIVE[0] if max_vertices is None else max_vertices
        parallelism = DEFAULT_EXHAUSTIVE[1] if max_parallelism is None else max_parallelism
        if not 1 <= vertices <= MAX_EXHAUSTIVE_VERTICES:
            raise ValueError(f"--max-vertices must be 1..{MAX_EXHAUSTIVE_VERTICES} for the plan suite")
        if not 1 <= parallelism <= MAX_EXHAUSTIVE_PARALLELISM:
            raise ValueError(f"--max-parallelism must be 1..{MAX_EXHAUSTIVE_PARALLELISM} for the plan suite")
        if vertices == MAX_EXHAUSTIVE_VERTICES and parallelism > 2:
            raise ValueError("5 vertices are only feasible with --max-parallelism <= 2 (millions of topologies)")
        return f"{EXHAUSTIVE_PREFIX}-v{vertices}-p{parallelism}"

    def minimise(self, counterexample: JobGraph, algorithm: str, prop: str) -> JobGraph:
        def still_fails(graph: JobGraph) -> bool:
            return prop in checked(_check_concrete, graph, algorithm).properties

        return shrink_graph(counterexample, still_fails)

    def render(self, counterexample: JobGraph, algorithm: str, out_path: str) -> str:
        from flipcheck.render.core import render_counterexample, render_plan_graph

        try:
            result = plan_algorithm(algorithm)(counterexample)
        except Exception as error:  # noqa: BLE001 - draw the spec's plan and say it crashed
            return render_plan_graph(counterexample, "spec", out_path,
                                     title=f"{algorithm} crashed: {type(error).__name__}")
        return render_counterexample(counterexample, algorithm, out_path, result=result)

    def size_of(self, counterexample: JobGraph) -> int:
        return counterexample.num_tasks

    def describe(self, counterexample: JobGraph, algorithm: str | None = None) -> dict:
        from flipcheck.model.graph_json import graph_to_json

        return graph_to_json(counterexample)


@cache
def _space(suite: PlanSuite, token: str) -> CaseSpace:
    if token.startswith(EXHAUSTIVE_PREFIX):
        match = _TOKEN.fullmatch(token)
        if not match:
            raise ValueError(f"exhaustive plan token {token!r} is not {EXHAUSTIVE_PREFIX}-vV-pP")
        vertices, parallelism = int(match.group(1)), int(match.group(2))
        suite.exhaustive_token(vertices, parallelism)  # validates the bounds
        return ExhaustivePlanSpace(suite, vertices, parallelism)
    return RandomPlanSpace(suite, token)


PLAN_SUITE = PlanSuite()


def mutants() -> list[Mutant]:
    """Every plan calculator that is not correct: the rejected designs and historical bugs."""
    from flipcheck.reference_impl.plan import CORRECT_ALGORITHMS, PLAN_CALCULATORS

    return [
        Mutant(name, "plan", name, cls.flink_issue, first_paragraph(cls.__doc__))
        for name, cls in PLAN_CALCULATORS.items()
        if name not in CORRECT_ALGORITHMS
    ]


def hunt(mutant: Mutant, budget_seconds: float) -> Detection:
    """Seeded generator, then hypothesis, then z3 on the example topologies; for a variant with a
    POINTWISE wiring of its own, the wiring property on sampled large parallelisms too, first.

    Why first: the graph drivers draw parallelism at most 4, and a rounding error of a wiring
    shows only with thousands of subtasks (FLINK-22863: 6201 to 24853), where about half of the
    sampled pairs show it; behind the graph drivers it waited half the budget (53 s of the
    default 120). A variant with Flink's wiring skips the sample: it cannot differ there."""
    from flipcheck.designs.drivers import hypothesis_driver, seeded_driver
    from flipcheck.generators.job_graphs import generate_job_graph
    from flipcheck.properties.plan_properties import check_plan
    from flipcheck.reference_impl.plan import PLAN_CALCULATORS, plan_algorithm

    started = time.perf_counter()
    deadline = started + budget_seconds
    algorithm = plan_algorithm(mutant.variant)
    check = lambda graph: check_plan(graph, algorithm(graph))  # noqa: E731
    generate = lambda chooser: generate_job_graph(chooser, max_vertices=5, max_parallelism=4)  # noqa: E731
    wiring = PLAN_CALCULATORS[mutant.variant].wiring
    own_wiring = wiring is not PLAN_CALCULATORS[PLAN_SUITE.engine].wiring
    sampler = random.Random(f"mutant-{mutant.id}")
    cases_before = 0
    if own_wiring:
        found, cases_before = _wiring_sample(wiring, sampler, started, until=started + budget_seconds / 4)
        if found is not None:
            return found
    for driver in (seeded_driver, hypothesis_driver):
        share = (deadline - time.perf_counter()) / 4
        kwargs = {"seed": f"mutant-{mutant.id}"} if driver is seeded_driver else {}
        tally = driver(generate, check, budget_seconds=share, stop_at_first=True, **kwargs)
        if tally.first_violation is not None:
            graph, violations = tally.first_violation
            name = violations[0].property
            graph = shrink_graph(graph, lambda g: any(v.property == name for v in check(g)))
            return Detection(True, name, tally.driver, cases_before + tally.first_violation_case_number,
                             time.perf_counter() - started, graph.num_tasks, graph)
        cases_before += tally.cases

    from flipcheck.model.graph_json import load_graph
    from flipcheck.properties.z3_plan import prove_plan

    for number, path in enumerate(sorted(EXAMPLE_GRAPHS.glob("*.json")), 1):
        graph = load_graph(str(path))
        if graph.num_tasks > 100 or time.perf_counter() > deadline:
            continue
        for domain in ("binary", "all"):
            proof = prove_plan(graph, mutant.variant, domain=domain, shrink_seconds=2)
            if not proof.proved:
                return Detection(True, proof.differences[0].property, "z3", cases_before + number,
                                 time.perf_counter() - started, proof.counterexample.num_tasks, proof.counterexample)

    if own_wiring:   # the rest of the budget: the same random sequence goes on
        found, _ = _wiring_sample(wiring, sampler, started, until=deadline, numbered_after=cases_before)
        if found is not None:
            return found
    return Detection(False, seconds=time.perf_counter() - started)


def _wiring_sample(wiring, rng: random.Random, started: float, until: float, numbered_after: int = 0) -> tuple:
    """:func:`hunt`'s wiring driver: checks the wiring property on random ``(upstream,
    downstream)`` parallelisms up to 32768 until a violation or ``until``; ``(its
    :class:`Detection` or None, the pairs checked)``. The detection's case number counts from
    ``numbered_after``, the cases every driver checked before."""
    from flipcheck.designs.contract import Detection
    from flipcheck.properties.plan_properties import WIRING_PROPERTY

    pairs = 0
    while time.perf_counter() < until:
        upstream = rng.randint(1, 32768)
        downstream = rng.randint(1, 32768)
        pairs += 1
        violations = WIRING_PROPERTY.check(upstream, downstream, wiring)
        if violations:
            return Detection(True, violations[0].property, "sweep", numbered_after + pairs,
                             time.perf_counter() - started, upstream + downstream, (upstream, downstream)), pairs
    return None, pairs


def _render_detection(counterexample, variant: str, out_path: str) -> str | None:
    if isinstance(counterexample, tuple):
        return None  # a POINTWISE wiring pair (FLINK-22863): the gallery states it in words
    return PLAN_SUITE.render(counterexample, variant, out_path)


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "plan"
title = title_of(name)
seed = "FLIP-147: Triggering Checkpoints After Tasks Finished; Appendix 1, Computing Tasks to Trigger"
spec = "flipcheck.model.plan"
engine = PLAN_SUITE.engine
# The engine first, as the contract says (the suite lists the spec first).
variants = (PLAN_SUITE.engine, *(a for a in PLAN_SUITE.algorithms() if a != PLAN_SUITE.engine))
properties = (*(p.name for p in PLAN_PROPERTIES), WIRING_PROPERTY.name)
drivers = ("seeded", "hypothesis", "z3", "exhaustive")
suite = PLAN_SUITE
render = _render_detection

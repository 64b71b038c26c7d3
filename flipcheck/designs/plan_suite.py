"""The ``plan`` suite: checkpoint plans with finished tasks, random and exhaustive.

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

import re
from functools import cache

from flipcheck.generators.choices import SeededChooser
from flipcheck.generators.enumerate_dags import topology_space
from flipcheck.generators.job_graphs import generate_job_graph
from flipcheck.model.jobgraph import FINISHED, RUNNING, JobGraph
from flipcheck.model.plan import checkpoint_plan
from flipcheck.properties.plan_properties import PLAN_PROPERTIES, check_plan, equals_spec
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS, plan_algorithm

from flipcheck.designs.suite import CRASH, EXHAUSTIVE_PREFIX, CaseSpace, Outcome, Suite, checked

__all__ = ["PLAN_SUITE", "PlanSuite", "RandomPlanSpace", "ExhaustivePlanSpace", "ENUMERATE_MAX_TASKS",
           "RANDOM_MAX_VERTICES", "RANDOM_MAX_PARALLELISM", "MAX_EXHAUSTIVE_VERTICES"]

# Random cases: the sizes `flipcheck verify --suite plan` uses too.
RANDOM_MAX_VERTICES = 6
RANDOM_MAX_PARALLELISM = 4
# Enumerate the 2^tasks assignments up to this many tasks, prove with z3 above (crossover measured).
ENUMERATE_MAX_TASKS = 6
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
        chooser = SeededChooser.for_case(self.token, index)
        return generate_job_graph(chooser, max_vertices=RANDOM_MAX_VERTICES, max_parallelism=RANDOM_MAX_PARALLELISM)

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
    if graph.num_tasks <= ENUMERATE_MAX_TASKS:
        compute = PLAN_ALGORITHMS[algorithm]
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
    title = "checkpoint plan with finished tasks (FLIP-147 trigger roots)"
    engine = "flink"
    size_unit = "tasks"
    random_batch = 10000    # ~10,000 cases/s per core: about a second per Spark task
    exhaustive_batch = 100  # ~8 ms per topology and flag value

    def algorithms(self):
        return tuple(PLAN_ALGORITHMS)

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
        from flipcheck.designs.shrink import shrink_graph

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

    def describe(self, counterexample: JobGraph) -> dict:
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

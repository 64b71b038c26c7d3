"""z3: the restart set equals the specification's for every failure at once.

For one topology, the failed tasks ``F`` and the partitions marked failed by a
PartitionException ``P`` become 2 × tasks boolean variables. Both sides are least fixed points of
single-premise rules, encoded with integer ranks (every restarted task needs a justification of
smaller rank, so no restart supports itself):

* the specification (rules F1-F3 of :mod:`flipcheck.model.approximate_recovery`) on tasks;
* the engine's ``getRegionsToRestart`` on *its* regions (``PipelinedRegionComputeUtil`` of the
  variant), with its availability checker's answer for an approximate partition and whether it
  adds consumer regions (rule c) — the structural facts the BFS works on, read from the variant.

z3 looks for ``F, P`` where some task restarts on one side only; ``unsat`` proves equality (and
so every restart-set property) for all ``2^(2 tasks)`` failures. A model is decoded and checked
concretely with :func:`~.approximate_recovery_properties.check_restart_set`.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("src", 2), ("map", 2), ("sink", 1)], [("src", "map", ALL_TO_ALL), ("map", "sink", ALL_TO_ALL)])
>>> prove_restart_set(g, "flip135").proved
True
>>> proof = prove_restart_set(g, "flink-before-28701")       # z3 picks some failure: a producer restarts
>>> proof.proved, "never_restarts_upstream" in [v.property for v in proof.violations]
(False, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from flipcheck.model.execution_graph import input_connections
from flipcheck.model.jobgraph import JobGraph
from flipcheck.reference_impl.approximate_recovery_variants import engine as make_engine

from .approximate_recovery_properties import check_restart_set
from .violation import Violation

__all__ = ["RestartProof", "prove_restart_set"]


@dataclass
class RestartProof:
    proved: bool
    tasks: int
    seconds: float
    failed: frozenset = frozenset()
    unavailable: frozenset = frozenset()
    violations: list[Violation] = field(default_factory=list)


def _least_fixpoint(z3, solver, nodes, seeds, rules, name):
    """Booleans ``x[n]`` = the least set containing ``seeds[n]`` and closed under ``rules``:
    (premise node, target node, condition) meaning premise and condition imply target."""
    x = {n: z3.Bool(f"{name}_{i}") for i, n in enumerate(nodes)}
    rank = {n: z3.Int(f"{name}_rank_{i}") for i, n in enumerate(nodes)}
    into: dict = {n: [] for n in nodes}
    for premise, target, condition in rules:
        solver.add(z3.Implies(z3.And(x[premise], condition), x[target]))
        into[target].append(z3.And(x[premise], condition, rank[premise] < rank[target]))
    for n in nodes:
        solver.add(z3.Implies(seeds[n], x[n]))
        solver.add(z3.Implies(x[n], z3.Or(seeds[n], *into[n])))
    return x


def prove_restart_set(graph: JobGraph, variant: str = "flip135") -> RestartProof:
    import z3

    started = time.perf_counter()
    tasks = list(graph.tasks())
    engine = make_engine(variant)
    strategy = engine.failover_strategy_class(graph, engine.partition_type)
    links = [(upstream, t) for t in tasks for _, upstream in input_connections(graph, t)]

    solver = z3.Solver()
    failed = {t: z3.Bool(f"failed_{i}") for i, t in enumerate(tasks)}
    lost = {t: z3.Bool(f"partition_failed_{i}") for i, t in enumerate(tasks)}

    # The specification, on tasks: F1 seeds, F2 consumers, F3 producers of lost partitions.
    spec_rules = [(u, t, z3.BoolVal(True)) for u, t in links] + [(t, u, lost[u]) for u, t in links]
    in_spec = _least_fixpoint(z3, solver, tasks, failed, spec_rules, "spec")

    # The engine, on its regions: the checker's verdict on an intact approximate partition.
    regions = sorted(set(strategy.regions.values()), key=sorted)
    checker = strategy.checker
    intact = lambda u: checker.is_available(u, engine.partition_type, frozenset())  # noqa: E731
    region_rules = []
    for u, t in links:
        ru, rt = strategy.regions[u], strategy.regions[t]
        if ru == rt:
            continue
        if strategy.restarts_consumer_regions:
            region_rules.append((ru, rt, z3.BoolVal(True)))  # rule (c)
        available = z3.And(z3.BoolVal(intact(u)), z3.Not(lost[u]))
        region_rules.append((rt, ru, z3.Not(available)))  # rule (b)
    seeds = {r: z3.Or(*[failed[t] for t in r]) for r in regions}
    in_engine = _least_fixpoint(z3, solver, regions, seeds, region_rules, "engine")

    solver.add(z3.Or(*[in_spec[t] != in_engine[strategy.regions[t]] for t in tasks]))
    if solver.check() == z3.unsat:
        return RestartProof(True, len(tasks), time.perf_counter() - started)
    model = solver.model()
    chosen = frozenset(t for t in tasks if z3.is_true(model.eval(failed[t], model_completion=True)))
    marked = frozenset(t for t in tasks if z3.is_true(model.eval(lost[t], model_completion=True)))
    violations = check_restart_set(graph, chosen, marked, engine.restart_set(graph, chosen, marked))
    return RestartProof(False, len(tasks), time.perf_counter() - started, chosen, marked, violations)

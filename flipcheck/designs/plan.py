"""The ``plan`` suite of ``flipcheck verify``: every plan property with all its drivers.

* ``seeded`` and ``hypothesis`` — every property of :data:`PLAN_PROPERTIES` on generated job
  graphs of every state kind (:mod:`flipcheck.generators.job_graphs`);
* ``z3`` — ``equals_spec`` proved for every state assignment on the example topologies
  (:func:`flipcheck.properties.z3_plan.prove_plan`);
* ``exhaustive`` — ``pointwise_wiring`` for every ``U, D <= 64``.

>>> rows = run_plan_suite(budget_seconds=1.5)
>>> sorted({row["driver"] for row in rows})
['exhaustive', 'hypothesis', 'seeded', 'z3']
>>> sum(row["violations"] for row in rows)
0
"""

from __future__ import annotations

from pathlib import Path

from flipcheck.designs.drivers import hypothesis_driver, seeded_driver
from flipcheck.generators.job_graphs import generate_job_graph
from flipcheck.model.graph_json import load_graph
from flipcheck.properties.plan_properties import PLAN_PROPERTIES, WIRING_PROPERTY, check_plan
from flipcheck.reference_impl.plan import plan_algorithm

__all__ = ["run_plan_suite", "EXAMPLE_GRAPHS"]

EXAMPLE_GRAPHS = Path(__file__).resolve().parents[2] / "examples" / "graphs"
_MAX_PROOF_TASKS = 100


def _generate(chooser):
    return generate_job_graph(chooser, max_vertices=6, max_parallelism=4)


def run_plan_suite(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` is a plan algorithm name
    (default ``flink``)."""
    algorithm_name = variant or "flink"
    algorithm = plan_algorithm(algorithm_name)

    def check(graph):
        return check_plan(graph, algorithm(graph))

    rows = []
    for tally in (
        seeded_driver(_generate, check, budget_seconds=budget_seconds * 0.35, seed="verify-plan"),
        hypothesis_driver(_generate, check, budget_seconds=budget_seconds * 0.35),
    ):
        rows += [
            {"name": p.name, "cases": tally.cases, "violations": tally.violations[p.name], "driver": tally.driver}
            for p in PLAN_PROPERTIES
        ]
    if algorithm_name != "spec":
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

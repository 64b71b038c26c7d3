"""docs/ names every property and every algorithm the code registers."""

from pathlib import Path

from flipcheck.properties.plan_properties import PLAN_PROPERTIES, WIRING_PROPERTY
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_plan_doc_names_every_property_and_algorithm():
    text = (DOCS / "plan.md").read_text()
    missing = [p.name for p in (*PLAN_PROPERTIES, WIRING_PROPERTY) if f"`{p.name}`" not in text]
    missing += [name for name in PLAN_ALGORITHMS if f"`{name}`" not in text]
    assert missing == []


def test_split_assignment_doc_names_every_property_and_mutant():
    from flipcheck.properties.split_assignment_properties import LIVENESS, REFINEMENT, SPLIT_PROPERTIES
    from flipcheck.reference_impl.split_assignment_variants import MUTANTS

    text = (DOCS / "split-assignment.md").read_text()
    names = [p.name for p in SPLIT_PROPERTIES] + [LIVENESS, REFINEMENT] + sorted(MUTANTS)
    assert [name for name in names if f"`{name}`" not in text] == []

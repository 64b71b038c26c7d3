"""Every registered design satisfies the design contract (flipcheck/designs/contract.py), has
its layer modules under its one name, and is documented.

Adding a design means its layer modules plus one line in ``flipcheck.designs.DESIGNS``; these
tests then hold it to the same contract as the seven that exist.
"""

import importlib
import importlib.util
from pathlib import Path

import pytest

from flipcheck.designs import DESIGNS, design, title_of
from flipcheck.designs.contract import DRIVERS, Design
from flipcheck.designs.suite import CRASH, resolve_case

ROOT = Path(__file__).resolve().parents[2]
NAMES = list(DESIGNS)


def module_name(name: str) -> str:
    return name.replace("-", "_")


@pytest.mark.parametrize("name", NAMES)
def test_the_front_end_module_implements_the_contract(name):
    front = design(name)
    assert isinstance(front, Design)
    assert front.__name__ == f"flipcheck.designs.{module_name(name)}" == DESIGNS[name].module
    assert front.name == name and front.title == title_of(name) == front.suite.title
    assert front.seed and front.spec.startswith("flipcheck.model.")
    assert importlib.util.find_spec(front.spec) is not None
    assert front.variants[0] == front.engine and set(front.variants) == set(front.suite.algorithms())
    assert front.suite.name == name and front.suite.engine == front.engine
    assert set(front.drivers) <= set(DRIVERS) and len(set(front.properties)) == len(front.properties)
    # The sweep's properties are the design's (plus "crash": checked code raised).
    assert set(front.suite.property_names()) - {CRASH} <= set(front.properties)


@pytest.mark.parametrize("name", NAMES)
def test_verify_reports_only_declared_properties_and_drivers_and_the_engine_passes(name):
    front = design(name)
    rows = front.verify(0.5, None)
    assert rows and {row["name"] for row in rows} <= set(front.properties)
    assert {row["driver"] for row in rows} == set(front.drivers)
    assert sum(row["violations"] for row in rows) == 0


@pytest.mark.parametrize("name", NAMES)
def test_case_ids_regenerate_their_case(name):
    front = design(name)
    suite, space, index = resolve_case(f"{name}:42:3")
    assert suite is front.suite
    case = space.case(index)
    assert space.case(index) == case
    assert space.check(case, front.engine).violations == []


@pytest.mark.parametrize("name", NAMES)
def test_mutants_are_named_variants_of_their_design(name):
    front = design(name)
    mutants = front.mutants()
    assert mutants, "every design re-creates at least one bug"
    assert all(m.suite == name and m.variant in front.variants and m.variant != front.engine for m in mutants)
    assert len({m.id for m in mutants}) == len(mutants)


# Modules of the layers that serve several designs, named for what they are.
SHARED = {
    "model": {"jobgraph", "execution_graph", "graph_json", "pointwise", "channel_env", "actions"},
    "reference_impl": {"user_variants"},
    "properties": {"explore", "fingerprints", "violation", "refinement"},
    "generators": {"choices", "job_graphs", "enumerate_dags", "channel_events", "actions"},
}
# How a layer names a design's module: the design's stem, then an optional suffix.
LAYER_FORMS = {
    "model": ("{stem}",),
    "reference_impl": ("{stem}", "{stem}_variants"),
    "properties": ("{stem}_properties", "{stem}_explore", "{stem}_reduction", "{stem}_symmetry", "{stem}_replay",
                   "{stem}_trace_validation", "{stem}_coverage", "{stem}_abstraction",
                   "z3_{stem}"),
    "generators": ("{stem}",),
}


def test_every_layer_module_is_shared_or_named_for_one_design():
    """One name per design across the layers: no ``job_*`` beside ``protocol``."""
    stems = [module_name(n) for n in NAMES]
    strays = []
    for layer, forms in LAYER_FORMS.items():
        allowed = SHARED[layer] | {form.format(stem=s) for s in stems for form in forms}
        for path in sorted((ROOT / layer).iterdir()):
            stem = path.stem if path.suffix == ".py" else path.name
            if stem.startswith("__") or not (path.suffix == ".py" or (path / "__init__.py").exists()):
                continue
            if stem not in allowed:
                strays.append(f"{layer}/{path.name}")
    assert strays == []


@pytest.mark.parametrize("name", NAMES)
def test_the_design_has_its_spec_and_properties_under_its_one_name(name):
    stem = module_name(name)
    assert design(name).spec == f"flipcheck.model.{stem}"
    assert (ROOT / "properties" / f"{stem}_properties.py").exists()


@pytest.mark.parametrize("name", NAMES)
def test_the_docs_name_every_property_and_variant(name):
    front = design(name)
    text = (ROOT / "docs" / f"{name}.md").read_text()
    missing = [p for p in (*front.properties, *front.variants) if f"`{p}`" not in text]
    assert missing == []


def test_the_docs_index_lists_every_design_with_its_registered_title():
    index = (ROOT / "docs" / "README.md").read_text()
    assert [name for name in NAMES if f"* [{name}.md]({name}.md) — {title_of(name)}" not in index] == []

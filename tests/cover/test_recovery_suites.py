"""What both recovery designs' verify modules offer the CLI and the sweep: every kind of case
described as JSON and drawn, a registered sweep suite whose case ids regenerate their cases, and
docs naming every property and variant."""

import json
from pathlib import Path

import pytest

from flipcheck.designs import approximate_recovery as verify_approximate_recovery
from flipcheck.designs import local_recovery as verify_local_recovery
from flipcheck.generators.choices import SeededChooser
from flipcheck.designs.suite import get_suite, resolve_case

DOCS = Path(__file__).resolve().parents[2] / "docs"
DESIGNS = {
    "approximate-recovery": (verify_approximate_recovery, "flipcheck.generators.approximate_recovery"),
    "local-recovery": (verify_local_recovery, "flipcheck.generators.local_recovery"),
}


@pytest.mark.parametrize("suite", DESIGNS)
def test_every_kind_is_described_as_json_and_drawn(suite, tmp_path):
    import importlib

    driver, generators = DESIGNS[suite]
    for kind in importlib.import_module(generators).KINDS:
        case = driver.generate_case(SeededChooser.for_case("pictures", 0), kind)
        assert json.loads(json.dumps(driver.describe_case(case)))["kind"] == kind
        picture = driver.render_case(case, str(tmp_path / f"{kind}.svg"))
        assert Path(picture).read_text().lstrip().startswith(("<?xml", "<svg"))


@pytest.mark.parametrize("suite", DESIGNS)
def test_sweep_suite_regenerates_and_checks_cases(suite):
    driver, _ = DESIGNS[suite]
    registered, space, index = resolve_case(f"{suite}:42:3")
    assert registered is get_suite(suite) and registered.engine == driver.ENGINE
    case = space.case(index)
    assert space.case(index) == case and space.check(case, driver.ENGINE).violations == []
    exhaustive = registered.space(registered.exhaustive_token())
    assert exhaustive.size == len(driver.exhaustive_cases())


@pytest.mark.parametrize("suite", DESIGNS)
def test_docs_name_every_property_and_variant(suite):
    driver, _ = DESIGNS[suite]
    text = (DOCS / f"{suite}.md").read_text()
    missing = [name for name in (*driver.PROPERTY_NAMES, *driver.ENGINES) if f"`{name}`" not in text]
    assert missing == []

"""Adding a design is its front-end module plus one registry line: with nothing else changed,
``verify``, ``mutants``, ``replay``, the case ids of sweeps and the ``--help`` texts see it.

The design here is a toy written for the test (a case is a number; the property says it is below
five; the variant ``off-by-one`` adds one), registered for the test's duration only.
"""

import json
import sys
import textwrap

import pytest

from flipcheck import designs
from flipcheck.cli import main
from flipcheck.designs.contract import Design

TOY_DESIGN = '''
"""A toy design: a case is a number below five; the variant off-by-one adds one to it."""

from collections import Counter
from pathlib import Path

from flipcheck.designs import title_of
from flipcheck.designs.common import rows
from flipcheck.designs.contract import Detection, Mutant
from flipcheck.designs.generated_suite import GeneratedSuite
from flipcheck.properties.violation import Violation

ENGINE = "exact"
ENGINES = ("exact", "off-by-one")
PROPERTY_NAMES = ("below_limit",)


def generate_case(chooser):
    return chooser.integer(0, 4)


def check_case(case, variant=ENGINE):
    value = case + (1 if variant == "off-by-one" else 0)
    return [Violation("below_limit", f"{value} is not below 5")] if value >= 5 else []


def exhaustive_cases():
    return list(range(5))


def explore_case(unit, variant):
    return check_case(unit, variant), 1, unit


def case_shape(case):
    return f"n={case}"


def case_size(case):
    return case


def describe_case(case):
    return {"n": case}


def render_case(case, out_path, variant=ENGINE):
    Path(out_path).write_text(f"<svg><text>{case}</text></svg>")
    return out_path


name = "toy"
title = title_of(name)
seed = "none: a toy"
spec = __name__
engine = ENGINE
variants = ENGINES
properties = PROPERTY_NAMES
drivers = ("exhaustive",)
suite = GeneratedSuite(name, __name__)
render = suite.render


def verify(budget_seconds, variant=None):
    found = Counter(v.property for n in range(5) for v in check_case(n, variant or ENGINE))
    return rows(PROPERTY_NAMES, 5, found, "exhaustive")


def mutants():
    return [Mutant("toy-off-by-one", name, "off-by-one", None, "adds one to every number")]


def hunt(mutant, budget_seconds):
    for n in range(5):
        found = check_case(n, mutant.variant)
        if found:
            return Detection(True, found[0].property, "exhaustive", n + 1, 0.0, n, n)
    return Detection(False)
'''


@pytest.fixture
def toy_registered(tmp_path, monkeypatch):
    (tmp_path / "toy_design.py").write_text(textwrap.dedent(TOY_DESIGN))
    monkeypatch.syspath_prepend(str(tmp_path))
    # The one line a new design adds:
    monkeypatch.setitem(designs.DESIGNS, "toy", designs.Registered("toy_design", "a toy design: numbers below five"))
    yield
    sys.modules.pop("toy_design", None)


def test_the_toy_satisfies_the_contract(toy_registered):
    assert isinstance(designs.design("toy"), Design)
    assert "toy" in designs.available_designs()


def test_verify_runs_it_and_its_variant_is_caught(toy_registered, capsys):
    assert main(["verify", "--suite", "toy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["violations"] == 0
    assert main(["verify", "--suite", "toy", "--variant", "off-by-one", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["properties"][0]["name"] == "below_limit"


def test_mutants_hunts_it(toy_registered, capsys):
    assert main(["mutants", "--suite", "toy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(m["id"], m["caught"], m["property"]) for m in report["mutants"]] == [("toy-off-by-one", True, "below_limit")]


def test_replay_regenerates_its_cases(toy_registered, capsys, tmp_path):
    assert main(["replay", "toy:exhaustive-default:4", "--variant", "off-by-one", "--json",
                 "--render", str(tmp_path / "toy.svg")]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["case"] == {"n": 4} and replayed["violations"][0]["property"] == "below_limit"


def test_the_help_texts_list_it(toy_registered, capsys):
    for command in ("verify", "sweep"):
        assert main([command, "--help"]) == 0
        assert "a toy design: numbers below five" in capsys.readouterr().out

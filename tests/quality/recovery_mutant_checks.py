"""Checks the recovery designs' mutant tests share (test_approximate_recovery_mutants_caught.py,
test_local_recovery_mutants_caught.py); ``driver`` is the design's flipcheck/verify_<design>.py."""

import json
from pathlib import Path

from flipcheck.generators.choices import SeededChooser
from flipcheck.designs.mutants import catalogue


def load_manifest(name: str) -> dict:
    return json.loads((Path(__file__).resolve().parents[1] / "manifests" / f"{name}.json").read_text())


def pinned_variants(manifest: dict) -> dict:
    return {entry["variant"]: entry for entry in manifest["variants"]}


def assert_registered(driver, suite: str, manifest: dict) -> None:
    """Every variant is pinned in the manifest, listed in MUTANTS and in the mutant catalogue."""
    pinned = pinned_variants(manifest)
    assert set(pinned) == set(driver.VARIANTS) == set(driver.MUTANTS)
    ours = {m.id for m in catalogue().values() if m.suite == suite}
    assert ours == set(driver.VARIANTS) and len(ours) >= 3


def assert_caught_as_pinned(driver, name: str, manifest: dict) -> None:
    """The hunt catches the variant with the pinned property, driver and counterexample, which
    replays: the variant violates the property on it, the engine nothing."""
    detection = driver.hunt(catalogue()[name], budget_seconds=30)
    pinned = pinned_variants(manifest)[name]
    assert detection.caught
    assert (detection.property, detection.driver) == (pinned["property"], pinned["driver"])
    assert json.loads(json.dumps(driver.describe_case(detection.counterexample))) == pinned["counterexample"]
    assert pinned["property"] in {v.property for v in driver.check_case(detection.counterexample, name)}
    assert driver.check_case(detection.counterexample, driver.ENGINE) == []


def assert_property_catches(driver, prop: str, variant: str, kind: str, cases: int = 3000) -> None:
    """Some random case of ``kind`` violates ``prop`` on ``variant``."""
    for index in range(cases):
        case = driver.generate_case(SeededChooser.for_case("catch", index), kind)
        if prop in {v.property for v in driver.check_case(case, variant)}:
            return
    raise AssertionError(f"{prop} never caught {variant} in {cases} {kind} cases")

"""Checks the recovery designs' mutant tests share (test_approximate_recovery_mutants_caught.py,
test_local_recovery_mutants_caught.py); ``driver`` is the design's flipcheck/designs/<design>.py."""

import json

import manifest
from flipcheck.generators.choices import SeededChooser
from flipcheck.designs.mutants import catalogue


def pinned_variants(design: str) -> dict:
    """The manifest's hunt entries of ``design``, by variant."""
    return {entry["model"]: entry for entry in manifest.entries(design, check="hunt")}


def assert_registered(driver, design: str) -> None:
    """Every variant is pinned in the manifest, listed in MUTANTS and in the mutant catalogue."""
    pinned = pinned_variants(design)
    assert set(pinned) == set(driver.VARIANTS) == set(driver.MUTANTS)
    ours = {m.id for m in catalogue().values() if m.suite == design}
    assert ours == set(driver.VARIANTS) and len(ours) >= 3


def assert_caught_as_pinned(driver, name: str, design: str) -> None:
    """The hunt catches the variant with the pinned property, driver and counterexample, which
    replays: the variant violates the property on it, the engine nothing."""
    pinned = pinned_variants(design)[name]
    with manifest.measured(pinned):
        detection = driver.hunt(catalogue()[name], **pinned["config"])
    assert detection.caught
    manifest.pin(pinned, result=detection.property, driver=detection.driver,
                 counterexample=driver.describe_case(detection.counterexample))
    assert pinned["result"] in {v.property for v in driver.check_case(detection.counterexample, name)}
    assert driver.check_case(detection.counterexample, driver.ENGINE) == []


def assert_property_catches(driver, prop: str, variant: str, kind: str, cases: int = 3000) -> None:
    """Some random case of ``kind`` violates ``prop`` on ``variant``."""
    for index in range(cases):
        case = driver.generate_case(SeededChooser.for_case("catch", index), kind)
        if prop in {v.property for v in driver.check_case(case, variant)}:
            return
    raise AssertionError(f"{prop} never caught {variant} in {cases} {kind} cases")

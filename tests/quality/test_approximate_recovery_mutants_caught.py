"""The suite finds the approximate-recovery bugs: every named variant is caught with the pinned
property and counterexample, every property catches a named variant, the stateful machine catches
every subpartition variant, and Flink as shipped differs from the seed exactly where documented.
"""

import json
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from flipcheck.generators.approximate_recovery import QUICK, subpartition_machine
from flipcheck.mutants import catalogue
from flipcheck.properties.approximate_recovery_properties import PROPERTY_NAMES
from flipcheck.reference_impl.approximate_recovery_variants import VARIANTS
from flipcheck.verify_approximate_recovery import MUTANTS, check_case, describe_case, hunt_mutant, run_approximate_recovery_suite

MANIFEST = json.loads((Path(__file__).resolve().parents[1] / "manifests" / "approximate_recovery.json").read_text())
PINNED = {entry["variant"]: entry for entry in MANIFEST["variants"]}


def test_every_variant_is_pinned_and_in_the_catalogue():
    assert set(PINNED) == set(VARIANTS) == set(MUTANTS)
    ours = {m.id for m in catalogue().values() if m.suite == "approximate-recovery"}
    assert ours == set(VARIANTS) and len(ours) >= 3


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_is_caught_with_the_pinned_shortest_counterexample(name):
    detection = hunt_mutant(catalogue()[name], budget_seconds=30)
    pinned = PINNED[name]
    assert detection.caught
    assert (detection.property, detection.driver) == (pinned["property"], pinned["driver"])
    assert json.loads(json.dumps(describe_case(detection.counterexample))) == pinned["counterexample"]
    # The counterexample replays: checking it on the variant violates the property, on the engine nothing.
    assert pinned["property"] in {v.property for v in check_case(detection.counterexample, name)}
    assert check_case(detection.counterexample, "flip135") == []


# Properties a hunt reports behind a stronger one found first: (variant, kind of random case).
ALSO_CAUGHT = {
    "sink_failure_restarts_only_sink": ("flink-before-19693", "failover"),
    "view_release_keeps_partition": ("release-on-consumption", "subpartition"),
    "loss_bounded_by_partial_record": ("cleanup-first-buffer-only", "subpartition"),
    "no_duplicates_in_state": ("single-task-recovery", "dataflow"),
    "unaffected_tasks_exact": ("every-failure-is-partition-failure", "dataflow"),
    "sink_output_bounded": ("single-task-recovery", "dataflow"),
    "final_equals_spec": ("discard-buffers-on-reconnect", "dataflow"),
}


@pytest.mark.parametrize("prop", sorted(ALSO_CAUGHT))
def test_property_catches_its_named_variant_on_random_cases(prop):
    from flipcheck.generators.choices import SeededChooser
    from flipcheck.verify_approximate_recovery import generate_case

    variant, kind = ALSO_CAUGHT[prop]
    first = next((index for index in range(2000)
                  if prop in {v.property for v in check_case(generate_case(SeededChooser.for_case("catch", index), kind),
                                                             variant)}), None)
    assert first is not None, f"{prop} never caught {variant}"


def test_every_property_catches_a_named_variant():
    assert {entry["property"] for entry in MANIFEST["variants"]} | set(ALSO_CAUGHT) == set(PROPERTY_NAMES)


SUBPARTITION_VARIANTS = sorted(n for n, cls in VARIANTS.items() if cls.part == "subpartition")


@pytest.mark.parametrize("name", SUBPARTITION_VARIANTS)
def test_stateful_machine_catches_subpartition_variant(name):
    with pytest.raises(AssertionError) as failure:
        run_state_machine_as_test(subpartition_machine(name, refinement=False),
                                  settings=settings(QUICK, phases=[Phase.explicit, Phase.generate]))
    assert str(failure.value).split(":")[0] == PINNED[name]["property"]


def test_flink_as_shipped_differs_exactly_where_the_facts_say():
    """No zombie check and no barrier dropping (facts §1); the checkpoint after the restart still
    completes (a newer barrier subsumes the old one), and everything else holds."""
    rows = run_approximate_recovery_suite(budget_seconds=2, variant="flink-shipped")
    violated = sorted({r["name"] for r in rows if r["violations"]})
    assert violated == MANIFEST["expected_failures"]["flink-shipped"]
    assert all(r["violations"] == 0 for r in rows if r["name"] == "checkpoint_after_restart_completes")

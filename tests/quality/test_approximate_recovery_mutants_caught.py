"""The suite finds the approximate-recovery bugs: every named variant is caught with the pinned
property and counterexample, every property catches a named variant, the stateful machine catches
every subpartition variant, and Flink as shipped differs from the seed exactly where documented.
"""

import pytest
from hypothesis import Phase, settings

from flipcheck.generators.approximate_recovery import QUICK, subpartition_machine
from flipcheck.designs import approximate_recovery as driver
from flipcheck.properties.approximate_recovery_properties import PROPERTY_NAMES
from flipcheck.reference_impl.approximate_recovery_variants import VARIANTS
from flipcheck.designs.approximate_recovery import verify as verify_approximate_recovery
from recovery_mutant_checks import (
    assert_caught_as_pinned, assert_property_catches, assert_registered, load_manifest, pinned_variants,
)
from machine_checks import machine_failure

MANIFEST = load_manifest("approximate_recovery")
PINNED = pinned_variants(MANIFEST)


def test_every_variant_is_pinned_and_in_the_catalogue():
    assert_registered(driver, "approximate-recovery", MANIFEST)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_is_caught_with_the_pinned_shortest_counterexample(name):
    assert_caught_as_pinned(driver, name, MANIFEST)


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
    assert_property_catches(driver, prop, *ALSO_CAUGHT[prop])


def test_every_property_catches_a_named_variant():
    assert {entry["property"] for entry in MANIFEST["variants"]} | set(ALSO_CAUGHT) == set(PROPERTY_NAMES)


SUBPARTITION_VARIANTS = sorted(n for n, cls in VARIANTS.items() if cls.part == "subpartition")


@pytest.mark.parametrize("name", SUBPARTITION_VARIANTS)
def test_stateful_machine_catches_subpartition_variant(name):
    failure = machine_failure(lambda: subpartition_machine(name, refinement=False),
                              settings(QUICK, phases=[Phase.explicit, Phase.generate]))
    assert failure is not None, f"{name} survived the stateful machine"
    assert str(failure).split(":")[0] == PINNED[name]["property"]


def test_flink_as_shipped_differs_exactly_where_the_facts_say():
    """No zombie check and no barrier dropping (recovery facts §1); the checkpoint after the restart still
    completes (a newer barrier subsumes the old one), and everything else holds."""
    rows = verify_approximate_recovery(budget_seconds=2, variant="flink-shipped")
    violated = sorted({r["name"] for r in rows if r["violations"]})
    assert violated == MANIFEST["expected_failures"]["flink-shipped"]
    assert all(r["violations"] == 0 for r in rows if r["name"] == "checkpoint_after_restart_completes")

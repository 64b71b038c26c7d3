"""The suite finds the task-local recovery bugs: every named variant is caught with the pinned
property and counterexample, every property catches a named variant, and the cluster's stateful
machine catches every variant a whole run can show."""

import pytest
from hypothesis import Phase, settings

from flipcheck.generators.local_recovery import QUICK, cluster_machine
from flipcheck.designs import local_recovery as driver
from flipcheck.properties.local_recovery_properties import PROPERTY_NAMES
from flipcheck.reference_impl.local_recovery_variants import VARIANTS
from recovery_mutant_checks import (
    assert_caught_as_pinned, assert_property_catches, assert_registered, pinned_variants,
)
from machine_checks import machine_failure

DESIGN = "local-recovery"


def test_every_variant_is_pinned_and_in_the_catalogue():
    assert_registered(driver, DESIGN)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_is_caught_with_the_pinned_counterexample(name):
    assert_caught_as_pinned(driver, name, DESIGN)


# Properties a hunt reports behind another one: (variant, kind of random case).
ALSO_CAUGHT = {
    "ack_carries_primary_only": ("local-copy-rescues-primary", "write"),
    "local_copy_only_with_primary": ("local-copy-rescues-primary", "write"),
    "abort_drops_that_checkpoint": ("abort-not-forwarded", "store"),
    "partial_local_merged_by_key_group_range": ("match-overlapping-ranges", "restore"),
    "no_cascading_steals": ("flink-before-9635", "scheduling"),
    "maximal_local_recovery": ("flink-before-9635", "scheduling"),
    "restored_state_equals_primary": ("local-copy-as-whole-state", "cluster"),
    "local_recovery_when_possible": ("flink-before-33341", "cluster"),
    "store_retention_matches_spec": ("confirm-discards-confirmed", "cluster"),
}


@pytest.mark.parametrize("prop", sorted(ALSO_CAUGHT))
def test_property_catches_its_named_variant_on_random_cases(prop):
    assert_property_catches(driver, prop, *ALSO_CAUGHT[prop])


def test_every_property_catches_a_named_variant():
    assert {entry["result"] for entry in pinned_variants(DESIGN).values()} | set(ALSO_CAUGHT) == set(PROPERTY_NAMES)


# Variants a whole cluster run shows (the others change parts the cluster never exercises: one
# handle layout, copies always of the requested checkpoint, free non-reserved slots).
CLUSTER_VISIBLE = ["secondary-failure-fails-checkpoint", "local-copy-rescues-primary", "flink-before-28515",
                   "confirm-discards-confirmed", "abort-not-forwarded", "flink-before-33341", "no-fallback-to-primary",
                   "local-copy-as-whole-state", "drop-primary-when-local-complete", "flink-before-9635",
                   "location-preference-only", "seed-fresh-slot-only", "slot-not-removed-from-pool"]


@pytest.mark.parametrize("name", CLUSTER_VISIBLE)
def test_cluster_machine_catches_variant(name):
    failure = machine_failure(lambda: cluster_machine(name), settings(QUICK, phases=[Phase.explicit, Phase.generate]))
    assert failure is not None, f"{name} survived the cluster machine"
    assert str(failure).split(":")[0] in PROPERTY_NAMES

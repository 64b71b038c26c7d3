"""The suite finds the approximate-recovery bugs: every named variant is caught with the pinned
property and counterexample, every property catches a named variant, the stateful machine catches
every subpartition variant, and Flink as shipped differs from the seed exactly where documented.
"""

import pytest
from hypothesis import Phase, settings

import manifest
from flipcheck.generators.approximate_recovery import QUICK, subpartition_machine
from flipcheck.designs import approximate_recovery as driver
from flipcheck.properties.approximate_recovery_properties import PROPERTY_NAMES
from flipcheck.reference_impl.approximate_recovery_variants import VARIANTS
from flipcheck.designs.approximate_recovery import verify as verify_approximate_recovery
from recovery_mutant_checks import (
    assert_caught_as_pinned, assert_property_catches, assert_registered, pinned_variants,
)
from machine_checks import machine_failure

DESIGN = "approximate-recovery"
PINNED = pinned_variants(DESIGN)


def test_every_variant_is_pinned_and_in_the_catalogue():
    assert_registered(driver, DESIGN)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_is_caught_with_the_pinned_shortest_counterexample(name):
    assert_caught_as_pinned(driver, name, DESIGN)


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
    assert {entry["result"] for entry in pinned_variants(DESIGN).values()} | set(ALSO_CAUGHT) == set(PROPERTY_NAMES)


SUBPARTITION_VARIANTS = sorted(n for n, cls in VARIANTS.items() if cls.part == "subpartition")


@pytest.mark.parametrize("name", SUBPARTITION_VARIANTS)
def test_stateful_machine_catches_subpartition_variant(name):
    failure = machine_failure(lambda: subpartition_machine(name, refinement=False),
                              settings(QUICK, phases=[Phase.explicit, Phase.generate]))
    assert failure is not None, f"{name} survived the stateful machine"
    assert str(failure).split(":")[0] == PINNED[name]["result"]


def test_flink_as_shipped_differs_exactly_where_the_facts_say():
    """No zombie check and no barrier dropping (recovery facts §1); the checkpoint after the restart still
    completes (a newer barrier subsumes the old one), and everything else holds."""
    pinned = manifest.entry(DESIGN, model="flink-shipped", check="suite")
    with manifest.measured(pinned):
        rows = verify_approximate_recovery(variant=pinned["model"], **pinned["config"])
    manifest.pin(pinned, result=sorted({r["name"] for r in rows if r["violations"]}))
    assert all(r["violations"] == 0 for r in rows if r["name"] == "checkpoint_after_restart_completes")

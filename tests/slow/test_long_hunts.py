"""The quality checks whose cases take more than a few seconds each (tests/quality keeps the
rest, which `make check` runs): these explorations, the correct protocol on every protocol
variant's configuration, and the stateful machine's hunt for every barrier variant run in
`make test` only."""

import pytest

from machine_checks import machine_failure
from flipcheck.generators.barriers import QUICK, barrier_machine
from flipcheck.properties.barriers_properties import PROPERTY_NAMES
from flipcheck.reference_impl.barriers import VARIANTS
from test_barrier_variants_caught import machine_modes
from test_protocol_variants_caught import (
    CASES, LONG_CASES, assert_correct_protocol_passes_the_same_configuration, assert_variant_caught_with_a_replaying_trace,
)


@pytest.mark.parametrize("variant", sorted(LONG_CASES))
def test_variant_caught_with_a_replaying_trace(variant):
    assert_variant_caught_with_a_replaying_trace(variant)


@pytest.mark.parametrize("variant", sorted(CASES))
def test_correct_protocol_passes_the_same_configuration(variant):
    assert_correct_protocol_passes_the_same_configuration(variant)


@pytest.mark.parametrize("name,mode", [(n, m) for n in VARIANTS for m in machine_modes(n)])
def test_stateful_machine_catches_barrier_variant(name, mode):
    """The stateful machine of that mode, checking the properties only, fails on the variant."""
    failure = machine_failure(lambda: barrier_machine(mode, name, refinement=False), QUICK)
    assert failure is not None, f"{name} ({mode}) survived the stateful machine"
    assert str(failure).split(":")[0] in PROPERTY_NAMES

"""The quality checks whose cases take more than a few seconds each (tests/quality keeps the
rest, which `make check` runs): these hunts and explorations run in `make test` only."""

import pytest

from test_mutants_caught import LONG_HUNTS, assert_caught_within_the_ci_budget
from test_protocol_variants_caught import (
    LONG_CASES, assert_correct_protocol_passes_the_same_configuration, assert_variant_caught_with_a_replaying_trace,
)


@pytest.mark.parametrize("mutant_id", sorted(LONG_HUNTS))
def test_mutant_is_caught(mutant_id):
    assert_caught_within_the_ci_budget(mutant_id)


@pytest.mark.parametrize("variant", sorted(LONG_CASES))
def test_variant_caught_with_a_replaying_trace(variant):
    assert_variant_caught_with_a_replaying_trace(variant)


@pytest.mark.parametrize("variant", sorted(LONG_CASES))
def test_correct_protocol_passes_the_same_configuration(variant):
    assert_correct_protocol_passes_the_same_configuration(variant)

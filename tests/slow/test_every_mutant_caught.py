"""Every mutant in the catalogue is caught within the CI budget (issue: kill rate 100%). Slow: it
hunts all of them, about two minutes of CPU; each design's own quality tests (tests/quality/),
which `make check` runs, catch each of its mutants too."""

import pytest

from flipcheck.designs.mutants import catalogue, hunt

# Per mutant. A hunt stops at its first violation, so the budget costs time only when a mutant
# survives; the slowest catch (protocol-no-end-of-data-ack: a 23-step unaligned trace, ~370k
# states) takes ~30 s on a loaded 2-core machine.
CI_BUDGET_SECONDS = 120


@pytest.mark.parametrize("mutant_id", sorted(catalogue()))
def test_mutant_is_caught(mutant_id):
    mutant = catalogue()[mutant_id]
    detection = hunt(mutant, CI_BUDGET_SECONDS)
    assert detection.caught, f"{mutant_id} ({mutant.flink_issue}) survived {CI_BUDGET_SECONDS} s"
    assert detection.property and detection.driver and detection.cases_to_detection >= 1

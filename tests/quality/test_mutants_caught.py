"""Every mutant in the catalogue is caught within the CI budget (issue: kill rate 100%)."""

import pytest

from flipcheck.mutants import catalogue, hunt

# Per mutant. A hunt stops at its first violation, so the budget costs time only when a mutant
# survives; the slowest catch (protocol-no-end-of-data-ack: a 23-step unaligned trace, ~370k
# states) takes ~30 s on a loaded 2-core machine.
CI_BUDGET_SECONDS = 120
# The hunts that take more than a few seconds: tests/slow/test_long_hunts.py runs them, so
# `make check` stays quick and `make test` still hunts every mutant.
LONG_HUNTS = {"flink-before-22863", "protocol-no-end-of-data-ack", "protocol-new-transaction-after-finish"}


def assert_caught_within_the_ci_budget(mutant_id: str) -> None:
    mutant = catalogue()[mutant_id]
    detection = hunt(mutant, CI_BUDGET_SECONDS)
    assert detection.caught, f"{mutant_id} ({mutant.flink_issue}) survived {CI_BUDGET_SECONDS} s"
    assert detection.property and detection.driver and detection.cases_to_detection >= 1


@pytest.mark.parametrize("mutant_id", sorted(set(catalogue()) - LONG_HUNTS))
def test_mutant_is_caught(mutant_id):
    assert_caught_within_the_ci_budget(mutant_id)


def test_catalogue_entries_are_documented():
    for mutant in catalogue().values():
        assert mutant.description, mutant.id
        assert mutant.flink_issue is None or mutant.flink_issue.startswith("FLINK-"), mutant.id


def test_gallery_writes_a_page_and_a_picture_per_caught_mutant(tmp_path):
    from flipcheck.mutants import write_gallery

    chosen = [catalogue()[m] for m in ("wiki-b", "eop-not-aligned", "protocol-pre-flip-147", "seed-finished-by-partitions")]
    page = write_gallery([(m, hunt(m, 10)) for m in chosen], str(tmp_path))
    text = open(page).read()
    for mutant in chosen:
        assert f"## `{mutant.id}`" in text
        assert (tmp_path / "img" / f"mutant-{mutant.id}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_plan_counterexamples_are_shrunk():
    detection = hunt(catalogue()["flink-before-40482"], 10)
    assert detection.counterexample_size <= 3


def test_gallery_states_a_wiring_counterexample_in_words(tmp_path):
    # FLINK-22863's counterexample is a POINTWISE (upstream, downstream) parallelism pair, not a
    # job graph: the gallery says it in a sentence instead of handing it to the plan renderer.
    from flipcheck.mutants import Detection, write_gallery

    mutant = catalogue()["flink-before-22863"]
    pair = (2366, 7097)  # the shape the float wiring gets wrong (docs/prove.md)
    detection = Detection(True, "pointwise_wiring", "sweep", 1, 0.0, sum(pair), pair)
    text = open(write_gallery([(mutant, detection)], str(tmp_path))).read()
    assert f"POINTWISE edge {pair[0]} → {pair[1]}" in text
    assert not (tmp_path / "img" / f"mutant-{mutant.id}.svg").exists()

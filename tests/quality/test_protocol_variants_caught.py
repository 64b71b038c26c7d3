"""Every named whole-job protocol variant is caught by the explorer with a trace that replays
on the model, and the correct protocol explores the same configurations without a violation
(that check, and the longest case, run in tests/slow/test_long_hunts.py)."""

from typing import Callable, NamedTuple

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.barriers import ALIGNED, UNALIGNED
from flipcheck.model.protocol import initial_state, is_end, successors
from flipcheck.properties.protocol_explore import explore_job, replay
from flipcheck.properties.protocol_properties import NO_DEADLOCK, STATE_PROPERTIES, check_state, check_step
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOL_VARIANTS, make_job


class Case(NamedTuple):
    graph: Callable
    records: int
    expected: str            # the property expected to catch the variant
    mode: str = ALIGNED
    max_states: int = 60_000  # enough for a breadth-first search to reach the shortest trace
    options: tuple = ()      # further Job options, as (name, value) pairs


CASES = {
    "cancel-pending-on-finish": Case(lambda: example_graph("pair"), 1, "final_checkpoint_before_finish"),
    "pre-flip-147": Case(lambda: example_graph("pair"), 1, "final_checkpoint_before_finish"),
    "trigger-sources-only": Case(lambda: example_graph("twin"), 0, NO_DEADLOCK),
    "trigger-finished-task-hangs": Case(lambda: example_graph("twin"), 0, NO_DEADLOCK),
    "wiki-b-trigger": Case(lambda: example_graph("twin"), 1, "consistent_cut"),
    "union-state-partial-finish": Case(lambda: example_graph("union"), 0, "union_list_state_complete"),
    # Only unaligned barriers overtake EndOfData (J5u); aligned ones make the final checkpoint
    # imply the acknowledgement. Two independent pairs: the second keeps the coordinator
    # triggering after the first upstream finished, so its downstream is triggered by RPC.
    "no-end-of-data-ack": Case(lambda: example_graph("union"), 1, "consistent_cut", UNALIGNED, 400_000),
    "end-of-data-view-kept-on-failover": Case(lambda: example_graph("pair"), 0, "end_of_data_trigger_current",
                                              options=(("failures", 1),)),
    "released-channel-stays-queued": Case(lambda: example_graph("pair"), 0, NO_DEADLOCK),
    "stop-without-drain-after-end-of-data": Case(lambda: example_graph("pair"), 0, NO_DEADLOCK,
                                                 options=(("stop_with_savepoint", True),)),
    # A checkpoint must reach a sink after its final one: two sink subtasks (one cannot, FLINK-23473).
    "new-transaction-after-finish": Case(lambda: example_graph("parallel"), 0, "no_dangling_transaction",
                                         max_states=100_000),
    "prepare-commit-twice-at-end": Case(lambda: example_graph("pair-v2"), 0, "one_committable_summary_per_checkpoint"),
    # the restore bugs need a failover after the final checkpoint
    "end-input-again-after-restore": Case(lambda: example_graph("pair-v2"), 0, "one_committable_summary_per_checkpoint",
                                          options=(("failures", 1),)),
    "end-of-input-sentinel-id": Case(lambda: example_graph("pair-v2"), 1, "exactly_once", options=(("failures", 1),)),
}
STATE_PROPERTY_NAMES = {p.name for p in STATE_PROPERTIES}
# The cases whose exploration takes more than a few seconds: tests/slow/test_long_hunts.py runs
# them (and the correct protocol on every case's configuration), so `make check` stays quick and
# `make test` still checks every case.
LONG_CASES = {"no-end-of-data-ack"}
QUICK_CASES = sorted(set(CASES) - LONG_CASES)


def _job(variant: str, case: Case):
    return make_job(case.graph(), variant, mode=case.mode, records=case.records, **dict(case.options))


def test_every_variant_has_a_case():
    assert set(CASES) == set(PROTOCOL_VARIANTS)


def assert_variant_caught_with_a_replaying_trace(variant: str) -> None:
    case = CASES[variant]
    expected = case.expected
    job = _job(variant, case)
    result = explore_job(job, stop_at_first=True, liveness=False, max_states=case.max_states)
    found = {c.property: c for c in result.counterexamples}
    assert expected in found, result.violated()
    steps = replay(job, found[expected].labels)
    assert steps, "a violation needs at least one step"
    last = steps[-1]
    before = steps[-2].state if len(steps) > 1 else None
    if expected == NO_DEADLOCK:
        assert not is_end(job, last.state)
        assert list(successors(job, last.state)) == []
    elif expected in STATE_PROPERTY_NAMES:  # judged when the job ends, on the replayed end state
        assert is_end(job, last.state)
        assert expected in {p.property for p in check_state(job, last.state)}
    else:
        before = before if before is not None else initial_state(job)
        problems = check_step(job, before, last.label, last.notes, last.state)
        assert expected in {p.property for p in problems}


@pytest.mark.parametrize("variant", QUICK_CASES)
def test_variant_caught_with_a_replaying_trace(variant):
    assert_variant_caught_with_a_replaying_trace(variant)


def assert_correct_protocol_passes_the_same_configuration(variant: str) -> None:
    case = CASES[variant]
    # As far as the variant's search may go, so the correct protocol passes where the variant failed.
    result = explore_job(_job(CORRECT_PROTOCOL, case), max_states=case.max_states)
    assert result.counterexamples == []
    if case.records == 0 or variant in ("cancel-pending-on-finish", "pre-flip-147"):
        assert result.complete

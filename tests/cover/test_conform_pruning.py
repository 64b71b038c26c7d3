"""The search's pruning (properties/protocol_trace_validation.py, ``_Search.hopeless`` and the
nodes ``expand`` found hopeless; docs/conformance.md "Cost") changes how many states are
searched, never what is found: the same verdict, explained prefix, first unexplained line, why
and behaviour as the search that tries every node (``prune=False``). It is what lets the search
decide a run whose frontier carries many nodes that cannot show the next line: the fresh-clone
run ``diamond-unaligned-source-closed-before-trigger`` ran out of 2,000,000 states without it.
The comparison on every stored run is in tests/slow/test_conform_lazy_stop_every_run.py."""

import pytest

from flipcheck.flink.conform import conform_files
from flipcheck.flink.suite import ALTERATIONS, alter_run
from flipcheck.properties.protocol_trace_validation import validate

from conform_runs import RUNS, searches_of
from test_conform_lazy_stop import finding

__all__ = []


def _pruned_and_not(folder):
    (search,) = searches_of(folder)
    job, observations, options = search
    return validate(job, observations, **options), validate(job, observations, **options, prune=False)


# Runs where the pruning drops many nodes: a task that must wait for a notification to close
# (chain-flip147-off, 3,082 states without it), an acknowledgement of an aborted checkpoint
# (chain-coordinator-snapshot-throw), a failover (chain-failover-cut-snapshot).
@pytest.mark.parametrize("name", ["chain-flip147-off", "chain-coordinator-snapshot-throw", "chain-failover-cut-snapshot"])
def test_pruning_finds_what_the_search_of_every_node_finds(name):
    pruned, every_node = _pruned_and_not(RUNS / name)
    assert pruned.conforms and finding(pruned) == finding(every_node)
    assert pruned.states < every_node.states


# The alterations of the log's protocol lines (committed-twice alters the output only).
@pytest.mark.parametrize("alteration", sorted(set(ALTERATIONS) - {"committed-twice"}))
def test_an_altered_log_is_rejected_at_the_same_line_pruned_or_not(tmp_path, alteration):
    alter_run(RUNS / "chain-flip147-off", alteration, tmp_path / "run")
    pruned, every_node = _pruned_and_not(tmp_path / "run")
    assert not pruned.conforms
    assert finding(pruned) == finding(every_node) and pruned.states <= every_node.states


SOURCE_CLOSED = RUNS / "diamond-unaligned-source-closed-before-trigger"


def test_a_source_closed_before_the_trigger_conforms_within_a_small_budget():
    """``src[1]`` closed (line 746) before checkpoint 6's RPC reached it (761) and declined 6;
    ``left[1]`` took ``src[1]``'s EndOfData before its barrier of checkpoint 5 (the source's end
    of input line, 695, only bounds it), so 5 is its final checkpoint and it closes (788) with no
    barrier of 6. The frontier also holds the other order, where ``left[1]`` can never close."""
    result = conform_files(str(SOURCE_CLOSED / "plan.json"), [str(SOURCE_CLOSED / "flink.log")], budget=60_000)
    assert result.conforms, result.first_unexplained
    assert all(check.ok for check in result.checks)


def test_without_pruning_the_same_budget_leaves_that_run_undecided():
    (search,) = searches_of(SOURCE_CLOSED)
    job, observations, options = search
    every_node = validate(job, observations, **{**options, "budget": 60_000}, prune=False)
    assert not every_node.conforms and every_node.exhausted_budget
    assert "the budget" in every_node.why

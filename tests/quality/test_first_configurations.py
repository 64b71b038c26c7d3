"""The pytest plugin's default search can show each kind of change (issue 24, item 3).

A test that leaves the configuration to the plugin (``flipcheck_checker.explore(protocol=...)``,
no graph: flipcheck's first configuration set) fails for every catalogued protocol mutant,
within the ci profile's state bound, with a counterexample and a replay command on the graph it
saved. The mutants caught in a few thousand states run here, one per kind of change;
tests/slow/test_first_configurations_slow.py runs the others, and FLIP-147 as Flink ships it on
the whole set.
"""

import shlex

import pytest

import flipcheck
from flipcheck.cli import main
from flipcheck.designs.mutants import catalogue
from flipcheck.generators.protocol import example_graph
from flipcheck.pytest_plugin import PROFILES, Checker

PROTOCOL_MUTANTS = sorted(m.variant for m in catalogue().values() if m.suite == "protocol")
# One mutant per kind of change, each caught by the first set in under 6,000 states.
QUICK = (
    "cancel-pending-on-finish",              # when a task may finish (J7)
    "trigger-finished-task-hangs",           # a trigger reaching a finished task (C4)
    "end-of-data-view-kept-on-failover",     # a failover (F1)
    "stop-without-drain-after-end-of-data",  # a stop-with-savepoint (J9)
    "prepare-commit-twice-at-end",           # a Sink V2 sink (S2)
)
SLOW = tuple(m for m in PROTOCOL_MUTANTS if m not in QUICK)


def assert_the_default_search_fails(protocol, folder) -> str:
    """The plugin's ``explore`` with no graph, as a test of the user's calls it under the ci
    profile, fails with a counterexample, found in one configuration, whose graph it saved for the
    replay command; returns its report."""
    checker = Checker(PROFILES["ci"], "first-set", folder)
    with pytest.raises(pytest.fail.Exception) as failed:
        checker.explore(protocol=protocol)
    report = str(failed.value)
    assert " violated" in report and "shortest counterexample (" in report, report
    caught = [line for line in report.splitlines() if line.startswith("  searched: ") and ", violated: " in line]
    assert len(caught) == 1, report    # the search ends at the first configuration that shows it
    graph = caught[0].removeprefix("  searched: ").split(" graph, ", 1)[0]
    assert flipcheck.load_job_graph(folder / "first-set.json") == example_graph(graph)
    replay = (folder / "first-set.replay").read_text().strip()
    assert replay.startswith(f"flipcheck explore {folder / 'first-set.json'} --variant ")
    return report


def test_every_catalogued_protocol_mutant_is_checked_here_or_in_the_slow_tests():
    assert len(PROTOCOL_MUTANTS) >= 14 and set(QUICK) < set(PROTOCOL_MUTANTS)


@pytest.mark.parametrize("mutant", QUICK)
def test_the_default_search_catches_the_mutant(mutant, tmp_path):
    assert_the_default_search_fails(mutant, tmp_path)


class NoWaitForPending(flipcheck.Protocol):
    """The exit-rule change of issue 24: a finishing task cancels its pending checkpoints."""

    wait_for_pending_checkpoints = False


def test_the_exit_rule_change_fails_the_default_search_on_two_sources(tmp_path):
    report = assert_the_default_search_fails(NoWaitForPending, tmp_path)
    assert "no_pending_checkpoint_cancelled violated" in report
    assert "searched: twin graph, aligned, records 0, checkpoints 1, failures 0: " in report
    replay = (tmp_path / "first-set.replay").read_text()
    assert main(shlex.split(replay)[1:]) == 1   # the configuration and the graph it saved show it again


def test_the_exit_rule_change_fails_on_the_tutorials_pipeline_searched_in_both_modes():
    # Aligned alone it is vacuous (tests/cover/test_protocol_coverage.py); the mode left out
    # adds the unaligned search, where barriers overtake EndOfData and the change shows.
    pipeline = flipcheck.job_graph([("src", 1), ("map", 1), ("sink", 1)],
                                   [("src", "map", "pointwise"), ("map", "sink", "pointwise")])
    result = flipcheck.explore(pipeline, NoWaitForPending, checkpoints=2)
    assert result.counterexample.property == "no_pending_checkpoint_cancelled"
    aligned, unaligned = result.detail["configurations"]
    assert (aligned["mode"], aligned["complete"], aligned["violated"]) == ("aligned", True, [])
    assert (unaligned["mode"], unaligned["violated"][:1]) == ("unaligned", ["no_pending_checkpoint_cancelled"])
    assert "replay: flipcheck explore GRAPH.json --variant " in str(result.counterexample)
    assert "--mode unaligned --records 1 --checkpoints 2 --failures 0" in result.counterexample.replay

"""Per-rule coverage and vacuity (issue 24, finding 2): which rules an exploration fired, and
whether a variant's change made any difference in the states searched."""

import json

import pytest

import flipcheck
from flipcheck.cli import main
from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import NOT_EXPLORED, RULES, Job, Protocol
from flipcheck.properties.protocol_coverage import SWITCH_EXAMPLES, SWITCHES, vacuity_messages
from flipcheck.properties.protocol_explore import explore_job


class NoWaitForPending(Protocol):
    """The real exit bug: finishing does not wait for pending checkpoints."""

    name = "no-wait-for-pending"
    wait_for_pending_checkpoints = False


def _chain3():
    return flipcheck.job_graph([("src", 1), ("map", 1), ("sink", 1)],
                               [("src", "map", "all-to-all"), ("map", "sink", "all-to-all")])


def test_every_rule_is_counted_and_only_rules_of_the_model():
    result = explore_job(Job(example_graph("pair-v2"), records=1, failures=1), coverage=True)
    rules = result.coverage.rules
    assert set(rules) == set(RULES)
    for rule in ("J1", "J3", "J4", "J5", "J6", "J7", "S1", "S2", "S3", "S4", "C1", "C2", "C4", "C5", "F1"):
        assert rules[rule] > 0, rule
    assert rules["J5u"] == rules["C7"] == rules["J9"] == 0      # aligned, no stop-with-savepoint
    assert result.coverage.states == result.graph.expanded and result.coverage.overrides == {}


def test_coverage_changes_no_count_and_no_verdict():
    job = Job(example_graph("pair"), records=1, failures=1)
    plain, covered = explore_job(job, reduction="all"), explore_job(job, reduction="all", coverage=True)
    assert (plain.states, plain.transitions, plain.violated()) == (covered.states, covered.transitions,
                                                                   covered.violated())


def test_explore_json_carries_the_coverage_contract(capsys, tmp_path):
    code = main(["explore", "examples/graphs/protocol-pair.json", "--json", "--failures", "1"])
    coverage = json.loads(capsys.readouterr().out)["coverage"]
    assert code == 0 and list(coverage["rules"]) == list(RULES) and coverage["overrides"] == {}
    assert coverage["rules"]["F1"] > 0 and coverage["rules"]["J7"] > 0
    variant = tmp_path / "mine.py"
    variant.write_text("import flipcheck\nclass NoWait(flipcheck.Protocol):\n    wait_for_pending_checkpoints = False\n")
    code = main(["explore", "examples/graphs/protocol-pair.json", "--json", "--variant", f"{variant}:NoWait"])
    assert json.loads(capsys.readouterr().out)["coverage"]["overrides"] == {
        "wait_for_pending_checkpoints": {"changed_successors": 0}}


def test_a_vacuous_change_is_reported_with_a_configuration_where_it_matters():
    # The tutorial's 3-vertex aligned pipeline at 2 checkpoints: 2,915 states, the switch never read
    # in a way that changes a step.
    result = flipcheck.explore(_chain3(), NoWaitForPending, checkpoints=2)
    assert result.ok and result.counts["states"] == 2915
    assert result.detail["coverage"]["overrides"] == {"wait_for_pending_checkpoints": {"changed_successors": 0}}
    assert len(result.warnings) == 1 and "your change to wait_for_pending_checkpoints made no difference in the " \
        "2,915 states searched; try: pair, unaligned, records 0" in result.warnings[0]
    assert result.warnings[0] in result.report()
    graph, mode, records, checkpoints, failures, stop = SWITCH_EXAMPLES["wait_for_pending_checkpoints"]
    there = flipcheck.explore(example_graph(graph), NoWaitForPending, mode=mode, records=records,
                              checkpoints=checkpoints, failures=failures, stop_with_savepoint=stop,
                              stop_at_first=False)
    assert there.detail["coverage"]["overrides"]["wait_for_pending_checkpoints"]["changed_successors"] > 0
    assert there.warnings == ()


def test_the_text_output_names_rules_and_vacuous_changes(capsys, tmp_path):
    variant = tmp_path / "mine.py"
    variant.write_text("import flipcheck\nclass NoWait(flipcheck.Protocol):\n    wait_for_pending_checkpoints = False\n")
    main(["explore", "examples/graphs/protocol-pair.json", "--variant", f"{variant}:NoWait"])
    out = capsys.readouterr().out
    assert "rules fired: J1 " in out and "never: J5u" in out
    assert "your change to wait_for_pending_checkpoints made no difference" in out


@pytest.mark.parametrize("switch", [s for s in SWITCHES if s != "plan"])
def test_the_table_names_a_configuration_where_flipping_each_switch_matters(switch):
    graph, mode, records, checkpoints, failures, stop = SWITCH_EXAMPLES[switch]
    flipped = type("Flipped", (Protocol,), {switch: not getattr(Protocol, switch)})
    job = Job(example_graph(graph), mode=mode, records=records, checkpoints=checkpoints, failures=failures,
              stop_with_savepoint=stop, protocol=flipped())
    result = explore_job(job, liveness=False, coverage=True)
    assert result.coverage.overrides[switch] > 0 and vacuity_messages(result.coverage) == []


def test_rules_that_no_exploration_takes_are_named_with_the_reason():
    assert set(NOT_EXPLORED) <= set(RULES) and all("trace validation" in why for why in NOT_EXPLORED.values())

"""Per-rule coverage and vacuity (issue 24, finding 2): which rules an exploration fired, and
whether a variant's change made any difference in the states searched."""

import inspect
import json
import re

import pytest

import flipcheck
from flipcheck.cli import main
from compiled_build import patches_compiled
from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import EOI, NOT_EXPLORED, RULES, Job, Protocol
from flipcheck.model.protocol.switches import RULE_METHODS
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
    # in a way that changes a step (left to explore, the mode is both: unaligned shows the change).
    result = flipcheck.explore(_chain3(), NoWaitForPending, mode="aligned", checkpoints=2)
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


BOOLEANS = [s for s in SWITCHES if s not in RULE_METHODS]
# Enough for a change to show on every example; a flipped union-list-state check would
# otherwise search 74,050 states (over a minute).
EXAMPLE_STATES = 3_000


@pytest.mark.parametrize("switch", BOOLEANS)
def test_the_table_names_a_configuration_where_flipping_each_switch_matters(switch):
    graph, mode, records, checkpoints, failures, stop = SWITCH_EXAMPLES[switch]
    flipped = type("Flipped", (Protocol,), {switch: not getattr(Protocol, switch)})
    job = Job(example_graph(graph), mode=mode, records=records, checkpoints=checkpoints, failures=failures,
              stop_with_savepoint=stop, protocol=flipped())
    result = explore_job(job, liveness=False, coverage=True, max_states=EXAMPLE_STATES)
    assert result.coverage.overrides[switch] > 0 and vacuity_messages(result.coverage) == []


# A changed body for each rule method: what a user's override might do.
CHANGED_RULES = {
    "may_finish": lambda self, job, state, t: set(self.finish_waits_for(job, state, t)) <= {"pending checkpoints"},
    "finish_waits_for": lambda self, job, state, t: tuple(
        w for w in Protocol.finish_waits_for(self, job, state, t) if w != "end-of-data acks"),
    "on_finished_report": lambda self, job, coordinator, t: coordinator._replace(learned=True),
    "finished_task_declines_trigger": lambda self, job, state, t, k: False,
    "finalize_problem": lambda self, job, pending: None,
    "end_of_data_view_after_failover": lambda self, job, coordinator: coordinator.known_end_of_data,
    "end_of_input_checkpoint_id": lambda self, job, task: EOI,
}


def _booleans_read(method: str) -> set:
    """The booleans a rule method's default body reads, through the rule methods it calls."""
    names = set(re.findall(r"self\.(\w+)", inspect.getsource(getattr(Protocol, method))))
    return (names & set(BOOLEANS)).union(*(_booleans_read(m) for m in names & set(RULE_METHODS) - {method}))


def _explore_example(switch: str, protocol: type):
    graph, mode, records, checkpoints, failures, stop = SWITCH_EXAMPLES[switch]
    job = Job(example_graph(graph), mode=mode, records=records, checkpoints=checkpoints, failures=failures,
              stop_with_savepoint=stop, protocol=protocol())
    return explore_job(job, liveness=False, coverage=True, max_states=EXAMPLE_STATES)


def test_every_rule_method_has_a_changed_body_here():
    assert set(CHANGED_RULES) == set(RULE_METHODS) - {"plan"}
    assert _booleans_read("may_finish") == {"wait_for_end_of_data_acks", "wait_for_final_checkpoint",
                                            "wait_for_pending_checkpoints"}


@pytest.mark.parametrize("method", sorted(CHANGED_RULES))
def test_the_table_names_a_configuration_where_a_changed_rule_method_matters(method):
    changed = type("Changed", (Protocol,), {method: CHANGED_RULES[method]})
    result = _explore_example(method, changed)
    assert result.coverage.overrides == {method: result.coverage.overrides[method]}
    assert result.coverage.overrides[method] > 0 and vacuity_messages(result.coverage) == []
    for switch in _booleans_read(method):   # every branch of the default rule runs there
        flipped = type("Flipped", (Protocol,), {switch: not getattr(Protocol, switch)})
        assert _explore_example(method, flipped).coverage.overrides[switch] > 0, switch


def test_rules_that_no_exploration_takes_are_named_with_the_reason():
    assert set(NOT_EXPLORED) <= set(RULES) and all("trace validation" in why for why in NOT_EXPLORED.values())


# -- finding 8: every rule exercised by verify's configuration set ---------------------------------

import importlib  # noqa: E402

import manifest  # noqa: E402

from flipcheck.designs import protocol as protocol_design, verify_design  # noqa: E402
from flipcheck.properties.protocol_coverage import Coverage, unfired_rules  # noqa: E402

failover_rules = importlib.import_module("flipcheck.model.protocol.failover")


def _fires_every_rule(configs, **options) -> list:
    """Explore ``configs`` in order until every rule an exploration can take fired: the rules
    still unfired after all of them (empty: covered)."""
    coverage = Coverage()
    for config in configs:
        coverage.add(explore_job(config.job(), coverage=True, **options).coverage)
        if not unfired_rules(coverage):
            break
    return unfired_rules(coverage)


def test_verify_configurations_fire_every_rule_of_the_model():
    assert _fires_every_rule(protocol_design.EXPLORATION_CONFIGS, max_states=100_000) == []


def test_the_exhaustive_sweep_fires_every_rule_of_the_model():
    size = lambda c: (len(c.job().tasks), c.records + c.checkpoints + c.failures)  # noqa: E731
    configs = sorted(protocol_design.EXHAUSTIVE_CONFIGS, key=size)
    assert _fires_every_rule(configs, reduction=protocol_design.EXHAUSTIVE_REDUCTION) == []


def test_the_sweeps_sink_v2_configurations_are_pinned():
    pinned = {tuple(e["config"][k] for k in ("graph", "mode", "records", "checkpoints", "failures",
                                              "stop_with_savepoint")) for e in manifest.entries("protocol")}
    sink_v2 = [tuple(c) for c in protocol_design.EXHAUSTIVE_CONFIGS if c.graph == "pair-v2"]
    assert sink_v2 and all(c[4] == 1 for c in sink_v2) and set(sink_v2) <= pinned


def test_verify_reports_its_rule_coverage():
    report = verify_design("protocol", 1.0)
    coverage = report["coverage"]
    assert coverage["configurations"] >= 1 and coverage["of"] == len(protocol_design.EXPLORATION_CONFIGS)
    assert coverage["rules"]["S4"] > 0 and set(coverage["not_explored"]) == set(NOT_EXPLORED)
    assert verify_design("plan", 0.3)["coverage"] is None  # no rule mapping there (not faked)


# Compiled by mypyc, failover calls commit() directly: the patch below would never reach it.
@patches_compiled("flipcheck.model.protocol.failover", "commit()")
def test_a_one_line_sink_v2_restore_bug_is_caught_by_verify(monkeypatch):
    real_commit = failover_rules.commit

    def restore_forgets_sink_v2_committables(n, t, transactions, recovered=False):
        # the bug: S4's commit of the restored committables is dropped
        if not n.job.tasks[t].sink_v2:
            real_commit(n, t, transactions, recovered)

    monkeypatch.setattr(failover_rules, "commit", restore_forgets_sink_v2_committables)
    before = [c for c in protocol_design.EXPLORATION_CONFIGS if c.graph != "pair-v2"][:3]
    assert all(not explore_job(c.job()).counterexamples for c in before)   # what verify ran before
    rows = verify_design("protocol", 1.0)["properties"]
    assert [r["violations"] for r in rows if r["driver"] == "exploration" and r["name"] == "exactly_once"] == [1]
    sink_v2 = [c for c in protocol_design.EXHAUSTIVE_CONFIGS if c.graph == "pair-v2"][0]
    assert "exactly_once" in {v.property for v in protocol_design.explore_case(sink_v2)[0]}


def _unfired_actions(configs, explore, rules) -> list:
    """The rules (one per action) still unfired after exploring ``configs`` as verify does."""
    from collections import Counter

    fired = Counter()
    for config in configs:
        explore(config, refinement=True, stop_at_first=False, coverage=fired)
        if all(fired[rule] for rule in rules):
            break
    return [rule for rule in rules if not fired[rule]]


def test_split_assignment_verify_configurations_fire_every_rule():
    from flipcheck.designs import split_assignment
    from flipcheck.model.split_assignment import RULES as SPLIT_RULES
    from flipcheck.properties.split_assignment_explore import explore_job as explore_split

    assert _unfired_actions(split_assignment.EXPLORATION_CONFIGS, explore_split, SPLIT_RULES) == []
    assert verify_design("split-assignment", 0.5)["coverage"]["rules"]["A1"] > 0


def test_batch_recovery_verify_configurations_fire_every_rule():
    from flipcheck.designs import batch_recovery
    from flipcheck.model.batch_recovery import RULES as BATCH_RULES
    from flipcheck.properties.batch_recovery_explore import explore_job as explore_batch

    assert _unfired_actions(batch_recovery.EXPLORATION_CONFIGS, explore_batch, BATCH_RULES) == []


# -- the override comparison runs only where the override was read -----------------------------

from flipcheck.model.protocol import initial_state  # noqa: E402
from flipcheck.properties.protocol_coverage import covering  # noqa: E402
from flipcheck.reference_impl.protocol_variants import protocol_class  # noqa: E402


def _coverage_of_first_states(job: Job, compare_every_state: bool, bound: int = EXAMPLE_STATES) -> Coverage:
    """Coverage of the first ``bound`` states breadth-first, the explorer's way of calling
    ``covering``'s successors (every successor of a state taken before the next state)."""
    coverage = Coverage()
    step = covering(job, coverage, compare_every_state)
    first = initial_state(job)
    seen, frontier = {first}, [first]
    while frontier and len(seen) < bound:
        state = frontier.pop(0)
        for _, nxt, _ in step(state):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return coverage


OVERRIDING = ([(switch, type("Flipped", (Protocol,), {switch: not getattr(Protocol, switch)})) for switch in BOOLEANS]
              + [(method, type("Changed", (Protocol,), {method: CHANGED_RULES[method]})) for method in sorted(CHANGED_RULES)]
              + [("plan", protocol_class(name)) for name in ("trigger-sources-only", "wiki-b-trigger")])


@pytest.mark.parametrize("switch,protocol", OVERRIDING, ids=[f"{s}-{p.__name__}" for s, p in OVERRIDING])
def test_comparing_only_where_the_override_was_read_counts_the_same(switch, protocol):
    """A switch no rule read while a state's successors were computed cannot have changed them:
    the counts equal those of comparing in every state, on the configuration where the switch
    matters (for plan, the twin graph the trigger variants need)."""
    graph, mode, records, checkpoints, failures, stop = SWITCH_EXAMPLES.get(switch, ("twin", "aligned", 1, 1, 0, False))
    job = Job(example_graph(graph), mode=mode, records=records, checkpoints=checkpoints, failures=failures,
              stop_with_savepoint=stop, protocol=protocol())
    bound = EXAMPLE_STATES if switch in SWITCH_EXAMPLES else 5 * EXAMPLE_STATES   # a plan differs once a task finished
    watched, every = (_coverage_of_first_states(job, compare, bound) for compare in (False, True))
    assert watched.overrides == every.overrides and watched.rules == every.rules
    assert every.overrides[switch] > 0

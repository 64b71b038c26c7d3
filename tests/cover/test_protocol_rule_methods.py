"""The rules a Flink change touches, written as code (issue 24, item 4).

Each rule method of ``flipcheck.Protocol`` is the model's rule: overriding it changes exactly
what flipping the boolean its body reads changes, a change written as code is caught like the
named bug it re-creates, and an override that changes nothing is reported vacuous."""

import pytest

import flipcheck
from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import EOI, Job, Protocol
from flipcheck.model.protocol.switches import RULE_METHODS
from flipcheck.properties.protocol_coverage import SWITCH_EXAMPLES
from flipcheck.properties.protocol_explore import explore_job
from flipcheck.reference_impl.protocol_variants import PROTOCOL_VARIANTS


class ExitBeforePendingCheckpoints(flipcheck.Protocol):
    """The exit rule (J7) changed in code: a finishing task exits once nothing but checkpoints
    still pending on it holds it (``StreamTask#afterInvoke`` without ``waitForPendingCheckpoints``)."""

    name = "exit-before-pending-checkpoints"

    def may_finish(self, job, state, t):
        return set(self.finish_waits_for(job, state, t)) <= {"pending checkpoints"}


class NoWaitForPending(flipcheck.Protocol):
    """The same bug as a boolean (the issue's "real exit bug")."""

    name = "no-wait-for-pending"
    wait_for_pending_checkpoints = False


class ExitRuleRefactored(flipcheck.Protocol):
    """J7 written another way, the same rule: a refactoring that changes no step."""

    def may_finish(self, job, state, t):
        return len(self.finish_waits_for(job, state, t)) == 0


def _pipeline():
    return flipcheck.job_graph([("src", 1), ("map", 1), ("sink", 1)],
                               [("src", "map", "pointwise"), ("map", "sink", "pointwise")])


def test_the_exit_rule_written_as_code_is_caught_with_the_same_violation_as_the_boolean_bug():
    # the smallest configuration where the boolean changes a step (SWITCH_EXAMPLES)
    graph, mode, records, checkpoints, failures, _ = SWITCH_EXAMPLES["wait_for_pending_checkpoints"]
    options = dict(mode=mode, records=records, checkpoints=checkpoints, failures=failures, stop_at_first=False)
    code = flipcheck.explore(example_graph(graph), ExitBeforePendingCheckpoints, **options)
    boolean = flipcheck.explore(example_graph(graph), NoWaitForPending, **options)
    assert not code.ok and code.violations == boolean.violations
    assert code.counterexample.property == "no_pending_checkpoint_cancelled"
    assert code.counterexample.steps == boolean.counterexample.steps
    assert code.counterexample.steps[-1] == "src[0] finishes"
    assert code.detail["coverage"]["overrides"]["may_finish"]["changed_successors"] > 0
    assert boolean.detail["coverage"]["overrides"]["wait_for_pending_checkpoints"]["changed_successors"] > 0
    # the shipped protocol passes there: the override, not the configuration, breaks it
    assert flipcheck.explore(example_graph(graph), **{k: v for k, v in options.items() if k != "stop_at_first"}).ok


# For each rule method: a body that changes what a named variant's boolean(s) change, the
# variant, a configuration (graph, mode, records, checkpoints, failures, stop-with-savepoint)
# and the property that catches it there within 5,000 states (tests/quality/
# test_protocol_variants_caught.py). The union-list-state bug is 21,025 states deep: there the
# first 3,000 states are compared.
SAME_AS_A_NAMED_VARIANT = {
    "may_finish": (ExitBeforePendingCheckpoints.may_finish, None, ("pair", "unaligned", 0, 1, 0, False),
                   "no_pending_checkpoint_cancelled"),
    "finish_waits_for": (lambda self, job, state, t: tuple(
        w for w in Protocol.finish_waits_for(self, job, state, t) if w not in ("final checkpoint", "pending checkpoints")),
        "cancel-pending-on-finish", ("pair", "aligned", 1, 1, 0, False), "final_checkpoint_before_finish"),
    "finished_task_declines_trigger": (lambda self, job, state, t, k: False, "trigger-finished-task-hangs",
                                       ("twin", "aligned", 0, 1, 0, False), "no_deadlock"),
    "finalize_problem": (lambda self, job, pending: None, "union-state-partial-finish",
                         ("union", "aligned", 0, 1, 0, False), None),
    "end_of_data_view_after_failover": (lambda self, job, coordinator: coordinator.known_end_of_data,
                                        "end-of-data-view-kept-on-failover", ("pair", "aligned", 0, 1, 1, False),
                                        "end_of_data_trigger_current"),
    "end_of_input_checkpoint_id": (lambda self, job, task: EOI, "end-of-input-sentinel-id",
                                   ("pair-v2", "aligned", 1, 1, 1, False), "exactly_once"),
}


def _searched(protocol: Protocol, example: tuple, max_states: int):
    graph, mode, records, checkpoints, failures, stop = example
    job = Job(example_graph(graph), mode=mode, records=records, checkpoints=checkpoints, failures=failures,
              stop_with_savepoint=stop, protocol=protocol)
    result = explore_job(job, max_states=max_states, reduction="none", liveness=False)
    return result.states, result.transitions, [(c.property, c.labels) for c in result.counterexamples]


@pytest.mark.parametrize("method", sorted(SAME_AS_A_NAMED_VARIANT))
def test_a_method_override_searches_the_same_graph_as_the_boolean_it_replaces(method):
    body, variant, example, expected = SAME_AS_A_NAMED_VARIANT[method]
    by_code = type("ByCode", (Protocol,), {method: body})()
    by_boolean = PROTOCOL_VARIANTS[variant]() if variant else NoWaitForPending()
    bound = 5_000 if expected else 3_000
    states, transitions, found = _searched(by_code, example, bound)
    assert (states, transitions, found) == _searched(by_boolean, example, bound)
    assert expected in [name for name, _ in found] if expected else states == bound


def test_every_rule_method_but_plan_and_on_finished_report_has_a_boolean_twin_here():
    # on_finished_report has no boolean: no known bug changed it (its changed body is in
    # test_protocol_coverage.py); plan's are the plan algorithms.
    assert set(SAME_AS_A_NAMED_VARIANT) == set(RULE_METHODS) - {"plan", "on_finished_report"}


def test_a_method_override_that_changes_nothing_is_reported_vacuous():
    result = flipcheck.explore(_pipeline(), ExitRuleRefactored, records=1)
    assert result.ok and result.detail["coverage"]["overrides"] == {"may_finish": {"changed_successors": 0}}
    assert result.warnings == (
        f"your change to may_finish made no difference in the {result.counts['states']:,} states searched; try: "
        "pair, unaligned, records 0, checkpoints 1, failures 0 (examples: flipcheck.generators.protocol.example_graph)",)


def test_the_exit_change_on_an_aligned_pipeline_is_vacuous_and_named_where_it_is_not():
    # the finding 2, with the change written as code
    aligned = flipcheck.explore(_pipeline(), ExitBeforePendingCheckpoints, records=1, mode="aligned")
    assert aligned.ok and "your change to may_finish made no difference" in aligned.warnings[0]
    unaligned = flipcheck.explore(_pipeline(), ExitBeforePendingCheckpoints, records=1, mode="unaligned")
    assert unaligned.counterexample.property == "no_pending_checkpoint_cancelled" and unaligned.warnings == ()


def test_an_overridden_rule_method_is_searched_unreduced():
    # the reductions were worked out from the model's own rule bodies
    assert flipcheck.explore(_pipeline(), ExitRuleRefactored, records=1).counts["reduction"] == "none"
    assert flipcheck.explore(_pipeline(), NoWaitForPending, records=1).counts["reduction"] == "all"
    assert flipcheck.explore(_pipeline(), records=1).counts["reduction"] == "all"


def test_a_users_rule_method_is_held_to_the_rules_parameters_and_kind():
    from flipcheck.errors import UsageError

    graph = _pipeline()
    misspelt = type("Misspelt", (Protocol,), {"may_finnish": lambda self, job, state, t: True})
    with pytest.raises(UsageError, match=r"^protocol: Misspelt.may_finnish is not a name flipcheck.Protocol defines, "
                                         r"so it changes nothing: did you mean may_finish\?"):
        flipcheck.explore(graph, misspelt)
    wrong_parameters = type("WrongParameters", (Protocol,), {"may_finish": lambda self, task: True})
    with pytest.raises(UsageError, match=r"^protocol: WrongParameters.may_finish\(self, task\) cannot take the "
                                         r"arguments flipcheck.Protocol.may_finish\(self, job, state, t\) is called with$"):
        flipcheck.explore(graph, wrong_parameters)
    not_a_method = type("NotAMethod", (Protocol,), {"may_finish": False})
    with pytest.raises(UsageError, match=r"NotAMethod.may_finish is False, but flipcheck.Protocol.may_finish is a "
                                         r"method: override it with def may_finish\(self, job, state, t\)$"):
        flipcheck.explore(graph, not_a_method)
    not_a_switch = type("NotASwitch", (Protocol,), {"wait_for_pending_checkpoints": lambda self: False})
    with pytest.raises(UsageError, match=r"NotASwitch.wait_for_pending_checkpoints is a method, but "
                                         r"flipcheck.Protocol.wait_for_pending_checkpoints is a switch: set it to "
                                         r"True or False$"):
        flipcheck.explore(graph, not_a_switch)
    # extra parameters with defaults, and *args, take the rule's arguments
    fine = type("Fine", (Protocol,), {"may_finish": lambda self, *args, verbose=False: Protocol.may_finish(self, *args)})
    assert flipcheck.explore(graph, fine, records=0).ok


RULE_METHOD_FIXTURES = "tests/fixtures/user_variants/rule_methods.py"


def test_the_command_line_checks_a_rule_method_of_a_users_file(capsys):
    import json

    from flipcheck.cli import main

    code = main(["explore", "examples/graphs/protocol-pair.json", "--variant",
                 f"{RULE_METHOD_FIXTURES}:ExitBeforePendingCheckpoints", "--mode", "unaligned", "--records", "0",
                 "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["violations"][0]["property"] == "no_pending_checkpoint_cancelled"
    assert report["reduction"] == "none" and report["coverage"]["overrides"]["may_finish"]["changed_successors"] > 0


def test_a_sink_v2_rule_method_hunts_on_the_sink_v2_graph():
    from flipcheck.designs.protocol import SINK_V2_HUNT_CONFIGS, hunt_configs

    assert hunt_configs(f"{RULE_METHOD_FIXTURES}:EndOfInputSentinelId") == SINK_V2_HUNT_CONFIGS

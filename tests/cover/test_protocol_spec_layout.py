"""The whole-job model reads as a spec: every action cites its rule, and every rule of the
package docstring's table of contents is encoded by some function of the package."""

import inspect
import re

import flipcheck.model.protocol as job_model
from flipcheck.model.protocol import COORDINATOR_ACTIONS, INPUT_TASK_ACTIONS, SOURCE_ACTIONS
from flipcheck.model.protocol import coordinator, failover, tasks

RULE = re.compile(r"\b([JSCF]\d+u?)\b")


def test_every_action_cites_its_rule_first():
    for action in SOURCE_ACTIONS + INPUT_TASK_ACTIONS + COORDINATOR_ACTIONS:
        doc = inspect.getdoc(action) or ""
        assert RULE.match(doc), f"{action.__module__}.{action.__name__}: docstring does not start with a rule"


def test_every_rule_in_the_table_of_contents_is_cited_by_a_function():
    listed = set(re.findall(r"^\* ([JSCF]\d+u?) ", job_model.__doc__, re.MULTILINE))
    assert {"J1", "J9", "S1", "S4", "C1", "C7", "F1"} <= listed
    cited = set()
    for module in (tasks, coordinator, failover):
        for _, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__:
                cited |= set(RULE.findall(inspect.getdoc(function) or ""))
    assert listed - cited == set()

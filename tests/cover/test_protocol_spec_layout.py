"""The whole-job model reads as a spec: every action cites its rule, and every rule of the
package docstring's table of contents is encoded by some function of the package. The docstrings
are read from the source files: the compiled build (docs/compiled.md) keeps none."""

import ast
import re
from functools import cache
from pathlib import Path

import flipcheck.model.protocol as job_model
from flipcheck.model.protocol import COORDINATOR_ACTIONS, INPUT_TASK_ACTIONS, SOURCE_ACTIONS
from flipcheck.model.protocol import coordinator, failover, tasks

RULE = re.compile(r"\b([JSCF]\d+u?)\b")


@cache
def _docstrings(module_name: str) -> dict[str, str]:
    """The docstring of each top-level function of a model/protocol module, as written."""
    source = Path(job_model.__path__[0]) / f"{module_name.rsplit('.', 1)[1]}.py"
    tree = ast.parse(source.read_text())
    return {node.name: ast.get_docstring(node) or "" for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_action_cites_its_rule_first():
    for action in SOURCE_ACTIONS + INPUT_TASK_ACTIONS + COORDINATOR_ACTIONS:
        doc = _docstrings(action.__module__)[action.__name__]
        assert RULE.match(doc), f"{action.__module__}.{action.__name__}: docstring does not start with a rule"


def test_every_rule_in_the_table_of_contents_is_cited_by_a_function():
    listed = set(re.findall(r"^\* ([JSCF]\d+u?) ", job_model.__doc__, re.MULTILINE))
    assert {"J1", "J9", "S1", "S4", "C1", "C7", "F1"} <= listed
    cited = set()
    for module in (tasks, coordinator, failover):
        for doc in _docstrings(module.__name__).values():
            cited |= set(RULE.findall(doc))
    assert listed - cited == set()

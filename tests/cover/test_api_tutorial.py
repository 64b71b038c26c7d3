"""docs/api.md runs as written: every ``>>>`` example, from the repository's root."""

import doctest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tutorial_runs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)
    failures, tried = doctest.testfile(str(ROOT / "docs" / "api.md"), module_relative=False,
                                       optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    examples = sum(1 for line in (ROOT / "docs" / "api.md").read_text().splitlines() if line.startswith(">>> "))
    assert tried == examples > 10 and failures == 0


def test_the_worked_example_is_the_exit_rule_written_as_code():
    # issue 24: the walk the test above runs changes J7 with the rule method, meets the vacuity
    # warning on aligned barriers, and is caught where the warning says: the default search of both modes
    text = (ROOT / "docs" / "api.md").read_text()
    walk = text[text.index("## 3. "):text.index("## 5. ")]
    examples = "\n".join(line for line in walk.splitlines() if line.startswith((">>> ", "... ")))
    assert "...     def may_finish(self, job, state, t):" in examples
    assert "your change to may_finish made no difference" in walk
    assert 'records=1, mode="aligned")' in examples and "no_pending_checkpoint_cancelled violated" in walk
    assert "flipcheck.explore(pipeline, ExitBeforePendingCheckpoints, records=1)" in examples  # both modes

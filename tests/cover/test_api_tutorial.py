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

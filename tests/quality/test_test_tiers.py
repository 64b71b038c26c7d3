"""The slow marker is set one way only: on every test under tests/slow/, by tests/conftest.py's
collection hook, and nowhere else, so `make check` (no slow tests) and `make test` (all) are
told apart by the folder a test lives in."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SLOW = TESTS / "slow"
MARK = re.compile(r"mark\s*\.\s*slow")


def test_no_test_file_sets_the_slow_marker():
    setting = [str(path.relative_to(TESTS)) for path in sorted(TESTS.rglob("*.py"))
               if path != TESTS / "conftest.py" and path != Path(__file__) and MARK.search(path.read_text())]
    assert setting == []


def test_collected_tests_are_slow_exactly_under_tests_slow(request):
    items = request.session.items
    assert items, "collected nothing"
    wrong = [item.nodeid for item in items if (item.get_closest_marker("slow") is not None) != (SLOW in item.path.parents)]
    assert wrong == []

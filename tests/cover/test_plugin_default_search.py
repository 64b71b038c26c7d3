"""What ``flipcheck.explore`` and the pytest plugin search when the configuration is left to them
(issue 24, item 3); the plugin as the user meets it: a test file of theirs run by pytest in its
own process."""

import subprocess
import sys
import textwrap

import pytest

import flipcheck

USER_TESTS = """
from flipcheck import Protocol, job_graph

PAIR = job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])


class NoWait(Protocol):   # the exit rule changed: a finishing task cancels its pending checkpoints
    wait_for_pending_checkpoints = False


def test_the_exit_rule_change(flipcheck_checker):
    flipcheck_checker.explore(protocol=NoWait)


def test_my_graph_is_searched_in_both_modes(flipcheck_checker):
    result = flipcheck_checker.explore(PAIR)
    assert [(c["graph"], c["mode"]) for c in result.detail["configurations"]] == [("given", "aligned"),
                                                                                  ("given", "unaligned")]


def test_bounds_without_a_graph(flipcheck_checker):
    flipcheck_checker.explore(protocol=NoWait, records=2)
"""


def test_a_test_without_a_graph_searches_the_first_set_and_says_where_the_change_showed(tmp_path):
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(USER_TESTS))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                           str(tmp_path / "test_mine.py")], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    out = done.stdout
    assert "2 failed, 1 passed" in out, out + done.stderr
    report = out[out.index("flipcheck: explore NoWait: no_pending_checkpoint_cancelled violated"):]
    assert "  searched: twin graph, aligned, records 0, checkpoints 1, failures 0: " in report
    assert "  not searched: twin graph, unaligned, records 0, checkpoints 1, failures 0\n" in report
    replay = report.split("replay:  ", 1)[1].split("\n", 1)[0]
    assert f"flipcheck explore {tmp_path / '.flipcheck' / 'test_the_exit_rule_change.json'} " in replay
    assert "--mode aligned --records 0 --checkpoints 1 --failures 0" in replay
    again = subprocess.run([sys.executable, "-m", "flipcheck.cli", *replay.split()[1:]], capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 1 and "no_pending_checkpoint_cancelled" in again.stdout
    assert ("flipcheck: explore: records: without a graph, explore searches its first configuration set, whose "
            "bounds are its own; give a graph to choose them") in out
    assert "Traceback" not in out


PAIR = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])


def test_a_graph_is_searched_in_both_modes_unless_a_mode_or_a_savepoint_says_otherwise():
    modes = lambda **bounds: [c["mode"] for c in flipcheck.explore(PAIR, **bounds).detail["configurations"]]  # noqa: E731
    assert modes() == ["aligned", "unaligned"] and modes(records=0) == ["aligned", "unaligned"]
    assert modes(mode="at-least-once") == ["at-least-once"]
    assert modes(records=0, stop_with_savepoint=True) == ["aligned"]   # savepoints are aligned


def test_max_states_bounds_the_whole_set_and_what_it_left_out_is_listed_as_not_searched():
    whole = flipcheck.explore(PAIR)
    aligned = whole.detail["configurations"][0]["states"]
    with pytest.warns(UserWarning, match=f"no violation in {aligned + 10:,} states, but the search stopped"):
        cut = flipcheck.explore(PAIR, max_states=aligned + 10)
    first, second = cut.detail["configurations"]
    assert (first["states"], first["complete"], second["states"], second["complete"]) == (aligned, True, 10, False)
    assert cut.ok and not cut.counts["complete"] and cut.counts["states"] == aligned + 10
    assert "(cut short)" in cut.report()
    with pytest.warns(UserWarning):
        spent = flipcheck.explore(PAIR, max_states=aligned)
    assert spent.detail["configurations"][1]["states"] == 0 and "\nnot searched: your graph, unaligned" in spent.report()

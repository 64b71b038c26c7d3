"""What the pytest plugin searches when a user's test leaves the configuration to it (issue 24,
item 3), as the user meets it: a test file of theirs run by pytest in its own process."""

import subprocess
import sys
import textwrap

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
    assert "  searched: twin graph, unaligned, records 0, checkpoints 1, failures 0: not searched" in report
    replay = report.split("replay:  ", 1)[1].split("\n", 1)[0]
    assert f"flipcheck explore {tmp_path / '.flipcheck' / 'test_the_exit_rule_change.json'} " in replay
    assert "--mode aligned --records 0 --checkpoints 1 --failures 0" in replay
    again = subprocess.run([sys.executable, "-m", "flipcheck.cli", *replay.split()[1:]], capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 1 and "no_pending_checkpoint_cancelled" in again.stdout
    assert ("flipcheck: explore: records: without a graph, explore searches its first configuration set, whose "
            "bounds are its own; give a graph to choose them") in out
    assert "Traceback" not in out

"""The pytest plugin (flipcheck/pytest_plugin.py), as a user meets it: a test file of theirs, run
by pytest in its own process, with the plugin loaded from flipcheck's entry point."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "tests" / "fixtures" / "user_variants" / "my_variants.py"

USER_TESTS = f"""
import sys

import pytest
from flipcheck import job_graph

sys.path.insert(0, {str(VARIANTS.parent)!r})
import misspelt  # noqa: E402
import my_variants  # noqa: E402  (the user's own module of protocols)

GRAPH = job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])


def test_the_bug(flipcheck_checker):
    flipcheck_checker.explore(GRAPH, my_variants.CommitOnlyToTriggered, records=1)


def test_the_plan_bug(flipcheck_checker):
    flipcheck_checker.plan({str(ROOT / "examples" / "graphs" / "figure1.json")!r}, "wiki-b")


def test_a_misspelt_attribute(flipcheck_checker):
    flipcheck_checker.explore(GRAPH, misspelt.MyProtocol, records=1)


def test_the_refactoring(flipcheck_checker):
    result = flipcheck_checker.explore(GRAPH, my_variants.PlanFromTheEngine, records=1)
    assert result.ok and result.counts["complete"]


def test_a_vacuous_change(flipcheck_checker):
    from flipcheck import Protocol

    class NoWait(Protocol):
        wait_for_pending_checkpoints = False

    flipcheck_checker.explore(GRAPH, NoWait, records=1, mode="aligned")   # unaligned would show it


@pytest.mark.flipcheck(strict=False)
def test_a_vacuous_change_accepted(flipcheck_checker):
    from flipcheck import Protocol

    class NoWait(Protocol):
        wait_for_pending_checkpoints = False

    assert flipcheck_checker.explore(GRAPH, NoWait, records=1, mode="aligned").warnings


@pytest.mark.flipcheck(max_states=10)
def test_a_small_bound_warns_that_the_search_stopped(flipcheck_checker):
    assert not flipcheck_checker.explore(GRAPH, records=1).counts["complete"]


def test_the_profile_sets_hypothesis(request):
    from hypothesis import settings

    expected = {{"nightly": 2000, "ci": 100}}.get(request.config.getoption("--flipcheck-profile"))
    assert expected is None or settings.default.max_examples == expected
"""


def run_pytest(tmp_path, *options):
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(USER_TESTS))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                           f"--basetemp={tmp_path / 'base'}", str(tmp_path / "test_mine.py"), *options],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)


def test_a_violation_fails_the_users_test_with_the_trace_its_picture_and_a_replay_that_reproduces_it(tmp_path):
    done = run_pytest(tmp_path)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "4 failed, 4 passed" in out and "FAILED test_mine.py::test_the_bug" in out
    # a class that changes nothing fails with one line, not a green and not flipcheck's traceback
    assert ("flipcheck: explore: protocol: MyProtocol.wait_for_pending_checkpoint is not a name flipcheck.Protocol "
            "defines, so it changes nothing: did you mean wait_for_pending_checkpoints?") in out
    # strict by default: a switch changed that made no difference fails, with where it would
    assert "FAILED test_mine.py::test_a_vacuous_change " in out + " " and "vacuous_change_accepted FAILED" not in out
    assert "your change to wait_for_pending_checkpoints made no difference in the " in out
    assert "try: pair, unaligned, records 0" in out and "@pytest.mark.flipcheck(strict=False) accepts it" in out
    plan_report = out[out.index("flipcheck: plan wiki-b: no_triggered_task_has_running_predecessor violated"):]
    assert "replay:  flipcheck plan --algorithm wiki-b GRAPH.json" in plan_report
    report = out[out.index("flipcheck: explore CommitOnlyToTriggered: "):]
    assert "shortest counterexample (" in report and "      1. " in report
    assert "Traceback" not in out and "pytest_plugin.py" not in out   # the report, not flipcheck's stack
    picture = report.split("picture: ", 1)[1].split("\n", 1)[0]
    assert picture.endswith(".svg") and "<svg" in Path(picture).read_text()
    replay = report.split("replay:  ", 1)[1].split("\n", 1)[0]
    # saved under the rootdir, where pytest's clean-up of its temporary folders never reaches
    saved = tmp_path / ".flipcheck"
    assert Path(picture).parent == saved and f"flipcheck explore {saved / 'test_the_bug.json'} " in replay
    assert (saved / "test_the_bug.replay").read_text() == replay + "\n"
    assert f"--variant {VARIANTS}:CommitOnlyToTriggered" in replay
    words = replay.split()
    assert words[:2] == ["flipcheck", "explore"]
    again = subprocess.run([sys.executable, "-m", "flipcheck.cli", *words[1:]], capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 1 and "violated" in again.stdout
    assert "but the search stopped at max_states 10 before it searched them all" in out   # the bounded test's warning


def test_flipcheck_out_chooses_where_the_replay_is_saved(tmp_path):
    done = run_pytest(tmp_path, "--flipcheck-out", "reports", "-k", "test_the_bug")
    assert done.returncode == 1 and (tmp_path / "reports" / "test_the_bug.replay").is_file(), done.stdout
    assert f"replay:  flipcheck explore {tmp_path / 'reports' / 'test_the_bug.json'} " in done.stdout


def test_the_nightly_profile_loads_its_hypothesis_settings_and_a_bad_profile_is_a_usage_error(tmp_path):
    nightly = run_pytest(tmp_path, "--flipcheck-profile", "nightly", "-k", "profile or refactoring")
    assert nightly.returncode == 0, nightly.stdout + nightly.stderr
    bad = run_pytest(tmp_path, "--flipcheck-profile", "weekly")
    assert bad.returncode == 4 and "--flipcheck-profile: invalid choice: 'weekly'" in bad.stderr


def test_strict_fails_a_rule_method_override_that_changed_no_step(tmp_path):
    # a change written as code is judged like a switch: this J7 refactoring changes nothing
    (tmp_path / "test_exit_rule.py").write_text(textwrap.dedent("""
        import flipcheck

        GRAPH = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])


        class ExitRuleRefactored(flipcheck.Protocol):
            def may_finish(self, job, state, t):
                return len(self.finish_waits_for(job, state, t)) == 0


        def test_the_refactored_exit_rule(flipcheck_checker):
            flipcheck_checker.explore(GRAPH, ExitRuleRefactored, records=1)
    """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                           f"--basetemp={tmp_path / 'base'}", str(tmp_path / "test_exit_rule.py")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "your change to may_finish made no difference in the " in done.stdout
    assert "@pytest.mark.flipcheck(strict=False) accepts it" in done.stdout

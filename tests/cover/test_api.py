"""The public Python API (flipcheck/__init__.py, flipcheck/api.py): every name resolves, each check
returns a verdict a test can assert on, your own classes work where names do, and bad input is a
flipcheck error naming the argument."""

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import flipcheck
from flipcheck.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parents[2]
FIGURE1 = str(ROOT / "examples" / "graphs" / "figure1.json")
VARIANTS = ROOT / "tests" / "fixtures" / "user_variants" / "my_variants.py"


def _user_classes():
    from flipcheck.reference_impl.user_variants import load_variant

    return {name: load_variant(f"{VARIANTS}:{name}", object, "class")
            for name in ("CommitOnlyToTriggered", "PlanFromTheEngine", "TriggerEveryRunningTask")}


def pair(parallelism=1):
    return flipcheck.job_graph([("src", parallelism), ("sink", parallelism)], [("src", "sink", "all-to-all")])


def test_every_public_name_resolves_and_import_stays_light():
    for name in flipcheck.__all__:
        assert getattr(flipcheck, name) is not None, name
    assert set(flipcheck.__all__) <= set(dir(flipcheck))
    with pytest.raises(AttributeError):
        flipcheck.no_such_name  # noqa: B018
    loaded = subprocess.run([sys.executable, "-c", "import flipcheck, sys; print(sorted(m for m in "
                             "('z3', 'pyspark', 'networkx', 'hypothesis', 'flipcheck.api') if m in sys.modules))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_explore_passes_the_engine_and_catches_a_user_bug_with_the_full_models_shortest_trace(tmp_path):
    classes = _user_classes()
    assert flipcheck.explore(pair(), records=1).ok
    assert flipcheck.explore(pair(), classes["PlanFromTheEngine"], records=1).ok
    # aligned only: one configuration, searched to its end (the deadlock needs the whole graph)
    bad = flipcheck.explore(pair(), classes["CommitOnlyToTriggered"], records=1, mode="aligned")
    assert not bad.ok and bad.counts["complete"]
    example = bad.counterexample
    assert example.property in {p for p, _ in bad.violations} and example.steps
    unreduced = flipcheck.explore(pair(), classes["CommitOnlyToTriggered"], records=1, mode="aligned",
                                  reduction="none")
    assert unreduced.counterexample.steps == example.steps   # the same shortest trace
    text = bad.report()
    assert text.startswith("explore ") and "FAILED" in text and f"{example.property} violated" in text
    assert "  1. " in text and "replay: flipcheck explore GRAPH.json" in text
    picture = bad.render(tmp_path / "trace.svg")
    assert "<svg" in Path(picture).read_text()


def test_explore_takes_a_protocol_instance_and_a_name_and_bounds_the_search():
    classes = _user_classes()
    assert not flipcheck.explore(pair(), classes["CommitOnlyToTriggered"](), records=1).ok
    assert not flipcheck.explore(pair(), "pre-flip-147", records=1).ok
    with pytest.warns(UserWarning, match="no violation in 50 states, but the search stopped at max_states 50"):
        cut = flipcheck.explore(pair(2), records=1, max_states=50)
    # a cut is reported as the command reports it: no violation found, and complete false
    assert cut.ok and not cut.counts["complete"] and cut.counterexample is None and cut.counts["states"] == 50


def test_plan_checks_against_the_spec_with_names_calculators_and_functions(tmp_path):
    from flipcheck.model.plan import checkpoint_plan

    assert flipcheck.plan(FIGURE1).ok and flipcheck.plan(FIGURE1, checkpoint_plan).ok
    bad = flipcheck.plan(FIGURE1, _user_classes()["TriggerEveryRunningTask"])
    assert not bad.ok and bad.counterexample.property == "no_triggered_task_has_running_predecessor"
    assert bad.check == "plan TriggerEveryRunningTask"   # not the "flink" it inherits
    assert bad.counterexample.replay == f"flipcheck plan --algorithm {VARIANTS}:TriggerEveryRunningTask GRAPH.json"
    assert "<svg" in Path(bad.render(tmp_path / "plan.svg")).read_text()
    assert flipcheck.plan(FIGURE1).detail.tasks_to_trigger is not None


def test_prove_proves_the_engine_and_refutes_a_historical_bug():
    assert flipcheck.prove(FIGURE1).ok
    refuted = flipcheck.prove(FIGURE1, "flink-before-40482", states="all")
    assert not refuted.ok and refuted.counterexample.property == "equals_spec" and refuted.counterexample.message
    with pytest.raises(UsageError, match="algorithm: no z3 encoding"):
        flipcheck.prove(FIGURE1, "my-own")


def test_replay_barriers_checks_every_barrier_property():
    ok = flipcheck.replay_barriers("B1@0 D@1 E@1", channels=2)
    assert ok.ok and ok.counts["triggered"] == [1] and ok.counts["events"] == 3
    bad = flipcheck.replay_barriers(["B1@0", "E@1"], channels=2, handler="eop-not-aligned")
    assert not bad.ok and bad.counterexample.steps and "--handler eop-not-aligned" in bad.counterexample.replay
    with pytest.raises(InputError, match=r"event 2 \(X9\)"):
        flipcheck.replay_barriers("B1@0 X9", channels=2)


def test_verify_runs_a_suite_against_a_variant_name_or_a_class(tmp_path):
    assert flipcheck.verify("plan", budget=1, out=tmp_path).ok and not any(tmp_path.iterdir())
    caught = flipcheck.verify("protocol", _user_classes()["CommitOnlyToTriggered"], budget=3, out=tmp_path)
    assert not caught.ok and caught.counts["violations"] > 0
    # the shortest counterexample, step by step, replayed from the files saved in out
    example = caught.counterexample
    assert example.steps and example.property in {prop for prop, _ in caught.violations}
    argv = shlex.split(example.replay)
    assert argv[:2] == ["flipcheck", "explore"] and argv[argv.index("--property") + 1] == example.property
    assert Path(argv[2]).parent.parent == tmp_path and argv[argv.index("--variant") + 1].startswith(str(tmp_path))
    assert caught.render(tmp_path / "first.svg") == str(tmp_path / "first.svg")


def test_a_graph_in_code_matches_the_json_one_and_bad_graphs_name_the_problem():
    built = flipcheck.job_graph([("C", 1), ("A", 1), ("B", 1)], [("A", "C", "all-to-all"), ("B", "C", "all-to-all")],
                                states={"A": ["FINISHED"]})
    assert built == flipcheck.load_job_graph(FIGURE1)
    with pytest.raises(InputError, match="edge pattern 'sideways'"):
        flipcheck.job_graph([("a", 1), ("b", 1)], [("a", "b", "sideways")])
    with pytest.raises(InputError, match="job_graph"):
        flipcheck.job_graph([("a", 0)], [])
    with pytest.raises(UsageError, match="protocol: "):
        flipcheck.explore(pair(), 42)
    with pytest.raises(UsageError, match="reduction: "):
        flipcheck.explore(pair(), reduction="some")


def test_a_class_no_spec_can_name_is_refused_where_a_name_must_travel():
    class Local(flipcheck.Protocol):
        name = "local"

    with pytest.raises(UsageError, match="variant: .* define the class at the top level"):
        flipcheck.verify("protocol", Local, budget=1)


def test_edge_patterns_are_public_and_what_job_graph_takes_and_an_edge_has():
    assert {"ALL_TO_ALL", "POINTWISE"} <= set(flipcheck.__all__)
    for spelled, constant in (("all-to-all", flipcheck.ALL_TO_ALL), ("pointwise", flipcheck.POINTWISE)):
        by_name = flipcheck.job_graph([("a", 2), ("b", 2)], [("a", "b", spelled)])
        by_constant = flipcheck.job_graph([("a", 2), ("b", 2)], [("a", "b", constant)])
        assert by_name == by_constant and by_constant.inputs("b")[0].pattern == constant
    # the example project a user copies imports only the public API
    import re

    for path in (ROOT / "examples" / "user-project").rglob("*.py"):
        internal = re.findall(r"^\s*(?:from|import) (flipcheck\.\w+)", path.read_text(), re.M)
        assert internal == [], (path, internal)


def test_flipcheck_sweep_stays_the_function_once_the_sweep_package_is_imported():
    # the function imports the sweep layer (flipcheck/sweep/), which the import system binds to
    # the same name: a second flipcheck.sweep(...) in one process called a module
    import importlib

    import flipcheck

    importlib.import_module("flipcheck.sweep.runner")
    assert flipcheck.sweep is flipcheck.api.sweep and callable(flipcheck.sweep)
    from flipcheck.sweep import runner   # the package itself is still imported by its full name

    assert runner.__name__ == "flipcheck.sweep.runner"

"""User-written variants (``--variant FILE.py:CLASS`` / ``MODULE:CLASS``): a user's class is
loaded, held to its suite's base class, checked like a named variant by explore, verify, replay
and sweep, and every bad spec is exit 2 with one line naming the option.

The classes are in tests/fixtures/user_variants/my_variants.py; none is in flipcheck's catalogue.
"""

import json
import shlex
from pathlib import Path

import pytest

from flipcheck.cli import build_parser, main
from flipcheck.cli.sweep import build_spec
from flipcheck.designs import DESIGNS
from flipcheck.designs.plan import ENUMERATE_MAX_USER_TASKS, PLAN_SUITE
from flipcheck.designs.suite import get_suite
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.reference_impl.approximate_recovery_variants import variant_class as approximate_class
from flipcheck.reference_impl.barriers import handler_class
from flipcheck.reference_impl.batch_recovery_variants import variant_class as batch_class
from flipcheck.reference_impl.local_recovery_variants import variant_class as local_class
from flipcheck.reference_impl.plan import calculator_class, plan_algorithm
from flipcheck.reference_impl.protocol_variants import protocol_class
from flipcheck.reference_impl.split_assignment_variants import variant_class as split_class
from flipcheck.reference_impl.user_variants import UserVariantError, WrongVariantKind, absolute_spec, load_variant
from flipcheck.sweep.runner import run_batch

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "user_variants"
# As a user types it, from the repository's root.
MINE = "tests/fixtures/user_variants/my_variants.py"
BUGGY = f"{MINE}:CommitOnlyToTriggered"
REFACTORED = f"{MINE}:PlanFromTheEngine"
PLAN_BUG = f"{MINE}:TriggerEveryRunningTask"
PAIR = "examples/graphs/protocol-pair.json"


@pytest.fixture(autouse=True)
def at_the_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- explore and verify catch a user's bug and pass a user's refactoring ------------------------


def test_explore_catches_a_user_protocol_bug(capsys):
    code, out, err = run(capsys, "explore", PAIR, "--variant", BUGGY, "--json")
    result = json.loads(out)
    assert code == 1 and err == ""
    assert result["complete"] and [v["property"] for v in result["violations"]] == ["no_deadlock"]
    assert "sink[0]" in result["violations"][0]["message"] and result["violations"][0]["trace"]


def test_explore_passes_a_user_refactoring_with_the_engines_state_graph(capsys):
    code, out, _ = run(capsys, "explore", PAIR, "--variant", REFACTORED, "--json", "--failures", "1")
    engine_code, engine_out, _ = run(capsys, "explore", PAIR, "--variant", "flip-147", "--json", "--failures", "1")
    assert code == engine_code == 0
    mine, engine = json.loads(out), json.loads(engine_out)
    # the one difference: coverage names the refactored plan, which changed no state's successors
    assert mine["coverage"].pop("overrides") == {"plan": {"changed_successors": 0}}
    assert engine["coverage"].pop("overrides") == {}
    assert mine == engine and mine["violations"] == []


def test_a_dotted_module_spec_and_an_absolute_path_load_the_same_way(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES.parent))
    for spec in ("user_variants.my_variants:CommitOnlyToTriggered", str(FIXTURES / "my_variants.py:CommitOnlyToTriggered")):
        code, out, _ = run(capsys, "explore", PAIR, "--variant", spec, "--json")
        assert code == 1 and [v["property"] for v in json.loads(out)["violations"]] == ["no_deadlock"]


def test_verify_reports_the_bug_and_passes_the_refactoring(capsys, tmp_path):
    code, out, _ = run(capsys, "verify", "--suite", "protocol", "--budget", "2", "--variant", BUGGY, "--json",
                       "--out", str(tmp_path))
    report = json.loads(out)
    assert code == 1 and report["violations"] > 0
    assert {r["name"] for r in report["properties"] if r["violations"]} >= {"no_deadlock"}
    code, out, _ = run(capsys, "verify", "--suite", "protocol", "--budget", "2", "--variant", REFACTORED, "--json")
    assert code == 0 and json.loads(out)["violations"] == 0


def test_verify_of_a_user_plan_algorithm_has_no_z3_row_and_finds_its_bug(capsys, tmp_path):
    code, out, _ = run(capsys, "verify", "--suite", "plan", "--budget", "1", "--variant", PLAN_BUG, "--json",
                       "--out", str(tmp_path))
    report = json.loads(out)
    assert code == 1 and "z3" not in {r["driver"] for r in report["properties"]}
    assert any(r["name"] == "equals_spec" and r["violations"] for r in report["properties"])


# -- bad specs: exit 2, one line naming the option -----------------------------------------------


@pytest.mark.parametrize("spec,problem", [
    (f"{MINE[:-3]}-missing.py:X", "no such file"),
    ("README.md:X", "not a .py file"),
    ("tests/fixtures/user_variants:X", "not a .py file"),
    (f"{MINE}:Missing", "no class Missing in"),
    (f"{MINE}:NotAProtocol", "NotAProtocol is a class deriving from object alone, not a protocol variant "
                             "(a subclass of flipcheck.Protocol)"),
    (f"{MINE}:make_protocol", "make_protocol is a function, not a protocol variant"),
    (PLAN_BUG, "deriving from flipcheck.PlanCalculator, not a protocol variant"),
    ("tests/fixtures/user_variants/raises_on_import.py:X", "raises_on_import.py failed: RuntimeError: settings.toml not found"),
    ("no_such_module_anywhere:X", "no module named 'no_such_module_anywhere'"),
    (f"{MINE}:", "not PATH.py:CLASS or MODULE:CLASS"),
])
def test_a_bad_spec_is_one_line_naming_variant(capsys, spec, problem):
    code, out, err = run(capsys, "explore", PAIR, "--variant", spec)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("flipcheck explore: --variant ") and problem in err


@pytest.mark.parametrize("argv,option", [
    (["verify", "--suite", "barriers", "--variant", BUGGY], "--variant"),
    (["replay", "plan:1:0", "--variant", f"{MINE}:Missing", "--no-render"], "--variant"),
    (["replay", "plan:1:0", "--algorithm", BUGGY, "--no-render"], "--algorithm"),
    (["sweep", "--suite", "protocol", "--cases", "5", "--variant", PLAN_BUG, "--out", "{tmp}"], "--variant"),
    (["sweep", "--suite", "all", "--cases", "5", "--variant", f"{MINE}:NotAProtocol", "--out", "{tmp}"], "--variant"),
])
def test_every_command_names_the_option_in_one_line(capsys, tmp_path, argv, option):
    argv = [a.replace("{tmp}", str(tmp_path / "out")) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f": {option} " in err and str(ROOT / MINE) in err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_with_suite_all_a_spec_no_suite_takes_says_what_each_takes(capsys, tmp_path):
    _, _, err = run(capsys, "sweep", "--suite", "all", "--cases", "5", "--variant", f"{MINE}:NotAProtocol",
                    "--out", str(tmp_path / "o"))
    assert "which no suite among plan, barriers" in err
    assert all(f"{name}: a" in err for name in DESIGNS)


# -- every registry and every suite takes a user's class of its kind ------------------------------

# design -> (the registry's class lookup, the engine class a user subclasses)
LOOKUPS = {
    "plan": calculator_class, "barriers": handler_class, "protocol": protocol_class,
    "approximate-recovery": approximate_class, "local-recovery": local_class,
    "split-assignment": split_class, "batch-recovery": batch_class,
}
ENGINES = {"plan": "flink", "barriers": "flink", "protocol": "flip-147", "approximate-recovery": "flip135",
           "local-recovery": "flink", "split-assignment": "flink", "batch-recovery": "flink"}


def test_every_design_has_a_lookup_here():
    assert set(LOOKUPS) == set(DESIGNS) == set(ENGINES)


@pytest.fixture
def as_is(tmp_path):
    """``design -> spec`` of a user's subclass of the design's engine class that changes nothing."""
    lines = [f"from {cls.__module__} import {cls.__name__} as Engine{n}\n"
             f"class AsIs{n}(Engine{n}):\n    pass\n"
             for n, cls in enumerate(LOOKUPS[d](ENGINES[d]) for d in LOOKUPS)]
    path = tmp_path / "as_is.py"
    path.write_text("\n".join(lines))
    return {design: f"{path}:AsIs{n}" for n, design in enumerate(LOOKUPS)}


@pytest.mark.parametrize("design", list(LOOKUPS))
def test_each_registry_and_suite_takes_its_own_kind_only(design, as_is):
    spec = as_is[design]
    assert LOOKUPS[design](spec).__name__ == spec.rsplit(":", 1)[1]
    suite = get_suite(design)
    assert suite.knows(spec) and suite.check_name(spec) == spec
    space = suite.space("user")
    assert [space.check(space.case(i), spec).violations for i in range(3)] == [[], [], []]
    others = [d for d in LOOKUPS if d != design]
    assert not any(get_suite(d).knows(spec) for d in others)
    with pytest.raises(WrongVariantKind, match=f"{spec}: AsIs"):
        LOOKUPS[others[0]](spec)


def test_a_file_is_imported_once_so_its_classes_see_each_other(tmp_path):
    path = tmp_path / "pair.py"
    path.write_text("from flipcheck.model.protocol import Protocol\n"
                    "class Base(Protocol):\n    pass\n"
                    "class Child(Base):\n    pass\n")
    base = load_variant(f"{path}:Base", object, "thing")
    child = protocol_class(f"{path}:Child")
    assert issubclass(child, base) and protocol_class(f"{path}:Base") is base


def test_relative_paths_become_absolute_and_names_stay():
    assert absolute_spec(BUGGY) == f"{ROOT / MINE}:CommitOnlyToTriggered"
    assert absolute_spec("pkg.module:Class") == "pkg.module:Class"
    assert absolute_spec("wiki-b") == "wiki-b" and absolute_spec("/abs/x.py:Y") == "/abs/x.py:Y"


def test_user_variant_errors_are_value_errors_on_one_line():
    with pytest.raises(ValueError) as caught:
        protocol_class(f"{FIXTURES}/raises_on_import.py:X")
    assert isinstance(caught.value, UserVariantError) and "\n" not in str(caught.value)
    assert "second line" not in str(caught.value)


# -- sweeps: the spec travels as a string, absolute, and is recorded --------------------------------


def test_a_sweep_records_the_absolute_spec_and_runs_it_where_the_batch_runs(tmp_path, monkeypatch):
    args = build_parser().parse_args(["sweep", "--suite", "all", "--variant", PLAN_BUG, "--cases", "40",
                                      "--seed", "3", "--out", str(tmp_path / "o")])
    spec = build_spec(args)
    absolute = f"{ROOT / MINE}:TriggerEveryRunningTask"
    assert [(t.suite, t.algorithm) for t in spec.targets] == [("plan", absolute)]
    assert spec.manifest()["targets"][0]["algorithm"] == absolute
    monkeypatch.chdir(tmp_path)  # an executor's working directory is not the user's
    rows = list(run_batch(spec.worker_targets(), 0, 0, 40))
    assert {r[2] for r in rows} == {absolute} and "crash" not in {r[7] for r in rows}
    violating = [r for r in rows if r[6] == "violation"]
    assert violating and all({"equals_spec", "no_triggered_task_has_running_predecessor"} <= set(r[8])
                             for r in violating)
    monkeypatch.chdir(ROOT)
    assert main(["replay", violating[0][0], "--variant", absolute, "--no-render"]) == 1


def test_the_exhaustive_plan_space_enumerates_a_user_algorithm(capsys):
    space = PLAN_SUITE.space(PLAN_SUITE.exhaustive_token(2, 2))
    spec = absolute_spec(PLAN_BUG)
    outcomes = [space.check(space.case(i), spec) for i in range(space.size)]
    assert {o.method for o in outcomes} == {"enumerate"} and any(o.properties == ["equals_spec"] for o in outcomes)
    wide = JobGraph.build([("a", 9), ("b", 9)], [("a", "b", ALL_TO_ALL)])
    assert wide.num_tasks > ENUMERATE_MAX_USER_TASKS
    refused = space.check(wide, spec)
    assert refused.error and "no z3 encoding" in refused.error and refused.violations == []
    assert plan_algorithm(spec)(wide) != plan_algorithm("spec")(wide)


@pytest.mark.spark
def test_a_spark_sweep_checks_a_user_variant_and_its_replay_command_reproduces_it(capsys, tmp_path,
                                                                                   run_printed_command):
    out = tmp_path / "sweep"
    code = main(["sweep", "--suite", "protocol", "--variant", BUGGY, "--cases", "20", "--seed", "1",
                 "--master", "local[2]", "--out", str(out)])
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert code == 1 and summary["errors"] == 0 and summary["violations"] > 0
    assert set(summary["by_property"]) == {"no_deadlock"}
    (cex,) = summary["counterexamples"]
    assert cex["algorithm"] == f"{ROOT / MINE}:CommitOnlyToTriggered"
    # issue 24, item 5: the trace step by step and a replay reading only what the sweep saved
    steps = [f"{n:3d}. {step['sentence']}" for n, step in enumerate(cex["minimised"]["trace"], 1)]
    assert all(f"      {line}\n" in printed for line in steps) and f"  replay:  {cex['replay']}\n" in printed
    argv = shlex.split(cex["replay"])
    assert argv[:3] == ["flipcheck", "explore", str(out / cex["graph"])] and (out / cex["graph"]).is_file()
    assert argv[argv.index("--variant") + 1] == f"{out / 'variant' / 'my_variants.py'}:CommitOnlyToTriggered"
    replayed = run_printed_command(cex["replay"])
    assert replayed.returncode == 1 and "violated no_deadlock: " in replayed.stdout, replayed.stderr
    assert all(f"  {line}\n" in replayed.stdout for line in steps)


def test_plan_and_barriers_take_a_user_class_and_refuse_a_wrong_one_in_one_line(capsys, tmp_path):
    """`plan --algorithm` and `barriers --handler` take specs too; the error names the public base."""
    handlers = tmp_path / "handlers.py"
    handlers.write_text("import flipcheck\n\n\nclass SameAsFlink(flipcheck.BarrierHandler):\n    pass\n")
    assert main(["barriers", "--channels", "2", "--mode", "aligned", "--handler", f"{handlers}:SameAsFlink",
                 "--json", "B1@0", "E@1"]) == 0
    assert '"triggered": [1]' in capsys.readouterr().out
    figure1 = str(Path(__file__).resolve().parents[2] / "examples" / "graphs" / "figure1.json")
    assert main(["plan", "--algorithm", PLAN_BUG, "--json", figure1]) == 0
    assert '"tasks_to_trigger"' in capsys.readouterr().out
    assert main(["plan", "--algorithm", f"{handlers}:SameAsFlink", figure1]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("flipcheck plan: --algorithm: ")
    assert "deriving from flipcheck.BarrierHandler, not a plan algorithm (a subclass of flipcheck.PlanCalculator)" in err


# -- health checks: a class that changes nothing is never a silent green (issue 24) -------------

MISSPELT = "tests/fixtures/user_variants/misspelt.py"


def test_a_misspelt_attribute_is_exit_2_with_the_nearest_real_name(capsys):
    code, out, err = run(capsys, "explore", PAIR, "--variant", f"{MISSPELT}:MyProtocol")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert ("MyProtocol.wait_for_pending_checkpoint is not a name flipcheck.Protocol defines, so it changes "
            "nothing: did you mean wait_for_pending_checkpoints? (a helper of your own: start its name with _)") in err
    code, _, err = run(capsys, "verify", "--suite", "plan", "--variant", f"{MISSPELT}:MyCalculator", "--budget", "1")
    assert code == 2 and "did you mean calculate?" in err and len(err.splitlines()) == 1


def test_every_registry_holds_a_users_class_to_its_bases_names():
    for lookup, name in ((protocol_class, "MyProtocol"), (calculator_class, "MyCalculator"),
                         (handler_class, "MyHandler")):
        with pytest.raises(UserVariantError, match="did you mean"):
            lookup(f"{MISSPELT}:{name}")


def test_the_api_holds_a_class_passed_in_code_to_its_bases_names():
    import flipcheck
    from flipcheck.errors import UsageError
    import sys

    # the user's own module, imported as a spec imports it (base object: no registry checks it yet)
    mine = sys.modules[load_variant(f"{MISSPELT}:MyProtocol", object, "class").__module__]
    graph = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])
    for protocol in (mine.MyProtocol, mine.MyProtocol()):
        with pytest.raises(UsageError, match="^protocol: MyProtocol.wait_for_pending_checkpoint .* did you mean "
                                             "wait_for_pending_checkpoints"):
            flipcheck.explore(graph, protocol)
    with pytest.raises(UsageError, match="did you mean calculate"):
        flipcheck.plan(graph, mine.MyCalculator)
    with pytest.raises(UsageError, match="did you mean calculate"):
        flipcheck.verify("plan", mine.MyCalculator, budget=1)
    with pytest.warns(UserWarning, match="SameAsFlink sets wait_for_final_checkpoint"):
        flipcheck.explore(graph, mine.SameAsFlink)
    assert flipcheck.explore(graph, mine.WithHelpers).ok   # _helpers and metadata are the user's to set


def test_a_value_the_base_already_has_is_a_warning(capsys):
    code, _, err = run(capsys, "explore", PAIR, "--variant", f"{MISSPELT}:SameAsFlink")
    assert code == 0
    assert err == ("flipcheck explore: warning: SameAsFlink sets wait_for_final_checkpoint to True, the value "
                   "flipcheck.Protocol has: it changes nothing\n")


def test_every_registered_variant_passes_the_check_its_users_classes_get():
    from flipcheck.model.protocol import Protocol
    from flipcheck.reference_impl.approximate_recovery import ApproximateLocalRecovery
    from flipcheck.reference_impl.approximate_recovery_variants import APPROXIMATE_RECOVERY_ENGINES
    from flipcheck.reference_impl.barriers import HANDLERS
    from flipcheck.reference_impl.barriers.task import Task
    from flipcheck.reference_impl.batch_recovery import BatchJob
    from flipcheck.reference_impl.batch_recovery_variants import VARIANTS as BATCH
    from flipcheck.reference_impl.local_recovery import TaskLocalRecovery
    from flipcheck.reference_impl.local_recovery_variants import LOCAL_RECOVERY_ENGINES
    from flipcheck.reference_impl.plan import PLAN_CALCULATORS, FlinkPlanCalculator
    from flipcheck.reference_impl.protocol_variants import PROTOCOLS
    from flipcheck.reference_impl.split_assignment import SourceJob
    from flipcheck.reference_impl.split_assignment_variants import VARIANTS as SPLIT
    from flipcheck.reference_impl.user_variants import check_names

    registries = [(PROTOCOLS, Protocol), (PLAN_CALCULATORS, FlinkPlanCalculator), (HANDLERS, Task),
                  (APPROXIMATE_RECOVERY_ENGINES, ApproximateLocalRecovery), (LOCAL_RECOVERY_ENGINES, TaskLocalRecovery),
                  (BATCH, BatchJob), (SPLIT, SourceJob)]
    checked = 0
    for registry, base in registries:
        for name, cls in registry.items():
            assert check_names(cls, base) == (), name
            checked += 1
    assert checked > 60


def test_a_module_spec_resolves_from_the_current_directory_and_a_missing_one_says_how(tmp_path, monkeypatch, capsys):
    (tmp_path / "health_trap_protocols.py").write_text(
        "import flipcheck\n\nclass Mine(flipcheck.Protocol):\n    name = 'mine'\n")
    monkeypatch.chdir(tmp_path)   # the module's own folder, where a user runs the command from
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", ".", str(tmp_path))])
    assert protocol_class("health_trap_protocols:Mine").__name__ == "Mine"
    assert str(tmp_path) not in __import__("sys").path   # searched for that import only
    code, _, err = run(capsys, "explore", str(ROOT / PAIR), "--variant", "no_such_module_here:Mine")
    assert code == 2 and len(err.splitlines()) == 1
    assert "no module named 'no_such_module_here' (" in err and "no_such_module_here.py:CLASS" in err

"""Every command README.md and the `--help` pages show runs and exits as documented (the
convention is in tests/documented_commands.py and README.md). The quick ones run here; slow
ones in tests/slow, those that start Spark in tests/spark, real Flink in tests/flink."""

import re

import pytest

from documented_commands import SLOW, assert_ran_as_documented, documented_examples, grouped
from flipcheck.cli import COMMANDS

EXAMPLES = documented_examples()
QUICK = grouped([e for e in EXAMPLES if not e.uses_spark and not e.uses_flink and not e.is_slow])


def test_every_source_of_examples_is_read():
    sources = {e.source for e in EXAMPLES}
    assert {"README.md", "flipcheck --help"} <= sources
    # plan has its examples in `flipcheck --help`; every other subcommand has its own
    assert sources - {"README.md", "flipcheck --help"} == {f"flipcheck {name} --help" for name in COMMANDS} - {
        "flipcheck plan --help"}
    assert len([e for e in EXAMPLES if e.source == "README.md"]) == 11


def test_examples_not_run_are_the_cluster_templates_and_release_installs_only():
    not_run = [e.command for e in EXAMPLES if e.needs]
    assert len(not_run) == 5, not_run
    # A Spark cluster, a running Flink job's REST API, a cluster's own log files, a Flink release
    # installed from the package registry on first use (network access).
    assert all("--master" in command or "curl" in command or "log/flink-" in command or "--flink " in command
               for command in not_run)


def test_every_slow_entry_names_an_example():
    for prefix in SLOW:
        assert any(e.normalised.startswith(prefix) for e in EXAMPLES), prefix


def test_an_example_is_read_with_its_documented_exit_code():
    by_command = {e.normalised: e for e in EXAMPLES}
    assert by_command["flipcheck barriers --channels 2 --mode aligned B1@0 D@1 E@1"].expected_exit == 0
    assert by_command["flipcheck verify --suite plan --variant wiki-b --json"].expected_exit == 1
    yarn = next(e for e in EXAMPLES if "--master yarn" in e.command)
    assert yarn.needs == "a Spark cluster" and yarn.command.endswith("--conf spark.pyspark.python=./environment/bin/python")


@pytest.mark.parametrize("source", sorted(QUICK))
def test_quick_documented_examples_exit_as_documented(source, tmp_path, request):
    ran = assert_ran_as_documented(QUICK[source], tmp_path, request)
    assert len(ran) == len(QUICK[source])


def test_spark_examples_are_cheaper_only_by_the_documented_equivalences():
    from documented_commands import cheaper

    by_command = {e.normalised: e for e in EXAMPLES}
    readme_sweep = by_command["flipcheck sweep --suite all --cases 100000 --seed 1 --out out/s1"]
    assert cheaper(readme_sweep) == "flipcheck sweep --suite all --cases 500 --seed 1 --out out/s1"
    wiki_b = next(e for e in EXAMPLES if "--variant wiki-b --cases 20000" in e.command)
    # exit 1: a violation among the first 500 cases is one among 20,000 (none there fails the test)
    assert wiki_b.expected_exit == 1 and cheaper(wiki_b) == wiki_b.normalised.replace("--cases 20000", "--cases 500")
    assert cheaper(by_command["flipcheck demo"]) == "flipcheck demo --cases 12000 --max-vertices 2"
    exhaustive = next(e for e in EXAMPLES if "--exhaustive" in e.command)
    assert cheaper(exhaustive) == "flipcheck sweep --suite plan --exhaustive --max-vertices 4 --max-parallelism 1 --out out/exh"
    changed = [e for e in EXAMPLES if not e.needs and cheaper(e) != e.normalised]
    assert all(e.uses_spark for e in changed) and len(changed) == 5


def test_an_example_doing_the_work_of_an_earlier_one_is_that_run(tmp_path):
    from documented_commands import Example, run_in_order

    figure = "examples/graphs/figure1.json"
    first, same_work, exit_differs = (Example("test", f"flipcheck render {figure} --out {name}.svg", comment)
                                      for name, comment in (("a", ""), ("b", ""), ("c", "exit 1")))
    ran = run_in_order([first, same_work, exit_differs], tmp_path)
    assert [r.exit_code for r in ran] == [0, 0, 0]
    assert (tmp_path / "a.svg").exists() and not (tmp_path / "b.svg").exists()   # run once
    assert ran[1].seconds == 0.0 and ran[0].command in ran[1].stderr_tail
    assert (tmp_path / "c.svg").exists() and not ran[2].as_documented   # another documented exit: run again


def test_a_command_touching_no_file_of_its_own_runs_once_per_session(tmp_path):
    from documented_commands import Example, run_in_order

    plan = "flipcheck plan examples/graphs/figure1.json"
    render = "flipcheck render examples/graphs/figure1.json --out picture.svg"
    shared = tmp_path / "shared"
    shared.mkdir()
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = run_in_order([Example("first", plan, ""), Example("first", render, "")], tmp_path / "a", shared=shared)
    second = run_in_order([Example("second", plan, ""), Example("second", render, "")], tmp_path / "b", shared=shared)
    assert [r.exit_code for r in first + second] == [0, 0, 0, 0]
    assert second[0].seconds == 0.0 and "by first" in second[0].stderr_tail   # the first source's run
    assert (tmp_path / "b" / "picture.svg").exists()     # writes a file of its own: run again


def test_an_example_asserted_elsewhere_is_that_tests_command_and_exit_code():
    """tests/spark/test_demo.py runs the demo's quicker tour with the example's arguments (its
    constant DOCUMENTED_EXAMPLE) and asserts exit 0, the documented one; so does
    tests/flink/test_flink_faults.py for `flink run`'s three faults. The examples' runner then
    leaves them out. The link cannot rot: the command and the module must agree."""
    import ast

    from documented_commands import ASSERTED_ELSEWHERE, REPOSITORY, _without_outputs, cheaper

    for work, module in ASSERTED_ELSEWHERE.items():
        shown = [e for e in EXAMPLES if _without_outputs(cheaper(e)) == work]
        assert shown and all(e.expected_exit == 0 for e in shown), work
        tree = ast.parse((REPOSITORY / module).read_text())
        constants = {node.targets[0].id: node.value.value for node in tree.body
                     if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)}
        assert constants.get("DOCUMENTED_EXAMPLE") == work, (module, constants.get("DOCUMENTED_EXAMPLE"))
        text = (REPOSITORY / module).read_text()
        assert "shlex.split(DOCUMENTED_EXAMPLE)" in text.split("DOCUMENTED_EXAMPLE =", 1)[1]
        assert re.search(r"assert (result\.returncode|code) == 0", text), module

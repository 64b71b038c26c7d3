"""`flipcheck sweep` option errors (exit 2, one line, before Spark starts) and `flipcheck replay`."""

import json

import pytest

from flipcheck.cli import main


def assert_fails_with_one_line(argv, capsys, *fragments):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("extra,fragments", [
    ([], ["--cases N"]),
    (["--cases", "5", "--exhaustive"], ["not both"]),
    (["--cases", "5", "--max-vertices", "3"], ["need --exhaustive"]),
    (["--exhaustive", "--max-vertices", "9"], ["--max-vertices must be"]),
    (["--cases", "5", "--seed", "a:b"], ["--seed"]),
    (["--cases", "0"], ["--cases", "outside 1.."]),
    (["--cases", "5", "--variant", "no-such-thing"], ["no suite", "no-such-thing"]),
    (["--cases", "5", "--master", "http://example.org"], ["--master", "not a Spark master URL"]),
])
def test_bad_options_exit_2_with_one_line(extra, fragments, capsys, tmp_path):
    assert_fails_with_one_line(["sweep", "--suite", "plan", "--out", str(tmp_path / "o"), *extra], capsys, *fragments)


def test_a_suite_missing_from_the_build_is_one_line(capsys, tmp_path, monkeypatch):
    from flipcheck import designs

    monkeypatch.setitem(designs.DESIGNS, "protocol", designs.Registered("flipcheck.designs.not_in_this_build", "gone"))
    assert_fails_with_one_line(["sweep", "--suite", "protocol", "--cases", "5", "--out", str(tmp_path / "o")], capsys,
                         "protocol", "not available in this build")


def test_unknown_suite_is_an_argparse_error(capsys, tmp_path):
    assert main(["sweep", "--suite", "mystery", "--cases", "5", "--out", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_directory_holding_other_files_is_refused(capsys, tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    assert_fails_with_one_line(["sweep", "--suite", "plan", "--cases", "5", "--out", str(tmp_path)], capsys,
                         str(tmp_path), "holds no sweep")
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_a_different_sweep_in_the_same_directory_is_refused(capsys, tmp_path):
    from flipcheck.sweep.runner import plan_sweep

    manifest = plan_sweep(["plan"], None, cases=5, seed="1").manifest()
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert_fails_with_one_line(["sweep", "--suite", "plan", "--cases", "6", "--seed", "1", "--out", str(tmp_path)], capsys,
                         "holds a different sweep")


def test_replay_prints_the_verdict_and_draws_the_case(capsys, tmp_path):
    picture = tmp_path / "case.svg"
    assert main(["replay", "plan:42:17", "--render", str(picture)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plan:42:17 (plan, flink): ok") and f"picture: {picture}" in out
    assert picture.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_replay_of_a_violation_exits_1_and_minimises(capsys, tmp_path):
    assert main(["replay", "plan:1:0", "--algorithm", "wiki-b", "--minimise", "--json",
                 "--render", str(tmp_path / "w.svg")]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["outcome"] == "violation" and document["algorithm"] == "wiki-b"
    assert {v["property"] for v in document["violations"]} >= {"equals_spec"}
    assert sum(v["parallelism"] for v in document["case"]["vertices"]) <= 3
    assert (tmp_path / "w.svg").exists()


def test_replay_of_a_barrier_case_and_an_exhaustive_case(capsys):
    assert main(["replay", "barriers:3:1", "--no-render", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["suite"] == "barriers" and "events" in document["case"]
    assert main(["replay", "plan:exhaustive-v3-p2:301", "--no-render"]) == 0
    assert "checked by" in capsys.readouterr().out
    assert main(["replay", "barriers:exhaustive-c1-i2:0", "--no-render", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "explore"


@pytest.mark.parametrize("argv,fragment", [
    (["replay", "plan:1"], "SUITE:SEED:INDEX"),
    (["replay", "plan:1:0", "--algorithm", "nope"], "no algorithm or variant"),
    (["replay", "mystery:1:0"], "mystery"),
])
def test_replay_bad_ids_exit_2(argv, fragment, capsys):
    assert_fails_with_one_line(argv, capsys, fragment)


def test_replay_of_a_protocol_case_draws_its_schedule(capsys, tmp_path):
    out_path = tmp_path / "case.svg"
    assert main(["replay", "protocol:1:0", "--json", "--render", str(out_path)]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["violations"] == [] and replayed["case"]["graph"]
    assert "coordinator" in out_path.read_text()


def test_a_refused_directory_is_left_untouched(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    assert main(["sweep", "--suite", "plan", "--cases", "5", "--out", str(tmp_path)]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_malformed_spark_setting_is_refused(capsys, tmp_path):
    assert_fails_with_one_line(["sweep", "--suite", "plan", "--cases", "5", "--conf", "ui=on", "--out", str(tmp_path / "o")],
                         capsys, "--conf", "spark.KEY=VALUE")


def test_bench_sweep_with_an_unknown_suite_exits_2_naming_it(capsys):
    assert_fails_with_one_line(["bench", "sweep", "--suites", "plan,mystery"], capsys, "--suites", "mystery")


def test_a_user_variants_counterexample_is_printed_step_by_step_with_a_replay_from_anywhere(tmp_path,
                                                                                        run_printed_command):
    """Issue 24, item 5, for sweeps (without Spark: the driver's end of a sweep, from a case id)."""
    import io
    from pathlib import Path

    from flipcheck.cli.sweep import print_result
    from flipcheck.designs.counterexamples import save_variant
    from flipcheck.designs.suite import get_suite
    from flipcheck.sweep.runner import plan_sweep
    from flipcheck.sweep.summary import regenerate_counterexample

    work = tmp_path / "work"
    work.mkdir()
    mine = work / "mine.py"
    mine.write_text("import flipcheck\n\n\nclass FinishesEarly(flipcheck.Protocol):\n"
                    "    wait_for_final_checkpoint = False\n")
    spec = f"{mine}:FinishesEarly"
    target = plan_sweep(["protocol"], spec, cases=1, seed="1").targets[0]
    suite, out = get_suite("protocol"), tmp_path / "out"
    space = suite.space(target.token)
    index, outcome = next((i, o) for i in range(200) if (o := space.check(space.case(i), spec)).violations)
    entry = regenerate_counterexample(out, target, suite, outcome.properties[0], index, save_variant(out, spec))
    printed = io.StringIO()
    print_result({"targets": [], "counterexamples": [entry], "cases": 1, "violations": 1, "wall_seconds": 1.0},
                 str(out), printed)
    mine.unlink()  # the replay reads the copy saved in out
    steps = [f"{n:3d}. {step['sentence']}" for n, step in enumerate(entry["minimised"]["trace"], 1)]
    assert all(f"      {line}\n" in printed.getvalue() for line in steps)
    assert f"  replay:  {entry['replay']}\n" in printed.getvalue() and Path(out / entry["graph"]).is_file()
    replayed = run_printed_command(entry["replay"])
    assert replayed.returncode == 1 and f"violated {entry['property']}: " in replayed.stdout, replayed.stderr
    assert all(f"  {line}\n" in replayed.stdout for line in steps)

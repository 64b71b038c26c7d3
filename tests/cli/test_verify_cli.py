"""`flipcheck verify`: the JSON contract, exit codes, and that a buggy variant is reported."""

import json
import shlex
from pathlib import Path

import manifest
import pytest
from flipcheck.cli import main


def test_plan_suite_json_contract_and_no_violation(capsys, tmp_path):
    assert main(["verify", "--suite", "plan", "--budget", "2", "--json", "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"suite", "properties", "violations", "coverage", "counterexamples", "without_counterexample",
                           "out"} and report["coverage"] is None
    assert report["counterexamples"] == report["without_counterexample"] == [] and report["out"] is None
    assert not any((tmp_path / "out").iterdir())  # nothing to replay, nothing saved
    assert report["suite"] == "plan" and report["violations"] == 0
    assert all(set(row) == {"name", "cases", "violations", "driver"} for row in report["properties"])
    assert all(row["cases"] > 0 for row in report["properties"])


def test_buggy_variant_exits_1_with_violations(capsys, tmp_path):
    assert main(["verify", "--suite", "plan", "--budget", "2", "--variant", "wiki-b", "--json", "--out", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    violated = {row["name"] for row in report["properties"] if row["violations"]}
    assert {"no_triggered_task_has_running_predecessor", "equals_spec"} <= violated


def test_bad_options_exit_2_one_line(capsys, tmp_path):
    assert main(["verify", "--suite", "plan", "--variant", "nope"]) == 2
    assert main(["verify", "--suite", "plan", "--budget", "0"]) == 2
    (tmp_path / "file").write_text("")
    assert main(["verify", "--suite", "plan", "--out", str(tmp_path / "file")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "--variant" in err and "--budget" in err and "not a directory" in err


def test_barriers_suite_runs_every_driver_and_catches_a_variant(capsys, tmp_path):
    assert main(["verify", "--suite", "barriers", "--budget", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["driver"] for row in report["properties"]} == {"exploration", "hypothesis"}
    assert main(["verify", "--suite", "barriers", "--budget", "3", "--variant", "eop-not-aligned", "--json",
                 "--out", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any(row["name"] == "end_of_partition_alignment" and row["violations"] for row in report["properties"])


def test_bench_barriers_reports_pinned_state_counts(capsys):
    # The counts are the manifest's (tests/manifests/barriers.json); the bench must explore
    # exactly the pinned model, whatever its speed.
    assert main(["bench", "barriers", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 8 and all(row["states_per_second"] > 0 for row in rows)
    pinned = {(e["config"]["mode"], e["config"]["after_finished"], e["config"]["alignment_timeout"]): e["distinct_states"]
              for e in manifest.entries("barriers", model="spec", check="states")}
    assert {(r["mode"], r["after_finished"], r["alignment_timeout"]): r["states"] for r in rows} == pinned


def numbered_lines(text: str) -> list[str]:
    """The numbered step lines that follow the first line of ``text`` (and a "shortest ..."
    heading), stripped."""
    lines = [line.strip() for line in text.splitlines()[1:]]
    if lines and lines[0].startswith("shortest"):
        lines = lines[1:]
    steps = []
    for line in lines:
        if not line[:1].isdigit():
            break
        steps.append(line)
    return steps


FINISHES_EARLY = '''
import flipcheck


class FinishesEarly(flipcheck.Protocol):
    """A source finishes without waiting for a checkpoint after its end of data."""

    wait_for_final_checkpoint = False
'''


def test_a_user_variant_gets_each_shortest_counterexample_and_a_replay_that_works_from_anywhere(
        capsys, tmp_path, monkeypatch, run_printed_command):
    """Issue 24, item 5: verify printed "N violations" as counts only, with no trace and no replay."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.py").write_text(FINISHES_EARLY)
    monkeypatch.chdir(work)
    assert main(["verify", "--suite", "protocol", "--variant", "mine.py:FinishesEarly", "--budget", "3"]) == 1
    text = capsys.readouterr().out
    report = json.loads((work / ".flipcheck" / "verify-protocol" / "verify.json").read_text())
    violated = {row["name"] for row in report["properties"] if row["violations"]}
    assert {entry["property"] for entry in report["counterexamples"]} == violated
    assert "final_checkpoint_before_finish" in violated and report["without_counterexample"] == []
    # the user edits the file afterwards: the replays load the copy verify saved next to the report
    (work / "mine.py").write_text(FINISHES_EARLY.replace("= False", "= True"))
    for entry in report["counterexamples"]:
        steps = [f"{n}. {step['sentence']}" for n, step in enumerate(entry["minimised"]["trace"], 1)]
        printed = text.split(f"counterexample of {entry['property']} (found by ", 1)[1]
        assert numbered_lines(printed) == steps and f"replay:  {entry['replay']}\n" in printed
        replayed = run_printed_command(entry["replay"])
        assert replayed.returncode == 1, replayed.stderr
        assert numbered_lines(replayed.stdout.split(f"violated {entry['property']}: ", 1)[1]) == steps


def test_a_user_plan_algorithm_is_replayed_by_case_id(capsys, tmp_path, run_printed_command):
    variants = Path(__file__).resolve().parents[1] / "fixtures" / "user_variants" / "my_variants.py"
    assert main(["verify", "--suite", "plan", "--variant", f"{variants}:TriggerEveryRunningTask", "--budget", "1",
                 "--json", "--out", str(tmp_path / "out")]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["counterexamples"] and report["out"] == str(tmp_path / "out")
    entry = report["counterexamples"][0]
    assert entry["case_id"].startswith("plan:verify-plan:") and entry["size"] <= entry["original_size"]
    assert shlex.split(entry["replay"]) == ["flipcheck", "replay", entry["case_id"], "--algorithm",
                                            f"{tmp_path / 'out' / 'variant' / 'my_variants.py'}:TriggerEveryRunningTask"]
    replayed = run_printed_command(entry["replay"] + " --no-render")
    assert replayed.returncode == 1 and f"  {entry['property']}: " in replayed.stdout


def test_a_user_variant_that_raises_is_one_line_naming_its_own_file_and_line(capsys, tmp_path):
    variants = tmp_path / "raising.py"
    variants.write_text("from flipcheck import PlanCalculator, Protocol\n\n\n"
                        "class RaisingPlan(PlanCalculator):\n"
                        "    def calculate(self, graph):\n"
                        "        raise RuntimeError('my plan is broken')\n\n\n"
                        "class RaisingProtocol(Protocol):\n"
                        "    def plan(self, graph):\n"
                        "        raise KeyError('no such vertex')\n")
    assert main(["verify", "--suite", "plan", "--budget", "2", "--variant", f"{variants}:RaisingPlan",
                 "--out", str(tmp_path / "plan")]) == 2
    assert main(["verify", "--suite", "protocol", "--budget", "2", "--variant", f"{variants}:RaisingProtocol",
                 "--out", str(tmp_path / "protocol")]) == 2
    plan_line, protocol_line = capsys.readouterr().err.splitlines()
    assert "RuntimeError: my plan is broken" in plan_line and f"{variants}:6, in calculate" in plan_line
    assert "KeyError" in protocol_line and f"{variants}:11, in plan" in protocol_line
    assert "Traceback" not in plan_line + protocol_line


def test_a_failure_of_flipcheck_itself_keeps_its_traceback(monkeypatch, tmp_path):
    from flipcheck.cli import verify

    def broken(args):
        raise ZeroDivisionError("a bug of ours")

    monkeypatch.setattr(verify, "run", broken)
    with pytest.raises(ZeroDivisionError):
        main(["verify", "--suite", "plan"])


@pytest.mark.parametrize("suite, mutant", [("local-recovery", "flink-before-8777"),
                                           ("approximate-recovery", "flink-before-19693")])
def test_a_recovery_designs_seeded_counterexample_is_replayed_by_its_case_id(suite, mutant, capsys, tmp_path,
                                                                             run_printed_command):
    """Seeded cases of one kind come from the random space KIND@verify, so each has an id."""
    assert main(["verify", "--suite", suite, "--variant", mutant, "--budget", "3", "--json",
                 "--out", str(tmp_path / "out")]) == 1
    seeded = [e for e in json.loads(capsys.readouterr().out)["counterexamples"] if e["driver"] == "seeded"]
    assert seeded, "no seeded counterexample to replay"
    for entry in seeded:
        assert entry["case_id"].startswith(f"{suite}:") and "@verify:" in entry["case_id"]
        replayed = run_printed_command(entry["replay"] + " --no-render")
        assert replayed.returncode == 1 and f"  {entry['property']}: " in replayed.stdout


@pytest.mark.parametrize("suite, mutant, prop, driver", [
    ("local-recovery", "flink-before-8777", "restore_keeps_only_restored", "exhaustive"),
    ("approximate-recovery", "flink-before-19547", "first_data_at_record_boundary", "exploration"),
])
def test_a_recovery_designs_exploration_keeps_its_counterexample(suite, mutant, prop, driver, capsys, tmp_path):
    """Before, these designs' explorations counted a violation and dropped its case: verify then
    said "none kept (... a stateful run, a proof)" whenever the random drivers missed it."""
    from flipcheck.designs.drivers import collect_findings
    from flipcheck.designs.suite import get_suite

    with collect_findings() as findings:
        get_suite(suite).module.verify(budget_seconds=2, variant=mutant)
    found = findings.by_property[prop][driver]
    assert found.case is not None and found.message
    shown = get_suite(suite).describe(found.case, mutant)
    assert shown["kind"] in ("store", "subpartition"), shown

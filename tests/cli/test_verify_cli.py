"""`flipcheck verify`: the JSON contract, exit codes, and that a buggy variant is reported."""

import json

import manifest
from flipcheck.cli import main


def test_plan_suite_json_contract_and_no_violation(capsys, tmp_path):
    assert main(["verify", "--suite", "plan", "--budget", "2", "--json", "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"suite", "properties", "violations", "coverage", "counterexamples", "without_counterexample",
                           "out"} and report["coverage"] is None
    assert report["counterexamples"] == report["without_counterexample"] == [] and report["out"] is None
    assert not (tmp_path / "out").exists()  # nothing to replay, nothing saved
    assert report["suite"] == "plan" and report["violations"] == 0
    assert all(set(row) == {"name", "cases", "violations", "driver"} for row in report["properties"])
    assert all(row["cases"] > 0 for row in report["properties"])


def test_buggy_variant_exits_1_with_violations(capsys, tmp_path):
    assert main(["verify", "--suite", "plan", "--budget", "2", "--variant", "wiki-b", "--json", "--out", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    violated = {row["name"] for row in report["properties"] if row["violations"]}
    assert {"no_triggered_task_has_running_predecessor", "equals_spec"} <= violated


def test_bad_options_exit_2_one_line(capsys):
    assert main(["verify", "--suite", "plan", "--variant", "nope"]) == 2
    assert main(["verify", "--suite", "plan", "--budget", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--variant" in err and "--budget" in err


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

"""`flipcheck barriers` from the outside: the --json contract, the table, exit codes, one-line errors,
the message-sequence chart."""

import json
import shutil
import subprocess
import sys

import pytest

from flipcheck.cli import main


def run_cli(capsys, *args):
    code = main(["barriers", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_contract(capsys):
    code, out, err = run_cli(capsys, "--channels", "3", "--mode", "unaligned", "--json",
                             "B1@0", "D@1", "D@2", "D@1", "B1@1", "E@2", "B2@0", "C2@1")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert list(result) == ["triggered", "aborted", "pending", "blocked", "open_channels", "in_flight"]
    assert result == {"triggered": [1, 2], "aborted": [[2, "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER"]],
                      "pending": None, "blocked": [], "open_channels": 2,
                      "in_flight": {"1": [[1, 0], [2, 0], [1, 1]]}}


def test_json_pending_and_blocked(capsys):
    code, out, _ = run_cli(capsys, "--channels", "3", "--mode", "aligned", "--json", "E@2", "B4@0")
    assert code == 0
    assert json.loads(out) == {"triggered": [], "aborted": [], "pending": 4, "blocked": [0], "open_channels": 2,
                               "in_flight": {}}


def test_feature_off_aborts_with_flinks_reason(capsys):
    code, out, _ = run_cli(capsys, "--channels", "2", "--mode", "aligned", "--no-checkpoints-after-tasks-finished",
                           "--json", "B1@0", "E@1")
    assert code == 0 and json.loads(out)["aborted"] == [[1, "CHECKPOINT_DECLINED_INPUT_END_OF_STREAM"]]


def test_alignment_timeout_fires_after_k_events(capsys):
    code, out, _ = run_cli(capsys, "--channels", "2", "--mode", "unaligned", "--alignment-timeout", "2",
                           "B1@0", "D@1", "D@1", "D@1", "B1@1")
    assert code == 0
    lines = out.splitlines()
    assert any("TIMEOUT (after 2 events)" in line and "TRIGGER 1 (unaligned)" in line for line in lines)
    assert "in-flight: 1: ch 1 #2" in out  # records 0 and 1 were processed before the switch


def test_table_lists_every_step(capsys):
    code, out, _ = run_cli(capsys, "--channels", "2", "--mode", "aligned", "B1@0", "D@1", "E@1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "2 channels, aligned" and lines[1].split()[:3] == ["#", "event", "outputs"]
    rows = lines[2:5]
    assert [row.split()[1] for row in rows] == ["B1@0", "D@1", "E@1"]
    assert "TRIGGER 1 (aligned)" in rows[2] and "triggered: [1]" in out


@pytest.mark.parametrize("args,position,needle", [
    (["B1@0", "X@1"], 2, "expected B<id>@<ch>"),
    (["B1@0", "D@0"], 2, "channel 0 is blocked"),
    (["E@1", "D@1"], 2, "already delivered EndOfPartition"),
    (["B1@7"], 1, "out of range"),
    (["B2@0", "E@1", "B1@0"], 3, "not newer"),
    (["TIMEOUT"], 1, "alignment timeout"),
    (["T0"], 1, "ids start at 1"),
])
def test_impossible_or_invalid_events_exit_2_naming_the_token(capsys, args, position, needle):
    code, out, err = run_cli(capsys, "--channels", "2", "--mode", "aligned", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"event {position} ({args[position - 1]})" in err and needle in err


def test_bad_options_exit_2(capsys):
    assert run_cli(capsys, "--channels", "2", "--mode", "aligned", "--alignment-timeout", "3", "B1@0")[0] == 2
    assert run_cli(capsys, "--channels", "0", "--mode", "aligned", "B1@0")[0] == 2
    assert run_cli(capsys, "--channels", "2", "--mode", "aligned", "--render", "x.txt", "B1@0")[0] == 2


def test_violation_exits_1_and_names_the_property(capsys):
    code, out, err = run_cli(capsys, "--channels", "2", "--mode", "aligned", "--handler", "eop-not-aligned",
                             "--json", "B1@0", "E@1")
    assert code == 1 and json.loads(out)["pending"] == 1
    assert "end_of_partition_alignment" in err and "refines_model" in err


def test_flinks_tracker_quirk_is_reported(capsys):
    code, out, err = run_cli(capsys, "--channels", "2", "--mode", "at-least-once", "--json",
                             "B1@0", "E@0", "B2@1", "E@1")
    assert code == 1 and json.loads(out)["triggered"] == [2, 1] and "triggered_ids_increase" in err


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot not installed")
def test_render_writes_an_svg_chart(capsys, tmp_path):
    target = tmp_path / "chart.svg"
    code, _, _ = run_cli(capsys, "--channels", "2", "--mode", "aligned", "--render", str(target), "B1@0", "D@1", "E@1")
    assert code == 0
    svg = target.read_text()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    assert "channel 0" in svg and "TRIGGER 1" in svg and "EOP" in svg


def test_subprocess_exit_code_and_single_line_error():
    proc = subprocess.run([sys.executable, "-m", "flipcheck.cli", "barriers", "--channels", "1", "--mode", "aligned",
                           "E@0", "D@0"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr

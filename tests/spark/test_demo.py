"""`flipcheck demo` (what `make demo` runs): engines clean, wiki-b caught and drawn, report path printed."""

import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def test_demo_sweeps_every_suite_catches_wiki_b_and_prints_the_report(tmp_path, flipcheck_cli, cli_env):
    result = subprocess.run([*flipcheck_cli, "demo", "--out", str(tmp_path), "--cases", "3000", "--max-vertices", "2",
                             "--master", "local[2]"], env=cli_env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    report = Path(lines[-1].removeprefix("report: "))
    assert lines[-1].startswith("report: ") and report.name == "report.html" and report.exists()
    assert "plan/flink" in result.stdout and "barriers/flink" in result.stdout
    assert "engines: 0 violations; wiki-b: caught; exhaustive: 0 violations" in result.stdout
    pictures = list((tmp_path / "sweep" / "counterexamples").glob("plan-wiki-b-*.svg"))
    assert pictures and all(p.read_text().lstrip().startswith(("<?xml", "<svg")) for p in pictures)
    assert "proved: for every job graph with <= 2 vertices" in result.stdout

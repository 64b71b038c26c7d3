"""`flipcheck demo` (what `make demo` runs): engines clean, the seed's algorithm caught and drawn in plan and protocol, a real Flink job validated, report path printed."""

import shlex
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.flink]

# `flipcheck demo --help`'s quicker tour, run here once for the documented examples too
# (documented_commands.ASSERTED_ELSEWHERE): its exit code 0 is asserted below.
DOCUMENTED_EXAMPLE = "flipcheck demo --cases 12000 --max-vertices 2"


def test_demo_sweeps_every_suite_catches_wiki_b_and_prints_the_report(tmp_path, flipcheck_cli, cli_env):
    # The timeout only guards against a hang (180-273 s in fresh-clone CI runs beside the other
    # lane; one ran past 300 s with other work on the machine): speed is `flipcheck bench`'s.
    result = subprocess.run([*flipcheck_cli, *shlex.split(DOCUMENTED_EXAMPLE)[1:], "--out", str(tmp_path)],
                            env=cli_env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    report = Path(lines[-1].removeprefix("report: "))
    assert lines[-1].startswith("report: ") and report.name == "report.html" and report.exists()
    assert "plan/flink" in result.stdout and "barriers/flink" in result.stdout and "protocol/flip-147" in result.stdout
    # 12000 / relative cost 10: 1200 protocol schedules of seed "demo"; wiki-b-trigger first fails at case 602
    # (parallel, unaligned: since the J7 correction a finishing task has one more step to choose from).
    assert ("engines: 0 violations; plan/wiki-b: caught, protocol/wiki-b-trigger: caught; exhaustive: 0 violations"
            in result.stdout)
    for prefix in ("plan-wiki-b-", "protocol-wiki-b-trigger-"):
        pictures = list((tmp_path / "sweep" / "counterexamples").glob(prefix + "*.svg"))
        assert pictures and all(p.read_text().lstrip().startswith(("<?xml", "<svg")) for p in pictures)
    assert "proved: for every job graph with <= 2 vertices" in result.stdout
    # Every picture is listed by its path, and each listed path is a drawing.
    listed = [Path(line.rsplit(": ", 1)[1]) for line in lines if line.startswith("   ") and line.endswith(".svg")]
    assert len(listed) >= 2 and all(p.is_absolute() and p.read_text().lstrip().startswith(("<?xml", "<svg"))
                                    for p in listed)
    assert "NOT DRAWN" not in result.stdout and any(line.startswith("time: Spark start") for line in lines)
    # The real engine: one Flink 2.3 job, its log validated against the model and drawn.
    assert "4. real Flink 2.3" in result.stdout and "   conforms: " in result.stdout
    assert (tmp_path / "flink" / "flink.log").exists() and (tmp_path / "flink" / "behaviour.svg").exists()

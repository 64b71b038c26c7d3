"""`flipcheck bench sweep` runs end to end (a smoke test: numbers are measured, not asserted)."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.spark


def test_bench_sweep_reports_throughput_scaling_and_overhead_per_suite(flipcheck_cli, cli_env):
    result = subprocess.run([*flipcheck_cli, "bench", "sweep", "--budget", "0.2", "--suites", "plan,barriers", "--json"], env=cli_env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["suite"] for row in rows] == ["plan", "barriers"]
    for row in rows:
        assert row["cases"] >= 1000 and row["cases_per_second_per_core"] > 0
        assert row["local1_seconds"] > 0 and row["local2_seconds"] > 0 and row["scaling"] > 0
        assert {"overhead", "overhead_cpu", "local1_cpu_seconds", "load_average"} <= set(row)

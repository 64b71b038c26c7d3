"""Nothing lost: SIGKILL the sweep driver half-way, rerun the same command, get exactly the rows
and summary of an uninterrupted run; a different command into the same directory is refused."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from flipcheck.sweep.runner import COLUMNS, TIMING_KEYS, plan_sweep, run_sweep
from flipcheck.sweep.summary import read_cases

pytestmark = pytest.mark.spark

OPTIONS = ["--suite", "plan", "--cases", "40000", "--seed", "kill", "--batch-size", "500", "--master", "local[2]"]


def _committed(out: Path) -> int:
    return len(list((out / "cases.parquet").glob("chunk=*/_chunk.json"))) if (out / "cases.parquet").is_dir() else 0


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            children = (task / "children").read_text().split() if (task / "children").exists() else []
            for child in map(int, children):
                found.append(child)
                queue.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _rows(out):
    table = read_cases(str(out), [name for name, _ in COLUMNS if name != "seconds"])
    return sorted(table.to_pylist(), key=lambda r: (r["suite"], r["algorithm"], r["index"]))


def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path, spark, flipcheck_cli, cli_env):
    out = tmp_path / "killed"
    command = [*flipcheck_cli, "sweep", *OPTIONS, "--out", str(out)]
    total_chunks = len(plan_sweep(["plan"], None, cases=40000, seed="kill", batch_size=500).chunks())
    log = open(tmp_path / "killed.log", "w")
    driver = subprocess.Popen(command, env=cli_env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 240
    while _committed(out) < 2 and time.time() < deadline and driver.poll() is None:
        time.sleep(0.05)
    children = _descendants(driver.pid)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    log.close()
    assert driver.returncode == -signal.SIGKILL
    killed_at = _committed(out)
    assert 2 <= killed_at < total_chunks, "the driver must die with some, not all, chunks committed"
    # The JVM and the Python workers exit with the driver (the JVM watches its stdin).
    gone = time.time() + 30
    while any(_alive(pid) for pid in children) and time.time() < gone:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in children)

    resumed = subprocess.run(command, env=cli_env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"report: {out / 'report.html'}" in resumed.stdout

    reference = tmp_path / "uninterrupted"
    spec = plan_sweep(["plan"], None, cases=40000, seed="kill", batch_size=500)
    expected = run_sweep(spec, str(reference), spark=spark)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timing"]["runs"] == 2
    assert {k: v for k, v in summary.items() if k not in TIMING_KEYS} == \
        {k: v for k, v in expected.items() if k not in TIMING_KEYS}
    rows = _rows(out)
    assert len(rows) == 40000 == len({(r["id"], r["algorithm"]) for r in rows})
    assert rows == _rows(reference)
    assert not (out / ".tmp").exists()


def test_a_different_command_into_the_same_directory_is_refused(tmp_path, spark, flipcheck_cli, cli_env):
    out = tmp_path / "sweep"
    run_sweep(plan_sweep(["plan"], None, cases=500, seed="a"), str(out), spark=spark)
    before = sorted(p.name for p in (out / "cases.parquet").iterdir())
    other = subprocess.run([*flipcheck_cli, "sweep", "--suite", "plan", "--cases", "500", "--seed", "b", "--out", str(out)],
                           env=cli_env, capture_output=True, text=True, timeout=120)
    assert other.returncode == 2 and other.stdout == ""
    assert len(other.stderr.strip().splitlines()) == 1 and "holds a different sweep" in other.stderr
    assert sorted(p.name for p in (out / "cases.parquet").iterdir()) == before
    assert os.path.exists(out / "summary.json")

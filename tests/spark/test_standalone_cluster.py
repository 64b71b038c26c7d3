"""A real cluster: a Spark standalone master and one worker on 127.0.0.1 (started with the
``spark-class`` pyspark ships), a sweep against ``spark://127.0.0.1:PORT`` whose summary equals the
embedded run's; everything started here is stopped and its ports are free again."""

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from flipcheck.sweep.runner import TIMING_KEYS, plan_sweep, run_sweep

pytestmark = pytest.mark.spark


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _wait_for(path: Path, text: str, process, seconds: float = 90) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in {path} after {seconds} s:\n{path.read_text(errors='replace')[-2000:]}")


def _stop(process) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def standalone_cluster(tmp_path, cli_env):
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    assert spark_class.exists()
    ports = {name: _free_port() for name in ("master", "master_ui", "worker", "worker_ui")}
    env = {**cli_env, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
           "SPARK_WORKER_DIR": str(tmp_path / "work")}
    started = []
    try:
        master_log = tmp_path / "master.log"
        master = subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(ports["master"]), "--webui-port", str(ports["master_ui"])],
            env=env, stdout=open(master_log, "w"), stderr=subprocess.STDOUT)
        started.append(master)
        _wait_for(master_log, "I have been elected leader", master)
        url = f"spark://127.0.0.1:{ports['master']}"
        worker_log = tmp_path / "worker.log"
        worker = subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--port", str(ports["worker"]), "--webui-port", str(ports["worker_ui"]), "--cores", "2",
             "--memory", "1g", "--work-dir", str(tmp_path / "work"), url],
            env=env, stdout=open(worker_log, "w"), stderr=subprocess.STDOUT)
        started.append(worker)
        _wait_for(worker_log, "Successfully registered with master", worker)
        yield url, master_log
    finally:
        for process in reversed(started):
            _stop(process)
    for name, port in ports.items():
        deadline = time.time() + 20
        while not _port_is_free(port) and time.time() < deadline:
            time.sleep(0.2)
        assert _port_is_free(port), f"{name} port {port} still in use"


def test_sweep_on_a_standalone_cluster_equals_the_local_run(standalone_cluster, tmp_path, spark, flipcheck_cli, cli_env):
    url, master_log = standalone_cluster
    out = tmp_path / "cluster"
    options = ["--suite", "plan", "--variant", "wiki-b", "--cases", "3000", "--seed", "cluster", "--batch-size", "600"]
    result = subprocess.run([*flipcheck_cli, "sweep", *options, "--master", url, "--out", str(out)],
                            env=cli_env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr[-3000:]  # wiki-b's violations, found on the cluster
    assert "Registering app flipcheck sweep" in master_log.read_text()  # it really ran on the cluster
    on_cluster = json.loads((out / "summary.json").read_text())
    local = run_sweep(plan_sweep(["plan"], "wiki-b", cases=3000, seed="cluster", batch_size=600),
                      str(tmp_path / "local"), spark=spark)
    assert {k: v for k, v in on_cluster.items() if k not in TIMING_KEYS} == \
        {k: v for k, v in local.items() if k not in TIMING_KEYS}
    assert on_cluster["cases"] == 3000 and on_cluster["violations"] > 0 and on_cluster["counterexamples"]
    assert os.path.exists(out / "report.html")

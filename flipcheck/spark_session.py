"""Starting Spark for flipcheck: embedded ``local[*]`` by default, any master URL, quiet, no open UI.

Every session flipcheck starts:

* has the Spark UI disabled (``spark.ui.enabled=false``) and no console progress bar;
* in local modes, or against a master on the loopback interface, binds the driver to
  127.0.0.1 (``spark.driver.host`` / ``spark.driver.bindAddress``, ``SPARK_LOCAL_IP``) and runs
  executors with this Python (``PYSPARK_PYTHON``, unless already set), so nothing listens on
  a public interface and executors import this flipcheck;
* sends the JVM's console output (log4j, warnings) to a log file instead of the terminal, and
  keeps the log level at ERROR.

On a real cluster (``spark://host``, ``yarn``, ``k8s://``) the driver address and the executors'
Python are the cluster's business (see docs/sweep.md).

>>> is_local_master("local[*]"), is_local_master("spark://127.0.0.1:7077"), is_local_master("yarn")
(True, True, False)
>>> is_local_master("local[2,3]")
True
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager

__all__ = ["DEFAULT_MASTER", "is_local_master", "start_spark", "stop_spark", "valid_master"]

DEFAULT_MASTER = "local[*]"
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_LOCAL = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?")
_MASTER = re.compile(r"(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|spark://\S+|yarn|k8s://\S+|mesos://\S+)")


def valid_master(master: str) -> bool:
    """A master URL Spark understands (checked before a JVM is started, for a one-line error)."""
    return bool(_MASTER.fullmatch(master))


def is_local_master(master: str) -> bool:
    """Local mode, or a standalone master on this machine's loopback interface."""
    if _LOCAL.fullmatch(master) or master.startswith("local-cluster["):
        return True
    if master.startswith("spark://"):
        hosts = [part.rsplit(":", 1)[0] for part in master[len("spark://"):].split(",")]
        return all(host in _LOOPBACK for host in hosts)
    return False


@contextmanager
def _stderr_to(path: str | None):
    """File descriptor 2 points at ``path`` while the JVM starts, so the JVM (and the Python
    workers it forks) inherit the log file as their stderr."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)


def start_spark(master: str = DEFAULT_MASTER, app_name: str = "flipcheck", log_path: str | None = None,
                conf: dict | None = None):
    """A new SparkSession for ``master`` configured as the module docstring says."""
    from pyspark.sql import SparkSession

    local = is_local_master(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.python.worker.reuse": "true",
    }
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    settings.update(conf or {})
    settings["spark.ui.enabled"] = "false"  # never an open port, whatever --conf says
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _stderr_to(log_path):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def stop_spark(spark) -> None:
    """Stop the session (and its executors); the JVM gateway ends with this process."""
    spark.stop()

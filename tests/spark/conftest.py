"""One embedded Spark session for the in-process Spark tests (``local[2,2]``: two cores, and a
failed task is retried once, which the task-retry test relies on)."""

import os
import sys

import pytest

MASTER = "local[2,2]"


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from flipcheck.sweep.spark import start_spark, stop_spark

    session = start_spark(MASTER, "flipcheck tests", log_path=str(tmp_path_factory.mktemp("spark") / "spark.log"))
    yield session
    stop_spark(session)


@pytest.fixture
def flipcheck_cli():
    """argv prefix running the CLI of this checkout in a subprocess."""
    return [sys.executable, "-m", "flipcheck.cli"]


@pytest.fixture
def cli_env():
    """The environment for CLI subprocesses: no Spark settings inherited from this process."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}

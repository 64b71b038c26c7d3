"""Starting Spark for flipcheck: embedded ``local[*]`` by default, any master URL, quiet, no open UI.

Every session flipcheck starts:

* has the Spark UI disabled (``spark.ui.enabled=false``) and no console progress bar;
* in local modes, or against a master on the loopback interface, binds the driver to
  127.0.0.1 (``spark.driver.host`` / ``spark.driver.bindAddress``, ``SPARK_LOCAL_IP``) and runs
  executors with this Python (``PYSPARK_PYTHON``, unless already set), so nothing listens on
  a public interface and executors import this flipcheck; its driver JVM runs the JIT's first
  tier only (``spark.driver.extraJavaOptions``, unless ``--conf`` sets it): it only schedules;
* sends the JVM's console output (log4j, warnings) to a log file instead of the terminal, and
  keeps the log level at ERROR.

On a real cluster (``spark://host``, ``yarn``, ``k8s://``) the driver address and the executors'
Python are the cluster's business (see docs/sweep.md).

Master URLs are checked before a JVM starts, with the rules Spark applies when it starts
(:func:`master_problem`), so a bad ``--master`` is one line, not a JVM stack trace. A standalone
master (``spark://``) must answer within :data:`CONNECT_SECONDS`: Spark itself retries for a
minute, silently, before it gives up.

>>> is_local_master("local[*]"), is_local_master("spark://127.0.0.1:7077"), is_local_master("yarn")
(True, True, False)
>>> is_local_master("local[2,3]")
True
>>> master_problem("local[0]")
'Spark runs no task with 0 threads; use local[N] with N >= 1, or local[*]'
>>> standalone_addresses("spark://a.example:7077,b.example:7078")
[('a.example', 7077), ('b.example', 7078)]
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from flipcheck.errors import UsageError

__all__ = [
    "CONNECT_SECONDS",
    "DEFAULT_MASTER",
    "LOCAL_DRIVER_JIT",
    "check_master",
    "is_local_master",
    "master_problem",
    "spark_error_line",
    "standalone_addresses",
    "start_spark",
    "stop_spark", "show_status"]

DEFAULT_MASTER = "local[*]"
# The local driver JVM's JIT, first tier only (measured 2026-11-26: `sweep --suite all --cases 500`
# took 23.2-24.2 s of the machine's CPU before, 15.8-17.8 s after).
LOCAL_DRIVER_JIT = "-XX:TieredStopAtLevel=1"
# How long a spark:// master has to answer and accept the application (Spark's own
# StandaloneAppClient waits 3 x 20 s before "All masters are unresponsive").
CONNECT_SECONDS = 15.0
# Starting the JVM, and the SparkContext's own set-up after it, is not the master's fault: a slow
# start still leaves this long. 5 s was too short on a busy driver machine: at load 14 on 2 cores
# a standalone master that was up and well was refused (tests/spark/test_standalone_cluster.py).
_REGISTER_AFTER_JVM_SECONDS = 15.0
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_JAVA_INT_MAX = 2**31 - 1

# Spark's own patterns (org.apache.spark.SparkMasterRegex, matched whole by SparkContext.createTaskScheduler).
_LOCAL_N = re.compile(r"local\[([0-9]+|\*)\]")
_LOCAL_N_FAILURES = re.compile(r"local\[([0-9]+|\*)\s*,\s*([0-9]+)\]")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*]")
_SPARK = re.compile(r"spark://(.*)", re.DOTALL)
_K8S = re.compile(r"k8s://(.*)", re.DOTALL)
# java.net.URI's server authority, which Utils.extractHostPortFromSparkUrl requires of each master.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST_PORT = re.compile(rf"(?P<host>\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9._~-]+)?\]|{_LABEL}(?:\.{_LABEL})*\.?):(?P<port>[0-9]+)")
_FORMS = "local, local[N], local[*], local[N,F], local-cluster[W,C,M], spark://HOST:PORT[,HOST:PORT...], yarn, k8s://URL"
_MEMORY = re.compile(r"([0-9]+)\s*([kmgtp]?)b?", re.IGNORECASE)
_MEMORY_UNIT_MIB = {"k": 1 / 1024, "m": 1, "": 1, "g": 1024, "t": 1024**2, "p": 1024**3}


def _spark_major_version() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("pyspark").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 4


def _java_int(text: str) -> int | None:
    """``text.toInt`` as Spark does it: None where Scala would throw NumberFormatException."""
    value = int(text)
    return value if value <= _JAVA_INT_MAX else None


def _task_cpus(conf: dict) -> int:
    text = str(conf.get("spark.task.cpus", "1")).strip()
    return int(text) if text.isdigit() and text.isascii() else 1


def _executor_memory_mib(conf: dict) -> int | None:
    """spark.executor.memory in MiB (Spark's default unit), or None when it does not parse."""
    match = _MEMORY.fullmatch(str(conf.get("spark.executor.memory", "1g")).strip())
    if not match or not match.group(1).isascii():
        return None
    return int(int(match.group(1)) * _MEMORY_UNIT_MIB[match.group(2).lower()])


def _cores_problem(cores: int, what: str, conf: dict) -> str | None:
    # SparkContext.createTaskScheduler -> checkResourcesPerTask -> ResourceUtils.validateTaskCpusLargeEnough
    needed = _task_cpus(conf)
    if cores < needed:
        if cores == 0:
            return f"Spark runs no task with 0 {what}"
        return f"{cores} {what} are fewer than spark.task.cpus={needed}"
    return None


def standalone_addresses(master: str) -> list[tuple[str, int]]:
    """The (host, port) of each master of a ``spark://`` URL (several for high availability);
    ValueError naming the part that is not ``HOST:PORT``."""
    match = _SPARK.fullmatch(master)
    if not match:
        raise ValueError("not a spark:// URL")
    parts = match.group(1).split(",")
    while len(parts) > 1 and parts[-1] == "":  # Java's String.split drops trailing empty strings
        parts.pop()
    addresses = []
    for part in parts:
        found = _HOST_PORT.fullmatch(part)
        if not found:
            raise ValueError(f"{part!r} is not HOST:PORT" if part else "a master is missing (expected HOST:PORT)")
        host, port = found.group("host"), int(found.group("port"))
        labels = host.rstrip(".").split(".")
        if host.startswith("["):
            try:
                ipaddress.IPv6Address(host[1:-1].split("%")[0])
            except ValueError:
                raise ValueError(f"{host!r} is not an IPv6 address") from None
            host = host[1:-1]
        elif len(labels) > 1 and labels[-1][0].isdigit():
            try:  # dotted digits: an IPv4 address or nothing (java.net.URI)
                ipaddress.IPv4Address(host.rstrip("."))
            except ValueError:
                raise ValueError(f"{host!r} is neither a host name nor an IPv4 address") from None
        if not 1 <= port <= 65535:
            raise ValueError(f"port {port} of {part!r} is not in 1..65535")
        addresses.append((host, port))
    return addresses


def master_problem(master: str, conf: dict | None = None, environ=None) -> str | None:
    """Why Spark would refuse ``master`` when it starts (None: it would accept it).

    The rules are Spark's own (4.x; Mesos only before 4): SparkSubmit accepts ``yarn`` or a URL
    starting with spark, k8s or local; SparkSubmitArguments wants HADOOP_CONF_DIR or
    YARN_CONF_DIR for yarn; Utils.checkAndGetK8sMasterUrl wants k8s:// with an http(s) API
    server; SparkContext.createTaskScheduler matches the SparkMasterRegex patterns, refuses
    local[0] and fewer cores than spark.task.cpus, and local-cluster workers with less memory
    than spark.executor.memory; each spark:// master must be HOST:PORT
    (Utils.extractHostPortFromSparkUrl). Beyond Spark: local-cluster[0,...] would wait forever
    for an executor, so it is refused too.
    """
    conf = conf or {}
    environ = os.environ if environ is None else environ
    if master == "local":
        return None
    if match := _LOCAL_N.fullmatch(master):
        threads = match.group(1)
        if threads == "*":
            return None
        count = _java_int(threads)
        if count is None:
            return f"{threads} threads is not a number Spark can hold (at most {_JAVA_INT_MAX})"
        if count == 0:
            return "Spark runs no task with 0 threads; use local[N] with N >= 1, or local[*]"
        return _cores_problem(count, "threads", conf)
    if match := _LOCAL_N_FAILURES.fullmatch(master):
        threads, failures = match.groups()
        count = None if threads == "*" else _java_int(threads)
        if threads != "*" and count is None:
            return f"{threads} threads is not a number Spark can hold (at most {_JAVA_INT_MAX})"
        if _java_int(failures) is None:
            return f"{failures} task failures is not a number Spark can hold (at most {_JAVA_INT_MAX})"
        return None if count is None else _cores_problem(count, "threads", conf)
    if match := _LOCAL_CLUSTER.fullmatch(master):
        workers, cores, memory = (_java_int(group) for group in match.groups())
        if None in (workers, cores, memory):
            return f"a number in local-cluster[WORKERS,CORES,MEMORY_MIB] exceeds {_JAVA_INT_MAX}"
        if workers == 0:
            return "local-cluster with 0 workers would wait forever for an executor"
        if problem := _cores_problem(cores, "cores per worker", conf):
            return problem
        wanted = _executor_memory_mib(conf)
        if wanted is not None and memory < wanted:
            return f"workers of {memory} MiB cannot hold an executor of spark.executor.memory={wanted} MiB"
        return None
    if _SPARK.fullmatch(master):
        try:
            standalone_addresses(master)
        except ValueError as error:
            return f"{error} (spark://HOST:PORT, several masters separated by commas)"
        return None
    if master == "yarn":
        if not (environ.get("HADOOP_CONF_DIR") or environ.get("YARN_CONF_DIR")):
            return "yarn needs HADOOP_CONF_DIR or YARN_CONF_DIR set to the cluster's configuration directory"
        return None
    if match := _K8S.fullmatch(master):
        return _k8s_problem(match.group(1))
    if master.startswith("mesos://"):
        if _spark_major_version() < 4:
            return None
        return "Mesos support was removed in Spark 4; use spark://, yarn or k8s://"
    return f"not a Spark master URL (one of: {_FORMS})"


def _k8s_problem(api_server: str) -> str | None:
    from urllib.parse import urlsplit

    # Utils.checkAndGetK8sMasterUrl: no scheme means https; otherwise http or https only.
    if any(ch.isspace() or not ch.isprintable() for ch in api_server):
        return "the Kubernetes API server URL holds a space or a control character"
    url = api_server if "://" in api_server else f"https://{api_server}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        return f"{'k8s://' + api_server!r} is not a URL ({error})"
    if parts.scheme.lower() not in ("http", "https"):
        return f"Kubernetes API server scheme {parts.scheme!r} is not http or https"
    if not parts.hostname:
        return "k8s:// needs the Kubernetes API server, e.g. k8s://https://HOST:6443"
    return None


def check_master(master: str, conf: dict | None = None) -> None:
    """UsageError naming ``--master`` and the problem when Spark would refuse ``master``."""
    problem = master_problem(master, conf)
    if problem:
        raise UsageError(f"--master {master!r}: {problem}")


def is_local_master(master: str) -> bool:
    """Local mode, or a standalone master on this machine's loopback interface."""
    if master == "local" or _LOCAL_N.fullmatch(master) or _LOCAL_N_FAILURES.fullmatch(master) \
            or master.startswith("local-cluster["):
        return True
    if master.startswith("spark://"):
        try:
            return all(host in _LOOPBACK for host, _ in standalone_addresses(master))
        except ValueError:
            return False
    return False


def spark_error_line(error: BaseException) -> str:
    """The line of a Py4J / PySpark error that says what went wrong (not "An error occurred
    while calling ..."), at most 300 characters."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("An error occurred while calling")]
    first = (useful or lines or [type(error).__name__])[0]
    return first.removeprefix(": ")[:300]


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


@contextmanager
def show_status(stream, text: str | None):
    """Say what is being waited for. On a terminal the line is erased afterwards (what follows,
    an error or the progress bar, takes its place); in a log it stays."""
    tty = hasattr(stream, "isatty") and stream.isatty()
    if text:
        stream.write(text if tty else text + "\n")
        stream.flush()
    try:
        yield
    finally:
        if text and tty:
            stream.write("\r\033[K")
            stream.flush()


def _connect_problem(address: tuple[str, int], timeout: float) -> str | None:
    """Why nothing accepts a TCP connection at ``address`` (None: something does)."""
    try:
        with socket.create_connection(address, timeout=timeout):
            return None
    except socket.timeout:
        return f"no answer within {timeout:.0f} s"
    except socket.gaierror:
        return "unknown host"
    except OSError as error:
        return (error.strerror or str(error)).lower()


def _unreachable(master: str, timeout: float) -> str | None:
    """None when at least one master of ``master`` accepts a TCP connection; else why none does."""
    addresses = standalone_addresses(master)
    with ThreadPoolExecutor(max_workers=len(addresses)) as pool:
        problems = list(pool.map(lambda address: _connect_problem(address, timeout), addresses))
    if any(problem is None for problem in problems):
        return None
    return "; ".join(f"{host}:{port} {problem}" for (host, port), problem in zip(addresses, problems))


class _NotAccepted(Exception):
    """No master accepted the application in time."""


def _create_within(builder, deadline: float):
    """``builder.getOrCreate()``, or _NotAccepted when ``deadline`` (time.monotonic) has passed,
    the JVM has been up for at least _REGISTER_AFTER_JVM_SECONDS and the SparkContext is still
    not created (its constructor waits until a master registers the application). The rest of
    the set-up (the SparkSession) is not the master's business and is waited for. A refused
    attempt is left behind in a daemon thread: the caller exits, and the JVM ends with this
    process."""
    from pyspark import SparkContext

    outcome = {}

    def create():
        try:
            outcome["spark"] = builder.getOrCreate()
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = error

    thread = threading.Thread(target=create, name="flipcheck-spark-start", daemon=True)
    thread.start()
    jvm_up = None
    while thread.is_alive():
        now = time.monotonic()
        if jvm_up is None and SparkContext._gateway is not None:
            jvm_up = now
        context = SparkContext._active_spark_context
        if context is not None and getattr(context, "_jsc", None) is not None:
            thread.join()
            break
        if jvm_up is not None and now >= max(deadline, jvm_up + _REGISTER_AFTER_JVM_SECONDS):
            raise _NotAccepted
        thread.join(0.1)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["spark"]


def start_spark(master: str = DEFAULT_MASTER, app_name: str = "flipcheck", log_path: str | None = None,
                conf: dict | None = None, status=None):
    """A new SparkSession for ``master`` configured as the module docstring says.

    UsageError (one line naming the master) when Spark refuses ``master``, when a spark://
    master does not answer within :data:`CONNECT_SECONDS` (``status``, default stderr, hears
    what is being waited for), or when Spark fails to start.
    """
    check_master(master, conf)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    existed = SparkContext._active_spark_context is not None   # getOrCreate will hand us that one

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
        # The local JVM only schedules and moves rows (the cases run in Python workers): the JIT's
        # first tier (LOCAL_DRIVER_JIT); --conf overrides it.
        settings["spark.driver.extraJavaOptions"] = LOCAL_DRIVER_JIT
    settings.update(conf or {})
    settings["spark.ui.enabled"] = "false"  # never an open port, whatever --conf says
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    details = f" (details: {log_path})" if log_path else ""
    standalone = master.startswith("spark://")
    deadline = time.monotonic() + CONNECT_SECONDS
    # Probed before the status line: a closed port fails at once, in the one line of a usage error.
    if standalone and (unreachable := _unreachable(master, timeout=CONNECT_SECONDS / 3)):
        raise UsageError(f"--master {master!r}: no Spark master reachable: {unreachable}")
    with show_status(status or sys.stderr, f"connecting to Spark master {master} (up to {CONNECT_SECONDS:.0f} s)..."
                 if standalone else None):
        try:
            with _stderr_to(log_path):
                spark = _create_within(builder, deadline) if standalone else builder.getOrCreate()
        except _NotAccepted:
            raise UsageError(f"--master {master!r}: no Spark master accepted the application within "
                             f"{CONNECT_SECONDS:.0f} s{details}") from None
        except Exception as error:  # noqa: BLE001 - Py4J / PySpark start-up errors: one line, not a JVM stack trace
            if type(error).__module__.split(".")[0] not in ("py4j", "pyspark"):
                raise
            raise UsageError(f"--master {master!r}: Spark did not start: {spark_error_line(error)}{details}") from None
    spark.sparkContext.setLogLevel("ERROR")
    _hold(spark, existed)
    return spark


# id(SparkContext) -> how many start_spark calls that got it are not stopped yet, plus one for a
# session the caller started itself. getOrCreate hands every caller in a process the same session:
# a command run in-process (flipcheck.sweep in a notebook, a test) must not stop its caller's.
_HOLDERS: dict[int, int] = {}


def _hold(spark, existed: bool) -> None:
    key = id(spark.sparkContext)
    _HOLDERS[key] = _HOLDERS.get(key, 1 if existed else 0) + 1


def stop_spark(spark) -> None:
    """Stop the session (and its executors) unless someone else still holds it: another
    :func:`start_spark` that got the same session, or the code that made it before flipcheck ran.
    The JVM gateway ends with this process."""
    key = id(spark.sparkContext)
    left = _HOLDERS.get(key, 1) - 1
    if left > 0:
        _HOLDERS[key] = left
        return
    _HOLDERS.pop(key, None)
    spark.stop()

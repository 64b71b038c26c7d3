"""Many real jobs per JVM: a long-lived job server (``flipcheck/flink/java/JobServer.java``).

A job of its own JVM (:func:`flipcheck.flink.engine.run_graph` without a server) pays 2-4 s of JVM
and MiniCluster start. :class:`JobServer` starts one JVM with one MiniCluster (every port on
127.0.0.1, no web UI) on first use and hands it jobs one after the other: for each, the path of the
``spec.json`` that :func:`~flipcheck.flink.engine.run_graph` wrote, on the JVM's stdin (no network
listener of its own; the JVM reads JSON only). The JVM writes each job's ``flink.log``,
``plan.json`` and output into that job's folder, as a JVM of its own would, so ``conform`` reads
it the same way; its ``FLIPCHECK`` lines go to the job's ``jvm.out``.

What a reused cluster changes, and why the model still sees one run per job, is in
docs/conformance.md ("Running real jobs"): each job has its own log file (attached to log4j's
root logger only while the job runs, and jobs never overlap), its own checkpoint ids from 1, the
job builder's static fault state reset; the cluster starts again when a job needs another one.

Failures: a job that does not end within its time limit, or a JVM that dies, raise
:class:`~flipcheck.flink.engine.FlinkRunError` (the case is an error row, never dropped) and the
JVM is killed; the next job starts a new one. A server that cannot start (a release the server
does not compile against, no JDK) says so in one line and :meth:`JobServer.accepts` refuses every
job, so each gets a JVM of its own. The JVM dies with this process: it ends at the end of its
stdin, and on Linux the kernel kills it when its parent dies (``PR_SET_PDEATHSIG``).

:func:`shared_server` is the one server of this process (a Spark Python worker runs many cases,
one after the other, through it); :data:`DISABLE_ENV` set to ``0`` turns servers off.

Example (no JVM: what a server accepts)
-------
>>> server = JobServer()
>>> server.accepts({"local_recovery": True, "batch": None, "taskmanagers": 2})
False
>>> server.eligible({"local_recovery": False, "batch": None, "taskmanagers": 1})
True
"""

from __future__ import annotations

import atexit
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from flipcheck.child_processes import die_with_parent
from flipcheck.errors import UsageError
from flipcheck.flink.engine import (DEBUG_LOGGERS, HEAP, JAVA_SOURCE, JVM_OPENS, LOG_LAYOUT, FlinkInstall,
                                    FlinkRunError, compile_job, flink_lib, java_tools, log4j_properties, reported_line)

__all__ = ["JobServer", "SERVER_SOURCE", "SERVER_CLASS", "DISABLE_ENV", "START_TIMEOUT_SECONDS", "shared_server",
           "close_shared_servers"]

SERVER_CLASS = "JobServer"
SERVER_SOURCE = JAVA_SOURCE.with_name(f"{SERVER_CLASS}.java")
DISABLE_ENV = "FLIPCHECK_JOB_SERVER"
# Starting the JVM until it reads its first job; a JVM that is not up by then is not coming.
START_TIMEOUT_SECONDS = 60


class JobServer:
    """One long-lived JVM running jobs of release ``flink`` (default: the venv's), started on
    first use; ``notice`` hears the one line that says the server cannot start."""

    def __init__(self, flink: FlinkInstall | None = None, notice=None):
        self.flink = flink
        self.notice = notice or (lambda line: print(line, file=sys.stderr, flush=True))
        self.unavailable: str | None = None   # why the server cannot start, once it failed to
        self.starts = 0                       # JVMs started (1 unless one was killed or died)
        self.jobs = 0
        self._process: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._workdir: Path | None = None

    # -- which jobs -----------------------------------------------------------------------------

    @staticmethod
    def eligible(spec: dict) -> bool:
        """Whether JobServer.java runs jobs like ``spec``: one TaskManager, neither task-local
        recovery nor a batch job (those change the cluster itself)."""
        return not spec.get("local_recovery") and spec.get("batch") is None and spec.get("taskmanagers", 1) == 1

    def accepts(self, spec: dict, flink: FlinkInstall | None = None) -> bool:
        """Whether this server runs ``spec`` on release ``flink``; starts the JVM when needed.
        False for an ineligible job, another release, or a server that cannot start."""
        if not self.eligible(spec) or os.environ.get(DISABLE_ENV) == "0":
            return False
        if flink is not None and self.flink is not None and (flink.version, flink.lib) != (self.flink.version, self.flink.lib):
            return False
        if self.flink is None:
            self.flink = flink
        return self._ensure_started()

    # -- the JVM --------------------------------------------------------------------------------

    def _ensure_started(self) -> bool:
        if self.unavailable is not None:
            return False
        if self._process is not None and self._process.poll() is None:
            return True
        try:
            self._start()
            return True
        except (FlinkRunError, UsageError, OSError) as error:
            self.unavailable = " ".join(str(error).split())
            self.notice(f"flipcheck: the job server cannot start ({self.unavailable}): one JVM per job")
            self._stop()
            return False

    def command(self, workdir: Path) -> list[str]:
        """The server JVM's command line (compiling JobServer.java on first use); its log4j
        properties go into ``workdir``."""
        java, javac = java_tools()
        if self.flink is None:
            version, lib = flink_lib()
            self.flink = FlinkInstall(version, lib, "venv")
        version, lib = self.flink.version, self.flink.lib
        classes, _ = compile_job(javac, version, lib, (SERVER_SOURCE,), f"{SERVER_CLASS}.class")
        properties = workdir / "log4j2.properties"
        properties.write_text(log4j_properties(None, DEBUG_LOGGERS))
        return [java, HEAP, *JVM_OPENS, f"-Dlog4j.configurationFile={properties}",
                f"-Dflipcheck.log.pattern={LOG_LAYOUT}", "-cp", f"{classes}{os.pathsep}{lib / '*'}", SERVER_CLASS]

    def _start(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="flipcheck-job-server-"))
        command = self.command(self._workdir)
        self._lines = queue.Queue()
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True, bufsize=1,
                                         preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        self.starts += 1
        threading.Thread(target=self._pump, args=(self._process, self._lines), daemon=True).start()
        self._await(("server",), START_TIMEOUT_SECONDS, [])
        # log4j has read its configuration: nothing is left behind if this process is killed.
        shutil.rmtree(self._workdir, ignore_errors=True)
        self._workdir = None

    @staticmethod
    def _pump(process: subprocess.Popen, lines: queue.Queue) -> None:
        for line in process.stdout:
            lines.put(line)
        lines.put(None)  # the JVM closed its stdout: it exited

    def _await(self, keys: tuple, timeout: float, transcript: list) -> tuple[dict, dict]:
        """Read the JVM's lines until it reports one of ``keys``: ``(reported, marks)``;
        FlinkRunError (the JVM killed) when it does not within ``timeout`` seconds or exits."""
        deadline = time.perf_counter() + timeout
        reported: dict[str, str] = {}
        marks: dict[str, float] = {}
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                self._stop()
                raise FlinkRunError(f"the job server reported nothing for {timeout:g} s: its JVM was killed") from None
            if line is None:
                code = self._process.wait() if self._process is not None else None
                self._stop()
                tail = [t for t in transcript if t.strip()]
                raise FlinkRunError(f"the job server's JVM exited with code {code}: "
                                    f"{tail[-1].strip() if tail else 'no output'}")
            transcript.append(line)
            found = reported_line(line)
            if found is not None:
                reported[found[0]] = found[1]
                marks[found[0]] = time.perf_counter()
                if found[0] in keys:
                    return reported, marks

    def run(self, spec_path: Path, out: Path, timeout_seconds: float) -> tuple[dict, dict]:
        """Run the job of ``spec_path`` (written into ``out``): what the JVM reported and when
        (``perf_counter``), as :func:`flipcheck.flink.engine.run_graph` reads it."""
        if not self._ensure_started():
            raise FlinkRunError(f"the job server cannot start: {self.unavailable}")
        transcript: list[str] = []
        self.jobs += 1
        try:
            self._process.stdin.write(f"{Path(spec_path).resolve()}\n")
            self._process.stdin.flush()
            reported, marks = self._await(("end",), timeout_seconds, transcript)
        except (BrokenPipeError, OSError) as error:
            self._stop()
            raise FlinkRunError(f"the job server's JVM is gone ({error})") from None
        finally:
            (out / "jvm.out").write_text("".join(transcript))
        if "result" not in reported:
            raise FlinkRunError(f"the job server could not run the job: {reported.get('error', 'no result')} "
                                f"(see {out / 'jvm.out'})")
        return reported, marks

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    @property
    def pid(self) -> int | None:
        """The running JVM's process id (None: none runs)."""
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    def close(self) -> None:
        """Ask the JVM to end (its cluster closes), and kill it if it does not soon."""
        process = self._process
        if process is not None and process.poll() is None:
            try:
                process.stdin.write("quit\n")
                process.stdin.flush()
                process.wait(timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._stop()

    def __enter__(self) -> "JobServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_SHARED: dict = {}


def shared_server(flink: FlinkInstall | None = None) -> JobServer:
    """This process's job server for release ``flink`` (default: the venv's), closed at exit."""
    key = None if flink is None else (flink.version, str(flink.lib))
    if key not in _SHARED:
        if not _SHARED:
            atexit.register(close_shared_servers)
        _SHARED[key] = JobServer(flink)
    return _SHARED[key]


def close_shared_servers() -> None:
    for server in list(_SHARED.values()):
        server.close()
    _SHARED.clear()

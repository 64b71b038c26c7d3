"""Run ``flipcheck`` commands in forked children with a memory limit and a wall-clock timeout.

A server process imports flipcheck (and z3, pyspark's Python side, ...) once; for each request
it forks a child that sets ``RLIMIT_AS``, points stdout and stderr at files (stdout strict
UTF-8, like a UTF-8 terminal), calls ``flipcheck.cli.main(argv)`` and exits with its code. A
fork costs milliseconds where a fresh interpreter costs a second, so hypothesis can afford
many examples; the server is single-threaded, so forking it is safe. The parent reports the
exit code, both streams, whether the wall timeout killed the child, its signal, and its peak
resident memory (``wait4``'s ``ru_maxrss``).

``stop_at`` names functions (``module:attribute``) that begin the real work of a command
(a Spark session, a verification run); the child replaces them with a stub that exits 0 with
``STOPPED_BEFORE_WORK`` on stderr, so that commands which start Spark or run for minutes are
driven exactly up to the end of their option checking.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

__all__ = ["CliResult", "ForkedCli", "STOPPED", "MEMORY_LIMIT"]

STOPPED = "STOPPED_BEFORE_WORK"
MEMORY_LIMIT = 2 * 1024**3  # address space per command: an honest bound, far above any sane run
_PRELOAD = ("flipcheck.cli", "z3", "pyspark", "pyarrow", "networkx", "graphviz", "flipcheck.properties.protocol_explore",
            "flipcheck.properties.z3_plan", "flipcheck.render.core", "flipcheck.designs.suite", "flipcheck.designs.mutants",
            "flipcheck.designs", "flipcheck.sweep.runner", "flipcheck.flink.import_plan", "flipcheck.properties.barriers_replay")


@dataclass
class CliResult:
    argv: list
    code: int | None
    out: str
    err: str
    timed_out: bool
    signal: int | None
    peak_mb: float

    def describe(self) -> str:
        return (f"argv={self.argv!r} code={self.code} signal={self.signal} timed_out={self.timed_out} "
                f"peak={self.peak_mb:.0f} MB\nstderr: {self.err[-3000:]!r}\nstdout: {self.out[:500]!r}")


def _child(request: dict, out_path: str, err_path: str) -> None:
    """In the forked child: limit, redirect, stub, run; never returns."""
    code = 70
    try:
        import io
        import resource

        os.chdir(request["cwd"])
        resource.setrlimit(resource.RLIMIT_AS, (request["memory"], request["memory"]))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="strict")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        for target in request["stop_at"]:
            module_name, attribute = target.split(":")
            module = __import__(module_name, fromlist=[attribute])

            def stop(*_args, **_kwargs):
                sys.stdout.flush()
                sys.stderr.write(STOPPED + "\n")
                sys.stderr.flush()
                os._exit(0)

            setattr(module, attribute, stop)
        from flipcheck.cli import main

        try:
            result = main(request["argv"])
        except SystemExit as stop_:
            result = stop_.code
        code = result if isinstance(result, int) else (0 if result is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the traceback is the finding
        import traceback

        try:
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            os.write(2, b"Traceback (unprintable)\n")
        code = 1
    os._exit(code)


def _run(request: dict, scratch: str) -> dict:
    out_path, err_path = os.path.join(scratch, "out"), os.path.join(scratch, "err")
    pid = os.fork()
    if pid == 0:
        _child(request, out_path, err_path)
    deadline = time.monotonic() + request["timeout"]
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            timed_out = True
            break
        time.sleep(0.002)
    with open(out_path, "rb") as out, open(err_path, "rb") as err:
        streams = [out.read(1 << 20).decode("utf-8", "backslashreplace"), err.read(1 << 20).decode("utf-8", "backslashreplace")]
    return {"code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "out": streams[0], "err": streams[1], "timed_out": timed_out, "peak_mb": usage.ru_maxrss / 1024}


def serve() -> None:
    """Answer one JSON request per stdin line with one JSON result line."""
    import importlib
    import tempfile

    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from flipcheck.cli import build_parser

    build_parser()  # imports every command module
    scratch = tempfile.mkdtemp(prefix="flipcheck-forked-")
    replies = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        replies.write(json.dumps(_run(json.loads(line), scratch)) + "\n")
        replies.flush()


class ForkedCli:
    """The client: ``run(argv, cwd=..., timeout=..., stop_at=...)`` -> :class:`CliResult`."""

    def __init__(self):
        self._server = subprocess.Popen([sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, encoding="utf-8", errors="surrogatepass")

    def run(self, argv: list, cwd: str, timeout: float = 30.0, stop_at: tuple = (),
            memory: int = MEMORY_LIMIT) -> CliResult:
        request = {"argv": list(argv), "cwd": cwd, "timeout": timeout, "stop_at": list(stop_at), "memory": memory}
        self._server.stdin.write(json.dumps(request) + "\n")
        self._server.stdin.flush()
        reply = self._server.stdout.readline()
        if not reply:
            raise RuntimeError("the forked-CLI server died")
        return CliResult(argv=list(argv), **json.loads(reply))

    def close(self) -> None:
        self._server.stdin.close()
        self._server.wait(timeout=30)


if __name__ == "__main__":
    serve()

"""``flipcheck bench conform``: how fast ``flipcheck conform`` validates a long real Flink log.

One real job (:data:`~flipcheck.bench.flink.BENCH_GRAPH` of ``bench flink``: source -> map ->
two-phase-commit sink, parallelism 2) runs with enough records, and a checkpoint every 20 ms,
that its log reaches the asked number of lines (about 44 lines per record of a source subtask,
measured: 2,040 records -> 89,989 lines). Its log is then validated once, and the time is taken
when a quarter, a half, three quarters and all of the log's events are explained: equal
microseconds per line at the four points mean the validation is linear in the log's length.
Reading the log (parsing) is timed on its own.

:func:`bench_rejection` then validates the run's log as it is and with each of
:data:`~flipcheck.flink.suite.ALTERATIONS`: rejecting a bad log should take no longer than
accepting the good one (issue 23: at most 3 times, never more than 20 s). It also runs on a
stored run directory, with no JVM (``flipcheck bench conform --dir DIR``).

>>> rows = bench_rejection(Path("tests/fixtures/flink_runs/union-state"), alterations=("late-ack-deleted",))
>>> [(r.alteration, r.conforms) for r in rows]
[('(none)', True), ('late-ack-deleted', False)]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import NamedTuple

__all__ = ["LINES_PER_RECORD", "INTERVAL_MS", "ConformTiming", "RejectionTiming", "bench_conform", "bench_rejection",
           "report_lines", "rejection_lines"]

LINES_PER_RECORD = 44
INTERVAL_MS = 20


class ConformTiming(NamedTuple):
    lines: int          # log lines up to the last event explained
    events: int         # observations explained
    seconds: float      # since the start of conform: reading the logs included
    conforms: bool | None  # known at the end only


class RejectionTiming(NamedTuple):
    alteration: str     # "(none)": the log as run
    seconds: float
    states: int         # model states searched
    conforms: bool
    model: bool         # the model check alone
    first: str          # the first unexplained line and why, or ""


def bench_rejection(run: Path, alterations=None, protocol: str = "flip-147") -> list[RejectionTiming]:
    """``conform`` on the run directory ``run`` as it is, then on a copy per alteration
    (default: every one of :data:`~flipcheck.flink.suite.ALTERATIONS` that applies)."""
    from flipcheck.flink.conform import conform_files
    from flipcheck.flink.suite import ALTERATIONS, alter_run

    def timed(folder: Path, name: str) -> RejectionTiming:
        started = time.perf_counter()
        result = conform_files(str(folder / "plan.json"), [str(folder / "flink.log")], protocol=protocol)
        first = result.first_unexplained
        return RejectionTiming(name, time.perf_counter() - started, result.verdict.states, result.conforms,
                               result.checks[0].ok, f"line {first['line']}: {first['why']}" if first else "")

    rows = [timed(run, "(none)")]
    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-reject-") as scratch:
        for name in alterations if alterations is not None else sorted(ALTERATIONS):
            try:
                alter_run(run, name, Path(scratch) / name)
            except ValueError:
                continue   # the run has nothing this alteration changes (no committed output, say)
            rows.append(timed(Path(scratch) / name, name))
    return rows


def rejection_lines(rows: list[RejectionTiming]) -> list[str]:
    base = rows[0].seconds or 1e-9
    out = [f"{'alteration':<36} {'seconds':>8} {'x good':>7} {'states':>10}  verdict"]
    for r in rows:
        verdict = "conforms" if r.conforms else "rejected" + ("" if r.model else " (model: " + r.first[:70] + ")")
        out.append(f"{r.alteration:<36} {r.seconds:>8.2f} {r.seconds / base:>7.2f} {r.states:>10,}  {verdict}")
    return out


def bench_conform(lines: int = 100_000, keep: Path | None = None) -> tuple[object, float, list[ConformTiming]]:
    """``(RunResult, seconds to read the log, timings)`` of one real job whose log has about
    ``lines`` lines. ``keep``: the run directory to use (and keep); a temporary one otherwise."""
    from flipcheck.bench.flink import BENCH_GRAPH
    from flipcheck.flink.conform import conform_files
    from flipcheck.flink.engine import run_graph
    from flipcheck.flink.logs import read_logs

    def measure(folder: Path):
        result = run_graph(BENCH_GRAPH, folder, records=max(1, lines // LINES_PER_RECORD), interval_ms=INTERVAL_MS)
        log, plan = str(folder / "flink.log"), str(folder / "plan.json")
        started = time.perf_counter()
        read_logs([log])
        parse = time.perf_counter() - started
        marks: list = []
        started = time.perf_counter()
        verdict = conform_files(plan, [log], progress=lambda p: marks.append((p.explained, p.total, time.perf_counter() - started)))
        total = time.perf_counter() - started
        n = len(verdict.observations)
        line_of = [e.line for _, e in verdict.observations]
        timings = []
        for quarter in (1, 2, 3):
            i, _, seconds = min(marks, key=lambda m: abs(m[0] - n * quarter // 4)) if marks else (n, n, total)
            timings.append(ConformTiming(line_of[i - 1], i, seconds, None))
        timings.append(ConformTiming(sum(1 for _ in open(log)), n, total, verdict.conforms))
        return result, parse, timings

    if keep is not None:
        return measure(keep)
    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-conform-") as scratch:
        return measure(Path(scratch))


def report_lines(result, parse: float, timings: list[ConformTiming]) -> list[str]:
    rows = [f"job {result.status}: {result.checkpoints_completed} checkpoints, {result.times.total:.1f} s "
            f"(JVM start {result.times.jvm_start:.1f} s, job {result.times.job:.1f} s)",
            f"reading the log alone: {parse:.2f} s",
            f"{'log lines':>10} {'events':>8} {'seconds':>8} {'µs/line':>8}",
            ]
    for t in timings:
        rows.append(f"{t.lines:>10,} {t.events:>8,} {t.seconds:>8.2f} {t.seconds / max(t.lines, 1) * 1e6:>8.1f}")
    verdict = timings[-1].conforms
    rows.append(f"verdict: {'conforms' if verdict else 'DOES NOT CONFORM'}")
    return rows

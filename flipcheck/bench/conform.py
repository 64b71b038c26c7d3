"""``flipcheck bench conform``: how fast ``flipcheck conform`` validates a long real Flink log.

One real job (:data:`BENCH_GRAPH` of ``bench flink``: source -> map -> two-phase-commit sink,
parallelism 2) runs with enough records and a checkpoint every 20 ms that its log reaches the
asked number of lines (about 49 lines per record of a source subtask, measured). The log is then
validated whole, and cut after a ``Completed checkpoint`` line at a quarter, a half and three
quarters of its length, so that the seconds per line at four lengths show whether the validation
is linear in the log's length. A cut log ends mid-run, so only the whole one must conform.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import NamedTuple

__all__ = ["LINES_PER_RECORD", "ConformTiming", "bench_conform", "report_lines"]

# Lines of log per record of each source subtask of BENCH_GRAPH at a 20 ms interval (measured:
# 1,000 records -> 49,160 lines).
LINES_PER_RECORD = 49
INTERVAL_MS = 20


class ConformTiming(NamedTuple):
    lines: int
    observations: int
    seconds: float
    conforms: bool


def _cut(lines: list[str], fraction: float) -> list[str]:
    """The log up to the first ``Completed checkpoint`` line past ``fraction`` of it."""
    start = int(len(lines) * fraction)
    for i in range(start, len(lines)):
        if "Completed checkpoint" in lines[i]:
            return lines[:i + 1]
    return lines


def bench_conform(lines: int = 100_000, keep: Path | None = None) -> tuple[object, list[ConformTiming]]:
    """``(RunResult, timings)``: one real job whose log has about ``lines`` lines, validated at
    four lengths. ``keep``: the run directory to use (and keep); a temporary one otherwise."""
    from flipcheck.bench.flink import BENCH_GRAPH
    from flipcheck.flink.conform import conform_files
    from flipcheck.flink.engine import run_graph

    def measure(folder: Path):
        result = run_graph(BENCH_GRAPH, folder, records=max(1, lines // LINES_PER_RECORD), interval_ms=INTERVAL_MS)
        text = (folder / "flink.log").read_text().splitlines(keepends=True)
        timings = []
        for fraction in (0.25, 0.5, 0.75, 1.0):
            log = folder / f"flink-{int(fraction * 100)}.log"
            log.write_text("".join(_cut(text, fraction) if fraction < 1 else text))
            started = time.perf_counter()
            verdict = conform_files(str(folder / "plan.json"), [str(log)])
            timings.append(ConformTiming(sum(1 for _ in log.open()), len(verdict.observations),
                                         time.perf_counter() - started, verdict.conforms))
        return result, timings

    if keep is not None:
        return measure(keep)
    with tempfile.TemporaryDirectory(prefix="flipcheck-bench-conform-") as scratch:
        return measure(Path(scratch))


def report_lines(result, timings: list[ConformTiming]) -> list[str]:
    rows = [f"job {result.status}: {result.checkpoints_completed} checkpoints, {result.seconds:.1f} s "
            f"(JVM start {result.times.jvm_start:.1f} s, job {result.times.job:.1f} s)",
            f"{'log lines':>10} {'events':>8} {'seconds':>8} {'µs/line':>8}  verdict"]
    for t in timings:
        verdict = "conforms" if t.conforms else "does not conform (cut mid-run)" if t is not timings[-1] else "DOES NOT CONFORM"
        rows.append(f"{t.lines:>10,} {t.observations:>8,} {t.seconds:>8.2f} {t.seconds / max(t.lines, 1) * 1e6:>8.1f}  {verdict}")
    return rows

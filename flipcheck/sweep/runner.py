"""Spark-parallel sweeps: many cases of one or more suites, generated and checked on executors.

A sweep checks *targets* — (suite, algorithm or variant, token) triples, e.g. the ``plan``
suite's ``flink`` algorithm on the random cases of seed ``42`` or on the exhaustive space
``exhaustive-v4-p3`` (:mod:`flipcheck.designs.suite`). Its layout is fixed by its parameters alone:

* each target's index range ``0..cases-1`` is cut into **batches** of ``batch_size`` cases
  (one Spark task each: an executor regenerates the cases from (token, index) and checks
  them, so only index ranges travel to executors and one small row per case travels back);
* consecutive batches form **chunks** of :data:`BATCHES_PER_CHUNK`; each chunk is one Spark
  job whose rows Spark writes as Parquet into a temporary directory, which the driver then
  renames to ``DIR/cases.parquet/chunk=NNNNN`` — a commit that is atomic on a POSIX file
  system. Two chunk jobs run at once so executors never wait for the driver.

Nothing is lost: ``DIR/manifest.json`` records the parameters; rerunning the same sweep into
the same DIR skips the committed chunks (a killed driver loses only chunks in flight, a
different sweep into the same DIR is refused). Spark may retry a task or a whole chunk: a
batch always produces the same rows and only the committed attempt is kept, so no case id is
ever missing or duplicated.

When every chunk is committed, the driver reads the dataset back (pyarrow), writes
``summary.json``, minimises and renders one counterexample per distinct violation (suite,
algorithm, property) into ``DIR/counterexamples/`` and writes ``report.html``.

Example (no Spark: the layout, and one batch run in-process as an executor would)
-------
>>> spec = plan_sweep(["plan"], "flink", cases=25_000, seed="42")
>>> [(b.target, b.start, b.stop) for b in spec.batches()]
[(0, 0, 10000), (0, 10000, 20000), (0, 20000, 25000)]
>>> len(spec.chunks()), spec.total_cases
(1, 25000)
>>> rows = list(run_batch(spec.worker_targets(), 0, 0, 3))
>>> [(r[0], r[6]) for r in rows]
[('plan:42:0', 'ok'), ('plan:42:1', 'ok'), ('plan:42:2', 'ok')]
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from flipcheck.designs.suite import ERROR, EXHAUSTIVE_PREFIX, get_suite
from flipcheck.reference_impl.user_variants import UserVariantError, WrongVariantKind, is_spec
from flipcheck.sweep.summary import finalise, open_space

__all__ = [
    "COLUMNS",
    "BATCHES_PER_CHUNK",
    "CONCURRENT_JOBS",
    "TIMING_KEYS",
    "Target",
    "Batch",
    "SweepSpec",
    "SweepRefused",
    "plan_sweep",
    "run_batch",
    "run_sweep",
    "Progress",
    "rate_text",
    "suite_names",
]

# The Parquet columns (a contract: one row per case), in order, with their Spark SQL types.
COLUMNS = (
    ("id", "string"),            # SUITE:TOKEN:INDEX, regenerates the case (flipcheck replay)
    ("suite", "string"),
    ("algorithm", "string"),     # algorithm or variant checked
    ("index", "bigint"),
    ("shape", "string"),         # e.g. "3v 2e 7t", "aligned 2ch 9ev"
    ("size", "int"),             # tasks (plan) or events (barriers): coverage by size
    ("outcome", "string"),       # "ok", "violation" or "error" (could not be checked: ERROR)
    ("property", "string"),      # first violated property, null when ok
    ("properties", "array<string>"),  # every violated property
    ("message", "string"),       # the first violation's explanation, null when ok
    ("assignments", "bigint"),   # state assignments (or explored states) the check covered
    ("method", "string"),        # check | enumerate | z3 | explore
    ("seconds", "double"),       # time to generate and check the case
    ("detail", "string"),        # what the suite records beyond these columns, as JSON (flink: the run); or null
)

BATCHES_PER_CHUNK = 8
CONCURRENT_JOBS = 2
MANIFEST_VERSION = 1
# Summary keys that measure time, so differ between otherwise identical runs.
TIMING_KEYS = ("wall_seconds", "cases_per_second", "timing")
_MESSAGE_LIMIT = 500
_CHUNK_NAME = re.compile(r"chunk=([0-9]{5,12})")  # as _Run.chunk_dir names them (05d)


class SweepRefused(Exception):
    """The output directory holds something else (another sweep, foreign files, a running sweep)."""


@dataclass(frozen=True)
class Target:
    suite: str
    algorithm: str
    token: str
    cases: int
    batch_size: int

    @property
    def label(self) -> str:
        return f"{self.suite}/{self.algorithm}"


class Batch(NamedTuple):
    target: int
    start: int
    stop: int


@dataclass(frozen=True)
class SweepSpec:
    """Everything that determines a sweep's rows (and so its layout and manifest)."""

    mode: str  # "random" or "exhaustive"
    targets: tuple[Target, ...]
    seed: str | None = None
    batches_per_chunk: int = BATCHES_PER_CHUNK

    def manifest(self) -> dict:
        return {"flipcheck_sweep": MANIFEST_VERSION, "mode": self.mode, "seed": self.seed,
                "batches_per_chunk": self.batches_per_chunk, "targets": [asdict(t) for t in self.targets]}

    @property
    def total_cases(self) -> int:
        return sum(t.cases for t in self.targets)

    def batches(self) -> list[Batch]:
        return [Batch(number, start, min(start + target.batch_size, target.cases))
                for number, target in enumerate(self.targets)
                for start in range(0, target.cases, target.batch_size)]

    def chunks(self) -> list[list[Batch]]:
        batches = self.batches()
        return [batches[i:i + self.batches_per_chunk] for i in range(0, len(batches), self.batches_per_chunk)]

    def worker_targets(self) -> tuple:
        """What executors need to know about the targets: (suite, algorithm, token)."""
        return tuple((t.suite, t.algorithm, t.token) for t in self.targets)


def plan_sweep(suites: list[str], algorithm: str | None = None, *, cases: int | None = None, seed: str | None = None,
               exhaustive: bool = False, max_vertices: int | None = None, max_parallelism: int | None = None,
               batch_size: int | None = None, extra_targets: list[tuple[str, str]] = (),
               scale_by_cost: bool = False) -> SweepSpec:
    """The sweep for the CLI's options. ``suites`` are names (``all`` expanded by the caller);
    ``algorithm`` (None: each suite's engine) applies to every suite that knows it — a name no
    suite knows is an error; a user variant's spec (``FILE.py:CLASS``, recorded as given: the CLI
    makes its path absolute) applies to the suites whose base class it subclasses. ``extra_targets`` adds (suite, algorithm) pairs (the demo), and
    ``scale_by_cost`` gives each suite ``cases / relative_cost`` random cases (the demo).
    Raises ValueError with a one-line message."""
    if exhaustive == (cases is not None):
        raise ValueError("give either --cases N (with --seed S) or --exhaustive")
    if not exhaustive:
        if cases < 1:
            raise ValueError("--cases must be at least 1")
        seed = "0" if seed is None else str(seed)
        if (not seed or ":" in seed or seed.startswith(EXHAUSTIVE_PREFIX) or any(c.isspace() for c in seed)
                or not seed.isprintable()):
            raise ValueError(f"--seed {seed!r}: a seed is printable, has no ':' or spaces and does not start with {EXHAUSTIVE_PREFIX!r}")
    elif seed is not None:
        raise ValueError("--seed applies to random sweeps (--cases), not to --exhaustive")
    if batch_size is not None and batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    pairs: list[tuple[str, str]] = []
    for name in suites:
        suite = get_suite(name)
        if algorithm is None:
            pairs.append((name, suite.engine))
        elif suite.knows(algorithm):
            pairs.append((name, algorithm))
    if algorithm is not None and not pairs:
        if is_spec(algorithm):
            _no_suite_takes(algorithm, suites)
        known = sorted({a for name in suites for a in get_suite(name).algorithms()})
        raise ValueError(f"no suite among {', '.join(suites)} knows {algorithm!r} (expected one of {', '.join(known)})")
    pairs.extend(p for p in extra_targets if p not in pairs)
    targets = []
    for name, algo in pairs:
        suite = get_suite(name)
        suite.check_name(algo)
        if exhaustive:
            token = suite.exhaustive_token(max_vertices, max_parallelism)
            count = suite.space(token).size
            size = batch_size or suite.exhaustive_batch
        else:
            count = max(1, cases // suite.relative_cost) if scale_by_cost else cases
            token, size = seed, batch_size or suite.random_batch
        targets.append(Target(name, algo, token, count, size))
    return SweepSpec("exhaustive" if exhaustive else "random", tuple(targets), seed)


def _no_suite_takes(spec: str, suites: list[str]):
    """Raise the one line saying why no suite among ``suites`` takes the user variant ``spec``: its
    own suite's refusal, or for several what it is and what each suite takes."""
    refusals = []
    for name in suites:
        try:
            get_suite(name).variant_class(spec)
        except WrongVariantKind as refusal:
            refusals.append((name, refusal))
    if len(refusals) == 1:
        raise refusals[0][1]
    takes = "; ".join(f"{name}: {refusal.needs}" for name, refusal in refusals)
    raise UserVariantError(f"{spec}: {refusals[0][1].found}, which no suite among {', '.join(suites)} takes ({takes})")


# -- executor side -------------------------------------------------------------------------------


def run_batch(targets: tuple, target: int, start: int, stop: int, out_dir: str | None = None) -> Iterator[tuple]:
    """Rows (in :data:`COLUMNS` order) of cases ``start..stop-1`` of ``targets[target]``,
    regenerated from their ids and checked here (on an executor, or in a plain loop); a suite
    that leaves files per case keeps them under ``out_dir`` (:func:`open_space`)."""
    suite_name, algorithm, token = targets[target]
    space = open_space(get_suite(suite_name), token, out_dir)
    clock = time.perf_counter
    for index in range(start, stop):
        began = clock()
        case = space.case(index)
        outcome = space.check(case, algorithm)
        elapsed = clock() - began
        names = outcome.properties
        message = outcome.violations[0].message[:_MESSAGE_LIMIT] if names else None
        verdict = "violation" if names else "ok"
        if outcome.error is not None:
            verdict, names, message = ERROR, [], outcome.error[:_MESSAGE_LIMIT]
        detail = None if outcome.detail is None else json.dumps(outcome.detail, sort_keys=True)
        yield (space.case_id(index), suite_name, algorithm, index, space.shape(case), space.magnitude(case),
               verdict, names[0] if names else None, names, message,
               outcome.assignments, outcome.method, elapsed, detail)


def _claim(marker: str) -> bool:
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def _partition_rows(targets: tuple, fault_marker: str | None, out_dir: str, batches: Iterator[Batch]) -> Iterator[tuple]:
    for batch in batches:
        if fault_marker and _claim(fault_marker):
            raise RuntimeError("fault injected once by the sweep's test hook (Spark retries this task)")
        yield from run_batch(targets, *batch, out_dir=out_dir)


# -- driver side -----------------------------------------------------------------------------------


def _spark_schema():
    from pyspark.sql import types

    kinds = {"string": types.StringType(), "bigint": types.LongType(), "int": types.IntegerType(),
             "double": types.DoubleType(), "array<string>": types.ArrayType(types.StringType(), False)}
    nullable = {"property", "message", "detail"}
    return types.StructType([types.StructField(name, kinds[kind], name in nullable) for name, kind in COLUMNS])


def rate_text(per_second: float | None) -> str:
    """``12,345 cases/s``; below one a second (real Flink jobs) ``4.2 cases/min``."""
    per_second = per_second or 0.0
    if 0 < per_second < 1:
        return f"{per_second * 60:,.1f} cases/min"
    return f"{per_second:,.0f} cases/s"


class Progress:
    """A one-line progress bar on stderr: cases done, violations, rate, ETA. On a terminal it
    redraws in place; otherwise it prints a line at most every ``interval`` seconds."""

    def __init__(self, total: int, stream=None, width: int = 24, interval: float = 5.0):
        self.total, self.width, self.interval = total, width, interval
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.perf_counter()
        self.last_line = 0.0

    def line(self, done: int, violations: int, fresh: int) -> str:
        elapsed = time.perf_counter() - self.started
        rate = fresh / elapsed if elapsed > 0 else 0.0
        filled = int(self.width * done / self.total) if self.total else self.width
        eta = (self.total - done) / rate if rate > 0 else None
        eta_text = "--:--" if eta is None else f"{int(eta // 60)}:{int(eta % 60):02d}"
        return (f"sweep [{'#' * filled}{'.' * (self.width - filled)}] {done:,}/{self.total:,} cases  "
                f"{violations:,} violations  {rate_text(rate)}  ETA {eta_text}")

    def update(self, done: int, violations: int, fresh: int, final: bool = False) -> None:
        now = time.perf_counter()
        if not (self.tty or final or now - self.last_line >= self.interval):
            return
        self.last_line = now
        text = self.line(done, violations, fresh)
        self.stream.write(("\r" + text + ("\n" if final else "")) if self.tty else text + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own after the bar (what the sweep does once every case ran)."""
        self.stream.write(text + "\n")
        self.stream.flush()


@dataclass
class _Run:
    """One invocation of a sweep on a directory."""

    spec: SweepSpec
    out: Path
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started: float = field(default_factory=time.time)

    @property
    def dataset(self) -> Path:
        return self.out / "cases.parquet"

    def chunk_dir(self, number: int) -> Path:
        return self.dataset / f"chunk={number:05d}"

    def committed(self) -> set[int]:
        """The committed chunks' numbers; SweepRefused for a chunk directory this layout never writes."""
        if not self.dataset.is_dir():
            return set()
        numbers = set()
        for path in self.dataset.iterdir():
            if path.name.startswith("chunk=") and (path / "_chunk.json").exists():
                match = _CHUNK_NAME.fullmatch(path.name)
                if match is None:
                    raise SweepRefused(f"{path} is not a chunk of a sweep; use another --out")
                numbers.add(int(match[1]))
        return numbers

    def chunk_violations(self, number: int) -> int:
        """The violations a committed chunk's marker records; SweepRefused when it is damaged."""
        path = self.chunk_dir(number) / "_chunk.json"
        try:
            violations = json.loads(path.read_bytes())["violations"]
        except (OSError, ValueError, TypeError, KeyError, RecursionError):
            violations = None
        if not isinstance(violations, int) or isinstance(violations, bool) or violations < 0:
            raise SweepRefused(f"{path} is damaged (no violation count); use another --out")
        return violations


def _prepare(run: _Run) -> None:
    """Create or reopen DIR: refuse a different sweep or foreign files; drop temporary output."""
    out = run.out
    manifest_path = out / "manifest.json"
    wanted = run.spec.manifest()
    if out.exists() and not out.is_dir():
        raise SweepRefused(f"{out} is not a directory")
    if manifest_path.exists():
        try:
            found = json.loads(manifest_path.read_bytes())
        except (OSError, ValueError, RecursionError):
            raise SweepRefused(f"{manifest_path} is unreadable; use another --out") from None
        if found != wanted:
            raise SweepRefused(f"{out} holds a different sweep ({_describe_manifest(found)}); "
                               "rerun that command to resume it, or use another --out")
    elif any(p.name != ".lock" for p in out.iterdir()):
        raise SweepRefused(f"{out} is not empty and holds no sweep; use an empty or new directory")
    out.mkdir(parents=True, exist_ok=True)
    if not manifest_path.exists():
        _write_atomically(manifest_path, json.dumps(wanted, indent=1) + "\n")
    shutil.rmtree(out / ".tmp", ignore_errors=True)
    (out / ".tmp").mkdir()
    run.dataset.mkdir(exist_ok=True)
    for stale in run.dataset.iterdir():  # a chunk directory without its marker is not committed
        if not (stale / "_chunk.json").exists():
            shutil.rmtree(stale, ignore_errors=True)


def _describe_manifest(manifest: dict) -> str:
    try:
        targets = ", ".join(f"{t['suite']}/{t['algorithm']}:{t['token']}" for t in manifest.get("targets", []))
        return f"{manifest.get('mode')} {targets}"
    except (AttributeError, TypeError, KeyError):  # a manifest someone else wrote or damaged
        return "an unrecognised manifest"


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _lock(out: Path):
    """An exclusive lock on DIR for this process (released by the kernel even on SIGKILL)."""
    handle = open(out / ".lock", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise SweepRefused(f"another sweep is writing {out} right now") from None
    return handle


def _chunk_counts(path: Path) -> tuple[int, int]:
    import pyarrow.dataset as ds

    table = ds.dataset(str(path), format="parquet").to_table(columns=["outcome"])
    violations = sum(1 for value in table.column("outcome").to_pylist() if value == "violation")
    return table.num_rows, violations


def _run_chunk(spark, run: _Run, number: int, batches: list[Batch], fault_marker: str | None) -> dict:
    """One Spark job: the chunk's rows, written as Parquet, committed by renaming its directory."""
    context = spark.sparkContext
    context.setJobDescription(f"flipcheck sweep chunk {number}")
    rows = context.parallelize(batches, len(batches)).mapPartitions(
        partial(_partition_rows, run.spec.worker_targets(), fault_marker, str(run.out.resolve())))
    temporary = run.out / ".tmp" / f"chunk={number:05d}.{run.run_id}"
    spark.createDataFrame(rows, _spark_schema(), verifySchema=False).write.parquet(str(temporary))
    cases, violations = _chunk_counts(temporary)
    expected = sum(b.stop - b.start for b in batches)
    if cases != expected:  # cannot happen with deterministic batches; never commit if it does
        raise RuntimeError(f"chunk {number}: {cases} rows for {expected} cases")
    info = {"chunk": number, "cases": cases, "violations": violations, "run": run.run_id,
            "run_started": run.started, "committed": time.time()}
    (temporary / "_chunk.json").write_text(json.dumps(info) + "\n")
    os.rename(temporary, run.chunk_dir(number))
    return info


def run_sweep(spec: SweepSpec, out_dir: str, *, master: str | None = None, spark=None,
              progress: Callable[[int, int, int, bool], None] | None = None,
              fault_marker: str | None = None, conf: dict | None = None,
              note: Callable[[str], None] | None = None) -> dict:
    """Run (or resume) ``spec`` into ``out_dir``; returns the summary (also in summary.json).

    ``spark`` is an existing session to use (kept running); otherwise one is started for
    ``master`` (default ``local[*]``, extra Spark settings ``conf``) and stopped at the end.
    ``progress(done, violations, fresh, final)`` is called after every committed chunk, ``note``
    with a line as each counterexample's minimising starts (:func:`~flipcheck.sweep.summary.finalise`).
    ``fault_marker`` is a test hook: the
    first Spark task to find that file missing creates it and fails (Spark retries the task).
    Raises :class:`SweepRefused` when ``out_dir`` holds something else.
    """
    from flipcheck.sweep.spark import DEFAULT_MASTER, start_spark, stop_spark

    out = Path(out_dir)
    if out.is_dir() and not (out / "manifest.json").exists() and any(p.name != ".lock" for p in out.iterdir()):
        raise SweepRefused(f"{out} is not empty and holds no sweep; use an empty or new directory")
    out.mkdir(parents=True, exist_ok=True)
    lock = _lock(out)
    try:
        run = _Run(spec, out)
        _prepare(run)
        chunks = spec.chunks()
        done_chunks = run.committed()
        if any(n >= len(chunks) for n in done_chunks):
            raise SweepRefused(f"{run.dataset} holds chunks beyond this sweep's {len(chunks)}; use another --out")
        todo = [n for n in range(len(chunks)) if n not in done_chunks]
        done = sum(sum(b.stop - b.start for b in chunks[n]) for n in done_chunks)
        violations = sum(run.chunk_violations(n) for n in done_chunks)
        fresh = 0
        owned = spark is None and bool(todo)
        if owned:  # before the first progress line, so a master that fails to start is the only line
            spark = start_spark(master or DEFAULT_MASTER, "flipcheck sweep", log_path=str(out / "spark.log"), conf=conf)
        try:
            if progress:
                progress(done, violations, fresh, not todo)
            for info in _run_chunks(spark, run, chunks, todo, fault_marker):
                done += info["cases"]
                fresh += info["cases"]
                violations += info["violations"]
                if progress:
                    progress(done, violations, fresh, len(run.committed()) == len(chunks))
        finally:
            if owned:
                stop_spark(spark)
        return finalise(run.spec, out, note=note)
    finally:
        shutil.rmtree(out / ".tmp", ignore_errors=True)
        lock.close()


def _run_chunks(spark, run: _Run, chunks: list, todo: list[int], fault_marker: str | None) -> Iterator[dict]:
    """Run the chunks, :data:`CONCURRENT_JOBS` Spark jobs at a time; yield each commit's info."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pending = list(todo)
    with ThreadPoolExecutor(max_workers=CONCURRENT_JOBS) as pool:
        running = set()
        try:
            while pending or running:
                while pending and len(running) < CONCURRENT_JOBS:
                    number = pending.pop(0)
                    running.add(pool.submit(_run_chunk, spark, run, number, chunks[number], fault_marker))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
        except BaseException:
            pending.clear()
            spark.sparkContext.cancelAllJobs()
            raise


def suite_names(choice: str) -> list[str]:
    """``all`` -> every suite in this build; a name -> [name] (DesignUnavailable if not built)."""
    from flipcheck.designs import available_designs

    if choice == "all":
        return available_designs()
    get_suite(choice)
    return [choice]


"""One whole-job exploration on Spark whose driver never touches a state
(``flipcheck explore ... --master URL --seen executors``).

The seen-set is partitioned by fingerprint (partition ``fingerprint % P``, ``P`` fixed for the
run) and stays on the executors: one sorted array of fingerprints per partition, in a persisted
RDD. The search is breadth-first and level-synchronous; per level:

1. each partition of the frontier is expanded where it is (:func:`~.expansion.expand`, the
   single-process explorer's own functions); out come the successors with the state and step
   that first made each one in the partition, and one small summary per partition (states
   expanded, steps, the first deadlock, the first violation of each property, CPU seconds);
2. the successors are partitioned by the same partitioner as the seen-set, and partition
   ``p``'s seen-set block goes with them through the same shuffle (8 bytes a state: a union
   with the cached block would keep it in place, but PySpark re-pickles both sides of it); the
   task of partition ``p`` keeps the successors it has not seen: the next frontier;
3. the driver reads the summaries and the count of new states: per-level work, not per-state.

Each new state's parent fingerprint and step stay on the executors, one persisted RDD per level.
A counterexample's path is rebuilt afterwards by walking parents back level by level (one Spark
job per level for all violations at once: per-violation work on the driver). The driver then
judges a graph of just those paths with the single-process explorer's
:func:`~flipcheck.properties.protocol_explore.judge`, so the messages and the order are judge's.

What this path gives, and what it does not (docs/protocol.md, "The seen-set on the executors"):

* the state and step counts and the violated step, state and deadlock properties of
  ``explore_job`` (reduction ``none`` or ``symmetry``), and a shortest trace for each (the same
  length; not necessarily the same trace, since the states are not numbered);
* no state numbers, so neither the liveness properties (``end_stays_reachable``,
  ``checkpoint_after_abort``: reachability on the whole graph) nor partial-order reduction (its
  cycle proviso asks the seen-set of every ample successor before the level is numbered) run
  here: :func:`~.spark.explore_job_on_spark` (``--seen driver``, the default) keeps them.

With ``resume_dir`` (a directory every executor can write: local, or a shared file system on a
cluster) each executor writes its partition's seen-set, new parents and frontier after every
level (binary arrays and JSON through :mod:`flipcheck.state_codec`; nothing read from a file
is unpickled), the driver the per-level summary, and a rerun continues from the last level saved.

Example: what the task of partition 0 does with its seen-set block (fingerprint 4) and three
successors (fingerprints 4, 8, 8, each with its state, parent and step):

>>> block = ("seen", array("q", [4]).tobytes())
>>> out = list(_deduplicate(0, [(0, block), (4, ("s4", 1, "a")), (8, ("s8", 1, "b")), (8, ("s8", 2, "c"))]))
>>> array("q", out[0][1][1]).tolist(), out[1:]
([4, 8], [(8, ('s8', 1, 'b'))])

A whole run needs a Spark session: ``explore_job_partitioned(job_spec(graph, "flip-147", {}), spark)``.
"""

from __future__ import annotations

import json
import os
import pickle   # only in _pack/_unpack below
import sys
import time
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from flipcheck.errors import InputError
from flipcheck.properties.explore import GraphBuilder
from flipcheck.properties.fingerprints import collision_probability
from flipcheck.properties.protocol_explore import judge
from flipcheck.properties.protocol_reduction import sound_reduction
from flipcheck.properties.violation import Violation
from flipcheck.state_codec import CodecError, decode, encode

from .expansion import expand, initial, job_from_spec, spec_text
from .saved_levels import claim_resume_dir, write_atomically

__all__ = ["explore_job_partitioned", "PartitionedExploration", "LevelProgress", "PARTITIONED_REDUCTIONS",
           "RESUME_FORMAT"]

#: The reductions this path gives the single-process counts for (partial-order reduction's proviso
#: needs the global seen-set in the middle of a level).
PARTITIONED_REDUCTIONS = ("none", "symmetry")
RESUME_FORMAT = 2   # 2: stable fingerprints (a directory saved with process-bound ones is refused)


@dataclass
class PartitionedExploration:
    """What :func:`explore_job_partitioned` found: counts and counterexamples, no graph."""

    job: object
    counterexamples: list
    reduction: str
    states: int
    transitions: int
    depth: int
    complete: bool = True
    seconds: float = 0.0
    levels_seconds: list = field(default_factory=list)   # driver wall seconds per level
    coverage: None = None                                # rule coverage is counted in one process only

    @property
    def collision_probability(self) -> float:
        return collision_probability(self.states, self.transitions)

    def violated(self) -> list[str]:
        return [c.property for c in self.counterexamples]


@dataclass(frozen=True)
class LevelProgress:
    """Passed to ``progress`` after every level."""

    states: int
    frontier: int
    depth: int


def _owner(key: int) -> int:
    """The partitioner of every keyed RDD of a run (Spark takes it modulo P); one function
    object, so that Spark sees the seen-set and the successors as partitioned alike."""
    return key


# ----------------------------------------------------------------------------------------------
# States between tasks.
#
# A state crosses the level's shuffle as bytes, so that deduplicating and keeping parents never
# decode it: pickle, about 5x cheaper than state_codec and JSON (38 against 200 us a round trip on
# a pair x2 state). Every blob _unpack reads is one _pack made in this run's own tasks, in memory;
# a resume directory holds JSON only (state_codec: data, never objects), which _read_partition
# decodes before it packs. No byte of a file reaches _unpack.

def _pack(state) -> bytes:
    return pickle.dumps(state, pickle.HIGHEST_PROTOCOL)


def _unpack(blob: bytes):
    return pickle.loads(blob)   # a blob of _pack's, never a file's (see above)


# ----------------------------------------------------------------------------------------------
# Executor side.

def _expand_partition(text: str, summaries, index: int, items):
    """Expand partition ``index`` of a level: its seen-set block ``(index, ("seen", bytes))``,
    passed on as it is, and its frontier ``(fingerprint, (pickled state, parent, label))``.
    Yields ``(child, (pickled state, parent fingerprint, label))`` once per successor made in the
    partition; adds the partition's summary to the accumulator ``summaries`` (keyed by
    ``index``, so a retried task replaces its summary instead of counting twice)."""
    started = time.process_time()
    expanded = transitions = 0
    deadlock = None
    violations: dict = {}          # property -> (fingerprint, label or None, message)
    pending: dict = {}             # successors made while expanding the current state
    frontier = []
    for record in items:
        if _is_seen(record):
            yield record
        else:
            frontier.append((record[0], (record[0], _unpack(record[1][0]))))
    for record in expand(text, frontier):
        if record[0] == "state":
            pending[record[1]] = record[2]
            continue
        _, source, final, steps, _ = record
        expanded += 1
        transitions += len(steps)
        if not steps and not final and (deadlock is None or source < deadlock):
            deadlock = source
        for label, child, found, _, child_problems in steps:
            state = pending.pop(child, None)
            if state is not None:
                yield child, (_pack(state), source, label)
            for problem in found:
                violations.setdefault(problem.property, (source, label, problem.message))
            for problem in child_problems:
                violations.setdefault(problem.property, (child, None, problem.message))
    summaries.add({index: {"expanded": expanded, "transitions": transitions, "deadlock": deadlock,
                           "violations": violations, "cpu": time.process_time() - started}})


class _PerPartition:
    """An accumulator of ``{partition: summary}`` (pyspark's AccumulatorParam protocol)."""

    def zero(self, value):
        return {}

    def addInPlace(self, first, second):
        first.update(second)
        return first


def _deduplicate(index: int, items):
    """Partition ``index`` of (seen-set union successors): keep the successors not seen before.
    Yields ``(index, ("seen", bytes))``, the partition's new sorted fingerprint array, and
    ``(fingerprint, (state, parent, label))`` per new state."""
    seen = array("q")
    fresh: dict = {}
    for key, value in items:
        if isinstance(value, tuple) and value[0] == "seen":
            seen.frombytes(value[1])
        elif key not in fresh:
            fresh[key] = value
    new = [key for key in fresh if not _contains(seen, key)]
    merged = array("q", sorted(seen.tolist() + new)) if new else seen
    yield index, ("seen", merged.tobytes())
    for key in new:
        yield key, fresh[key]


def _contains(sorted_keys: array, key: int) -> bool:
    at = bisect_left(sorted_keys, key)
    return at < len(sorted_keys) and sorted_keys[at] == key


def _first_level(text: str, partitions: int):
    """An empty seen-set block per partition, and the initial state."""
    for index in range(partitions):
        yield index, ("seen", b"")
    key, state, _, _ = initial(text)
    yield key, (_pack(state), None, None)


def _initial_problems(text: str) -> tuple:
    """The initial state's fingerprint and own violations, without the state."""
    key, _, _, problems = initial(text)
    return key, [(p.property, p.message) for p in problems]


# ----------------------------------------------------------------------------------------------
# Driver side.

def explore_job_partitioned(spec: dict, spark, *, partitions: int | None = None, reduction: str = "none",
                            progress: Callable[[LevelProgress, float], None] | None = None,
                            resume_dir: str | None = None) -> PartitionedExploration:
    """Explore the job of ``spec`` (:func:`~.expansion.job_spec`) with the seen-set on the executors.

    The counts, and the violated step, state and deadlock properties with a shortest trace each,
    are those of :func:`~flipcheck.properties.protocol_explore.explore_job` with ``liveness=False``
    and the same ``reduction`` (``none`` or ``symmetry``; ValueError for another). With
    ``resume_dir`` every level is saved there and a rerun with the same directory, job and
    ``partitions`` continues from the last one saved."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    job = job_from_spec(spec)
    reduction = sound_reduction(job, reduction)
    if reduction not in PARTITIONED_REDUCTIONS:
        raise ValueError(f"the seen-set on the executors explores with reduction none or symmetry, not {reduction!r} "
                         "(partial-order reduction's cycle proviso needs the whole seen-set)")
    parts = partitions or sc.defaultParallelism
    text = spec_text(spec, reduction, stable=True)   # each executor's Python daemon is a process of its own
    started = time.perf_counter()
    keep = StorageLevel.MEMORY_AND_DISK
    saving = _ResumeDir(Path(resume_dir), text, parts) if resume_dir is not None else None
    saved = saving.open(sc) if saving is not None else None
    if saved is None:
        merged = (sc.parallelize([0], 1).flatMap(lambda _: _first_level(text, parts)).partitionBy(parts, _owner)
                  .mapPartitionsWithIndex(_deduplicate, preservesPartitioning=True).persist(keep))
        key, problems = sc.parallelize([0], 1).map(lambda _: _initial_problems(text)).collect()[0]
        summary: dict = {"depth": 0, "states": 1, "transitions": 0, "frontier": 1, "deadlock": None,
                   "found": {name: (0, key, None, message) for name, message in problems}}
        parents = [merged.filter(_is_new).mapValues(_parent_of).persist(keep)]
        parents[0].count()
        if saving is not None:
            saving.save(summary, merged)
    else:
        summary, merged = saved
        assert saving is not None   # a saved level comes from the resume directory
        parents = [saving.parents(sc, level) for level in range(summary["depth"] + 1)]
    levels_seconds = []
    while summary["frontier"]:
        level_started = time.perf_counter()
        # One Spark job per level: expand (the shuffle's map side), then deduplicate where the
        # partition's seen-set block went with the same shuffle; the partitions' summaries come
        # back through an accumulator. (A union of the cached seen-set with the shuffled
        # successors would keep the seen-set in place, but PySpark re-pickles both sides of a
        # union whose serializers differ, and they do: measured twice the executors' CPU.)
        summaries = sc.accumulator({}, _PerPartition())
        following = (merged.mapPartitionsWithIndex(lambda i, items, s=summaries: _expand_partition(text, s, i, items))
                     .partitionBy(parts, _owner)
                     .mapPartitionsWithIndex(_deduplicate, preservesPartitioning=True).persist(keep))
        parents.append(following.filter(_is_new).mapValues(_parent_of).persist(keep))
        new = parents[-1].count()
        depth = summary["depth"] + 1
        _merge_level(summary, list(summaries.value.values()), depth)
        merged.unpersist()
        merged = following
        summary.update(depth=depth, states=summary["states"] + new, frontier=new)
        if saving is not None:
            saving.save(summary, merged)
        levels_seconds.append(time.perf_counter() - level_started)
        if progress is not None:
            progress(LevelProgress(summary["states"], new, depth), time.perf_counter() - started)
    counterexamples = judge(job, _paths_graph(summary, parents), liveness=False)
    for rdd in parents + [merged]:
        rdd.unpersist()
    return PartitionedExploration(job, counterexamples, reduction, summary["states"], summary["transitions"],
                                  summary["depth"], True, time.perf_counter() - started, levels_seconds)


def _is_seen(record) -> bool:
    return isinstance(record[1], tuple) and record[1][0] == "seen"


def _is_new(record) -> bool:
    return not _is_seen(record)


def _parent_of(value) -> tuple:
    return value[1], value[2]


def _merge_level(summary: dict, partials: list, depth: int) -> None:
    """Add one level's partition summaries: its steps, and the first deadlock and the first
    violation of each property not found before (the first level found = the shortest trace;
    within the level the smallest fingerprint, so that a rerun reports the same one). A step's
    violation is kept on its source (one level up) with the step, a state's on the state."""
    summary["transitions"] += sum(part["transitions"] for part in partials)
    deadlocks = [part["deadlock"] for part in partials if part["deadlock"] is not None]
    if deadlocks and summary["deadlock"] is None:
        summary["deadlock"] = (depth - 1, min(deadlocks))
    found = summary["found"]
    level: dict = {}
    for part in partials:
        for name, (key, label, message) in part["violations"].items():
            if name not in found:
                level.setdefault(name, []).append((key, label, message))
    for name, candidates in level.items():
        key, label, message = min(candidates, key=lambda c: (c[0], repr(c[1])))
        found[name] = (depth - 1, key, label, message) if label is not None else (depth, key, None, message)


def _walk(parents: list, targets: set) -> dict:
    """``{(depth, fingerprint): [(fingerprint, label), ...]}``: the path from the initial state to
    each target, each state with the step that reached it, found by looking parents up level by
    level (one Spark job per level for all targets)."""
    steps: dict = {target: [] for target in targets}
    at = {target: target[1] for target in targets}
    for depth in range(max((d for d, _ in targets), default=0), 0, -1):
        walking = [target for target in targets if target[0] >= depth]
        keys = frozenset(at[target] for target in walking)
        found = dict(parents[depth].filter(lambda r, keys=keys: r[0] in keys).collect())
        for target in walking:
            if at[target] not in found:
                raise InputError(f"level {depth}", "the saved parents of this level are damaged: a state is missing")
            parent, label = found[at[target]]
            steps[target].append((at[target], label))
            at[target] = parent
    return {target: [(at[target], None)] + steps[target][::-1] for target in targets}


def _paths_graph(summary: dict, parents: list):
    """A fingerprint graph of only the counterexamples' paths, with their problems and deadlock:
    what :func:`~flipcheck.properties.protocol_explore.judge` reads."""
    targets = {(d, key) for d, key, _, _ in summary["found"].values()}
    if summary["deadlock"] is not None:
        targets.add(tuple(summary["deadlock"]))
    builder = GraphBuilder("fingerprints", edges=False)
    numbers: dict = {}
    for _, path in sorted(_walk(parents, targets).items()):
        previous = -1
        for depth, (key, label) in enumerate(path):
            number = builder.seen(None, key=key)
            if number < 0:
                number = builder.add(None, previous, label, depth)
            previous = numbers[key] = number
    graph = builder.graph
    for name, (_, key, label, message) in summary["found"].items():
        graph.problems[name] = (numbers[key], label, [Violation(name, message)])
    if summary["deadlock"] is not None:
        graph.deadlocks.append(numbers[summary["deadlock"][1]])
    return graph


# ----------------------------------------------------------------------------------------------
# Resuming. Executors write their partition (seen-set as a binary array; new states with their
# parents as JSON lines through flipcheck.state_codec), the driver the level's summary; nothing
# read back runs code. Older levels keep only their parents (for counterexamples).

class _ResumeDir:
    def __init__(self, path: Path, text: str, partitions: int):
        self.path, self.partitions = path, partitions
        self.meta = {"format": RESUME_FORMAT, "seen": "executors", "spec": json.loads(text), "partitions": partitions,
                     "hash_seed": os.environ.get("PYTHONHASHSEED", "0"), "python": list(sys.version_info[:2])}

    def open(self, sc):
        """``(summary, merged RDD)`` of the last level saved, or None."""
        from pyspark import StorageLevel

        current = claim_resume_dir(self.path, self.meta)
        if current is None:
            return None
        try:
            document = json.loads((current / "summary.json").read_text())
            summary: dict = {"depth": int(document["depth"]), "states": int(document["states"]),
                       "transitions": int(document["transitions"]), "frontier": int(document["frontier"]),
                       "deadlock": None if document["deadlock"] is None else tuple(int(x) for x in document["deadlock"]),
                       "found": {str(name): (int(d), int(key), None if label is None else decode(label), str(message))
                                 for name, (d, key, label, message) in document["found"].items()}}
        except (OSError, ValueError, KeyError, TypeError, CodecError) as error:
            raise InputError(str(self.path), f"the saved level is damaged: {error}") from None
        folder = str(current)
        merged = (sc.parallelize(range(self.partitions), self.partitions)
                  .mapPartitionsWithIndex(lambda i, _: _read_partition(folder, i)).partitionBy(self.partitions, _owner))
        merged = merged.persist(StorageLevel.MEMORY_AND_DISK)
        damaged = merged.filter(lambda r: r[1][0] == "damaged").collect()
        if damaged:
            raise InputError(str(self.path), f"the saved level is damaged: {damaged[0][1][1]}")
        return summary, merged

    def parents(self, sc, depth: int):
        folder = str(self.path / _level_name(depth))
        return sc.parallelize(range(self.partitions), self.partitions).mapPartitionsWithIndex(
            lambda i, _: _read_parents(folder, i))

    def save(self, summary: dict, merged) -> None:
        name = _level_name(summary["depth"])
        target = self.path / name
        try:
            target.mkdir(parents=True, exist_ok=True)
            folder = str(target)
            failed = merged.mapPartitionsWithIndex(lambda i, items: _write_partition(folder, i, items)).collect()
            if failed:
                raise OSError(failed[0])
            found = {name_: [d, key, None if label is None else encode(label), message]
                     for name_, (d, key, label, message) in summary["found"].items()}
            write_atomically(target / "summary.json", json.dumps(dict(summary, found=found)))
            write_atomically(self.path / "current", name)
            for old in self.path.glob("level-*"):
                if old.name != name:
                    for file in list(old.glob("seen-*.bin")) + list(old.glob("frontier-*.jsonl")):
                        file.unlink()
        except OSError as error:
            raise InputError(str(self.path), f"cannot save level {summary['depth']}: {getattr(error, 'strerror', None) or error}") from None


def _level_name(depth: int) -> str:
    return f"level-{depth:06d}"


def _write_partition(folder: str, index: int, items):
    """Write partition ``index`` of a level; yields an error message if it cannot."""
    try:
        seen = b""
        with open(os.path.join(folder, f"frontier-{index:05d}.jsonl.tmp"), "w") as frontier, \
                open(os.path.join(folder, f"parents-{index:05d}.jsonl.tmp"), "w") as parents:
            for key, value in items:
                if value[0] == "seen":
                    seen = value[1]
                    continue
                blob, parent, label = value
                step = None if label is None else encode(label)
                frontier.write(json.dumps([key, encode(_unpack(blob))]) + "\n")
                parents.write(json.dumps([key, parent, step]) + "\n")
        with open(os.path.join(folder, f"seen-{index:05d}.bin.tmp"), "wb") as out:
            out.write(seen)
        for name in (f"frontier-{index:05d}.jsonl", f"parents-{index:05d}.jsonl", f"seen-{index:05d}.bin"):
            os.replace(os.path.join(folder, name + ".tmp"), os.path.join(folder, name))
    except (OSError, CodecError) as error:
        yield f"partition {index}: {error}"


def _read_parents(folder: str, index: int):
    with open(os.path.join(folder, f"parents-{index:05d}.jsonl")) as lines:
        for line in lines:
            key, parent, label = json.loads(line)
            yield int(key), (None if parent is None else int(parent), None if label is None else decode(label))


def _read_partition(folder: str, index: int):
    """Partition ``index`` of a saved level as the run keeps it: its seen-set, then its new
    states with their parents; one ``(index, ("damaged", why))`` instead if a file is damaged."""
    try:
        seen = open(os.path.join(folder, f"seen-{index:05d}.bin"), "rb").read()
        if len(seen) % 8:
            raise ValueError("the seen-set is cut short")
        records: list = [(index, ("seen", seen))]
        parents = dict(_read_parents(folder, index))
        with open(os.path.join(folder, f"frontier-{index:05d}.jsonl")) as lines:
            for line in lines:
                key, state = json.loads(line)
                if not isinstance(key, int) or key not in parents:
                    raise ValueError("a frontier line names no saved state")
                records.append((key, (_pack(decode(state)),) + parents[key]))
    except (OSError, ValueError, TypeError, CodecError) as error:
        records = [(index, ("damaged", f"partition {index}: {str(error).splitlines()[0] if str(error) else type(error).__name__}"))]
    return iter(records)

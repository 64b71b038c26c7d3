"""One whole-job exploration spread over a Spark cluster (``flipcheck explore ... --master URL``).

The search runs breadth-first, one level per round:

1. the level's states are spread over the executors, partitioned by fingerprint (at most
   ``partitions``, at least 500 states each), and each
   executor expands its states (:func:`~.expansion.expand`) with the single-process explorer's
   own functions (:func:`flipcheck.properties.protocol_explore.search_functions`): steps, the stored
   representative, the violations of each step and of each new state, the after-abort mark and
   the 64-bit fingerprint of each successor;
2. the driver receives each expansion without the successor states and numbers the new ones in
   the order the single-process explorer would (by the expanded state's number, then by step:
   :func:`~.expansion.number_level`).
   It keeps the seen-set (:class:`~flipcheck.properties.fingerprints.FingerprintTable`) and
   the graph that the liveness properties need, about 70 bytes a state;
3. the successors the driver found new form the next level, still on the executors.

The driver builds its graph with the single-process explorer's own bookkeeping
(:class:`~flipcheck.properties.explore.GraphBuilder`) and judges it with the same function
(:func:`~flipcheck.properties.protocol_explore.judge`). So the counts, the state numbers and
the counterexamples are exactly those of ``flipcheck explore`` without ``--master``.

Fingerprints are computed on the executors only. PySpark starts them with one
``PYTHONHASHSEED`` (the driver's, or 0), so they agree with each other.

With ``resume_dir`` the driver saves its graph and the next level after every level (binary
arrays, and JSON through :mod:`flipcheck.state_codec`: nothing is unpickled), and a rerun with
the same directory continues from the last level saved.

This is the path ``--master`` takes by default (``--seen driver``), and the only Spark path that
numbers states and judges the liveness properties; :mod:`.spark_partitioned` (``--seen
executors``) keeps the seen-set on the executors instead, for step, state and deadlock
properties.

Executors rebuild the job from a small spec (:func:`~.expansion.job_spec`: the graph as JSON,
the variant's name, the options) once per Python worker; nothing else is shipped. The expansion
and the numbering are shared with the workers explorer (:mod:`.expansion`, :mod:`.workers`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from array import array
from pathlib import Path
from typing import Callable

from flipcheck.errors import InputError
from flipcheck.state_codec import CodecError, decode, encode
from flipcheck.properties.explore import GraphBuilder, StateGraph
from flipcheck.properties.fingerprints import FingerprintTable
from flipcheck.properties.violation import Violation
from flipcheck.properties.protocol_explore import JobExploration, counterexamples
from flipcheck.properties.protocol_reduction import sound_reduction

from .expansion import expand, initial, job_from_spec, job_spec, number_level, spec_text

__all__ = ["job_spec", "job_from_spec", "explore_job_on_spark", "RESUME_FORMAT", "claim_resume_dir",
           "write_atomically"]

_STATES_PER_PARTITION = 500   # at least this many states of a level per partition


def _first_per_key(items):
    """One item per key (a level's successor reached from several partitions)."""
    seen: set = set()
    for key, value in items:
        if key not in seen:
            seen.add(key)
            yield key, value


def explore_job_on_spark(spec: dict, spark, *, partitions: int | None = None, max_states: int | None = None,
                         liveness: bool = True, progress: Callable[[StateGraph, float], None] | None = None,
                         progress_every: float = 2.0, resume_dir: str | None = None,
                         reduction: str = "none") -> JobExploration:
    """Explore the job of ``spec`` (:func:`job_spec`) level by level on ``spark``; the result
    equals :func:`~flipcheck.properties.protocol_explore.explore_job` with
    ``store="fingerprints"`` and the same ``reduction``. With ``resume_dir`` every completed level
    is saved there, and a run with the same directory and the same job continues from the last
    one saved."""
    sc = spark.sparkContext
    partitions = partitions or sc.defaultParallelism
    job = job_from_spec(spec)
    reduction = sound_reduction(job, reduction)
    text = spec_text(spec, reduction)
    spec = json.loads(text)
    started = time.perf_counter()
    saved = None
    if resume_dir is not None:
        meta = {"format": RESUME_FORMAT, "spec": spec, "max_states": max_states, "liveness": liveness,
                "hash_seed": os.environ.get("PYTHONHASHSEED", "0"), "python": list(sys.version_info[:2])}
        saved = _open_resume_dir(Path(resume_dir), meta)
    if saved is not None:
        builder, depth, truncated, items = saved
        level = sc.parallelize(items, max(1, min(partitions, len(items) // _STATES_PER_PARTITION)))
    else:
        builder = GraphBuilder("fingerprints", edges=liveness)
        key, state, mark, problems = sc.parallelize([0], 1).map(lambda _: initial(text)).collect()[0]
        builder.seen(None, key=key)
        builder.add(None, -1, None, 0, mark, problems)
        level = sc.parallelize([(key, (0, state))], 1)
        truncated = False
        depth = 0
        if resume_dir is not None:
            _save_round(Path(resume_dir), builder, depth, truncated, [(key, (0, state))])
    graph = builder.graph
    next_report = started + progress_every
    done: list = []   # what the current level was computed from, dropped once it is expanded
    while True:
        expansions = level.mapPartitions(lambda items: expand(text, items)).persist()
        results = sorted(e[1:] for e in expansions.filter(lambda e: e[0] == "step").collect())
        for rdd in done:
            rdd.unpersist()
        done = [expansions]
        if not results:
            break
        depth += 1
        fresh, cut = number_level(builder, depth, results, max_states)
        truncated = truncated or cut
        now = time.perf_counter()
        if progress is not None and now >= next_report:
            progress(graph, now - started)
            next_report = now + progress_every
        chosen = sc.broadcast(fresh)
        done.append(chosen)
        # The next level, partitioned by fingerprint, is computed from the persisted expansions
        # when the next round collects. A task costs tens of milliseconds in PySpark, so a small
        # level stays in few partitions.
        parts = max(1, min(partitions, len(fresh) // _STATES_PER_PARTITION))
        level = (expansions.filter(lambda e: e[0] == "state" and e[1] in chosen.value)
                 .map(lambda e: (e[1], (chosen.value[e[1]], e[2])))
                 .partitionBy(parts, lambda fp, n=parts: fp % n)
                 .mapPartitions(_first_per_key, preservesPartitioning=True))
        if resume_dir is not None:
            level = level.persist()
            done.append(level)
            _save_round(Path(resume_dir), builder, depth, truncated, level.collect())
    for rdd in done:
        rdd.unpersist()
    graph.complete = not truncated and graph.expanded == len(builder)
    graph.seconds = time.perf_counter() - started
    return JobExploration(job, graph, counterexamples(job, graph, liveness, reduction), reduction)


# ----------------------------------------------------------------------------------------------
# Resuming: the driver's graph and the next level, saved after every level. Numbers go to flat
# binary arrays; labels, violations and states to JSON (flipcheck.state_codec): nothing read
# back runs code.

RESUME_FORMAT = 1
_ARRAYS = {"parent": "i", "label_index": "i", "depth": "i", "offsets": "q", "targets": "i"}


def _open_resume_dir(path: Path, meta: dict):
    """The saved run in ``path`` (None when there is none yet); InputError if it belongs to
    another job or is damaged."""
    current = claim_resume_dir(path, meta)
    if current is None:
        return None
    try:
        return _load_round(current)
    except (OSError, ValueError, KeyError, IndexError, TypeError, CodecError) as error:
        raise InputError(str(path), f"the saved level is damaged: {str(error).splitlines()[0] if str(error) else type(error).__name__}") from None


def claim_resume_dir(path: Path, meta: dict) -> Path | None:
    """The last level saved in ``path`` (None when there is none yet, and ``meta`` is written
    on first use); InputError if ``path`` holds another exploration or cannot be written."""
    meta_file = path / "meta.json"
    if not meta_file.exists():
        try:
            path.mkdir(parents=True, exist_ok=True)
            write_atomically(meta_file, json.dumps(meta, sort_keys=True))
        except OSError as error:
            raise InputError(str(path), f"cannot save the run there: {error.strerror or error}") from None
        return None
    try:
        found = json.loads(meta_file.read_text())
    except (OSError, ValueError) as error:
        raise InputError(str(meta_file), f"cannot read the saved run: {error}") from None
    if found != json.loads(json.dumps(meta, sort_keys=True)):
        differs = sorted(k for k in set(found) | set(meta) if found.get(k) != meta.get(k)) if isinstance(found, dict) else ["all"]
        raise InputError(str(path), f"holds another exploration (differs in: {', '.join(differs)}); "
                                    "use another --resume-dir, or delete it")
    current = path / "current"
    if not current.exists():
        return None
    return path / current.read_text().strip()


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _save_round(path: Path, builder: GraphBuilder, depth: int, truncated: bool, items: list) -> None:
    """Write the graph and the next level as round ``depth``, then point ``current`` at it."""
    try:
        _write_round(path, builder, depth, truncated, items)
    except OSError as error:
        raise InputError(str(path), f"cannot save level {depth}: {error.strerror or error}") from None


def _write_round(path: Path, builder: GraphBuilder, depth: int, truncated: bool, items: list) -> None:
    graph = builder.graph
    name = f"round-{depth:06d}"
    target = path / name
    target.mkdir(parents=True, exist_ok=True)
    for field, _ in _ARRAYS.items():
        with open(target / f"{field}.bin", "wb") as out:
            getattr(graph, field).tofile(out)
    (target / "marks.bin").write_bytes(bytes(graph.marks))
    keys, numbers = graph.fingerprints.arrays()
    with open(target / "keys.bin", "wb") as out:
        keys.tofile(out)
    with open(target / "numbers.bin", "wb") as out:
        numbers.tofile(out)
    document = {"depth": depth, "truncated": truncated, "transitions": graph.transitions, "expanded": graph.expanded,
                "reduced": graph.reduced,
                "edges": graph.edges, "used": len(graph.fingerprints), "deadlocks": graph.deadlocks,
                "finals": graph.finals, "labels": [encode(label) for label in graph.labels],
                "problems": {name_: [i, encode(label), [[p.property, p.message, _plain(p.witness)] for p in found]]
                             for name_, (i, label, found) in graph.problems.items()}}
    (target / "graph.json").write_text(json.dumps(document))
    with open(target / "frontier.jsonl", "w") as out:
        for key, (number, state) in items:
            out.write(json.dumps([key, number, encode(state)]) + "\n")
    write_atomically(path / "current", name)
    for old in path.glob("round-*"):
        if old.name != name:
            for file in old.iterdir():
                file.unlink()
            old.rmdir()


def _plain(witness):
    try:
        return encode(witness)
    except CodecError:
        return None


def _read_array(path: Path, code: str) -> array:
    values = array(code)
    data = path.read_bytes()
    if len(data) % values.itemsize:
        raise ValueError(f"{path.name} is cut short")
    values.frombytes(data)
    return values


def _load_round(target: Path):
    document = json.loads((target / "graph.json").read_text())
    graph = StateGraph(edges=bool(document["edges"]))
    for field, code in _ARRAYS.items():
        setattr(graph, field, _read_array(target / f"{field}.bin", code))
    graph.marks = bytearray((target / "marks.bin").read_bytes())
    graph.fingerprints = FingerprintTable.from_arrays(_read_array(target / "keys.bin", "q"),
                                                      _read_array(target / "numbers.bin", "i"))
    states, expanded = len(graph.parent), int(document["expanded"])
    if len(graph.fingerprints) != states or document["used"] != states:
        raise ValueError("the fingerprint table does not match the graph")
    if not (len(graph.label_index) == len(graph.depth) == len(graph.marks) == states) or expanded > states:
        raise ValueError("the graph's arrays differ in length")
    if graph.edges and (len(graph.offsets) != expanded + 1 or graph.offsets[-1] != len(graph.targets)):
        raise ValueError("the edges do not match the expanded states")
    graph.labels = [decode(label) for label in document["labels"]]
    builder = GraphBuilder.continuing(graph)
    if any(not -1 <= k < len(graph.labels) for k in graph.label_index) or \
            any(not -1 <= j < states for j in graph.parent) or any(not -1 <= j < states for j in graph.targets):
        raise ValueError("a number points outside the graph")
    graph.transitions, graph.expanded = int(document["transitions"]), expanded
    graph.reduced = int(document.get("reduced", 0))
    graph.deadlocks, graph.finals = [int(i) for i in document["deadlocks"]], [int(i) for i in document["finals"]]
    graph.problems = {str(name): (int(i), decode(label), [Violation(str(p), str(m), decode(w)) for p, m, w in found])
                      for name, (i, label, found) in document["problems"].items()}
    items = []
    with open(target / "frontier.jsonl") as lines:
        for line in lines:
            key, number, state = json.loads(line)
            if not isinstance(key, int) or not isinstance(number, int) or not expanded <= number < states:
                raise ValueError("a frontier line names no unexpanded state")
            items.append((key, (number, decode(state))))
    return builder, int(document["depth"]), bool(document["truncated"]), items

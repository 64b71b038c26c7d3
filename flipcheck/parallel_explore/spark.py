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

Fingerprints are computed on the executors only, with
:func:`~flipcheck.properties.fingerprints.stable_fingerprint`: PySpark starts them with one
``PYTHONHASHSEED`` (the driver's, or 0), but each executor's Python daemon is a process of its
own, and Python 3.11 hashes ``None`` by its address, so the plain hash of a state differs from
one executor to the next.

With ``resume_dir`` the driver saves its graph and the next level after every level
(:mod:`.saved_levels`: binary arrays, and JSON through :mod:`flipcheck.state_codec`: nothing is
unpickled), and a rerun with the same directory continues from the last level saved.

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
import time
from pathlib import Path
from typing import Callable

from flipcheck.properties.explore import GraphBuilder, StateGraph
from flipcheck.properties.protocol_explore import JobExploration, counterexamples
from flipcheck.properties.protocol_reduction import sound_reduction

from .expansion import expand, initial, job_from_spec, job_spec, number_level, spec_text
from .saved_levels import open_saved, resume_meta, save_level

__all__ = ["job_spec", "job_from_spec", "explore_job_on_spark"]

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
    # Each executor's Python daemon is a process of its own: fingerprints must not depend on it.
    text = spec_text(spec, reduction, stable=True)
    spec = json.loads(text)
    started = time.perf_counter()
    saved = None
    if resume_dir is not None:
        saved = open_saved(Path(resume_dir), resume_meta(spec, max_states, liveness))
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
            save_level(Path(resume_dir), builder, depth, truncated, [(key, (0, state))])
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
        if truncated:   # the bound is met: the search ends there, as in one process
            if resume_dir is not None:
                save_level(Path(resume_dir), builder, depth, truncated, [])
            break
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
            save_level(Path(resume_dir), builder, depth, truncated, level.collect())
    for rdd in done:
        rdd.unpersist()
    graph.complete = not truncated and graph.expanded == len(builder)
    graph.seconds = time.perf_counter() - started
    return JobExploration(job, graph, counterexamples(job, graph, liveness, reduction), reduction)

"""Job graphs and schedules for the whole-job protocol (:mod:`flipcheck.model.protocol`).

:func:`example_graph` gives the small graphs of issue 4 — a chain, a diamond and two sources of
different lengths joined ALL_TO_ALL — each ending in a two-phase-commit sink; :func:`random_walk`
takes a seeded random schedule through the composed model.

Example
-------
>>> g = example_graph("join")
>>> [(v.id, v.parallelism, dict(v.extra)) for v in g.vertices]
[('short', 1, {'records': 1}), ('long', 1, {'records': 2}), ('join', 1, {'two_phase_commit_sink': True})]
>>> sorted(EXAMPLE_GRAPHS)
['chain', 'diamond', 'join', 'pair', 'pair-v2', 'parallel', 'twin', 'union']
"""

from __future__ import annotations

import random
from types import MappingProxyType

from flipcheck.model.protocol import Job, JobState, initial_state, successors
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobEdge, JobGraph, JobVertex

__all__ = ["EXAMPLE_GRAPHS", "FIRST_SET_GRAPHS", "WIDE_GRAPHS", "example_graph", "random_walk"]


def _v(name: str, parallelism: int = 1, **flags) -> JobVertex:
    return JobVertex(name, parallelism, MappingProxyType(flags))


def _graph(vertices, edges) -> JobGraph:
    return JobGraph.build(vertices, [JobEdge(*e) for e in edges])


#: name -> (vertices, edges); sinks are two-phase-commit sinks so exactly-once is judged.
EXAMPLE_GRAPHS = {
    "pair": ([_v("src"), _v("sink", two_phase_commit_sink=True)], [("src", "sink", ALL_TO_ALL)]),
    "chain": ([_v("src"), _v("map"), _v("sink", two_phase_commit_sink=True)],
              [("src", "map", POINTWISE), ("map", "sink", POINTWISE)]),
    "diamond": ([_v("src"), _v("a"), _v("b"), _v("sink", two_phase_commit_sink=True)],
                [("src", "a", ALL_TO_ALL), ("src", "b", ALL_TO_ALL), ("a", "sink", ALL_TO_ALL),
                 ("b", "sink", ALL_TO_ALL)]),
    "join": ([_v("short", records=1), _v("long", records=2), _v("join", two_phase_commit_sink=True)],
             [("short", "join", ALL_TO_ALL), ("long", "join", ALL_TO_ALL)]),
    # Two sources of the same length joined ALL_TO_ALL (records from the command line).
    "twin": ([_v("a"), _v("b"), _v("join", two_phase_commit_sink=True)],
             [("a", "join", ALL_TO_ALL), ("b", "join", ALL_TO_ALL)]),
    # Two parallel pipelines of one job: a sink subtask can finish while the other source still
    # has data, so checkpoints go on after its final one (FLINK-23473).
    "parallel": ([_v("src", 2), _v("sink", 2, two_phase_commit_sink=True)], [("src", "sink", POINTWISE)]),
    # A source into a Sink V2 writer with its committer chained (FLINK-24131 / FLINK-25920).
    "pair-v2": ([_v("src"), _v("sink", sink_v2=True)], [("src", "sink", ALL_TO_ALL)]),
    # Two source subtasks of different lengths into a union-list-state sink (FLINK-21080).
    "union": ([_v("src", 2), _v("sink", 2, union_list_state=True, two_phase_commit_sink=True)],
              [("src", "sink", POINTWISE)]),
}


#: Graphs only the first configuration set searches (``FIRST_CONFIGURATIONS`` in
#: flipcheck/designs/protocol.py), kept apart so that the random sweeps, whose case ids name the
#: graphs above, never draw them.
FIRST_SET_GRAPHS = {
    # A pair and a second source that nothing reads: its data keeps the checkpoint timer running
    # (C3) after the pair's source finished, so the pair's sink is triggered by RPC while a record
    # may still be in its channel (FLINK-21086, unaligned). The smallest job we found that shows it;
    # the bug breaks the consistent cut, so the sink is a plain one (a two-phase-commit sink
    # doubles the states).
    "pair-and-source": ([_v("src"), _v("sink"), _v("second", records=0)],
                        [("src", "sink", POINTWISE)]),
}

#: Graphs with a vertex at parallelism 3, pinned in tests/manifests/protocol.json and kept apart
#: like the first set's, so that the random sweeps never draw them (with a failover, fan-out's
#: search passes 200,000 states).
WIDE_GRAPHS = {
    # One source into three two-phase-commit sink subtasks (a rebalance into a parallel sink): the
    # sinks' final checkpoints, notifications and restores at parallelism 3, with two of them
    # interchangeable when one record goes to the third (issue 27: the smallest such job we found
    # whose search ends; three sources into one sink pass two million states).
    "fan-out": ([_v("src"), _v("sink", 3, two_phase_commit_sink=True)], [("src", "sink", ALL_TO_ALL)]),
}


def example_graph(name: str, parallelism: int = 1) -> JobGraph:
    """The example graph ``name`` (of :data:`EXAMPLE_GRAPHS`, :data:`FIRST_SET_GRAPHS` or
    :data:`WIDE_GRAPHS`); ``parallelism`` > 1 multiplies every parallelism-1 vertex."""
    known = {**EXAMPLE_GRAPHS, **FIRST_SET_GRAPHS, **WIDE_GRAPHS}
    vertices, edges = known[name]   # KeyError for a name of none
    if parallelism != 1:
        vertices = [JobVertex(v.id, v.parallelism * parallelism, v.extra) for v in vertices]
    return _graph(vertices, edges)


def random_walk(job: Job, rng: random.Random, max_steps: int = 2_000) -> tuple[list, JobState]:
    """A seeded random schedule: labels taken and the last state (the end, a deadlock or ``max_steps``)."""
    state = initial_state(job)
    labels = []
    for _ in range(max_steps):
        options = list(successors(job, state))
        if not options:
            break
        label, state, _ = options[rng.randrange(len(options))]
        labels.append(label)
    return labels, state

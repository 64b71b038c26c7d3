"""Symmetry reduction's renamings (properties/protocol_symmetry.py): which jobs have them, and
that the model cannot tell a renamed state from the original: the steps of a renamed state are
the renamed steps (checked along seeded random walks), and the explorer stores one state per
orbit. A renaming that is not a symmetry is caught by the same check."""

import random

import pytest

from flipcheck.generators.protocol import example_graph, random_walk
from flipcheck.model.protocol import Job, initial_state, successors
from flipcheck.properties import protocol_symmetry
from flipcheck.properties.protocol_explore import explore_job
from flipcheck.properties.protocol_symmetry import Symmetry, canonical_function, permute, symmetries


def _equivariance_failures(job, group, walks=20, seed=7):
    """States along random walks whose renamed successors differ from the renamed state's."""
    rng = random.Random(seed)
    failures = 0
    for _ in range(walks):
        labels, _ = random_walk(job, rng, max_steps=60)
        state = initial_state(job)
        for label in labels:
            for symmetry in group:
                mirrored = {permute(job, symmetry, nxt) for _, nxt, _ in successors(job, state)}
                try:
                    steps = {nxt for _, nxt, _ in successors(job, permute(job, symmetry, state))}
                except (TypeError, ValueError, IndexError, KeyError):
                    steps = None  # not even a state the rules can step from
                if mirrored != steps:
                    failures += 1
            state = next(nxt for candidate, nxt, _ in successors(job, state) if candidate == label)
    return failures


@pytest.mark.parametrize("name, parallelism, options, count", [
    ("pair", 2, {"records": 1}, 1),          # the two keyBy lanes swap with their records
    ("pair", 3, {"records": 0}, 35),         # no record ties a source to a sink: 3! x 3! - 1
    ("diamond", 1, {"records": 1}, 1),       # the two branches
    ("twin", 1, {"records": 1}, 1),          # the two equal sources
    ("parallel", 1, {"records": 0}, 1),      # the two pipelines
    ("chain", 1, {"records": 1}, 0),
    ("join", 1, {}, 0),                      # sources of different lengths
])
def test_symmetries_of_the_example_jobs(name, parallelism, options, count):
    assert len(symmetries(Job(example_graph(name, parallelism), **options))) == count


@pytest.mark.parametrize("name, parallelism, options", [
    ("pair", 2, {"records": 1}), ("diamond", 1, {"records": 1, "mode": "unaligned"}),
    ("twin", 1, {"records": 1, "mode": "at-least-once"}), ("pair", 2, {"records": 1, "failures": 1}),
])
def test_the_model_cannot_tell_a_renamed_state_from_the_original(name, parallelism, options):
    job = Job(example_graph(name, parallelism), **options)
    assert _equivariance_failures(job, symmetries(job)) == 0


def test_a_renaming_that_is_not_a_symmetry_is_caught():
    job = Job(example_graph("pair", 2), records=1)
    good = symmetries(job)[0]
    # the sources swapped but not the sinks: record 0 would now go to sink[1]
    bad = Symmetry((1, 0, 2, 3), (2, 3, 0, 1), good.records, good.inputs, ((0, 1), (0, 1), (1, 0), (1, 0)))
    assert _equivariance_failures(job, [bad], walks=5) > 0


def test_one_state_per_orbit():
    job = Job(example_graph("union"), records=0)
    representative = canonical_function(job)
    full = explore_job(job, store="states", reduction="none")
    orbits = {representative(state) for state in full.graph.states}
    quotient = explore_job(job, store="states", reduction="symmetry")
    assert quotient.states == len(orbits) < full.states
    assert all(representative(state) == state for state in quotient.graph.states)


def test_a_large_job_is_searched_without_renamings(monkeypatch):
    assert symmetries(Job(example_graph("pair", 5), records=0)) == []   # 5! x 5! candidates
    monkeypatch.setattr(protocol_symmetry, "MAX_TASKS_CHECKED", 3)
    assert symmetries(Job(example_graph("pair", 2), records=1)) == []

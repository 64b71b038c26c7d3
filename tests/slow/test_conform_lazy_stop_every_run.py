"""The lazy search's stop (tests/cover/test_conform_lazy_stop.py) and its pruning
(tests/cover/test_conform_pruning.py) on every stored real run and on the alteration matrix of
the suite's two runs: the same verdict, first unexplained line, why and behaviour as the search
before both, full layers of every node. That search costs what conform cost before them."""

import pytest

from flipcheck.errors import InputError
from flipcheck.flink.suite import ALTERATIONS, alter_run
from flipcheck.properties.protocol_trace_validation import validate

from conform_runs import RUNS, searches_of
from test_conform_lazy_stop import finding

# Runs the search before the stop and the pruning does not decide within the 2,000,000-state
# budget, or decides only after minutes: too long for CI, and the budget, not the search, would
# differ. Each conforms now (docs/conformance.md, "Cost"): job-server-join-failover-undecided in
# 322,585 states, faults-join-end-of-input in 199,602 (divergences 26 and 27),
# diamond-unaligned-eod-before-barrier in 437,553 (divergence 30),
# diamond-unaligned-source-closed-before-trigger in 19,109, join-failover-finish-before-restart in
# 300,781 and join-failover-notice-to-failed-task in 30,733 (pure Python, 2026-11-27), and
# join-at-least-once-cancelled-sources-acknowledge-after-failover in 791,793 (divergence 44).
_TOO_LONG = ("job-server-join-failover-undecided", "faults-join-end-of-input", "diamond-unaligned-eod-before-barrier",
             "diamond-unaligned-source-closed-before-trigger", "join-failover-finish-before-restart",
             "join-failover-notice-to-failed-task", "join-at-least-once-cancelled-sources-acknowledge-after-failover")


def both_ways(search):
    """The search as conform runs it, and the search before the lazy stop and the pruning."""
    job, observations, options = search
    return (validate(job, observations, **options),
            validate(job, observations, **options, full_layers=True, prune=False))


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if p.is_dir() and p.name not in _TOO_LONG))
def test_every_stored_run_gets_the_same_verdict_either_way(name):
    try:
        searches = searches_of(RUNS / name)
    except InputError as error:   # the empty plans REST served while a job was INITIALIZING
        pytest.skip(f"{name}: conform searches nothing ({error})")
    if not searches:
        pytest.skip(f"{name}: no protocol search (its logs hold another design's lines only)")
    stopped, full = both_ways(searches[0])
    assert finding(stopped) == finding(full) and stopped.states <= full.states


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
def test_the_alteration_matrix_gets_the_same_verdict_either_way(tmp_path, alteration):
    alter_run(RUNS / "join-failover", alteration, tmp_path / "run")
    (search,) = searches_of(tmp_path / "run")
    stopped, full = both_ways(search)
    assert finding(stopped) == finding(full) and stopped.states <= full.states

"""The lazy search's stop (properties/protocol_trace_validation.py, ``_Search.children`` and
``expand``; docs/conformance.md "Cost") changes how many states are searched, never what is
found: the same verdict, explained prefix, first unexplained line, why and behaviour as the
search that looks one layer of silent steps further (``full_layers=True``, the search before
the stop), on stored real runs of each shape and on altered logs. The comparison on every stored
run and every alteration is in tests/slow/test_conform_lazy_stop_every_run.py."""

import re

import pytest

from flipcheck.flink import conform as conform_module
from flipcheck.flink.conform import conform_files
from flipcheck.flink.suite import ALTERATIONS, alter_run
from flipcheck.properties.protocol_trace_validation import validate

from conform_runs import RUNS, searches_of

__all__ = []


def _both(folder):
    """The protocol search of the run in ``folder``, lazy stop and full layers."""
    (search,) = searches_of(folder)
    return both_ways(search)


def both_ways(search):
    job, observations, options = search
    return validate(job, observations, **options), validate(job, observations, **options, full_layers=True)


def _counted(why: str) -> str:
    """``why`` without the number of states a bounded search stopped after (which the stop lowers),
    and without where an undecided search had to drop ways (the searches keep different nodes)."""
    why = re.sub(r" \(undecided: the search kept [\d,]+ of the ways to explain .*? keeps more\)", "", why)
    return re.sub(r"stopped after [\d,]+ states", "stopped after N states", why)


def finding(result) -> tuple:
    """What a search found, as the comparison reads it: the verdict, how far it explained, the
    first unexplained line and its why (without the bounded search's state count), the evidence
    and the behaviour."""
    return (result.conforms, result.explained, result.first_unexplained, result.evidence, _counted(result.why),
            result.behaviour, result.explained_after)


# A failover that uses up an id, a short run (rejected logs: the alterations below); every other
# stored run is compared in tests/slow.
@pytest.mark.parametrize("name", ["chain-failover-burned-id", "union-state"])
def test_the_lazy_stop_finds_what_the_full_layers_find(name):
    stopped, full = _both(RUNS / name)
    assert finding(stopped) == finding(full)
    assert stopped.states < full.states   # the stop is what makes it cheaper


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
def test_an_altered_log_is_rejected_at_the_same_line_either_way(tmp_path, alteration):
    alter_run(RUNS / "union-state", alteration, tmp_path / "run")
    stopped, full = _both(tmp_path / "run")
    assert finding(stopped) == finding(full) and stopped.states <= full.states


def test_searches_of_hands_validate_what_conform_does():
    run = RUNS / "chain-failover-cut-snapshot"
    (job, observations, options), = searches_of(run)
    verdict = conform_files(str(run / "plan.json"), [str(run / "flink.log")]).verdict
    assert validate(job, observations, **options) == verdict and verdict.conforms
    assert conform_module.validate is validate   # put back


def test_the_comparison_sees_a_search_that_stops_too_early():
    """A search that may take at most one silent step between two lines finds less: the
    comparison above would fail on it."""
    job, observations, options = searches_of(RUNS / "union-state")[0]
    too_early = validate(job, observations, **{**options, "depth": 1})
    assert finding(too_early) != finding(validate(job, observations, **options, full_layers=True))

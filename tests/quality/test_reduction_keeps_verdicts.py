"""Partial-order and symmetry reduction keep every verdict: on each variant's own configuration
and on the pinned configurations, the reduced graph violates exactly the properties the full
graph does (judged on the reduced graph itself, before any trace is searched again), in no more
states; and the traces reported are the full model's shortest ones. A broken independence
relation is caught by the same comparison; tests/cover/test_protocol_symmetry.py checks the
renamings themselves. The cross product of every variant with every pinned configuration runs
in tests/slow/test_reduction_sweep.py."""

import pytest

import manifest
from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import Job, initial_state, successors
from compiled_build import patches_compiled
from flipcheck.properties import protocol_reduction
from flipcheck.properties.explore import explore_graph
from flipcheck.properties.protocol_explore import explore_job, search_functions, violated_properties
from flipcheck.properties.protocol_symmetry import canonical_function, symmetries
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS, make_job
from test_protocol_variants_caught import CASES, LONG_CASES

QUICK_PINNED = [e for e in manifest.entries("protocol") if e["distinct_states"] <= 6_000]
# Variants whose own configuration takes more than a few seconds to explore twice: they run in
# tests/slow/test_reduction_sweep.py with the rest.
SLOW_VARIANTS = LONG_CASES | {"wiki-b-trigger", "new-transaction-after-finish", "union-state-partial-finish"}


def pinned_job(entry, variant: str = CORRECT_PROTOCOL):
    options = dict(entry["config"])
    graph = options.pop("graph")
    parallelism = options.pop("parallelism", 1)
    if options["records"] is None:
        del options["records"]
    return make_job(example_graph(graph, parallelism), variant, **options)


def case_job(variant: str, protocol: str):
    case = CASES[variant]
    return make_job(case.graph(), protocol, mode=case.mode, records=case.records, **dict(case.options))


def reduced_graph(job, reduction: str = "por"):
    return explore_graph([initial_state(job)], store="fingerprints", **search_functions(job, reduction))


def reductions_that_differ(job, reductions=("por", "symmetry", "all")) -> tuple:
    """The ``reductions`` whose search is not one already made: without symmetries (most pinned
    jobs: one task a vertex) the representative is the state itself (``canonical_function``), so
    "symmetry" searches what no reduction does and "all" what "por" does, state for state."""
    if symmetries(job):
        return reductions
    state = initial_state(job)
    assert canonical_function(job)(state) is state
    differ = tuple(r for r in reductions if r not in ("symmetry", "all"))
    if not differ:   # asked for symmetry alone: nothing to compare, and a silent pass would hide it
        pytest.skip(f"the job has no symmetries: {', '.join(reductions)} would search what a search without them does")
    return differ


def test_asking_for_symmetry_alone_on_a_job_without_symmetries_is_said_not_passed():
    job = make_job(example_graph("chain"), CORRECT_PROTOCOL, mode="aligned", records=0, checkpoints=1)
    assert not symmetries(job)
    assert reductions_that_differ(job) == ("por",)
    with pytest.raises(pytest.skip.Exception, match="no symmetries"):
        reductions_that_differ(job, ("symmetry",))


def assert_same_verdicts(job, reductions=("por", "symmetry", "all")):
    full = explore_job(job, store="fingerprints")
    assert full.complete
    graphs = {}
    for reduction in reductions_that_differ(job, reductions):
        reduced = graphs[reduction] = reduced_graph(job, reduction)
        assert reduced.complete
        assert violated_properties(reduced) == set(full.violated()), reduction
        assert len(reduced) <= full.states
    return full, graphs


@pytest.mark.parametrize("variant", sorted(set(CASES) - SLOW_VARIANTS))
def test_each_variant_keeps_its_verdict_on_its_own_configuration(variant):
    full, _ = assert_same_verdicts(case_job(variant, variant))
    assert CASES[variant].expected in full.violated()


@pytest.mark.parametrize("entry", QUICK_PINNED, ids=manifest.entry_id)
def test_correct_protocol_stays_clean_in_fewer_states(entry):
    full, graphs = assert_same_verdicts(pinned_job(entry))
    assert full.counterexamples == []
    assert len(graphs["por"]) < full.states and graphs["por"].reduced > 0


@pytest.mark.parametrize("variant", ["cancel-pending-on-finish", "released-channel-stays-queued",
                                     "end-of-data-view-kept-on-failover"])
def test_reported_traces_are_the_full_models_shortest(variant):
    job = case_job(variant, variant)
    full = explore_job(job, store="fingerprints")
    reduced = explore_job(job, store="fingerprints", reduction="por")
    assert reduced.reduction == "por" and reduced.states <= full.states
    assert [(c.property, c.labels, c.cycle) for c in reduced.counterexamples] == \
        [(c.property, c.labels, c.cycle) for c in full.counterexamples]


# Compiled by mypyc, protocol_reduction calls its own conflict() directly: a patch on the module
# attribute never reaches it.
@patches_compiled("flipcheck.properties.protocol_reduction", "conflict()")
def test_a_broken_independence_relation_is_caught(monkeypatch):
    """With every pair of steps taken as independent, the reduction follows one step at a time
    and loses violations: the comparison above must notice."""
    monkeypatch.setattr(protocol_reduction, "conflict", lambda a, b: False)
    lost = []
    for variant in ("cancel-pending-on-finish", "pre-flip-147", "end-of-data-view-kept-on-failover"):
        job = case_job(variant, variant)
        full = set(explore_job(job, store="fingerprints").violated())
        if violated_properties(reduced_graph(job)) != full:
            lost.append(variant)
    assert lost


def test_reduction_waits_until_no_failover_can_happen():
    job = Job(example_graph("pair"), records=1, failures=1)
    ample = search_functions(job, "por")["ample"]
    state = initial_state(job)
    assert ample(state, list(successors(job, state))) is None

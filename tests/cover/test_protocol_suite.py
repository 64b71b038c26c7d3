"""The ``protocol`` sweep suite: random schedules and exhaustive configurations of the whole job."""

from flipcheck.designs.suite import get_suite
from flipcheck.designs.protocol import EXHAUSTIVE_CONFIGS, Trace

SUITE = get_suite("protocol")


def test_the_correct_protocol_passes_random_schedules():
    space = SUITE.space("suite-test")
    for index in range(150):
        assert space.check(space.case(index), SUITE.engine).violations == [], space.case_id(index)


def test_a_variant_is_caught_minimised_to_a_shortest_trace_and_drawn(tmp_path):
    space = SUITE.space("suite-test")
    small_graphs = (space.case(i) for i in range(400) if space.case(i)[0] in ("pair", "chain"))  # quick to explore
    failing = next(case for case in small_graphs if space.check(case, "pre-flip-147").violations)
    prop = space.check(failing, "pre-flip-147").violations[0].property
    small = SUITE.minimise(failing, "pre-flip-147", prop)
    assert isinstance(small, Trace) and SUITE.size_of(small) <= SUITE.size_of(failing)
    assert any(v.property == prop for v in SUITE.space("x").check(small.config, "pre-flip-147").violations)
    described = SUITE.describe(small, "pre-flip-147")
    assert described["steps"] == len(described["trace"]) == SUITE.size_of(small)
    svg = open(SUITE.render(small, "pre-flip-147", str(tmp_path / "trace.svg"))).read()
    assert "coordinator" in svg and "violated" in svg


def test_the_exhaustive_space_explores_every_configuration_completely():
    space = SUITE.space(SUITE.exhaustive_token())
    assert space.size == len(EXHAUSTIVE_CONFIGS) and space.coverage()["max_failures"] == 1
    assert f"(1,234 states searched, reduced by partial-order and symmetry reduction, which keep every verdict) " \
           f"of the {space.size} example jobs" in space.statement("flip-147", 1234)
    outcome = space.check(space.case(0), SUITE.engine)
    assert outcome.violations == [] and outcome.assignments > 1
    caught = space.check(space.case(0), "cancel-pending-on-finish")
    assert caught.violations and caught.counterexample is not None


def test_a_minimised_trace_replays_by_id_and_is_rechecked(capsys, tmp_path):
    import json

    from flipcheck.cli import main

    # protocol:1:5 is a pair graph (quick to explore) on which pre-flip-147 fails.
    picture = tmp_path / "min.svg"
    assert main(["replay", "protocol:1:5", "--variant", "pre-flip-147", "--minimise", "--json",
                 "--render", str(picture)]) == 1
    replayed = json.loads(capsys.readouterr().out)
    properties = {v["property"] for v in replayed["violations"]}
    assert properties and "crash" not in properties
    assert replayed["case"]["steps"] == len(replayed["case"]["trace"]) <= 5
    assert "violated" in picture.read_text()


def test_minimising_looks_in_smaller_configurations_first():
    """A wiki-b-trigger schedule of twin with 2 records and 3 checkpoints dangles a transaction;
    the minimised trace shows it with no record and one checkpoint, and still violates it."""
    from flipcheck.designs.protocol import Configuration, minimise_case

    large = Configuration("twin", "at-least-once", 2, 3, 0)
    small = minimise_case(large, "wiki-b-trigger", "no_dangling_transaction")
    assert isinstance(small, Trace)
    assert (small.config.records, small.config.checkpoints, small.config.failures) < (2, 3, 0)
    assert small.config._replace(records=2, checkpoints=3, failures=0) == large
    found = SUITE.space("x").check(small, "wiki-b-trigger").violations
    assert "no_dangling_transaction" in {v.property for v in found}


def test_the_configurations_tried_while_minimising_end_with_the_case_s_own():
    from flipcheck.designs.protocol import Configuration, smaller_configurations

    for config in (Configuration("pair", "aligned", 2, 3, 1), Configuration("pair", "aligned", 1, 0, 0)):
        tried = smaller_configurations(config)
        assert tried[-1] == config and len(set(tried)) == len(tried)
        assert all(t.records <= config.records and t.checkpoints <= config.checkpoints
                   and t.failures <= config.failures for t in tried)


def test_stopping_at_a_propertys_shortest_trace_gives_the_full_searchs_trace():
    from flipcheck.properties.protocol_explore import GRAPH_PROPERTIES, explore_job
    from flipcheck.designs.protocol import Configuration

    cases = [(Configuration("pair", "aligned", 1, 1, 0), "pre-flip-147"),          # step and state properties
             (Configuration("twin", "aligned", 0, 1, 0), "trigger-sources-only")]  # a deadlock, a graph property
    for config, variant in cases:
        job = config.job(variant)
        full = explore_job(job)
        assert full.complete and len(full.counterexamples) >= 2
        for counterexample in full.counterexamples:
            graph_property = counterexample.property in GRAPH_PROPERTIES
            early = explore_job(job, shortest_of=counterexample.property, liveness=graph_property)
            same = [c for c in early.counterexamples if c.property == counterexample.property]
            assert same and same[0].labels == counterexample.labels, counterexample.property
            assert early.states < full.states or graph_property, counterexample.property

"""Counterexamples kept for verify and sweep (flipcheck/designs/counterexamples.py): which case is
shown, that it can be replayed, and that a user's variant is saved for the replay."""

from flipcheck.designs.drivers import Finding, Findings, collect_findings, report_problems
from flipcheck.designs.suite import get_suite, resolve_case
from flipcheck.properties.violation import Violation


def test_the_shown_case_is_one_its_suite_can_replay():
    findings = Findings()
    findings.add(Finding("p", "explored", ("config", ()), "exploration"))
    findings.add(Finding("p", "seeded", "case 3", "seeded", "toy:verify-toy:3"))
    findings.add(Finding("p", "a later seeded one", "case 9", "seeded", "toy:verify-toy:9"))
    assert findings.best("p", replayable_case=True).driver == "exploration"   # its own command replays any case
    assert findings.best("p", replayable_case=False).case == "case 3"         # only an id replays it: the first
    assert findings.best("q", replayable_case=True) is None


def test_an_explored_configuration_is_reported_with_the_id_of_its_exhaustive_unit():
    suite = get_suite("split-assignment")
    from flipcheck.designs.split_assignment import EXPLORATION_CONFIGS

    config = EXPLORATION_CONFIGS[-1]
    with collect_findings() as findings:
        report_problems([Violation("p", "m"), Violation("p", "later"), Violation("q", "n")], (config, ()),
                        case_id=suite.exhaustive_id(config))
    found = findings.best("p", replayable_case=False)
    assert found.message == "m" and findings.best("q", False).message == "n"
    _, space, index = resolve_case(found.case_id)
    assert space.case(index) == config
    assert get_suite("batch-recovery").exhaustive_id("not a unit") is None


def test_a_user_variant_is_copied_once_and_a_copy_names_itself(tmp_path):
    from flipcheck.designs.counterexamples import save_variant

    mine = tmp_path / "mine.py"
    mine.write_text("import flipcheck\n\n\nclass Mine(flipcheck.Protocol):\n    pass\n")
    copied = save_variant(tmp_path / "out", f"{mine}:Mine")
    assert copied == f"{tmp_path / 'out' / 'variant' / 'mine.py'}:Mine"
    assert (tmp_path / "out" / "variant" / "mine.py").read_text() == mine.read_text()
    assert save_variant(tmp_path / "out", copied) == copied      # verify --variant on the copy itself
    assert save_variant(tmp_path / "out", "pre-flip-147") == "pre-flip-147"


def _every_case_flagged(case):
    return [Violation("any", "every case")]


def _hypothesis_generators():
    """(suite, generate, seed prefix) for each random space verify's hypothesis driver feeds."""
    from flipcheck.designs import approximate_recovery, batch_recovery, local_recovery, plan, protocol, split_assignment
    from flipcheck.designs.generated_suite import KIND_SEPARATOR

    yield "plan", plan.generate_case, ""
    yield "protocol", protocol.generate_case, ""
    yield "batch-recovery", batch_recovery.generate_case, ""
    yield "split-assignment", split_assignment.generate_case, ""
    for design in (approximate_recovery, local_recovery):
        for kind in design.CASE_KINDS:
            yield design.SUITE.name, (lambda chooser, kind=kind, design=design: design.generate_case(chooser, kind)), \
                f"{kind}{KIND_SEPARATOR}"


def test_a_case_hypothesis_found_replays_from_its_recorded_choices():
    from flipcheck.designs.drivers import hypothesis_driver

    checked = 0
    for name, generate, prefix in _hypothesis_generators():
        with collect_findings() as findings:
            hypothesis_driver(generate, _every_case_flagged, budget_seconds=30, max_cases=2, suite=name, seed_prefix=prefix)
        found = findings.best("any", replayable_case=False)
        assert found.driver == "hypothesis" and found.case_id.startswith(f"{name}:{prefix}choices-"), found.case_id
        suite, space, index = resolve_case(found.case_id)
        assert suite.name == name and space.case(index) == found.case, found.case_id
        checked += 1
    assert checked >= 6


def test_recorded_choices_that_do_not_fit_the_generator_are_refused_in_words():
    import pytest

    from flipcheck.generators.choices import RecordedChoicesError

    _, space, index = resolve_case("protocol:choices-1:0")   # the generator asks for more than one answer
    with pytest.raises(RecordedChoicesError, match="recorded choices end after 1 answers"):
        space.case(index)
    _, space, index = resolve_case("plan:choices-999999.0.0:0")
    with pytest.raises(RecordedChoicesError, match="outside"):
        space.case(index)

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

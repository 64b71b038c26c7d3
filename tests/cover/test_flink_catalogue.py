"""The fix-version catalogue (flipcheck/flink/catalogue.py) covers every FLINK id the code names,
names only variants that exist, orders releases correctly, and gives the verdicts the release
matrix must reach for FLINK-25920 and FLINK-37605 (fix-versions.md, sections 3 and 4)."""

import doctest
import re
import subprocess
from pathlib import Path

import pytest

import flipcheck.flink.catalogue as catalogue_module
from flipcheck.designs.mutants import catalogue as mutant_catalogue
from flipcheck.flink.catalogue import (
    KNOWN_BUGS, RELEASES, affected_releases, expected_verdict, fixed_releases, release_key, release_line,
)

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reference" / "fix-versions.md"
_ID = re.compile(r"FLINK-[0-9]+")


def ids_named_in_code() -> set[str]:
    """Every FLINK id in the tracked files the brief names: the sources of the mutants."""
    paths = ["reference_impl", "model", "properties", "flipcheck", "docs/mutants.md"]
    listed = subprocess.run(["git", "ls-files", "--", *paths], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    found: set[str] = set()
    for name in listed:
        if name == "flipcheck/flink/catalogue.py":
            continue  # the catalogue itself must not vouch for its own coverage
        found |= set(_ID.findall((ROOT / name).read_text(encoding="utf-8")))
    return found


def test_every_flink_id_in_the_code_has_an_entry():
    named = ids_named_in_code()
    assert len(named) >= 40
    assert sorted(named - set(KNOWN_BUGS)) == []


def test_every_entry_is_named_in_the_code_and_documented():
    named = ids_named_in_code()
    doc = DOC.read_text(encoding="utf-8")
    for bug_id, bug in KNOWN_BUGS.items():
        assert bug.id == bug_id
        assert bug_id in named, f"{bug_id} is catalogued but no code names it"
        assert bug_id in doc, f"{bug_id} has no row or section in fix-versions.md"
        assert bug.source.startswith("docs/reference/fix-versions.md") and bug_id in bug.source


def test_every_variant_named_exists_in_its_design():
    known = {(m.suite, m.variant): m for m in mutant_catalogue().values()}
    for bug in KNOWN_BUGS.values():
        named = [(bug.design, bug.variant)] if bug.variant else []
        named += [tuple(other.split("/")) for other in bug.other_variants]
        for design, variant in named:
            assert (design, variant) in known, f"{bug.id}: no variant {variant!r} in design {design!r}"


def test_every_mutant_with_a_flink_issue_points_at_an_entry_naming_it():
    for mutant in mutant_catalogue().values():
        if mutant.flink_issue is None:
            continue
        bug = KNOWN_BUGS[mutant.flink_issue]
        named = {(bug.design, bug.variant)} | {tuple(other.split("/")) for other in bug.other_variants}
        assert (mutant.suite, mutant.variant) in named, mutant.id


def test_the_sink_v2_bugs_name_their_variants():
    assert KNOWN_BUGS["FLINK-25920"].variant == "end-input-again-after-restore"
    assert KNOWN_BUGS["FLINK-37605"].variant == "end-of-input-sentinel-id"


def test_release_key_orders_by_number_not_text():
    assert release_key("1.20.1") < release_key("2.0.0")
    assert release_key("1.9.3") < release_key("1.14.0") < release_key("1.20.0")
    assert release_key("2.0.0") < release_key("2.0.1") < release_key("2.1.0")
    assert release_line("1.20.2") == (1, 20)
    assert list(RELEASES) == sorted(RELEASES, key=release_key)
    assert "1.14.1" not in RELEASES
    assert RELEASES[0] == "1.14.0" and RELEASES[-1] == "2.3.0"


@pytest.mark.parametrize("bad", ["1.20", "v1.20.0", "2.0-preview1", "1.20.x", ""])
def test_release_key_rejects_what_is_not_a_release(bad):
    with pytest.raises(ValueError):
        release_key(bad)


FLINK_25920 = {
    "1.14.0": None, "1.14.6": None,
    "1.15.0": "flagged", "1.16.3": "flagged", "1.18.1": "flagged", "1.19.0": "flagged", "1.19.1": "flagged",
    "1.19.2": "conforms", "1.19.3": "conforms",
    "1.20.0": "flagged", "1.20.1": "conforms", "1.20.2": "conforms", "1.20.5": "conforms",
    "2.0.0": "conforms", "2.0.1": "conforms", "2.1.0": "conforms", "2.2.1": "conforms", "2.3.0": "conforms",
}

FLINK_37605 = {
    "1.14.0": None, "1.14.6": None,
    "1.15.0": "flagged", "1.17.2": "flagged", "1.19.1": "flagged", "1.19.2": "flagged",
    "1.19.3": "conforms",
    "1.20.0": "flagged", "1.20.1": "flagged", "1.20.2": "conforms", "1.20.3": "conforms",
    "2.0.0": "flagged", "2.0.1": "conforms", "2.0.2": "conforms",
    "2.1.0": "conforms", "2.1.3": "conforms", "2.2.0": "conforms", "2.3.0": "conforms",
}


@pytest.mark.parametrize("release,verdict", sorted(FLINK_25920.items()))
def test_flink_25920_verdicts(release, verdict):
    assert expected_verdict("FLINK-25920", release) == verdict


@pytest.mark.parametrize("release,verdict", sorted(FLINK_37605.items()))
def test_flink_37605_verdicts(release, verdict):
    assert expected_verdict("FLINK-37605", release) == verdict


@pytest.mark.parametrize("bug_id", ["FLINK-25920", "FLINK-37605"])
def test_the_sink_v2_bugs_give_every_release_with_sink_v2_a_verdict(bug_id):
    bug = KNOWN_BUGS[bug_id]
    assert bug.scenario and bug.not_showable is None
    with_sink_v2 = [v for v in RELEASES if release_key(v) >= (1, 15, 0)]
    assert set(affected_releases(bug_id)) | set(fixed_releases(bug_id)) == set(with_sink_v2)
    assert not set(affected_releases(bug_id)) & set(fixed_releases(bug_id))


def test_flink_37605_is_fixed_no_earlier_than_flink_25920_on_each_line():
    """Every release that carries FLINK-37605's fix carries FLINK-25920's (or makes it harmless)."""
    assert set(fixed_releases("FLINK-37605")) <= set(fixed_releases("FLINK-25920"))


def test_affected_and_fixed_never_overlap_and_fixes_stay_fixed():
    for bug_id, bug in KNOWN_BUGS.items():
        affected, fixed = set(affected_releases(bug_id)), fixed_releases(bug_id)
        assert not affected & set(fixed), bug_id
        for release in fixed:  # a later release on the same line keeps the fix
            later = [v for v in RELEASES if release_line(v) == release_line(release) and release_key(v) > release_key(release)]
            assert set(later) <= set(fixed), bug_id


def test_not_showable_bugs_have_no_verdict_on_any_release():
    hidden = [bug for bug in KNOWN_BUGS.values() if bug.not_showable]
    assert {"FLINK-22379", "FLINK-21080", "FLINK-40482", "FLINK-32945"} <= {bug.id for bug in hidden}
    for bug in hidden:
        assert bug.scenario is None
        assert all(expected_verdict(bug.id, v) is None for v in RELEASES), bug.id


def test_bugs_fixed_before_1_14_shipped_no_registry_release():
    for bug_id in ("FLINK-21080", "FLINK-22379", "FLINK-22003", "FLINK-21086", "FLINK-23771", "FLINK-24068",
                   "FLINK-24131", "FLINK-24161", "FLINK-23473"):
        bug = KNOWN_BUGS[bug_id]
        assert bug.affected == () and affected_releases(bug_id) == ()
        assert all(release_key(v) <= (1, 14, 0) for v in bug.fixed), bug_id
        assert "1.14.0" in fixed_releases(bug_id)


def test_open_bugs_are_affected_everywhere_and_fixed_nowhere():
    for bug_id in ("FLINK-40482", "FLINK-28515"):
        assert affected_releases(bug_id) == RELEASES
        assert fixed_releases(bug_id) == ()


def test_a_known_bug_needs_exactly_one_of_scenario_and_reason():
    bug = KNOWN_BUGS["FLINK-25920"]
    with pytest.raises(ValueError):
        type(bug)(**{**bug.__dict__, "not_showable": "both set"})
    with pytest.raises(ValueError):
        type(bug)(**{**bug.__dict__, "fixed": ("1.20.1", "1.19.2")})  # not oldest line first


def test_unknown_bug_id_is_an_error():
    with pytest.raises(KeyError):
        expected_verdict("FLINK-1", "1.20.0")


def test_module_doctests_pass():
    failures, tried = doctest.testmod(catalogue_module)
    assert tried >= 5 and failures == 0


def test_the_documented_verdict_table_matches_expected_verdict():
    """fix-versions.md's table of expected verdicts (section 4.2) says what expected_verdict says."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("Expected verdicts, FLINK-25920 and FLINK-37605", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([0-9.]+)(?:–([0-9.]+))? \| ([^|]+?) \| ([^|]+?) \|$", table, re.M)
    assert len(rows) >= 8
    covered = []
    for first, last, v25920, v37605 in rows:
        span = [v for v in RELEASES if release_key(first) <= release_key(v) <= release_key(last or first)]
        assert span, first
        for release in span:
            for bug_id, documented in (("FLINK-25920", v25920), ("FLINK-37605", v37605)):
                want = None if documented.startswith("none") else documented
                assert expected_verdict(bug_id, release) == want, (bug_id, release)
        covered += span
    assert sorted(covered, key=release_key) == list(RELEASES)

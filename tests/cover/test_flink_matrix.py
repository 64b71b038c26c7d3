"""The release matrix without a JVM: releases chosen, cells laid out and regenerated from their
ids, expectations, matrix.json's contract and its HTML, a stored cell read back on resume, and bad
options as one line with exit code 2."""

import json

import pytest

from flipcheck.cli import main
from flipcheck.designs.flink_jobs import CASE_FILE
from flipcheck.designs.flink_matrix import suite
from flipcheck.designs.suite import resolve_case
from flipcheck.errors import UsageError
from flipcheck.flink.catalogue import KNOWN_BUGS, expected_verdict, release_key
from flipcheck.flink.matrix import (SCENARIOS, cell_matches, choose_releases, default_releases, matrix_document,
                                    matrix_html, matrix_token, parse_matrix_token, scenarios_for, write_matrix)
from flipcheck.flink.releases import KNOWN_RELEASES
from flipcheck.reference_impl.protocol_variants import PROTOCOLS


def test_every_scenario_names_a_catalogued_bug_with_a_variant_and_a_graph():
    from flipcheck.flink.suite import GRAPHS

    assert {s.bug for s in SCENARIOS} >= {"FLINK-25920", "FLINK-37605"}
    for scenario in SCENARIOS:
        bug = KNOWN_BUGS[scenario.bug]
        assert bug.variant in PROTOCOLS, scenario.name
        assert (GRAPHS / scenario.graph).is_file(), scenario.name
        assert scenario.since in KNOWN_RELEASES, scenario.name
        assert bug.fixed, f"{scenario.bug} has a scenario but no fixed release to pass"


def test_the_default_releases_cover_every_minor_line_and_both_sides_of_each_fix():
    chosen = default_releases()
    lines = {release_key(r)[:2] for r in KNOWN_RELEASES}
    assert {release_key(r)[:2] for r in chosen} == lines
    assert chosen == sorted(chosen, key=release_key)
    for scenario in SCENARIOS:
        for fixed in KNOWN_BUGS[scenario.bug].fixed:
            if fixed in KNOWN_RELEASES:
                assert fixed in chosen
                assert expected_verdict(scenario.bug, fixed) == "conforms"
    # each chosen bug is expected to be flagged on some chosen release: the matrix can show it
    for bug in {s.bug for s in SCENARIOS}:
        assert any(expected_verdict(bug, r) == "flagged" for r in chosen), bug


def test_releases_are_chosen_by_name_or_all_and_unknown_ones_are_refused():
    assert choose_releases(" 2.0.0,1.20.0 ,1.20.0") == ["1.20.0", "2.0.0"]
    assert choose_releases("all") == sorted(KNOWN_RELEASES, key=release_key)
    assert choose_releases("none") == []
    with pytest.raises(UsageError, match="--releases: '1.14.1' is not a Flink release"):
        choose_releases("1.14.1")
    with pytest.raises(UsageError, match="--releases"):
        choose_releases(" , ")
    with pytest.raises(UsageError, match="--bugs: no scenario re-enacts FLINK-1"):
        scenarios_for(["FLINK-1"])


def test_a_cell_id_regenerates_its_cell():
    token = matrix_token(["1.19.0", "2.0.0"], ["FLINK-37605", "FLINK-25920"])
    assert parse_matrix_token(token) == (["1.19.0", "2.0.0"], ["FLINK-37605", "FLINK-25920"])
    space = suite.space(token)
    assert space.size == 2 * len(scenarios_for(["FLINK-37605", "FLINK-25920"]))
    for index in range(space.size):
        found_suite, found_space, found_index = resolve_case(space.case_id(index))
        assert found_suite is suite and found_index == index
        assert found_space.case(index) == space.case(index)
    with pytest.raises(ValueError, match="flipcheck flink matrix"):
        suite.space("7")


def test_a_release_without_the_scenarios_features_is_not_applicable_without_a_run(tmp_path):
    scenario = min(SCENARIOS, key=lambda s: release_key(s.since))
    older = [r for r in KNOWN_RELEASES if release_key(r) < release_key(scenario.since)]
    if not older:
        pytest.skip("every scenario runs on every release")
    space = suite.space(matrix_token([older[0]], [scenario.bug]))
    space.workdir = str(tmp_path / "runs")
    outcome = space.check(space.case(0), "flink")
    cell = outcome.detail["cell"]
    assert cell["verdict"] == "not-applicable" and scenario.since in cell["why"]
    assert not (tmp_path / "runs" / "flink.log").exists()
    stored = json.loads(next((tmp_path / "runs").glob(f"*/{CASE_FILE}")).read_text())
    assert stored["detail"]["cell"] == cell  # a resumed matrix reads it back


def test_expectations_and_matches():
    assert cell_matches({"verdict": "conforms", "expected": None})
    assert not cell_matches({"verdict": "error", "expected": None})
    assert not cell_matches({"verdict": "flagged", "expected": "conforms"})
    assert cell_matches({"verdict": "not-applicable", "expected": None})


def test_matrix_json_keeps_the_contract_and_its_html_escapes_what_runs_wrote(tmp_path):
    cells = [{"bug": "FLINK-37605", "release": "2.0.0", "scenario": "s", "verdict": "flagged", "expected": "flagged",
              "variant_conforms": True, "why": "committed-output: <script>alert(1)</script>", "run": "runs/x-0",
              "picture": "runs/x-0/behaviour.svg", "seconds": 12.5},
             {"bug": "FLINK-37605", "release": "2.1.0", "scenario": "s", "verdict": "flagged", "expected": "conforms",
              "variant_conforms": False, "why": "w", "run": "runs/x-1", "picture": None, "seconds": 11.0}]
    document = matrix_document(["2.0.0", "2.1.0"], ["FLINK-37605"], cells)
    assert set(document) >= {"releases", "bugs", "cells"}
    for cell in document["cells"]:
        assert set(cell) >= {"bug", "release", "verdict", "expected", "variant_conforms", "why", "run"}
    assert (document["matches"], document["mismatches"]) == (1, 1)
    write_matrix(tmp_path, document)
    assert json.loads((tmp_path / "matrix.json").read_text()) == document
    page = (tmp_path / "matrix.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "runs/x-0/behaviour.svg" in page and KNOWN_BUGS["FLINK-37605"].title.split()[0] in page
    assert page == matrix_html(document)


@pytest.mark.parametrize("argv, field", [
    (["--releases", "9.9.9"], "--releases"),
    (["--bugs", "FLINK-21080"], "--bugs"),
    (["--bugs", ","], "--bugs"),
    (["--releases", "none"], "--releases"),
    (["--flink-home", "/no/such/flink"], "--flink-home"),
])
def test_bad_matrix_options_exit_2_with_one_line(argv, field, tmp_path, capsys):
    code = main(["flink", "matrix", "--out", str(tmp_path / "m"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and field in err[0]


# Real runs of the matrix's scenarios on Flink 1.20.0 (both bugs shipped) and 1.20.2 (both fixed),
# stored by `flipcheck flink matrix --bugs FLINK-25920,FLINK-37605 --releases 1.20.0,1.20.2`.
RUNS = __import__("pathlib").Path(__file__).parents[1] / "fixtures" / "flink_runs"


@pytest.mark.parametrize("bug, release, failing", [
    ("FLINK-25920", "1.20.0", "job-finished"),
    ("FLINK-25920", "1.20.2", None),
    ("FLINK-37605", "1.20.0", "committed-output"),
    ("FLINK-37605", "1.20.2", None),
])
def test_stored_scenario_runs_are_flagged_on_the_release_with_the_bug_and_conform_on_the_fix(bug, release, failing):
    from flipcheck.flink.conform import conform_files

    run = RUNS / f"matrix-{bug}-{release}"
    result = conform_files(str(run / "plan.json"), [str(run / "flink.log")])
    failed = [c.name for c in result.checks if not c.ok]
    assert failed == ([failing] if failing else []), [c.as_json() for c in result.checks]
    assert (failing is not None) == (expected_verdict(bug, release) == "flagged")
    if bug == "FLINK-25920" and failing:
        assert "FLINK-25920" in next(c for c in result.checks if c.name == "job-finished").detail
    # the bug's own variant explains the log of the release that shipped it
    variant = conform_files(str(run / "plan.json"), [str(run / "flink.log")], protocol=KNOWN_BUGS[bug].variant)
    assert next(c for c in variant.checks if c.name == "model").ok


def test_an_own_build_column_takes_its_install_from_the_workers_environment(tmp_path, monkeypatch):
    """--flink-home: the cell of the "own" column judges the build the environment names (as a
    flink sweep's workers get it), with no JIRA expectation, and a build older than the
    scenario's features is not applicable without a run."""
    from flipcheck.designs.flink_jobs import RELEASE_ENV
    from flipcheck.flink.matrix import OWN_BUILD

    lib = tmp_path / "lib"
    lib.mkdir()
    monkeypatch.setenv(RELEASE_ENV, json.dumps({"version": "1.14-SNAPSHOT", "source": "flink-home", "lib": str(lib)}))
    space = suite.space(matrix_token([OWN_BUILD], ["FLINK-37605"]))
    space.workdir = str(tmp_path / "runs")
    cell = space.check(space.case(0), "flink").detail["cell"]
    assert cell["release"] == OWN_BUILD and cell["expected"] is None and cell["verdict"] == "not-applicable"
    assert cell["build"]["version"] == "1.14-SNAPSHOT"
    monkeypatch.delenv(RELEASE_ENV)
    other = suite.space(matrix_token([OWN_BUILD], ["FLINK-25920"]))
    other.workdir = str(tmp_path / "runs2")
    outcome = other.check(other.case(0), "flink")
    assert outcome.error is not None and "--flink-home" in outcome.error

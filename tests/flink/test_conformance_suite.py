"""The conformance suite on real Flink 2.3 (flipcheck/flink/suite.py): every job runs on a local
MiniCluster (about 5 s each) and must conform to the model; each run's log, altered to show a
protocol violation, must not."""

from pathlib import Path

import pytest

from flipcheck.flink.suite import ALTERATIONS, CONFORMANCE_SUITE, alter_run, case_named, run_case

pytestmark = pytest.mark.flink

_RUNS: dict = {}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each case runs once per session, on first use."""
    def get(name):
        if name not in _RUNS:
            out = tmp_path_factory.mktemp(name) / "run"
            _RUNS[name] = (out, *run_case(case_named(name), out))
        return _RUNS[name]
    return get


@pytest.mark.parametrize("case", CONFORMANCE_SUITE, ids=lambda case: case.name)
def test_a_real_run_conforms(runs, case):
    out, result, conformance = runs(case.name)
    assert result.status == "FINISHED"
    failing = {c.name: c.detail for c in conformance.checks if not c.ok}
    if case.expect_loss:
        # FLIP-147 off: the run is a behaviour of the pre-FLIP-147 model; whatever its sinks lost
        # is the end-of-job loss FLIP-147 removes, not a model failure.
        assert "model" not in failing, (conformance.first_unexplained, failing)
        assert set(failing) <= {"committed-output"}, failing
    else:
        assert conformance.conforms, (conformance.first_unexplained, failing)
        assert result.records_committed == result.records_expected


def test_a_flip_147_off_run_that_lost_records_does_not_conform_to_flip_147(runs):
    from flipcheck.flink.conform import conform_files

    out, result, _ = runs("join-flip147-off")
    verdict = conform_files(str(out / "plan.json"), [str(out / "flink.log")])
    # How many records the sink loses depends on timing; without a loss the run may look like
    # a FLIP-147 run (a source's end of data is logged only later).
    assert not verdict.conforms or result.records_committed == result.records_expected


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
@pytest.mark.parametrize("name", ["chain-aligned", "diamond-unaligned", "join-failover", "sink-v2-aligned"])
def test_an_altered_real_log_does_not_conform(runs, tmp_path, name, alteration):
    from flipcheck.flink.conform import conform_files

    out, _, _ = runs(name)
    what = alter_run(out, alteration, tmp_path / "altered")
    altered = conform_files(str(tmp_path / "altered" / "plan.json"), [str(tmp_path / "altered" / "flink.log")])
    failing = {c.name for c in altered.checks if not c.ok}
    assert not altered.conforms, what
    assert ("committed-output" if alteration == "committed-twice" else "model") in failing, (what, failing)

"""Faults at protocol points on real Flink 2.3 (`flipcheck flink run --fault`, docs/reference/fault-points.md):
one run of examples/graphs/flink/chain.json with three faults at once, shared by the module's two
tests (about 25 s): each fault that strikes logs its line, the run finishes, and `conform` explains it."""

import json
import shlex

import pytest

from flipcheck.cli import main
from flipcheck.flink.conform import conform_files
from flipcheck.flink.faults import parse_fault

pytestmark = pytest.mark.flink

# `flipcheck flink run --help`'s example of three faults, run here once for the documented
# examples too (documented_commands.ASSERTED_ELSEWHERE; its exit code 0 is asserted below). A
# record failure lets the job restore from a checkpoint; the sink, which has state (its
# transactions), then throws once in initializeState; a map snapshot is held 300 ms.
DOCUMENTED_EXAMPLE = ("flipcheck flink run examples/graphs/flink/chain.json --fault fail:src:0@25 "
                      "--fault restore-throw:sink:1 --fault delay-snapshot:map:0@2=300")
FAULTS = tuple(word for word in DOCUMENTED_EXAMPLE.split()[5:] if word != "--fault")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults") / "out"
    code = main([*shlex.split(DOCUMENTED_EXAMPLE)[1:], "--out", str(out)])
    return code, out


def test_the_faults_strike_once_each_and_the_job_finishes(run):
    code, out = run
    assert code == 0, (out / "jvm.out").read_text()[-2000:]
    summary = json.loads((out / "run.json").read_text())
    assert summary["status"] == "FINISHED" and sorted(summary["faults"]) == sorted(FAULTS)
    assert summary["records_committed"] == summary["records_expected"]
    lines = [line.split(" - ", 1)[1] for line in (out / "flink.log").read_text().splitlines()
             if " flipcheck.Faults " in line]
    # The record failure restores checkpoint 1 or later, so the stateful sink restores and throws once
    # (a stateless subtask gets no restore: isRestored() stays false). The delayed snapshot strikes
    # only if map[0] takes checkpoint 2 at all, which the failover may skip.
    struck = {"flipcheck fault fail src[0] record 25", "flipcheck fault restore-throw sink[1] restore"}
    may = {"flipcheck fault delay-snapshot map[0] checkpoint 2 for 300 ms"}
    assert len(lines) == len(set(lines)) and struck <= set(lines) <= struck | may, lines
    assert lines.index("flipcheck fault fail src[0] record 25") < lines.index("flipcheck fault restore-throw sink[1] restore")
    assert {line.split()[2] for line in lines} <= {parse_fault(spec).kind for spec in FAULTS}


def test_conform_explains_the_run_and_reports_where_each_fault_struck(run):
    code, out = run
    result = conform_files(str(out / "plan.json"), [str(out / "flink.log")])
    assert result.conforms, result.first_unexplained
    struck = result.as_json()["faults"]
    by_kind = {fault["kind"]: fault for fault in struck}
    assert (by_kind["fail"]["task"], by_kind["fail"]["at"]) == ("src[0]", "record 25")
    assert (by_kind["restore-throw"]["task"], by_kind["restore-throw"]["at"]) == ("sink[1]", "restore")
    # Every throw that struck is a failure the JobManager handled once (F1 at its FAILED line).
    throws = sum(1 for fault in struck if fault["kind"] in ("fail", "restore-throw"))
    assert [o for o, _ in result.observations].count(("failover-known",)) == throws == 2

"""`flipcheck flink campaign` for real, as small as a campaign gets: the two-task pair graph (its
runs validate in a second or two; a six-task chain's took minutes under load), aligned, one
guided run (the corpus' fault-free seed) beside one random run, on the session's local Spark.
Every run is validated, campaign.json holds the contract, and a rerun into the same folder runs
nothing again."""

import json
from pathlib import Path

import pytest

from flipcheck.flink.campaign import CAMPAIGN_FILE, CAMPAIGN_HTML, decode_round
from flipcheck.sweep.campaign import run_campaign

pytestmark = [pytest.mark.spark, pytest.mark.flink]

PAIR = str(Path(__file__).resolve().parents[2] / "examples" / "graphs" / "protocol-pair.json")


def _campaign(spark, out: Path) -> dict:
    return run_campaign([PAIR], 2, out, arms=("guided", "random"), modes=("aligned",), seed="t1", round_size=1,
                        target_states=500, spark=spark)


@pytest.fixture(scope="module")
def campaign(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign") / "out"
    return out, _campaign(spark, out)


def test_every_run_is_validated_and_the_contract_holds(campaign):
    out, document = campaign
    assert json.loads((out / CAMPAIGN_FILE).read_text()) == document
    assert document["runs"] == 2 and document["validated"] == 2
    coverage = document["coverage"]
    assert set(coverage) == {"covered", "targets", "random_covered"}
    assert 0 < coverage["covered"] <= coverage["targets"] and coverage["random_covered"] is not None
    assert document["jobs_per_minute"] > 0
    assert [r["arm"] for r in document["run_list"]] == ["guided", "random"]
    assert document["run_list"][0]["faults"] == []      # the guided arm starts with a fault-free run
    explained = {r["case"] for r in document["run_list"] if r["conforms"]}
    assert document["conforming"] == len(explained)
    for unexplained in document["unexplained"]:         # a divergence keeps its run
        assert unexplained["case"] not in explained and (out / unexplained["run"] / "flink.log").is_file()
    html = (out / CAMPAIGN_HTML).read_text()
    assert "<svg" in html and "guided" in html and "random" in html


def test_a_case_id_holds_its_run_and_a_rerun_runs_nothing_again(campaign, spark):
    out, document = campaign
    for run in document["run_list"]:
        _, token, index = run["case"].split(":")
        assert list(decode_round(token)[int(index)].faults) == run["faults"]
    stored = {p: p.stat().st_mtime_ns for p in out.glob("rounds/*/runs/*/case.json")}
    assert len(stored) == 2
    again = _campaign(spark, out)
    assert {p: p.stat().st_mtime_ns for p in out.glob("rounds/*/runs/*/case.json")} == stored
    assert {k: again[k] for k in ("runs", "validated", "conforming", "coverage", "unexplained")} == \
        {k: document[k] for k in ("runs", "validated", "conforming", "coverage", "unexplained")}

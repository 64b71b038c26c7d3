"""Coverage, guidance and the campaign's contract on stored runs (issue 26, items 2-4): no JVM, no
Spark. The runs are fixtures (tests/fixtures/flink_runs); the real campaign is
tests/spark/test_campaign_real.py."""

import json
from pathlib import Path

import pytest

from flipcheck.errors import UsageError
from flipcheck.flink.campaign import (CampaignCase, campaign_document, campaign_html, conform_coverage, decode_round,
                                      encode_round, same_tasks, target_job)
from flipcheck.flink.conform import conform_files
from flipcheck.flink.engine import job_spec
from flipcheck.flink.guidance import (EARLY_END, FAULT_TEMPLATES, GLOBAL_FAILURE, GLOBAL_FAILURE_AT_START, fault_for_moment, fault_options,
                                      faults_for_path, faults_only, moment_of, mutate, random_faults,
                                      records_per_subtask, shaped_graph)
from flipcheck.flink.suite import GRAPHS
from flipcheck.generators.choices import SeededChooser
from flipcheck.model.graph_json import load_graph
from flipcheck.properties.protocol_abstraction import abstract_state, shortest_paths, targets, transition_from_key, \
    transition_key
from flipcheck.properties.protocol_explore import replay

RUNS = Path(__file__).parents[1] / "fixtures" / "flink_runs"
CHAIN = load_graph(str(GRAPHS / "chain.json"))
JOIN = load_graph(str(GRAPHS / "join.json"))


@pytest.fixture(scope="module")
def sink_v2_failover():
    # Sink V2 after a source, one failover, Flink 1.20.2: two tasks, so its targets explore fast.
    run = RUNS / "matrix-FLINK-25920-1.20.2"
    result = conform_files(str(run / "plan.json"), [str(run / "flink.log")])
    assert result.conforms, result.first_unexplained
    return result


def test_a_runs_coverage_counts_targets_and_keeps_what_lies_beyond_apart(sink_v2_failover):
    small = conform_coverage(sink_v2_failover, max_states=200)
    large = conform_coverage(sink_v2_failover, max_states=1500)
    for found in (small, large):
        assert 0 < found["covered"] < found["targets"] and found["missing"] == found["targets"] - found["covered"]
        assert not found["complete"] and len(found["missing_first"]) == 20
    # A deeper exploration has more targets, and the run's transitions move from outside to covered:
    # the two counts are one set split two ways, never counted twice.
    assert large["targets"] > small["targets"] and large["covered"] > small["covered"]
    assert small["covered"] + small["outside"] == large["covered"] + large["outside"]


def test_coverage_sees_a_failover_only_in_a_run_that_had_one(sink_v2_failover):
    from flipcheck.properties.protocol_abstraction import covered

    kinds = {t.kind for t in covered(sink_v2_failover.job, sink_v2_failover.verdict.behaviour)}
    assert {"fail", "failover"} <= kinds
    run = RUNS / "release-1.17.2-chain"
    quiet = conform_files(str(run / "plan.json"), [str(run / "flink.log")], flink_version="1.17.2")
    assert quiet.conforms
    assert not {"fail", "failover"} & {t.kind for t in covered(quiet.job, quiet.verdict.behaviour)}


def test_a_run_of_a_graph_file_numbers_its_tasks_as_the_targets_do(sink_v2_failover):
    run = RUNS / "matrix-FLINK-25920-1.20.2"
    graph = load_graph(str(GRAPHS / "sink-v2-single.json"))
    flink_ids = json.loads((run / "run.json").read_text())["vertices"]
    assert same_tasks(target_job(graph, "aligned"), sink_v2_failover.job, flink_ids)
    swapped = {"src": flink_ids["sink"], "sink": flink_ids["src"]}
    assert not same_tasks(target_job(graph, "aligned"), sink_v2_failover.job, swapped)


def test_transition_keys_read_back():
    job = target_job(load_graph(str(GRAPHS / "sink-v2-single.json")), "aligned")
    found = targets(job, max_states=200)
    assert found and all(transition_from_key(transition_key(t)) == t for t in found)


def test_guidance_translates_the_model_path_to_a_failing_task_into_its_fault():
    job = target_job(load_graph(str(GRAPHS / "sink-v2-single.json")), "aligned")
    # the whole-job abstraction, whose states say which task fails at which moment
    found = targets(job, max_states=400, abstraction="job")
    failing = sorted((t for t in found if t.kind == "fail" and t.source.completed), key=str)[:3]
    paths = shortest_paths(job, failing, max_states=400, abstraction="job")
    assert set(paths) == set(failing)
    graph = load_graph(str(GRAPHS / "sink-v2-single.json"))
    tasks = [(t.vertex, t.subtask) for t in job.tasks]
    for target, labels in paths.items():
        steps = replay(job, labels)
        states = [abstract_state(job, job_initial(job))] + [abstract_state(job, s.state) for s in steps]
        # the --fail templates (each moment's last)
        faults = faults_for_path(graph, tasks, states, [s.label for s in steps], kinds=frozenset())
        failed = next(i for i, a in enumerate(target.target.tasks) if a.phase == "FAILED")
        vertex, subtask = tasks[failed]
        # the target's task fails after a completed checkpoint: the fault strikes late, at that subtask
        assert faults == (fault_for_moment(graph, vertex, subtask, moment_of(target.source, failed), frozenset()),)
        assert faults[0].startswith(f"--fail {vertex}:{subtask}@") and int(faults[0].rsplit("@")[1]) > 1
    # a path without a failing step asks for no fault
    assert faults_for_path(graph, tasks, states, [("trigger", 1)]) == ()


def job_initial(job):
    from flipcheck.model.protocol import initial_state

    return initial_state(job)


def test_each_moment_has_a_fault_every_job_builder_runs_and_new_kinds_plug_in_as_rows():
    for moment, templates in FAULT_TEMPLATES.items():
        assert any(t.kind is None for t in templates), moment
        spec = fault_for_moment(JOIN, "join", 1, moment, frozenset())
        assert spec.startswith("--fail join:1@")
    assert fault_for_moment(JOIN, "join", 1, "after-checkpoint", frozenset({"notify-throw"})) == \
        "--fault notify-throw:join:1@1"


def test_a_path_whose_source_ends_before_the_first_trigger_cuts_that_source_short():
    job = target_job(JOIN, "aligned")
    tasks = [(t.vertex, t.subtask) for t in job.tasks]
    short = next(i for i, t in enumerate(tasks) if t[0] == "short")
    states = [abstract_state(job, job_initial(job))] * 3
    # short[0] ends its input, then the first trigger: Flink must find it ended, so the run's short
    # source has one record; a source that ends after the trigger keeps its records
    assert faults_for_path(JOIN, tasks, states, [("end-of-data", short), ("trigger", 1)]) == \
        (EARLY_END.format(vertex="short"),)
    assert faults_for_path(JOIN, tasks, states, [("trigger", 1), ("end-of-data", short)]) == ()
    # the run's options cut that source alone, and a --fail is checked against the records left
    options = fault_options(("--records short=1", "--fail join:0@1"))
    assert options["records"] == {"short": 1}
    sources = [v for v in job_spec(JOIN, out=Path("."), **options)["vertices"] if v.get("records") is not None]
    assert {v["id"]: v["records"] for v in sources} == {"short": 1, "long": 60}
    with pytest.raises(UsageError, match="'join' is not a source"):
        job_spec(JOIN, out=Path("."), **fault_options(("--records join=1",)))


def test_a_source_cut_short_gives_way_to_a_fail_that_must_strike_late():
    job = target_job(load_graph(str(GRAPHS / "sink-v2-single.json")), "aligned")
    graph = load_graph(str(GRAPHS / "sink-v2-single.json"))
    tasks = [(t.vertex, t.subtask) for t in job.tasks]
    found = targets(job, max_states=400, abstraction="job")
    late = sorted((t for t in found if t.kind == "fail" and t.source.completed), key=str)[:1]
    labels = shortest_paths(job, late, max_states=400, abstraction="job")[late[0]]
    steps = replay(job, labels)
    states = [abstract_state(job, job_initial(job))] + [abstract_state(job, s.state) for s in steps]
    assert labels[0][0] == "end-of-data"   # the model's source ends first, its records none
    # with --fail alone, the sink's fail must come at a record past the first: the source keeps them
    faults = faults_for_path(graph, tasks, states, [s.label for s in steps], kinds=frozenset())
    assert faults_only(faults) == faults and int(faults[0].rsplit("@")[1]) > 1


@pytest.mark.parametrize("graph", [CHAIN, JOIN], ids=["chain", "join"])
def test_random_and_mutated_faults_are_faults_the_job_builder_accepts(graph, tmp_path):
    seen = set()
    for i in range(40):
        chooser = SeededChooser.for_case("t", i)
        faults = random_faults(graph, chooser)
        mutated = mutate(graph, faults, chooser)
        assert mutated != faults and len(faults_only(mutated)) <= 1
        # a source cut short stays so through the mutation, whose --fail it still reaches
        assert [f for f in faults if f not in faults_only(faults)] == [f for f in mutated if f not in faults_only(mutated)]
        for chosen in (faults, mutated):
            job_spec(graph, out=tmp_path, **fault_options(chosen))   # raises for a fault it cannot build
            seen |= set(chosen)
        # the same case id, the same faults
        assert random_faults(graph, SeededChooser.for_case("t", i)) == faults
    assert len(seen) > 20 and any(f.startswith("--records ") for f in seen)
    for vertex in graph.vertices:
        assert records_per_subtask(graph, vertex.id) >= 1


def test_a_round_token_holds_its_cases_whole_and_rejects_what_it_cannot_hold():
    cases = [CampaignCase("guided", "chain", "unaligned", ("--fail map:1@25",)), CampaignCase("random", "join", "aligned", ()),
             CampaignCase("guided", "join", "aligned", ("--records short=1", "--fault snapshot-throw:join:0@1"))]
    assert decode_round(encode_round(cases)) == cases and ":" not in encode_round(cases)
    for bad in ("guided.chain.aligned", "lucky.chain.aligned.none", "guided.chain.sideways.none",
                "guided.chain.aligned.fail=map/1@1", "guided.join.aligned.records=short",
                "guided.join.aligned.records=short,\u00b2"):
        with pytest.raises(ValueError, match="campaign token"):
            decode_round(bad)


def test_campaign_json_holds_the_contract_and_html_escapes_what_runs_say():
    runs = [{"case": "flink-campaign:x:0", "arm": "guided", "validated": True, "conforms": True, "why": "", "run": "a"},
            {"case": "flink-campaign:x:1", "arm": "random", "validated": True, "conforms": False,
             "why": "flink.log:9 <script>alert(1)</script>", "run": "rounds/0000/runs/1"},
            {"case": "flink-campaign:x:2", "arm": "random", "validated": False, "conforms": False, "why": "JVM", "run": None}]
    document = campaign_document(runs, 100, ("guided", "random"), {"guided": 7, "random": 3}, 120.0,
                                 {"curves": {"guided": [7], "random": [2, 3]}})
    assert {k: document[k] for k in ("runs", "validated", "conforming", "coverage", "jobs_per_minute")} == {
        "runs": 3, "validated": 2, "conforming": 1, "coverage": {"covered": 7, "targets": 100, "random_covered": 3},
        "jobs_per_minute": 1.5}
    assert [u["case"] for u in document["unexplained"]] == ["flink-campaign:x:1", "flink-campaign:x:2"]
    assert set(document["unexplained"][0]) == {"case", "why", "run"}
    page = campaign_html(document)
    assert "<script>" not in page and "&lt;script&gt;" in page and "<svg" in page and "<polyline" in page
    alone = campaign_document(runs[:1], 100, ("guided",), {"guided": 7}, 60.0)
    assert alone["coverage"]["random_covered"] is None


def test_bad_input_is_exit_2_with_one_line_naming_it(tmp_path, capsys):
    from flipcheck.cli import main

    dotted = tmp_path / "dotted.json"
    dotted.write_text(json.dumps({"vertices": [{"id": "a.b", "parallelism": 1, "records": 5},
                                               {"id": "sink", "parallelism": 1}],
                                  "edges": [{"source": "a.b", "target": "sink", "pattern": "ALL_TO_ALL"}]}))
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("not a campaign")
    chain = str(GRAPHS / "chain.json")
    other = tmp_path / "other"
    other.mkdir()
    (other / "settings.json").write_text(json.dumps({"graphs": ["chain"], "modes": ["aligned"], "runs": 9,
                                                     "arms": ["guided"], "seed": "1", "target_states": 20000}))
    cases = {
        "--runs": [chain, "--runs", "0", "--out", str(tmp_path / "o1")],
        "--modes": [chain, "--modes", "sideways", "--runs", "2", "--out", str(tmp_path / "o2")],
        "missing.json": [str(tmp_path / "missing.json"), "--runs", "2", "--out", str(tmp_path / "o3")],
        "'a.b'": [str(dotted), "--runs", "2", "--out", str(tmp_path / "o4")],
        "not empty": [chain, "--runs", "2", "--out", str(busy)],
        "'runs'": [chain, "--runs", "2", "--modes", "aligned", "--out", str(other)],
        "arms": [chain, "--runs", "1", "--compare", "--out", str(tmp_path / "o5")],
    }
    for named, args in cases.items():
        code = main(["flink", "campaign", *args])
        stderr = capsys.readouterr().err
        lines = stderr.strip().splitlines()
        assert code == 2 and len(lines) == 1 and named in lines[0] and "Traceback" not in stderr, (named, stderr)


def test_conform_json_carries_the_coverage_when_asked(capsys):
    from flipcheck.cli import main

    run = RUNS / "matrix-FLINK-25920-1.20.2"
    argv = ["conform", "--json", "--plan", str(run / "plan.json"), str(run / "flink.log")]
    assert main(argv) == 0
    assert "coverage" not in json.loads(capsys.readouterr().out)
    assert main([*argv, "--coverage", "200"]) == 0
    coverage = json.loads(capsys.readouterr().out)["coverage"]
    assert set(coverage) == {"covered", "targets", "outside", "missing", "missing_first", "target_states", "complete",
                             "abstraction"}
    assert 0 < coverage["covered"] < coverage["targets"] and coverage["target_states"] == 200
    assert coverage["abstraction"] == "task"
    assert main([*argv, "--coverage", "200", "--abstraction", "job"]) == 0
    whole = json.loads(capsys.readouterr().out)["coverage"]
    assert whole["abstraction"] == "job" and whole["targets"] > coverage["targets"] and whole["outside"] > 0
    assert main([*argv, "--coverage", "5"]) == 2     # below the smallest cap: one line, exit 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    # --abstraction alone would count nothing: said, not ignored
    assert main([*argv, "--abstraction", "job"]) == 2
    assert "--coverage is not given" in capsys.readouterr().err


def test_a_case_id_whose_fault_its_graph_cannot_build_is_refused_in_one_line(capsys):
    from flipcheck.cli import main

    for bad, named in (("fail=zz,0@5", "'zz'"), ("fail=map,7@5", "subtask 7"), ("fail=src,0@99", "record 99")):
        assert main(["replay", f"flink-campaign:guided.chain.aligned.{bad}:0"]) == 2
        stderr = capsys.readouterr().err
        assert len(stderr.strip().splitlines()) == 1 and named in stderr, stderr


def test_a_moment_takes_its_fault_kind_where_the_vertex_has_a_hook_and_fail_elsewhere():
    """A Sink V2 vertex has no hook for the --fault kinds (flipcheck.flink.faults), so its
    moments fall back to --fail; the source's take their protocol-point kind, which the job
    builder accepts (job_spec holds it as a fault point)."""
    graph = load_graph(str(GRAPHS / "sink-v2-single.json"))
    for moment in FAULT_TEMPLATES:
        assert fault_for_moment(graph, "sink", 0, moment).startswith("--fail sink:0@"), moment
    pending = fault_for_moment(graph, "src", 0, "checkpoint-pending")
    assert pending == "--fault snapshot-throw:src:0@1"
    spec = job_spec(graph, out=Path("."), **fault_options((pending, "--fail sink:0@5")))
    assert [p["kind"] for p in spec["fault_points"]] == ["snapshot-throw"]


def test_a_rounds_token_carries_fault_specs_and_rejects_a_bad_one():
    cases = [CampaignCase("guided", "chain", "aligned", ("--fault delay-snapshot:map:0@2=300", "--fail src:1@5")),
             CampaignCase("random", "join", "unaligned", ("--fault cpu-contention=2",))]
    token = encode_round(cases)
    assert ":" not in token and " " not in token and decode_round(token) == cases
    with pytest.raises(ValueError, match="no-such-kind"):
        decode_round("guided.chain.aligned.fault=no-such-kind,map,0@2")


def test_the_guided_arm_does_not_plan_a_mutation_it_already_ran():
    """With no target left to aim at, every guided run after the corpus' seed is a ModelFuzz
    mutation; one the arm ran already is drawn again (a 4-run pair campaign planned
    `--fail src:0@1` twice in one round before)."""
    from types import SimpleNamespace

    from flipcheck.sweep.campaign import Planner

    planner = Planner(["chain"], ["aligned"], "t", {"chain/aligned": SimpleNamespace(keys=frozenset(), first_step={})})
    state: dict = {}
    planned = [case.faults for _ in range(10) for case in planner.plan_round("guided", 2, state)]
    assert planned[0] == () and len(set(planned)) == len(planned) == 20


def test_a_campaign_counted_in_another_abstraction_is_not_resumed_into(tmp_path):
    """A campaign folder from before the task views (its covered keys are whole-job states) would
    mix two abstractions in one count: refused in one line, before anything runs."""
    from flipcheck.errors import UsageError
    from flipcheck.sweep.campaign import SETTINGS_FILE, campaign_settings, run_campaign

    graph = str(GRAPHS / "sink-v2-single.json")
    settings = campaign_settings(["sink-v2-single"], ["aligned"], 2, ["guided"], "1", 500)
    assert settings["abstraction"] == "task"
    settings.pop("abstraction")
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(settings))
    with pytest.raises(UsageError, match="'abstraction'"):
        run_campaign([graph], 2, tmp_path, modes=("aligned",), target_states=500)


def test_a_failover_with_no_task_failed_is_steered_by_a_global_failure():
    """F1 on its own (the JobManager's own failure): the enumerator fails the job while checkpoint
    1 is pending (`--fault global-failure@1`). The campaign's 1,000 runs never reached such
    targets, the nearest missed ones: no fault made a global failure."""
    job = target_job(load_graph(str(GRAPHS / "chain.json")), "aligned")
    graph = load_graph(str(GRAPHS / "chain.json"))
    tasks = [(t.vertex, t.subtask) for t in job.tasks]
    found = targets(job, max_states=3000, abstraction="job")
    global_failovers = sorted((t for t in found if t.kind == "failover"
                               and not any(a.phase == "FAILED" for a in t.source.tasks)), key=str)[:2]
    assert global_failovers
    paths = shortest_paths(job, global_failovers, max_states=3000, abstraction="job")
    assert set(paths) == set(global_failovers)
    for target, labels in paths.items():
        steps = replay(job, labels)
        states = [abstract_state(job, job_initial(job))] + [abstract_state(job, s.state) for s in steps]
        triggered = any(label[0] == "trigger" for label in labels)
        expected = GLOBAL_FAILURE.format(checkpoint=2 if target.source.completed else 1) if triggered \
            else GLOBAL_FAILURE_AT_START
        assert faults_only(faults_for_path(graph, tasks, states, [s.label for s in steps])) == (expected,)
        # without the kind (an older job builder) the path asks for no fault it cannot run
        assert faults_only(faults_for_path(graph, tasks, states, [s.label for s in steps], kinds=frozenset())) == ()
    # a failover before any trigger: the enumerator fails the job as it starts; after one, at a
    # checkpoint's snapshot; without the kind at the start, at the first checkpoint's
    start = [abstract_state(job, job_initial(job))] * 2
    assert faults_for_path(graph, tasks, start, [("failover",), ("trigger", 1)]) == (GLOBAL_FAILURE_AT_START,)
    assert faults_for_path(graph, tasks, start, [("trigger", 1), ("failover",)]) == (GLOBAL_FAILURE.format(checkpoint=1),)
    assert faults_for_path(graph, tasks, start, [("failover",)], kinds=frozenset({"global-failure"})) == \
        (GLOBAL_FAILURE.format(checkpoint=1),)

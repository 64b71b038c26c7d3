"""`flipcheck explore` from the outside: the --json contract, exit codes, one-line errors."""

import json

import pytest

from flipcheck.cli import main

PAIR = {"vertices": [{"id": "src", "parallelism": 1}, {"id": "sink", "parallelism": 1, "two_phase_commit_sink": True}],
        "edges": [{"source": "src", "target": "sink", "pattern": "ALL_TO_ALL"}]}


def run_cli(capsys, *args):
    code = main(["explore", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_correct_protocol_complete_without_violation(capsys, graph_file):
    code, out, err = run_cli(capsys, graph_file(PAIR), "--json", "--failures", "1")
    result = json.loads(out)
    assert list(result) == ["states", "transitions", "complete", "violations", "store", "collision_probability",
                            "reduction", "reduced_states", "coverage"]
    assert result["reduction"] == "all" and 0 <= result["reduced_states"] <= result["states"]
    assert code == 0 and result["complete"] and result["violations"] == []
    assert result["transitions"] >= result["states"] - 1 > 0
    assert result["store"] == "fingerprints" and 0 < result["collision_probability"] < 1e-9


def test_both_stores_give_the_same_answer(capsys, graph_file):
    outputs = []
    for store in ("states", "fingerprints"):
        code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--variant", "pre-flip-147", "--store", store)
        outputs.append((code, {k: v for k, v in json.loads(out).items() if k not in ("store", "collision_probability")}))
    assert outputs[0] == outputs[1] and outputs[0][0] == 1


@pytest.mark.parametrize("variant", ["flip-147", "pre-flip-147", "cancel-pending-on-finish"])
def test_reduction_keeps_the_verdict_and_the_traces(capsys, graph_file, variant):
    runs = {}
    for reduction in ("none", "por"):
        code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--records", "2", "--variant", variant,
                               "--reduction", reduction)
        runs[reduction] = code, json.loads(out)
    (code_none, full), (code_por, reduced) = runs["none"], runs["por"]
    assert code_none == code_por and full["violations"] == reduced["violations"]
    assert reduced["reduced_states"] > 0 and reduced["states"] < full["states"]
    assert full["reduced_states"] == 0


def test_variant_violation_exits_1_with_a_trace(capsys, graph_file):
    code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--variant", "pre-flip-147")
    result = json.loads(out)
    assert code == 1
    names = [v["property"] for v in result["violations"]]
    assert "final_checkpoint_before_finish" in names
    first = result["violations"][0]
    assert first["trace"] and first["trace"][-1]["sentence"].endswith("finishes")


def test_json_trace_steps_say_who_did_what_to_which_checkpoint(capsys, graph_file):
    """Issue 24, item 5: a JSON trace is data, not English sentences only."""
    code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--variant", "cancel-pending-on-finish")
    by_property = {v["property"]: v["trace"] for v in json.loads(out)["violations"]}
    steps = by_property["no_pending_checkpoint_cancelled"]
    assert code == 1 and all(list(step)[:5] == ["actor", "action", "checkpoint_id", "sentence", "loop"] for step in steps)
    trigger, rpc, finish = (next(s for s in steps if s["action"] == a) for a in ("trigger", "rpc", "finish"))
    assert (trigger["actor"], trigger["checkpoint_id"], trigger["rules"][0]) == ("coordinator", 1, "C2")
    assert (rpc["actor"], rpc["checkpoint_id"], rpc["label"]) == ("src[0]", 1, ["rpc", 0, 1])
    assert (finish["actor"], finish["checkpoint_id"], finish["sentence"]) == ("src[0]", None, "src[0] finishes")
    assert "J7" in finish["rules"] and not any(step["loop"] for step in steps)
    # the text output prints the same sentences, numbered
    code, text, _ = run_cli(capsys, graph_file(PAIR), "--variant", "cancel-pending-on-finish")
    assert f"  1. {steps[0]['sentence']}\n" in text


def test_property_stops_at_its_shortest_trace(capsys, graph_file):
    whole = json.loads(run_cli(capsys, graph_file(PAIR), "--json", "--variant", "cancel-pending-on-finish",
                               "--failures", "1")[1])
    code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--variant", "cancel-pending-on-finish", "--failures",
                           "1", "--property", "exactly_once")
    early = json.loads(out)
    shortest = {v["property"]: v["trace"] for v in whole["violations"]}["exactly_once"]
    assert code == 1 and {v["property"]: v["trace"] for v in early["violations"]}["exactly_once"] == shortest
    assert early["states"] < whole["states"] and not early["complete"]


def test_text_output_numbers_the_steps(capsys, graph_file):
    code, out, _ = run_cli(capsys, graph_file(PAIR), "--variant", "cancel-pending-on-finish")
    assert code == 1 and "violated final_checkpoint_before_finish" in out and "  1. " in out


def test_max_states_cuts_the_search_with_exit_0_complete_false_and_one_warning(capsys, graph_file):
    code, out, err = run_cli(capsys, graph_file(PAIR), "--json", "--max-states", "5")
    result = json.loads(out)
    assert code == 0 and result["complete"] is False and result["violations"] == [] and result["states"] == 5
    assert err == ("flipcheck explore: no violation in 5 states, but the search stopped at max_states 5 before it "
                   "searched them all (complete: false)\n")   # the one state count of the run, as on stdout
    code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--max-states", "100000", "--variant", "pre-flip-147")
    assert code == 1 and json.loads(out)["violations"]


def test_the_search_stops_at_its_bound_instead_of_looking_up_the_rest_of_the_frontier():
    from flipcheck.properties.explore import explore_graph

    expanded = []

    def successors(n):   # an infinite binary tree: the bound is the only end
        expanded.append(n)
        return [("a", 2 * n + 1, []), ("b", 2 * n + 2, [])]

    graph = explore_graph([0], successors, max_states=1_000)
    assert len(graph) == 1_000 and not graph.complete
    assert len(expanded) <= 501   # the states whose successors were stored, and the one that met the bound
    # a time budget (verify's exploration driver) ends a search under way the same way, within 256 states
    import time

    expanded.clear()
    graph = explore_graph([0], successors, deadline=time.perf_counter())
    assert not graph.complete and len(expanded) == 256


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_long_search_reports_its_progress_on_stderr(capsys, graph_file, monkeypatch, workers):
    import flipcheck.parallel_explore.workers as workers_module
    import flipcheck.properties.explore as explore_module

    original = explore_module.explore_graph
    monkeypatch.setattr(explore_module, "explore_graph",
                        lambda *args, **options: original(*args, **{**options, "progress_every": 0.0}))
    import flipcheck.properties.protocol_explore as protocol_explore

    monkeypatch.setattr(protocol_explore, "explore_graph", explore_module.explore_graph)
    spread = workers_module.explore_job_on_workers
    monkeypatch.setattr(workers_module, "explore_job_on_workers",
                        lambda *args, **options: spread(*args, **{**options, "progress_every": 0.0}))
    code, out, err = run_cli(capsys, graph_file(PAIR), "--records", "6", "--reduction", "none",   # 2,144 states
                             "--workers", workers)
    assert code == 0
    line = err.splitlines()[0]
    assert line.startswith("flipcheck explore: searching: ") and "states so far" in line
    assert "/s), frontier " in line and ", depth " in line


@pytest.mark.parametrize("args", [["--variant", "nope"], ["--records", "-1"], ["--max-states", "0"], ["--reduction", "x"],
                                  ["--stop-with-savepoint", "--mode", "unaligned"],
                                  ["--stop-with-savepoint", "--failures", "1"]])
def test_bad_option_one_line_exit_2(capsys, graph_file, args):
    code, out, err = run_cli(capsys, graph_file(PAIR), *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert args[0] in err  # the line names the option at fault


@pytest.mark.parametrize("document", ["{not json", {"vertices": [{"id": "a", "parallelism": 1, "records": "x"}],
                                                     "edges": []},
                                      # a sink flag on a source: was a false exactly-once violation
                                      {"vertices": [{"id": "a", "parallelism": 3, "two_phase_commit_sink": True}],
                                       "edges": []}])
def test_bad_graph_one_line_exit_2(capsys, graph_file, document):
    code, out, err = run_cli(capsys, graph_file(document))
    assert code == 2 and out == "" and err.startswith("flipcheck: ") and len(err.strip().splitlines()) == 1


def test_render_draws_the_shortest_trace_as_a_sequence_chart(capsys, graph_file, tmp_path):
    out_path = tmp_path / "trace.svg"
    code, out, _ = run_cli(capsys, graph_file(PAIR), "--json", "--variant", "pre-flip-147", "--render", str(out_path))
    trace = json.loads(out)["violations"][0]["trace"]
    svg = out_path.read_text()
    assert code == 1 and svg.lstrip().startswith(("<?xml", "<svg"))
    # One lane per task and the coordinator; the violating last step is drawn.
    for lane in ("coordinator", "src[0]", "sink[0]", "FINISHED"):
        assert lane in svg
    assert len(trace) == 3


def test_render_with_a_bad_extension_is_a_usage_error(capsys, graph_file, tmp_path):
    code, out, err = run_cli(capsys, graph_file(PAIR), "--render", str(tmp_path / "trace.txt"))
    assert code == 2 and out == "" and "use .svg or .png" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("options, named", [(["--partitions", "4"], "--partitions"),
                                            (["--master", "local[2]", "--store", "states"], "--store states"),
                                            (["--master", "local[0]"], "local[0]")])
def test_spark_options_are_checked_before_any_jvm(capsys, graph_file, options, named):
    code, out, err = run_cli(capsys, graph_file(PAIR), *options)
    assert code == 2 and out == "" and named in err and len(err.strip().splitlines()) == 1

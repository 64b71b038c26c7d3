"""Split assignment (FLIP-27) against real Flink, from stored runs (no JVM here): each run of a
lazy source conforms to model/split_assignment.py and to the protocol, each altered log is
rejected naming the model's rule, and `conform --design` keeps its contract."""

import json
from pathlib import Path

import pytest

from flipcheck.cli import main
from flipcheck.errors import UsageError
from flipcheck.flink.conform import conform_files
from flipcheck.flink.conform_designs import design_name
from flipcheck.flink.engine import designs_exercised, job_spec
from flipcheck.flink.logs import read_logs
from flipcheck.flink.suite import DESIGN_ALTERATIONS, alter_run
from flipcheck.model.graph_json import loads_graph
from flipcheck.properties.split_assignment_trace_validation import validate

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs"
SPLIT_RUNS = ["splits-reader-failure", "splits-enumerator-failure", "splits-slow-snapshot-reader-failure",
              "splits-enumerator-and-reader-failure", "splits-dropped-event"]


def _conform(run: Path, **options):
    return conform_files(str(run / "plan.json"), [str(run / "flink.log")], **options)


@pytest.mark.parametrize("name", SPLIT_RUNS)
def test_a_stored_lazy_source_run_conforms_to_both_designs(name):
    result = _conform(RUNS / name)
    assert list(result.designs) == ["protocol", "split-assignment"]
    split = result.designs["split-assignment"]
    assert result.conforms and split.conforms, (result.first_unexplained, split.first_unexplained)
    assert {c.name for c in split.checks} == {"model", "splits-read-once"}
    assert all(c.ok and "not checked" not in c.detail for c in split.checks), split.checks
    assert json.loads((RUNS / name / "run.json").read_text())["designs"] == ["protocol", "split-assignment"]


def test_a_trigger_declined_by_a_failed_reader_conforms_to_both_designs():
    """Divergence 24 (docs/conformance.md), settled by rule F0: the failed reader declines the
    trigger RPC of a checkpoint started before the JobManager handled its failure ("tasks not
    ready", Task.triggerCheckpointBarrier), and the next trigger is aborted by the failover (F1).
    tests/cover/test_conform.py shows the run rejected without a FAILED task's decline."""
    run = RUNS / "splits-trigger-declined-by-failed-task"
    log = (run / "flink.log").read_text()
    assert "Decline checkpoint 2 by task" in log and "Checkpoint was declined (tasks not ready)" in log
    result = _conform(run)
    assert result.designs["split-assignment"].conforms
    assert result.designs["protocol"].conforms and result.conforms


def test_a_coordinator_snapshot_of_a_checkpoint_already_failed_shows_nothing():
    """Divergence 25: the enumerator's snapshot of checkpoint 1 ran 324 ms after its trigger,
    after the checkpoint had failed and both readers were dropped. Read as any line, it is an A5
    trigger with a reader down, which no behaviour shows; it starts nothing (recovery facts §3.9)."""
    from flipcheck.flink.conform_split_assignment import live_lines, observations, parse_line

    run = RUNS / "splits-late-coordinator-snapshot"
    events = read_logs([str(run / "flink.log")]).events
    failed = next(e.line for e in events if e.kind == "failed" and e.checkpoint == 1)
    late = next(e.line for e in events if e.kind == "split-coordinator-snapshot" and e.checkpoint == 1)
    assert failed < late
    assert _conform(run).conforms
    every_line = [line for line in map(parse_line, events) if line is not None]
    verdict = validate(2, 12, observations(every_line)[0])
    assert not verdict.conforms and verdict.why.startswith("A5 trigger: no checkpoint can start here")
    assert len(live_lines(events)) == len(every_line) - 1


def test_a_plan_fetched_while_the_job_initialized_is_empty_and_only_the_split_design_is_read(capsys):
    """Divergence 23: the REST plan of a job still INITIALIZING has no nodes; the runner now waits
    for the job to leave INITIALIZING. The stored run keeps the empty plan: the protocol cannot
    be validated without one (exit 2, one line), split assignment can (it needs no plan)."""
    run = RUNS / "splits-plan-fetched-while-initializing"
    assert json.loads((run / "plan.json").read_text())["plan"]["nodes"] == []
    assert main(["conform", "--plan", str(run / "plan.json"), str(run / "flink.log")]) == 2
    assert "nodes" in capsys.readouterr().err
    assert _conform(run, design="split-assignment").conforms


def test_the_faults_show_in_the_logs_they_are_named_for():
    """Each stored scenario holds the lines of its fault: a subtask reset (with a split given
    back), a global failover (the enumerator restarts from a checkpoint's pending splits)."""
    def kinds(name):
        return [e.kind for e in read_logs([str(RUNS / name / "flink.log")]).events]

    reader = kinds("splits-reader-failure")
    assert "source-reset" in reader and "split-add-back" in reader and "global-failure" not in reader
    enumerator = kinds("splits-enumerator-failure")
    assert enumerator.count("split-start") == 2 and "global-failure" in enumerator and "source-reset" not in enumerator
    dropped = kinds("splits-dropped-event")
    assert dropped.count("split-dropped") == 1 and "source-reset" in dropped
    log = (RUNS / "splits-reader-failure" / "flink.log").read_text()
    assert "splits [9] added back from subtask 1" in log


def test_every_line_of_the_design_is_found_in_the_stored_runs():
    from flipcheck.flink.conform_split_assignment import SOURCE_LINES, SPLIT_LINES

    found = {e.kind for name in SPLIT_RUNS for e in read_logs([str(RUNS / name / "flink.log")]).events}
    assert {*SPLIT_LINES, *SOURCE_LINES, "global-failure"} <= found


# The rule each alteration breaks, and the stored runs it applies to (an add-back or a reset
# to a checkpoint after the first needs a subtask reset: the reader-failure runs).
EXPECTED_RULE = {"split-assigned-twice": "A2 assign", "split-add-back-dropped": "A12 reset",
                 "split-dropped-other-split": "A9 lose",
                 "split-snapshot-missing-split": "A3 deliver", "split-reset-to-older-checkpoint": "A12 reset"}
RESET_RUNS = ["splits-reader-failure", "splits-slow-snapshot-reader-failure"]


def _runs_for(alteration: str) -> list[str]:
    if alteration == "split-dropped-other-split":
        return ["splits-dropped-event"]
    if alteration in ("split-add-back-dropped", "split-reset-to-older-checkpoint"):
        return RESET_RUNS
    return SPLIT_RUNS[:2]


@pytest.mark.parametrize("alteration,name", [(a, n) for a in sorted(DESIGN_ALTERATIONS["split-assignment"])
                                             for n in _runs_for(a)])
def test_an_altered_split_history_is_rejected_naming_the_rule(tmp_path, alteration, name):
    what = alter_run(RUNS / name, alteration, tmp_path / "run")
    result = _conform(tmp_path / "run", design="split-assignment")
    assert not result.conforms, what
    first = result.first_unexplained
    assert first["why"].startswith(EXPECTED_RULE[alteration]), (what, first)
    assert first["line"] == int(what.split(":")[0].removeprefix("line ")), (what, first)
    assert not next(c for c in result.checks if c.name == "model").ok


def test_a_design_that_fails_makes_the_whole_run_fail_and_json_says_which(tmp_path, capsys):
    alter_run(RUNS / "splits-enumerator-failure", "split-assigned-twice", tmp_path / "run")
    run = tmp_path / "run"
    code = main(["conform", "--json", "--plan", str(run / "plan.json"), str(run / "flink.log")])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["conforms"] is False
    assert document["designs"]["protocol"]["conforms"] is True
    split = document["designs"]["split-assignment"]
    assert split["conforms"] is False and split["events"] > 50
    assert set(split["first_unexplained"]) == {"file", "line", "event", "why"}
    assert split["first_unexplained"]["why"].startswith("A2 assign")


def test_the_human_output_lists_each_design_s_verdict(capsys):
    run = RUNS / "splits-enumerator-failure"
    assert main(["conform", "--plan", str(run / "plan.json"), str(run / "flink.log")]) == 0
    out = capsys.readouterr().out
    assert "\nprotocol: conforms:" in out and "\nsplit-assignment: conforms:" in out and "splits-read-once" in out


def test_design_restricts_conform_to_one_design(capsys):
    run = RUNS / "splits-enumerator-failure"
    code = main(["conform", "--json", "--design", "split-assignment", "--plan", str(run / "plan.json"),
                 str(run / "flink.log")])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and list(document["designs"]) == ["split-assignment"]
    code = main(["conform", "--json", "--design", "protocol", "--plan", str(run / "plan.json"), str(run / "flink.log")])
    assert code == 0 and list(json.loads(capsys.readouterr().out)["designs"]) == ["protocol"]


@pytest.mark.parametrize("argv,expected", [
    (["--design", "split-asignment"], "nearest: split-assignment"),
    (["--design", "split-assignment"], "no line of design 'split-assignment'"),   # a run without a lazy source
    (["--design", "split-assignment", "--render", "x.svg"], "--render"),
])
def test_a_bad_design_option_is_one_line_and_exit_2(capsys, tmp_path, argv, expected):
    run = RUNS / ("union-state" if "no line" in expected else "splits-reader-failure")
    argv = [a.replace("x.svg", str(tmp_path / "x.svg")) for a in argv]
    code = main(["conform", *argv, "--plan", str(run / "plan.json"), str(run / "flink.log")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and expected in captured.err, captured.err
    assert not (tmp_path / "x.svg").exists()


def test_design_names_are_checked_against_the_shared_list():
    assert design_name("local-recovery") == "local-recovery"
    with pytest.raises(ValueError, match="nearest: batch-recovery"):
        design_name("batch-recovry")


GRAPH = {"vertices": [{"id": "src", "parallelism": 2, "records": 5, "splits": 4},
                      {"id": "sink", "parallelism": 2, "two_phase_commit_sink": True}],
         "edges": [{"source": "src", "target": "sink", "pattern": "POINTWISE"}]}


def test_the_job_spec_carries_splits_and_the_designs_a_run_exercises(tmp_path):
    spec = job_spec(loads_graph(json.dumps(GRAPH)), out=tmp_path, faults={"fail_in_enumerator": ["src"]})
    assert spec["vertices"][0]["splits"] == 4 and designs_exercised(spec) == ["protocol", "split-assignment"]
    plain = dict(GRAPH, vertices=[{"id": "src", "parallelism": 2, "records": 5}, GRAPH["vertices"][1]])
    assert designs_exercised(job_spec(loads_graph(json.dumps(plain)), out=tmp_path)) == ["protocol"]


@pytest.mark.parametrize("splits,faults,expected", [
    (0, None, "splits must be an integer 1..10"),
    (11, None, "splits must be an integer 1..10"),
    ("4", None, "splits must be an integer"),
    (None, {"fail_in_enumerator": ["src"]}, "fail_in_enumerator needs a source with \"splits\""),
])
def test_a_bad_splits_flag_or_enumerator_fault_is_a_usage_error(tmp_path, splits, faults, expected):
    source = {"id": "src", "parallelism": 2, "records": 5} | ({"splits": splits} if splits is not None else {})
    graph = loads_graph(json.dumps(dict(GRAPH, vertices=[source, GRAPH["vertices"][1]])))
    with pytest.raises(UsageError, match=expected):
        job_spec(graph, out=tmp_path, faults=faults)


# The search itself, on hand-written observations: each rule can reject.
START = ("start", frozenset({0, 1}))


@pytest.mark.parametrize("observations,why", [
    ([START, ("register", 0), ("assign", 0, 0), ("received", 0, 1)], "A3 deliver: split 1 is not the next"),
    ([START, ("register", 0), ("assign", 0, 0), ("received", 0, 0), ("finished", 0, 1)], "A4 finish"),
    ([START, ("register", 0), ("no-more", 0)], "A2 assign: the enumerator still has [0, 1]"),
    ([START, ("register", 0), ("assign", 0, 0), ("end", 0)], "A4 finish: reader 0 ended with splits still to read"),
    ([START, ("coordinator-snapshot", 1, frozenset({0}))], "A5 trigger: the enumerator holds [0, 1]"),
    ([START, ("completed", 1)], "A7 notify: checkpoint 1 has not completed"),
    ([START, ("register", 0), ("assign", 0, 0), ("reset", 0, None), ("add-back", 0, frozenset())],
     "A12 reset: reader 0's reset gives back [0]"),
    ([START, ("start", frozenset({1}))], "A13 global: the enumerator restarts from checkpoint none with [0, 1]"),
])
def test_each_rule_rejects_an_observation_no_behaviour_shows(observations, why):
    verdict = validate(1, 2, observations)
    assert not verdict.conforms and verdict.first_unexplained == len(observations) - 1
    assert verdict.why.startswith(why), verdict.why


def test_an_event_the_checkpoint_waited_for_may_be_processed_after_another_reader_s_snapshot():
    """Flink waits for the RPC of an event sent before the coordinator snapshot to be
    acknowledged, which is when the event is in its task's mailbox (recovery facts §3.9), not
    when the reader processes it: reader 1 may log it after reader 0 snapshot, never after its
    own snapshot."""
    run = [("start", frozenset({0, 1})), ("register", 0), ("register", 1), ("assign", 0, 0), ("assign", 1, 1),
           ("received", 0, 0), ("coordinator-snapshot", 1, frozenset()), ("snapshot", 0, 1, frozenset({0})),
           ("received", 1, 1), ("snapshot", 1, 1, frozenset({1})), ("completed", 1)]
    assert validate(2, 2, run).conforms
    late = run[:8] + [run[9], run[8]]
    verdict = validate(2, 2, late)
    assert not verdict.conforms and verdict.why.startswith("A3 deliver: split 1 reached reader 1 before the barrier")


@pytest.mark.parametrize("option,vertex", [("--fail-enumerator", "sink"), ("--drop-split-event", "nope"),
                                           ("--fail-enumerator", "src")])
def test_a_split_fault_on_a_vertex_without_splits_is_one_line_naming_the_option(tmp_path, capsys, option, vertex):
    graph = dict(GRAPH, vertices=[{"id": "src", "parallelism": 2, "records": 5}, GRAPH["vertices"][1]])
    (tmp_path / "g.json").write_text(json.dumps(graph))
    code = main(["flink", "run", str(tmp_path / "g.json"), "--out", str(tmp_path / "out"), option, vertex])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith(f"flipcheck flink: {option}: "), err
    assert not (tmp_path / "out" / "run.json").exists()


def test_an_unaligned_trigger_that_overtakes_a_split_event_is_rejected_by_rule_a3():
    """Divergence 41 (a Flink bug from 2.1.0, unaligned only), without any hold: after the
    failover the enumerator assigned split 5 to subtask 1 (flink.log:928) and then took its
    snapshot of checkpoint 2 (932); the AddSplitEvent waited in the reader's mailbox while its task
    thread slept before a record (the 10-15 ms pacing), and the urgent trigger of checkpoint 2 ran
    first: subtask 1 snapshots splits [2] (937) and receives [5] only after (967). The design's
    A3 delivers a reader's events in the order they were sent, the barrier after them, so the
    model finds no behaviour; the protocol (which has no splits) and the records (no restore from
    checkpoint 2) are fine. The run's `--fault delay-first-poll:src:1=400` held the first attempt,
    which the failover cut short; the same run aligned conforms (docs/conformance.md)."""
    result = _conform(RUNS / "splits-unaligned-split-event-overtaken")
    split = result.designs["split-assignment"]
    assert result.designs["protocol"].conforms
    assert not split.conforms and not result.conforms
    assert split.first_unexplained["why"].startswith("A3 deliver: the barrier of checkpoint")
    assert "subtask 1 snapshot for checkpoint" in split.first_unexplained["event"]
    assert next(c for c in split.checks if c.name == "splits-read-once").ok


def test_a_held_split_request_shows_the_overtaking_and_the_lost_split():
    """Divergence 41 made certain (`--fault delay-after-split-request:src:1@2=1000 --fault
    notify-throw:src:0@3`, 2.3.0, unaligned): after its snapshot of checkpoint 2 src[1] asks for a
    split, split 6 is assigned (flink.log:423) and the reader sleeps (431); checkpoint 3 is
    triggered and the enumerator snapshots it without split 6 (477-478); the reader snapshots 3
    with [2, 5] (539) and receives [6] only after (545). src[0]'s throw in its notification of 3
    restores checkpoint 3: split 6's records are never committed. A3 rejects the reader's
    snapshot, and both end-to-end checks fail."""
    run = RUNS / "splits-unaligned-split-request-held-split-lost"
    result = _conform(run)
    split = result.designs["split-assignment"]
    assert split.first_unexplained["why"] == (
        "A3 deliver: split 6 reached reader 1 before the barrier of checkpoint 3, and the reader snapshot before it "
        "processed the split")
    assert split.first_unexplained["line"] == 539
    assert next(c for c in split.checks if c.name == "splits-read-once").detail.startswith("split 6 of src: record 30 committed 0 times")
    failing = {c.name for c in result.designs["protocol"].checks if not c.ok}
    assert failing == {"committed-output"}
    assert json.loads((run / "run.json").read_text())["records_committed"] == 55

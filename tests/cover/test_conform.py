"""`flipcheck conform` on stored real Flink 2.3 runs (no JVM here): the runs conform, their
altered logs do not, and bad input is one line with exit code 2."""

import functools
import json
import shutil
from pathlib import Path

import pytest
from compiled_build import patches_compiled

from flipcheck.cli import main
from flipcheck.flink.conform import conform_files
from flipcheck.flink.observations import observations_of
from flipcheck.model.protocol import FAILED
from flipcheck.model.protocol import run as run_steps
from flipcheck.properties import protocol_trace_validation
from flipcheck.model.protocol import failover as failover_rules
from flipcheck.flink.suite import ALTERATIONS, alter_run

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs"


def _conform(run: Path, **options):
    return conform_files(str(run / "plan.json"), [str(run / "flink.log")], **options)


@pytest.mark.parametrize("name", ["join-failover", "union-state", "join-race", "sink-v2-late-decline",
                                  "chain-failover-burned-id", "chain-failover-cut-snapshot",
                                  "chain-closing-decline"])
def test_a_stored_real_run_conforms_with_every_check(name):
    """join-race: a source snapshots after its data ended but before it logs so, and the
    coordinator triggers a task whose FINISHED switch it logged before the trigger line
    (flip147 facts §4.1, §4.4): both read as the model allows. sink-v2-late-decline: the last
    task closes, then declines the trigger RPC that reaches it after the job's end (C4).
    chain-failover-burned-id: the failover stopped the scheduler while a trigger had drawn id 4,
    so checkpoint 5 follows 3 (F1b). chain-failover-cut-snapshot: a sink logs checkpoint 4's
    barrier, and the failover cancels it before its snapshot line. chain-closing-decline: a
    source's decline "task is closing" is logged before its own closing line (flip147 facts §4.8)."""
    result = _conform(RUNS / name)
    assert result.conforms, (result.first_unexplained, [c for c in result.checks if not c.ok])
    assert {c.name for c in result.checks} == {"model", "trigger-plan", "final-checkpoint", "ids-in-order",
                                              "committed-output", "job-finished"}
    assert result.checkpoints >= 3 and result.first_unexplained is None
    assert "not checked" not in next(c for c in result.checks if c.name == "committed-output").detail


@patches_compiled("flipcheck.model.protocol.failover", "_trigger_may_be_under_way()")
def test_a_failover_that_uses_up_an_id_needs_rule_f1b(monkeypatch):
    """Without F1b the model cannot explain the skipped id (flip147 facts §4.6)."""
    run = RUNS / "chain-failover-burned-id"
    log = (run / "flink.log").read_text()
    assert "UNKNOWN_CHECKPOINT_ID" in log and "Triggering checkpoint 4 " not in log
    ids = next(c for c in _conform(run).checks if c.name == "ids-in-order")
    assert ids.ok and "1 id used up by failovers" in ids.detail
    monkeypatch.setattr(failover_rules, "_trigger_may_be_under_way", lambda job, s: False)
    result = _conform(run)
    assert not result.conforms
    assert result.first_unexplained["why"].startswith(
        "C2: the next checkpoint id is 4, not 5 (F1b: a failover uses up at most 1 id) (none found explaining the 6 "
        "lines before it again, every way; conform --backtrack 24 looks further back)")


def test_the_lines_between_a_tasks_failure_and_its_handling_are_read():
    """map (2/2) fails (line 503); the sink's snapshot of checkpoint 4 is logged at 546, before the
    JobManager handles the failure (634): the other tasks run on until then (flip147 facts §4.10),
    so that line is read, not skipped as an old attempt's, and the run conforms."""
    from flipcheck.flink.conform import Tasks, model_job, read_logs, read_run_directory, vertex_names

    run = RUNS / "chain-failover-cut-snapshot"
    plan = json.loads((run / "plan.json").read_text())
    reading = read_logs([str(run / "flink.log")], None, vertex_names(plan))
    _, job = model_job(plan, read_run_directory(run), failures=1)
    observed = observations_of(reading, Tasks(plan, job.graph, job))[0]
    lines = {e.line: o for o, e in observed}
    assert lines[503] == ("failover",) and lines[634] == ("failover-known",)
    assert lines[546][0] == "snapshot" and lines[546][2] == 4
    assert _conform(run).conforms


@patches_compiled("flipcheck.model.protocol.tasks", "decline()")
def test_a_trigger_declined_by_the_failed_task_settles_divergence_24(monkeypatch):
    """Divergence 24: the failed reader declines checkpoint 2 (TASK_NOT_READY) before the
    JobManager handles its failure, and the failover aborts checkpoint 3. The failed task's
    decline (F0, C4) explains it; without the decline of a FAILED task it is rejected."""
    from flipcheck.model.protocol import tasks as task_rules

    run = RUNS / "splits-trigger-declined-by-failed-task"
    log = (run / "flink.log").read_text()
    assert "Checkpoint was declined (tasks not ready)" in log
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    real_decline = task_rules.decline
    monkeypatch.setattr(task_rules, "decline", lambda n, t, k, reason: None if n.tasks[t].phase == FAILED
                        else real_decline(n, t, k, reason))
    # One search (6 back), not conform's deeper second one: the same why, a shorter make test.
    result = _conform(run, backtrack=6)
    assert not result.conforms and "no reason to decline checkpoint 2" in result.first_unexplained["why"]


def test_a_decline_before_the_closing_line_needs_that_line_to_follow(monkeypatch, tmp_path):
    """A source closed its mailbox, declined checkpoint 6 ("task is closing"), and only then
    logged ``Finished operators`` (flip147 facts §4.8): read so only while that line follows."""
    
    run = RUNS / "chain-closing-decline"
    log = (run / "flink.log").read_text().splitlines(keepends=True)
    decline = next(n for n, line in enumerate(log, 1) if "Decline checkpoint 6 by task" in line)
    closing = next(n for n, line in enumerate(log, 1) if "Finished operators for task Source: src (2/2)#0" in line)
    assert decline < closing and "task is closing" in log[decline]
    assert _conform(run).conforms
    # Without its closing line, the decline has no reason.
    shutil.copytree(run, tmp_path / "run")
    (tmp_path / "run" / "flink.log").write_text("".join(log[:closing - 1] + log[closing:]))
    result = _conform(tmp_path / "run")
    assert not result.conforms and result.first_unexplained["line"] == decline
    monkeypatch.setattr(protocol_trace_validation, "_CLOSING_LINE_AFTER", ())
    result = _conform(run)
    assert not result.conforms and result.first_unexplained["line"] == decline


def test_an_id_skipped_without_a_failover_is_out_of_order(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "union-state", run)
    log = (run / "flink.log").read_text().splitlines(keepends=True)
    (run / "flink.log").write_text("".join(line for line in log if "Triggering checkpoint 2 " not in line))
    result = _conform(run)
    ids = next(c for c in result.checks if c.name == "ids-in-order")
    # Checkpoint 2 still completes, before 3 is triggered: the earliest line out of order.
    assert not ids.ok and ids.detail.startswith("checkpoint 2 completed, never triggered before (")
    # The model misses checkpoint 2 already at its first trigger RPC (DEBUG), before the completion.
    assert result.first_unexplained["why"].startswith("C2/C4: no trigger RPC of checkpoint 2")


def test_a_completion_never_triggered_is_rejected_without_a_search(tmp_path):
    """Issue 23: "Completed checkpoint 49" after the last completion of a run with a failover
    (a real 43-checkpoint run took 216 s and 675,852 states to reject it, and ids-in-order
    passed). No behaviour completes an id never triggered: the search stops at that line, after
    no more states than explaining the lines before it took."""
    run = tmp_path / "run"
    what = alter_run(RUNS / "chain-failover-cut-snapshot", "completed-never-triggered", run)
    result = _conform(run)
    good = _conform(RUNS / "chain-failover-cut-snapshot")
    line = int(what.split()[1])
    assert not result.conforms and result.first_unexplained["line"] == line, what
    assert result.first_unexplained["why"].startswith("C5: checkpoint 49 is not pending")
    ids = next(c for c in result.checks if c.name == "ids-in-order")
    assert not ids.ok and ids.detail.startswith("checkpoint 49 completed, never triggered before (")
    assert result.verdict.states <= good.verdict.states


def test_a_late_missing_acknowledgement_is_rejected_without_exploring_every_interleaving(tmp_path):
    """The last completed checkpoint lost one acknowledgement: no line from the backtrack's start
    on acknowledges it, so no interleaving of the lines before can help (it took 423,334 states
    and 80 s before; the good log takes 37,529)."""
    run = tmp_path / "run"
    alter_run(RUNS / "chain-failover-burned-id", "late-ack-deleted", run)
    result = _conform(run)
    assert not result.conforms and result.first_unexplained["why"].startswith("C5: checkpoint 8 cannot complete")
    assert result.verdict.states <= 2 * _conform(RUNS / "chain-failover-burned-id").verdict.states


def test_a_trigger_logged_after_finish_switches_had_its_plan_before_them(monkeypatch):
    """Checkpoint 5's timestamp is taken, its plan computed, and only then is its line logged, with
    five FINISHED switches of the JobManager in between (flip147 facts §4.9). With FLIP-147 off
    any of them would have declined the plan, so the plan came before them: the trigger's own
    timestamp says how far back it may go. Without that reading the line has no model step."""
    from flipcheck.flink import conform as conform_module

    run = RUNS / "chain-flip147-off-late-trigger"
    log = (run / "flink.log").read_text().splitlines()
    line = next(n for n, text in enumerate(log, 1) if "Triggering checkpoint 5 " in text)
    switches = [text for text in log[:line] if "ExecutionGraph" in text and "to FINISHED" in text]
    assert "@ 1795600803538 " in log[line - 1] and len(switches) == 5
    assert all(text.startswith("2026-11-25 10:00:03,54") for text in switches)
    assert _conform(run, protocol="pre-flip-147").checks[0].ok
    monkeypatch.setattr(conform_module, "plans_from", lambda observed: {})
    result = _conform(run, protocol="pre-flip-147")
    assert not result.checks[0].ok and result.first_unexplained["line"] == line
    assert result.first_unexplained["why"].startswith("C2: on the coordinator's view the plan is declined")


@pytest.mark.parametrize("name", ["chain-flip147-off", "chain-flip147-off-dropped-snapshot",
                                  "chain-flip147-off-late-trigger"])
def test_a_flip_147_off_run_conforms_to_pre_flip_147_and_shows_its_loss(name):
    """chain-flip147-off-dropped-snapshot: both sources finish with checkpoint 6 unacknowledged
    and decline nothing; the sinks' acknowledgements are still accepted, and checkpoint 6 fails
    at the job's end (J7 with FLIP-147 off, flip147 facts §4.7)."""
    run = RUNS / name
    under_flip147 = _conform(run)
    assert not under_flip147.conforms
    # The log dates a source's end of data only from above (its later `Finished task` line), so
    # here the model cannot refute the early finish: the lost records can.
    assert "committed-output" in {c.name for c in under_flip147.checks if not c.ok}
    pre = _conform(run, protocol="pre-flip-147")
    failing = {c.name for c in pre.checks if not c.ok}
    assert failing == {"committed-output"}, failing   # the model holds; the last transaction is lost
    assert "too few times" in next(c for c in pre.checks if c.name == "committed-output").detail


def test_a_loss_the_model_allows_does_not_cut_the_search(monkeypatch):
    """Divergence 37: a failed output check caps the search (REJECTED_BUDGET) only where the
    model promises the output. chain-flip147-off loses its sinks' last transaction, a behaviour
    of pre-flip-147, whose search takes 537 states: with the cap lowered below that it must still
    be found (join-flip147-off-search-past-rejected-budget needed 254,988 against 150,000)."""
    from flipcheck.flink import conform as conform_module

    monkeypatch.setattr(conform_module, "REJECTED_BUDGET", 100)
    pre = _conform(RUNS / "chain-flip147-off", protocol="pre-flip-147")
    assert {c.name for c in pre.checks if not c.ok} == {"committed-output"}
    assert pre.verdict.states > 100
    under_flip147 = _conform(RUNS / "chain-flip147-off")   # FLIP-147 promises the output: capped
    assert under_flip147.verdict.states <= 100 + 1_000 and not under_flip147.conforms
    stored = RUNS / "join-flip147-off-search-past-rejected-budget"
    assert json.loads((stored / "run.json").read_text())["records_committed"] == 36


def test_a_run_the_default_backtracking_leaves_undecided_conforms_with_a_deeper_one():
    """Divergence 38: in a campaign run (union state, unaligned, the sink failed at record 57),
    counter[0] took both sources' end of data before checkpoint 5's barrier and counter[1] did
    not, so checkpoint 5 failed finalizing (a union-state vertex only partly finished). The lazy
    search had both counters take the barrier first and explains the 12 observations after it
    again only 6 deep: the run was rejected with "backtracking stopped". A deeper backtrack
    explains it; the why says which option to give, and conform now gives it itself when the
    default stops undecided (DEEPER_BACKTRACK)."""
    run = RUNS / "union-state-unaligned-failover-backtrack-deeper"
    shallow = _conform(run, backtrack=6)
    assert not shallow.conforms and shallow.verdict.exhausted_budget   # undecided: the search was cut
    assert "backtracking stopped" in shallow.first_unexplained["why"] and "--backtrack 24" in shallow.first_unexplained["why"]
    deep = _conform(run)   # the default: 6, then 24
    assert deep.conforms, deep.first_unexplained
    assert deep.verdict.states > shallow.verdict.states   # the first search counts too
    finalized = [label for label in deep.verdict.behaviour if label[0] == "ack" and label[2] == 5]
    assert len(finalized) == 5          # every task's acknowledgement of 5, then C5 failed finalizing
    assert "PartialFinishingNotSupportedByStateException" in (run / "flink.log").read_text()


def test_a_second_search_stopped_at_its_cap_says_so_and_names_the_search_that_may_go_on(monkeypatch):
    """The second search has its own cap: a larger --budget does not lift it, --backtrack 24 does."""
    from flipcheck.flink import conform as conform_module

    monkeypatch.setattr(conform_module, "DEEPER_BUDGET", 2_000)
    result = _conform(RUNS / "union-state-unaligned-failover-backtrack-deeper")
    why = result.first_unexplained["why"]
    assert not result.conforms and result.verdict.exhausted_budget
    assert "the cap of a second search 24 lines back, after " in why and "states of the first" in why
    assert why.endswith("conform --backtrack 24 lets one search use the whole budget)"), why


def test_an_rpc_without_an_id_goes_to_a_checkpoint_whose_plan_it_fits():
    """The fresh-clone make test of 2026-11-27 (ci38): checkpoint 4's RPCs went to src (545, an
    unknown task by then) and slow (546); checkpoint 5's line (593) came before its RPC reached
    the writer, which had finished (595: no id). Checkpoint 4's plan may hold the writer too (src
    finished before its line), but not with src: the RPC is checkpoint 5's. Only the bug fails."""
    result = _conform(RUNS / "matrix-FLINK-37605-1.20.0-rpc-of-the-next-checkpoint")
    failing = [check.name for check in result.checks if not check.ok]
    assert failing == ["committed-output"], [c.as_json() for c in result.checks if not c.ok]


def test_a_task_sharing_the_failed_snapshots_channel_state_file_declines():
    """Divergence 39: in a campaign run (chain, unaligned, map[0] throws in its snapshot of
    checkpoint 5 after its input ended), sink[0] declined checkpoint 5 first ("aborted due to
    exception of other subtasks sharing the ChannelState file", flink.log:780): Flink 1.17+ writes
    the unaligned channel state of several subtasks into one file and fails the others' writes
    when one aborts. Rejected ("no reason to decline") before F0 let such a task decline."""
    run = RUNS / "chain-unaligned-shared-channel-state-decline"
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    sink = next(t.index for t in result.job.tasks if t.vertex.startswith("sink") and t.subtask == 0)
    assert ("shared-decline", sink, 5) in result.verdict.behaviour
    failed = next(i for i, label in enumerate(result.verdict.behaviour) if label[0] == "fail")
    assert failed < result.verdict.behaviour.index(("shared-decline", sink, 5))
    assert "sharing the ChannelState file" in (run / "flink.log").read_text()


@functools.cache
def _states_to_accept(name: str) -> int:
    return _conform(RUNS / name).verdict.states


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
@pytest.mark.parametrize("name", ["join-failover", "union-state"])
def test_an_altered_log_does_not_conform(tmp_path, name, alteration):
    what = alter_run(RUNS / name, alteration, tmp_path / "run")
    result = _conform(tmp_path / "run")
    failing = {c.name for c in result.checks if not c.ok}
    assert not result.conforms, what
    # Rejecting takes no more search than accepting the log as run (issue 23).
    assert result.verdict.states <= _states_to_accept(name), what
    expected = {"finished-before-final-checkpoint": "model", "completed-without-acknowledgement": "model",
                "committed-twice": "committed-output", "completed-never-triggered": "model",
                "late-ack-deleted": "model"}[alteration]
    assert expected in failing, (what, failing)
    if expected == "model":
        first = result.first_unexplained
        assert first["file"].endswith("flink.log") and first["line"] > 0 and first["why"][:2] in ("J7", "C5")


def test_the_json_contract(capsys):
    run = RUNS / "union-state"
    code = main(["conform", "--json", "--plan", str(run / "plan.json"), str(run / "flink.log")])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert list(document) == ["conforms", "events", "checkpoints", "first_unexplained", "checks", "designs", "faults"]
    assert document["conforms"] is True and document["first_unexplained"] is None
    assert document["faults"] == []   # issue 26: where each injected fault struck (none in this run)
    assert all(set(check) == {"name", "ok", "detail"} for check in document["checks"])
    # Issue 25: each design the logs hold, FLIP-147's protocol always (no other design's lines here).
    assert list(document["designs"]) == ["protocol"]
    protocol = document["designs"]["protocol"]
    assert list(protocol) == ["conforms", "events", "first_unexplained", "checks"] and protocol["conforms"] is True
    assert protocol["checks"] == document["checks"]


def test_a_non_conforming_run_exits_1_naming_file_line_and_rule(tmp_path, capsys):
    alter_run(RUNS / "union-state", "finished-before-final-checkpoint", tmp_path / "run")
    code = main(["conform", "--plan", str(tmp_path / "run" / "plan.json"), str(tmp_path / "run" / "flink.log")])
    out = capsys.readouterr().out
    assert code == 1
    assert "does NOT conform" in out and "first unexplained:" in out and "flink.log:" in out and "why: J7" in out


@pytest.mark.parametrize("problem", ["missing log", "not a log", "bad plan", "plan not json", "unknown protocol"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, problem):
    run = RUNS / "union-state"
    plan, log = str(run / "plan.json"), str(run / "flink.log")
    if problem == "missing log":
        log = str(tmp_path / "nope.log")
    elif problem == "not a log":
        (tmp_path / "x.log").write_text("hello\nworld\n")
        log = str(tmp_path / "x.log")
    elif problem == "bad plan":
        (tmp_path / "plan.json").write_text('{"nodes": 3}')
        plan = str(tmp_path / "plan.json")
    elif problem == "plan not json":
        (tmp_path / "plan.json").write_text("{")
        plan = str(tmp_path / "plan.json")
    argv = ["conform", "--plan", plan, log] + (["--protocol", "no-such"] if problem == "unknown protocol" else [])
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err


def test_render_draws_the_behaviour_up_to_the_unexplained_event_escaped(tmp_path):
    # The log's path lands in the picture's title: it must arrive escaped.
    run = tmp_path / "run<&>"
    alter_run(RUNS / "union-state", "completed-without-acknowledgement", run)
    svg = tmp_path / "chart.svg"
    code = main(["conform", "--plan", str(run / "plan.json"), "--render", str(svg), str(run / "flink.log")])
    text = svg.read_text()
    assert code == 1
    assert text.startswith("<?xml") and "first unexplained" in text and "C5: checkpoint" in text
    assert "run&lt;&amp;&gt;" in text and "run<&>" not in text


def test_a_behaviour_with_a_trigger_after_every_task_finished_replays():
    """The demo's real join run: the timer triggered checkpoint 11 after the last task had
    finished, on a view that had not learned so yet (C3p; its RPCs reach finished tasks). The
    search explained it; the behaviour found must replay too, for its picture (a fresh-clone CI
    run of `flipcheck demo` failed here with "step ('trigger', 11) is not enabled")."""
    from flipcheck.properties.protocol_trace_validation import replay_behaviour

    result = _conform(RUNS / "join-trigger-after-end")
    assert result.checks[0].ok
    behaviour = result.verdict.behaviour
    last_finish = max(i for i, label in enumerate(behaviour) if label[0] == "finish")
    assert ("trigger", 11) in behaviour[last_finish:]
    steps = replay_behaviour(result.job, behaviour)
    assert [s.label for s in steps][-len(behaviour):] == behaviour


def test_a_design_is_its_rows_of_the_observation_table(monkeypatch):
    """Adding a design is adding rows: (design, event kind) -> observations, read from the same
    typed events (each on its task) as the protocol's."""
    from flipcheck.flink import observations
    from flipcheck.flink.conform import Tasks, model_job
    from flipcheck.flink.logs import read_logs

    monkeypatch.setattr(observations, "OBSERVERS", dict(observations.OBSERVERS))
    monkeypatch.setattr(observations, "DESIGNS", dict(observations.DESIGNS))
    observations.add_design("toy", ("completed",))
    observations.add_observer("toy", "completed", lambda e, t, follow: [("completed", e.checkpoint)])
    observations.add_observer("toy", "task-ended", lambda e, t, follow: [] if t is None else [("ended", t)],
                              shows="ended", names_only=True)
    run = RUNS / "union-state"
    plan = json.loads((run / "plan.json").read_text())
    _, job = model_job(plan)
    reading = read_logs([str(run / "flink.log")])
    observed, shown, visible, hidden = observations.observations_of(reading, Tasks(plan, job.graph, job), "toy")
    assert {o[0] for o in shown} == {"completed", "ended"} and visible == {"completed", "ended"}
    assert [o[1] for o in shown if o[0] == "completed"] == [1, 2, 3, 4, 5, 6] and hidden == set()
    with pytest.raises(ValueError, match="no observation rows for design 'nope'"):
        observations.observations_of(reading, Tasks(plan, job.graph, job), "nope")


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.glob("release-*")))
def test_a_stored_run_of_an_older_release_conforms_with_every_check(name):
    """Real runs on 1.14.6 (Sink V1, and FLIP-147 switched on by 1.14's own key), 1.15.4 (attempt
    ids of 32 hex digits, read through the plan's task names), 1.16.3, 1.17.2, 1.20.0 and 2.0.0,
    stored by `flipcheck flink run --flink VERSION`: each log is read in its release's formats and
    is a behaviour of the flip-147 model, and every record is committed exactly once."""
    result = _conform(RUNS / name)
    assert result.conforms, (result.first_unexplained, [c.as_json() for c in result.checks if not c.ok])
    assert result.checkpoints >= 3 and result.events > 100
    spec = json.loads((RUNS / name / "spec.json").read_text())
    if name.startswith("release-1.14"):
        assert spec["configuration"]["execution.checkpointing.checkpoints-after-tasks-finish.enabled"] == "true"


def test_a_trigger_before_the_jobmanager_handles_a_failure_leaves_the_used_up_id_to_the_next():
    """Divergence 19: on 2.2.1 the timer triggered checkpoint 3 after the sink's TaskManager logged
    its failure but before the JobManager handled it; the failover then used up id 4 and 5
    followed. The run conforms; anchoring the failover at the TaskManager's line (the reading
    before) rejects it."""
    from flipcheck.flink.conform import ids_check

    run = RUNS / "matrix-FLINK-25920-2.2.1-trigger-before-failure-handled"
    result = _conform(run)
    assert result.conforms, [c.as_json() for c in result.checks if not c.ok]
    ids = next(c for c in result.checks if c.name == "ids-in-order")
    assert "1 id used up by failovers" in ids.detail
    before = ids_check(result.observations)  # no reading: the failover counts from its first line
    assert not before.ok and "checkpoint 5 triggered after 3" in before.detail


def _move_finishing_lines(run: Path, out: Path, task: str, before: str, *, drop_stream_task_lines=False) -> list[int]:
    """Copy ``run`` to ``out`` with the source ``task``'s closing line (``Finished operators``,
    when kept) and its TaskManager FINISHED line moved, in Flink's order, to just before the
    first line containing ``before``; their new line numbers. ``drop_stream_task_lines``: the
    log of a cluster without StreamTask DEBUG (no snapshot, end-of-input or closing lines)."""
    shutil.copytree(run, out)
    lines = (out / "flink.log").read_text().splitlines(keepends=True)
    if drop_stream_task_lines:
        lines = [line for line in lines if "runtime.tasks.StreamTask " not in line]
    finishing = [i for i, line in enumerate(lines)
                 if f"Finished operators for task Source: {task}" in line
                 or " org.apache.flink.runtime.taskmanager.Task " in line and f"Source: {task} (" in line
                 and line.rstrip().endswith("RUNNING to FINISHED.")]
    moved = [lines[i] for i in finishing]
    for i in reversed(finishing):
        del lines[i]
    at = next(i for i, line in enumerate(lines) if before in line)
    stamp = lines[at][:23]   # keep the file's time order: the moved lines take the next line's time
    lines[at:at] = [stamp + line[23:] for line in moved]
    (out / "flink.log").write_text("".join(lines))
    return [at + 1 + k for k in range(len(moved))]


def test_a_source_finishing_before_its_final_checkpoint_is_reported_where_it_finishes(tmp_path):
    """Issue 24: a source that closes and switches to FINISHED right after its end of input,
    before its final checkpoint 5 completed. Its log still shows it taking checkpoint 5's and 6's
    snapshots afterwards; the report used to name that symptom (a snapshot line 56 lines later)
    instead of the line where the source finished."""
    moved = _move_finishing_lines(RUNS / "chain-closing-decline", tmp_path / "run", "src (1/2)#0",
                                  "Finished task Source: src (2/2)#0")
    result = _conform(tmp_path / "run")
    first = result.first_unexplained
    assert not result.conforms and first["line"] == moved[0], first
    assert first["event"].startswith("operators-finished") and "Source: src (1/2)#0" in first["event"]
    assert first["why"].startswith("J7: source-src-f362c8[0] ")


def test_a_finished_line_is_reported_when_the_task_acknowledges_later(tmp_path):
    """Without StreamTask DEBUG lines the TaskManager's FINISHED line is the finish. Moved before
    the completion of the source's final checkpoint 5, it is the first line no behaviour explains:
    the source still acknowledges checkpoint 6 afterwards, which the report names (it used to
    name only that acknowledgement, 30 lines later, as the first unexplained line)."""
    moved = _move_finishing_lines(RUNS / "chain-closing-decline", tmp_path / "run", "src (1/2)#0",
                                  "Completed checkpoint 5 for", drop_stream_task_lines=True)
    result = _conform(tmp_path / "run")
    first = result.first_unexplained
    assert not result.conforms and first["line"] == moved[0], first
    assert first["event"].startswith("task-state") and first["event"].endswith("RUNNING to FINISHED")
    log = (tmp_path / "run" / "flink.log").read_text().splitlines()
    assert first["why"].startswith("J7: source-src-f362c8[0] does not finish here: it still acknowledges checkpoint 6 "
                                   "later (")
    later = int(first["why"].split(" later (", 1)[1].split(")", 1)[0].rsplit(":", 1)[1])
    assert later > moved[0] and "Received acknowledge message for checkpoint 6" in log[later - 1]


def test_the_final_checkpoint_check_cannot_date_a_sources_end_of_data():
    """docs/conformance.md used to say a source's final checkpoint must be acknowledged after its
    end of data. Flink's StreamTask ends the data at END_OF_DATA and logs `Finished task` only at
    END_OF_INPUT, with mails (a checkpoint) in between (flip147 facts §4.4): in this real run the
    source performs checkpoint 2 before its `Finished task` line and finishes on it. A check that
    read that line as the end of data would reject Flink as it runs; the check takes any
    confirmed checkpoint the task acknowledged, and the model places the end of data."""
    run = RUNS / "join-race"
    log = (run / "flink.log").read_text().splitlines()
    task = "Source: short (1/2)#0"
    started = [n for n, line in enumerate(log, 1) if "Starting checkpoint" in line and line.endswith(f"on task {task}")]
    input_ended = next(n for n, line in enumerate(log, 1) if line.endswith(f"Finished task {task}"))
    finished = next(n for n, line in enumerate(log, 1) if f"- {task} (" in line and line.endswith("RUNNING to FINISHED."))
    assert started and max(started) < input_ended < finished
    assert "Starting checkpoint 2 " in log[max(started) - 1]
    result = _conform(run)
    check = next(c for c in result.checks if c.name == "final-checkpoint")
    assert result.conforms and check.ok


def test_the_final_checkpoint_check_needs_a_confirmed_checkpoint_since_the_restart(tmp_path):
    """The restarted source closes and switches to FINISHED before any checkpoint was confirmed to
    its new attempt (the old attempt's confirmations do not count): the check fails, naming the
    line, and the model check reports the closing line before it."""
    moved = _move_finishing_lines(RUNS / "join-failover", tmp_path / "run", "short (1/2)#1",
                                  "Finished task Source: short (1/2)#1")
    result = _conform(tmp_path / "run")
    check = next(c for c in result.checks if c.name == "final-checkpoint")
    assert not check.ok and check.detail == (f"source-short-df253d[0] switched to FINISHED ({tmp_path / 'run' / 'flink.log'}:"
                                             f"{moved[1]}) before any checkpoint it acknowledged was confirmed to it")
    assert result.first_unexplained["line"] == moved[0]


def test_a_task_may_finish_between_anothers_failure_and_the_restart():
    """A real run (make test, fixture join-failover-finish-before-restart): join[0] throws, and
    before the JobManager handles it, source short[1] switches to FINISHED on checkpoint 2,
    confirmed to it before the failure. F0 lets the other tasks run on until F1 restarts the
    attempts (flip147 facts §4.10), so what they acknowledged and were told is forgotten at the
    JobManager's line, not at the task's: the final-checkpoint check failed this run before."""
    run = RUNS / "join-failover-finish-before-restart"
    log = (run / "flink.log").read_text().splitlines()
    line = lambda text: next(n for n, t in enumerate(log, 1) if text in t)  # noqa: E731
    confirmed = line("Notify checkpoint 2 complete on task Source: short (2/2)#0")
    attempt = "e6d99d7972f15d9371162fb4be8bb016_{}_{}_0) switched from RUNNING to"
    failed = line("join (1/2)#0 (" + attempt.format("3d7e5afd947976f7a5d7a679d87b6bbd", 0))
    finished = line("Source: short (2/2)#0 (" + attempt.format("df253d3619938b6301f2d568e16f802b", 1))
    restarting = line("switched from state RUNNING to RESTARTING")
    assert confirmed < failed < finished < restarting
    assert "RUNNING to FAILED" in log[failed - 1] and "RUNNING to FINISHED" in log[finished - 1]
    result = _conform(run, budget=1_000)   # the end-to-end checks do not depend on the search
    check = next(c for c in result.checks if c.name == "final-checkpoint")
    assert check.ok, check.detail


def test_a_task_finishing_before_the_restart_is_not_refuted_by_its_next_attempt():
    """A real run (make test): short[1] finishes after join[0]'s failure and before the restart,
    and its restarted attempt ends its input later. conform read that later line as the old
    attempt still running (J7) and rejected the run: a task's lines are its attempt's only up to
    the restart (F1, the JobManager's line), not up to another task's FAILED line (F0)."""
    run = RUNS / "join-failover-restarted-attempt-ends-input"
    result = _conform(run)
    assert result.conforms, result.first_unexplained


def test_a_trigger_rpc_without_an_id_belongs_to_the_oldest_checkpoint_the_task_has_not_seen():
    """A real run (make test, the demo): checkpoint 4's RPC to short[1] reached the TaskExecutor
    after short[1] had unregistered, and its "unknown task" line, which names no checkpoint,
    came after checkpoint 5's trigger line. The trigger-plan check gave it to 5 and reported
    checkpoint 4 as triggered without short[1] (divergence 32)."""
    run = RUNS / "join-unknown-task-rpc-after-next-trigger"
    log = (run / "flink.log").read_text().splitlines()
    line = lambda text: next(n for n, t in enumerate(log, 1) if text in t)  # noqa: E731
    short_1 = "682989da4e3b5918a5427ee8767380ff_df253d3619938b6301f2d568e16f802b_1_0"
    assert line("Triggering checkpoint 4 ") < line("Triggering checkpoint 5 ") < line(f"request for unknown task {short_1}")
    assert not any("Trigger checkpoint 4@" in t and short_1 in t for t in log)
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    check = next(c for c in result.checks if c.name == "trigger-plan")
    assert check.ok and check.detail.startswith("13 checkpoints"), check.detail


def test_a_late_rpc_to_the_attempt_that_failed_belongs_before_the_failover(tmp_path):
    """join-failover, altered: checkpoint 3's RPC to short[1]'s first attempt is logged as an
    "unknown task" line after checkpoint 4 was triggered on the restarted attempts (the race of
    divergence 32 across a failover). It is checkpoint 3's: the attempt that failed got only RPCs
    of triggers before the failover. Keyed by task alone, it went to 4 and checkpoint 3 read as
    triggered without short[1]."""
    run = tmp_path / "run"
    shutil.copytree(RUNS / "join-failover", run)
    lines = (run / "flink.log").read_text().splitlines(keepends=True)
    old_attempt = "53f40c4fb2082af3f1fa40d8fcb31fe1_df253d3619938b6301f2d568e16f802b_1_0"
    rpc = next(i for i, line in enumerate(lines) if "Trigger checkpoint 3@" in line and old_attempt in line)
    fourth = next(i for i, line in enumerate(lines) if "Triggering checkpoint 4 " in line)
    stamp = lines[fourth][:23]
    late = (f"{stamp} DEBUG org.apache.flink.runtime.taskexecutor.TaskExecutor           [] - "
            f"TaskManager received a checkpoint request for unknown task {old_attempt}.\n")
    lines.insert(fourth + 1, late)
    del lines[rpc]
    (run / "flink.log").write_text("".join(lines))
    result = _conform(run, budget=1_000)   # the end-to-end checks do not depend on the search
    check = next(c for c in result.checks if c.name == "trigger-plan")
    assert check.ok and check.detail.startswith("10 checkpoints"), check.detail


def test_divergence_36_an_acknowledgement_sent_before_finishing_may_never_be_handled():
    """Settled (docs/conformance.md, divergence 36; flip147 facts §4.13): counter[1] finished
    (1019) with its checkpoint 7 acknowledgement sent but not yet handled; the job finished and
    the coordinator stopped (1038) first, so that acknowledgement was never logged and checkpoint
    7 failed at the shutdown. The model's J7 waited until the acknowledgement was at the
    coordinator and rejected the run at 1019; a task now finishes once its acknowledgements were
    sent, and they stay on their way. The behaviour found shows exactly that."""
    run = RUNS / "union-state-failover-ack-unlogged-after-shutdown"
    log = (run / "flink.log").read_text().splitlines()
    counter_1 = "1fef955c44b732f247938006d322deef_0da08f51eaa85fc298e176a139b3649a_1_1"
    assert not any("Received acknowledge message for checkpoint 7 from task " + counter_1 in t for t in log)
    shutdown = next(n for n, t in enumerate(log, 1) if "Stopping checkpoint coordinator" in t)
    assert shutdown > 1019 and "counter (2/2)#1" in log[1018] and "RUNNING to FINISHED" in log[1018]
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    assert all(c.ok for c in result.checks)
    job, labels = result.job, result.verdict.behaviour
    counter = next(t for t in range(len(job.tasks)) if job.name(t).startswith("counter") and job.name(t).endswith("[1]"))
    finished = labels.index(("finish", counter))
    assert ("ack", counter, 7) not in labels[finished:], "its acknowledgement of 7 is never handled"
    state = run_steps(job, labels[:finished + 1])
    assert [k for k, _ in state.tasks[counter].outbox] == [7]    # sent, still on its way
    assert ("suspend",) in labels[finished:]                      # C8 aborts checkpoint 7


USER_PROTOCOLS = Path(__file__).resolve().parents[2] / "examples" / "user-project" / "src" / "my_checkpointing" / "protocols.py"


def test_conform_takes_a_users_protocol_class(capsys, tmp_path, monkeypatch):
    """Issue 24: `--protocol FILE.py:CLASS` was refused; it is loaded as explore's `--variant`."""
    run = RUNS / "union-state"
    argv = ["--plan", str(run / "plan.json"), str(run / "flink.log")]
    assert main(["conform", "--protocol", f"{USER_PROTOCOLS}:ForwardPassTrigger", *argv]) == 0
    assert "matched against the forward-pass-trigger model" in capsys.readouterr().out
    # A relative spec, from the file's own folder, and the same health check as every loader.
    (tmp_path / "typo.py").write_text("import flipcheck\n\n\nclass Typo(flipcheck.Protocol):\n"
                                      "    wait_for_pending_checkpoint = False\n")
    monkeypatch.chdir(tmp_path)
    assert main(["conform", "--protocol", "typo.py:Typo", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("flipcheck: --protocol: ")
    assert "did you mean wait_for_pending_checkpoints?" in err
    assert main(["conform", "--protocol", "missing.py:Nope", *argv]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_long_conform_search_reports_progress(capsys, monkeypatch):
    """A search longer than a few seconds says how far it is on stderr (issue 24: a rejected log
    searched for 3 min 18 s without a line); the interval is shortened here, not waited for."""
    from flipcheck.cli import conform as conform_cli
    
    # A search of more than 1,024 states (the clock is read once per 1,024 states).
    run = RUNS / "chain-failover-burned-id"
    searched = _states_to_accept(run.name)
    seen = []
    monkeypatch.setattr(conform_cli, "PROGRESS_AFTER_SECONDS", 0.0)
    real_validate = protocol_trace_validation.validate
    monkeypatch.setattr("flipcheck.flink.conform.validate",
                        lambda *a, **k: real_validate(*a, **{**k, "progress_every": 0.0,
                                                             "progress": lambda p: (seen.append(p), k["progress"](p))}))
    assert main(["conform", "--plan", str(run / "plan.json"), str(run / "flink.log")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("flipcheck conform: searching: ") for line in lines)
    assert len(lines) == len(seen) and seen[-1].states <= searched and seen[-1].total == 208
    assert [p.states for p in seen] == sorted(p.states for p in seen)


def test_a_failed_cheap_check_bounds_the_search_hard(tmp_path, monkeypatch):
    """Issue 24: with "Completed checkpoint 3" logged twice, ids-in-order failed at once but the
    search spent its whole 2,000,000-state budget (3 min 18 s). The duplicate is a line no
    behaviour shows whatever came before, so the search stops there; and any failed cheap check
    caps the search at REJECTED_BUDGET states."""
    from flipcheck.flink import conform as conform_module

    budgets = []
    real_validate = conform_module.validate
    monkeypatch.setattr(conform_module, "validate", lambda *a, **k: budgets.append(k["budget"]) or real_validate(*a, **k))
    run = tmp_path / "run"
    shutil.copytree(RUNS / "union-state", run)
    lines = (run / "flink.log").read_text().splitlines(keepends=True)
    completed = next(i for i, line in enumerate(lines) if "Completed checkpoint 3 for job" in line)
    lines.insert(completed + 1, lines[completed])
    (run / "flink.log").write_text("".join(lines))
    result = _conform(run)
    ids = next(c for c in result.checks if c.name == "ids-in-order")
    assert not ids.ok and ids.detail.startswith(f"checkpoint 3 completed after 3 ({run / 'flink.log'}:{completed + 2})")
    assert result.first_unexplained["line"] == completed + 2
    assert "checkpoint 3 completed before, and ids only grow" in result.first_unexplained["why"]
    assert budgets == [conform_module.REJECTED_BUDGET]
    assert result.verdict.states < _states_to_accept("union-state")


def test_a_failed_output_check_bounds_the_search_too(tmp_path, monkeypatch):
    """A record committed twice rejects the run whatever the log shows: the search is capped as
    for any failed cheap check (a racing diamond run spent a whole search accepting the log)."""
    from flipcheck.flink import conform as conform_module
    from flipcheck.flink.suite import alter_run

    budgets = []
    real_validate = conform_module.validate
    monkeypatch.setattr(conform_module, "validate", lambda *a, **k: budgets.append(k["budget"]) or real_validate(*a, **k))
    alter_run(RUNS / "union-state", "committed-twice", tmp_path / "altered")
    result = _conform(tmp_path / "altered")
    failing = {c.name for c in result.checks if not c.ok}
    assert failing == {"committed-output"} and not result.conforms
    assert budgets == [conform_module.REJECTED_BUDGET]
    assert _conform(RUNS / "union-state").conforms and budgets[1] == conform_module.DEFAULT_BUDGET


def test_log_lines_are_ordered_by_timestamp_whatever_order_the_files_come_in(tmp_path):
    """docs/conformance.md, "How lines are ordered": files are merged by their lines' timestamps;
    within one file its own order is kept, even where a timestamp goes back; lines of the same
    millisecond in two files come in the order of the files' paths, so the order the files are
    given in changes nothing."""
    from flipcheck.flink.logs import read_logs

    coordinator = "INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator    [] - "
    executor = "DEBUG org.apache.flink.runtime.taskexecutor.TaskExecutor           [] - "
    attempt = "ee006e4c9483bc52fbcee486c529b757_f362c87ffabe89c8a91fa7d0a523ba6c_0_0"
    jm = tmp_path / "b-jobmanager.log"
    jm.write_text(f"2026-11-25 01:39:25,170 {coordinator}Triggering checkpoint 1 (type=CheckpointType{{name='Checkpoint', "
                  "sharingFilesStrategy=FORWARD_BACKWARD}) @ 1795570765168 for job a110564d92c0e4e53cda788bc1b8b84f.\n"
                  f"2026-11-25 01:39:25,287 {coordinator}Completed checkpoint 1 for job a110564d92c0e4e53cda788bc1b8b84f "
                  "(1488 bytes, checkpointDuration=107 ms, finalizationTime=12 ms).\n"
                  f"2026-11-25 01:39:25,286 {coordinator}Triggering checkpoint 2 (type=CheckpointType{{name='Checkpoint', "
                  "sharingFilesStrategy=FORWARD_BACKWARD}) @ 1795570765286 for job a110564d92c0e4e53cda788bc1b8b84f.\n")
    tm = tmp_path / "a-taskmanager.log"
    tm.write_text(f"2026-11-25 01:39:25,170 {executor}Trigger checkpoint 1@1795570765168 for {attempt}.\n"
                  f"2026-11-25 01:39:25,290 {executor}Trigger checkpoint 2@1795570765286 for {attempt}.\n")
    orders = [[(Path(e.file).name, e.line) for e in read_logs([str(a), str(b)]).events] for a, b in ((jm, tm), (tm, jm))]
    assert orders[0] == orders[1] == [("a-taskmanager.log", 1), ("b-jobmanager.log", 1), ("b-jobmanager.log", 2),
                                      ("b-jobmanager.log", 3), ("a-taskmanager.log", 2)]


def _stored_runs_table(text: str) -> list[str]:
    """The rows of the stored-runs table (those naming a run in their first column)."""
    return [line for line in text.splitlines() if line.startswith("| `")]


def test_the_stored_runs_are_listed_where_the_docs_say():
    """Issue 24: the fixtures folder had no README and its names did not match the docs. The
    README's table is the docs' table, and both name every stored run folder, and only those."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text()
    section = docs.split("## Stored runs\n", 1)[1].split("\n## ", 1)[0]
    in_docs = _stored_runs_table(section)
    in_readme = _stored_runs_table((RUNS / "README.md").read_text())
    assert in_docs == in_readme
    named = [row.split("`", 2)[1] for row in in_docs]
    assert named == sorted(p.name for p in RUNS.iterdir() if p.is_dir())


@patches_compiled("flipcheck.properties.protocol_trace_validation", "task_failure")
def test_a_checkpoint_completing_after_a_task_failed_needs_the_failure_before_its_handling(monkeypatch):
    """Divergence 24's other face, seen in CI: reader src[0] acknowledged checkpoint 2, then
    failed (the TaskManager's FAILED line, 503); the sink's acknowledgement (513) and the
    completion (521) came before the JobManager handled the failure, and the failed reader then
    declined checkpoint 3. With F0 the other tasks run on until F1; without it the run is rejected
    (the model before F0 rejected it at the completion, 521; now at the failed reader's decline)."""
    run = RUNS / "splits-checkpoint-completed-after-reader-failed"
    log = (run / "flink.log").read_text().splitlines()
    failed = next(n for n, line in enumerate(log, 1) if "switched from RUNNING to FAILED with failure cause" in line)
    completed = next(n for n, line in enumerate(log, 1) if "Completed checkpoint 2 " in line)
    handled = next(n for n, line in enumerate(log, 1) if "ExecutionGraph" in line and "to FAILED" in line)
    assert failed < completed < handled
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    from flipcheck.model.protocol import machine

    monkeypatch.setattr(protocol_trace_validation, "task_failure", lambda job, s: [])
    monkeypatch.setattr(machine, "COORDINATOR_ACTIONS",
                        tuple(a for a in machine.COORDINATOR_ACTIONS if a is not failover_rules.task_failure))
    # One search (6 back), not conform's deeper second one: the same why, a shorter make test.
    result = _conform(run, backtrack=6)
    assert not result.conforms and "source-src-f362c8[0] has no reason to decline checkpoint 3" in (
        result.first_unexplained["why"])


@pytest.mark.parametrize("name", ["chain-unaligned-split-event-overtaken", "chain-unaligned-split-event-overtaken-held-reader"])
def test_an_unaligned_trigger_that_overtakes_a_split_event_loses_the_split(name):
    """Divergence 41, settled as a Flink bug in 2.1.0 to 2.3.0 with unaligned checkpoints
    (recovery facts §3.10): src[1]'s AddSplitEvent was queued in its task's mailbox before the trigger of
    checkpoint 1, whose urgent mail ran first, so the reader's snapshot holds no split while the
    enumerator's (taken after the assignment) holds none either. The restore from checkpoint 1
    loses the split: the job FINISHED with src[1]'s 30 records never committed. The protocol's
    checkpoint events are all a behaviour of the model; the end-to-end check catches the loss.
    The first run is the campaign's (a race at start-up), the second the same race made likely
    by `--fault delay-first-poll:src:1=400` (tests/flink/test_flink_split_event_overtaken.py
    makes it certain, with a lazy source)."""
    run = RUNS / name
    result = _conform(run)
    failing = {c.name: c.detail for c in result.checks if not c.ok}
    assert set(failing) == {"committed-output"}, failing
    assert failing["committed-output"].startswith("30 source records committed too few times")
    assert json.loads((run / "run.json").read_text())["status"] == "FINISHED"
    lines = (run / "flink.log").read_text().splitlines()
    src1 = next(line.split(" for ")[1].split(".")[0] for line in lines if "Trigger checkpoint 1@" in line
                and "_f362c87ffabe89c8a91fa7d0a523ba6c_1_0" in line)
    event = next(i for i, line in enumerate(lines) if f"Operator event for {src1}" in line)
    trigger = next(i for i, line in enumerate(lines) if "Trigger checkpoint 1@" in line and src1 in line)
    assert event < trigger
    assert sum("Restoring state for 1 split(s) to reader" in line for line in lines) == 1


def test_a_shared_decline_may_come_before_the_failing_tasks_failed_line():
    """Divergence 40 (settled: validation corrected): short[0]'s snapshot of checkpoint 1 threw
    (flink.log:256); long[0], sharing its channel-state file, declined 1 (417) before short[0]'s
    own FAILED line (610), 3 ms later but after 200 lines of stack traces. F0 happens where the
    exception is thrown; its line comes once the exception has reached the task. The search may
    take a task's F0 before its FAILED line when that line is the next failover line and near."""
    run = RUNS / "join-unaligned-shared-decline-before-failed-line"
    lines = (run / "flink.log").read_text().splitlines()
    decline = next(i for i, line in enumerate(lines) if "Decline checkpoint 1 by task" in line)
    failed = next(i for i, line in enumerate(lines) if "Source: short (1/2)#0" in line and "switched from RUNNING to FAILED" in line)
    assert decline < failed
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    short0 = next(t.index for t in result.job.tasks if t.vertex.startswith("source-short") and t.subtask == 0)
    long0 = next(t.index for t in result.job.tasks if t.vertex.startswith("source-long") and t.subtask == 0)
    behaviour = result.verdict.behaviour
    assert behaviour.index(("fail", short0)) < behaviour.index(("shared-decline", long0, 1))


@patches_compiled("flipcheck.properties.protocol_trace_validation", "failed_line_follows")
def test_without_an_early_failure_the_shared_decline_has_no_reason(monkeypatch):
    monkeypatch.setattr(protocol_trace_validation, "failed_line_follows", lambda *args: False)
    # One search (6 back), not conform's deeper second one: the same why, a shorter make test.
    result = _conform(RUNS / "join-unaligned-shared-decline-before-failed-line", backtrack=6)
    assert not result.conforms and "has no reason to decline checkpoint 1" in result.first_unexplained["why"]


def test_an_unaligned_snapshot_waiting_for_its_barriers_shares_the_file():
    """Divergence 40's other face (settled: model corrected): sink[0] threw in its snapshot of
    checkpoint 1, taken at the first of its two barriers (flink.log:201); counter[1], whose
    snapshot had its first barrier and waited for the second, declined 1 for the shared file.
    Neither had an acknowledgement ready, which F0's shared decline asked for until now."""
    result = _conform(RUNS / "union-state-unaligned-shared-decline-at-first-barrier")
    assert result.conforms, result.first_unexplained
    sink0 = next(t.index for t in result.job.tasks if t.vertex.startswith("sink"))
    counter1 = next(t.index for t in result.job.tasks if t.vertex.startswith("counter") and t.subtask == 1)
    behaviour = result.verdict.behaviour
    assert behaviour.index(("fail", sink0)) < behaviour.index(("shared-decline", counter1, 1))


def test_a_failover_with_a_checkpoint_pending_may_use_up_an_id():
    """Divergence 42 (settled: F1b corrected): checkpoint 9 was pending at the second failover
    and aborted by a cancelled task's decline; the 2.3.0 scheduler, left running (flip147 facts
    §4.15), then drew id 10 for a plan that waits for no task (UNKNOWN_CHECKPOINT_ID), and
    checkpoint 11 came next."""
    run = RUNS / "join-unaligned-failover-id-used-up-after-pending"
    log = (run / "flink.log").read_text()
    assert "Checkpoint needs at least one vertex that commits the checkpoint" in log
    assert "Triggering checkpoint 10 " not in log and "Triggering checkpoint 11 " in log
    result = _conform(run)
    assert result.conforms, result.first_unexplained


@patches_compiled("flipcheck.model.protocol.failover", "_trigger_may_be_under_way()")
def test_without_f1b_the_id_after_a_pending_checkpoint_is_unexplained(monkeypatch):
    monkeypatch.setattr(failover_rules, "_trigger_may_be_under_way", lambda job, s: False)
    # One search (6 back), not conform's deeper second one: the same why, a shorter make test.
    result = _conform(RUNS / "join-unaligned-failover-id-used-up-after-pending", backtrack=6)
    assert not result.conforms and result.first_unexplained["why"].startswith("C2: the next checkpoint id is 10, not 11")


def test_a_coordinator_snapshot_that_fails_fails_its_checkpoint_before_any_task_hears_of_it():
    """Divergence 43 (settled: C2f added; found by trying the fault that became global-failure):
    the split enumerator's snapshotState threw for checkpoint 2 (`--fault
    coordinator-snapshot-throw@2`, flink.log:362); SourceCoordinator completed the coordinator
    checkpoint's future exceptionally and checkpoint 2 failed as it was triggered (368, "Trigger
    checkpoint failure"); no task got a trigger RPC or barrier of 2, and the job ran on."""
    run = RUNS / "chain-coordinator-snapshot-throw"
    log = (run / "flink.log").read_text()
    assert "Trigger checkpoint failure" in log and "Trigger checkpoint 2@" not in log
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    assert ("trigger-fails", 2) in result.verdict.behaviour


def test_a_global_failure_is_a_failover_with_no_task_failed():
    """`--fault global-failure@1`: the enumerator's async action threw in the coordinator thread
    (flink.log:299), and the JobManager recovered from a global failure (315) while checkpoint 1
    was pending: F1 on its own (divergence 22), no task FAILED."""
    run = RUNS / "chain-global-failure"
    log = (run / "flink.log").read_text()
    assert "Trying to recover from a global failure." in log and "switched from RUNNING to FAILED" not in log
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    labels = result.verdict.behaviour
    assert ("failover",) in labels and not [label for label in labels if label[0] == "fail"]
    struck = result.as_json()["faults"]
    assert [(f["kind"], f["at"]) for f in struck] == [("global-failure", "checkpoint 1 in the split enumerator of src")]


def test_a_global_failure_at_the_start_is_a_failover_before_any_trigger():
    """`--fault global-failure-at-start`: the enumerator's async action, handed over as it starts
    (flink.log:117), threw (125); the JobManager recovered from a global failure (145) before its
    checkpoint scheduler ran: F1 comes before the first trigger, a target no other fault reaches."""
    run = RUNS / "chain-global-failure-at-start"
    log = (run / "flink.log").read_text()
    assert log.index("Trying to recover from a global failure.") < log.index("Triggering checkpoint 1 ")
    result = _conform(run)
    assert result.conforms, result.first_unexplained
    labels = result.verdict.behaviour
    assert labels[0] == ("failover",) and not [label for label in labels if label[0] == "fail"]
    struck = result.as_json()["faults"]
    assert [(f["kind"], f["at"]) for f in struck] == [("global-failure-at-start", "the start of the split enumerator of src")]

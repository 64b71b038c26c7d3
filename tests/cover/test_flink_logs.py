"""Reading real Flink logs (flipcheck/flink/logs.py), on a log of a real Flink 2.3 run.

The fixture is the unchanged log of a local MiniCluster run: two bounded sources of different
lengths (40 and 120 records) into a keyed two-input join and a sink, parallelism 2, operator
chaining off, a checkpoint every 100 ms, DEBUG on for CheckpointCoordinator, TaskExecutor,
StreamTask, SingleCheckpointBarrierHandler and SubtaskCheckpointCoordinatorImpl.
"""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flipcheck.errors import InputError
import hashlib
import re
import shutil

from flipcheck.cli import main
from flipcheck.flink import logs
# The designs' rows (every log reading registers them first: logs._register_design_lines).
from flipcheck.flink.conform_local_recovery import LOCAL_RECOVERY_PATTERNS
from flipcheck.flink.conform_split_assignment import SOURCE_LINES, SPLIT_LINES
from flipcheck.flink.logs import (PATTERNS, RELEASES, TaskIdentity, attempt_parts, parse_log, read_logs,
                                  release_of, supported_release)

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "flink_logs" / "join-two-sources-unchained.log"


@pytest.fixture(scope="module")
def reading():
    return read_logs([str(RUN)])


def by_kind(reading, kind):
    return [e for e in reading.events if e.kind == kind]


def test_every_kind_of_event_is_found_in_a_real_run(reading):
    from flipcheck.flink.conform_batch_recovery import KINDS as BATCH_RECOVERY_KINDS

    # A FLIP-147 run: the rows a design registers (add_pattern) read lines it does not write
    # (every run logs its deployments, which task-local recovery's row reads too); a batch job's
    # recovery lines, the split-assignment lines and a JobManager's global failure show in their
    # own runs (tests/cover/test_conform_*.py); a fault's line in runs with --fault (test_faults.py);
    # a trigger failed without an id in runs whose failover used one up (test_divergences_26_27.py).
    design_kinds = ({p.kind for p in LOCAL_RECOVERY_PATTERNS} | set(BATCH_RECOVERY_KINDS)
                    | {"global-failure", "fault", "trigger-failed", *SPLIT_LINES, *SOURCE_LINES})
    protocol_rows = [p for p in logs.PATTERNS if p not in LOCAL_RECOVERY_PATTERNS and p.kind not in design_kinds]
    assert {e.kind for e in reading.events} - design_kinds == {p.kind for p in protocol_rows if p.written_by("2.3")}
    assert reading.unrecognised < reading.entries and len(reading.events) + reading.unrecognised == reading.entries


def test_events_name_real_attempts_and_come_in_time_order(reading):
    times = [e.time for e in reading.events]
    assert times == sorted(times)
    deployed = {e.task for e in by_kind(reading, "task-state")}
    for event in reading.events:
        if event.task is not None:
            assert event.task in deployed, event
            vertex, subtask, attempt = attempt_parts(event.task)
            assert subtask in (0, 1) and attempt == 0


def test_checkpoint_events_follow_their_trigger(reading):
    triggered = {}
    for event in reading.events:
        if event.kind == "trigger":
            triggered[event.checkpoint] = event
        elif event.kind in ("trigger-task", "ack", "decline", "completed", "aligned", "barrier"):
            assert event.checkpoint in triggered, event
    assert all(event.checkpoint in triggered for event in by_kind(reading, "completed"))


def test_the_closing_source_declines_and_the_checkpoint_fails(reading):
    """FLIP-147 at work: a source that has ended its input declines ("task is closing")."""
    [decline] = by_kind(reading, "decline")
    assert decline.detail == "Checkpoint was declined (task is closing)"
    assert decline.checkpoint in {e.checkpoint for e in by_kind(reading, "failed")}
    assert decline.checkpoint not in {e.checkpoint for e in by_kind(reading, "completed")}


def test_barriers_name_their_input_channel(reading):
    barriers = by_kind(reading, "barrier")
    assert barriers and all(e.detail.startswith("gate ") and " channel " in e.detail for e in barriers)


def test_logs_may_come_in_any_order_and_in_pieces(tmp_path, reading):
    lines = RUN.read_text().splitlines(keepends=True)
    middle = next(n for n in range(len(lines) // 2, len(lines)) if lines[n][:2] == "20")
    first, second = tmp_path / "jobmanager.log", tmp_path / "taskmanager.log"
    first.write_text("".join(lines[:middle]))
    second.write_text("".join(lines[middle:]))
    merged = read_logs([str(second), str(first)])
    assert [(e.kind, e.checkpoint, e.task, e.detail) for e in merged.events] == \
        [(e.kind, e.checkpoint, e.task, e.detail) for e in reading.events]
    assert merged.entries == reading.entries


def test_a_missing_or_foreign_file_is_one_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read the log"):
        read_logs([str(tmp_path / "none.log")])
    foreign = tmp_path / "notes.txt"
    foreign.write_bytes(b"\x00\xff not a log\nat all\n")
    with pytest.raises(InputError, match="no Flink log entry") as raised:
        read_logs([str(foreign)])
    assert "\n" not in str(raised.value.message)


def test_an_unknown_message_of_a_known_logger_is_counted_not_guessed():
    text = "2026-11-25 00:29:14,840 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator [] - Something new 7."
    reading = parse_log(text)
    assert (reading.events, reading.entries, reading.unrecognised) == ([], 1, 1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(RUN.read_text().splitlines()[650:700]) | st.text(max_size=80), max_size=40))
def test_any_text_is_read_without_a_crash(lines):
    reading = parse_log("\n".join(lines))
    assert reading.entries >= len(reading.events) and reading.unrecognised == reading.entries - len(reading.events)


def test_the_conformance_page_lists_every_log_line_read():
    page = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text()
    assert [p.kind for p in PATTERNS
            if f"| `{p.kind}` | `{p.logger}` | {p.level} | {p.writer} | {p.releases()} |" not in page] == []


# Log excerpts in each release's format. The message formats are the string constants of the
# classes in each release's flink-dist jar (apache-flink-libraries 1.14.6 ... 2.2.0;
# scripts/flink-log-formats.sh), named per line below; times, ids and names are made up.
_TIME = "2021-05-01 10:00:0{},000"
_BANNER = (" Starting TaskManagerRunner (Version: {}, Scala: 2.12, Rev:2a4b1d3, Date:2022-09-10T16:06:00+02:00)")
_OLD_ID = "0c1d8e0b8bb5a8a6b3e9d0c6f25a4d21"
_NEW_ID = "53f40c4fb2082af3f1fa40d8fcb31fe1_df253d3619938b6301f2d568e16f802b_1_1"


def _log(*entries):
    return "\n".join(f"{_TIME.format(n)} {level:<5} org.apache.flink.{logger} [] - {message}"
                     for n, (level, logger, message) in enumerate(entries))


def _excerpt(version, attempt_id, confirm):
    return _log(
        # EnvironmentInformation.logEnvironmentInfo: " Starting " + name + " (Version: " + version + ", Scala: " ...
        ("INFO", "runtime.util.EnvironmentInformation", _BANNER.format(version)),
        # Execution.deploy: "Deploying {} (attempt #{}) with attempt id {} to {} with allocation id {}" (1.14;
        # 1.15+: "... with attempt id {} and vertex id {} to ...")
        ("INFO", "runtime.executiongraph.ExecutionGraph",
         f"Deploying Source: short (2/2) (attempt #1) with attempt id {attempt_id} to localhost with allocation id a1"),
        # Task.transitionState: "{} ({}) switched from {} to {}." (TaskInfo.getTaskNameWithSubtasks: "#<attempt>")
        ("INFO", "runtime.taskmanager.Task", f"Source: short (2/2)#1 ({attempt_id}) switched from DEPLOYING to INITIALIZING."),
        # Execution.transitionState: "{} ({}) switched from {} to {}." (ExecutionVertex "%s (%d/%d)": no attempt)
        ("INFO", "runtime.executiongraph.ExecutionGraph", f"Source: short (2/2) ({attempt_id}) switched from INITIALIZING to RUNNING."),
        # TaskExecutor.triggerCheckpoint: "Trigger checkpoint {}@{} for {}."
        ("DEBUG", "runtime.taskexecutor.TaskExecutor", f"Trigger checkpoint 3@1619863202000 for {attempt_id}."),
        # CheckpointCoordinator.receiveAcknowledgeMessage: "Received acknowledge message for checkpoint {} from task {} of job {} at {}."
        ("DEBUG", "runtime.checkpoint.CheckpointCoordinator",
         f"Received acknowledge message for checkpoint 3 from task {attempt_id} of job 7023 at b6db @ localhost."),
        # TaskExecutor.confirmCheckpoint: 1.14 "Confirm checkpoint {}@{} for {}.", 1.15+ "Confirm completed
        # checkpoint {}@{} and last subsumed checkpoint {} for {}."
        ("DEBUG", "runtime.taskexecutor.TaskExecutor", confirm.format(attempt_id)),
        # StreamTask.afterInvoke: "Finished task {}" (getName: the task name with subtasks)
        ("DEBUG", "streaming.runtime.tasks.StreamTask", "Finished task Source: short (2/2)#1"),
    )


_OLD_CONFIRM = "Confirm checkpoint 3@1619863202000 for {}."
_NEW_CONFIRM = "Confirm completed checkpoint 3@1619863202000 and last subsumed checkpoint 2 for {}."


@pytest.mark.parametrize("version, attempt_id, confirm, vertex", [
    ("1.14.6", _OLD_ID, _OLD_CONFIRM, None),          # ExecutionAttemptID: an AbstractID, 32 hex digits
    ("1.15.4", _OLD_ID, _NEW_CONFIRM, None),
    ("1.16.3", _NEW_ID, _NEW_CONFIRM, "df253d3619938b6301f2d568e16f802b"),   # "%s_%s_%d"
    ("1.17.2", _NEW_ID, _NEW_CONFIRM, "df253d3619938b6301f2d568e16f802b"),
    # 1.18.1 to 2.2.0: the same formats (2.0+ as string-concatenation recipes).
    ("2.2.0", _NEW_ID, _NEW_CONFIRM, "df253d3619938b6301f2d568e16f802b"),
])
def test_each_release_is_read_with_every_event_on_its_task(version, attempt_id, confirm, vertex):
    reading = parse_log(_excerpt(version, attempt_id, confirm))
    assert reading.release == version.rsplit(".", 1)[0]
    kinds = [e.kind for e in reading.events]
    expected = ["task-state", "execution-state", "trigger-task", "ack", "notify-complete", "task-ended"]
    assert kinds == (["deploy"] if attempt_id == _OLD_ID else []) + expected
    # Every line is on the second subtask's second attempt, whether its id says so (1.16+) or
    # only the lines naming the task do (the deploy and state switch lines).
    assert {e.identity for e in reading.events} == {TaskIdentity(vertex, "Source: short", 1, 1)}


def test_an_old_release_finds_its_vertex_by_the_plans_names(tmp_path):
    log = tmp_path / "tm.log"
    log.write_text(_excerpt("1.14.6", _OLD_ID, _OLD_CONFIRM))
    reading = read_logs([str(log)], vertex_names={"Source: short": "df25"})
    assert {e.identity for e in reading.events} == {TaskIdentity("df25", "Source: short", 1, 1)}


def test_a_release_reads_only_its_own_rows_and_no_banner_reads_every_row():
    old_confirm = _log(("DEBUG", "runtime.taskexecutor.TaskExecutor", _OLD_CONFIRM.format(_OLD_ID)))
    assert [e.kind for e in parse_log(old_confirm).events] == ["notify-complete"]      # no banner: every row
    assert parse_log(old_confirm, release="1.14").events[0].checkpoint == 3
    assert parse_log(old_confirm, release="1.17").events == []                         # 1.17 writes it otherwise
    new_state = _log(("INFO", "runtime.taskmanager.Task", f"map (1/2)#0 ({_NEW_ID}) switched from CREATED to DEPLOYING."))
    assert parse_log(new_state, release="1.15").events == []
    assert [e.kind for e in parse_log(new_state, release="2.3").events] == ["task-state"]


def test_the_release_comes_from_the_banner_and_is_checked():
    assert release_of(_log(("INFO", "runtime.util.EnvironmentInformation", _BANNER.format("1.20.1")))) == "1.20"
    assert release_of(RUN.read_text()) is None        # a MiniCluster prints no banner
    assert supported_release("2.3.0") == "2.3" and supported_release("1.19") == "1.19"
    assert RELEASES[0] == "1.14" and RELEASES[-1] == "2.3"
    for bad, problem in (("1.13.6", "not supported"), ("3.0.0", "not supported"), ("1.x", "not a Flink version")):
        with pytest.raises(ValueError, match=problem):
            supported_release(bad)


def _as_flink_1_14(text: str) -> str:
    """A 2.3 log as Flink 1.14 would write it: random 32-hex attempt ids, the 1.14 deploy and
    confirm lines, a banner."""
    ids = lambda m: hashlib.md5(m.group(0).encode()).hexdigest()  # noqa: E731
    text = re.sub(r"\b[0-9a-f]{32}_[0-9a-f]{32}_\d+_\d+\b", ids, text)
    text = re.sub(r"(with attempt id [0-9a-f]{32}) and vertex id \S+ to", r"\1 to", text)
    text = re.sub(r"Confirm completed checkpoint (\d+@\d+) and last subsumed checkpoint -?\d+ for", r"Confirm checkpoint \1 for", text)
    first = text[:23]
    return f"{first} INFO  org.apache.flink.runtime.util.EnvironmentInformation [] - {_BANNER.format('1.14.6')}\n" + text


@pytest.mark.parametrize("banner", [True, False])
def test_a_run_written_as_flink_1_14_would_is_validated_alike(tmp_path, banner):
    """The stored 2.3 run, rewritten into 1.14's formats: the same observations, the same verdict
    (the vertices come from the plan's names; the attempts from the deploy and state lines)."""
    from flipcheck.flink.conform import conform_files

    run = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "union-state"
    shutil.copytree(run, tmp_path / "run")
    text = _as_flink_1_14((run / "flink.log").read_text())
    (tmp_path / "run" / "flink.log").write_text(text if banner else text.split("\n", 1)[1])
    options = {} if banner else {"flink_version": "1.14.6"}
    old = conform_files(str(tmp_path / "run" / "plan.json"), [str(tmp_path / "run" / "flink.log")], **options)
    new = conform_files(str(run / "plan.json"), [str(run / "flink.log")])
    assert old.conforms and [o for o, _ in old.observations] == [o for o, _ in new.observations]
    assert old.verdict.states == new.verdict.states


@pytest.mark.parametrize("version", ["1.13.6", "banana"])
def test_a_bad_flink_version_is_one_line_and_exit_2(capsys, version):
    run = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "union-state"
    code = main(["conform", "--flink-version", version, "--plan", str(run / "plan.json"), str(run / "flink.log")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--flink-version" in err


def test_the_summary_names_the_release_read(capsys):
    run = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "union-state"
    assert main(["conform", "--flink-version", "2.3.0", "--plan", str(run / "plan.json"), str(run / "flink.log")]) == 0
    assert "(Flink 2.3 log formats)" in capsys.readouterr().out.splitlines()[0]
    main(["conform", "--plan", str(run / "plan.json"), str(run / "flink.log")])
    assert "log formats" not in capsys.readouterr().out     # a MiniCluster log: no banner


def test_a_log_reads_the_same_whichever_modules_a_program_imported_first():
    import subprocess
    import sys

    log = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "local-recovery-task" / "flink.log"
    count = ("import sys; from flipcheck.flink.logs import read_logs; "
             "r = read_logs([sys.argv[1]]); print(len(r.events), sorted({e.kind for e in r.events}))")
    alone = subprocess.run([sys.executable, "-c", count, str(log)], capture_output=True, text=True, check=True).stdout
    after_conform = subprocess.run([sys.executable, "-c", "import flipcheck.flink.conform; " + count, str(log)],
                                   capture_output=True, text=True, check=True).stdout
    assert alone == after_conform and "local-found" in alone


def test_before_1_20_an_unknown_task_line_is_the_tail_of_the_trigger_line_before_it():
    """Up to 1.19 TaskExecutor.triggerCheckpoint logs 'Trigger checkpoint <id>@' before it
    looks the task up, so an 'unknown task' line is the same RPC; from 1.20 on it is the RPC's only
    line (flip147 facts §4.3). A MiniCluster log has no banner: conform takes the release from
    the run directory's run.json."""
    from flipcheck.flink.conform import conform_files

    run = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "release-1.17.2-chain"
    log = str(run / "flink.log")
    unknown = lambda reading: [e for e in reading.events if e.kind == "trigger-unknown"]  # noqa: E731
    assert len(unknown(read_logs([log], "2.3"))) == 1
    assert unknown(read_logs([log], unbannered="1.17")) == []
    assert read_logs([log]).release is None
    result = conform_files(str(run / "plan.json"), [log])
    assert result.release == "1.17" and result.conforms

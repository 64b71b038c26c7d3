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
from flipcheck.flink.logs import KINDS, attempt_parts, parse_log, read_logs

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "flink_logs" / "join-two-sources-unchained.log"


@pytest.fixture(scope="module")
def reading():
    return read_logs([str(RUN)])


def by_kind(reading, kind):
    return [e for e in reading.events if e.kind == kind]


def test_every_kind_of_event_is_found_in_a_real_run(reading):
    assert {e.kind for e in reading.events} == set(KINDS)
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
    from flipcheck.flink.logs import PATTERNS

    page = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text()
    assert [p.kind for p in PATTERNS if f"| `{p.kind}` | `{p.logger}` | {p.level} | {p.writer} |" not in page] == []

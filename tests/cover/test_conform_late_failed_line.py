"""Divergence 29 (docs/conformance.md), found by the first guided campaign: a task's own FAILED
line written after lines stamped later than it. Validation reads a file in the order of writing,
but for that line (flipcheck.flink.logs._failures_at_their_time). No JVM: a stored run."""

from pathlib import Path

from compiled_build import patches_compiled

from flipcheck.flink import logs
from flipcheck.flink.conform import conform_files
from flipcheck.properties import protocol_trace_validation

RUN = Path(__file__).parents[1] / "fixtures" / "flink_runs" / "chain-task-failed-line-written-late"


def _conform():
    return conform_files(str(RUN / "plan.json"), [str(RUN / "flink.log")])


def test_the_failed_line_is_written_after_the_decline_it_caused_and_read_at_its_time(monkeypatch):
    lines = (RUN / "flink.log").read_text().splitlines()
    failed = next(n for n, line in enumerate(lines) if "switched from RUNNING to FAILED with failure cause" in line)
    declined = next(n for n, line in enumerate(lines) if "Decline checkpoint 1 by task" in line)
    assert declined < failed and lines[failed][:23] < lines[declined][:23]   # written later, stamped earlier
    result = _conform()
    assert result.conforms, result.first_unexplained
    # Read in the order of writing, the task's F0 may still come before its FAILED line (divergence
    # 40's reading, failed_line_follows): the run conforms either way, the failure first.
    monkeypatch.setattr(logs, "_failures_at_their_time", lambda events: list(events))
    result = _conform()
    assert result.conforms, result.first_unexplained
    assert [label for label in result.verdict.behaviour if label[0] in ("fail", "failover")] == [("fail", 0), ("failover",)]


@patches_compiled("flipcheck.properties.protocol_trace_validation", "failed_line_follows")
def test_with_neither_reading_the_decline_has_no_reason(monkeypatch):
    """In the order of writing, and with no failure before its FAILED line, the decline comes from
    a task still running: rejected, naming the rule."""
    lines = (RUN / "flink.log").read_text().splitlines()
    declined = next(n for n, line in enumerate(lines) if "Decline checkpoint 1 by task" in line)
    monkeypatch.setattr(logs, "_failures_at_their_time", lambda events: list(events))
    monkeypatch.setattr(protocol_trace_validation, "failed_line_follows", lambda *args: False)
    result = _conform()
    assert not result.conforms
    assert result.first_unexplained["line"] == declined + 1
    assert "C4/C5/J6" in result.first_unexplained["why"] and "no reason to decline checkpoint 1" in \
        result.first_unexplained["why"]


def test_only_a_tasks_own_failed_line_moves():
    events = logs.read_logs([str(RUN / "flink.log")]).events
    moved = [a for a, b in zip(events, events[1:]) if a.line > b.line]
    assert [(e.kind, e.detail.endswith("to FAILED")) for e in moved] == [("task-state", True)]

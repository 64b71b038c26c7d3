"""Divergence 46 (docs/conformance.md): a source fails at its first record while the job's other
tasks are still starting. The JobManager logs their switches to RUNNING after the TaskManager's
FAILED line and before it handles the failure (its own FAILED line). Validation took such a
RUNNING line for the restart, so the JobManager's FAILED line read as a second failure, which no
behaviour of the model explains: "the log ends, yet every behaviour found still owes ..."."""

from pathlib import Path

import pytest

from flipcheck.flink.conform import conform_files
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.model.protocol import Job
from flipcheck.properties.protocol_trace_validation import validate

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "diamond-at-least-once-source-fails-before-others-run"


@pytest.fixture(scope="module")
def result():
    return conform_files(str(RUN / "plan.json"), [str(RUN / "flink.log")])


def test_running_lines_before_the_jobmanager_handles_a_failure_do_not_end_it(result):
    log = (RUN / "flink.log").read_text().splitlines()
    failed_on_task, handled = 222, 358
    assert "Source: src (1/2)#0" in log[failed_on_task - 1] and "RUNNING to FAILED" in log[failed_on_task - 1]
    assert "ExecutionGraph" in log[handled - 1] and "RUNNING to FAILED" in log[handled - 1]
    # between the two, the JobManager still logs other tasks of the first attempt starting
    starting = [n for n in range(failed_on_task, handled - 1)
                if "ExecutionGraph" in log[n] and "INITIALIZING to RUNNING" in log[n]]
    assert starting, "the run no longer shows the race"
    lines = [(o, e.line) for o, e in result.observations]
    # one failure: its failover shown once (the TaskManager's line), handled at the JobManager's
    assert [line for o, line in lines if o == ("failover",)] == [failed_on_task]
    assert [line for o, line in lines if o == ("failover-known",)] == [handled]


def test_the_run_conforms(result):
    assert result.conforms, result.first_unexplained
    assert result.verdict.behaviour.count(("failover",)) == 1


def test_a_log_ending_with_a_failover_owed_says_so():
    """What the search said of divergence 46 before the reading was mended: one failure read as
    two. The nodes that owe no line still owe F1, whose FAILED line they read at the failure;
    the why names that step, not only the lines other nodes owe."""
    job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=0, failures=1,
              periodic_timer=True)
    verdict = validate(job, [("failover",), ("failover",)], failing={0: 0, 1: 0})
    assert not verdict.conforms
    assert verdict.why.startswith("the log ends, yet every behaviour found still owes ")
    assert "the step of a line read already: the failover (F1) of a failure whose FAILED line came first" in verdict.why

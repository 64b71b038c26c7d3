"""Coverage of the model by stored real runs (issue 26, item 2; docs/coverage.md): the behaviour
``conform`` found for a run, mapped through the abstraction, against the targets of the same job
at the small bound. No JVM: the runs are fixtures."""

from pathlib import Path

import pytest

from flipcheck.flink.conform import conform_files
from flipcheck.properties.protocol_abstraction import bounded_job, covered, coverage_of, run_coverage, targets

RUNS = Path(__file__).parents[1] / "fixtures" / "flink_runs"


def _conformed(name):
    run = RUNS / name
    result = conform_files(str(run / "plan.json"), [str(run / "flink.log")])
    assert result.conforms, result.first_unexplained
    return result


@pytest.fixture(scope="module")
def sink_v2_failover():
    # Sink V2 (writer + committer) after a source with one failover, Flink 1.20.2: two tasks.
    return _conformed("matrix-FLINK-25920-1.20.2")


def test_a_run_covers_targets_and_what_lies_beyond_the_bound_is_counted_apart(sink_v2_failover):
    job, behaviour = sink_v2_failover.job, sink_v2_failover.verdict.behaviour
    # the whole-job abstraction: the late steps are told apart by the other tasks' final checkpoints
    report = run_coverage(job, behaviour, abstraction="job")
    reached = covered(job, behaviour, abstraction="job")
    assert report.inside | report.outside_targets == reached and not report.inside & report.outside_targets
    assert report.inside <= report.targets and 0 < report.covered < len(report.targets)
    assert report.missing == report.targets - report.inside
    # Flink's timer triggers checkpoint 2 after the sink's final checkpoint is done; the bounded
    # timer (C3) only triggers on news, so those steps lie outside the targets, never inside;
    # this run's failover struck while checkpoint 2 was pending, so it is outside too.
    late = [t for t in reached if t.source.pending and t.source.completed
            and any(a.final == "done" for a in t.source.tasks)]
    assert late and all(t in report.outside_targets for t in late)
    assert [t.kind for t in late if t.kind == "failover"] == ["failover"]


def test_the_same_run_against_failure_free_targets_covers_no_failover(sink_v2_failover):
    job, behaviour = sink_v2_failover.job, sink_v2_failover.verdict.behaviour
    without = coverage_of(targets(bounded_job(job, failures=0)), covered(job, behaviour))
    with_one = run_coverage(job, behaviour)   # the task views (the default abstraction)
    assert not any(t.kind == "failover" for t in without.targets)
    assert any(t.kind == "failover" for t in without.outside_targets)
    # what follows the failover (failovers 1) is no failure-free target either
    assert without.covered < with_one.covered



def test_the_task_views_are_fewer_targets_and_a_larger_share_of_them_is_covered(sink_v2_failover):
    job, behaviour = sink_v2_failover.job, sink_v2_failover.verdict.behaviour
    whole = run_coverage(job, behaviour, abstraction="job")
    views = run_coverage(job, behaviour, abstraction="task")
    assert len(views.targets) < len(whole.targets)
    assert views.covered / len(views.targets) > whole.covered / len(whole.targets)
    assert {t.source.actor for t in views.reached} == {v.id for v in job.graph.vertices} | {"coordinator"}

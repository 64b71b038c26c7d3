"""Divergence 44 (docs/conformance.md): the JobManager logs its failover line when it handles a
task's failure and cancels the others, yet a cancelled source can still take its snapshot of the
pending checkpoint, and the coordinator still accepts its acknowledgement, until the restore aborts
that checkpoint (flip147 facts §4.6). The model's failover (F1) is one step, so validation reads
those lines as steps before it; and the search kept too few ways to find that order, and said
nothing of it. Its verdicts after a cut at the frontier's cap are now undecided."""

import json

from flipcheck.flink.conform import Tasks, model_job, read_logs, read_run_directory, vertex_names
from flipcheck.flink.observations import OBSERVERS, observations_of
from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph
from flipcheck.model.protocol import Job
from flipcheck.properties.protocol_trace_validation import validate

from conform_runs import RUNS

RUN = RUNS / "join-at-least-once-cancelled-sources-acknowledge-after-failover"


def _observed(run):
    plan = json.loads((run / "plan.json").read_text())
    reading = read_logs([str(run / "flink.log")], None, vertex_names(plan))
    _, job = model_job(plan, read_run_directory(run), failures=2)
    return observations_of(reading, Tasks(plan, job.graph, job))[0]


def test_a_cancelled_attempts_snapshot_lines_are_read_before_the_failover_line():
    """join[0] fails (line 874); the JobManager handles it (926) and cancels the sources; short[0]
    logs its snapshot of checkpoint 2 at 995, after its own CANCELING switch (993), and its
    acknowledgement follows (999). Read at 926, before F1, where the model takes that step."""
    assert all(OBSERVERS["protocol", kind].before_failover for kind in ("trigger-task", "barrier", "checkpoint-started"))
    assert not OBSERVERS["protocol", "ack"].before_failover and OBSERVERS["protocol", "ack"].until_restart
    observed = _observed(RUN)
    lines = [(o, e.line) for o, e in observed]
    known = next(n for n, (o, line) in enumerate(lines) if o == ("failover-known",) and line == 926)
    assert [line for o, line in lines[known - 2:known]] == [989, 995]         # logged after 926 ...
    assert [o[0] for o, line in lines[known - 2:known]] == ["snapshot", "snapshot"]   # ... read before it
    assert lines[known + 1:known + 3] == [(("ack", 0, 2), 999), (("ack", 2, 2), 1000)]
    log = (RUN / "flink.log").read_text().splitlines()
    assert "Source: short (1/2)#1" in log[992] and "RUNNING to CANCELING" in log[992]
    assert "Starting checkpoint 2" in log[994] and "Source: short (1/2)#1" in log[994]


def test_an_acknowledgement_after_the_failover_line_is_found_without_backtracking():
    """The sink fails, the JobManager handles it, the source's acknowledgement comes after: the
    lazy search (no backtrack) takes it before F1. Before, only the backtrack found that order,
    and in the real run above its 5,000 kept ways did not hold it."""
    job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=0, failures=1,
              periodic_timer=True)
    observations = [("trigger", 1), ("trigger-task", 0, 1), ("failover",), ("snapshot", 0, 1), ("failover-known",),
                    ("ack", 0, 1)]
    verdict = validate(job, observations, backtrack=0, failing={2: 1})
    assert verdict.conforms, verdict.why
    assert verdict.behaviour.index(("ack", 0, 1)) < verdict.behaviour.index(("failover",))


def test_a_verdict_after_the_frontier_was_cut_is_undecided_and_says_where():
    job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=0, failures=1,
              periodic_timer=True)
    observations = [("trigger", 1), ("trigger-task", 0, 1), ("failover",), ("snapshot", 0, 1), ("failover-known",),
                    ("ack", 0, 1), ("completed", 1)]   # F1 aborted 1: it cannot complete
    whole = validate(job, observations, failing={2: 1})
    assert not whole.conforms and not whole.exhausted_budget and whole.frontier_cut is None
    assert "undecided" not in whole.why
    cut = validate(job, observations, failing={2: 1}, max_frontier=1, where=lambda j: f"log:{j}")
    assert not cut.conforms and cut.exhausted_budget and cut.frontier_cut is not None
    assert f"the search kept 1 of the ways to explain log:{cut.frontier_cut} and dropped the rest" in cut.why
    assert "conform --frontier 4 keeps more" in cut.why

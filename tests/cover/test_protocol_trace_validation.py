"""Trace validation against the model's own behaviours: every behaviour the model can take, seen
through the lines a log would show, must validate; a variant's behaviour that the FLIP-147
model forbids, or a behaviour with a line taken out, must not."""

import random

import pytest
from hypothesis import given, settings, strategies as st

from flipcheck.generators.protocol import EXAMPLE_GRAPHS, example_graph
from flipcheck.model.barriers import MODES
from flipcheck.model.protocol import Job, initial_state
from flipcheck.properties.protocol_trace_validation import every_step, observe, validate
from flipcheck.reference_impl.protocol_variants import make_job


def _walk(job: Job, seed: int, max_steps: int = 400) -> list:
    """A seeded random behaviour of ``job`` to its end, as the observations a log shows: each
    step's own line, then its lagging lines (declines, completions, FINISHED, ...)."""
    rng = random.Random(seed)
    state, observations = initial_state(job), []
    for _ in range(max_steps):
        options = list(every_step(job, state))
        if not options:
            break
        label, nxt, notes = options[rng.randrange(len(options))]
        own, lagging, optional = observe(job, state, label, notes, nxt)
        observations += ([own] if own is not None else []) + list(lagging) + list(optional)
        state = nxt
    return observations


def _job(graph: str, mode: str, failures: int = 0, variant: str = "flip-147") -> Job:
    return make_job(example_graph(graph), variant, mode=mode, records=0, checkpoints=0, failures=failures,
                    periodic_timer=True)


@settings(max_examples=30, deadline=None)
@given(graph=st.sampled_from(sorted(EXAMPLE_GRAPHS)), mode=st.sampled_from(MODES), failures=st.integers(0, 1),
       seed=st.integers(0, 2**32))
def test_every_behaviour_of_the_model_validates(graph, mode, failures, seed):
    job = _job(graph, mode, failures)
    observations = _walk(job, seed)
    verdict = validate(job, observations)
    assert verdict.conforms, (verdict.first_unexplained, verdict.why)


def test_a_line_taken_out_of_a_behaviour_is_reported_where_it_is_missed():
    job = _job("pair", "aligned")
    observations = _walk(job, seed=3)
    acks = [i for i, o in enumerate(observations) if o[0] == "ack"]
    assert acks, "the walk acknowledged no checkpoint"
    dropped = observations[:acks[0]] + observations[acks[0] + 1:]
    verdict = validate(job, dropped)
    assert not verdict.conforms
    assert verdict.first_unexplained is not None and verdict.first_unexplained >= acks[0]
    assert verdict.why.startswith(("C5", "J", "C2", "C4"))


@pytest.mark.parametrize("variant", ["pre-flip-147", "cancel-pending-on-finish", "trigger-sources-only"])
def test_a_variants_behaviour_does_not_validate_against_flip_147(variant):
    """Each buggy variant shows in the lines: some seeded behaviour of it is not a FLIP-147
    behaviour, and the verdict names the rule it breaks."""
    correct = _job("join", "aligned")
    # pre-flip-147 and cancel-pending-on-finish finish a task without its final checkpoint (J7);
    # trigger-sources-only triggers a finished source, whose decline aborts a checkpoint (C5).
    rule = {"pre-flip-147": "J7", "cancel-pending-on-finish": "J7", "trigger-sources-only": "C5"}[variant]
    whys = []
    for seed in range(40):
        verdict = validate(correct, _walk(_job("join", "aligned", variant=variant), seed), budget=20_000)
        if not verdict.conforms:
            whys.append(verdict.why)
            if verdict.why.startswith(rule):
                break
    assert whys, f"no behaviour of {variant} was rejected"
    assert whys[-1].startswith(rule), whys[:3]


def test_a_behaviour_of_the_variant_validates_against_the_variant():
    job = _job("join", "aligned", variant="pre-flip-147")
    for seed in range(10):
        verdict = validate(job, _walk(job, seed))
        assert verdict.conforms, (seed, verdict.why)


def test_a_task_that_finishes_and_runs_on_is_unexplained_where_it_finishes():
    """Issue 24: the first unexplained observation is where the task finishes, not a later one
    that shows it still running; that later one is the verdict's evidence, named in the why."""
    from flipcheck.model.jobgraph import ALL_TO_ALL, JobGraph

    job = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=0,
              periodic_timer=True)
    run = [("trigger", 1), ("closing", 0), ("finished", 0), ("ended", 0), ("trigger-task", 0, 1), ("snapshot", 0, 1)]
    verdict = validate(job, run)
    assert (verdict.conforms, verdict.first_unexplained, verdict.evidence) == (False, 1, 3)
    assert verdict.why == "J7: src[0] does not finish here: it still ends its input later (observation 3)"
    assert validate(job, run, where=lambda j: f"log:{j + 10}").why.endswith("later (log:13)")


def test_the_why_of_a_trigger_rpc_that_is_next_does_not_say_another_comes_first():
    """Divergence 31: conform's why read "the trigger RPCs to source-short-df253d[1] arrive in
    order: 3 comes first" of checkpoint 3's own RPC. An RPC next on its way is not what rules a
    state out, and the why says so."""
    from flipcheck.properties.protocol_trace_validation import explain

    job = _job("pair", "aligned")
    state = initial_state(job)
    while not any(state.rpcs):   # the coordinator's trigger when it can, else the first step
        steps = list(every_step(job, state))
        state = next((nxt for label, nxt, _ in steps if label[0] == "trigger"), steps[0][1])
    t = next(u for u, queue in enumerate(state.rpcs) if queue)
    k = state.rpcs[t][0]
    why = explain(job, [state], ("trigger-task", t, k))
    assert "comes first" not in why and why.startswith(f"C4: checkpoint {k}'s trigger RPC is the next to reach")
    assert explain(job, [state], ("trigger-task", t, k + 1)).startswith("C2/C4: no trigger RPC of checkpoint")


def test_an_unexplained_failover_known_line_gets_a_why_not_a_traceback():
    """The JobManager's failover line is an observation with no task (``("failover-known",)``);
    explain() read a task from it and raised IndexError, so conform crashed instead of naming the
    line (found through the API with a tiny budget on splits-late-coordinator-snapshot)."""
    from flipcheck.properties.protocol_trace_validation import explain

    job = _job("pair", "aligned")
    why = explain(job, [initial_state(job)], ("failover-known",))
    assert why.startswith("F1: the coordinator learned of a failure")


def test_a_completion_notice_logged_for_a_failed_task_is_never_delivered():
    """TaskExecutor.confirmCheckpoint logs its line before it looks the task up, also for a task
    that failed (F0) and is not yet cancelled; the task ignores it ("Ignoring checkpoint COMPLETE
    notification for non-running task", flip147 facts §4.3, §4.10). That line explains itself,
    as for a finished task: before, every behaviour where the failure came first ended there,
    and a real run's search (join-failover-finish-before-restart) took 5 million states."""
    job = _job("pair", "aligned", failures=1)
    state, observations = initial_state(job), []

    def take(wanted) -> None:
        nonlocal state, observations
        label, nxt, notes = next(step for step in every_step(job, state) if wanted(step[0]))
        own, lagging, optional = observe(job, state, label, notes, nxt)
        observations += ([own] if own is not None else []) + list(lagging) + list(optional)
        state = nxt

    while state.coordinator.completed < 1:   # checkpoint 1 completes; its notices are on their way
        take(lambda label: label[0] not in ("fail", "failover", "notify", "end-of-data"))
    failed = len(observations)
    take(lambda label: label == ("fail", 0))   # F0: the source fails
    take(lambda label: label[0] == "trigger")  # checkpoint 2, declined by the failed source
    take(lambda label: label[0] == "rpc")
    assert observations[failed:] == [("failover",), ("trigger", 2), ("trigger-task", 0, 2), ("failed", 2),
                                     ("decline", 0, 2)]
    observations += [("notify", 1, 1), ("notify", 0, 1), ("failover-known",)]   # the source's notice last
    verdict = validate(job, observations, failing={failed: 0})
    assert verdict.conforms, verdict.why
    assert ("fail", 0) in verdict.behaviour and ("notify", 0, 1) not in verdict.behaviour
    # The line of the failure names the task: the sink's failure does not explain the decline.
    assert not validate(job, observations, failing={failed: 1}).conforms

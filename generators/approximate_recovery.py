"""Cases for approximate task-local recovery, for hypothesis and for seeded sweeps.

Every generator is written once against :class:`~.choices.Chooser`, so hypothesis (which
shrinks) and ``SeededChooser.for_case(seed, i)`` (whose case ids regenerate their case) drive
the same code. Four kinds of case, one per part of the model; each is a plain immutable value
that any variant can be checked on:

* :class:`FailoverCase` — a random topology (:func:`~.job_graphs.generate_topology`), failed
  tasks (sinks only a quarter of the time) and, sometimes, a partition lost to a
  PartitionException;
* :class:`SubpartitionCase` — a valid event sequence for one subpartition: the environment of
  the model (record lengths fuzzed across buffer boundaries, barriers, attempts connecting late
  as zombies, views released or not, polls by the live view);
* :class:`BarrierCase` — a :class:`~flipcheck.model.approximate_recovery.BarrierScenario` and a
  schedule (each number picks one of the steps enabled then, so any variant can replay it);
* :class:`DataflowCase` — a small topology, records per source, a schedule up to the failure,
  the failed task and whether its inputs' head records were half read.

:data:`COMPONENT_SEQUENCES` are named subpartition sequences, one or two per rule S1-S6 and the
writer's W, that ``flipcheck flink component approximate-recovery`` feeds to the model, the
reference engine and Flink's own ``PipelinedApproximateSubpartition`` alike
(:mod:`~flipcheck.properties.approximate_recovery_trace_validation`).

:func:`generate_case` picks a kind. :func:`subpartition_machine` is the stateful hypothesis
machine (engine next to the model, every property as an invariant).

Example
-------
>>> from flipcheck.generators.choices import SeededChooser
>>> case = generate_case(SeededChooser.for_case("doc", 3))
>>> case == generate_case(SeededChooser.for_case("doc", 3))
True
>>> case.kind in KINDS
True
"""

from __future__ import annotations

import re
from typing import NamedTuple

from flipcheck.model import approximate_recovery as spec
from flipcheck.model.jobgraph import JobGraph
from flipcheck.properties.approximate_recovery_explore import SubpartitionBounds, env_after, ExploreEnv, subpartition_events
from flipcheck.properties import approximate_recovery_properties as props

from .choices import Chooser, HypothesisChooser, SeededChooser, choice
from .job_graphs import generate_topology

__all__ = [
    "KINDS", "FailoverCase", "SubpartitionCase", "BarrierCase", "DataflowCase",
    "generate_failover", "generate_subpartition", "generate_barrier", "generate_dataflow", "generate_case",
    "failure_state", "cases", "subpartition_machine", "QUICK",
    "ComponentSequence", "COMPONENT_SEQUENCES", "generated_sequence", "component_sequences", "sequence_named",
]

KINDS = ("failover", "subpartition", "barriers", "dataflow")


class FailoverCase(NamedTuple):
    graph: JobGraph
    failed: frozenset
    unavailable: frozenset
    kind: str = "failover"


class SubpartitionCase(NamedTuple):
    capacity: int
    events: tuple
    kind: str = "subpartition"


class BarrierCase(NamedTuple):
    scenario: spec.BarrierScenario
    schedule: tuple
    kind: str = "barriers"


class DataflowCase(NamedTuple):
    graph: JobGraph
    records: int
    schedule: tuple
    failed: int
    half_read: bool
    kind: str = "dataflow"


def generate_failover(chooser: Chooser, max_vertices: int = 5, max_parallelism: int = 3) -> FailoverCase:
    graph = generate_topology(chooser, max_vertices=max_vertices, max_parallelism=max_parallelism)
    tasks = list(graph.tasks())
    sinks = [t for t in tasks if spec.is_sink(graph, t)]
    pool = sinks if chooser.boolean(0.25) else tasks
    failed = {choice(chooser, pool)}
    while chooser.boolean(0.2):
        failed.add(choice(chooser, pool))
    unavailable = frozenset({choice(chooser, tasks)}) if chooser.boolean(0.2) else frozenset()
    return FailoverCase(graph, frozenset(failed), unavailable)


def generate_subpartition(chooser: Chooser, max_steps: int = 24) -> SubpartitionCase:
    """Events the model's environment allows, one at a time (lengths up to three buffers)."""
    capacity = chooser.integer(1, 4)
    bounds = SubpartitionBounds(capacity, max_records=6, lengths=tuple(range(1, 3 * capacity + 2)), attempts=3,
                                max_events=2)
    model, history, env, events = spec.initial_subpartition(capacity), props.History(), ExploreEnv(), []
    for _ in range(chooser.integer(1, max_steps)):
        options = subpartition_events(bounds, env, history, model.view)
        if not options:
            break
        event = choice(chooser, options)
        model, outputs = spec.subpartition_step(model, event)
        history, env = props.observe(history, event, outputs), env_after(env, event)
        events.append(event)
    return SubpartitionCase(capacity, tuple(events))


def generate_barrier(chooser: Chooser, max_channels: int = 3, max_id: int = 3) -> BarrierCase:
    channels = chooser.integer(1, max_channels)
    triggered = chooser.integer(0, max_id)
    restored = chooser.integer(0, triggered)
    consumed = tuple(chooser.integer(0, triggered) for _ in range(channels))
    scenario = spec.BarrierScenario(channels, triggered, restored, consumed, new_checkpoints=chooser.integer(1, 3))
    schedule = tuple(chooser.integer(0, 7) for _ in range(chooser.integer(0, 16)))
    return BarrierCase(scenario, schedule)


def generate_dataflow(chooser: Chooser, max_vertices: int = 4, max_parallelism: int = 2) -> DataflowCase:
    graph = generate_topology(chooser, max_vertices=max_vertices, max_parallelism=max_parallelism, edge_probability=0.6)
    records = chooser.integer(1, 3)
    schedule = tuple(chooser.integer(0, 15) for _ in range(chooser.integer(0, 30)))
    return DataflowCase(graph, records, schedule, chooser.integer(0, graph.num_tasks - 1), chooser.boolean(0.3))


def failure_state(case: DataflowCase) -> tuple[spec.Dataflow, spec.Flow, frozenset, frozenset]:
    """Replay the schedule (each number picks an enabled step) up to the failure: the flow, its
    state, the failed task, and the half-read channels into it."""
    flow = spec.Dataflow(case.graph, case.records)
    state = spec.initial_flow(flow)
    for pick in case.schedule:
        actions = spec.flow_actions(flow, state)
        if not actions:
            break
        state = spec.flow_step(flow, state, actions[pick % len(actions)])
    partial = frozenset(c for c in flow.inputs[case.failed]
                        if case.half_read and state.channels[c] and state.channels[c][0] != spec.BARRIER_ITEM)
    return flow, state, frozenset({case.failed}), partial


class ComponentSequence(NamedTuple):
    """A named event sequence for one subpartition (the model's events, :mod:`..model.approximate_recovery`
    part 2): ``rules`` are the model's rules it exercises, ``shows`` what a reader should see."""

    name: str
    capacity: int
    events: tuple
    rules: tuple
    shows: str


def _sequence(name: str, capacity: int, rules: str, shows: str, *events) -> ComponentSequence:
    return ComponentSequence(name, capacity, tuple(events), tuple(rules.split()), shows)


E, B, C, R, P, U = spec.emit, spec.barrier_event, spec.connect, spec.release_view, spec.poll, spec.resume

# Every sequence stays inside the consumer's contract as Flink's network stack keeps it: only the
# live view polls, a view resumes only after its own aligned barrier, nothing is written after
# the partition is released. Streams stay under 256 bytes (the harness writes offsets as bytes).
COMPONENT_SEQUENCES: tuple[ComponentSequence, ...] = (
    _sequence("record-spanning-buffers", 2, "W S6",
              "a record of 5 bytes fills three buffers of 2; the next record completes the third",
              E(5), E(1), C(0), P(0), P(0), P(0), P(0)),
    _sequence("reconnect-mid-record", 4, "S1 S4 S5",
              "the old reader took bytes 0..4 of a 6-byte record; the new one starts at the next record",
              E(6), C(0), P(0), R(0), E(2), C(1), P(1), P(1)),
    _sequence("reconnect-mid-long-record", 2, "S4 W",
              "the rest of a 7-byte record fills two whole buffers and part of a third: all of it is skipped",
              E(7), E(2), C(0), P(0), R(0), C(1), P(1), P(1), P(1)),
    _sequence("reconnect-at-record-boundary", 4, "S4",
              "the old reader ended on a record boundary: nothing is dropped",
              E(2), E(2), C(0), P(0), R(0), E(3), C(1), P(1), P(1)),
    _sequence("first-view-cleans-nothing", 2, "S4 S5",
              "the first view of a subpartition reads from byte 0 (only a reconnect cleans)",
              E(3), E(1), C(0), P(0), P(0), P(0)),
    _sequence("newer-attempt-replaces-view", 2, "S1 S3",
              "a newer attempt's request releases the live view, not the partition; the old view reads nothing",
              C(0), E(1), C(1), P(0), P(1), P(1)),
    _sequence("sequence-numbers-restart", 2, "S5 S6",
              "each view numbers its buffers from 0",
              E(2), E(2), C(0), P(0), P(0), C(1), E(2), P(1), P(1)),
    _sequence("aligned-barrier-blocks-until-resume", 4, "S6",
              "an aligned barrier blocks the subpartition until its reader resumes",
              E(1), B(True), E(1), C(0), P(0), P(0), P(0), U(0), P(0)),
    _sequence("at-least-once-barrier-does-not-block", 4, "S6",
              "an at-least-once barrier is delivered and blocks nothing",
              E(1), B(False), E(1), C(0), P(0), P(0), P(0), P(0)),
    _sequence("reconnect-unblocks", 4, "S5 S6",
              "the old reader was aligning (blocked by its barrier) when it failed: the new view is not blocked",
              E(1), B(True), E(2), C(0), P(0), P(0), P(0), R(0), C(1), P(1), P(1)),
    _sequence("reconnect-before-queued-barrier", 2, "S4 S6",
              "the partial record before a queued barrier is dropped; the barrier reaches the new reader first",
              E(3), B(True), E(1), C(0), P(0), R(0), C(1), P(1), P(1), U(1), P(1)),
    _sequence("zombie-connects-late", 2, "S1 S2",
              "an older attempt's request arrives after the newer attempt's view exists",
              E(3), C(1), C(0), P(1), P(0), P(1)),
    _sequence("release-partition", 2, "S3",
              "releasing a view keeps the partition; releasing the partition releases the view and refuses new ones",
              C(0), E(2), R(0), C(1), P(1), spec.release_partition(), C(2), P(1)),
)
del E, B, C, R, P, U
_GENERATED = re.compile(r"generated-([0-9]{1,18})-([0-9]{1,9})")


def generated_sequence(seed: int, index: int) -> ComponentSequence:
    """The ``index``-th sequence of ``seed``, drawn as :func:`generate_subpartition` draws (the
    environment of the model: zombies, releases, polls by the live view), named so that
    :func:`sequence_named` regenerates it."""
    case = generate_subpartition(SeededChooser.for_case(f"component-{seed}", index))
    return ComponentSequence(f"generated-{seed}-{index}", case.capacity, case.events, (), "a generated sequence")


def component_sequences(cases: int = 0, seed: int = 0) -> list[ComponentSequence]:
    """:data:`COMPONENT_SEQUENCES`, then ``cases`` generated ones of ``seed``."""
    return list(COMPONENT_SEQUENCES) + [generated_sequence(seed, i) for i in range(cases)]


def sequence_named(name: str) -> ComponentSequence | None:
    """The named sequence, or the generated one a ``generated-SEED-INDEX`` name stands for; None otherwise."""
    for sequence in COMPONENT_SEQUENCES:
        if sequence.name == name:
            return sequence
    found = _GENERATED.fullmatch(name)
    return generated_sequence(int(found.group(1)), int(found.group(2))) if found else None


_GENERATORS = {"failover": generate_failover, "subpartition": generate_subpartition,
               "barriers": generate_barrier, "dataflow": generate_dataflow}


def generate_case(chooser: Chooser, kind: str | None = None):
    """A case of ``kind`` (one of :data:`KINDS`), or of a kind the chooser picks."""
    return _GENERATORS[kind if kind is not None else choice(chooser, KINDS)](chooser)


def cases(kind: str | None = None):
    """Hypothesis strategy for cases (see :func:`generate_case`)."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: generate_case(HypothesisChooser(draw), kind))()


# ------------------------------------------------------------------------------------------------
# The stateful machine


def _settings():
    from hypothesis import HealthCheck, Phase, settings

    return settings(max_examples=300, stateful_step_count=30, deadline=None, database=None, derandomize=True,
                    report_multiple_bugs=False, phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


QUICK = _settings()


def subpartition_machine(variant: str = "flip135", refinement: bool = True):
    """A ``RuleBasedStateMachine`` driving one subpartition of ``variant`` and the model with
    valid events; invariants: every subpartition property and (``refinement``) equal outputs."""
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

    from flipcheck.reference_impl.approximate_recovery_variants import engine as make_engine

    class SubpartitionMachine(RuleBasedStateMachine):
        @initialize(capacity=st.integers(1, 4))
        def setup(self, capacity):
            self.capacity = capacity
            self.bounds = SubpartitionBounds(capacity, 6, tuple(range(1, 3 * capacity + 2)), 3, 2)
            self.model = spec.initial_subpartition(capacity)
            self.harness = make_engine(variant).subpartition_harness(capacity)
            self.history, self.env, self.trace, self.problems = props.History(), ExploreEnv(), [], []

        def options(self, kind: str) -> list:
            if not hasattr(self, "model"):
                return []
            return [e for e in subpartition_events(self.bounds, self.env, self.history, self.harness.live_view())
                    if e[0] == kind]

        def feed(self, data, kind: str) -> None:
            event = data.draw(st.sampled_from(self.options(kind)))
            outputs = self.harness.process(event)
            self.trace.append(event)
            if refinement:
                self.model, expected = spec.subpartition_step(self.model, event)
                assert outputs == expected, f"refines_spec: after {self.trace}: engine {outputs}, model {expected}"
            after = props.observe(self.history, event, outputs)
            for check in props.SUBPARTITION_STEP_CHECKS:
                message = check(self.history, event, outputs, after)
                assert message is None, f"{check.__name__}: after {self.trace}: {message}"
            self.history, self.env = after, env_after(self.env, event)

        @precondition(lambda self: hasattr(self, "model") and not subpartition_events(
            self.bounds, self.env, self.history, self.harness.live_view()))
        @rule()
        def idle(self):
            """Every bound is used up and no view is live: nothing can happen any more."""

        @precondition(lambda self: self.options("emit"))
        @rule(data=st.data())
        def emit(self, data):
            self.feed(data, "emit")

        @precondition(lambda self: self.options("barrier"))
        @rule(data=st.data())
        def barrier(self, data):
            self.feed(data, "barrier")

        @precondition(lambda self: self.options("connect"))
        @rule(data=st.data())
        def connect(self, data):
            self.feed(data, "connect")

        @precondition(lambda self: self.options("release_view"))
        @rule(data=st.data())
        def release_view(self, data):
            self.feed(data, "release_view")

        @precondition(lambda self: self.options("poll"))
        @rule(data=st.data())
        def poll(self, data):
            self.feed(data, "poll")

        @precondition(lambda self: self.options("resume"))
        @rule(data=st.data())
        def resume(self, data):
            self.feed(data, "resume")

        # The JM releases the partition at the end (consumption finished, job exit) or on a
        # producer failure; late in a run, so that most runs exercise reconnects first.
        @precondition(lambda self: self.options("release_partition") and len(self.trace) >= 12)
        @rule(data=st.data())
        def release_partition(self, data):
            self.feed(data, "release_partition")

        @invariant()
        def one_view_at_most(self):
            if hasattr(self, "harness"):
                assert len(self.harness.live_views()) <= 1, f"at_most_one_view: after {self.trace}"

    SubpartitionMachine.__name__ = SubpartitionMachine.__qualname__ = f"SubpartitionMachine[{variant}]"
    return SubpartitionMachine

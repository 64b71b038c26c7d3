"""Runs of batch job recovery (FLIP-383): small DAGs and schedules of steps, flushes and crashes.

A *case* is a :class:`~flipcheck.model.batch_recovery.Config` (a DAG from
:func:`flipcheck.generators.job_graphs.generate_topology`, splits, failure budgets) and a
sequence of actions the specification enables one after another — so every case is a run the
environment can produce, with JM crashes at random points. :func:`generate_case` is written once
against a :class:`~flipcheck.generators.choices.Chooser`; :func:`cases` is the hypothesis
strategy over it; :func:`batch_machine` is the stateful hypothesis test (implementation next to
the specification, every property after every step).

Random cases use at most one JM crash: with two, the specification itself (Flink's replay rule)
can lose or duplicate splits — a finding pinned in ``tests/manifests/batch_recovery.json`` and
explained in ``docs/batch-recovery.md``.

Example
-------
>>> from flipcheck.generators.choices import SeededChooser
>>> config, actions = generate_case(SeededChooser.for_case("doc", 3))
>>> (config, actions) == generate_case(SeededChooser.for_case("doc", 3))
True
>>> from flipcheck.model.batch_recovery import run
>>> _ = run(config, actions)        # every action was enabled in turn
"""

from __future__ import annotations

from flipcheck.model.batch_recovery import SYSTEM, Config, initial_state
from flipcheck.properties.batch_recovery_properties import check_step
from flipcheck.properties.refinement import refining_act

from .actions import calm_choice, random_walk
from .choices import Chooser, HypothesisChooser
from .job_graphs import generate_topology

__all__ = ["generate_config", "generate_actions", "generate_case", "choose_action", "cases", "batch_machine", "MAX_STEPS"]

MAX_STEPS = 40
_DISRUPTIVE = ("crash", "lose", "fail_recovery", "reconcile", "elapse")


def generate_config(chooser: Chooser) -> Config:
    """1-3 job vertices of parallelism 1-2, 1-2 splits per source, at most one crash, partition
    loss and failed recovery; min-pause on or off."""
    graph = generate_topology(chooser, max_vertices=3, max_parallelism=2, edge_probability=0.7)
    return Config(graph, splits=chooser.integer(1, 2), crashes=chooser.integer(0, 1), losses=chooser.integer(0, 1),
                  recovery_failures=chooser.integer(0, 1), min_pause=not chooser.boolean(0.2))


def choose_action(chooser: Chooser, options: list) -> tuple:
    """One of ``options``; failures (and ending the partition wait) less often than progress."""
    return calm_choice(chooser, options, _DISRUPTIVE, 0.25)


def generate_actions(chooser: Chooser, config: Config, max_steps: int = MAX_STEPS) -> tuple:
    return random_walk(chooser, SYSTEM, config, max_steps, choose_action)


def generate_case(chooser: Chooser, max_steps: int = MAX_STEPS) -> tuple:
    config = generate_config(chooser)
    return config, generate_actions(chooser, config, max_steps)


def cases(max_steps: int = MAX_STEPS):
    """Hypothesis strategy for ``(config, actions)``."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: generate_case(HypothesisChooser(draw), max_steps))()


def batch_machine(variant: str = "flink", refinement: bool = True):
    """A ``RuleBasedStateMachine`` running ``variant`` next to the specification; assertion
    messages start with the property's name."""
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

    from flipcheck.reference_impl.batch_recovery_variants import make_job

    class BatchMachine(RuleBasedStateMachine):
        @initialize(data=st.data())
        def setup(self, data):
            self.config = generate_config(HypothesisChooser(data.draw))
            self.spec = initial_state(self.config)
            self.job = make_job(self.config, variant)
            self.trace: list = []

        @precondition(lambda self: hasattr(self, "config") and bool(self.job.enabled()))
        @rule(data=st.data())
        def act(self, data):
            choose = lambda actions: choose_action(HypothesisChooser(data.draw), actions)  # noqa: E731
            action, before, after, self.spec = refining_act(SYSTEM, self.config, self.spec, self.job, choose,
                                                            self.trace, refinement)
            found = check_step(self.config, action, before, after)
            assert not found, f"{found[0].property}: after {self.trace}: {found[0].message}"

        @precondition(lambda self: hasattr(self, "config") and not self.job.enabled())
        @rule()
        def idle(self):
            """Nothing can happen any more: the job must be done."""
            assert self.job.view().phase == "done", f"job_completes: after {self.trace}"

    BatchMachine.__name__ = BatchMachine.__qualname__ = f"BatchMachine[{variant}]"
    return BatchMachine

"""Runs of FLIP-27 split assignment: configurations and action sequences, seeded or by hypothesis.

A *case* is a :class:`~flipcheck.model.split_assignment.Config` and a sequence of actions that
the specification enables one after another (so every case is a run the environment can
produce). :func:`generate_case` is written once against a
:class:`~flipcheck.generators.choices.Chooser`; :func:`cases` is the hypothesis strategy over
it and ``SeededChooser.for_case(seed, i)`` drives it for sweeps. :func:`split_machine` is the
stateful hypothesis test: Flink's implementation (or a variant) next to the specification,
every property asserted after every step.

Example
-------
>>> from flipcheck.generators.choices import SeededChooser
>>> config, actions = generate_case(SeededChooser.for_case("doc", 3))
>>> (config, actions) == generate_case(SeededChooser.for_case("doc", 3))
True
>>> from flipcheck.model.split_assignment import run
>>> _ = run(config, actions)        # every action was enabled in turn
"""

from __future__ import annotations

from flipcheck.model.split_assignment import DESIGNS, SYSTEM, Config, initial_state
from flipcheck.properties.refinement import refining_act
from flipcheck.properties.split_assignment_properties import advance, check_step, start

from .actions import calm_choice, random_walk
from .choices import Chooser, HypothesisChooser

__all__ = ["generate_config", "generate_actions", "generate_case", "choose_action", "cases", "split_machine", "quick_settings", "MAX_STEPS"]

MAX_STEPS = 40


def generate_config(chooser: Chooser, design: str | None = None) -> Config:
    """1-3 readers, 1-4 splits, 1-3 checkpoints, 0-2 failures; Flink's design unless asked."""
    return Config(
        readers=chooser.integer(1, 3),
        splits=chooser.integer(1, 4),
        checkpoints=chooser.integer(1, 3),
        failures=chooser.integer(0, 2),
        design=design if design is not None else DESIGNS[0],
    )


def generate_actions(chooser: Chooser, config: Config, max_steps: int = MAX_STEPS) -> tuple:
    """Up to ``max_steps`` actions, each enabled in the specification after the previous ones.
    Failures are chosen less often than the protocol's own steps, so that runs get far."""
    return random_walk(chooser, SYSTEM, config, chooser.integer(1, max_steps), choose_action)


_DISRUPTIVE = ("fail", "lose", "global", "expire", "notify")


def choose_action(chooser: Chooser, options: list) -> tuple:
    """One of ``options``: failures, expiries and notifications less often than the protocol's
    own steps (a notification early hides the bugs of the window before it)."""
    return calm_choice(chooser, options, _DISRUPTIVE, 0.2)


def generate_case(chooser: Chooser, design: str | None = None, max_steps: int = MAX_STEPS) -> tuple:
    config = generate_config(chooser, design)
    return config, generate_actions(chooser, config, max_steps)


def cases(design: str | None = None, max_steps: int = MAX_STEPS):
    """Hypothesis strategy for ``(config, actions)``."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: generate_case(HypothesisChooser(draw), design, max_steps))()


def quick_settings(max_examples: int = 150):
    """Derandomised settings for the machine: no example database, no "explain" phase."""
    from hypothesis import HealthCheck, Phase, settings

    return settings(max_examples=max_examples, stateful_step_count=MAX_STEPS, deadline=None, database=None,
                    derandomize=True, report_multiple_bugs=False,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def split_machine(variant: str = "flink", refinement: bool = True):
    """A ``RuleBasedStateMachine`` class running ``variant`` next to the specification.

    One rule draws one enabled action; the machine asserts that the implementation enables the
    same actions and shows the same view as the model (``refines_model``) and every property of
    :mod:`flipcheck.properties.split_assignment_properties` after every step. Assertion messages
    start with the property's name.
    """
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

    from flipcheck.reference_impl.split_assignment_variants import make_job

    class SplitMachine(RuleBasedStateMachine):
        @initialize(data=st.data())
        def setup(self, data):
            self.config = generate_config(HypothesisChooser(data.draw))
            self.spec = initial_state(self.config)
            self.job = make_job(self.config, variant)
            self.history = start(self.config)
            self.trace: list = []
            found = check_step(self.history, None, None, self.job.view())
            assert not found, f"{found[0]}"

        @precondition(lambda self: hasattr(self, "config") and bool(self.job.enabled()))
        @rule(data=st.data())
        def act(self, data):
            choose = lambda actions: choose_action(HypothesisChooser(data.draw), actions)  # noqa: E731
            action, before, after, self.spec = refining_act(SYSTEM, self.config, self.spec, self.job, choose,
                                                            self.trace, refinement)
            found = check_step(self.history, action, before, after)
            assert not found, f"{found[0].property}: {self.config} after {self.trace}: {found[0].message}"
            self.history = advance(self.history, action, before, after)

        @precondition(lambda self: hasattr(self, "config") and not self.job.enabled())
        @rule()
        def idle(self):
            """Nothing can happen any more."""

        @invariant()
        def still_a_partition(self):
            if hasattr(self, "config"):
                found = check_step(self.history, ("invariant",), self.job.view(), self.job.view())
                assert not found, f"{found[0].property}: {self.config} after {self.trace}: {found[0].message}"

    SplitMachine.__name__ = SplitMachine.__qualname__ = f"SplitMachine[{variant}]"
    return SplitMachine

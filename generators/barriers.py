"""Stateful hypothesis testing of a task's barrier handling: model and implementation side by side.

:func:`barrier_machine` builds a ``RuleBasedStateMachine`` for one mode. Its rules produce only
valid channel behaviour (one rule per event kind, each choosing among the events the
environment allows next: FIFO channels, increasing ids, nothing after EndOfPartition, nothing on
a blocked channel; see :mod:`flipcheck.model.channel_env`) and feed every event to the model and
to the implementation. After every step it checks that both produced the same outputs and view
(refinement) and that every property monitor of :mod:`flipcheck.properties.barriers_properties`
still holds on the implementation's trace.

Example
-------
>>> from hypothesis.stateful import run_state_machine_as_test
>>> run_state_machine_as_test(barrier_machine("aligned"), settings=QUICK)
>>> import pytest
>>> with pytest.raises(AssertionError, match="end_of_partition_alignment|refines_model"):
...     run_state_machine_as_test(barrier_machine("aligned", "eop-not-aligned"), settings=QUICK)
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from flipcheck.model.barriers import (
    ANNOUNCE, BARRIER, CANCEL, DATA, END, RPC, TIMEOUT, Config, initial_state, step, view,
)
from flipcheck.model.channel_env import apply, candidates, enabled, initial_env
from flipcheck.properties.barriers_explore import expected_skips, monitors_for
from flipcheck.properties.barriers_properties import initial_view
from flipcheck.reference_impl.barriers import make_task

from .channel_events import choose_event, configs

__all__ = ["barrier_machine", "MAX_ID", "QUICK"]

MAX_ID = 4

# Derandomised, no example database, and no "explain" phase (which replays a failing case
# hundreds of times and dominates the run time of a caught variant).
QUICK = settings(max_examples=200, stateful_step_count=30, deadline=None, database=None, derandomize=True,
                 report_multiple_bugs=False,
                 phases=[Phase.explicit, Phase.generate, Phase.shrink],
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def barrier_machine(mode: str, handler: str = "flink", config: Config | None = None,
                    refinement: bool = True) -> type[RuleBasedStateMachine]:
    """A state machine class for ``mode`` (random configurations of it, or exactly ``config``)
    checking ``handler`` against the model (``refinement``) and the properties."""
    config_strategy = st.just(config) if config is not None else configs(mode)

    class BarrierMachine(RuleBasedStateMachine):
        @initialize(cfg=config_strategy)
        def setup(self, cfg: Config):
            self.config = cfg
            self.events = candidates(cfg, MAX_ID)
            self.spec = initial_state(cfg)
            self.task = make_task(cfg, handler)
            self.env = initial_env(cfg)
            self.monitors = monitors_for(cfg, expected_skips(cfg, None))
            self.mstates = [m.start(cfg) for m in self.monitors]
            self.view = initial_view(cfg)
            self.trace: list = []
            self.valid: list | None = None

        def options(self, kind: str) -> list:
            if not hasattr(self, "config"):
                return []
            if self.valid is None:  # once per step, not once per rule precondition
                self.valid = enabled(self.config, self.env, self.task.view().blocked, MAX_ID, self.events)
            return [e for e in self.valid if e[0] == kind]

        def feed(self, data, kind: str) -> None:
            event = choose_event(self.options(kind), lambda options: data.draw(st.sampled_from(options)), kind)
            self.trace.append(event)
            outputs = self.task.process(event)
            after = self.task.view()
            if refinement:
                self.spec, expected = step(self.config, self.spec, event)
                assert outputs == expected, (f"refines_model: {self.config} after {self.trace}: implementation "
                                             f"{list(outputs)}, model {list(expected)}")
            for i, mon in enumerate(self.monitors):
                self.mstates[i], message = mon.step(self.config, self.mstates[i], event, outputs, self.view, after)
                assert message is None, f"{mon.name}: {self.config} after {self.trace}: {message}"
            self.env = apply(self.env, event)
            self.view = after
            self.valid = None

        @precondition(lambda self: hasattr(self, "config") and not self.valid_now())
        @rule()
        def idle(self):
            """Nothing can happen any more (every channel ended, every id used)."""

        def valid_now(self) -> list:
            self.options(BARRIER)
            return [e for e in self.valid if e[0] != TIMEOUT]

        @precondition(lambda self: self.options(BARRIER))
        @rule(data=st.data())
        def barrier(self, data):
            self.feed(data, BARRIER)

        @precondition(lambda self: self.options(DATA))
        @rule(data=st.data())
        def record(self, data):
            self.feed(data, DATA)

        @precondition(lambda self: self.options(END))
        @rule(data=st.data())
        def end_of_partition(self, data):
            self.feed(data, END)

        @precondition(lambda self: self.options(CANCEL))
        @rule(data=st.data())
        def cancellation(self, data):
            self.feed(data, CANCEL)

        @precondition(lambda self: self.options(RPC))
        @rule(data=st.data())
        def rpc_trigger(self, data):
            self.feed(data, RPC)

        # The timer only matters while a checkpoint is pending (elsewhere it is a no-op).
        @precondition(lambda self: self.options(TIMEOUT) and self.view.pending is not None)
        @rule(data=st.data())
        def alignment_timeout(self, data):
            self.feed(data, TIMEOUT)

        @precondition(lambda self: self.options(ANNOUNCE))
        @rule(data=st.data())
        def announcement(self, data):
            self.feed(data, ANNOUNCE)

        @invariant()
        def views_agree(self):
            if refinement and hasattr(self, "config"):
                assert self.task.view() == view(self.config, self.spec), (
                    f"refines_model: {self.config} after {self.trace}: view {self.task.view()}, "
                    f"model {view(self.config, self.spec)}")

    BarrierMachine.__name__ = BarrierMachine.__qualname__ = f"BarrierMachine[{mode},{handler}]"
    return BarrierMachine

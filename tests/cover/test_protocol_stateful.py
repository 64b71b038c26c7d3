"""Hypothesis drives the composed whole-job model with random schedules (one enabled step at a
time, failovers included) and checks every step and state property after each step, and that
no reachable state is a deadlock."""

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from flipcheck.generators.protocol import EXAMPLE_GRAPHS, example_graph
from flipcheck.model.barriers import MODES
from flipcheck.model.protocol import Job, initial_state, is_end, successors
from flipcheck.properties.protocol_properties import check_state, check_step, no_deadlock


class ProtocolMachine(RuleBasedStateMachine):
    @initialize(graph=st.sampled_from(sorted(EXAMPLE_GRAPHS)), mode=st.sampled_from(MODES),
                records=st.integers(0, 2), checkpoints=st.integers(1, 3), failures=st.integers(0, 1))
    def start(self, graph, mode, records, checkpoints, failures):
        self.job = Job(example_graph(graph), mode=mode, records=records, checkpoints=checkpoints, failures=failures)
        self.state = initial_state(self.job)
        self.steps = 0

    @rule(choice=st.integers(0, 10_000))
    def step(self, choice):
        options = list(successors(self.job, self.state))
        if not options:
            assert is_end(self.job, self.state)
            return
        label, nxt, notes = options[choice % len(options)]
        problems = check_step(self.job, self.state, label, notes, nxt) + check_state(self.job, nxt)
        assert problems == [], (label, problems)
        self.state = nxt
        self.steps += 1

    @invariant()
    def not_stuck(self):
        if hasattr(self, "job"):
            assert no_deadlock(self.job, self.state) == []


ProtocolMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=60, deadline=None)
TestProtocolMachine = ProtocolMachine.TestCase

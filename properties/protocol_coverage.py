"""Per-rule coverage and vacuity of an exploration of the whole job, as TLC reports per action.

Two questions a passing exploration leaves open:

* **Which rules fired?** Every step the search generates is counted under the rules it took
  (:func:`flipcheck.model.protocol.rules_of`, the one mapping from steps to rules, next to the
  rules). A rule that never fired was never checked.
* **Did the variant's change matter?** For every switch of
  :class:`~flipcheck.model.protocol.Protocol` the explored protocol overrides (a boolean, or a
  rule method such as :meth:`~flipcheck.model.protocol.Protocol.may_finish` or
  :meth:`~flipcheck.model.protocol.Protocol.plan`), every expanded state's successors are also
  computed with that one override removed; ``changed_successors`` counts the states where the two
  successor sets differ. Zero means the change made no difference in any state searched: the
  exploration says nothing about it (:func:`vacuity_messages` names a configuration where it does).

The rule count costs a dictionary look-up per step; the override comparison one more successor
computation per expanded state and override, so it runs only for protocols that override a switch,
and only in the states whose successors read that switch: the search runs a protocol that notes
each overridden name it is asked for (:func:`watching`), and a switch no rule read cannot have
changed a successor (the successors are a function of the state and of what the rules read).

>>> from flipcheck.generators.protocol import example_graph
>>> from flipcheck.model.protocol import Job, Protocol
>>> class NoWait(Protocol):
...     wait_for_pending_checkpoints = False
>>> overridden(NoWait())
('wait_for_pending_checkpoints',)
>>> from flipcheck.properties.protocol_explore import explore_job
>>> result = explore_job(Job(example_graph("pair"), records=1, protocol=NoWait()), coverage=True)
>>> result.coverage.rules["J7"] > 0, result.coverage.overrides
(True, {'wait_for_pending_checkpoints': 0})
>>> print(vacuity_messages(result.coverage)[0])  # doctest: +NORMALIZE_WHITESPACE
your change to wait_for_pending_checkpoints made no difference in the 359 states searched; try: pair,
unaligned, records 0, checkpoints 1, failures 0 (examples: flipcheck.generators.protocol.example_graph)
"""

from __future__ import annotations

import copy
import inspect
from collections import Counter
from dataclasses import dataclass, field

from flipcheck.model.protocol import NOT_EXPLORED, RULES, Job, Protocol, rules_of, successors
from flipcheck.model.protocol.switches import SWITCHES, overridden

from .protocol_properties import check_step

__all__ = ["SWITCHES", "SWITCH_EXAMPLES", "Coverage", "overridden", "with_switch_removed", "watching", "covering",
           "vacuity_messages", "unfired_rules", "coverage_lines", "rule_coverage_report"]

#: For each switch, the smallest configuration of the exhaustive sweep or the manifest
#: (tests/manifests/protocol.json; fewest states) on which flipping it changes some state's
#: successors (measured once over all 95 of them):
#: ``(graph, mode, records, checkpoints, failures, stop_with_savepoint)``. For a rule method, the
#: smallest on which flipping each boolean its default body reads does, so every branch of the
#: rule runs there. Checked by tests/cover/test_protocol_coverage.py; ``plan`` has none (any
#: algorithm may replace it).
SWITCH_EXAMPLES = {
    "may_finish": ("pair", "unaligned", 0, 1, 0, False),
    "finish_waits_for": ("pair", "unaligned", 0, 1, 0, False),
    "on_finished_report": ("pair", "aligned", 0, 1, 0, False),
    "finished_task_declines_trigger": ("pair", "aligned", 0, 1, 0, True),
    "finalize_problem": ("union", "aligned", 0, 1, 0, False),
    "end_of_data_view_after_failover": ("pair", "aligned", 0, 1, 1, False),
    "end_of_input_checkpoint_id": ("pair-v2", "aligned", 0, 1, 0, False),
    "checkpoints_after_tasks_finished": ("pair", "aligned", 0, 1, 0, False),
    "wait_for_end_of_data_acks": ("pair", "unaligned", 0, 1, 0, False),
    "wait_for_final_checkpoint": ("pair", "aligned", 0, 1, 0, False),
    "wait_for_pending_checkpoints": ("pair", "unaligned", 0, 1, 0, False),
    "decline_trigger_of_finished_task": ("pair", "aligned", 0, 1, 0, True),
    "union_list_state_checks": ("union", "aligned", 0, 1, 0, False),
    "reset_end_of_data_view_on_failover": ("pair", "aligned", 0, 1, 1, False),
    "dequeue_released_channels": ("pair", "aligned", 0, 1, 0, False),
    "decline_stop_without_drain_after_end_of_data": ("pair", "aligned", 0, 1, 0, True),
    "no_transaction_after_finish": ("pair", "aligned", 0, 1, 0, False),
    "no_pre_barrier_commit_after_end_of_input": ("pair-v2", "aligned", 0, 1, 0, False),
    "restore_end_of_input": ("pair-v2", "aligned", 0, 1, 1, False),
    "end_of_input_id_is_next_checkpoint": ("pair-v2", "aligned", 0, 1, 0, False),
}


@dataclass
class Coverage:
    """What an exploration exercised: ``rules`` counts generated steps per rule (every rule of
    :data:`~flipcheck.model.protocol.RULES`, zero included); ``overrides`` maps each overridden
    switch to the number of expanded states whose successors it changed; ``states`` is the
    number of states expanded."""

    rules: Counter = field(default_factory=lambda: Counter({rule: 0 for rule in RULES}))
    overrides: dict = field(default_factory=dict)
    states: int = 0

    def as_json(self) -> dict:
        """The ``coverage`` object of ``flipcheck explore --json``."""
        return {"rules": {rule: self.rules[rule] for rule in RULES},
                "overrides": {name: {"changed_successors": n} for name, n in self.overrides.items()},
                "states": self.states}

    def add(self, other: "Coverage") -> None:
        """Sum ``other`` into this one (a set of configurations)."""
        self.rules.update(other.rules)
        for name, n in other.overrides.items():
            self.overrides[name] = self.overrides.get(name, 0) + n
        self.states += other.states


def with_switch_removed(job: Job, switch: str) -> Job:
    """``job`` running its protocol with the override of ``switch`` taken back to :class:`Protocol`'s."""
    cls = type(job.protocol)
    base = type(f"{cls.__name__}Without_{switch}", (cls,), {switch: vars(Protocol)[switch]})
    other = copy.copy(job)
    other.protocol = base()
    other.after_finished = job.graph.checkpoints_after_tasks_finished and other.protocol.checkpoints_after_tasks_finished
    other._plans = {}  # the plan cache depends on the protocol's plan
    return other


class _Noted:
    """A class attribute that adds its name to ``read`` whenever it is looked up, then gives
    what the attribute it stands for gives (a boolean, or a method bound to the instance)."""

    def __init__(self, name: str, value, read: set):
        self.name, self.value, self.read = name, value, read

    def __get__(self, instance, owner=None):
        self.read.add(self.name)
        bind = getattr(self.value, "__get__", None)
        return self.value if bind is None else bind(instance, owner)


def watching(job: Job, names, read: set) -> Job:
    """``job`` with the same protocol, except that looking up any of ``names`` on it adds the
    name to ``read``. With ``plan`` among them, asking the job for a plan adds them all: the
    job caches the plan of each view (C2), so a state may use a plan without the protocol being
    asked, and an overridden ``plan`` may have read any switch when it was made.

    >>> from flipcheck.generators.protocol import example_graph
    >>> class NoWait(Protocol):
    ...     wait_for_pending_checkpoints = False
    >>> read = set()
    >>> watched = watching(Job(example_graph("pair"), protocol=NoWait()), ["wait_for_pending_checkpoints"], read)
    >>> watched.protocol.wait_for_pending_checkpoints, sorted(read)
    (False, ['wait_for_pending_checkpoints'])
    """
    cls = type(job.protocol)
    noted = {name: _Noted(name, inspect.getattr_static(cls, name), read) for name in names}
    other = copy.copy(job)
    other.protocol = type(f"{cls.__name__}Watched", (cls,), noted)()
    if "plan" in noted:
        planned = other.plan

        def plan(known_finished: int):
            read.update(noted)
            return planned(known_finished)
        other.plan = plan
    return other


# The override a Job reads once, when it is made (its after_finished), so a state uses it
# without asking: compared in every state.
_READ_BY_JOB_ONLY = "checkpoints_after_tasks_finished"


def covering(job: Job, coverage: Coverage, compare_every_state: bool = False):
    """The explorer's ``successors`` for ``job`` (steps with their violations, as
    :func:`~.protocol_explore.search_functions` has them) that also fills ``coverage`` for each
    state it expands. ``compare_every_state``: compute the successors without each override in
    every state, not only where the override was read (the same counts; for tests)."""
    switches = overridden(job.protocol)
    bases = [(name, with_switch_removed(job, name)) for name in switches]
    coverage.overrides.update({name: 0 for name in switches})
    count = coverage.rules
    read: set = set()
    always = set(switches) if compare_every_state else {name for name in switches if name == _READ_BY_JOB_ONLY}
    searched = watching(job, switches, read) if bases else job

    def step(state):
        coverage.states += 1
        mine = []
        read.clear()
        for label, nxt, notes in successors(searched, state):
            count.update(rules_of(job, state, label, notes, nxt))
            if bases:
                mine.append((label, nxt))
            yield label, nxt, (check_step(job, state, label, notes, nxt) if notes else ())
        for name, base in bases:
            if name not in read and name not in always:
                continue   # no rule asked for it here: without the override, the same successors
            theirs = [(label, nxt) for label, nxt, _ in successors(base, state)]
            # The lists first: successors come in a fixed order, and two successors of one state
            # share most of their parts, which == skips by identity while a hash walks them all
            # (measured on the README's join: coverage cost 11 s instead of 23 s on a 55 s search). Sets only
            # when the order differs, so the count is the same as comparing sets.
            if theirs != mine and set(theirs) != set(mine):
                coverage.overrides[name] += 1
    return step


def unfired_rules(coverage: Coverage, explorable_only: bool = True) -> list[str]:
    """The rules that never fired (without those no exploration can take, :data:`NOT_EXPLORED`)."""
    return [rule for rule in RULES if not coverage.rules[rule] and not (explorable_only and rule in NOT_EXPLORED)]


def _describe(example: tuple) -> str:
    graph, mode, records, checkpoints, failures, stop = example
    return (f"{graph}, {mode}, records {records}, checkpoints {checkpoints}, failures {failures}"
            + (", stop-with-savepoint" if stop else "") + " (examples: flipcheck.generators.protocol.example_graph)")


def vacuity_messages(coverage: Coverage) -> list[str]:
    """One line per overridden switch that changed no successor in the states searched. Not for
    ``plan``: a plan algorithm that changes no step is what a refactoring wants (its count is
    still in :meth:`Coverage.as_json`)."""
    lines = []
    for name, changed in coverage.overrides.items():
        if changed or name == "plan":
            continue
        example = SWITCH_EXAMPLES.get(name)
        hint = _describe(example) if example else "a configuration where the rule reading it runs"
        lines.append(f"your change to {name} made no difference in the {coverage.states:,} states searched; "
                     f"try: {hint}")
    return lines


def coverage_lines(coverage: Coverage) -> list[str]:
    """The text report: the rules fired with their counts, those never fired, and the vacuity
    messages."""
    fired = ", ".join(f"{rule} {coverage.rules[rule]:,}" for rule in RULES if coverage.rules[rule])
    never = unfired_rules(coverage)
    return ([f"rules fired: {fired}" + (f"; never: {', '.join(never)}" if never else "")]
            + vacuity_messages(coverage))


def rule_coverage_report(coverage: Coverage, explored: int, configurations: int) -> dict:
    """What ``flipcheck verify`` reports of a configuration set: the steps per rule, the rules an
    exploration can take that never fired, those no exploration takes (and why), and how many
    of the configurations were explored within the budget."""
    return {"rules": {rule: coverage.rules[rule] for rule in RULES}, "never_fired": unfired_rules(coverage),
            "not_explored": dict(NOT_EXPLORED), "configurations": explored, "of": configurations}

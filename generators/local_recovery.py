"""Cases for task-local state recovery, for hypothesis and for seeded sweeps.

Written once against :class:`~.choices.Chooser` (hypothesis shrinks them; ``SeededChooser``
regenerates them from a case id). Five kinds, one per part of the model plus the whole cluster:

* ``write`` — handles with primary and local write outcomes, local backup on or off;
* ``store`` — a sequence of local-store operations (each copy stored after its checkpoint began);
* ``restore`` — primary handles over a random key-group layout, some unreadable, and a local
  copy that matches some ranges, misses some, is unreadable in places or has another layout;
* ``scheduling`` — a bulk whose previous slots survive or not, other free slots, fresh slots,
  in a random request order (:func:`~flipcheck.properties.local_recovery_explore.scheduling_instance`);
* ``cluster`` — a run of a small cluster: checkpoints with random write outcomes and lost
  confirmations, task failures, TaskManager losses, corrupt local copies, unreadable primaries.

:func:`cluster_machine` is the stateful hypothesis machine over the same cluster events, with
every property checked after every step (:class:`~flipcheck.properties.local_recovery_properties.ClusterChecker`).

Example
-------
>>> from flipcheck.generators.choices import SeededChooser
>>> case = generate_case(SeededChooser.for_case("doc", 5))
>>> case == generate_case(SeededChooser.for_case("doc", 5)), case.kind in KINDS
(True, True)
"""

from __future__ import annotations

from typing import NamedTuple

from flipcheck.model.local_recovery import LOCAL, OK, REMOTE, SECONDARY_OUTCOMES, HandleWrite, KeyedHandle
from flipcheck.properties.local_recovery_explore import (
    RestoreCase, SchedulingCase, StoreCase, WriteCase, compositions, scheduling_instance,
)

from .choices import Chooser, HypothesisChooser, choice, permutation

__all__ = [
    "KINDS", "ClusterCase", "generate_write", "generate_store", "generate_restore", "generate_scheduling",
    "generate_cluster_events", "generate_cluster", "generate_case", "cases", "cluster_machine", "QUICK",
    "check_cluster_case",
]

KINDS = ("write", "store", "restore", "scheduling", "cluster")


class ClusterCase(NamedTuple):
    tasks: int
    slots_per_tm: int
    handles_per_task: int
    local_backup: bool
    rm_capacity: int
    events: tuple
    kind: str = "cluster"


def _secondary(chooser: Chooser) -> str:
    return OK if chooser.boolean(0.6) else choice(chooser, SECONDARY_OUTCOMES[1:])


def generate_write(chooser: Chooser) -> WriteCase:
    count = chooser.integer(1, 4)
    writes = tuple(HandleWrite(KeyedHandle(k, k + 1, 1), chooser.boolean(0.8), _secondary(chooser)) for k in range(count))
    return WriteCase(writes, chooser.boolean(0.85))


def generate_store(chooser: Chooser, max_id: int = 4, max_ops: int = 14) -> StoreCase:
    ops, begun = [], set()
    for _ in range(chooser.integer(1, max_ops)):
        kind = choice(chooser, ("begin", "begin", "store", "store", "confirm", "abort", "restore", "dispose"))
        if kind == "dispose":
            if chooser.boolean(0.3):
                ops.append(("dispose",))
            continue
        n = chooser.integer(1, max_id)
        if kind == "store" and n not in begun:
            kind = "begin"
        begun.add(n) if kind == "begin" else None
        ops.append((kind, n))
    return StoreCase(tuple(ops))


def generate_restore(chooser: Chooser, key_groups: int = 6) -> RestoreCase:
    layouts = compositions(key_groups)
    layout = choice(chooser, layouts)
    jm = tuple(KeyedHandle(a, b, 3, REMOTE, chooser.boolean(0.85)) for a, b in layout)
    if chooser.boolean(0.15):
        other = choice(chooser, layouts)
        local = tuple(KeyedHandle(a, b, 3, LOCAL, chooser.boolean(0.9)) for a, b in other if chooser.boolean(0.8))
    else:
        local = tuple(KeyedHandle(a, b, 3, LOCAL, chooser.boolean(0.85)) for a, b in layout if chooser.boolean(0.7))
    return RestoreCase(jm, local)


def generate_scheduling(chooser: Chooser, max_tasks: int = 6) -> SchedulingCase:
    n = chooser.integer(1, max_tasks)
    flags = [chooser.boolean(0.7) for _ in range(n)]
    return scheduling_instance(flags, chooser.integer(0, 3), chooser.integer(0, 3), permutation(chooser, range(n)))


def _cluster_event(chooser: Chooser, tasks: int, handles: int) -> tuple:
    roll = chooser.integer(0, 19)
    if roll < 10:
        outcomes = tuple(tuple((chooser.boolean(0.9), _secondary(chooser)) for _ in range(handles)) for _ in range(tasks))
        lost = frozenset(t for t in range(tasks) if chooser.boolean(0.15))
        return ("checkpoint", outcomes, lost)
    if roll < 13:
        return ("fail",)
    if roll < 16:
        return ("lose_tm", chooser.integer(0, 3))
    if roll < 18:
        return ("corrupt_local", chooser.integer(0, tasks - 1))
    return ("lose_primary", chooser.integer(0, tasks - 1))


def generate_cluster_events(chooser: Chooser, tasks: int, handles: int, max_events: int = 14) -> tuple:
    return tuple(_cluster_event(chooser, tasks, handles) for _ in range(chooser.integer(1, max_events)))


def generate_cluster(chooser: Chooser) -> ClusterCase:
    tasks, handles = chooser.integer(1, 4), chooser.integer(1, 2)
    return ClusterCase(tasks, chooser.integer(1, 2), handles, chooser.boolean(0.9), chooser.integer(0, 3),
                       generate_cluster_events(chooser, tasks, handles))


_GENERATORS = {"write": generate_write, "store": generate_store, "restore": generate_restore,
               "scheduling": generate_scheduling, "cluster": generate_cluster}


def generate_case(chooser: Chooser, kind: str | None = None):
    """A case of ``kind`` (one of :data:`KINDS`), or of a kind the chooser picks."""
    return _GENERATORS[kind if kind is not None else choice(chooser, KINDS)](chooser)


def cases(kind: str | None = None):
    """Hypothesis strategy for cases (see :func:`generate_case`)."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: generate_case(HypothesisChooser(draw), kind))()


def check_cluster_case(case: ClusterCase, variant: str, stop_at_first: bool = True):
    """Run the cluster events on ``variant`` with the checker; (violations, observations)."""
    from flipcheck.properties.local_recovery_properties import ClusterChecker
    from flipcheck.reference_impl.local_recovery_variants import engine as make_engine

    cluster = make_engine(variant).cluster(tasks=case.tasks, slots_per_tm=case.slots_per_tm,
                                           handles_per_task=case.handles_per_task, local_backup=case.local_backup,
                                           rm_capacity=case.rm_capacity)
    checker = ClusterChecker(cluster)
    found, observations = [], []
    for index, event in enumerate(case.events):
        observation = cluster.process(event)
        observations.append(observation)
        for violation in checker.step(event, observation, cluster):
            found.append(violation._replace(message=f"event {index + 1} {event[0]}: {violation.message}")
                         if hasattr(violation, "_replace") else
                         type(violation)(violation.property, f"event {index + 1} {event[0]}: {violation.message}", index))
        if found and stop_at_first:
            break
    return found, observations


# ------------------------------------------------------------------------------------------------
# The stateful machine


def _settings():
    from hypothesis import HealthCheck, Phase, settings

    return settings(max_examples=200, stateful_step_count=20, deadline=None, database=None, derandomize=True,
                    report_multiple_bugs=False, phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


QUICK = _settings()


def cluster_machine(variant: str = "flink"):
    """A ``RuleBasedStateMachine`` running a cluster of ``variant``: checkpoints, failures,
    TaskManager losses, corrupt local copies, unreadable primaries; after every step every
    property holds (the assertion message starts with the violated property's name)."""
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

    from flipcheck.properties.local_recovery_properties import ClusterChecker
    from flipcheck.reference_impl.local_recovery_variants import engine as make_engine

    class ClusterMachine(RuleBasedStateMachine):
        @initialize(tasks=st.integers(1, 4), slots_per_tm=st.integers(1, 2), handles=st.integers(1, 2),
                    rm_capacity=st.integers(0, 3))
        def setup(self, tasks, slots_per_tm, handles, rm_capacity):
            self.cluster = make_engine(variant).cluster(tasks=tasks, slots_per_tm=slots_per_tm, handles_per_task=handles,
                                                        rm_capacity=rm_capacity)
            self.checker = ClusterChecker(self.cluster)
            self.events: list = []

        def feed(self, event: tuple) -> None:
            self.events.append(event)
            observation = self.cluster.process(event)
            found = self.checker.step(event, observation, self.cluster)
            assert not found, f"{found[0].property}: after {self.events}: {found[0].message}"

        @rule(data=st.data())
        def checkpoint(self, data):
            chooser = HypothesisChooser(data.draw)
            n, h = self.cluster.n, self.cluster.handles_per_task
            outcomes = tuple(tuple((chooser.boolean(0.9), _secondary(chooser)) for _ in range(h)) for _ in range(n))
            self.feed(("checkpoint", outcomes, frozenset(t for t in range(n) if chooser.boolean(0.15))))

        @rule()
        def task_fails(self):
            self.feed(("fail",))

        @rule(pick=st.integers(0, 3))
        def task_manager_lost(self, pick):
            self.feed(("lose_tm", pick))

        @rule(data=st.data())
        def local_copy_corrupt(self, data):
            self.feed(("corrupt_local", data.draw(st.integers(0, self.cluster.n - 1))))

        @rule(data=st.data())
        def primary_unreadable(self, data):
            self.feed(("lose_primary", data.draw(st.integers(0, self.cluster.n - 1))))

    ClusterMachine.__name__ = ClusterMachine.__qualname__ = f"ClusterMachine[{variant}]"
    return ClusterMachine

"""z3 proofs that a checkpoint-plan algorithm equals the specification for every task state.

Each task's state is a z3 variable: a Bool (RUNNING or FINISHED, the ``binary`` domain of
issue 2) or, in the ``all`` domain, one of Flink's ten ``ExecutionState`` names (an EnumSort).
Every algorithm of :data:`flipcheck.reference_impl.plan.PLAN_ALGORITHMS` has an *encoder* here
that turns its own logic, step by step, into formulas over those variables: loops over vertices
and edges are unrolled (the topology is concrete), every test on a task state becomes a formula,
every set the algorithm builds becomes one membership Bool per task. The spec's encoding is the
reference; "algorithm == spec" is proved by asking z3 for an assignment on which the two
symbolic plans differ (split into small queries, see :func:`difference_queries`). ``unsat`` proves equality for all 2^tasks (or 10^tasks) assignments at
once; a model is a counterexample, decoded into task states and **re-checked** by running the
concrete algorithm and the spec, so a wrong encoding cannot produce a fake counterexample
(:class:`EncodingMismatch` is raised instead).

Why encodings are trustworthy: ``tests/cover/test_z3_plan.py`` evaluates every encoding on
randomly sampled concrete assignments and compares it with the concrete implementation.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL, POINTWISE
>>> g = JobGraph.build([("src", 2), ("map", 3), ("sink", 1)],
...                    [("src", "map", POINTWISE), ("map", "sink", ALL_TO_ALL)])
>>> prove_plan(g, "flink").proved
True
>>> result = prove_plan(g, "wiki-b")
>>> result.proved, [v.property for v in result.differences]
(False, ['equals_spec'])
>>> cex = result.counterexample                    # shrunk: one task not RUNNING is enough
>>> sum(s != "RUNNING" for states in cex.states.values() for s in states)
1
>>> PLAN_ALGORITHMS["wiki-b"](cex) != checkpoint_plan(cex)   # re-checked concretely
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cache
from typing import Callable, Iterable, Mapping, Sequence

import z3

from flipcheck.model.execution_graph import count_connections, predecessors
from flipcheck.model.jobgraph import ALL_TO_ALL, EXECUTION_STATES, FINISHED, RUNNING, TERMINAL_STATES, JobGraph, TaskId
from flipcheck.model.plan import (
    DECLINE_REASONS,
    NO_TASKS_TO_WAIT_FOR,
    NOT_ALL_REQUIRED_TASKS_RUNNING,
    CheckpointPlan,
    Declined,
    PlanResult,
    TaskSet,
    checkpoint_plan,
)
from flipcheck.reference_impl.plan import PLAN_ALGORITHMS
from flipcheck.reference_impl.plan.flink import bitset_size
from flipcheck.reference_impl.plan.wiring import float_ceil_wiring, integer_wiring

from .plan_properties import equals_spec
from .violation import Violation

# Beyond these a proof runs for minutes and gigabytes (docs/prove.md: 9,463 tasks take 49 s; two
# ALL_TO_ALL-joined vertices of 2,048 subtasks, 4 million task-level connections, ran past 100 s
# at 700 MB; a chain of 1,000 vertices takes 9 s, of 5,000 vertices 99 s), so the CLI refuses
# the graph up front instead.
MAX_PROOF_TASKS = 10_000
MAX_PROOF_VERTICES = 2_000
MAX_PROOF_CONNECTIONS = 1_000_000


def proof_size_problem(graph: JobGraph) -> str | None:
    """Why ``graph`` is too large to prove in reasonable time (None when it is not)."""
    if len(graph.vertices) > MAX_PROOF_VERTICES:
        return f"too large to prove: {len(graph.vertices):,} vertices (limit {MAX_PROOF_VERTICES:,})"
    if graph.num_tasks > MAX_PROOF_TASKS:
        return f"too large to prove: {graph.num_tasks:,} tasks (limit {MAX_PROOF_TASKS:,})"
    connections = count_connections(graph, stop_above=MAX_PROOF_CONNECTIONS)
    if connections > MAX_PROOF_CONNECTIONS:
        return f"too large to prove: {connections:,} task-level connections (limit {MAX_PROOF_CONNECTIONS:,})"
    return None

__all__ = [
    "MAX_PROOF_TASKS",
    "MAX_PROOF_VERTICES",
    "MAX_PROOF_CONNECTIONS",
    "proof_size_problem",
    "STATE_DOMAINS",
    "TASK_FIELDS",
    "SymbolicStates",
    "SymbolicPlan",
    "difference_queries",
    "encode_spec",
    "FlinkEncoder",
    "NaiveEncoder",
    "WikiAEncoder",
    "WikiBEncoder",
    "FlinkBefore40482Encoder",
    "FlinkBefore22379Encoder",
    "FlinkBefore22003Encoder",
    "TriggerSourcesOnlyEncoder",
    "FlinkBefore22863Encoder",
    "PLAN_ENCODERS",
    "Encoding",
    "encode",
    "ProofResult",
    "prove_plan",
    "describe_difference",
    "EncodingMismatch", "VertexBits"]

# binary: RUNNING or FINISHED per task (issue 2); all: any of Flink's ten ExecutionStates.
STATE_DOMAINS = ("binary", "all")
TASK_FIELDS = ("tasks_to_trigger", "tasks_to_wait_for", "tasks_to_commit_to", "finished_tasks")

_TRUE = z3.BoolVal(True)
_FALSE = z3.BoolVal(False)


def _or(terms: Iterable[z3.BoolRef]) -> z3.BoolRef:
    terms = list(terms)
    return z3.Or(terms) if terms else _FALSE


def _and(terms: Iterable[z3.BoolRef]) -> z3.BoolRef:
    terms = list(terms)
    return z3.And(terms) if terms else _TRUE


@cache
def _execution_state_sort():
    # Declared once per process: z3 rejects redeclaring an EnumSort with the same name.
    sort, constants = z3.EnumSort("ExecutionState", EXECUTION_STATES)
    return sort, dict(zip(EXECUTION_STATES, constants))


# -- symbolic task states ------------------------------------------------------------------


class SymbolicStates:
    """One z3 variable per task of ``graph``; tests on states become formulas.

    ``binary``: a Bool per task, true = RUNNING, false = FINISHED. ``all``: an
    ``ExecutionState`` enum constant per task.
    """

    def __init__(self, graph: JobGraph, domain: str = "binary"):
        if domain not in STATE_DOMAINS:
            raise ValueError(f"unknown state domain {domain!r} (expected one of {', '.join(STATE_DOMAINS)})")
        self.graph = graph
        self.domain = domain
        self.variables: dict[TaskId, z3.ExprRef] = {}
        # The running number keeps names unique whatever the vertex ids look like.
        for number, (vertex_id, index) in enumerate(graph.tasks()):
            name = f"{number}:{vertex_id}[{index}]"
            if domain == "binary":
                self.variables[(vertex_id, index)] = z3.Bool(name)
            else:
                self.variables[(vertex_id, index)] = z3.Const(name, _execution_state_sort()[0])

    @property
    def values_per_task(self) -> int:
        return 2 if self.domain == "binary" else len(EXECUTION_STATES)

    def is_state(self, task: TaskId, state: str) -> z3.BoolRef:
        """The formula "``task`` is in ``state``"."""
        variable = self.variables[task]
        if self.domain == "binary":
            return variable if state == RUNNING else z3.Not(variable) if state == FINISHED else _FALSE
        return variable == _execution_state_sort()[1][state]

    def is_in(self, task: TaskId, states: Iterable[str]) -> z3.BoolRef:
        return _or(self.is_state(task, s) for s in sorted(states))

    def model(self, states: Mapping[str, Sequence[str]]) -> z3.ModelRef:
        """The z3 model assigning the concrete ``states`` (vertex -> state per subtask)."""
        model = z3.Model()
        for vertex_id, vertex_states in states.items():
            for index, state in enumerate(vertex_states):
                variable = self.variables[(vertex_id, index)]
                if self.domain == "all":
                    model.update_value(variable, _execution_state_sort()[1][state])
                elif state in (RUNNING, FINISHED):
                    model.update_value(variable, z3.BoolVal(state == RUNNING))
                else:
                    raise ValueError(f"{(vertex_id, index)} is {state}, outside the binary RUNNING/FINISHED domain")
        return model

    def decode(self, model: z3.ModelRef) -> dict[str, tuple[str, ...]]:
        """The concrete states a z3 model assigns, per vertex."""
        decoded: dict[str, list[str]] = {v: [] for v in self.graph.topological_order}
        for (vertex_id, _), variable in self.variables.items():
            value = model.eval(variable, model_completion=True)
            if self.domain == "binary":
                decoded[vertex_id].append(RUNNING if z3.is_true(value) else FINISHED)
            else:
                decoded[vertex_id].append(str(value))
        return {v: tuple(s) for v, s in decoded.items()}


class VertexBits:
    """Per-subtask Bools of one vertex (a symbolic ``BitSet``) with memoised range tests.

    Memoising keeps the formulas linear to *build*: an ALL_TO_ALL consumer asks "is any upstream
    task running" once per subtask, and z3 would share the term anyway, but Python would not.
    """

    __slots__ = ("bits", "_any")

    def __init__(self, bits: Sequence[z3.BoolRef]):
        self.bits = list(bits)
        self._any: dict[tuple[int, int], z3.BoolRef] = {}

    def __getitem__(self, index: int) -> z3.BoolRef:
        return self.bits[index]

    def __len__(self) -> int:
        return len(self.bits)

    def any(self, indices: range | None = None) -> z3.BoolRef:
        """Some bit in ``indices`` (default: all) is set."""
        indices = range(len(self.bits)) if indices is None else indices
        key = (indices.start, indices.stop)
        if key not in self._any:
            self._any[key] = _or(self.bits[indices.start : indices.stop])
        return self._any[key]

    def cardinality_is(self, count: int) -> z3.BoolRef:
        """``cardinality() == count`` (exactly ``count`` bits set)."""
        if count == 0:
            return z3.Not(self.any())
        if count == len(self.bits):
            return _and(self.bits)
        if count > len(self.bits):
            return _FALSE
        return z3.PbEq([(b, 1) for b in self.bits], count)


# -- symbolic plans ------------------------------------------------------------------------


@dataclass(frozen=True)
class SymbolicPlan:
    """A plan result as formulas: a Bool per decline reason (at most one holds), a membership
    Bool per task for each task set, a Bool per vertex for ``fully_finished_vertices``."""

    tasks_to_trigger: Mapping[TaskId, z3.BoolRef]
    tasks_to_wait_for: Mapping[TaskId, z3.BoolRef]
    tasks_to_commit_to: Mapping[TaskId, z3.BoolRef]
    finished_tasks: Mapping[TaskId, z3.BoolRef]
    fully_finished_vertices: Mapping[str, z3.BoolRef]
    declined: Mapping[str, z3.BoolRef] = field(default_factory=lambda: {r: _FALSE for r in DECLINE_REASONS})

    def with_declines(self, declined: Mapping[str, z3.BoolRef]) -> "SymbolicPlan":
        return SymbolicPlan(
            self.tasks_to_trigger, self.tasks_to_wait_for, self.tasks_to_commit_to, self.finished_tasks,
            self.fully_finished_vertices, dict(declined),
        )

    def decode(self, model: z3.ModelRef) -> PlanResult:
        """The concrete result this symbolic plan has under ``model``."""
        true = lambda formula: z3.is_true(model.eval(formula, model_completion=True))  # noqa: E731
        for reason in DECLINE_REASONS:
            if true(self.declined[reason]):
                return Declined(reason)
        sets = [TaskSet.of(t for t, member in getattr(self, name).items() if true(member)) for name in TASK_FIELDS]
        fully = frozenset(v for v, member in self.fully_finished_vertices.items() if true(member))
        return CheckpointPlan(*sets, fully)


def _choose(condition: z3.BoolRef, then: SymbolicPlan, otherwise: SymbolicPlan) -> SymbolicPlan:
    """``then if condition else otherwise``, field by field."""

    def pick(a: Mapping, b: Mapping) -> dict:
        return {key: z3.If(condition, a[key], b[key]) for key in a}

    return SymbolicPlan(
        *(pick(getattr(then, name), getattr(otherwise, name)) for name in TASK_FIELDS),
        pick(then.fully_finished_vertices, otherwise.fully_finished_vertices),
    )


class _Outcome:
    """Sequential ``if condition: return Declined(reason)`` steps as formulas: a reason holds iff
    its condition holds and no earlier step declined."""

    def __init__(self):
        self.decided = _FALSE
        self.declined = {reason: _FALSE for reason in DECLINE_REASONS}

    def decline_if(self, condition: z3.BoolRef, reason: str) -> None:
        fires = z3.And(z3.Not(self.decided), condition)
        self.declined[reason] = z3.Or(self.declined[reason], fires)
        self.decided = z3.Or(self.decided, fires)


def difference_queries(plan: SymbolicPlan, spec: SymbolicPlan) -> list[tuple[str, z3.BoolRef]]:
    """The formula "``plan`` and ``spec`` are different results", split into labelled queries
    that are checked one after the other; the results differ for some assignment iff one of
    them is satisfiable.

    First, per decline reason, "``plan`` and ``spec`` disagree on it". Then, per task set and
    vertex, "``spec`` is a plan and some task of the vertex is in one set but not in the other"
    (the same for ``fully_finished_vertices``). Once the decline queries are unsatisfiable,
    ``plan`` is a plan exactly when ``spec`` is, so the later queries need only the spec's
    (much simpler) "not declined". Small queries keep each SAT problem small: a 2000-task graph
    is proved in well under a second instead of several.
    """
    queries = [(f"decline {r}", plan.declined[r] != spec.declined[r]) for r in DECLINE_REASONS]
    spec_is_plan = z3.Not(_or(spec.declined.values()))
    for name in TASK_FIELDS:
        by_vertex: dict[str, list[z3.BoolRef]] = {}
        for task, member in getattr(plan, name).items():
            by_vertex.setdefault(task[0], []).append(z3.Xor(member, getattr(spec, name)[task]))
        queries.extend((f"{name} of {v}", z3.And(spec_is_plan, _or(terms))) for v, terms in by_vertex.items())
    fully = [z3.Xor(m, spec.fully_finished_vertices[v]) for v, m in plan.fully_finished_vertices.items()]
    queries.append(("fully_finished_vertices", z3.And(spec_is_plan, _or(fully))))
    return queries


# -- the specification (model/plan.py, rules R1-R7) ----------------------------------------


def _runs(tasks: Iterable[TaskId]) -> list[tuple[str, range]]:
    """Group tasks into maximal runs of consecutive subtasks of one vertex."""
    runs: list[tuple[str, int, int]] = []
    for vertex_id, index in tasks:
        if runs and runs[-1][0] == vertex_id and runs[-1][2] == index:
            runs[-1] = (vertex_id, runs[-1][1], index + 1)
        else:
            runs.append((vertex_id, index, index + 1))
    return [(v, range(start, stop)) for v, start, stop in runs]


def encode_spec(graph: JobGraph, states: SymbolicStates) -> SymbolicPlan:
    """:func:`flipcheck.model.plan.checkpoint_plan`, rule by rule."""
    tasks = list(graph.tasks())
    finished = {t: states.is_state(t, FINISHED) for t in tasks}  # R1
    running = {v: VertexBits([z3.Not(finished[(v, i)]) for i in range(graph.parallelism(v))]) for v in graph.topological_order}
    is_running = lambda task: running[task[0]][task[1]]  # noqa: E731

    outcome = _Outcome()
    if not graph.checkpoints_after_tasks_finished:
        outcome.decline_if(_or(finished.values()), NOT_ALL_REQUIRED_TASKS_RUNNING)  # R2
    outcome.decline_if(  # R3
        _or(z3.And(is_running(t), z3.Not(states.is_state(t, RUNNING))) for t in tasks), NOT_ALL_REQUIRED_TASKS_RUNNING
    )
    outcome.decline_if(z3.Not(_or(is_running(t) for t in tasks)), NO_TASKS_TO_WAIT_FOR)  # R4

    # R5: running, and no predecessor (the spec's own enumeration of them) is running.
    trigger = {
        t: z3.And(is_running(t), z3.Not(_or(running[v].any(ix) for v, ix in _runs(predecessors(graph, t)))))
        for t in tasks
    }
    waited = {t: is_running(t) for t in tasks}  # R6
    fully = {v.id: _and(finished[(v.id, i)] for i in range(v.parallelism)) for v in graph.vertices}  # R7
    return SymbolicPlan(trigger, waited, dict(waited), finished, fully, outcome.declined)


# -- Flink's calculator and its variants (reference_impl/plan), step by step ---------------


class FlinkEncoder:
    """:class:`flipcheck.reference_impl.plan.flink.FlinkPlanCalculator`, method by method.

    Variants override the same methods their concrete classes override.
    """

    name = "flink"
    wiring = staticmethod(integer_wiring)

    def encode(self, graph: JobGraph, states: SymbolicStates) -> SymbolicPlan:
        outcome = _Outcome()
        # Step 1: hasFinishedTasks counts real FINISHED transitions only.
        has_finished_tasks = _or(states.is_state(t, FINISHED) for t in graph.tasks())
        if not graph.checkpoints_after_tasks_finished:
            outcome.decline_if(has_finished_tasks, NOT_ALL_REQUIRED_TASKS_RUNNING)
        # Step 3: both branches are encoded; the state decides which one is the plan.
        running = {
            v: VertexBits([self.is_running(states, (v, i)) for i in range(graph.parallelism(v))])
            for v in graph.topological_order
        }
        plan = _choose(
            has_finished_tasks,
            self.calculate_after_tasks_finished(graph, running),
            self.calculate_with_all_tasks_running(graph),
        )
        # Step 4: checkTasksStarted(tasksToWaitFor).
        outcome.decline_if(z3.Not(self.tasks_started(graph, states, plan)), NOT_ALL_REQUIRED_TASKS_RUNNING)
        # PendingCheckpoint needs at least one task to wait for.
        outcome.decline_if(z3.Not(_or(plan.tasks_to_wait_for.values())), NO_TASKS_TO_WAIT_FOR)
        return plan.with_declines(outcome.declined)

    def is_running(self, states: SymbolicStates, task: TaskId) -> z3.BoolRef:
        """The bit of ``collectTaskRunningStatus`` (FINISHED only, since FLINK-40482)."""
        return z3.Not(states.is_state(task, FINISHED))

    def tasks_started(self, graph: JobGraph, states: SymbolicStates, plan: SymbolicPlan) -> z3.BoolRef:
        """Every task waited for is exactly RUNNING."""
        return _and(z3.Implies(member, states.is_state(t, RUNNING)) for t, member in plan.tasks_to_wait_for.items())

    def calculate_with_all_tasks_running(self, graph: JobGraph) -> SymbolicPlan:
        """Trigger every subtask of every vertex without inputs; wait for and commit to all."""
        tasks = list(graph.tasks())
        trigger = {(v, i): z3.BoolVal(not graph.inputs(v)) for v, i in tasks}
        every = {t: _TRUE for t in tasks}
        return SymbolicPlan(trigger, every, dict(every), {t: _FALSE for t in tasks}, {v.id: _FALSE for v in graph.vertices})

    def calculate_after_tasks_finished(self, graph: JobGraph, running: Mapping[str, VertexBits]) -> SymbolicPlan:
        """Per vertex: cardinality 0 -> fully finished; cardinality == parallelism -> wait for
        all; otherwise wait for the set bits, the others are finished."""
        wait_for: dict[TaskId, z3.BoolRef] = {}
        finished: dict[TaskId, z3.BoolRef] = {}
        fully_finished: dict[str, z3.BoolRef] = {}
        for vertex_id in graph.topological_order:
            bits = running[vertex_id]
            none_running, all_running = bits.cardinality_is(0), bits.cardinality_is(len(bits))
            fully_finished[vertex_id] = none_running
            for i in range(len(bits)):
                wait_for[(vertex_id, i)] = z3.If(none_running, _FALSE, z3.If(all_running, _TRUE, bits[i]))
                finished[(vertex_id, i)] = z3.If(none_running, _TRUE, z3.If(all_running, _FALSE, z3.Not(bits[i])))
        running_indices = {v: VertexBits([wait_for[(v, i)] for i in range(len(running[v]))]) for v in running}
        trigger = self.trigger_roots(graph, running, running_indices)
        return SymbolicPlan(trigger, wait_for, dict(wait_for), finished, {v.id: fully_finished[v.id] for v in graph.vertices})

    def trigger_roots(
        self, graph: JobGraph, running: Mapping[str, VertexBits], running_indices: Mapping[str, VertexBits]
    ) -> dict[TaskId, z3.BoolRef]:
        """Per vertex in topological order: skip fully finished ones, the fast check, then the
        per-task POINTWISE check."""
        trigger: dict[TaskId, z3.BoolRef] = {}
        for vertex_id in graph.topological_order:
            visited = z3.Not(running[vertex_id].cardinality_is(0))
            may = self.some_tasks_may_be_triggered(graph, vertex_id, running)
            subtasks = self.triggered_subtasks(graph, vertex_id, running, running_indices[vertex_id])
            for i, member in enumerate(subtasks):
                trigger[(vertex_id, i)] = z3.And(visited, may, member)
        return trigger

    def some_tasks_may_be_triggered(self, graph: JobGraph, vertex_id: str, running: Mapping[str, VertexBits]) -> z3.BoolRef:
        """``someTasksMustBeTriggered``: no input vertex is "active"."""
        active = []
        for edge in graph.inputs(vertex_id):
            upstream = running[edge.source]
            if edge.pattern == ALL_TO_ALL:
                active.append(z3.Not(upstream.cardinality_is(0)))
            else:
                # cardinality() == size(): the BitSet's capacity, not the parallelism (flip147 facts §1.5).
                active.append(upstream.cardinality_is(bitset_size(len(upstream))))
        return z3.Not(_or(active))

    def triggered_subtasks(
        self, graph: JobGraph, vertex_id: str, running: Mapping[str, VertexBits], running_indices: VertexBits
    ) -> list[z3.BoolRef]:
        """Running subtasks without a running POINTWISE predecessor (``hasRunningPrecedentTasks``)."""
        pointwise_inputs = [
            (running[e.source], self.wiring(graph.parallelism(e.source), graph.parallelism(vertex_id)))
            for e in graph.inputs(vertex_id)
            if e.pattern != ALL_TO_ALL
        ]
        return [
            z3.And(member, z3.Not(_or(bits.any(wiring[i]) for bits, wiring in pointwise_inputs)))
            for i, member in enumerate(running_indices.bits)
        ]


class _ExecutionGraphScanEncoder(FlinkEncoder):
    def _running_predecessor_exists(self, graph: JobGraph, vertex_id: str, index: int, running) -> z3.BoolRef:
        """Some execution-graph predecessor (both patterns) is running."""
        found = []
        for edge in graph.inputs(vertex_id):
            bits = running[edge.source]
            if edge.pattern == ALL_TO_ALL:
                found.append(bits.any())
            else:
                found.append(bits.any(self.wiring(len(bits), graph.parallelism(vertex_id))[index]))
        return _or(found)


class NaiveEncoder(_ExecutionGraphScanEncoder):
    """``naive``: every task waited for scans all its predecessors."""

    name = "naive"

    def trigger_roots(self, graph, running, running_indices):
        return {
            (v, i): z3.And(running_indices[v][i], z3.Not(self._running_predecessor_exists(graph, v, i, running)))
            for v in graph.topological_order
            for i in range(len(running[v]))
        }


class WikiAEncoder(_ExecutionGraphScanEncoder):
    """``wiki-a``: the seed's fast check, then the full per-task scan."""

    name = "wiki-a"

    def trigger_roots(self, graph, running, running_indices):
        trigger: dict[TaskId, z3.BoolRef] = {}
        for vertex_id in graph.topological_order:
            all_finished = running[vertex_id].cardinality_is(0)
            skip = []
            for edge in graph.inputs(vertex_id):
                upstream = running[edge.source]
                if edge.pattern == ALL_TO_ALL:
                    skip.append(z3.Not(upstream.cardinality_is(0)))  # some tasks are running
                else:
                    skip.append(upstream.cardinality_is(len(upstream)))  # all tasks are running
            visited = z3.And(z3.Not(all_finished), z3.Not(_or(skip)))
            bits = running[vertex_id]
            for i in range(len(bits)):
                own = z3.And(bits[i], z3.Not(self._running_predecessor_exists(graph, vertex_id, i, running)))
                trigger[(vertex_id, i)] = z3.And(visited, own)
        return trigger


class WikiBEncoder(FlinkEncoder):
    """``wiki-b`` as written: ``tasks_to_check`` is a membership Bool per task, initialised
    true and only ever grown by ``Or`` (the pseudocode's union)."""

    name = "wiki-b"

    def trigger_roots(self, graph, running, running_indices):
        tasks_to_check = {v: [_TRUE] * len(running[v]) for v in graph.topological_order}
        trigger: dict[TaskId, z3.BoolRef] = {}
        for vertex_id in graph.topological_order:
            check = tasks_to_check[vertex_id]
            bits = running[vertex_id]
            non_empty = _or(check)  # "if V.tasks_to_check is empty: continue"
            running_tasks = VertexBits([z3.And(check[i], bits[i]) for i in range(len(bits))])
            finished_tasks = [z3.And(check[i], z3.Not(bits[i])) for i in range(len(bits))]
            for i in range(len(bits)):
                trigger[(vertex_id, i)] = z3.And(non_empty, running_tasks[i])
            # "finished < all_tasks": not every task of V is a finished task to check.
            some_not_finished = z3.Not(_and(finished_tasks))
            for edge in graph.outputs(vertex_id):
                downstream = tasks_to_check[edge.target]
                if edge.pattern == ALL_TO_ALL:
                    filtered = [_FALSE] * len(downstream)
                else:
                    wiring = self.wiring(len(bits), graph.parallelism(edge.target))
                    filtered = [running_tasks.any(partitions) for partitions in wiring]
                for k in range(len(downstream)):
                    downstream[k] = z3.Or(downstream[k], z3.And(non_empty, some_not_finished, filtered[k]))
        return trigger


class FlinkBefore40482Encoder(FlinkEncoder):
    """``flink-before-40482``: ``Execution.isFinished()`` = terminal (FINISHED, CANCELED, FAILED)."""

    name = "flink-before-40482"

    def is_running(self, states, task):
        return z3.Not(states.is_in(task, TERMINAL_STATES))


class FlinkBefore22379Encoder(FlinkEncoder):
    """``flink-before-22379``: ``checkTasksStarted`` looked at the tasks to trigger only."""

    name = "flink-before-22379"

    def tasks_started(self, graph, states, plan):
        return _and(z3.Implies(member, states.is_state(t, RUNNING)) for t, member in plan.tasks_to_trigger.items())


class FlinkBefore22003Encoder(FlinkBefore22379Encoder):
    """``flink-before-22003``: only CREATED, SCHEDULED and DEPLOYING tasks to trigger declined."""

    name = "flink-before-22003"

    def tasks_started(self, graph, states, plan):
        not_started = ("CREATED", "SCHEDULED", "DEPLOYING")
        return _and(z3.Implies(member, z3.Not(states.is_in(t, not_started))) for t, member in plan.tasks_to_trigger.items())


class TriggerSourcesOnlyEncoder(FlinkEncoder):
    """``trigger-sources-only``: every subtask of every vertex without inputs, whatever its state."""

    name = "trigger-sources-only"

    def trigger_roots(self, graph, running, running_indices):
        return {(v, i): z3.BoolVal(not graph.inputs(v)) for v in graph.topological_order for i in range(len(running[v]))}


class FlinkBefore22863Encoder(FlinkEncoder):
    """``flink-before-22863``: single-precision ``Math.ceil`` POINTWISE wiring."""

    name = "flink-before-22863"
    wiring = staticmethod(float_ceil_wiring)


# Keyed like PLAN_ALGORITHMS (a test keeps the two registries in step).
PLAN_ENCODERS: dict[str, Callable[[JobGraph, SymbolicStates], SymbolicPlan]] = {"spec": encode_spec}
PLAN_ENCODERS.update(
    {
        c.name: c().encode
        for c in (
            FlinkEncoder,
            NaiveEncoder,
            WikiAEncoder,
            WikiBEncoder,
            FlinkBefore40482Encoder,
            FlinkBefore22379Encoder,
            FlinkBefore22003Encoder,
            TriggerSourcesOnlyEncoder,
            FlinkBefore22863Encoder,
        )
    }
)


# -- proofs --------------------------------------------------------------------------------


class EncodingMismatch(AssertionError):
    """z3 found a "counterexample" on which the concrete algorithm equals the spec: an encoding
    in this module does not mirror its implementation. A bug in flipcheck, never a finding."""


@dataclass(frozen=True)
class Encoding:
    """An algorithm's symbolic plan next to the spec's, over one set of state variables."""

    graph: JobGraph
    algorithm: str
    states: SymbolicStates
    plan: SymbolicPlan
    spec: SymbolicPlan

    def evaluate(self, states: Mapping[str, Sequence[str]]) -> tuple[PlanResult, PlanResult]:
        """(algorithm's, spec's) results the encodings give for concrete ``states``."""
        model = self.states.model(states)
        return self.plan.decode(model), self.spec.decode(model)


def encode(graph: JobGraph, algorithm: str, domain: str = "binary") -> Encoding:
    """Encode ``algorithm`` and the spec over fresh state variables for ``graph``'s topology."""
    if algorithm not in PLAN_ENCODERS:
        raise ValueError(f"unknown algorithm {algorithm!r} (expected one of {', '.join(sorted(PLAN_ENCODERS))})")
    states = SymbolicStates(graph, domain)
    return Encoding(graph, algorithm, states, PLAN_ENCODERS[algorithm](graph, states), encode_spec(graph, states))


@dataclass(frozen=True)
class ProofResult:
    """Outcome of :func:`prove_plan`. ``counterexample`` is the graph with the (shrunk) states
    on which the algorithm differs from the spec, ``differences`` the ``equals_spec`` violations
    the concrete algorithm shows there, ``query`` the label of the query z3 satisfied."""

    algorithm: str
    domain: str
    num_tasks: int
    values_per_task: int
    encode_seconds: float
    solve_seconds: float
    counterexample: JobGraph | None = None
    differences: tuple[Violation, ...] = ()
    query: str | None = None

    @property
    def proved(self) -> bool:
        return self.counterexample is None

    @property
    def seconds(self) -> float:
        return self.encode_seconds + self.solve_seconds

    def summary(self) -> str:
        """What differs on the counterexample, in one line (empty when proved)."""
        if self.counterexample is None:
            return ""
        return describe_difference(self.counterexample, self.algorithm)


def _concrete_differences(graph: JobGraph, algorithm: str) -> list[Violation]:
    return equals_spec(graph, PLAN_ALGORITHMS[algorithm](graph), checkpoint_plan(graph))


def describe_difference(graph: JobGraph, algorithm: str, limit: int = 4) -> str:
    """One line: how ``algorithm``'s result differs from the spec's on ``graph`` and which tasks
    are not RUNNING there."""
    result, expected = PLAN_ALGORITHMS[algorithm](graph), checkpoint_plan(graph)
    if isinstance(result, Declined) or isinstance(expected, Declined):
        outcome = lambda r: f"declines {r.reason}" if isinstance(r, Declined) else "returns a plan"  # noqa: E731
        what = f"{algorithm} {outcome(result)}, the spec {outcome(expected)}"
    else:
        what = "; ".join(v.message for v in equals_spec(graph, result, expected))
    others = [f"{t} {graph.state(t)}" for t in graph.tasks() if graph.state(t) != RUNNING]
    shown = ", ".join(others[:limit]) + (f" and {len(others) - limit} more" if len(others) > limit else "")
    return f"{what or 'no difference'} (not RUNNING: {shown or 'none'})"


def _with_only(graph: JobGraph, tasks: Iterable[TaskId]) -> JobGraph:
    """``graph`` with every task RUNNING except ``tasks``, which keep their states."""
    states = {v: [RUNNING] * graph.parallelism(v) for v in graph.topological_order}
    for vertex_id, index in tasks:
        states[vertex_id][index] = graph.state((vertex_id, index))
    return graph.with_states(states)


def _shrink(graph: JobGraph, algorithm: str, seconds: float) -> JobGraph:
    """Set as many tasks back to RUNNING as possible while the algorithm still differs from the
    spec (delta debugging over chunks, each candidate checked concretely), so the
    counterexample is small.

    Stops after ``seconds``: on jobs with thousands of tasks one run of the quadratic spec can
    take seconds. Whatever it returns is a checked counterexample.
    """
    deadline = time.perf_counter() + seconds
    others = [t for t in graph.tasks() if graph.state(t) != RUNNING]
    chunk = max(1, len(others) // 2)
    while others:
        kept: list[TaskId] = []
        for start in range(0, len(others), chunk):
            if time.perf_counter() > deadline:
                return graph
            candidate = _with_only(graph, kept + others[start + chunk :])
            if _concrete_differences(candidate, algorithm):
                graph = candidate
            else:
                kept.extend(others[start : start + chunk])
        others = kept
        if chunk == 1:
            break
        chunk = max(1, chunk // 2)
    return graph


def _check(query: z3.BoolRef) -> tuple[z3.CheckSatResult, z3.ModelRef | None]:
    # QF_FD bit-blasts Bools, enums and pseudo-Boolean constraints to SAT: much faster here than
    # the default SMT core (2000 tasks, all states: 2 s instead of 20 s).
    for solver in (z3.SolverFor("QF_FD"), z3.Solver()):
        solver.add(query)
        verdict = solver.check()
        if verdict == z3.sat:
            return verdict, solver.model()
        if verdict == z3.unsat:
            return verdict, None
    raise RuntimeError(f"z3 gave no answer: {solver.reason_unknown()}")


def prove_plan(
    graph: JobGraph, algorithm: str, domain: str = "binary", shrink: bool = True, shrink_seconds: float = 5.0
) -> ProofResult:
    """Prove that ``algorithm`` equals the spec on ``graph``'s topology for every assignment of
    task states in ``domain`` (``graph``'s own states are ignored; its
    ``checkpoints_after_tasks_finished`` flag is used). A counterexample is shrunk for at most
    ``shrink_seconds`` unless ``shrink`` is false.

    Raises :class:`EncodingMismatch` when z3's counterexample does not reproduce concretely.
    """
    started = time.perf_counter()
    encoding = encode(graph, algorithm, domain)
    queries = difference_queries(encoding.plan, encoding.spec)
    encoded = time.perf_counter()
    found = None
    for label, query in queries:
        verdict, model = _check(query)
        if verdict == z3.sat:
            found = label
            break
    solved = time.perf_counter()
    timing = dict(
        algorithm=algorithm, domain=domain, num_tasks=graph.num_tasks, values_per_task=encoding.states.values_per_task,
        encode_seconds=encoded - started, solve_seconds=solved - encoded,
    )
    if found is None:
        return ProofResult(**timing)
    counterexample = graph.with_states(encoding.states.decode(model))
    differences = _concrete_differences(counterexample, algorithm)
    if not differences:
        raise EncodingMismatch(_mismatch_report(encoding, model, counterexample))
    if shrink:
        counterexample = _shrink(counterexample, algorithm, shrink_seconds)
        differences = _concrete_differences(counterexample, algorithm)
    return ProofResult(**timing, counterexample=counterexample, differences=tuple(differences), query=found)


def _mismatch_report(encoding: Encoding, model: z3.ModelRef, counterexample: JobGraph) -> str:
    """Which encoding disagrees with its implementation on the states z3 chose."""
    wrong = []
    for name, symbolic, concrete in (
        (encoding.algorithm, encoding.plan, PLAN_ALGORITHMS[encoding.algorithm]),
        ("spec", encoding.spec, checkpoint_plan),
    ):
        if symbolic.decode(model) != concrete(counterexample):
            wrong.append(name)
    states = {v: list(s) for v, s in counterexample.states.items() if any(x != RUNNING for x in s)}
    culprit = " and ".join(wrong) or f"{encoding.algorithm} or spec"
    return f"the z3 encoding of {culprit} disagrees with the implementation on states {states} (others RUNNING)"

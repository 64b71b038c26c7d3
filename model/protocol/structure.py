"""The static structure of a job: a job graph expanded into tasks and channels (:class:`Job`).

Nothing here changes while the job runs: which task reads which channel, where a record goes
(J2), which sources emit which records, the exploration bounds (C3, F1) and the protocol's
switches (:class:`~.protocol.Protocol`). :class:`Job` also memoises the two pure functions the
rules call most: the coordinator's plan for a view (C2) and the barrier handler's step (J3).

>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> job = Job(JobGraph.build([("src", 2), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), records=1)
>>> [info.name for info in job.tasks], [info.records for info in job.tasks]
(['src[0]', 'src[1]', 'sink[0]'], [(0,), (1,), ()])
>>> job.channels[1].source, job.channels[1].target, job.channels[1].local
(1, 2, 1)
"""

from __future__ import annotations

from typing import NamedTuple

from .. import barriers as bar
from ..execution_graph import count_connections, input_connections
from ..jobgraph import FINISHED as FINISHED_STATE, RUNNING as RUNNING_STATE, JobGraph, vertex_flag_problem
from ..plan import CheckpointPlan
from .switches import Protocol

__all__ = ["MODES", "MAX_TASKS", "MAX_CHANNELS", "MAX_RECORDS", "TaskInfo", "ChannelInfo", "Job", "job_size_problem"]

MODES = bar.MODES

# Bounds on the job an exploration expands: every state holds a tuple per task and per channel
# and the records in flight, so a job beyond them cannot even be set up in memory (two vertices
# of parallelism 32,768 joined ALL_TO_ALL are a billion channels), let alone searched.
MAX_TASKS = 1_024
MAX_CHANNELS = 16_384
MAX_RECORDS = 10_000  # records of all sources together


class TaskInfo(NamedTuple):
    """The static description of one task."""

    index: int
    vertex: str
    subtask: int
    inputs: tuple          # global channel ids; the position is the barrier handler's channel number
    outputs: tuple         # global channel ids
    routes: tuple          # per output job edge: the channel ids a record may take (J2)
    records: tuple         # record ids a source emits; () for tasks with inputs
    two_phase_commit: bool
    union_list_state: bool
    sink_v2: bool = False  # a Sink V2 writer with its committer chained (S1-S4); implies two_phase_commit

    @property
    def name(self) -> str:
        return f"{self.vertex}[{self.subtask}]"

    @property
    def is_source(self) -> bool:
        return not self.inputs


class ChannelInfo(NamedTuple):
    """The static description of one channel (one upstream subtask to one downstream subtask)."""

    index: int
    source: int            # upstream task
    target: int            # downstream task
    local: int             # position in the downstream's inputs
    position: int          # position in the upstream's outputs
    pattern: str


class Job:
    """A job graph expanded into tasks and channels, with the exploration bounds and protocol.

    ``records`` is the default number of records per source subtask (a source vertex's
    ``"records"`` flag overrides it); ``checkpoints`` bounds checkpoints started while data
    remains (C3); ``failures`` bounds failovers; ``stop_with_savepoint`` lets the coordinator stop
    the job once with a savepoint without drain (C7, J9). ``periodic_timer`` replaces the C3
    bound by Flink's own timer (C3p): trace validation needs it, exploration never does.
    ``ids_per_failover`` bounds the checkpoint ids one failover may use up with that timer (F1b);
    trace validation reads it from the log (failed triggers without an id).
    ``coordinator_failures`` lets an operator coordinator's snapshot fail a checkpoint as it is
    triggered (C2f): trace validation turns it on, exploration never does.
    """

    def __init__(self, graph: JobGraph, mode: str = bar.ALIGNED, records: int = 1, checkpoints: int = 1,
                 failures: int = 0, protocol: Protocol | None = None, stop_with_savepoint: bool = False,
                 periodic_timer: bool = False, ids_per_failover: int = 1, coordinator_failures: bool = False):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
        for name, value in (("records", records), ("checkpoints", checkpoints), ("failures", failures),
                            ("ids_per_failover", ids_per_failover)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if stop_with_savepoint and (mode != bar.ALIGNED or failures):
            # Savepoints are aligned (FLINK-17467); a restart during stop-with-savepoint, and which
            # checkpoint it restores (FLIP-193), is not modelled.
            raise ValueError("stop_with_savepoint is modelled in aligned mode without failures")
        problem = job_size_problem(graph, records)
        if problem:
            raise ValueError(problem)
        self.graph = graph
        self.mode = mode
        self.stop_with_savepoint = stop_with_savepoint
        self.checkpoints = checkpoints
        self.failures = failures
        self.periodic_timer = periodic_timer
        self.ids_per_failover = ids_per_failover
        self.coordinator_failures = coordinator_failures
        self.protocol = protocol or Protocol()
        self.after_finished = graph.checkpoints_after_tasks_finished and self.protocol.checkpoints_after_tasks_finished
        self._expand(records)
        self._plans: dict = {}
        self._steps: dict = {}

    # -- static structure -------------------------------------------------------------------

    def _expand(self, default_records: int) -> None:
        graph = self.graph
        order = [(v, i) for v in graph.topological_order for i in range(graph.parallelism(v))]
        index = {task: n for n, task in enumerate(order)}
        channels, inputs, outputs, edge_channels = _expand_channels(graph, order, index)
        next_record = 0
        tasks = []
        for n, (vertex_id, subtask) in enumerate(order):
            routes = tuple(tuple(edge_channels[(n, id(e))]) for e in graph.outputs(vertex_id)
                           if (n, id(e)) in edge_channels)
            two_pc, sink_v2, union = _vertex_flags(graph, vertex_id)
            records = _source_records(graph, vertex_id, bool(inputs[n]), next_record, default_records)
            next_record += len(records)
            tasks.append(TaskInfo(index=n, vertex=vertex_id, subtask=subtask, inputs=tuple(inputs[n]),
                                  outputs=tuple(outputs[n]), routes=routes, records=records,
                                  two_phase_commit=two_pc or sink_v2, union_list_state=union, sink_v2=sink_v2))
        self.tasks: tuple[TaskInfo, ...] = tuple(tasks)
        self.channels: tuple[ChannelInfo, ...] = tuple(channels)
        self.task_index = index
        self.record_source = {r: t.index for t in tasks for r in t.records}
        self.sources = tuple(t.index for t in tasks if t.is_source)
        self.all_tasks = (1 << len(tasks)) - 1
        self.handler_configs = tuple(
            bar.Config(len(t.inputs), self.mode, self.after_finished) if t.inputs else None for t in tasks)
        self.paths = _path_counts(graph)

    def name(self, task: int) -> str:
        return self.tasks[task].name

    def vertex_tasks(self, vertex_id: str) -> range:
        first = self.task_index[(vertex_id, 0)]
        return range(first, first + self.graph.parallelism(vertex_id))

    def plan(self, known_finished: int):
        """The coordinator's plan for its view (C2), as bit masks: ``(trigger, wait, commit,
        finished)`` or the decline reason. Cached: the view is all the plan depends on."""
        result = self._plans.get(known_finished)
        if result is None:
            states = {v: [FINISHED_STATE if known_finished >> self.task_index[(v, i)] & 1 else RUNNING_STATE
                          for i in range(self.graph.parallelism(v))] for v in self.graph.topological_order}
            plan = self.protocol.plan(self.graph.with_states(states).with_flag(self.after_finished))
            if isinstance(plan, CheckpointPlan):
                mask = lambda tasks: sum(1 << self.task_index[t] for t in tasks)  # noqa: E731
                result = (mask(plan.tasks_to_trigger), mask(plan.tasks_to_wait_for), mask(plan.tasks_to_commit_to),
                          mask(plan.finished_tasks))
            else:
                result = plan.reason
            self._plans[known_finished] = result
        return result

    def handler_step(self, task: int, handler, event: tuple):
        """The barrier-handler spec's step for ``task`` (memoised: it is a pure function)."""
        key = (task, handler, event)
        result = self._steps.get(key)
        if result is None:
            result = self._steps[key] = bar.step(self.handler_configs[task], handler, event)
        return result

    def __repr__(self) -> str:
        return (f"Job({self.graph!r}, mode={self.mode!r}, checkpoints={self.checkpoints}, failures={self.failures}, "
                f"protocol={self.protocol.name!r})")


def job_size_problem(graph: JobGraph, default_records: int) -> str | None:
    """Why ``graph`` is too large to expand into a :class:`Job` (None when it is not), naming
    the size and the limit; cheap: it never builds the channels it counts."""
    tasks = graph.num_tasks
    if tasks > MAX_TASKS:
        return f"too large to explore: {tasks:,} tasks (limit {MAX_TASKS:,})"
    channels = count_connections(graph, stop_above=MAX_CHANNELS)
    if channels > MAX_CHANNELS:
        return f"too large to explore: {channels:,} channels (limit {MAX_CHANNELS:,})"
    records = 0
    for vertex in graph.vertices:
        if not graph.inputs(vertex.id):
            count = vertex.extra.get("records", default_records)
            records += vertex.parallelism * count if isinstance(count, int) else 0
    if records > MAX_RECORDS:
        return f"too large to explore: {records:,} records from the sources (limit {MAX_RECORDS:,})"
    return None


def _flag(extra, key: str, vertex_id: str) -> bool:
    value = extra.get(key, False)
    problem = vertex_flag_problem(key, value)
    if problem:
        raise ValueError(f"vertex {vertex_id!r}: {key!r} {problem}")
    return value


def _expand_channels(graph: JobGraph, order: list, index: dict) -> tuple[list, dict, dict, dict]:
    """The channels (one per upstream subtask and downstream subtask an edge connects), each
    task's input and output channels in order, and per (upstream task, job edge) the channels a
    record may take (J2)."""
    channels: list[ChannelInfo] = []
    inputs: dict[int, list[int]] = {n: [] for n in range(len(order))}
    outputs: dict[int, list[int]] = {n: [] for n in range(len(order))}
    edge_channels: dict[tuple, list[int]] = {}
    for n, task in enumerate(order):
        for edge, upstream in input_connections(graph, task):
            u = index[upstream]
            c = len(channels)
            channels.append(ChannelInfo(index=c, source=u, target=n, local=len(inputs[n]),
                                        position=len(outputs[u]), pattern=edge.pattern))
            inputs[n].append(c)
            outputs[u].append(c)
            edge_channels.setdefault((u, id(edge)), []).append(c)
    return channels, inputs, outputs, edge_channels


def _vertex_flags(graph: JobGraph, vertex_id: str) -> tuple[bool, bool, bool]:
    """The vertex's ``two_phase_commit_sink``, ``sink_v2`` and ``union_list_state`` flags
    (ValueError for a sink flag on a vertex with outputs or without inputs, or both sink kinds)."""
    extra = graph.vertex(vertex_id).extra
    two_pc = _flag(extra, "two_phase_commit_sink", vertex_id)
    sink_v2 = _flag(extra, "sink_v2", vertex_id)
    union = _flag(extra, "union_list_state", vertex_id)
    for key, on in (("two_phase_commit_sink", two_pc), ("sink_v2", sink_v2)):
        if on and graph.outputs(vertex_id):
            raise ValueError(f"vertex {vertex_id!r}: {key} on a vertex with outputs")
        # A sink commits what its input channels bring (J2); a source's own records never reach
        # it, so exactly-once would flag every one. A chained source and sink is source -> sink.
        if on and not graph.inputs(vertex_id):
            raise ValueError(f"vertex {vertex_id!r}: {key} on a vertex without inputs (a source); "
                             "draw a chained source and sink as two vertices, source -> sink")
    if two_pc and sink_v2:
        raise ValueError(f"vertex {vertex_id!r}: two_phase_commit_sink and sink_v2 are two sink kinds, set one")
    return two_pc, sink_v2, union


def _source_records(graph: JobGraph, vertex_id: str, has_inputs: bool, first: int, default_records: int) -> tuple:
    """J1: the record ids a subtask of ``vertex_id`` emits, numbered from ``first``; () for a task
    with inputs (ValueError for a ``"records"`` flag there or a bad one on a source)."""
    extra = graph.vertex(vertex_id).extra
    if has_inputs:
        if "records" in extra:
            raise ValueError(f"vertex {vertex_id!r}: \"records\" is only for sources (vertices without inputs)")
        return ()
    count = extra.get("records", default_records)
    problem = vertex_flag_problem("records", count)
    if problem:
        raise ValueError(f"vertex {vertex_id!r}: \"records\" {problem}")
    return tuple(range(first, first + count))


def _path_counts(graph: JobGraph) -> dict[tuple[str, str], int]:
    """Number of job-graph paths from each vertex to each vertex: how often a record of a
    source must reach a sink vertex (once per path, J2)."""
    paths: dict[tuple[str, str], int] = {}
    for v in graph.topological_order:
        paths[(v, v)] = 1
    for target in graph.topological_order:
        for edge in graph.inputs(target):
            for v in graph.topological_order:
                if (v, edge.source) in paths:
                    paths[(v, target)] = paths.get((v, target), 0) + paths[(v, edge.source)]
    return paths

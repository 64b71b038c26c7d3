"""Coverage of the whole-job model by real runs: one finite abstraction of its states (issue 26, item 2).

A real run that ``conform`` explains is a path through the model; an exploration at a small
bound is a graph of the model. To compare the two, both are mapped through the same function,
:func:`abstract_state`, which keeps what decides the protocol's next steps and forgets what only
makes states numerous (docs/coverage.md says what and why):

* per task: its phase, whether a checkpoint of it is under way, and where its final checkpoint
  is (none yet / taken, not yet completed / completed and notified);
* per channel: the kinds of the messages it holds, in order, repeats collapsed
  (``("B", "EOD")``), never the records or ids;
* per task: whether a trigger RPC or a completion notification is on its way to it;
* the coordinator: whether a checkpoint is pending, whether one has completed, whether the latest
  abort is newer than every completion, whether FINISHED reports are on their way, whether a
  stop-with-savepoint stopped the job, and the failovers so far.

That is the **whole-job** abstraction (``"job"``). Its transitions multiply with the tasks: tens
of thousands for a six-task graph's first 20,000 states, of which a real run passes through a
hundred. Coverage is therefore counted by default in **task views** (``"task"``,
:class:`TaskView`): a step as the one who takes it sees it. A task sees its own abstract task,
what its input channels hold (per upstream vertex, the distinct kinds) and the failovers so far;
the coordinator sees its own summary and the phases of each vertex's tasks (its plan reads them).
Subtasks of a vertex are merged. Hundreds of transitions per graph and mode.

An abstract transition is ``(abstract state, step kind, abstract successor)``; the step kind is
the label's first word (``"receive"`` with the message kind: ``"receive B"``).
:func:`targets` are the abstract transitions of the model's own exploration
(:func:`~.protocol_explore.explore_job`); :func:`covered` those a behaviour passes through, for
example the one trace validation found for a real run (``Verdict.behaviour``);
:func:`coverage_of` splits them into covered targets and steps outside the targets.

>>> from types import MappingProxyType
>>> from flipcheck.model.jobgraph import JobGraph, JobVertex, ALL_TO_ALL
>>> from flipcheck.model.protocol import Job, initial_state
>>> graph = JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)])
>>> job = Job(graph, records=0, checkpoints=1)
>>> print(describe(job, abstract_state(job, initial_state(job))))
src[0]:RUNNING sink[0]:RUNNING | src[0]->sink[0]:empty | no pending, none completed, failovers 0
>>> found = targets(job)
>>> len(found) > 0, found == targets(job)
(True, True)
>>> sorted({kind for _, kind, _ in found})[:4]
['ack', 'end-of-data', 'finish', 'notify']
>>> report = coverage_of(found, covered(job, [("end-of-data", 0), ("receive", 1, 0, ("EOD",))]))
>>> report.covered, report.outside
(2, 0)
>>> t = sorted(covered(job, [("end-of-data", 0)]))[0]
>>> print(describe(job, t.source), "--" + t.kind + "->", describe(job, t.target))
src:RUNNING | no inputs | failovers 0 --end-of-data-> src:END_OF_DATA | no inputs | failovers 0
>>> len(targets(job, abstraction="task")) < len(targets(job, abstraction="job"))
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from flipcheck.model.protocol import PHASE_NAMES, Job, JobState, initial_state, successors

__all__ = ["AbstractTask", "AbstractState", "Transition", "TaskView", "ABSTRACTIONS", "DEFAULT_ABSTRACTION",
           "viewpoint_of", "task_view", "transition_of", "with_vertex_names", "CoverageReport", "abstract_state", "step_kind",
           "describe", "targets", "explored_targets", "explored_transitions", "shortest_paths", "transition_key", "transition_from_key", "covered", "coverage_of", "bounded_job", "run_coverage", "coverage_document"]

# Where a task's final checkpoint is (flip147 facts §3.1 finalCheckpointMinId).
NO_FINAL, FINAL_TAKEN, FINAL_DONE = "none", "taken", "done"


class AbstractTask(NamedTuple):
    phase: str                 # PHASE_NAMES
    checkpointing: bool        # a snapshot waits for barriers or an acknowledgement is on its way (J5)
    final: str                 # NO_FINAL / FINAL_TAKEN / FINAL_DONE (J6/J7)
    rpc: bool                  # a trigger RPC is on its way to it (C4)
    notification: bool         # a completion notification is on its way to it (J8)


class AbstractState(NamedTuple):
    tasks: tuple               # AbstractTask per task
    channels: tuple            # per channel: message kinds, in order, repeats collapsed
    pending: bool              # a checkpoint is in progress (C2)
    completed: bool            # some checkpoint completed
    aborted_last: bool         # the newest abort is newer than every completed checkpoint
    reports_on_way: bool       # FINISHED reports not yet at the coordinator (C1)
    stopped: bool              # a stop-with-savepoint completed (C7)
    failovers: int


class Transition(NamedTuple):
    source: AbstractState      # or a TaskView (the "task" abstraction)
    kind: str
    target: AbstractState


class TaskView(NamedTuple):
    """A state as the one that takes a step sees it (the ``"task"`` abstraction: docs/coverage.md):
    a task sees itself, what its input channels hold and the failovers so far (a restart restores
    it), never the coordinator's bookkeeping or the other tasks; the coordinator sees its own
    state and the phases of each vertex's tasks (its plan reads them, C2). Its size does not grow
    with the job's parallelism: hundreds of transitions for the standard graphs, where the
    whole-job abstraction has tens of thousands in the same exploration."""

    actor: str                 # the acting task's vertex (its subtasks merged), or "coordinator"
    task: tuple                # the actor's AbstractTask; () for the coordinator
    around: tuple              # a task: per upstream vertex, the kinds its channels into the actor hold
                               # (the distinct ones, sorted); the coordinator: per vertex, its tasks' phases
    coordinator: tuple         # the coordinator only: pending, some completed, aborted last, reports on
                               # their way, stopped; () for a task
    failovers: int


# What coverage counts: "task" (each step as its acting task sees it, TaskView) or "job" (the
# whole job's AbstractState); docs/coverage.md compares them.
ABSTRACTIONS = ("task", "job")
DEFAULT_ABSTRACTION = "task"
# The steps a task takes (its index is the label's second item); the others are the coordinator's.
_TASK_STEPS = frozenset({"emit", "end-of-data", "receive", "poll-released", "finish", "notify", "rpc", "ack",
                         "report-finished", "fail", "fail-decline", "shared-decline"})


def _channel_kinds(queue: tuple) -> tuple:
    kinds: list = []
    for message in queue:
        if not kinds or kinds[-1] != message[0]:
            kinds.append(message[0])
    return tuple(kinds)


def _abstract_task(s: JobState, t: int) -> AbstractTask:
    ts = s.tasks[t]
    final = FINAL_DONE if ts.final_checkpoint_completed else FINAL_TAKEN if ts.final_min else NO_FINAL
    return AbstractTask(PHASE_NAMES[ts.phase], ts.checkpoint_pending, final, bool(s.rpcs[t]), bool(s.notifications[t]))


def abstract_state(job: Job, s: JobState) -> AbstractState:
    """The abstract state of ``s`` (the module docstring lists what it keeps)."""
    tasks = [_abstract_task(s, t) for t in range(len(s.tasks))]
    c = s.coordinator
    return AbstractState(tuple(tasks), tuple(_channel_kinds(q) for q in s.queues), c.pending is not None,
                         c.completed > 0, c.last_aborted > c.completed, bool(c.finished_reports), c.stopped,
                         c.failovers)


def viewpoint_of(label: tuple) -> int | None:
    """The task from whose view the step ``label`` is abstracted, or None for the coordinator's:
    an acknowledgement's arrival is seen from the task that sent it (the sequence chart draws it
    in the coordinator's lane: ``flipcheck.render.protocol_labels.chart_lane_of``)."""
    return label[1] if label[0] in _TASK_STEPS else None


def task_view(job: Job, s: JobState, actor: int | None) -> TaskView:
    """``s`` as the task ``actor`` sees it (None: as the coordinator does): :class:`TaskView`."""
    c = s.coordinator
    if actor is None:
        phases: dict = {}
        for info, ts in zip(job.tasks, s.tasks):
            phases.setdefault(info.vertex, set()).add(PHASE_NAMES[ts.phase])
        return TaskView("coordinator", (), tuple((v, tuple(sorted(p))) for v, p in phases.items()),
                        (c.pending is not None, c.completed > 0, c.last_aborted > c.completed,
                         bool(c.finished_reports), c.stopped), c.failovers)
    task = _abstract_task(s, actor)
    inputs: dict = {}
    for channel in job.tasks[actor].inputs:
        upstream = job.tasks[job.channels[channel].source].vertex
        inputs.setdefault(upstream, set()).add(_channel_kinds(s.queues[channel]))
    return TaskView(job.tasks[actor].vertex, task, tuple((v, tuple(sorted(k))) for v, k in sorted(inputs.items())),
                    (), c.failovers)


def transition_of(job: Job, s: JobState, label: tuple, nxt: JobState, abstraction: str = DEFAULT_ABSTRACTION):
    """The abstract transition of the step ``label`` from ``s`` to ``nxt`` in ``abstraction``."""
    if abstraction == "job":
        return Transition(abstract_state(job, s), step_kind(label), abstract_state(job, nxt))
    actor = viewpoint_of(label)
    return Transition(task_view(job, s, actor), step_kind(label), task_view(job, nxt, actor))


def with_vertex_names(t: Transition, names: dict) -> Transition:
    """``t`` with the vertex names of its task views replaced by ``names`` (a job whose vertices
    Flink named, to the graph file's): a whole-job transition names no vertex and stays as it is."""
    if not isinstance(t.source, TaskView):
        return t

    def renamed(view: TaskView) -> TaskView:
        around = tuple((names.get(v, v), rest) for v, rest in view.around)
        if view.actor != "coordinator":   # a task's upstream vertices go by name; the coordinator's by job order
            around = tuple(sorted(around))
        return view._replace(actor=names.get(view.actor, view.actor), around=around)

    return Transition(renamed(t.source), t.kind, renamed(t.target))


def step_kind(label: tuple) -> str:
    """What kind of step ``label`` is: its first word; a polled message adds its kind."""
    if label[0] == "receive":
        return f"receive {label[3][0]}"
    return label[0]


def _describe_task(at: AbstractTask) -> str:
    return (at.phase + ("+ckpt" if at.checkpointing else "") + (f" final {at.final}" if at.final != NO_FINAL else "")
            + (" rpc" if at.rpc else "") + (" notify" if at.notification else ""))


def _describe_coordinator(pending, completed, aborted_last, reports_on_way, stopped) -> str:
    return ", ".join(filter(None, ["pending" if pending else "no pending", "completed" if completed else "none completed",
                                   "aborted last" if aborted_last else "",
                                   "reports on their way" if reports_on_way else "", "stopped" if stopped else ""]))


def describe(job: Job, a) -> str:
    """One line for a person: tasks, channels, coordinator (an :class:`AbstractState`); or the
    actor, what it sees around it, the coordinator (a :class:`TaskView`)."""
    if isinstance(a, TaskView):
        if a.actor == "coordinator":
            around = " ".join(f"{v}:{'/'.join(phases)}" for v, phases in a.around)
            return f"coordinator | {around} | {_describe_coordinator(*a.coordinator)}, failovers {a.failovers}"
        inputs = " ".join(f"{v}->:" + "/".join(",".join(k) or "empty" for k in kinds) for v, kinds in a.around)
        return f"{a.actor}:{_describe_task(AbstractTask(*a.task))} | {inputs or 'no inputs'} | failovers {a.failovers}"
    tasks = " ".join(f"{job.name(t)}:{_describe_task(at)}" for t, at in enumerate(a.tasks))
    channels = " ".join(f"{job.name(c.source)}->{job.name(c.target)}:{','.join(kinds) or 'empty'}"
                        for c, kinds in zip(job.channels, a.channels))
    coordinator = (_describe_coordinator(a.pending, a.completed, a.aborted_last, a.reports_on_way, a.stopped)
                   + f", failovers {a.failovers}")
    return f"{tasks} | {channels} | {coordinator}"


def targets(job: Job, max_states: int | None = None, abstraction: str = DEFAULT_ABSTRACTION) -> frozenset:
    """The abstract transitions of the model's exploration of ``job`` (its bounds are the small
    bound): every step from every state the explorer stored. The explorer stores canonical
    states (ids renamed, end states collapsed); both keep every relation the abstraction reads,
    and a step's successor is the model's own, never a representative."""
    return explored_targets(job, max_states, abstraction)[0]


def explored_targets(job: Job, max_states: int | None = None,
                     abstraction: str = DEFAULT_ABSTRACTION) -> tuple[frozenset, bool]:
    """:func:`targets`, and whether the exploration was complete (not cut by ``max_states``:
    the targets are then its breadth-first prefix's)."""
    from .protocol_explore import explore_job

    graph = explore_job(job, liveness=False, max_states=max_states).graph
    return frozenset(t for *_, t in explored_transitions(job, graph, abstraction)), graph.complete


def explored_transitions(job: Job, graph, abstraction: str = DEFAULT_ABSTRACTION):
    """``(state number, label, transition)`` of every step from every state of an exploration's
    ``graph`` (:func:`~.protocol_explore.explore_job`), in breadth-first order: the first step to
    reach a transition is on a shortest path to it (``graph.path_to``)."""
    for i, s in enumerate(graph.states):
        for label, nxt, _ in successors(job, s):
            yield i, label, transition_of(job, s, label, nxt, abstraction)


def shortest_paths(job: Job, wanted: Iterable[Transition], max_states: int | None = None,
                   abstraction: str = DEFAULT_ABSTRACTION) -> dict:
    """For each of the ``wanted`` transitions the exploration of ``job`` reaches (the search
    :func:`targets` runs), the labels of a shortest model path that ends with it (canonical
    labels: :func:`~.protocol_explore.replay` takes them): what guidance translates into faults."""
    from .protocol_explore import explore_job

    wanted = set(wanted)
    graph = explore_job(job, liveness=False, max_states=max_states).graph
    paths: dict = {}
    for i, label, transition in explored_transitions(job, graph, abstraction):
        if transition in wanted and transition not in paths:
            paths[transition] = graph.path_to(i)[0] + [label]
            if len(paths) == len(wanted):
                break
    return paths


def transition_key(t: Transition) -> str:
    """A transition as one JSON string (sorted sets of them travel between processes and files);
    :func:`transition_from_key` reads it back."""
    import json

    return json.dumps(t, separators=(",", ":"))


def transition_from_key(key: str) -> Transition:
    import json

    source, kind, target = json.loads(key)

    def state(parts):
        if isinstance(parts[0], str):          # a TaskView: actor, task, around, coordinator, failovers
            actor, task, around, coordinator, failovers = parts
            # a task's around holds kind sequences (lists in JSON), the coordinator's phase names
            return TaskView(actor, AbstractTask(*task) if task else (),
                            tuple((name, tuple(tuple(k) if isinstance(k, list) else k for k in kinds))
                                  for name, kinds in around), tuple(coordinator), failovers)
        tasks, channels, *rest = parts
        return AbstractState(tuple(AbstractTask(*task) for task in tasks), tuple(tuple(c) for c in channels), *rest)

    return Transition(state(source), kind, state(target))


def covered(job: Job, labels: Sequence[tuple], steps: Sequence | None = None,
            abstraction: str = DEFAULT_ABSTRACTION) -> frozenset:
    """The abstract transitions a behaviour of ``job`` passes through: ``labels`` from the
    initial state (a :class:`~.protocol_trace_validation.Verdict`'s ``behaviour``), or its
    ``steps`` already replayed (:func:`~.protocol_trace_validation.replay_behaviour`)."""
    from .protocol_trace_validation import replay_behaviour

    steps = replay_behaviour(job, labels) if steps is None else steps
    found = set()
    before = initial_state(job)
    for step in steps:
        found.add(transition_of(job, before, step.label, step.state, abstraction))
        before = step.state
    return frozenset(found)


@dataclass
class CoverageReport:
    """Covered targets and the run's transitions outside the targets (a run may take more
    checkpoints or failovers than the small bound, or steps only trace validation takes, past
    the job's end), kept apart so neither inflates the other."""

    targets: frozenset
    reached: frozenset
    inside: frozenset = field(init=False)
    outside_targets: frozenset = field(init=False)

    def __post_init__(self):
        self.inside = self.reached & self.targets
        self.outside_targets = self.reached - self.targets

    @property
    def covered(self) -> int:
        return len(self.inside)

    @property
    def outside(self) -> int:
        return len(self.outside_targets)

    @property
    def missing(self) -> frozenset:
        return self.targets - self.inside

    def summary(self) -> str:
        return (f"covered {self.covered}/{len(self.targets)} targets; "
                f"{self.outside} transitions of the run outside them")


def coverage_of(target_set: Iterable, *runs: Iterable) -> CoverageReport:
    """Coverage of ``target_set`` by the union of the runs' :func:`covered` transitions."""
    reached: set = set()
    for run in runs:
        reached |= set(run)
    return CoverageReport(frozenset(target_set), frozenset(reached))


def bounded_job(job: Job, checkpoints: int = 1, failures: int | None = None) -> Job:
    """The job whose exploration gives the targets of runs validated against ``job`` (the model
    job of ``conform``: Flink's periodic timer, no records): the same graph, mode, failures and
    protocol (``failures`` another bound on failovers), with the timer replaced by the small
    bound C3 (``checkpoints``), so that the exploration ends.

    >>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
    >>> validated = Job(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]),
    ...                 records=0, checkpoints=0, failures=1, periodic_timer=True)
    >>> bounded = bounded_job(validated)
    >>> bounded.periodic_timer, bounded.checkpoints, bounded.failures
    (False, 1, 1)
    """
    records = max((len(t.records) for t in job.tasks), default=0)
    return Job(job.graph, mode=job.mode, records=records, checkpoints=checkpoints,
               failures=job.failures if failures is None else failures,
               protocol=job.protocol, stop_with_savepoint=job.stop_with_savepoint)


def run_coverage(job: Job, behaviour: Sequence[tuple], checkpoints: int = 1, failures: int | None = None,
                 max_states: int | None = None, abstraction: str = DEFAULT_ABSTRACTION) -> CoverageReport:
    """How much of the targets of ``job`` at the small bound (:func:`bounded_job`) the
    ``behaviour`` trace validation found for a run covers (``conform``'s ``verdict.behaviour``
    and ``job``); ``max_states`` caps the exploration (the targets are then its breadth-first
    prefix: a graph of four or more tasks explores for minutes in full)."""
    return coverage_of(targets(bounded_job(job, checkpoints, failures), max_states, abstraction),
                       covered(job, behaviour, abstraction=abstraction))


def coverage_document(job: Job, report: CoverageReport, missing_limit: int = 20) -> dict:
    """A report as JSON: ``{"covered", "targets", "outside", "missing": N, "missing_first":
    [one line per target, at most missing_limit, the shortest ones first]}``. ``outside`` counts
    the run's transitions beyond the small bound (Flink's timer takes more checkpoints than C3),
    apart, never added to ``covered``."""
    missing = sorted(report.missing, key=lambda t: (t.source.failovers, describe(job, t.source), t.kind))
    return {"covered": report.covered, "targets": len(report.targets), "outside": report.outside,
            "missing": len(missing),
            "missing_first": [f"{describe(job, t.source)} --{t.kind}--> {describe(job, t.target)}"
                              for t in missing[:missing_limit]]}

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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from flipcheck.model.protocol import PHASE_NAMES, Job, JobState, initial_state, successors

__all__ = ["AbstractTask", "AbstractState", "Transition", "CoverageReport", "abstract_state", "step_kind",
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
    source: AbstractState
    kind: str
    target: AbstractState


def _channel_kinds(queue: tuple) -> tuple:
    kinds: list = []
    for message in queue:
        if not kinds or kinds[-1] != message[0]:
            kinds.append(message[0])
    return tuple(kinds)


def abstract_state(job: Job, s: JobState) -> AbstractState:
    """The abstract state of ``s`` (the module docstring lists what it keeps)."""
    tasks = []
    for t, ts in enumerate(s.tasks):
        final = FINAL_DONE if ts.final_checkpoint_completed else FINAL_TAKEN if ts.final_min else NO_FINAL
        tasks.append(AbstractTask(PHASE_NAMES[ts.phase], ts.checkpoint_pending, final, bool(s.rpcs[t]),
                                  bool(s.notifications[t])))
    c = s.coordinator
    return AbstractState(tuple(tasks), tuple(_channel_kinds(q) for q in s.queues), c.pending is not None,
                         c.completed > 0, c.last_aborted > c.completed, bool(c.finished_reports), c.stopped,
                         c.failovers)


def step_kind(label: tuple) -> str:
    """What kind of step ``label`` is: its first word; a polled message adds its kind."""
    if label[0] == "receive":
        return f"receive {label[3][0]}"
    return label[0]


def describe(job: Job, a: AbstractState) -> str:
    """One line for a person: tasks, channels, coordinator."""
    tasks = " ".join(f"{job.name(t)}:{at.phase}" + ("+ckpt" if at.checkpointing else "")
                     + (f" final {at.final}" if at.final != NO_FINAL else "") + (" rpc" if at.rpc else "")
                     + (" notify" if at.notification else "") for t, at in enumerate(a.tasks))
    channels = " ".join(f"{job.name(c.source)}->{job.name(c.target)}:{','.join(kinds) or 'empty'}"
                        for c, kinds in zip(job.channels, a.channels))
    coordinator = ", ".join(filter(None, ["pending" if a.pending else "no pending",
                                          "completed" if a.completed else "none completed",
                                          "aborted last" if a.aborted_last else "",
                                          "reports on their way" if a.reports_on_way else "",
                                          "stopped" if a.stopped else "", f"failovers {a.failovers}"]))
    return f"{tasks} | {channels} | {coordinator}"


def targets(job: Job, max_states: int | None = None) -> frozenset:
    """The abstract transitions of the model's exploration of ``job`` (its bounds are the small
    bound): every step from every state the explorer stored. The explorer stores canonical
    states (ids renamed, end states collapsed); both keep every relation the abstraction reads,
    and a step's successor is the model's own, never a representative."""
    return explored_targets(job, max_states)[0]


def explored_targets(job: Job, max_states: int | None = None) -> tuple[frozenset, bool]:
    """:func:`targets`, and whether the exploration was complete (not cut by ``max_states``:
    the targets are then its breadth-first prefix's)."""
    from .protocol_explore import explore_job

    graph = explore_job(job, liveness=False, max_states=max_states).graph
    return frozenset(t for *_, t in explored_transitions(job, graph)), graph.complete


def explored_transitions(job: Job, graph):
    """``(state number, label, transition)`` of every step from every state of an exploration's
    ``graph`` (:func:`~.protocol_explore.explore_job`), in breadth-first order: the first step to
    reach a transition is on a shortest path to it (``graph.path_to``)."""
    for i, s in enumerate(graph.states):
        source = abstract_state(job, s)
        for label, nxt, _ in successors(job, s):
            yield i, label, Transition(source, step_kind(label), abstract_state(job, nxt))


def shortest_paths(job: Job, wanted: Iterable[Transition], max_states: int | None = None) -> dict:
    """For each of the ``wanted`` transitions the exploration of ``job`` reaches (the search
    :func:`targets` runs), the labels of a shortest model path that ends with it (canonical
    labels: :func:`~.protocol_explore.replay` takes them): what guidance translates into faults."""
    from .protocol_explore import explore_job

    wanted = set(wanted)
    graph = explore_job(job, liveness=False, max_states=max_states).graph
    paths: dict = {}
    for i, label, transition in explored_transitions(job, graph):
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
        tasks, channels, *rest = parts
        return AbstractState(tuple(AbstractTask(*task) for task in tasks), tuple(tuple(c) for c in channels), *rest)

    return Transition(state(source), kind, state(target))


def covered(job: Job, labels: Sequence[tuple], steps: Sequence | None = None) -> frozenset:
    """The abstract transitions a behaviour of ``job`` passes through: ``labels`` from the
    initial state (a :class:`~.protocol_trace_validation.Verdict`'s ``behaviour``), or its
    ``steps`` already replayed (:func:`~.protocol_trace_validation.replay_behaviour`)."""
    from .protocol_trace_validation import replay_behaviour

    steps = replay_behaviour(job, labels) if steps is None else steps
    found = set()
    before = abstract_state(job, initial_state(job))
    for step in steps:
        after = abstract_state(job, step.state)
        found.add(Transition(before, step_kind(step.label), after))
        before = after
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
                 max_states: int | None = None) -> CoverageReport:
    """How much of the targets of ``job`` at the small bound (:func:`bounded_job`) the
    ``behaviour`` trace validation found for a run covers (``conform``'s ``verdict.behaviour``
    and ``job``); ``max_states`` caps the exploration (the targets are then its breadth-first
    prefix: a graph of four or more tasks explores for minutes in full)."""
    return coverage_of(targets(bounded_job(job, checkpoints, failures), max_states), covered(job, behaviour))


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

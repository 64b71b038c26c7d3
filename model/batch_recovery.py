"""Specification of batch job recovery after a JobManager failover (FLIP-383; seed 004; recovery facts §4).

A batch job is a small DAG of job vertices with blocking exchanges. Its tasks (execution
vertices) run on TaskManagers and write result partitions there; source vertices read splits
from their operator coordinator (a FLIP-27 ``SourceCoordinator``). The JobManager records its
progress as an event log (seed: "an event-based method to record the state of JM") that is
flushed now and then; the JM may crash at any point, losing what was not flushed, its running
tasks and its coordinators; TaskManagers keep finished partitions (seed: "the shuffle service
and TM will retain the partitions") unless they are lost too. A new JM replays the log,
restores the coordinators, reconciles with the partitions the TaskManagers report within the
timeout, and continues; the job must end with the result of a run without failures.

:func:`step` is the whole specification, a pure function ``(config, state, action) -> state``;
:func:`enabled` says which actions can happen next. The rules (each names its source):

* B1 ``start t``: a CREATED task whose producers are FINISHED with tracked partitions is
  deployed (blocking exchanges: consumers start after producers finished).
* B2 ``assign t``: the source coordinator gives its smallest unassigned split to a running
  source task and records the assignment (recovery facts §3.2 ``SplitAssignmentTracker``).
* B3 ``finish t``: a task finishes (a source once its coordinator has no split left); its output
  partition (a sink: its written result) holds the records it read, routed by split to one
  consumer per downstream vertex. The JM adds its job vertex to the vertices needing a
  coordinator snapshot and, if the job vertex is now finished **or** the min-pause elapsed,
  snapshots the coordinators of those vertices (recovery facts §4.4 "Recording" 1-2; seed "min-pause ... to
  control the minimum interval between snapshots"); it writes ``ExecutionVertexFinishedEvent``
  with the snapshot (or none) into the write buffer (recovery facts §4.5 step 3).
* B4 ``elapse``: the min-pause passes (recovery facts §4.2 ``execution.batch.job-recovery.snapshot.min-pause``).
* B5 ``flush``: the buffer reaches the file (recovery facts §4.3 ``FsBatchFlushOutputStream``).
* B6 ``crash``: the JM dies: the buffer, running tasks, coordinators and the partition
  tracker are gone; the log and the TaskManagers' partitions and the sinks' output stay (seed
  "Proposed Changes" 2). At most ``config.crashes``.
* B7 ``lose t``: while no JM runs, a partition is lost (its TaskManager died or reconnects after
  the timeout: seed "those that time out will be rejected"). At most ``config.losses``.
* B8 ``restart``: a new JM. An empty log means a fresh start (recovery facts §4.5 ``needRecover``):
  ``hasJobEvents`` counts every event, so with ``config.initialized_events`` (the
  ``ExecutionJobVertexInitializedEvent`` each JobMaster writes for every job vertex when it starts
  scheduling, recovery facts §4.8) a flushed start alone makes the next JM recover. Else
  RECONCILING: replay — ``ExecutionVertexFinishedEvent`` puts the task into an insertion-ordered
  map (a Java ``LinkedHashMap``: a put of a present key keeps its place), ``ExecutionVertexResetEvent``
  removes it; the **trailing** entries without coordinator snapshot are dropped, the rest are
  FINISHED (recovery facts §4.5 step 3 b-c; invariant "A vertex is restored as FINISHED unless ..."). Each
  coordinator gets its latest snapshot among those entries (fresh if none: recovery facts §4.5 step 3d);
  every unfinished task of a vertex with a coordinator is reset with its downstream consumers
  (``considerResultConsumable=false``) and ``subtaskReset`` gives its splits back (seed "it also
  needs to call subtaskReset for the non-finished tasks").
* B9 ``report t``: a TaskManager reports a retained partition within the timeout (recovery facts §4
  step 4 ``getPartitionWithMetrics``).
* B10 ``reconcile``: the wait ends (enough partitions, or the timeout: any time). Partitions of
  unfinished producers are released; of the others, those needed by an unfinished consumer are
  reserved (tracked); needed but not reported ones are *missing* and their producers are reset
  with ``considerResultConsumable=true`` (producers of unavailable inputs, transitively, and
  consumers downstream); partitions reported late are released (recovery facts §4.5 step 4-5). After it
  every task is CREATED or FINISHED (recovery facts §4.5 step 6) and the JM runs.
* B11 ``fail_recovery``: partition recovery throws (recovery facts §4.5 step 7, at most
  ``config.recovery_failures``): the event log is cleared, a global failure cancels every
  unfinished task and releases the finished ones' partitions, and the job restarts from scratch
  after the restart delay (B12). One global failover per failed recovery.
* B12 ``global_restart``: the delayed restart: every task CREATED, coordinators recreated, a
  reset event for every task written (recovery facts §4.4 "Vertex reset ... writes ExecutionVertexResetEvent").

No event is written while RECONCILING (recovery facts §4.6 invariant ``checkState(!isRecovering())``).

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> cfg = Config(JobGraph.build([("src", 1), ("sink", 1)], [("src", "sink", ALL_TO_ALL)]), splits=1)
>>> s = run(cfg, [("start", 0), ("assign", 0), ("finish", 0)])
>>> s.buffer                       # src#0 finished (attempt 1) with a snapshot: its job vertex finished
(('finished', 0, (('src', (frozenset(), ((('src', 0),),))),), 1),)
>>> s = run(cfg, [("crash",), ("restart",)], s)      # not flushed: the log is empty, a fresh start
>>> s.phase, s.status
('running', ('CREATED', 'CREATED'))
>>> s = run(cfg, [("start", 0), ("assign", 0), ("finish", 0), ("flush",), ("start", 1), ("finish", 1)], s)
>>> s.phase, result(cfg, s) == failure_free_result(cfg)
('done', True)
"""

from __future__ import annotations

from functools import cache
from typing import Iterable, NamedTuple

from .actions import ActionSystem
from .actions import run as run_actions
from .execution_graph import predecessors
from .jobgraph import JobGraph

__all__ = [
    "SYSTEM",
    "FINISHED_EVENT", "RESET_EVENT", "INITIALIZED_EVENT", "snapshot_due", "fresh_coordinators", "partition_decisions",
    "Reconciliation", "reconciliation",
    "CREATED", "RUNNING", "FINISHED", "CANCELED", "PHASES", "ACTIONS", "RULES", "RULE_OF",
    "Config", "Topology", "topology", "State", "initial_state", "enabled", "step", "run",
    "replay_order", "recoverable", "restart_closure", "route", "result", "failure_free_result",
    "failure_free_run", "is_done", "content",
]

CREATED, RUNNING, FINISHED, CANCELED = "CREATED", "RUNNING", "FINISHED", "CANCELED"
# running: a JM schedules; down: no JM; reconciling: replayed, waiting for partitions; done.
PHASES = ("running", "down", "reconciling", "done")
ACTIONS = ("start", "assign", "finish", "elapse", "flush", "crash", "lose", "restart", "report", "reconcile",
           "fail_recovery", "global_restart")
# Each action is one rule of the module docstring (B1 start ... B12 global_restart), in that order:
# an action's name is its rule, for per-rule coverage (flipcheck verify).
RULES = tuple(f"B{n}" for n in range(1, len(ACTIONS) + 1))
RULE_OF = dict(zip(ACTIONS, RULES))
FINISHED_EVENT, RESET_EVENT = "finished", "reset"
# ExecutionJobVertexInitializedEvent of every job vertex: no task in it (replay skips it: it
# removes nothing), but it makes the log non-empty.
INITIALIZED_EVENT = (RESET_EVENT, frozenset())


class Config(NamedTuple):
    graph: JobGraph
    splits: int = 1                  # splits per source vertex
    crashes: int = 1                 # JM crashes in one run
    losses: int = 0                  # partitions lost while no JM runs
    recovery_failures: int = 0       # partition recoveries that throw
    min_pause: bool = True           # False: every finish snapshots the coordinators
    # True: each JM that starts scheduling writes ExecutionJobVertexInitializedEvent first
    # (recovery facts §4.8, a real run's log); False keeps the explorations' pinned state counts.
    initialized_events: bool = False


class Topology(NamedTuple):
    """The execution graph as task indices (the order of ``graph.tasks()``)."""

    tasks: tuple                     # (vertex, subtask) per index
    producers: tuple                 # per task: indices it reads
    consumers: tuple                 # per task: indices reading it
    sources: tuple                   # job vertices without inputs (they have a coordinator)
    vertex_tasks: dict               # job vertex -> its task indices
    splits: dict                     # source vertex -> its split ids (vertex, k)


@cache
def topology(config: Config) -> Topology:
    graph = config.graph
    tasks = tuple(graph.tasks())
    index = {t: i for i, t in enumerate(tasks)}
    producers = tuple(tuple(index[p] for p in predecessors(graph, t)) for t in tasks)
    consumers = tuple(tuple(j for j in range(len(tasks)) if i in producers[j]) for i in range(len(tasks)))
    sources = tuple(v for v in graph.topological_order if not graph.inputs(v))
    vertex_tasks = {v: tuple(i for i, t in enumerate(tasks) if t[0] == v) for v in graph.topological_order}
    splits = {v: tuple((v, k) for k in range(config.splits)) for v in sources}
    return Topology(tasks, producers, consumers, sources, vertex_tasks, splits)


class State(NamedTuple):
    phase: str
    status: tuple          # per task, as the current JM sees it (all CREATED while down)
    read: tuple            # per task: splits a running source task got (sorted)
    outputs: tuple         # per task: its partition on a TaskManager / a sink's written result, or None
    tracked: frozenset     # tasks whose partitions the JM's partition tracker knows
    coordinators: tuple    # per source vertex: (pool, assigned per subtask), None while down
    need: frozenset        # job vertices whose coordinators need a snapshot
    paused: bool           # the min-pause elapsed since the last snapshot
    buffer: tuple          # events written, not yet flushed
    log: tuple             # events in the file
    reported: frozenset    # partitions reported to the recovering JM
    restart_pending: bool  # a global failure waits for its delayed restart
    global_failures: int
    crashes: int
    losses: int
    recovery_failures: int
    starts: tuple          # per task: attempts ever started (attempt ids are unique, they survive the JM)
    attempt: tuple         # per task: the attempt of its current execution as this JM knows it (0: none)


def fresh_coordinators(config: Config) -> tuple:
    topo = topology(config)
    return tuple((frozenset(topo.splits[v]), ((),) * len(topo.vertex_tasks[v])) for v in topo.sources)


def initial_state(config: Config) -> State:
    n = len(topology(config).tasks)
    return State("running", (CREATED,) * n, ((),) * n, (None,) * n, frozenset(), fresh_coordinators(config),
                 frozenset(), False, _initialized(config), (), frozenset(), False, 0, 0, 0, 0, (0,) * n, (0,) * n)


def _initialized(config: Config) -> tuple:
    """The events a JM writes when it starts scheduling (none unless ``config.initialized_events``)."""
    return (INITIALIZED_EVENT,) if config.initialized_events else ()


def _set(items: tuple, index: int, value) -> tuple:
    return items[:index] + (value,) + items[index + 1:]


def _source_slot(config: Config, task: int) -> tuple[int, int] | None:
    """(coordinator index, subtask) of a source task, None for other tasks."""
    topo = topology(config)
    vertex, subtask = topo.tasks[task]
    return (topo.sources.index(vertex), subtask) if vertex in topo.sources else None


def route(config: Config, producer: int, consumer: int, records: tuple) -> tuple:
    """The records of ``producer``'s partition that ``consumer`` reads: each record goes to one
    consumer task per downstream job vertex (split ``k`` to the ``k mod n``-th of the ``n``)."""
    topo = topology(config)
    vertex = topo.tasks[consumer][0]
    peers = [c for c in topo.consumers[producer] if topo.tasks[c][0] == vertex]
    return tuple(x for x in records if peers[x[1] % len(peers)] == consumer)


def _content(config: Config, state: State, task: int) -> tuple:
    producers = topology(config).producers[task]
    if not producers:
        return state.read[task]
    return tuple(sorted(x for p in producers for x in route(config, p, task, content(state.outputs[p]))))


def _vertex_finished(config: Config, status: tuple, vertex: str) -> bool:
    return all(status[i] == FINISHED for i in topology(config).vertex_tasks[vertex])


def is_done(config: Config, state: State) -> bool:
    return all(s == FINISHED for s in state.status)


# -- replay (B8) -------------------------------------------------------------------------------


def replay_order(log: Iterable[tuple]) -> list[tuple]:
    """The ``finishedMap`` after replaying ``log``: ``(task, event)`` in LinkedHashMap order."""
    entries: dict = {}
    for event in log:
        if event[0] == FINISHED_EVENT:
            entries[event[1]] = event          # a Python dict keeps the place of a present key too
        else:
            for task in event[1]:
                entries.pop(task, None)
    return list(entries.items())


def recoverable(log: Iterable[tuple]) -> list[tuple]:
    """The entries kept: up to the last one that carries a coordinator snapshot (recovery facts §4.5 3b)."""
    order = replay_order(log)
    last = max((k for k, (_, e) in enumerate(order) if e[2] is not None), default=-1)
    return order[:last + 1]


def restart_closure(config: Config, start: Iterable[int], available, consider_consumable: bool) -> set:
    """``RestartPipelinedRegionFailoverStrategy`` on blocking exchanges (one task per region):
    the tasks, their consumers transitively and, when ``consider_consumable``, the producers of
    unavailable inputs transitively (recovery facts §4.5 step 5)."""
    topo = topology(config)
    todo, found = list(start), set()
    while todo:
        t = todo.pop()
        if t in found:
            continue
        found.add(t)
        todo.extend(topo.consumers[t])
        if consider_consumable:
            todo.extend(p for p in topo.producers[t] if not available(p))
    return found


def _reset(config: Config, state: State, tasks: Iterable[int]) -> State:
    """``resetForNewExecutions`` of the non-CREATED ones among ``tasks``: CREATED again, their
    partitions released (a sink's old output stays until it is written again), coordinators
    get the splits of reset source subtasks back (``subtaskReset``)."""
    topo = topology(config)
    status, outputs, read, coordinators = list(state.status), list(state.outputs), list(state.read), list(state.coordinators)
    attempt = list(state.attempt)
    tracked = set(state.tracked)
    for t in sorted(tasks):
        if status[t] == CREATED:
            continue
        status[t], read[t], attempt[t] = CREATED, (), 0
        if topo.consumers[t]:
            outputs[t] = None
        tracked.discard(t)
        slot = _source_slot(config, t)
        if slot is not None and coordinators[slot[0]] is not None:
            c, subtask = slot
            pool, assigned = coordinators[c]
            coordinators[c] = (pool | frozenset(assigned[subtask]), _set(assigned, subtask, ()))
    return state._replace(status=tuple(status), outputs=tuple(outputs), read=tuple(read), attempt=tuple(attempt),
                          coordinators=tuple(coordinators), tracked=frozenset(tracked))


def _restart(config: Config, state: State) -> State:
    topo = topology(config)
    n = len(topo.tasks)
    if not state.log:
        # needRecover() is false: a fresh start; partitions the TMs still hold are unknown and released.
        outputs = tuple(None if topo.consumers[t] else o for t, o in enumerate(state.outputs))
        return state._replace(phase="running", outputs=outputs, coordinators=fresh_coordinators(config),
                              buffer=state.buffer + _initialized(config))
    kept = recoverable(state.log)
    status, attempt = [CREATED] * n, [0] * n
    coordinators = list(fresh_coordinators(config))
    for task, event in kept:
        status[task], attempt[task] = FINISHED, event[3]       # recoverExecution(attemptId, ...)
        for vertex, snapshot in event[2] or ():
            coordinators[topo.sources.index(vertex)] = snapshot   # later entries overwrite
    state = state._replace(phase="reconciling", status=tuple(status), attempt=tuple(attempt), coordinators=tuple(coordinators),
                           tracked=frozenset(), reported=frozenset())
    unfinished = [t for t in range(n) if status[t] != FINISHED and _source_slot(config, t) is not None]
    # The unfinished tasks are moved to CANCELED and reset: their splits go back (subtaskReset).
    for t in unfinished:
        c, subtask = _source_slot(config, t)
        pool, assigned = state.coordinators[c]
        state = state._replace(coordinators=_set(state.coordinators, c, (pool | frozenset(assigned[subtask]),
                                                                         _set(assigned, subtask, ()))))
    return _reset(config, state, restart_closure(config, unfinished, lambda p: True, False))


# -- partition reconciliation (B10) -------------------------------------------------------------


def partition_decisions(config: Config, status: tuple) -> dict:
    """``recoverPartitions``: RELEASE / RESERVE / OPTIONAL per producing task (recovery facts §4.5 step 4)."""
    topo = topology(config)
    decisions = {}
    for t in range(len(topo.tasks)):
        if not topo.consumers[t]:
            continue
        if status[t] != FINISHED:
            decisions[t] = "RELEASE"
        elif any(status[c] != FINISHED for c in topo.consumers[t]):
            decisions[t] = "RESERVE"
        else:
            decisions[t] = "OPTIONAL"
    return decisions


class Reconciliation(NamedTuple):
    """B10's sets of producing tasks, as ``recoverPartitions`` logs them (recovery facts §4.5 step 4)."""

    release: frozenset     # RELEASE ∩ reported: partitions of unfinished producers
    missing: frozenset     # RESERVE − reported: needed, not reported; their producers restart
    reserve: frozenset     # RESERVE ∩ reported: needed and kept (tracked)
    actual: frozenset      # the reported partitions the JM knows


def reconciliation(config: Config, state: State) -> Reconciliation:
    """What B10 decides in ``state`` (RECONCILING, after the reports B9 made)."""
    decisions = partition_decisions(config, state.status)
    # a reported partition is known only if it is the one of the attempt the JM recovered
    # (ResultPartitionID = partition + ExecutionAttemptID)
    actual = frozenset(t for t in state.reported
                       if decisions.get(t) == "RELEASE" or state.outputs[t][0] == state.attempt[t])
    reserve = frozenset(t for t, d in decisions.items() if d == "RESERVE")
    release = frozenset(t for t, d in decisions.items() if d == "RELEASE" and t in actual)
    return Reconciliation(release, reserve - actual, reserve & actual, actual)


def _reconcile(config: Config, state: State) -> State:
    decisions = partition_decisions(config, state.status)
    outputs = list(state.outputs)
    found = reconciliation(config, state)
    for t in decisions:
        if t in found.release or (t not in found.actual and outputs[t] is not None):
            outputs[t] = None    # released now (unknown), or when its TaskManager reports late
    tracked, missing = found.reserve, found.missing
    state = state._replace(outputs=tuple(outputs), tracked=tracked, reported=frozenset())
    closure = restart_closure(config, missing, lambda p: p in tracked, True)
    state = _reset(config, state, closure)
    return state._replace(phase="running", need=frozenset(), paused=False)


def _fail_recovery(config: Config, state: State) -> State:
    """recoverFailed: events cleared, then ``handleGlobalFailure``: unfinished tasks cancelled,
    finished ones' partitions released, a restart scheduled after the delay."""
    topo = topology(config)
    status = tuple(s if s == FINISHED else CANCELED for s in state.status)
    outputs = tuple(None if topo.consumers[t] else o for t, o in enumerate(state.outputs))
    return state._replace(phase="running", status=status, outputs=outputs, tracked=frozenset(), log=(), buffer=(),
                          reported=frozenset(), restart_pending=True, global_failures=state.global_failures + 1,
                          recovery_failures=state.recovery_failures + 1)


def _global_restart(config: Config, state: State) -> State:
    n = len(state.status)
    return state._replace(status=(CREATED,) * n, read=((),) * n, tracked=frozenset(), attempt=(0,) * n,
                          coordinators=fresh_coordinators(config), need=frozenset(), paused=False,
                          buffer=state.buffer + ((RESET_EVENT, frozenset(range(n))),), restart_pending=False)


# -- the rules ----------------------------------------------------------------------------------


def enabled(config: Config, state: State) -> list[tuple]:
    """Every action that can happen next, in a fixed order."""
    topo = topology(config)
    actions: list[tuple] = []
    n = len(topo.tasks)
    if state.phase == "running" and not state.restart_pending:
        for t in range(n):
            if state.status[t] == CREATED and all(
                    state.status[p] == FINISHED and p in state.tracked for p in topo.producers[t]):
                actions.append(("start", t))
        for t in range(n):
            slot = _source_slot(config, t)
            if state.status[t] == RUNNING and slot is not None and state.coordinators[slot[0]][0]:
                actions.append(("assign", t))
        for t in range(n):
            slot = _source_slot(config, t)
            if state.status[t] == RUNNING and (slot is None or not state.coordinators[slot[0]][0]):
                actions.append(("finish", t))
        if config.min_pause and not state.paused:
            actions.append(("elapse",))
    if state.phase == "running" and state.restart_pending:
        actions.append(("global_restart",))
    if state.buffer and state.phase != "down":
        actions.append(("flush",))
    if state.phase in ("running", "reconciling") and state.crashes < config.crashes:
        actions.append(("crash",))
    if state.phase == "down":
        if state.losses < config.losses:
            actions += [("lose", t) for t in range(n) if topo.consumers[t] and state.outputs[t] is not None]
        actions.append(("restart",))
    if state.phase == "reconciling":
        actions += [("report", t) for t in range(n)
                    if topo.consumers[t] and state.outputs[t] is not None and t not in state.reported]
        actions.append(("reconcile",))
        if state.recovery_failures < config.recovery_failures:
            actions.append(("fail_recovery",))
    return actions


def step(config: Config, state: State, action: tuple) -> State:
    """The state after ``action`` (which must be enabled)."""
    kind = action[0]
    topo = topology(config)
    if kind == "start":  # B1
        t = action[1]
        return state._replace(status=_set(state.status, t, RUNNING), starts=_set(state.starts, t, state.starts[t] + 1),
                              attempt=_set(state.attempt, t, state.starts[t] + 1))
    if kind == "assign":  # B2
        t = action[1]
        c, subtask = _source_slot(config, t)
        pool, assigned = state.coordinators[c]
        split = min(pool)
        coordinator = (pool - {split}, _set(assigned, subtask, tuple(sorted(assigned[subtask] + (split,)))))
        return state._replace(coordinators=_set(state.coordinators, c, coordinator),
                              read=_set(state.read, t, tuple(sorted(state.read[t] + (split,)))))
    if kind == "finish":  # B3
        return _finish(config, state, action[1])
    if kind == "elapse":  # B4
        return state._replace(paused=True)
    if kind == "flush":  # B5
        return state._replace(log=state.log + state.buffer, buffer=())
    if kind == "crash":  # B6
        n = len(topo.tasks)
        return state._replace(phase="down", status=(CREATED,) * n, read=((),) * n, tracked=frozenset(), attempt=(0,) * n,
                              coordinators=(None,) * len(topo.sources), need=frozenset(), paused=False, buffer=(),
                              reported=frozenset(), restart_pending=False, crashes=state.crashes + 1)
    if kind == "lose":  # B7
        return state._replace(outputs=_set(state.outputs, action[1], None), losses=state.losses + 1)
    if kind == "restart":  # B8
        return _restart(config, state)
    if kind == "report":  # B9
        return state._replace(reported=state.reported | {action[1]})
    if kind == "reconcile":  # B10
        return _reconcile(config, state)
    if kind == "fail_recovery":  # B11
        return _fail_recovery(config, state)
    if kind == "global_restart":  # B12
        return _global_restart(config, state)
    raise ValueError(f"unknown action {action!r}")


def snapshot_due(config: Config, state: State, vertex_finished: bool) -> bool:
    """B3: a coordinator snapshot goes with this finish."""
    return vertex_finished or state.paused or not config.min_pause


def _finish(config: Config, state: State, t: int) -> State:
    topo = topology(config)
    data = _content(config, state, t)
    status = _set(state.status, t, FINISHED)
    vertex = topo.tasks[t][0]
    need = state.need | {vertex}
    snapshot = None
    paused = state.paused
    if snapshot_due(config, state, _vertex_finished(config, status, vertex)):
        snapshot = tuple((v, state.coordinators[topo.sources.index(v)]) for v in topo.sources if v in need)
        need, paused = frozenset(), False
    phase = "done" if all(s == FINISHED for s in status) else state.phase
    return state._replace(phase=phase, status=status, outputs=_set(state.outputs, t, (state.attempt[t], data)), read=_set(state.read, t, ()),
                          tracked=state.tracked | {t}, need=need, paused=paused,
                          buffer=state.buffer + ((FINISHED_EVENT, t, snapshot, state.attempt[t]),))


def run(config: Config, actions: Iterable[tuple], state: State | None = None) -> State:
    """Apply ``actions`` in order from ``state`` (default: the initial state); each must be enabled."""
    return run_actions(SYSTEM, config, actions, state)


# -- the result ---------------------------------------------------------------------------------


def result(config: Config, state: State) -> tuple:
    """What the sinks wrote: per sink job vertex, the sorted records of all its tasks."""
    topo = topology(config)
    sinks = [v for v in config.graph.topological_order if not config.graph.outputs(v)]
    return tuple((v, tuple(sorted(x for t in topo.vertex_tasks[v] for x in content(state.outputs[t])))) for v in sinks)


def content(output) -> tuple:
    """The records of a partition ``(attempt, records)`` (none for ``None``)."""
    return () if output is None else output[1]


def failure_free_run(config: Config) -> list[tuple]:
    """One run without failures: tasks in index order, each started, fed and finished."""
    state, actions = initial_state(config), []
    while not is_done(config, state):
        action = next(a for a in enabled(config, state) if a[0] in ("start", "assign", "finish"))
        actions.append(action)
        state = step(config, state, action)
    return actions


@cache
def failure_free_result(config: Config) -> tuple:
    """The result of a run without failures (the same for every such run)."""
    return result(config, run(config, failure_free_run(config)))


# The spec as an action system (flipcheck.model.actions): what replay and the stateful machine run.
SYSTEM = ActionSystem(initial_state, enabled, step)

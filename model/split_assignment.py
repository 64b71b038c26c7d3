"""Specification of FLIP-27 split assignment aligned with checkpoints (seed 003; recovery facts §3).

A split enumerator hands out splits to ``readers`` parallel source readers; checkpoints,
completions, reader failures and global failovers interleave with the assignments in every
possible order. The protocol must keep **exactly once**: every split is, at any time, owned by
exactly one of the enumerator, a message on its way to a reader, or a reader (reading it or done
with it), and every completed checkpoint is such a partition too.

:func:`step` is the whole specification, a pure function ``(config, state, action) -> state``;
:func:`enabled` says which actions can happen next. States are named tuples of frozensets and
ints, so they hash cheaply and can be explored exhaustively (``properties/split_assignment_explore.py``).

Three designs (``Config.design``):

* ``coordinator`` — the option Flink shipped (seed "Option 2: Enumerator on the JobManager"):
  the enumerator runs in the ``SourceCoordinator``; assignments are RPC events, so the
  checkpoint needs "careful coordination between split assignment and checkpoint triggering"
  (seed, comparison table): the coordinator snapshot is taken first, events after it are held
  at the subtask gateway until the subtask has processed its barrier.
* ``task-persistent-channel`` — seed "Option 1: Enumerator on the TaskManager" with recovery
  mechanism 1: splits are data records, "checkpoints and splits are naturally aligned, because
  splits go through the data channels"; a recovered reader re-reads its persistent channel
  "after checkpoint X", so its splits come back to it and to no one else.
* ``task-reconnect`` — Option 1 with mechanism 2: the enumerator task "remember[s] the splits
  assigned to each result partition until the next checkpoint completes" and adds them back
  when notified of a reader failure.

Rules (each names its source):

* A1 ``register``: a reader attempt registers with the enumerator (recovery facts §3
  ``handleReaderRegistrationEvent``); only registered readers get splits (recovery facts §3
  ``assignSplits``: ``IllegalArgumentException`` otherwise).
* A2 ``assign``: the enumerator sends its smallest unassigned split to a registered reader (the
  seed's lazy, pull-based assignment; which split is immaterial here). The assignment's *epoch*
  is the id of the next checkpoint to be triggered: "the first checkpoint id whose coordinator
  snapshot happens after it" (recovery facts §3.6 invariants). Coordinator design: while a checkpoint's
  coordinator snapshot is taken and the reader has not processed that checkpoint's barrier, the
  event is held at the subtask gateway (recovery facts §3.5 ``SubtaskGatewayImpl``, FLINK-28606).
* A3 ``deliver``: the head of the reader's channel arrives. A split joins the reader's state; a
  barrier makes the reader snapshot its state and acknowledge: the gateway reopens and releases
  what it held (recovery facts §3.5 reopen trigger (a), ``AcknowledgeCheckpointEvent``); the last
  acknowledgement completes the checkpoint. Persistent channels are pruned up to the barrier of
  a completed checkpoint (seed: "The data is pruned when checkpoint X+1 is completed").
* A4 ``finish``: a reader finishes its smallest split (it stays in the reader's state as done).
* A5 ``trigger``: the ``CheckpointCoordinator`` starts the next checkpoint (one at a time,
  ids ``1..checkpoints``) when every reader runs. Coordinator design: the coordinator snapshot
  comes first and the gateways close (recovery facts §3.5 "Ordering", FLINK-18641); the events not yet
  confirmed are remembered. Task designs: the enumerator task snapshots and emits its barrier
  into every channel at once (seed: "the only one that receives the 'trigger checkpoint' RPC").
* A6 ``trigger_tasks`` (coordinator design): once every event sent before the coordinator
  snapshot is confirmed, the barriers are injected at the readers (recovery facts §3
  ``completeCheckpointOnceEventsAreDone``, FLINK-21996).
* A7 ``notify``: ``notifyCheckpointComplete`` of the latest completed checkpoint reaches the
  coordinator (no effect on ownership; Flink's tracker forgets old epochs here).
* A8 ``expire``: the pending checkpoint is aborted; the gateways reopen (recovery facts §3.5 reopen (b)).
* A9 ``lose`` (coordinator design): the RPC carrying the head event of a reader's channel is
  lost while the reader keeps running (FLINK-21996); nobody knows yet.
* A10 ``detect``: the lost event's send future fails: a pending checkpoint that waits for it
  fails ("some OperatorEvents before this checkpoint barrier were not received by the target
  tasks", recovery facts §3) and the reader's attempt is failed over (``triggerTaskFailover``).
* A11 ``fail``: a reader attempt fails; its state and (coordinator, reconnect) its channel are
  gone, and so the send futures of the events on it fail: a pending checkpoint that waits for
  one of them fails (recovery facts §3, FLINK-21996). Persistent channels survive (seed mechanism 1).
* A12 ``reset``: regional failover of that reader: pending checkpoints abort
  (``abortPendingCheckpoints``), the reader restores the latest completed checkpoint (or
  nothing, ``NO_CHECKPOINT = -1``, FLINK-20396); coordinator and reconnect designs return to the
  enumerator exactly the splits the failed attempt got in epochs after that checkpoint (recovery facts
  §3.3 ``subtaskReset`` / ``getAndRemoveUncheckpointedAssignment``: key > restoredId, FLINK-20413);
  the persistent channel instead replays everything after that checkpoint's barrier to the new
  attempt (seed: "will get the previously assigned splits").
* A13 ``global``: global failover (e.g. the enumerator itself failed: "the enumerator is a point
  of failure that requires a restart of the entire dataflow", seed, Open Questions): the
  coordinator is recreated and restores the latest completed checkpoint's enumerator state, every
  reader restores the same checkpoint (recovery facts §3 ``resetToCheckpoint``,
  ``RecreateOnResetOperatorCoordinator``).

``lose``, ``fail`` and ``global`` each use one of ``config.failures``.

Example
-------
>>> cfg = Config(readers=1, splits=2)
>>> s = run(cfg, [("register", 0), ("assign", 0), ("trigger",), ("assign", 0)])
>>> s.held                                 # split 1 waits at the gateway for barrier 1
(((1, 2),),)
>>> s = run(cfg, [("deliver", 0), ("trigger_tasks",), ("deliver", 0)], s)
>>> s.completed.readers                    # checkpoint 1 holds split 0 only, with its epoch
((frozenset({(0, 1)}), frozenset()),)
>>> s.channels                             # the gateway reopened: split 1 follows the barrier
((('split', 1, 2),),)
>>> s = run(cfg, [("fail", 0), ("reset", 0)], s)
>>> sorted(s.pool), s.readers[0].splits    # split 1 (epoch 2 > 1) comes back, split 0 is restored
([1], frozenset({(0, 1)}))
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from .actions import ActionSystem
from .actions import run as run_actions

__all__ = [
    "SYSTEM",
    "COORDINATOR", "TASK_PERSISTENT", "TASK_RECONNECT", "DESIGNS", "NO_CHECKPOINT", "ACTIONS", "RULES", "RULE_OF",
    "Config", "Reader", "Pending", "Completed", "State", "View",
    "initial_state", "enabled", "step", "run", "view", "settled", "owners",
]

COORDINATOR = "coordinator"
TASK_PERSISTENT = "task-persistent-channel"
TASK_RECONNECT = "task-reconnect"
DESIGNS = (COORDINATOR, TASK_PERSISTENT, TASK_RECONNECT)
# OperatorCoordinator.NO_CHECKPOINT: the "virtual initial checkpoint" a reader without a
# completed checkpoint restores (FLINK-20396).
NO_CHECKPOINT = -1
ACTIONS = ("register", "assign", "deliver", "finish", "trigger", "trigger_tasks", "notify", "expire",
           "lose", "detect", "fail", "reset", "global")
# Each action is one rule of the module docstring (A1 register ... A13 global), in that order:
# an action's name is its rule, for per-rule coverage (flipcheck verify).
RULES = tuple(f"A{n}" for n in range(1, len(ACTIONS) + 1))
RULE_OF = dict(zip(ACTIONS, RULES))

SPLIT = "split"
BARRIER = "barrier"


class Config(NamedTuple):
    readers: int = 2
    splits: int = 2
    checkpoints: int = 2   # checkpoint ids 1..checkpoints are triggered at most
    failures: int = 1      # lose + fail + global actions in one run
    design: str = COORDINATOR


class Reader(NamedTuple):
    """One reader subtask's current attempt; splits are ``(split, epoch)`` pairs."""

    alive: bool = True
    registered: bool = False
    splits: frozenset = frozenset()   # being read
    done: frozenset = frozenset()     # finished (part of the reader's state until it restores)
    lost: frozenset = frozenset()     # sent but never received: RPC lost, or held by a failed attempt
    snapshot: int = 0                 # the last checkpoint whose barrier this attempt processed


class Pending(NamedTuple):
    id: int
    pool: frozenset              # the enumerator's snapshot (coordinator part)
    tasks_triggered: bool
    acks: tuple                  # per reader: its (splits, done) at the barrier, or None
    unconfirmed: frozenset       # (reader, split) sent before the coordinator snapshot, not yet received


class Completed(NamedTuple):
    id: int
    pool: frozenset
    readers: tuple               # per reader: (splits, done) as the reader acknowledged them


class State(NamedTuple):
    pool: frozenset              # the enumerator's unassigned splits
    readers: tuple
    channels: tuple              # per reader: ("split", x, epoch) / ("barrier", id), FIFO
    held: tuple                  # per reader: (x, epoch) held at the subtask gateway
    logs: tuple                  # per reader: split items delivered since the last completed barrier
    next_id: int                 # the id the next checkpoint gets = the epoch of an assignment now
    pending: Pending | None
    completed: Completed | None
    notified: int                # the latest completed checkpoint the coordinator heard of
    failures: int                # failures used


class View(NamedTuple):
    """What an observer sees, the same for the specification and for Flink's implementation.

    ``inbox`` is what is on its way to each reader in delivery order: ``("split", x)`` and
    ``("barrier", id)``, including events still held at the gateway (the gateway is how the
    order is achieved, not what is observed). ``lost`` counts events lost on the way and not yet
    noticed. ``coordinator_snapshot`` is the id of the last coordinator snapshot.
    """

    pool: frozenset
    alive: tuple
    registered: tuple
    splits: tuple
    done: tuple
    inbox: tuple
    lost: tuple
    snapshots: tuple
    coordinator_snapshot: int
    pending: int | None
    tasks_triggered: bool
    completed: Completed | None
    notified: int


def initial_state(config: Config) -> State:
    n = config.readers
    return State(frozenset(range(config.splits)), (Reader(),) * n, ((),) * n, ((),) * n, ((),) * n,
                 1, None, None, 0, 0)


def _ids(pairs: Iterable) -> frozenset:
    return frozenset(x for x, _ in pairs)


def _set(items: tuple, index: int, value) -> tuple:
    return items[:index] + (value,) + items[index + 1:]


def _gateway_closed(state: State, reader: int) -> bool:
    """A2: events wait while the pending checkpoint's coordinator snapshot is taken and the
    reader has not processed its barrier."""
    return state.pending is not None and state.readers[reader].snapshot < state.pending.id


def _release(state: State, readers: Iterable[int]) -> State:
    """The gateways of ``readers`` reopen: held events go out in order (A3, A8, A12)."""
    channels, held = list(state.channels), list(state.held)
    for r in readers:
        channels[r] = channels[r] + tuple((SPLIT, x, e) for x, e in held[r])
        held[r] = ()
    return state._replace(channels=tuple(channels), held=tuple(held))


def _abort(state: State) -> State:
    """The pending checkpoint aborts; every gateway reopens (A8, A10, A12)."""
    if state.pending is None:
        return state
    return _release(state._replace(pending=None), range(len(state.readers)))


def _restored(state: State, reader: int) -> tuple[frozenset, frozenset]:
    """The ``(splits, done)`` a new attempt of ``reader`` restores, with their epochs (A12, A13)."""
    if state.completed is None:
        return frozenset(), frozenset()
    splits, done = state.completed.readers[reader]
    return frozenset(splits), frozenset(done)


def enabled(config: Config, state: State) -> list[tuple]:
    """Every action that can happen next, in a fixed order."""
    actions: list[tuple] = []
    coordinator = config.design == COORDINATOR
    budget = state.failures < config.failures
    for r, reader in enumerate(state.readers):
        if reader.alive and not reader.registered:
            actions.append(("register", r))
        if reader.alive and reader.registered and state.pool:
            actions.append(("assign", r))
        if state.channels[r] and reader.alive:
            actions.append(("deliver", r))
        if reader.splits:
            actions.append(("finish", r))
    if state.pending is None and state.next_id <= config.checkpoints and all(r.alive for r in state.readers):
        actions.append(("trigger",))
    if coordinator and state.pending is not None and not state.pending.tasks_triggered and not state.pending.unconfirmed:
        actions.append(("trigger_tasks",))
    if state.completed is not None and state.notified < state.completed.id:
        actions.append(("notify",))
    if state.pending is not None:
        actions.append(("expire",))
    for r, reader in enumerate(state.readers):
        if budget and coordinator and reader.alive and state.channels[r] and state.channels[r][0][0] == SPLIT:
            actions.append(("lose", r))
        if reader.alive and reader.lost:
            actions.append(("detect", r))
        if budget and reader.alive:
            actions.append(("fail", r))
        if not reader.alive:
            actions.append(("reset", r))
    if budget:
        actions.append(("global",))
    return actions


def step(config: Config, state: State, action: tuple) -> State:
    """The state after ``action`` (which must be enabled)."""
    kind = action[0]
    if kind == "register":  # A1
        r = action[1]
        return state._replace(readers=_set(state.readers, r, state.readers[r]._replace(registered=True)))
    if kind == "assign":  # A2
        r = action[1]
        split = min(state.pool)
        item = (split, state.next_id)
        state = state._replace(pool=state.pool - {split})
        if config.design == COORDINATOR and _gateway_closed(state, r):
            return state._replace(held=_set(state.held, r, state.held[r] + (item,)))
        return state._replace(channels=_set(state.channels, r, state.channels[r] + ((SPLIT, *item),)))
    if kind == "deliver":  # A3
        return _deliver(config, state, action[1])
    if kind == "finish":  # A4
        r = action[1]
        reader = state.readers[r]
        item = min(reader.splits)
        reader = reader._replace(splits=reader.splits - {item}, done=reader.done | {item})
        return state._replace(readers=_set(state.readers, r, reader))
    if kind == "trigger":  # A5
        return _trigger(config, state)
    if kind == "trigger_tasks":  # A6
        return _inject_barriers(state)
    if kind == "notify":  # A7
        return state._replace(notified=state.completed.id)
    if kind == "expire":  # A8
        return _abort(state)
    if kind == "lose":  # A9
        r = action[1]
        _, split, epoch = state.channels[r][0]
        reader = state.readers[r]._replace(lost=state.readers[r].lost | {(split, epoch)})
        return state._replace(channels=_set(state.channels, r, state.channels[r][1:]),
                              readers=_set(state.readers, r, reader), failures=state.failures + 1)
    if kind == "detect":  # A10
        r = action[1]
        lost = {(r, x) for x, _ in state.readers[r].lost}
        if state.pending is not None and lost & state.pending.unconfirmed:
            state = _abort(state)
        return _fail(config, state, r)
    if kind == "fail":  # A11
        return _fail(config, state._replace(failures=state.failures + 1), action[1])
    if kind == "reset":  # A12
        return _reset(config, state, action[1])
    if kind == "global":  # A13
        return _global(config, state)
    raise ValueError(f"unknown action {action!r}")


def _deliver(config: Config, state: State, r: int) -> State:
    item, rest = state.channels[r][0], state.channels[r][1:]
    reader = state.readers[r]
    logs = state.logs
    state = state._replace(channels=_set(state.channels, r, rest))
    if item[0] == SPLIT:
        _, split, epoch = item
        reader = reader._replace(splits=reader.splits | {(split, epoch)})
        if config.design == TASK_PERSISTENT:
            logs = _set(logs, r, logs[r] + (item,))
        pending = state.pending
        if pending is not None and (r, split) in pending.unconfirmed:
            pending = pending._replace(unconfirmed=pending.unconfirmed - {(r, split)})
        return state._replace(readers=_set(state.readers, r, reader), logs=logs, pending=pending)
    checkpoint = item[1]
    reader = reader._replace(snapshot=checkpoint)
    if config.design == TASK_PERSISTENT:
        logs = _set(logs, r, logs[r] + (item,))
    state = state._replace(readers=_set(state.readers, r, reader), logs=logs)
    pending = state.pending
    if pending is None or pending.id != checkpoint:
        return state  # the barrier of an aborted checkpoint: the acknowledgement is dropped
    acks = _set(pending.acks, r, (reader.splits, reader.done))
    state = _release(state._replace(pending=pending._replace(acks=acks)), [r])
    if any(a is None for a in acks):
        return state
    state = state._replace(pending=None, completed=Completed(pending.id, pending.pool, acks))
    if config.design == TASK_PERSISTENT:
        state = state._replace(logs=tuple(_prune(log, pending.id) for log in state.logs))
    return state


def _prune(log: tuple, checkpoint: int) -> tuple:
    """Drop everything up to and including the barrier of ``checkpoint``."""
    for position, item in enumerate(log):
        if item == (BARRIER, checkpoint):
            return log[position + 1:]
    return log


def _trigger(config: Config, state: State) -> State:
    checkpoint = state.next_id
    if config.design == COORDINATOR:
        in_flight = {(r, item[1]) for r, channel in enumerate(state.channels) for item in channel if item[0] == SPLIT}
        lost = {(r, x) for r, reader in enumerate(state.readers) for x, _ in reader.lost}
        pending = Pending(checkpoint, state.pool, False, (None,) * len(state.readers), frozenset(in_flight | lost))
        return state._replace(pending=pending, next_id=checkpoint + 1)
    pending = Pending(checkpoint, state.pool, False, (None,) * len(state.readers), frozenset())
    return _inject_barriers(state._replace(pending=pending, next_id=checkpoint + 1))


def _inject_barriers(state: State) -> State:
    """A trigger RPC to a failed attempt goes nowhere (the checkpoint then waits until the reset aborts it)."""
    barrier = (BARRIER, state.pending.id)
    return state._replace(channels=tuple(c + (barrier,) if reader.alive else c
                                         for c, reader in zip(state.channels, state.readers)),
                          pending=state.pending._replace(tasks_triggered=True))


def _fail(config: Config, state: State, r: int) -> State:
    reader = state.readers[r]
    if state.pending is not None and any(w == r for w, _ in state.pending.unconfirmed):
        state = _abort(state)
    if config.design == TASK_PERSISTENT:
        # the channel is persistent: what is on it stays there (seed, mechanism 1)
        gone = reader.splits | reader.done | reader.lost
        state = state._replace(channels=_set(state.channels, r, tuple(i for i in state.channels[r] if i[0] == SPLIT)))
    else:
        on_the_way = {(i[1], i[2]) for i in state.channels[r] if i[0] == SPLIT} | set(state.held[r])
        gone = reader.splits | reader.done | reader.lost | on_the_way
        state = state._replace(channels=_set(state.channels, r, ()), held=_set(state.held, r, ()))
    dead = Reader(alive=False, registered=False, lost=frozenset(gone), snapshot=reader.snapshot)
    return state._replace(readers=_set(state.readers, r, dead))


def _reset(config: Config, state: State, r: int) -> State:
    state = _abort(state)
    restored_id = state.completed.id if state.completed is not None else NO_CHECKPOINT
    splits, done = _restored(state, r)
    gone = state.readers[r].lost
    if config.design == TASK_PERSISTENT:
        replay = tuple(i for i in state.logs[r] if i[0] == SPLIT)
        state = state._replace(channels=_set(state.channels, r, replay + state.channels[r]),
                               logs=_set(state.logs, r, ()))
    else:
        back = frozenset(x for x, epoch in gone if epoch > restored_id)
        state = state._replace(pool=state.pool | back)
    fresh = Reader(alive=True, registered=False, splits=splits, done=done)
    return state._replace(readers=_set(state.readers, r, fresh))


def _global(config: Config, state: State) -> State:
    n = len(state.readers)
    pool = state.completed.pool if state.completed is not None else frozenset(range(config.splits))
    readers = []
    for r in range(n):
        splits, done = _restored(state, r)
        readers.append(Reader(splits=splits, done=done))
    # the recreated coordinator starts from the restored checkpoint: nothing left to notify
    notified = max(state.notified, state.completed.id if state.completed is not None else 0)
    return state._replace(pool=frozenset(pool), readers=tuple(readers), channels=((),) * n, held=((),) * n,
                          logs=((),) * n, pending=None, notified=notified, failures=state.failures + 1)


def run(config: Config, actions: Iterable[tuple], state: State | None = None) -> State:
    """Apply ``actions`` in order from ``state`` (default: the initial state); each must be enabled."""
    return run_actions(SYSTEM, config, actions, state)


def view(config: Config, state: State) -> View:
    inbox = tuple(
        tuple((SPLIT, i[1]) if i[0] == SPLIT else i for i in channel) + tuple((SPLIT, x) for x, _ in held)
        for channel, held in zip(state.channels, state.held))
    completed = None
    if state.completed is not None:
        c = state.completed
        completed = Completed(c.id, c.pool, tuple((_ids(s), _ids(d)) for s, d in c.readers))
    return View(
        pool=state.pool,
        alive=tuple(r.alive for r in state.readers),
        registered=tuple(r.registered for r in state.readers),
        splits=tuple(_ids(r.splits) if r.alive else frozenset() for r in state.readers),
        done=tuple(_ids(r.done) if r.alive else frozenset() for r in state.readers),
        inbox=inbox,
        lost=tuple(len(r.lost) if r.alive else 0 for r in state.readers),
        snapshots=tuple(r.snapshot if r.alive else 0 for r in state.readers),
        coordinator_snapshot=state.next_id - 1,
        pending=state.pending.id if state.pending is not None else None,
        tasks_triggered=state.pending is not None and state.pending.tasks_triggered,
        completed=completed,
        notified=state.notified,
    )


def settled(v: View) -> bool:
    """Every reader runs and nothing is lost unnoticed: ownership must be a partition."""
    return all(v.alive) and not any(v.lost)


def owners(v: View, split: int) -> list[str]:
    """Who holds ``split`` in view ``v``: ``enumerator``, ``to reader r``, ``reader r``, ``reader r (done)``."""
    found = ["enumerator"] if split in v.pool else []
    for r in range(len(v.alive)):
        found += [f"to reader {r}"] * sum(1 for i in v.inbox[r] if i == (SPLIT, split))
        if split in v.splits[r]:
            found.append(f"reader {r}")
        if split in v.done[r]:
            found.append(f"reader {r} (done)")
    return found


# The spec as an action system (flipcheck.model.actions): what replay and the stateful machine run.
SYSTEM = ActionSystem(initial_state, enabled, step, view)

"""Symmetry reduction of the whole-job search: one representative per orbit of interchangeable tasks.

A *symmetry* of a job (:func:`symmetries`) renames its tasks, channels and records so that the
job is mapped onto itself: every task goes to a task of the same kind (same vertex flags, same
number of records, inputs and outputs), every channel to the channel between the images of its
ends, every record of a source to the record at the same position of the image source, every
route of a task to a route of its image that sends each renamed record to the renamed channel
(J2), and the coordinator's plan for a renamed view is the renamed plan (C2, checked on every
view). Subtasks of one vertex (a keyBy into two sinks) and equal vertices (the twin sources, the
two branches of the diamond) are interchangeable this way.

Renaming a state (:func:`permute`) renames every task-, channel- and record-indexed part,
including the bit masks over tasks, over a task's inputs (its barrier handler, the EndOfData it
polled) and over its outputs. Every rule is written for any task, channel and record, so a
renamed state has the renamed futures, and every property is judged the same on it (they name
tasks only in their messages). The explorer stores one state per orbit
(:func:`canonical_function`): the renamed state that comes first by a few counts per task and
channel, then by ``repr`` — the same in every process (a hash would depend on ``PYTHONHASHSEED``, and so would the counts of a reduction that
follows the stored states). The quotient graph has the same deadlocks, end states, violated step properties, cycles
and after-abort witnesses as the full graph. Traces are searched in the full model again
(:func:`~.protocol_explore.explore_job`).

>>> from flipcheck.generators.protocol import example_graph
>>> from flipcheck.model.protocol import Job, initial_state, run
>>> job = Job(example_graph("pair", 2), records=1)          # src[0], src[1] -> sink[0], sink[1]
>>> [(s.tasks, sorted(s.records.items())) for s in symmetries(job)]
[((1, 0, 3, 2), [(0, 1), (1, 0)])]
>>> left, right = run(job, [("emit", 0, 0)]), run(job, [("emit", 1, 1)])
>>> left != right and permute(job, symmetries(job)[0], left) == right
True
>>> representative = canonical_function(job)
>>> representative(left) == representative(right)
True
"""

from __future__ import annotations

from functools import lru_cache, partial

from itertools import permutations, product
from typing import Any, Callable, NamedTuple

from flipcheck.model import barriers as bar
from flipcheck.model.protocol import DATA, Job, JobState, Snapshot

__all__ = ["Symmetry", "symmetries", "permute", "canonical_function"]

# A job with more candidate renamings than this is searched without symmetry reduction: every
# stored state is compared with each renaming, and the plan of every view is checked for each at
# start-up (pair at parallelism 3 has 36 candidates; at parallelism 5, 14,400).
MAX_CANDIDATES = 100
# Views of the coordinator checked for each renaming (2 ** tasks); more tasks: no symmetry.
MAX_TASKS_CHECKED = 10


class Symmetry(NamedTuple):
    tasks: tuple      # task -> its image
    channels: tuple   # channel -> its image
    records: dict     # record -> its image
    inputs: tuple     # per task: input position -> the image's input position
    outputs: tuple    # per task: output position -> the image's output position


def _kind(job: Job, t: int) -> tuple:
    """What interchangeable tasks share: records, inputs, outputs, routes and the vertex flags."""
    info = job.tasks[t]
    return (len(info.records), len(info.inputs), len(info.outputs), tuple(sorted(len(r) for r in info.routes)),
            info.two_phase_commit, info.union_list_state, info.sink_v2)


def symmetries(job: Job) -> list[Symmetry]:
    """Every renaming of ``job``'s tasks, channels and records, but the identity, that maps the
    job onto itself (see the module docstring)."""
    n = len(job.tasks)
    if n > MAX_TASKS_CHECKED:
        return []
    classes: dict = {}
    for t in range(n):
        classes.setdefault(_kind(job, t), []).append(t)
    groups = [members for members in classes.values() if len(members) > 1]
    count = 1
    for members in groups:
        for k in range(2, len(members) + 1):
            count *= k
    if not groups or count > MAX_CANDIDATES:
        return []
    between = {}
    for ch in job.channels:
        if (ch.source, ch.target) in between:
            return []  # two channels between the same pair of tasks: not renamed here
        between[(ch.source, ch.target)] = ch.index
    found = []
    for choice in product(*(permutations(members) for members in groups)):
        image = list(range(n))
        for members, images in zip(groups, choice):
            for t, u in zip(members, images):
                image[t] = u
        if image == list(range(n)):
            continue
        symmetry = _symmetry(job, tuple(image), between)
        if symmetry is not None and _plans_agree(job, symmetry):
            found.append(symmetry)
    return found


def _symmetry(job: Job, image: tuple, between: dict) -> Symmetry | None:
    channels = []
    for ch in job.channels:
        target = between.get((image[ch.source], image[ch.target]))
        if target is None:
            return None
        channels.append(target)
    records = {}
    for t, info in enumerate(job.tasks):
        for r, s in zip(info.records, job.tasks[image[t]].records):
            records[r] = s
    if sorted(records.values()) != sorted(records):
        return None
    inputs = tuple(tuple(job.tasks[image[t]].inputs.index(channels[c]) for c in info.inputs)
                   for t, info in enumerate(job.tasks))
    outputs = tuple(tuple(job.tasks[image[t]].outputs.index(channels[c]) for c in info.outputs)
                    for t, info in enumerate(job.tasks))
    every_record = sorted(records)
    for t, info in enumerate(job.tasks):
        theirs = [tuple(route[records[r] % len(route)] for r in every_record) for route in job.tasks[image[t]].routes]
        for route in info.routes:  # J2: the renamed record takes the renamed channel
            ours = tuple(channels[route[r % len(route)]] for r in every_record)
            if ours not in theirs:
                return None
            theirs.remove(ours)
    return Symmetry(image, tuple(channels), records, inputs, outputs)


def _tasks_mask(symmetry: Symmetry, mask: int) -> int:
    out, t = 0, 0
    while mask:
        if mask & 1:
            out |= 1 << symmetry.tasks[t]
        mask >>= 1
        t += 1
    return out


def _positions_mask(mapping: tuple, mask: int) -> int:
    if not mask:
        return 0
    out = 0
    for position, image in enumerate(mapping):
        if mask >> position & 1:
            out |= 1 << image
    return out


def _plans_agree(job: Job, symmetry: Symmetry) -> bool:
    """C2: the plan for every renamed view is the renamed plan."""
    for view in range(1 << len(job.tasks)):
        plan, renamed = job.plan(view), job.plan(_tasks_mask(symmetry, view))
        if isinstance(plan, str) or isinstance(renamed, str):
            if plan != renamed:
                return False
        elif tuple(_tasks_mask(symmetry, m) for m in plan) != renamed:
            return False
    return True


@lru_cache(maxsize=4096)
def _inverse(mapping: tuple) -> tuple:
    """Where each position's value comes from: ``out[mapping[p]] = values[p]`` is
    ``out[q] = values[_inverse(mapping)[q]]``, which ``map`` does at C speed."""
    inverse = [0] * len(mapping)
    for position, image in enumerate(mapping):
        inverse[image] = position
    return tuple(inverse)


def _by_position(mapping: tuple, values: tuple, rename=None) -> tuple:
    """``values`` moved to their renamed positions (and renamed by ``rename``)."""
    if len(values) != len(mapping):   # a snapshot field not kept per position (empty)
        out = [None] * len(values)
        for position, value in enumerate(values):
            out[mapping[position]] = value if rename is None else rename(value)
        return tuple(out)
    picked = map(values.__getitem__, _inverse(mapping))
    return tuple(picked if rename is None else map(rename, picked))


# The helpers of ``permute`` are module functions, not closures: compiled, closures that call each
# other form a reference cycle per call, which only the cycle collector frees, and the parallel
# explorers pause that collector (flipcheck/parallel_explore/expansion.py).
def _permuted_records(records_of: dict, values: tuple) -> tuple:
    return tuple(records_of[r] for r in values) if values else values


def _permuted_txns(records_of: dict, values: tuple) -> tuple:
    return tuple((k, _permuted_records(records_of, r)) for k, r in values) if values else values


def _permuted_snapshot(symmetry: Symmetry, t: int, snap: Snapshot | None) -> Snapshot | None:
    if snap is None:
        return None
    ins, outs, recs = symmetry.inputs[t], symmetry.outputs[t], partial(_permuted_records, symmetry.records)
    return Snapshot(snap.finished_operators, snap.offset, _by_position(outs, snap.sent),
                    _by_position(ins, snap.received), _by_position(ins, snap.in_flight, recs),
                    _by_position(outs, snap.output_in_flight, recs),
                    _permuted_txns(symmetry.records, snap.transactions))


def _permuted_handler(symmetry: Symmetry, t: int, h):
    if h is None:
        return None
    ins = symmetry.inputs[t]
    if isinstance(h, bar.HandlerState):
        return h._replace(open=_positions_mask(ins, h.open), aligned=_positions_mask(ins, h.aligned),
                          blocked=_positions_mask(ins, h.blocked))
    return h._replace(open=_positions_mask(ins, h.open),
                      entries=tuple(e._replace(aligned=_positions_mask(ins, e.aligned)) for e in h.entries))


def permute(job: Job, symmetry: Symmetry, state: JobState) -> JobState:
    """``state`` with its tasks, channels and records renamed by ``symmetry``."""
    tasks_of, records_of = symmetry.tasks, symmetry.records
    snapshot, handler = partial(_permuted_snapshot, symmetry), partial(_permuted_handler, symmetry)
    recs, txns = partial(_permuted_records, records_of), partial(_permuted_txns, records_of)

    n = len(job.tasks)
    tasks = [None] * n
    for t, ts in enumerate(state.tasks):
        tasks[tasks_of[t]] = ts._replace(
            handler=handler(t, ts.handler), end_of_data_in=_positions_mask(symmetry.inputs[t], ts.end_of_data_in),
            acked=_positions_mask(symmetry.outputs[t], ts.acked),
            snapshot=None if ts.snapshot is None else (ts.snapshot[0], snapshot(t, ts.snapshot[1])),
            outbox=tuple((k, snapshot(t, snap)) for k, snap in ts.outbox),
            txn=None if ts.txn is None else recs(ts.txn), precommitted=txns(ts.precommitted),
            recovered=txns(ts.recovered))
    queues: list[Any] = [None] * len(job.channels)
    received = [0] * len(job.channels)
    c: Any  # a channel's index, then the coordinator
    for c, queue in enumerate(state.queues):
        queues[symmetry.channels[c]] = tuple((DATA, records_of[m[1]]) if m[0] == DATA else m for m in queue)
        received[symmetry.channels[c]] = state.received[c]
    c = state.coordinator
    pending, restore = c.pending, c.restore
    if pending is not None:
        pending = pending._replace(
            wait=_tasks_mask(symmetry, pending.wait), acked=_tasks_mask(symmetry, pending.acked),
            commit=_tasks_mask(symmetry, pending.commit), finished=_tasks_mask(symmetry, pending.finished),
            snapshots=_by_position(tasks_of, tuple(snapshot(t, s) for t, s in enumerate(pending.snapshots))))
    if restore is not None:
        restore = restore._replace(
            finished=_tasks_mask(symmetry, restore.finished),
            snapshots=_by_position(tasks_of, tuple(snapshot(t, s) for t, s in enumerate(restore.snapshots))))
    coordinator = c._replace(known_finished=_tasks_mask(symmetry, c.known_finished),
                             finished_reports=_tasks_mask(symmetry, c.finished_reports),
                             known_end_of_data=_tasks_mask(symmetry, c.known_end_of_data),
                             pending=pending, restore=restore)
    return JobState(tasks=tuple(tasks), queues=tuple(queues), received=tuple(received),
                    rpcs=_by_position(tasks_of, state.rpcs), notifications=_by_position(tasks_of, state.notifications),
                    coordinator=coordinator, committed=_by_position(tasks_of, state.committed, txns))


def _order_key(state: JobState) -> tuple:
    """A cheap part of the order representatives are chosen by (``repr`` decides ties): small
    numbers per task, then per channel, the same in every process."""
    per_task = tuple((ts.phase, ts.emitted, len(ts.outbox), len(ids), k)
                     for ts, ids, k in zip(state.tasks, state.rpcs, state.notifications))
    return per_task, tuple(zip(state.received, map(len, state.queues)))


def _renamed_key(symmetry: Symmetry, key: tuple) -> tuple:
    per_task, per_channel = key
    return _by_position(symmetry.tasks, per_task), _by_position(symmetry.channels, per_channel)


def canonical_function(job: Job) -> Callable[[JobState], JobState]:
    """The representative of a state's orbit under :func:`symmetries` (the state itself when
    the job has none): the member that comes first by :func:`_order_key`, then by ``repr``."""
    group = symmetries(job)
    if not group:
        return lambda state: state

    inverses = [(symmetry, _inverse(symmetry.tasks), _inverse(symmetry.channels)) for symmetry in group]

    def representative(state: JobState) -> JobState:
        # The order key of a renamed state is the renamed key (_renamed_key): only the winner is
        # built; the per-task part decides most comparisons, so the per-channel part waits.
        per_task, per_channel = _order_key(state)
        tied: list[Any]
        best_tasks, best_channels, tied = per_task, per_channel, [None]   # None: the state itself
        for symmetry, task_source, channel_source in inverses:
            tasks = tuple(map(per_task.__getitem__, task_source))
            if tasks > best_tasks:
                continue
            channels = tuple(map(per_channel.__getitem__, channel_source))
            if tasks < best_tasks or channels < best_channels:
                best_tasks, best_channels, tied = tasks, channels, [symmetry]
            elif channels == best_channels:
                tied.append(symmetry)
        if len(tied) == 1:
            return state if tied[0] is None else permute(job, tied[0], state)
        # A state symmetric under some renamings ties with itself: compare distinct members only.
        members = {state if symmetry is None else permute(job, symmetry, state) for symmetry in tied}
        return members.pop() if len(members) == 1 else min(members, key=repr)

    return representative

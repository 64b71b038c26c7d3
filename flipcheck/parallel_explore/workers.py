"""One whole-job exploration on every core of one machine (``flipcheck explore --workers N``).

The search runs breadth-first, one level per round, like the Spark exploration
(:mod:`.spark`) and with its expansion and numbering (:mod:`.expansion`):

1. each worker (a forked process) holds some of the level's states and expands them; it keeps
   each successor where it was made and sends the driver the steps only (labels, fingerprints,
   violations, marks), in parts of :data:`STREAM_STATES` expanded states, as it goes;
2. the driver merges the parts by state number as they arrive and numbers the new states in the
   order the single-process explorer would (:func:`~.expansion.number_level`: the same
   :class:`~flipcheck.properties.explore.GraphBuilder`, its seen-set and the graph that the
   liveness properties need), while the workers expand the rest of the level (:class:`_Streamed`);
   when the numbering meets ``max_states`` the driver tells them to stop after the part each is
   on, as one process stops at the bound (``_Streamed.cut``);
3. a worker that ends its share while another still has :data:`GIVE_AT` states or more to
   expand is given the last half of them: the states cost unequal work, so equal shares end at
   different times, and the wall time of a level is its busiest worker's;
4. a new state is held next by the worker that made it, the one that expanded its parent
   (:func:`_placed`), so it crosses no process; only what a worker made beyond its fair share of
   the next level moves, in one batch per pair of workers.

So the counts, the state numbers and the counterexamples are those of ``flipcheck explore
--workers 1`` (one process), number for number. Workers are forked: they share the driver's hash
seed, so their fingerprints agree. The liveness properties are judged after the search on the
driver's graph (:func:`~flipcheck.properties.protocol_explore.counterexamples`): deadlocks are
found during the expansions, the backward searches (cannot reach the end, hopeless aborts, the
lasso) stay serial, see docs/protocol.md.

With ``resume_dir`` the driver saves its graph and the next level in the Spark exploration's
form (:mod:`.saved_levels`), every :data:`SAVE_EVERY` seconds at a level's end and at the end,
and a run with the same directory and job continues from the last level saved. Its states are
then fingerprinted with :func:`~flipcheck.properties.fingerprints.stable_fingerprint`, which
hashes their strings with Python's seed: ``PYTHONHASHSEED`` must be set before Python starts
(``flipcheck explore`` sets it and starts again when it is not), and ``meta.json`` keeps a
probe of it, so a run under another seed is refused, never continued.

Example
-------
>>> from flipcheck.generators.protocol import example_graph
>>> from flipcheck.properties.protocol_explore import explore_job
>>> spec = job_spec(example_graph("pair"), "cancel-pending-on-finish", {"records": 1})
>>> spread = explore_job_on_workers(spec, workers=2)
>>> alone = explore_job(job_from_spec(spec), store="fingerprints")
>>> (spread.states, spread.transitions) == (alone.states, alone.transitions)
True
>>> [c.labels for c in spread.counterexamples] == [c.labels for c in alone.counterexamples]
True
"""

from __future__ import annotations

import functools
import gc
import heapq
import json
import multiprocessing
import os
import sys
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable

from flipcheck.child_processes import die_with_parent
from flipcheck.errors import UsageError
from flipcheck.properties.explore import GraphBuilder, StateGraph
from flipcheck.properties.fingerprints import stable_fingerprint
from flipcheck.properties.protocol_explore import JobExploration, counterexamples
from flipcheck.properties.protocol_reduction import sound_reduction
from flipcheck.reference_impl.user_variants import failure_in_variant

from .expansion import cycle_collector_paused, expand, initial, job_from_spec, job_spec, number_level, spec_text, take_coverage
from .saved_levels import open_saved, resume_meta, save_level

__all__ = ["explore_job_on_workers", "WorkersReport", "default_workers", "job_spec", "job_from_spec",
           "fixed_hash_seed"]


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class WorkersReport:
    """Where a run's time went: the driver's serial work (merging and numbering, while the
    workers wait) against the wall time, and the CPU seconds of the driver and of all workers;
    with a reduction and a violation, the full model's search for the traces included."""

    workers: int
    wall_seconds: float = 0.0
    driver_serial_seconds: float = 0.0
    driver_serial_cpu_seconds: float = 0.0
    driver_cpu_seconds: float = 0.0
    workers_cpu_seconds: float = 0.0
    slowest_worker_cpu_seconds: float = 0.0   # per level the busiest worker's CPU seconds, summed
    driver_overlapped_cpu_seconds: float = 0.0   # the driver's numbering while workers still expanded
    states_moved: int = 0     # states sent to another worker, to balance a level
    states_given: int = 0     # states an idle worker expanded for a busy one, at a level's end
    imbalance: int = 0        # the most states one worker held beyond another, over the levels
    # States expanded, by the workers or the driver. A bound met within a level stops each worker
    # after the part it is on when the driver's word reaches it: a few parts past the state that
    # met it (1,495-1,995 states in the test's runs), not the rest of the level.
    states_expanded: int = 0
    resumed_at: int | None = None   # the saved level a resumed search went on from

    @property
    def driver_cpu_share(self) -> float:
        total = self.driver_cpu_seconds + self.workers_cpu_seconds
        return self.driver_cpu_seconds / total if total else 0.0

    @property
    def serial_share(self) -> float:
        return self.driver_serial_seconds / self.wall_seconds if self.wall_seconds else 0.0

    @property
    def critical_cpu_seconds(self) -> float:
        """The run's wall time on as many free cores as processes: per level the busiest worker,
        then the driver's work that did not overlap the workers' (judging included)."""
        return self.slowest_worker_cpu_seconds + self.driver_cpu_seconds - self.driver_overlapped_cpu_seconds


MIN_LEVEL = 1_000   # a smaller level is expanded by the driver: a few milliseconds, less than a fork


class WorkerFailed(RuntimeError):
    """A worker raised in flipcheck's own code: its traceback is the message."""


def _expand_level(text: str, level: list) -> tuple[dict, list]:
    """The successors an expansion of ``level`` made, by fingerprint, and its steps for the driver."""
    held, steps = {}, []
    for record in expand(text, level):
        if record[0] == "state":
            held[record[1]] = record[2]
        else:
            steps.append(record[1:])
    return held, steps


class _Share:
    """A worker's states to expand, in number order, as an iterator whose end can be moved
    earlier: :meth:`give_half` hands the last half of what is left to an idle worker."""

    def __init__(self, items: list):
        self.items, self.next, self.end = items, 0, len(items)

    def __iter__(self) -> "_Share":
        return self

    def __next__(self):
        if self.next >= self.end:
            raise StopIteration
        self.next += 1
        return self.items[self.next - 1]

    def give_half(self) -> list:
        cut = self.end - (self.end - self.next) // 2
        given, self.end = self.items[cut:self.end], cut
        return given


def _expand_streamed(text: str, share: _Share, conn, per_message: int, held: dict, tag: tuple, last_tag: tuple,
                     inboxes) -> None:
    """Expand ``share``, keep the successors in ``held`` and send the steps to the driver in parts
    of ``per_message`` states. Between two parts the driver may ask for half of what is left
    (``("give", taker)``, once a level, only with ``inboxes``), which goes to the taker's inbox,
    or say that the search met its bound (``("cut", None)``): then the rest is not expanded."""
    started = time.process_time()
    steps: list = []
    for record in expand(text, share):
        if record[0] == "state":
            held[record[1]] = record[2]
            continue
        steps.append(record[1:])
        if len(steps) == per_message:   # the driver numbers these while we go on
            conn.send(tag + (steps,))
            steps = []
            if conn.poll():
                command, taker = conn.recv()
                if command == _CUT:
                    break
                assert command == "give" and inboxes is not None, command   # the driver asks each worker once
                inboxes[taker].put(share.give_half())
                inboxes = None
    conn.send(last_tag + (steps, time.process_time() - started, time.perf_counter()))


def _serve(text: str, me: int, count: int, conn, inboxes) -> None:
    """A worker: answers the driver's commands until ``stop``. ``level`` is its share of the
    level being searched, in number order; ``held`` the successors its last expansion made."""
    level: list = []
    held: dict = {}
    try:
        die_with_parent()   # a driver killed with SIGKILL leaves no worker waiting on its pipe
        take_coverage(text)   # what the driver counted before the fork is the driver's
        gc.disable()   # for the worker's life: see cycle_collector_paused
        while True:
            command, payload = conn.recv()
            if command == "level":
                level = payload
            elif command == "expand":   # payload: the expanded states per message
                held = {}
                _expand_streamed(text, _Share(level), conn, payload, held, (_STEPS,), (_LAST_STEPS,), inboxes)
                level = []
            elif command == "take":   # payload: the worker giving, the expanded states per message
                giver, per_message = payload
                _expand_streamed(text, _Share(inboxes[me].get()), conn, per_message, held,
                                 (_TAKEN_STEPS, giver), (_TAKEN_LAST, giver), None)
            elif command == "give":   # asked after this worker's expansion ended: nothing is left to give
                inboxes[payload].put([])
            elif command == _CUT:   # the bound was met after this worker's expansion ended
                pass
            elif command == "route":   # payload: the new states this worker made first, their numbers and holders
                started = time.process_time()
                outgoing: list = [[] for _ in range(count)]
                for key, number, holder in zip(*payload):
                    outgoing[holder].append((key, (number, held[key])))
                held = {}
                for other in range(count):
                    if other != me:
                        inboxes[other].put(outgoing[other])
                level = outgoing[me]
                for _ in range(count - 1):
                    level.extend(inboxes[me].get())
                level.sort(key=lambda item: item[1][0])
                conn.send((sum(len(outgoing[o]) for o in range(count) if o != me), time.process_time() - started))
            elif command == "show level":   # to be saved: the states it holds for the next level
                conn.send(level)
            elif command == "stop":
                conn.send((time.process_time(), take_coverage(text)))
                return
    except BaseException as error:   # noqa: BLE001 - reported to the driver, which raises it
        conn.send((_FAILED, failure_in_variant(error), traceback.format_exc()))


_FAILED = "flipcheck worker failed"
_STEPS, _LAST_STEPS = "steps", "last steps"   # a level's steps, sent as the worker makes them
_TAKEN_STEPS, _TAKEN_LAST = "taken steps", "last taken steps"   # steps of states another worker gave
_CUT = "cut"   # the search met its bound: what is left of the level is not expanded (nor numbered)
# States a worker expands before it sends their steps: the driver numbers them while the workers
# expand the rest of the level, so only the last message's numbering waits on them.
STREAM_STATES = 500
# States a worker must have left for an idle one to be given half of them: below this, moving
# them (about a fifth of their expansion's cost) and the wait for the giver's next part, up to
# STREAM_STATES expansions, would eat what the second core saves.
GIVE_AT = 2 * STREAM_STATES
# Seconds between two levels saved for a resume: saving encodes the whole level and rewrites the
# graph, about what the search costs again if done every level; a kill loses at most this much.
SAVE_EVERY = 10.0


def _receive(conn):
    answer = conn.recv()
    if isinstance(answer, tuple) and len(answer) == 3 and answer[0] == _FAILED:
        _, in_variant, trace = answer
        if in_variant is not None:   # a user's variant raised: a bad option, as in one process
            raise UsageError(in_variant)
        raise WorkerFailed(trace)
    return answer


def explore_job_on_workers(spec: dict, *, workers: int | None = None, max_states: int | None = None,
                           liveness: bool = True, progress: Callable[[StateGraph, float], None] | None = None,
                           progress_every: float = 2.0, reduction: str = "none", coverage: bool = False,
                           report: WorkersReport | None = None, min_level: int = MIN_LEVEL,
                           resume_dir: str | None = None, save_every: float = SAVE_EVERY) -> JobExploration:
    """Explore the job of ``spec`` (:func:`job_spec`) level by level on ``workers`` forked
    processes (default: every core); the result equals
    :func:`~flipcheck.properties.protocol_explore.explore_job` with ``store="fingerprints"``, the
    same ``reduction`` and ``coverage``. With a reduction, the full model's search for the shortest
    traces runs on the workers too. Levels of fewer than ``min_level`` states are expanded by the
    driver, and the workers start at the first larger one. ``report`` (a :class:`WorkersReport`) is filled in with where
    the time went. With ``resume_dir`` a level is saved there whenever ``save_every`` seconds
    passed since the last one saved (and the first and last levels), and a run with the same
    directory and job continues from the last one saved (``PYTHONHASHSEED`` must be set: see
    :func:`fixed_hash_seed`); ``report.resumed_at`` is then the level it continued from, and the
    coverage, which only a whole search counts, is None."""
    count = workers or default_workers()
    job = job_from_spec(spec)
    reduction = sound_reduction(job, reduction)
    report = report if report is not None else WorkersReport(count)
    report.workers = count
    started, cpu_started = time.perf_counter(), time.process_time()
    saved = save = None
    if resume_dir is not None:
        path = Path(resume_dir)
        saved = open_saved(path, _resume_meta(spec, reduction, max_states, liveness))
        report.resumed_at = None if saved is None else saved[1]
        save = functools.partial(save_level, path)
    with cycle_collector_paused():
        graph, measured = _search(spec_text(spec, reduction, coverage, stable=resume_dir is not None), count, report,
                                  max_states=max_states,
                                  edges=liveness, progress=progress, progress_every=progress_every,
                                  min_level=min_level, saved=saved, save=save, save_every=save_every)
    if saved is not None:
        measured = None   # the levels before the saved one were counted by the killed run

    def full_search(stop_when, edges):   # the full model, numbered as one process numbers it
        with cycle_collector_paused():
            return _search(spec_text(spec), count, report, edges=edges, stop_when=stop_when,
                           min_level=min_level)[0]

    found = counterexamples(job, graph, liveness, reduction, full_search=full_search)
    report.wall_seconds = time.perf_counter() - started
    report.driver_cpu_seconds = time.process_time() - cpu_started
    return JobExploration(job, graph, found, reduction, measured)


def fixed_hash_seed() -> bool:
    """Whether this process hashes with a seed a later process can share (``PYTHONHASHSEED``
    set to a number before Python started): what resuming a saved search needs, since its
    fingerprints hash the states' strings with it."""
    return os.environ.get("PYTHONHASHSEED", "") not in ("", "random") or not sys.flags.hash_randomization


def _resume_meta(spec: dict, reduction: str, max_states: int | None, liveness: bool) -> dict:
    """What names a saved search: the Spark exploration's (the job, its reduction, the bounds, the
    hash seed), and a probe of the seed this process really hashes with (the variable could have
    been set after Python started)."""
    if not fixed_hash_seed():
        raise UsageError("resuming needs one hash seed for every run (fingerprints hash strings with it): "
                         "set PYTHONHASHSEED, e.g. to 0, before Python starts")
    return dict(resume_meta(json.loads(spec_text(spec, reduction)), max_states, liveness),
                hash_probe=stable_fingerprint(("flipcheck", "hash probe")))


class _Streamed:
    """One level's steps as the workers send them (:data:`STREAM_STATES` expanded states a
    message), merged in the order of the expanded states' numbers: the driver numbers each part as
    it arrives, while the workers expand the rest of the level. Whatever a worker sent is read at
    once (between two parts numbered), or the worker would wait on a full pipe while the driver
    numbers another's states. ``waiting()`` is called every ``every`` seconds the driver waits
    for a worker (a long level's sign of life).

    States cost unequal work, so equal shares end at different times. A worker that ends its own
    share (or states it was given) while another still has :data:`GIVE_AT` or more left is given
    the last half of them: the giver's stream of steps goes on with the taker's steps of those
    states, which follow all of the giver's own in number order, so the merge is unchanged.
    ``holder`` (the level's states' workers, by number) is told who expanded each given state: the
    successors it made are held there."""

    def __init__(self, pool: "_Pool", holder: dict, waiting: Callable[[], None] | None, every: float):
        count = pool.count
        self.cpus: list = [0.0] * count   # each worker's CPU seconds for the level
        self.ended = 0.0       # when the last worker ended (perf_counter is one clock for all processes)
        self.given = 0         # states expanded by another worker than the one that held them
        self.expanded = 0      # states whose steps were received
        self._waiting, self._every = waiting, every
        self._pool, self._holder = pool, holder
        self._left = Counter(holder.values())      # per worker: states of its share not yet reported
        self._own: list = [deque() for _ in range(count)]     # parts received, not yet numbered
        self._taken: list = [deque() for _ in range(count)]   # the same, of the states worker w gave
        self._expanding = set(range(count))   # workers still expanding their own share
        self._taker: dict = {}                # giver -> the worker expanding what it gave
        self._asked: set = set()              # workers asked to give (once a level)
        self._cut = False                     # the bound was met: the rest of the level is dropped
        self._listening = set(pool.conns)     # the pipes more is still to come on
        self._worker = {conn: w for w, conn in enumerate(pool.conns)}
        for conn in pool.conns:
            conn.send(("expand", STREAM_STATES))
        self.steps = heapq.merge(*(self._sent_by(w) for w in range(count)), key=lambda step: step[0])

    def _read(self, ready) -> None:
        for conn in ready:
            w = self._worker[conn]
            answer = _receive(conn)
            tag = answer[0]
            if tag in (_STEPS, _LAST_STEPS):
                self._own[w].append(answer[1])
                self._left[w] -= len(answer[1])
                self.expanded += len(answer[1])
            else:   # steps of states ``answer[1]`` gave to w
                self._taken[answer[1]].append(answer[2])
                self.given += len(answer[2])
                self.expanded += len(answer[2])
                for step in answer[2]:
                    self._holder[step[0]] = w
            if tag in (_LAST_STEPS, _TAKEN_LAST):
                self._listening.discard(conn)
                self.cpus[w] += answer[-2]
                self.ended = max(self.ended, answer[-1])
                if tag == _LAST_STEPS:
                    self._expanding.discard(w)
                else:
                    del self._taker[answer[1]]
                self._find_work_for(w)

    def cut(self) -> None:
        """The search met its bound: tell every worker still expanding to stop after the part it
        is on (what it sends is read, not numbered), and give no more work out."""
        self._cut = True
        for conn in self._listening:
            conn.send((_CUT, None))

    def _find_work_for(self, taker: int) -> None:
        """Have the worker with the most states left give half of them to the idle ``taker``."""
        if self._cut:
            return
        left = [w for w in self._expanding if w not in self._asked and self._left[w] >= GIVE_AT]
        if not left:
            return
        giver = max(left, key=lambda w: (self._left[w], -w))
        self._asked.add(giver)
        self._taker[giver] = taker
        self._pool.conns[giver].send(("give", taker))
        self._pool.conns[taker].send(("take", (giver, STREAM_STATES)))
        self._listening.add(self._pool.conns[taker])

    def _take_in(self, still_waiting: Callable[[], bool]) -> None:
        """Read what was sent, then wait for more while ``still_waiting()``."""
        if self._listening:   # take in what is there, without waiting
            self._read(wait(list(self._listening), timeout=0))
        while still_waiting():
            ready = wait(list(self._listening), timeout=None if self._waiting is None else self._every)
            if not ready and self._waiting is not None:
                self._waiting()
            self._read(ready)

    def _sent_by(self, w: int):
        """Worker ``w``'s steps in number order: its own share's, then those of the states it gave."""
        own, taken = self._own[w], self._taken[w]
        while own or w in self._expanding:
            self._take_in(lambda: not own and w in self._expanding)
            if own:
                yield from own.popleft()
        while taken or w in self._taker:
            self._take_in(lambda: not taken and w in self._taker)
            if taken:
                yield from taken.popleft()


class _Pool:
    """``count`` forked workers, each given the states of ``level`` whose fingerprint it owns."""

    def __init__(self, text: str, count: int, level: list):   # the first level: shared by fingerprint
        context = multiprocessing.get_context("fork")
        self.count = count
        self.inboxes = [context.Queue() for _ in range(count)]
        pipes = [context.Pipe() for _ in range(count)]
        self.processes = [context.Process(target=_serve, args=(text, w, count, pipes[w][1], self.inboxes),
                                          daemon=True) for w in range(count)]
        self.conns = [ours for ours, _ in pipes]
        self.stopped = False
        gc.freeze()   # the objects the workers inherit: their collector skips them, their pages stay shared
        try:
            for process in self.processes:
                process.start()
        finally:
            gc.unfreeze()
        for w, conn in enumerate(self.conns):
            conn.send(("level", [item for item in level if item[0] % count == w]))

    def ask(self, command: str, payload=None) -> list:
        """Every worker's answer to ``command``."""
        return self.ask_each(command, [payload] * self.count)

    def ask_each(self, command: str, payloads: list) -> list:
        """Every worker's answer to ``command``, worker ``w`` given ``payloads[w]``."""
        for conn, payload in zip(self.conns, payloads):
            conn.send((command, payload))
        answers: dict = {}
        while len(answers) < self.count:   # in the order they come: one that failed may leave another waiting on it
            for conn in wait([conn for conn in self.conns if conn not in answers]):
                answers[conn] = _receive(conn)
        return [answers[conn] for conn in self.conns]

    def stop(self, report: WorkersReport):
        """End the workers; their coverage, summed (None unless counted)."""
        measured = None
        for cpu, covered in self.ask("stop"):
            report.workers_cpu_seconds += cpu
            if covered is not None:
                measured = covered if measured is None else (measured.add(covered) or measured)
        self.stopped = True
        return measured

    def close(self) -> None:
        for process in self.processes:
            if not self.stopped:   # a worker failed or we were interrupted: the others may wait forever
                process.terminate()
            process.join()
        for queue in self.inboxes:
            queue.close()


def _placed(fresh: dict, parents, holder: dict, count: int) -> tuple[list, dict, int]:
    """Where a level's new states go. Each is held by the worker that made it, the one that
    expanded its parent (``holder``), so it crosses no process; only what a worker made beyond
    its fair share (the level's size over ``count``, rounded up) moves to the workers under
    theirs. Returns per maker the ``(keys, numbers, holders)`` it is to send on, in number order,
    the new states' holders by number, and the most states one worker then holds beyond another
    (every worker ends with its fair share less the room left to it)."""
    made: list = [[] for _ in range(count)]
    for key, number in fresh.items():
        made[holder[parents[number]]].append((key, number))
    fair = -(-len(fresh) // count)
    room = [max(0, fair - len(m)) for m in made]
    routes, placed = [], {}
    for w, mine in enumerate(made):
        holders = [w] * len(mine)
        surplus, position = len(mine) - fair, len(mine)
        for other in range(count):
            while surplus > 0 and room[other] > 0:
                position -= 1
                holders[position] = other
                room[other] -= 1
                surplus -= 1
        routes.append(([key for key, _ in mine], [number for _, number in mine], holders))
        placed.update(zip((number for _, number in mine), holders))
    return routes, placed, max(room) - min(room)


def _search(text: str, count: int, report: WorkersReport, *, max_states: int | None = None, edges: bool = True,
            progress: Callable[[StateGraph, float], None] | None = None, progress_every: float = 2.0,
            stop_when: Callable[[StateGraph], bool] | None = None, min_level: int = MIN_LEVEL,
            saved: tuple | None = None, save: Callable | None = None, save_every: float = 0.0):
    """The graph of the job of ``text`` searched on ``count`` workers (up to ``max_states``, or
    until ``stop_when(graph)`` holds after a level), and the coverage counted. Until a level has
    ``min_level`` states the driver expands it itself: a small search forks no process. The
    search goes on from ``saved`` (:func:`~.saved_levels.open_saved`'s) if given, and
    ``save(builder, depth, truncated, next level)`` is called after the first level, the last,
    and every level that ends ``save_every`` seconds or more after the last one saved."""
    started = time.perf_counter()
    take_coverage(text)   # counts start from zero in this search
    key, state, mark, problems = initial(text)   # also builds the job, which the workers inherit
    level: list | None
    if saved is None:
        builder = GraphBuilder("fingerprints", edges=edges)
        builder.seen(None, key=key)
        builder.add(None, -1, None, 0, mark, problems)
        level, depth, truncated = [(key, (0, state))], 0, False   # the driver's, until the workers start
        if save is not None:
            save(builder, depth, truncated, level)
    else:
        builder, depth, truncated, level = saved
    graph = builder.graph
    level_size = len(level)
    saved_at = time.perf_counter()
    pool: _Pool | None = None
    measured = None
    try:
        next_report = started + progress_every
        while True:
            if pool is None and len(level) >= min_level:
                holder = {number: key % count for key, (number, _) in level}   # who expands each state
                pool, level = _Pool(text, count, level), None
            if level_size == 0:
                break
            depth += 1
            if pool is None:
                report.states_expanded += len(level)
                held, results = _expand_level(text, level)
                serial, serial_cpu = time.perf_counter(), time.process_time()
                fresh, cut = number_level(builder, depth, results, max_states)
                level = [] if cut else [(key, (number, held[key])) for key, number in fresh.items()]   # numbers ascend
            else:
                streamed = _Streamed(pool, holder, waiting=None if progress is None else (
                    lambda: progress(graph, time.perf_counter() - started)), every=max(progress_every, 0.1))
                level_cpu = time.process_time()
                fresh, cut = number_level(builder, depth, streamed.steps, max_states)
                if cut:   # one process stops at the bound too: the rest of the level is not expanded
                    streamed.cut()
                for _ in streamed.steps:   # cut short: the parts still on their way are read, not numbered
                    pass
                # Serial: the driver's numbering after the last worker ended (CPU-bound, so its CPU
                # is about its wall time); the rest of it overlapped the workers' expansion.
                serial = min(streamed.ended, time.perf_counter())
                numbering_cpu = time.process_time() - level_cpu
                serial_cpu = time.process_time() - min(numbering_cpu, time.perf_counter() - serial)
                report.driver_overlapped_cpu_seconds += serial_cpu - level_cpu
                report.slowest_worker_cpu_seconds += max(streamed.cpus)
                report.states_given += streamed.given
                report.states_expanded += streamed.expanded
                routes, holder, imbalance = _placed(fresh, graph.parent, holder, count)
                report.imbalance = max(report.imbalance, imbalance)
            truncated = truncated or cut
            level_size = 0 if truncated else len(fresh)   # a bound met ends the search, as in one process
            report.driver_serial_seconds += time.perf_counter() - serial
            report.driver_serial_cpu_seconds += time.process_time() - serial_cpu
            if pool is not None:
                answers = pool.ask_each("route", routes)
                report.states_moved += sum(moved for moved, _ in answers)
                report.slowest_worker_cpu_seconds += max(cpu for _, cpu in answers)
            if save is not None and (level_size == 0 or time.perf_counter() - saved_at >= save_every):
                save(builder, depth, truncated, [] if level_size == 0 else level if pool is None else
                     sorted((item for part in pool.ask("show level") for item in part), key=lambda item: item[1][0]))
                saved_at = time.perf_counter()
            now = time.perf_counter()
            if progress is not None and now >= next_report:
                progress(graph, now - started)
                next_report = now + progress_every
            if stop_when is not None and stop_when(graph):
                break
        measured = take_coverage(text)
        if pool is not None:
            theirs = pool.stop(report)
            if theirs is not None:
                measured.add(theirs)
    finally:
        if pool is not None:
            pool.close()
    graph.complete = not truncated and graph.expanded == len(builder)
    graph.seconds = time.perf_counter() - started
    return graph, measured

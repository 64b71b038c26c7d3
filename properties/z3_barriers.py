"""z3: the exactly-once barrier handler as a symbolic transition system; BMC and induction.

The state of :class:`flipcheck.model.barriers.HandlerState` (one Bool per channel for the open,
aligned and blocked sets; Ints for the current id, the target and the phase), the channel
environment of :mod:`flipcheck.model.channel_env` (per channel the last id and the announced
id; the last RPC id) and one history variable (the last triggered id) become z3 terms. One step
is a disjunction over the event kinds and channels with a symbolic checkpoint id; each disjunct
is the model's rule written with ``If`` terms (:func:`symbolic_step`). Records are left out:
they never change the state. The encoding is checked against the explicit model transition by
transition (``tests/cover/test_barriers_z3.py``), so it is an encoding of the model, not a second
model.

:func:`bmc` searches for a violation of each invariant on every path of length ``<= k`` from
the initial state; :func:`induction` checks, for each invariant, whether it is 1-inductive on
its own, inductive relative to all the others (their conjunction is an inductive invariant,
which then proves every one of them for every depth), and otherwise k-inductive.

Example
-------
>>> from flipcheck.model.barriers import Config
>>> report = bmc(Config(channels=2), depth=3)
>>> report.holds, sorted(report.violated)
(True, [])
>>> result = induction(Config(channels=2))
>>> result.all_proved, "blocked_subset_open" in result.inductive_alone
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import z3

from flipcheck.model.barriers import (
    ALIGNED, ANNOUNCE, AT_LEAST_ONCE, BARRIER, CANCEL, COLLECTING, END, RPC, TIMEOUT, UNALIGNED_COLLECTING,
    UNALIGNED_WAITING, WAITING, Config, HandlerState,
)
from flipcheck.model.channel_env import ChannelEnv

__all__ = ["Frame", "INVARIANTS", "fresh_frame", "initial", "type_ok", "symbolic_step", "transition", "bmc",
           "induction", "BmcReport", "InductionReport", "frame_values", "evaluate_step", "invariant_checks"]


class Frame(NamedTuple):
    """One state as z3 terms (lists are per channel)."""

    open: tuple
    current: z3.ArithRef
    pending: z3.BoolRef
    aligned: tuple
    target: z3.ArithRef
    blocked: tuple
    phase: z3.ArithRef
    last: tuple
    cancelled: tuple
    owed: tuple
    last_rpc: z3.ArithRef
    last_trigger: z3.ArithRef  # history: the last triggered id (-1: none)


def fresh_frame(config: Config, name: str) -> Frame:
    n = range(config.channels)
    return Frame(
        open=tuple(z3.Bool(f"{name}_open{c}") for c in n), current=z3.Int(f"{name}_cur"),
        pending=z3.Bool(f"{name}_pend"), aligned=tuple(z3.Bool(f"{name}_al{c}") for c in n),
        target=z3.Int(f"{name}_tgt"), blocked=tuple(z3.Bool(f"{name}_blk{c}") for c in n),
        phase=z3.Int(f"{name}_ph"), last=tuple(z3.Int(f"{name}_last{c}") for c in n),
        cancelled=tuple(z3.Bool(f"{name}_cnl{c}") for c in n),
        owed=tuple(z3.Int(f"{name}_owed{c}") for c in n), last_rpc=z3.Int(f"{name}_lrpc"),
        last_trigger=z3.Int(f"{name}_ltrig"))


def _count(bools) -> z3.ArithRef:
    return z3.Sum([z3.If(b, 1, 0) for b in bools])


def _ite(cond, a: Frame, b: Frame) -> Frame:
    def pick(x, y):
        if isinstance(x, tuple):
            return tuple(z3.If(cond, xi, yi) for xi, yi in zip(x, y))
        return z3.If(cond, x, y)
    return Frame(*(pick(x, y) for x, y in zip(a, b)))


def _with(values: tuple, index: int, value) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


def initial(config: Config, f: Frame) -> z3.BoolRef:
    return z3.And(*f.open, f.current == -1, z3.Not(f.pending), *[z3.Not(a) for a in f.aligned], f.target == 0,
                  *[z3.Not(b) for b in f.blocked], f.phase == config.base_phase, *[x == 0 for x in f.last],
                  *[z3.Not(x) for x in f.cancelled],
                  *[x == 0 for x in f.owed], f.last_rpc == 0, f.last_trigger == -1)


def type_ok(config: Config, f: Frame) -> z3.BoolRef:
    """Type invariant, as TLA+'s TypeOK: the ranges every variable keeps."""
    if config.mode == ALIGNED:
        phases = (WAITING, COLLECTING)
    elif config.alternating:
        phases = (WAITING, COLLECTING, UNALIGNED_WAITING, UNALIGNED_COLLECTING)
    else:
        phases = (UNALIGNED_WAITING, UNALIGNED_COLLECTING)
    owed = [x >= 0 for x in f.owed] if config.alternating else [x == 0 for x in f.owed]
    return z3.And(z3.Or(f.current == -1, f.current >= 1), f.target >= 0, f.target <= config.channels,
                  z3.Or(*[f.phase == p for p in phases]), *[x >= 0 for x in f.last], *owed, f.last_rpc >= 0,
                  f.last_trigger >= -1)


# -- the model's rules as terms (model/barriers.py, same names) ------------------------------------


class _Step:
    """Accumulates the trigger conditions of one step while the rules rewrite the frame."""

    def __init__(self, config: Config):
        self.config = config
        self.triggers: list = []  # (condition, id)

    def abort(self, f: Frame, checkpoint_id) -> Frame:
        none = tuple(z3.BoolVal(False) for _ in f.open)
        return f._replace(current=z3.If(checkpoint_id > f.current, checkpoint_id, f.current),
                          pending=z3.BoolVal(False), aligned=none, target=z3.IntVal(0), blocked=none,
                          phase=z3.IntVal(self.config.base_phase))

    def check_new(self, f: Frame, checkpoint_id) -> Frame:
        subsumed = _ite(f.pending, self.abort(f, f.current), f)
        started = subsumed._replace(current=checkpoint_id, pending=z3.BoolVal(True),
                                    aligned=tuple(z3.BoolVal(False) for _ in f.open), target=_count(f.open))
        return _ite(f.current < checkpoint_id, started, f)

    def complete_if_aligned(self, f: Frame) -> Frame:
        done = z3.And(f.pending, _count(f.aligned) == f.target)
        return _ite(done, f._replace(pending=z3.BoolVal(False), aligned=tuple(z3.BoolVal(False) for _ in f.open),
                                     target=z3.IntVal(0)), f)

    def trigger(self, condition, checkpoint_id) -> None:
        self.triggers.append((condition, checkpoint_id))

    def barrier(self, f: Frame, checkpoint_id, channel: int, rpc: bool, guard=True) -> Frame:
        cfg = self.config
        obsolete = z3.Or(f.current > checkpoint_id, z3.And(f.current == checkpoint_id, z3.Not(f.pending)))
        s = self.check_new(f, checkpoint_id)
        aligned = _with(s.aligned, channel, z3.BoolVal(True))
        everything = _count(aligned) == s.target
        blocked = _with(s.blocked, channel, z3.BoolVal(True)) if cfg.barriers_block and not rpc else s.blocked
        none = tuple(z3.BoolVal(False) for _ in f.open)
        base = z3.IntVal(cfg.base_phase)
        aligned_phase = z3.Or(s.phase == WAITING, s.phase == COLLECTING)
        done = z3.And(aligned_phase, everything)
        self.trigger(z3.And(guard, z3.Not(obsolete), z3.Or(done, s.phase == UNALIGNED_WAITING)), checkpoint_id)
        finished = z3.And(everything, z3.Or(aligned_phase, s.phase == UNALIGNED_WAITING,
                                            s.phase == UNALIGNED_COLLECTING))
        phase = z3.If(finished, base, z3.If(aligned_phase, z3.IntVal(COLLECTING), z3.IntVal(UNALIGNED_COLLECTING)))
        after = s._replace(aligned=aligned, blocked=tuple(z3.If(finished, no, b) for no, b in zip(none, blocked)),
                           phase=phase)
        return _ite(obsolete, f, self.complete_if_aligned(after))

    def end_of_partition(self, f: Frame, channel: int) -> Frame:
        cfg = self.config
        s = f._replace(open=_with(f.open, channel, z3.BoolVal(False)))
        if not cfg.after_finished:
            return _ite(s.pending, self.abort(s, s.current), s)
        aligned = _with(s.aligned, channel, z3.BoolVal(True))
        everything = _count(aligned) == s.target
        blocked = _with(s.blocked, channel, z3.BoolVal(False))
        finished = z3.And(everything, z3.Or(s.phase == COLLECTING, s.phase == UNALIGNED_COLLECTING))
        self.trigger(z3.And(s.pending, everything, s.phase == COLLECTING), s.current)
        after = s._replace(aligned=aligned, blocked=tuple(z3.And(z3.Not(finished), b) for b in blocked),
                           phase=z3.If(finished, z3.IntVal(cfg.base_phase), s.phase))
        return _ite(s.pending, self.complete_if_aligned(after), s)

    def cancellation(self, f: Frame, checkpoint_id) -> Frame:
        hit = z3.Or(checkpoint_id > f.current, z3.And(checkpoint_id == f.current, z3.Or(*f.aligned)))
        return _ite(hit, self.abort(f, checkpoint_id), f)

    def rpc(self, f: Frame, checkpoint_id) -> Frame:
        all_ended = z3.Not(z3.Or(*f.open))
        self.trigger(all_ended, checkpoint_id)
        s = f
        for channel in range(self.config.channels):
            s = _ite(f.open[channel], self.barrier(s, checkpoint_id, channel, rpc=True, guard=f.open[channel]), s)
        return _ite(all_ended, f, s)

    def timeout(self, f: Frame) -> Frame:
        self.trigger(z3.And(f.pending, f.phase == COLLECTING), f.current)
        phase = z3.If(f.pending, z3.If(f.phase == WAITING, z3.IntVal(UNALIGNED_WAITING),
                                       z3.If(f.phase == COLLECTING, z3.IntVal(UNALIGNED_COLLECTING), f.phase)),
                      f.phase)
        return f._replace(phase=phase)


def symbolic_step(config: Config, f: Frame, kind: str, channel: int | None, checkpoint_id) -> tuple:
    """``(guard, next frame)`` of one event kind on one (concrete) channel with a symbolic id:
    the guard is channel_env's validity rule, the frame the model's rule."""
    rules = _Step(config)
    ch = channel
    if kind == BARRIER:
        guard = z3.And(f.open[ch], z3.Not(f.blocked[ch]), f.last_rpc == 0,
                       z3.Or(f.owed[ch] == 0, f.owed[ch] == checkpoint_id), checkpoint_id > f.last[ch])
        nxt = rules.barrier(f, checkpoint_id, ch, rpc=False)
        nxt = nxt._replace(last=_with(f.last, ch, checkpoint_id), owed=_with(f.owed, ch, z3.IntVal(0)),
                           cancelled=_with(f.cancelled, ch, z3.BoolVal(False)))
    elif kind == CANCEL:
        guard = z3.And(f.open[ch], z3.Not(f.blocked[ch]), f.last_rpc == 0, f.owed[ch] == 0,
                       z3.Or(checkpoint_id > f.last[ch],
                             z3.And(checkpoint_id == f.last[ch], checkpoint_id > 0, z3.Not(f.cancelled[ch]))))
        nxt = rules.cancellation(f, checkpoint_id)._replace(last=_with(f.last, ch, checkpoint_id),
                                                             cancelled=_with(f.cancelled, ch, z3.BoolVal(True)))
    elif kind == ANNOUNCE:
        guard = z3.And(f.open[ch], z3.Not(f.blocked[ch]), f.last_rpc == 0, f.owed[ch] == 0,
                       checkpoint_id > f.last[ch])
        nxt = rules.check_new(f, checkpoint_id)._replace(owed=_with(f.owed, ch, checkpoint_id))
    elif kind == END:
        guard = z3.And(f.open[ch], z3.Not(f.blocked[ch]), f.owed[ch] == 0)
        nxt = rules.end_of_partition(f, ch)
    elif kind == RPC:
        guard = z3.And(*[checkpoint_id > x for x in (*f.last, *f.owed, f.last_rpc)])
        nxt = rules.rpc(f, checkpoint_id)._replace(last_rpc=checkpoint_id)
    elif kind == TIMEOUT:
        guard, nxt = z3.BoolVal(True), rules.timeout(f)
    else:
        raise ValueError(kind)
    fired = [z3.And(c, guard) for c, _ in rules.triggers]
    last_trigger = f.last_trigger
    for condition, checkpoint in rules.triggers:
        last_trigger = z3.If(condition, checkpoint, last_trigger)
    # Step property "triggered ids strictly increase": every trigger of this step is newer.
    ordered = z3.And(*[z3.Implies(c, x > f.last_trigger) for c, x in rules.triggers]) if fired else z3.BoolVal(True)
    return z3.And(guard, checkpoint_id >= 1), nxt._replace(last_trigger=last_trigger), ordered


def event_kinds(config: Config) -> list[tuple[str, int | None]]:
    kinds = [(BARRIER, c) for c in range(config.channels)] + [(CANCEL, c) for c in range(config.channels)]
    kinds += [(END, c) for c in range(config.channels)]
    if config.after_finished:
        kinds.append((RPC, None))
    if config.alternating:
        kinds += [(ANNOUNCE, c) for c in range(config.channels)] + [(TIMEOUT, None)]
    return kinds


def _equal(a: Frame, b: Frame) -> z3.BoolRef:
    parts = []
    for x, y in zip(a, b):
        parts += [xi == yi for xi, yi in zip(x, y)] if isinstance(x, tuple) else [x == y]
    return z3.And(*parts)


def transition(config: Config, f: Frame, g: Frame, checkpoint_id) -> tuple[z3.BoolRef, z3.BoolRef]:
    """``(T(f, g), ordered)``: some valid event leads from ``f`` to ``g``; ``ordered`` says the
    triggers of that step respect the id order (as a condition on the chosen disjunct)."""
    steps, orders = [], []
    for kind, channel in event_kinds(config):
        guard, nxt, ordered = symbolic_step(config, f, kind, channel, checkpoint_id)
        steps.append(z3.And(guard, _equal(nxt, g)))
        orders.append(z3.Implies(z3.And(guard, _equal(nxt, g)), ordered))
    return z3.Or(*steps), z3.And(*orders)


# -- invariants ----------------------------------------------------------------------------------


def _max(terms):
    result = terms[0]
    for t in terms[1:]:
        result = z3.If(t > result, t, result)
    return result


def invariant_checks(config: Config) -> dict[str, Callable[[Frame], z3.BoolRef]]:
    base = config.base_phase
    inv = {
        "blocked_subset_aligned": lambda f: z3.And(*[z3.Implies(b, a) for b, a in zip(f.blocked, f.aligned)]),
        "blocked_subset_open": lambda f: z3.And(*[z3.Implies(b, o) for b, o in zip(f.blocked, f.open)]),
        "idle_is_clean": lambda f: z3.Implies(z3.Not(f.pending), z3.And(
            *[z3.Not(a) for a in f.aligned], *[z3.Not(b) for b in f.blocked], f.target == 0, f.phase == base)),
        "target_is_channels_open_at_start": lambda f: z3.Implies(
            f.pending, f.target == _count([z3.Or(o, a) for o, a in zip(f.open, f.aligned)])),
        "pending_is_incomplete": lambda f: z3.Implies(f.pending, _count(f.aligned) < f.target),
        "current_id_was_seen": lambda f: f.current <= _max([*f.last, *f.owed, f.last_rpc, z3.IntVal(-1)]),
        "untriggered_pending_is_newer": lambda f: z3.Implies(
            z3.And(f.pending, f.phase != UNALIGNED_COLLECTING), f.last_trigger < f.current),
        "capturing_checkpoint_was_triggered": lambda f: z3.Implies(
            f.phase == UNALIGNED_COLLECTING, z3.And(f.pending, f.last_trigger == f.current)),
        "triggers_are_seen_ids": lambda f: f.last_trigger <= _max([f.current, f.last_rpc]),
        "collecting_has_an_aligned_channel": lambda f: z3.Implies(
            z3.Or(f.phase == COLLECTING, f.phase == UNALIGNED_COLLECTING), z3.Or(*f.aligned)),
        "waiting_phases_block_nothing": lambda f: z3.Implies(
            z3.Or(f.phase == WAITING, f.phase == UNALIGNED_WAITING), z3.And(*[z3.Not(b) for b in f.blocked])),
        # A checkpoint can be pending before any barrier arrived only through an announcement,
        # whose channel still owes that barrier (so EndOfPartition cannot complete it there).
        "waiting_pending_awaits_announced_barrier": lambda f: z3.Implies(
            z3.And(f.pending, z3.Or(f.phase == WAITING, f.phase == UNALIGNED_WAITING)),
            z3.Or(*[z3.And(o, z3.Not(a), w == f.current) for o, a, w in zip(f.open, f.aligned, f.owed)])),
        "announced_channel_is_open": lambda f: z3.And(
            *[z3.Implies(w > 0, z3.And(o, w > x)) for o, w, x in zip(f.open, f.owed, f.last)]),
        "announced_pending_channel_not_aligned": lambda f: z3.And(
            *[z3.Implies(z3.And(f.pending, w == f.current), z3.Not(a)) for w, a in zip(f.owed, f.aligned)]),
        "aligned_open_channel_delivered_barrier": lambda f: z3.Implies(f.pending, z3.And(
            *[z3.Implies(z3.And(a, o), x == f.current) for a, o, x in zip(f.aligned, f.open, f.last)])),
        "nothing_pending_after_rpc_trigger": lambda f: z3.Implies(f.last_rpc > 0, z3.Not(f.pending)),
    }
    if config.base_phase == UNALIGNED_WAITING:
        inv["pure_unaligned_never_blocks"] = lambda f: z3.And(*[z3.Not(b) for b in f.blocked])
    return inv


def INVARIANTS(config: Config) -> list[str]:
    """The invariant names checked for ``config``."""
    return list(invariant_checks(config))


# -- bounded model checking ------------------------------------------------------------------------


@dataclass
class BmcReport:
    depth: int
    holds: bool
    violated: dict = field(default_factory=dict)  # name -> (depth, trace of frames as dicts)
    seconds: float = 0.0


def _check_config(config: Config) -> None:
    if config.mode == AT_LEAST_ONCE:
        raise ValueError("the z3 encoding covers the exactly-once handler (aligned, unaligned)")


def bmc(config: Config, depth: int = 8) -> BmcReport:
    """Every invariant (and the trigger order) on every path of at most ``depth`` steps."""
    _check_config(config)
    started = time.perf_counter()
    invariants = invariant_checks(config)
    solver = z3.Solver()
    frames = [fresh_frame(config, "s0")]
    solver.add(initial(config, frames[0]))
    report = BmcReport(depth=depth, holds=True)
    for k in range(depth + 1):
        f = frames[k]
        pending_names = [n for n in invariants if n not in report.violated]
        for name in pending_names:
            if solver.check(z3.Not(invariants[name](f))) == z3.sat:
                report.violated[name] = (k, [frame_values(solver.model(), fr) for fr in frames])
        if k == depth:
            break
        g = fresh_frame(config, f"s{k + 1}")
        step, ordered = transition(config, f, g, z3.Int(f"id{k}"))
        solver.add(step)
        if "triggered_ids_increase" not in report.violated and solver.check(z3.Not(ordered)) == z3.sat:
            report.violated["triggered_ids_increase"] = (k + 1, [frame_values(solver.model(), fr) for fr in frames + [g]])
        frames.append(g)
    report.holds = not report.violated
    report.seconds = time.perf_counter() - started
    return report


# -- induction ---------------------------------------------------------------------------------------


@dataclass
class InductionReport:
    inductive_alone: list = field(default_factory=list)      # I ∧ T ⇒ I'
    inductive_together: list = field(default_factory=list)   # (∧ all) ∧ T ⇒ I'
    k_inductive: dict = field(default_factory=dict)          # name -> smallest k tried that worked
    not_proved: list = field(default_factory=list)
    trigger_order_proved: bool = False
    initial_ok: bool = True
    seconds: float = 0.0

    @property
    def all_proved(self) -> bool:
        return self.initial_ok and not self.not_proved and self.trigger_order_proved


def _inductive(config, hypothesis: Callable[[Frame], z3.BoolRef], goal: Callable[[Frame], z3.BoolRef], k: int = 1) -> bool:
    """k-induction step: k consecutive frames satisfying the hypothesis imply the goal next."""
    solver = z3.Solver()
    frames = [fresh_frame(config, f"i{j}") for j in range(k + 1)]
    for j in range(k):
        solver.add(type_ok(config, frames[j]), hypothesis(frames[j]))
        step, _ = transition(config, frames[j], frames[j + 1], z3.Int(f"iid{j}"))
        solver.add(step)
    solver.add(z3.Not(goal(frames[k])))
    return solver.check() == z3.unsat


def induction(config: Config, max_k: int = 3) -> InductionReport:
    """Which invariants are inductive alone, together, or k-inductive (k <= ``max_k``)."""
    _check_config(config)
    started = time.perf_counter()
    invariants = invariant_checks(config)
    report = InductionReport()
    init = fresh_frame(config, "init")
    solver = z3.Solver()
    solver.add(initial(config, init))
    report.initial_ok = solver.check(z3.Not(z3.And(*[inv(init) for inv in invariants.values()]))) == z3.unsat

    def everything(f):
        return z3.And(*[inv(f) for inv in invariants.values()])

    for name, inv in invariants.items():
        if _inductive(config, inv, inv):
            report.inductive_alone.append(name)
        if _inductive(config, everything, inv):
            report.inductive_together.append(name)
        elif name not in report.inductive_alone:
            for k in range(2, max_k + 1):
                if _inductive(config, inv, inv, k):
                    report.k_inductive[name] = k
                    break
            else:
                report.not_proved.append(name)
    # Trigger order: every step from a state satisfying all invariants triggers newer ids only.
    f, g = fresh_frame(config, "o0"), fresh_frame(config, "o1")
    step, ordered = transition(config, f, g, z3.Int("oid"))
    solver = z3.Solver()
    solver.add(type_ok(config, f), everything(f), step, z3.Not(ordered))
    report.trigger_order_proved = solver.check() == z3.unsat
    report.seconds = time.perf_counter() - started
    return report


# -- between the explicit model and frames ------------------------------------------------------------


def _bits(values) -> int:
    return sum(1 << c for c, v in enumerate(values) if v)


def frame_values(model: z3.ModelRef, f: Frame) -> dict:
    """A frame's values in a z3 model, as the explicit model's state and environment."""
    def val(t):
        v = model.eval(t, model_completion=True)
        return z3.is_true(v) if z3.is_bool(v) else v.as_long()
    state = HandlerState(open=_bits(map(val, f.open)), current=val(f.current), pending=val(f.pending),
                         aligned=_bits(map(val, f.aligned)), target=val(f.target), blocked=_bits(map(val, f.blocked)),
                         phase=val(f.phase))
    env = ChannelEnv(ended=_bits(not val(o) for o in f.open), last=tuple(map(val, f.last)),
                     cancelled=_bits(map(val, f.cancelled)), owed=tuple(map(val, f.owed)), last_rpc=val(f.last_rpc))
    return {"state": state, "env": env, "last_trigger": val(f.last_trigger)}


def _substitution(f: Frame, state: HandlerState, env: ChannelEnv, last_trigger: int) -> list:
    """Pairs (variable, value) fixing a frame to an explicit state."""
    pairs = [(f.current, z3.IntVal(state.current)), (f.pending, z3.BoolVal(state.pending)),
             (f.target, z3.IntVal(state.target)), (f.phase, z3.IntVal(state.phase)),
             (f.last_rpc, z3.IntVal(env.last_rpc)), (f.last_trigger, z3.IntVal(last_trigger))]
    for c in range(len(f.open)):
        pairs += [(f.open[c], z3.BoolVal(bool(state.open >> c & 1))),
                  (f.aligned[c], z3.BoolVal(bool(state.aligned >> c & 1))),
                  (f.blocked[c], z3.BoolVal(bool(state.blocked >> c & 1))),
                  (f.last[c], z3.IntVal(env.last[c])), (f.owed[c], z3.IntVal(env.owed[c])),
                  (f.cancelled[c], z3.BoolVal(bool(env.cancelled >> c & 1)))]
    return pairs


def evaluate_step(config: Config, state: HandlerState, env: ChannelEnv, last_trigger: int, event: tuple):
    """The encoding evaluated on one explicit transition: ``(valid, values of the next frame,
    ordered)``, so tests can compare it with :func:`flipcheck.model.barriers.step`."""
    f = fresh_frame(config, "e")
    kind = event[0]
    channel = event[-1] if kind in (BARRIER, CANCEL, ANNOUNCE, END) else None
    if (kind, channel) not in event_kinds(config):
        return False, None, True  # not an event of this configuration at all
    checkpoint_id = z3.IntVal(event[1] if kind in (BARRIER, CANCEL, ANNOUNCE, RPC) else 1)
    guard, nxt, ordered = symbolic_step(config, f, kind, channel, checkpoint_id)
    pairs = _substitution(f, state, env, last_trigger)

    def concrete(term):
        return z3.simplify(z3.substitute(term, *pairs))

    solver = z3.Solver()
    values = fresh_frame(config, "v")
    solver.add(_equal(values, Frame(*(tuple(concrete(t) for t in x) if isinstance(x, tuple) else concrete(x)
                                      for x in nxt))))
    assert solver.check() == z3.sat
    return z3.is_true(concrete(guard)), frame_values(solver.model(), values), z3.is_true(concrete(ordered))

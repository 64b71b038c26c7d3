"""Replay an input sequence through the barrier model (or an implementation) for the CLI.

:func:`replay` validates every event against the channel environment as it goes (an impossible
event raises :class:`ImpossibleEvent` naming its position), inserts the automatic alignment
timeouts of ``--alignment-timeout K`` and runs the properties over the result.
:func:`summary` is the ``--json`` object, :func:`table` the readable step-by-step listing.

Example
-------
>>> from flipcheck.model.barriers import Config, parse_event
>>> cfg = Config(channels=2, mode="unaligned")
>>> result = replay(cfg, [parse_event(t) for t in "B1@0 D@1 D@1 E@1".split()])
>>> summary(result)
{'triggered': [1], 'aborted': [], 'pending': None, 'blocked': [], 'open_channels': 1, 'in_flight': {'1': [[1, 0], [1, 1]]}}
>>> replay(cfg, [parse_event("E@0"), parse_event("D@0")])
Traceback (most recent call last):
flipcheck.properties.barriers_replay.ImpossibleEvent: event 2 (D@0): channel 0 already delivered EndOfPartition
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from flipcheck.model.barriers import (
    ABORTED, ALIGNMENT_START, BLOCKED, COMPLETED, DATA, IN_FLIGHT, TIMEOUT, TRIGGERED, UNBLOCKED, Config, Step,
    channels_of, format_event, initial_state, step, view,
)
from flipcheck.model.channel_env import apply, initial_env, problem
from flipcheck.properties.barriers_properties import BARRIER_PROPERTIES, check_trace
from flipcheck.reference_impl.barriers import make_task

__all__ = ["ImpossibleEvent", "Replay", "replay", "summary", "table", "MODEL"]

MODEL = "model"


class ImpossibleEvent(ValueError):
    """An event that cannot happen where it stands (``position`` is 1-based)."""

    def __init__(self, position: int, token: str, reason: str):
        super().__init__(f"event {position} ({token}): {reason}")
        self.position, self.token, self.reason = position, token, reason


@dataclass
class Replay:
    config: Config
    steps: list = field(default_factory=list)          # model.barriers.Step
    tokens: list = field(default_factory=list)         # the token shown for each step
    record_index: list = field(default_factory=list)   # per step: index of the record on its channel, or None
    violations: list = field(default_factory=list)


class _Model:
    """The model behind the same interface as a Task."""

    def __init__(self, config: Config):
        self.config, self.state = config, initial_state(config)

    def process(self, event):
        self.state, outputs = step(self.config, self.state, event)
        return outputs

    def view(self):
        return view(self.config, self.state)


def replay(config: Config, events: Sequence[tuple], alignment_timeout: int | None = None,
           handler: str = MODEL) -> Replay:
    """Run ``events``; with ``alignment_timeout`` K the alignment timer fires by itself once K
    further events have been processed while a checkpoint is still aligning."""
    system = _Model(config) if handler == MODEL else make_task(config, handler)
    result = Replay(config)
    env = initial_env(config)
    records = [0] * config.channels
    started_at, fired = None, set()  # (checkpoint id, step index) of the pending checkpoint

    def run_one(event, token):
        nonlocal env
        outputs = system.process(event)
        result.steps.append(Step(event, outputs, system.view()))
        result.tokens.append(token)
        if event[0] == DATA:
            result.record_index.append(records[event[1]])
            records[event[1]] += 1
        else:
            result.record_index.append(None)
        env = apply(env, event)

    for position, event in enumerate(events, 1):
        token = format_event(event)
        reason = problem(config, env, system.view().blocked, event)
        if reason is not None:
            raise ImpossibleEvent(position, token, reason)
        run_one(event, token)
        pending = system.view().pending
        if pending is None:
            started_at = None
        elif started_at is None or started_at[0] != pending:
            started_at = (pending, len(result.steps))
        elif (alignment_timeout and config.alternating and pending not in fired
              and len(result.steps) - started_at[1] >= alignment_timeout):
            fired.add(pending)
            run_one((TIMEOUT,), f"TIMEOUT (after {alignment_timeout} events)")
    properties = [p for p in BARRIER_PROPERTIES if handler != MODEL or p.name != "refines_model"]
    result.violations = check_trace(config, result.steps, properties)
    return result


def summary(result: Replay) -> dict:
    """The ``--json`` object."""
    triggered, aborted, in_flight = [], [], {}
    for s, index in zip(result.steps, result.record_index):
        for o in s.outputs:
            if o[0] == TRIGGERED:
                triggered.append(o[1])
            elif o[0] == ABORTED:
                aborted.append([o[1], o[2]])
            elif o[0] == IN_FLIGHT:
                in_flight.setdefault(str(o[1]), []).append([o[2], index])
    last = result.steps[-1].view if result.steps else view(result.config, initial_state(result.config))
    return {"triggered": triggered, "aborted": aborted, "pending": last.pending, "blocked": channels_of(last.blocked),
            "open_channels": last.open.bit_count(), "in_flight": in_flight}


_DESCRIBE = {BLOCKED: "block {1}", UNBLOCKED: "unblock {1}", ALIGNMENT_START: "alignment {1} starts",
             TRIGGERED: "TRIGGER {1} ({2})", COMPLETED: "complete {1}", ABORTED: "ABORT {1} ({2})",
             IN_FLIGHT: "in-flight data of {1} (record #{record} of channel {2})"}


def describe_output(output: tuple, record_index: int | None = None) -> str:
    return _DESCRIBE[output[0]].format(*output, record=record_index)


def _channels(mask: int) -> str:
    return ",".join(map(str, channels_of(mask))) or "-"


def table(result: Replay) -> str:
    """The step-by-step listing: event, outputs, then pending / blocked / open after the step
    (violated properties are reported separately)."""
    rows = [("#", "event", "outputs", "pending", "blocked", "open")]
    for number, (s, token, index) in enumerate(zip(result.steps, result.tokens, result.record_index), 1):
        outputs = "; ".join(describe_output(o, index) for o in s.outputs) or "-"
        pending = "-" if s.view.pending is None else str(s.view.pending)
        rows.append((str(number), token, outputs, pending, _channels(s.view.blocked), _channels(s.view.open)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    info = summary(result)
    cfg = result.config
    lines.insert(0, f"{cfg.channels} channels, {cfg.mode}"
                    + (", alignment timeout" if cfg.alignment_timeout else "")
                    + ("" if cfg.after_finished else ", checkpoints after tasks finished OFF"))
    lines.append("")
    lines.append(f"triggered: {info['triggered'] or '-'}   aborted: "
                 f"{', '.join(f'{i} ({r})' for i, r in info['aborted']) or '-'}")
    if info["in_flight"]:
        lines.append("in-flight: " + "; ".join(
            f"{cid}: " + ", ".join(f"ch {ch} #{i}" for ch, i in recs) for cid, recs in info["in_flight"].items()))
    return "\n".join(lines)


"""Which input sequences a task with network inputs can see: the environment of the barrier spec.

:mod:`flipcheck.model.barriers` says how a task answers events; this module says which events
can happen next, so that generators, exhaustive exploration and the replay CLI only produce
(or accept) behaviour real channels can show:

* V1 per channel FIFO, checkpoint ids increasing: barriers and cancellation markers of one
  channel carry strictly increasing ids, except that a cancellation marker may follow the
  barrier of the same checkpoint (the upstream task failed that checkpoint after emitting its
  barrier; Flink's AlignedCheckpointsTest#testIgnoreCancelBarrierIfCheckpointSubsumed).
* V2 nothing after EndOfPartition on that channel.
* V3 a blocked channel delivers nothing (the network stops it after an aligned barrier,
  flip147 facts §2.2); blocking is the handler's output, so the caller passes the handler's
  ``blocked`` set.
* V4 an announcement of barrier ``id`` on a channel (aligned-with-timeout only) promises that
  barrier: the channel delivers records and then barrier ``id``, nothing else in between.
* V5 an RPC trigger reaches a task only when checkpoints after tasks finished are enabled
  (flip147 facts §1.3 step 1) and all its upstream tasks are FINISHED, so its id is newer than every
  id seen, and afterwards the still open channels deliver only their EndOfPartition (an
  upstream finishes only after its records were consumed, flip147 facts §2.5).
* V6 ``TIMEOUT`` (the alignment timer) exists only with an alignment timeout; announcements too.

Example
-------
>>> from flipcheck.model.barriers import Config, barrier, data, end_of_partition
>>> cfg = Config(channels=2)
>>> env = initial_env(cfg)
>>> problem(cfg, env, 0b01, data(0))             # channel 0 is blocked
'channel 0 is blocked (its barrier arrived; the checkpoint waits for the other channels)'
>>> env = apply(env, end_of_partition(1))
>>> problem(cfg, env, 0, barrier(1, 1))
'channel 1 already delivered EndOfPartition'
>>> sorted(enabled(cfg, env, 0, max_id=1))
[('B', 1, 0), ('C', 1, 0), ('D', 0), ('E', 0), ('T', 1)]
"""

from __future__ import annotations

from typing import NamedTuple

from .barriers import ANNOUNCE, BARRIER, CANCEL, DATA, END, RPC, TIMEOUT, Config

__all__ = ["ChannelEnv", "initial_env", "apply", "problem", "enabled", "candidates"]


class ChannelEnv(NamedTuple):
    """Per channel: ended?, last barrier/cancellation id (and whether it was a cancellation),
    announced id still owed (0: none)."""

    ended: int           # bit mask of channels that delivered EndOfPartition
    last: tuple          # per channel: the last barrier or cancellation id (0: none yet)
    cancelled: int       # bit mask: the channel's last id came with a cancellation marker
    owed: tuple          # per channel: announced barrier id not delivered yet (0: none)
    last_rpc: int        # the last RPC-triggered id (0: none); > 0 means every upstream finished


def initial_env(config: Config) -> ChannelEnv:
    zeros = (0,) * config.channels
    return ChannelEnv(ended=0, last=zeros, cancelled=0, owed=zeros, last_rpc=0)


def _set(values: tuple, index: int, value: int) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


def apply(env: ChannelEnv, event: tuple) -> ChannelEnv:
    """The environment after a (valid) event."""
    kind = event[0]
    if kind == BARRIER:
        ch = event[2]
        return env._replace(last=_set(env.last, ch, event[1]), owed=_set(env.owed, ch, 0),
                            cancelled=env.cancelled & ~(1 << ch))
    if kind == CANCEL:
        return env._replace(last=_set(env.last, event[2], event[1]), cancelled=env.cancelled | (1 << event[2]))
    if kind == END:
        return env._replace(ended=env.ended | (1 << event[1]))
    if kind == ANNOUNCE:
        return env._replace(owed=_set(env.owed, event[2], event[1]))
    if kind == RPC:
        return env._replace(last_rpc=event[1])
    return env


def problem(config: Config, env: ChannelEnv, blocked: int, event: tuple) -> str | None:
    """Why ``event`` cannot happen next (``None``: it can). ``blocked`` is the handler's."""
    kind = event[0]
    if kind == TIMEOUT:
        return None if config.alternating else "TIMEOUT needs an alignment timeout (--mode unaligned --alignment-timeout K, K > 0)"
    if kind == RPC:
        if not config.after_finished:
            return "an RPC trigger reaches a non-source task only with checkpoints after tasks finished"
        newest = max(max(env.last), max(env.owed), env.last_rpc)
        if event[1] <= newest:
            return f"RPC trigger {event[1]} is not newer than checkpoint {newest} already seen"
        return None
    ch = event[-1]
    if not 0 <= ch < len(env.last):
        return f"channel {ch} out of range (the task has {len(env.last)} channels)"
    if env.ended >> ch & 1:
        return f"channel {ch} already delivered EndOfPartition"
    if blocked >> ch & 1:
        return f"channel {ch} is blocked (its barrier arrived; the checkpoint waits for the other channels)"
    if env.last_rpc and kind != END:
        return f"the upstream of channel {ch} finished (RPC trigger {env.last_rpc}): only EndOfPartition can follow"
    owed = env.owed[ch]
    if kind == DATA:
        return None
    if kind == END:
        return f"channel {ch} announced barrier {owed}, which must come first" if owed else None
    if kind == ANNOUNCE and not config.alternating:
        return "announcements need an alignment timeout (--mode unaligned --alignment-timeout K, K > 0)"
    if owed and not (kind == BARRIER and event[1] == owed):
        return f"channel {ch} announced barrier {owed}, which must come first"
    last = env.last[ch]
    if kind == CANCEL and event[1] == last and not env.cancelled >> ch & 1:
        return None  # cancelling the checkpoint whose barrier this channel just delivered
    if event[1] <= last:
        return f"checkpoint {event[1]} is not newer than {last} on channel {ch}"
    return None


def candidates(config: Config, max_id: int) -> tuple:
    """Every event over ``config.channels`` channels and ids ``1..max_id``, valid or not."""
    channels = range(config.channels)
    ids = range(1, max_id + 1)
    events = [(BARRIER, i, ch) for i in ids for ch in channels]
    events += [(CANCEL, i, ch) for i in ids for ch in channels]
    events += [(END, ch) for ch in channels] + [(DATA, ch) for ch in channels]
    events += [(RPC, i) for i in ids]
    if config.alternating:
        events += [(ANNOUNCE, i, ch) for i in ids for ch in channels] + [(TIMEOUT,)]
    return tuple(events)


def enabled(config: Config, env: ChannelEnv, blocked: int, max_id: int, events: tuple | None = None) -> list:
    """The events that can happen next, in :func:`candidates` order."""
    events = candidates(config, max_id) if events is None else events
    return [e for e in events if problem(config, env, blocked, e) is None]

"""Valid per-channel input sequences for one task: hypothesis strategies and a seeded generator.

The generation logic is written once, in :func:`valid_events`: at every step it asks the
environment (:mod:`flipcheck.model.channel_env`) which events can happen next and lets a
``choose(options)`` function pick, first an event kind, then an event of that kind (so that
EndOfPartition and RPC triggers are not drowned by the many barrier ids). ``choose`` is either
hypothesis's ``draw(sampled_from(...))`` (:func:`event_sequences`) or ``random.Random.choice``
(:func:`random_events`). Blocking follows the model, or the task given as ``follow``.

Example
-------
>>> from flipcheck.model.barriers import Config
>>> cfg = Config(channels=2)
>>> events = random_events(cfg, seed=7, length=6)
>>> events == random_events(cfg, seed=7, length=6)          # deterministic per seed
True
>>> from flipcheck.model.channel_env import initial_env, apply, problem
>>> from flipcheck.model.barriers import initial_state, step, view
>>> env, state = initial_env(cfg), initial_state(cfg)
>>> for e in events:                                          # every event is valid where it stands
...     assert problem(cfg, env, view(cfg, state).blocked, e) is None
...     env, (state, _) = apply(env, e), step(cfg, state, e)
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

from hypothesis import strategies as st

from flipcheck.model.barriers import MODES, UNALIGNED, Config, initial_state, step, view
from flipcheck.model.channel_env import ChannelEnv, apply, candidates, enabled, initial_env

__all__ = ["choose_event", "valid_events", "random_events", "event_sequences", "configs"]

Choose = Callable[[Sequence], Any]


def choose_event(options: Sequence[tuple], choose: Choose, kind: str | None = None) -> tuple | None:
    """Pick one of the valid ``options``: a kind first, then an event of it (``None``: none)."""
    if kind is None:
        kinds = sorted({e[0] for e in options})
        if not kinds:
            return None
        kind = choose(kinds)
    of_kind = [e for e in options if e[0] == kind]
    return choose(of_kind) if of_kind else None


def valid_events(config: Config, choose: Choose, length: int, max_id: int = 3, follow=None) -> list[tuple]:
    """Up to ``length`` events, each valid after the previous ones; blocked channels are the
    model's, or those of ``follow`` (a task that is fed the events as they are chosen)."""
    events = candidates(config, max_id)
    env: ChannelEnv = initial_env(config)
    state = initial_state(config)
    chosen: list[tuple] = []
    for _ in range(length):
        blocked = follow.view().blocked if follow is not None else view(config, state).blocked
        event = choose_event(enabled(config, env, blocked, max_id, events), choose)
        if event is None:
            break
        chosen.append(event)
        env = apply(env, event)
        if follow is not None:
            follow.process(event)
        else:
            state, _ = step(config, state, event)
    return chosen


def random_events(config: Config, seed: int | random.Random = 0, length: int = 20, max_id: int = 3) -> list[tuple]:
    """A deterministic valid sequence for ``seed``."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    return valid_events(config, rng.choice, length, max_id)


@st.composite
def event_sequences(draw, config: Config, max_length: int = 20, max_id: int = 3) -> list[tuple]:
    """Hypothesis strategy: valid sequences of at most ``max_length`` events."""
    length = draw(st.integers(0, max_length))
    return valid_events(config, lambda options: draw(st.sampled_from(options)), length, max_id)


def configs(mode: str | None = None, max_channels: int = 3) -> st.SearchStrategy[Config]:
    """Hypothesis strategy: task configurations (of one mode, if given)."""
    mode_strategy = st.just(mode) if mode is not None else st.sampled_from(MODES)

    def build(mode: str, channels: int, after_finished: bool, timeout: bool) -> Config:
        return Config(channels, mode, after_finished, timeout and mode == UNALIGNED)

    return st.builds(build, mode_strategy, st.integers(1, max_channels), st.booleans(), st.booleans())

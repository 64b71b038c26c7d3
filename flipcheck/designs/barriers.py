"""The ``barriers`` design's front end (the members of :class:`~flipcheck.designs.contract.Design`
are at the end of this module). ``verify``: task-side alignment with finished channels.

Drivers, for the engine's handler (or a named variant of it):

* ``exploration`` — every reachable state of 3 channels, checkpoint ids 1..2, in every
  configuration (mode × feature flag × alignment timeout), with every property monitored and
  the implementation compared with the model at each step (``refines_model``);
* ``hypothesis`` — the stateful machine of each mode, random configurations and schedules.

Flink's own tracker breaks two properties (docs/barriers.md, "Findings"); those are expected
failures and not counted, for the engine and for variants alike.

>>> rows = verify(budget_seconds=4)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis'], 0)

The sweep suite
---------------

The ``barriers`` suite: one task's barrier alignment with finished channels, random and exhaustive.

* Random space (token = a seed): case ``i`` is a configuration (1-3 channels, any mode, the
  feature flag on with probability 0.8, an alignment timeout in unaligned mode half the time)
  and a valid input sequence of up to :data:`MAX_EVENTS` events with checkpoint ids
  ``1..MAX_ID``, both drawn from ``SeededChooser.for_case(seed, i)`` through
  :func:`flipcheck.generators.channel_events.valid_events` (the environment follows the
  model's blocking). Checking feeds the sequence to the handler under test; if that handler
  blocks a channel the model does not, the sequence is cut before the first event the handler
  could not receive — its view already differs from the model's there, which
  ``refines_model`` reports. Every property of
  :data:`~flipcheck.properties.barriers_properties.BARRIER_PROPERTIES` is checked except the
  known findings on Flink's own tracker (``EXPECTED_FAILURES``, docs/barriers.md).
* Exhaustive space (token ``exhaustive-c{C}-i{I}``): one case per configuration with 1..C
  channels (:func:`flipcheck.designs.barriers.all_configs`), explored breadth-first with every
  property and refinement (:func:`flipcheck.properties.barriers_explore.explore_task`).

Counterexamples are minimised to the **shortest** trace: breadth-first exploration of the same
configuration with fewer channels first, checking only the violated property; greedy event
deletion when exploration does not reach it within its state budget.

Example
-------
>>> space = BARRIERS_SUITE.space("7")
>>> config, events = space.case(3)
>>> space.check((config, events), "flink").violations
[]
>>> bad = next(o for o in (space.check(space.case(i), "eop-not-aligned") for i in range(50)) if o.violations)
>>> config, events = BARRIERS_SUITE.minimise(bad.counterexample, "eop-not-aligned", bad.properties[0])
>>> len(events) <= 3
True
"""

from __future__ import annotations

from collections import Counter
from functools import cache
import dataclasses
import re
import shlex
import time

from flipcheck.designs import title_of
from flipcheck.designs.contract import Detection, Mutant
from flipcheck.designs.common import check_variant, first_paragraph, seeded_run
from flipcheck.designs.drivers import report_problems
from flipcheck.designs.suite import CRASH, EXHAUSTIVE_PREFIX, CaseSpace, Outcome, Suite, checked
from flipcheck.generators.channel_events import valid_events
from flipcheck.generators.choices import SeededChooser, choice
from flipcheck.model.barriers import MODES, UNALIGNED, format_event, Config, Step
from flipcheck.model.channel_env import apply, initial_env, problem
from flipcheck.properties.barriers_explore import EXPECTED_FAILURES, explore_task
from flipcheck.properties.barriers_properties import BARRIER_PROPERTIES, PROPERTY_NAMES, check_trace
from flipcheck.reference_impl.barriers import HANDLERS, handler_class, make_task


__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "all_configs", "BARRIERS_SUITE", "BarriersSuite", "MAX_CHANNELS", "MAX_EVENTS", "MAX_ID", "properties_for",
]

def all_configs(channels: int = 3) -> list[Config]:
    return [
        Config(channels, mode, flag, timeout)
        for mode in MODES
        for flag in (True, False)
        for timeout in (False, True)
        if not (timeout and mode != UNALIGNED)
    ]


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    handler = check_variant(variant or "flink", handler_class)
    names = tuple(dict.fromkeys((*PROPERTY_NAMES, "refines_model")))
    started = time.perf_counter()
    deadline = started + budget_seconds * 0.7

    # Smallest configurations first, so that a small budget still covers every mode.
    states, found = 0, Counter()
    for channels in (2, 3):
        for config in all_configs(channels):
            if time.perf_counter() > deadline:
                break
            result = explore_task(config, handler, max_id=2)
            states += result.states
            report_problems(result.problems, (config, tuple(result.trace)))
            for name in {v.property for v in result.problems}:
                found[name] += 1
    rows = [{"name": n, "cases": states, "violations": found[n], "driver": "exploration"} for n in names]

    remaining = max(0.5, budget_seconds - (time.perf_counter() - started))
    examples, failures = _stateful(handler, remaining, names)
    rows += [{"name": n, "cases": examples, "violations": failures[n], "driver": "hypothesis"} for n in names]
    return rows


def _stateful(handler: str, budget_seconds: float, names: tuple) -> tuple[int, Counter]:
    """Run each mode's stateful machine in batches until the budget; a failing run counts one
    violation of the property its assertion names."""
    from hypothesis import HealthCheck, Phase, settings
    from flipcheck.generators.barriers import barrier_machine

    deadline = time.perf_counter() + budget_seconds
    runs, failures = 0, Counter()
    batch = 0
    while time.perf_counter() < deadline:
        for mode in MODES:
            run_settings = settings(max_examples=20, stateful_step_count=30, deadline=None, database=None,
                                    derandomize=False, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            machine = barrier_machine(mode, handler)
            try:
                seeded_run(machine, run_settings, f"barriers-{batch}")
            except AssertionError as failure:
                name = str(failure).split(":")[0]
                failures[name if name in names else "refines_model"] += 1
            runs += run_settings.max_examples
        batch += 1
    return runs, failures


MAX_CHANNELS = 3
MAX_EVENTS = 30
MAX_ID = 4
DEFAULT_EXHAUSTIVE = (3, 2)  # channels, checkpoint ids (every configuration explores in ~25 s)
# States a minimising exploration may visit per channel count before falling back to deletion.
MINIMISE_MAX_STATES = 30_000
_TOKEN = re.compile(rf"{EXHAUSTIVE_PREFIX}-c([0-9]+)-i([0-9]+)")


@cache
def properties_for(mode: str) -> tuple:
    """The properties checked in ``mode``: all but Flink's known tracker findings."""
    return tuple(p for p in BARRIER_PROPERTIES if (mode, p.name) not in EXPECTED_FAILURES)


def _run(config: Config, events, handler: str) -> Outcome:
    """Feed ``events`` to ``handler``, cut before the first one it could not receive, check the trace."""
    task = make_task(config, handler)
    env = initial_env(config)
    steps = []
    for event in events:
        if problem(config, env, task.view().blocked, event) is not None:
            break
        outputs = task.process(event)
        steps.append(Step(event, outputs, task.view()))
        env = apply(env, event)
    found = check_trace(config, steps, properties_for(config.mode))
    return Outcome(found, 1, "check", (config, tuple(s.event for s in steps)) if found else None)


def _shape(config: Config, events=None) -> str:
    mode = config.mode + ("+timeout" if config.alignment_timeout else "")
    flag = "" if config.after_finished else " off"
    length = "" if events is None else f" {len(events)}ev"
    return f"{mode} {config.channels}ch{length}{flag}"


class RandomBarrierSpace(CaseSpace):
    def __init__(self, suite: "BarriersSuite", seed: str):
        self.suite, self.token = suite, seed

    def case(self, index: int) -> tuple[Config, tuple]:
        chooser = SeededChooser.for_case(self.token, index)
        mode = choice(chooser, MODES)
        config = Config(chooser.integer(1, MAX_CHANNELS), mode, chooser.boolean(0.8),
                        mode == UNALIGNED and chooser.boolean())
        length = chooser.integer(1, MAX_EVENTS)
        events = valid_events(config, lambda options: choice(chooser, options), length, MAX_ID)
        return config, tuple(events)

    def check(self, case, algorithm: str) -> Outcome:
        config, events = case
        return checked(_run, config, events, algorithm)

    def shape(self, case) -> str:
        return _shape(*case)

    def magnitude(self, case) -> int:
        return len(case[1])


def _explore(config: Config, handler: str, max_id: int) -> Outcome:
    result = explore_task(config, handler, max_id=max_id)
    counterexample = (config, tuple(result.trace)) if result.problems else None
    return Outcome(list(result.problems), result.states, "explore", counterexample)


class ExhaustiveBarrierSpace(CaseSpace):
    def __init__(self, suite: "BarriersSuite", channels: int, max_id: int):
        from flipcheck.designs.barriers import all_configs

        self.suite, self.channels, self.max_id = suite, channels, max_id
        self.token = f"{EXHAUSTIVE_PREFIX}-c{channels}-i{max_id}"
        self.configs = [config for n in range(1, channels + 1) for config in all_configs(n)]
        self.size = len(self.configs)

    def case(self, index: int) -> Config:
        return self.configs[index]

    def check(self, case: Config, algorithm: str) -> Outcome:
        return checked(_explore, case, algorithm, self.max_id)

    def shape(self, case: Config) -> str:
        return _shape(case)

    def magnitude(self, case: Config) -> int:
        return case.channels

    def coverage(self) -> dict:
        return {"max_channels": self.channels, "max_checkpoint_id": self.max_id, "configurations": self.size}

    def statement(self, algorithm: str, assignments: int) -> str:
        return (f"in every configuration with 1-{self.channels} channels ({self.size} configurations: modes, "
                f"alignment timeout, checkpoints_after_tasks_finished), on every path with checkpoint ids "
                f"<= {self.max_id} ({assignments:,} states explored), the {algorithm} handler keeps every barrier "
                f"property and refines the specification")


class BarriersSuite(Suite):
    name = "barriers"
    engine = "flink"
    size_unit = "events"
    random_batch = 5000     # ~5,000 cases/s per core: about a second per Spark task
    exhaustive_batch = 1    # one configuration explored: 0.01-10 s

    def algorithms(self):
        return tuple(HANDLERS)

    def variant_class(self, spec: str) -> type:
        return handler_class(spec)

    def property_names(self):
        return (*PROPERTY_NAMES, CRASH)

    def space(self, token: str) -> CaseSpace:
        return _space(self, token)

    def exhaustive_token(self, max_vertices=None, max_parallelism=None):
        # The plan bounds do not apply; every configuration up to the default bounds is explored.
        return f"{EXHAUSTIVE_PREFIX}-c{DEFAULT_EXHAUSTIVE[0]}-i{DEFAULT_EXHAUSTIVE[1]}"

    def minimise(self, counterexample, algorithm: str, prop: str):
        config, events = _pair(counterexample)
        if prop in PROPERTY_NAMES:
            shortest = _shortest_by_exploration(config, algorithm, prop, events)
            if shortest is not None:
                return shortest
        return _shrink_by_deletion(config, tuple(events), algorithm, prop)

    def render(self, counterexample, algorithm: str, out_path: str) -> str:
        from flipcheck.properties.barriers_replay import replay
        from flipcheck.render.barriers import render_chart

        config, events = _pair(counterexample)
        return render_chart(replay(config, list(events), handler=algorithm), out_path)

    def size_of(self, counterexample) -> int:
        return len(_pair(counterexample)[1])

    def describe(self, counterexample, algorithm: str | None = None) -> dict:
        config, events = _pair(counterexample)
        return {**dataclasses.asdict(config), "events": [format_event(e) for e in events],
                "replay": shlex.join(self.replay_argv(counterexample, algorithm or "HANDLER"))}

    replays_cases = True

    def replay_argv(self, counterexample, algorithm: str, prop: str | None = None, save_graph=None) -> list[str]:
        """``flipcheck barriers`` replaying the events through ``algorithm``'s handler."""
        config, events = _pair(counterexample)
        options = ["--channels", str(config.channels), "--mode", config.mode]
        if config.alignment_timeout:
            options += ["--alignment-timeout", "1000000"]  # alternating, timeouts only where listed
        if not config.after_finished:
            options.append("--no-checkpoints-after-tasks-finished")
        return ["flipcheck", "barriers", *options, "--handler", algorithm, *(format_event(e) for e in events)]


def _pair(case) -> tuple[Config, tuple]:
    """(configuration, events): an exhaustive case is a bare configuration (no events yet)."""
    return (case, ()) if isinstance(case, Config) else case


def _shortest_by_exploration(config: Config, handler: str, prop: str, events) -> tuple | None:
    """Breadth-first search for ``prop`` alone, fewest channels first: a shortest trace."""
    ids = [e[1] for e in events if len(e) > 1 and e[0] not in ("E", "D")]
    max_id = min(3, max(ids, default=1))
    refinement = prop == "refines_model"
    skip = set(PROPERTY_NAMES) - {prop}
    for channels in range(1, config.channels + 1):
        smaller = dataclasses.replace(config, channels=channels)
        result = explore_task(smaller, handler, max_id=max_id, check_properties=not refinement,
                              refinement=refinement, skip=skip, max_states=MINIMISE_MAX_STATES)
        if any(v.property == prop for v in result.problems):
            return smaller, tuple(result.trace)
    return None


def _shrink_by_deletion(config: Config, events: tuple, handler: str, prop: str) -> tuple:
    """Drop events one at a time while the (cut) trace still violates ``prop``."""
    changed = True
    while changed:
        changed = False
        for position in range(len(events)):
            candidate = events[:position] + events[position + 1:]
            outcome = checked(_run, config, candidate, handler)
            if prop in outcome.properties and outcome.counterexample is not None:
                events = outcome.counterexample[1]
                changed = True
                break
            if prop == CRASH and prop in outcome.properties:
                events, changed = candidate, True
                break
    return config, events


@cache
def _space(suite: BarriersSuite, token: str) -> CaseSpace:
    if token.startswith(EXHAUSTIVE_PREFIX):
        match = _TOKEN.fullmatch(token)
        if not match or not 1 <= int(match.group(1)) <= 3 or not 1 <= int(match.group(2)) <= 3:
            raise ValueError(f"exhaustive barriers token {token!r} is not {EXHAUSTIVE_PREFIX}-cC-iI (C, I in 1..3)")
        return ExhaustiveBarrierSpace(suite, int(match.group(1)), int(match.group(2)))
    return RandomBarrierSpace(suite, token)


BARRIERS_SUITE = BarriersSuite()


def _flink_issue_in(text: str) -> str | None:
    match = re.search(r"FLINK-\d+", text or "")
    return match.group(0) if match else None


def mutants() -> list[Mutant]:
    """Every named handler variant: historical Flink bugs and rejected designs."""
    from flipcheck.reference_impl.barriers import VARIANTS

    return [
        Mutant(name, "barriers", name, _flink_issue_in(cls.source), first_paragraph(cls.__doc__) or cls.source)
        for name, cls in VARIANTS.items()
    ]


def hunt(mutant: Mutant, budget_seconds: float) -> Detection:
    """Breadth-first exploration, properties only and then against the model, over the
    configurations in which the variant differs from Flink, smallest first: the first trace
    found is a shortest one."""
    from flipcheck.properties.barriers_explore import explore_task
    from flipcheck.reference_impl.barriers import VARIANTS

    started = time.perf_counter()
    states = 0
    variant = VARIANTS[mutant.variant]
    for refinement in (False, True):
        for channels in (1, 2, 3):
            for config in all_configs(channels):
                if not variant.modes(config) or time.perf_counter() - started > budget_seconds:
                    continue
                result = explore_task(config, mutant.variant, max_id=3, check_properties=not refinement,
                                      refinement=refinement)
                states += result.states
                if result.problems:
                    return Detection(True, result.problems[0].property, "exploration", states,
                                     time.perf_counter() - started, len(result.trace), (config, result.trace))
    return Detection(False, seconds=time.perf_counter() - started)


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "barriers"
title = title_of(name)
seed = "FLIP-147: Extend the task Barrier Alignment (rejected: Insert Barriers On Received EndOfPartition at the Task Side)"
spec = "flipcheck.model.barriers"
engine = BARRIERS_SUITE.engine
variants = tuple(BARRIERS_SUITE.algorithms())
properties = PROPERTY_NAMES
drivers = ("exploration", "hypothesis")
suite = BARRIERS_SUITE
render = BARRIERS_SUITE.render

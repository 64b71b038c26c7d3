"""The ``protocol`` design's front end (the members of :class:`~flipcheck.designs.contract.Design`
are at the end of this module). ``verify``: the whole job (FLIP-147 end to end).

Drivers, for the correct protocol or a named variant (:mod:`flipcheck.reference_impl.protocol_variants`):

* ``exploration`` — breadth-first, every reachable state of small configurations of the example
  graphs (:mod:`flipcheck.generators.protocol`), every property including the graph properties
  (no deadlock, the end stays reachable, a checkpoint completes after an abort);
* ``seeded`` and ``hypothesis`` — random configurations and random schedules (up to 400 steps),
  every step and state property along the run, and no deadlock at its end.

Cases count explored states for the exploration driver, runs otherwise.

>>> rows = verify(budget_seconds=2)
>>> sorted({row["driver"] for row in rows}), sum(row["violations"] for row in rows)
(['exploration', 'hypothesis', 'seeded'], 0)
>>> check_case(generate_case(SeededChooser.for_case("doc", 1)))
[]

The sweep suite
---------------

The ``protocol`` suite for sweeps: the whole job, FLIP-147 end to end (issue 4's model).

* Random space (token = a seed): case ``i`` is an example graph
  (:mod:`flipcheck.generators.protocol`), a mode, bounds and a seeded random schedule of up to
  400 steps through the composed model (:func:`flipcheck.designs.protocol.generate_case`),
  checked with every step and state property and for a deadlock at its end.
* Exhaustive space (token ``exhaustive-default``): the configurations of
  :data:`flipcheck.designs.protocol.EXHAUSTIVE_CONFIGS`, each explored completely, breadth-first,
  with every property including the graph properties (the end stays reachable).

Counterexamples are minimised to a shortest trace and drawn as message-sequence charts
(:mod:`flipcheck.render.protocol`). Built by :class:`~flipcheck.designs.generated_suite.GeneratedSuite`.

Example
-------
>>> space = PROTOCOL_SUITE.space("7")
>>> space.check(space.case(3), "flip-147").violations
[]
>>> exhaustive = PROTOCOL_SUITE.space(PROTOCOL_SUITE.exhaustive_token())
>>> exhaustive.check(exhaustive.case(0), "flip-147").violations, exhaustive.shape(exhaustive.case(0))
([], 'pair aligned r0 c1 f0')
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import product
from typing import NamedTuple
import random
import time

from flipcheck.designs import title_of
from flipcheck.designs.common import check_variant
from flipcheck.designs.drivers import Finding, hypothesis_driver, report_finding, seeded_driver
from flipcheck.designs.generated_suite import GeneratedSuite
from flipcheck.generators.choices import SeededChooser, choice
from flipcheck.generators.protocol import EXAMPLE_GRAPHS, example_graph, random_walk
from flipcheck.model.barriers import MODES
from flipcheck.properties.protocol_coverage import Coverage, rule_coverage_report
from flipcheck.properties.protocol_explore import GRAPH_PROPERTIES, explore_job
from flipcheck.render.protocol_labels import trace_json
from flipcheck.properties.protocol_properties import JOB_PROPERTIES, check_trace
from flipcheck.properties.violation import Violation
from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, PROTOCOLS, make_job, protocol_class


__all__ = [
    # the design contract
    "name", "title", "seed", "spec", "engine", "variants", "properties", "drivers", "suite", "verify", "mutants", "hunt", "render",
    # its parts
    "variant_class", "generate_case", "check_case", "EXPLORATION_CONFIGS", "FIRST_CONFIGURATIONS", "FIRST_CONFIGURATIONS_FOR_SWITCHES", "first_configurations", "graph_bounds", "RULE_COVERAGE", "ROW_NAMES", "HUNT_CONFIGS", "SINK_V2_HUNT_CONFIGS", "SINK_V2_ATTRIBUTES", "hunt_configs", "ENGINE", "ENGINES", "PROPERTY_NAMES", "Configuration", "Trace", "EXHAUSTIVE_CONFIGS", "EXHAUSTIVE_BOUNDS", "EXHAUSTIVE_REDUCTION", "EXHAUSTIVE_STATEMENT", "exhaustive_cases", "explore_case", "minimise_case", "render_case", "describe_case", "case_size", "case_shape", "PROTOCOL_SUITE", "smaller_configurations", "trace_steps", "explore_command", "replay_argv"]

ROW_NAMES = tuple(JOB_PROPERTIES)


class Configuration(NamedTuple):
    """A job to explore: an example graph and the bounds and options of :class:`~flipcheck.model.protocol.Job`."""

    graph: str
    mode: str
    records: int
    checkpoints: int
    failures: int
    stop_with_savepoint: bool = False

    def job(self, variant: str = CORRECT_PROTOCOL):
        return make_job(example_graph(self.graph), variant, mode=self.mode, records=self.records,
                        checkpoints=self.checkpoints, failures=self.failures,
                        stop_with_savepoint=self.stop_with_savepoint)


# verify's exploration driver, smallest first so a small budget still covers the basics (the
# first always runs: a Sink V2 sink with a failover, S1-S4 and F1; a restore bug shows only
# there). Together they fire every rule an exploration can take (tests/cover/test_protocol_coverage.py),
# with a stop-with-savepoint for C7 and J9.
EXPLORATION_CONFIGS = (
    Configuration("pair-v2", "aligned", 1, 1, 1), Configuration("pair", "aligned", 1, 1, 1),
    Configuration("pair", "aligned", 1, 1, 0, True), Configuration("pair", "unaligned", 2, 1, 1),
    Configuration("pair", "at-least-once", 2, 1, 1), Configuration("chain", "aligned", 1, 1, 1),
    Configuration("chain", "unaligned", 1, 1, 0), Configuration("union", "aligned", 0, 1, 0),
    Configuration("diamond", "aligned", 1, 1, 0),
)

# -- what flipcheck.explore searches when the configuration is left to it -------------------------

# flipcheck.explore and the pytest plugin, given no graph: configurations that together can show
# each kind of change in the mutant catalogue (tests/quality/test_first_configurations.py), 16,471
# states for a protocol that breaks nothing. Two sources (the tutorial's graph): either may finish
# first, so one finishes while the other still runs and the timer goes on triggering (the plan,
# C2; the exit rule, J7). Records make two sources expensive (one each: 41,920 states aligned), and
# finishing needs none. Both modes: unaligned barriers overtake EndOfData (J5u), which the exit
# rule meets. The unaligned search, the largest, comes last, so that a change the others show
# fails sooner.
FIRST_CONFIGURATIONS = (
    Configuration("twin", "aligned", 0, 1, 0),
    Configuration("pair", "aligned", 1, 1, 1),        # a failover (F1, F1b)
    Configuration("pair", "aligned", 0, 1, 0, True),  # a stop-with-savepoint without drain (C7, J9)
    Configuration("union", "aligned", 0, 1, 0),       # union list state (C5), two sink subtasks
    Configuration("pair-v2", "aligned", 1, 1, 1),     # a Sink V2 sink restored after its end of input (S1-S4)
    Configuration("twin", "unaligned", 0, 1, 0),
)
# Configurations too large to search for every change, added for a protocol that overrides one of
# the switches named: a change to that switch shows there and in none of the above.
FIRST_CONFIGURATIONS_FOR_SWITCHES = (
    # Two pipelines: a sink subtask's own source finishes while the other source runs, so
    # checkpoints go on reaching it after its final one (FLINK-23473), and which subtasks to
    # trigger over a POINTWISE edge is decided per subtask (examples/user-project's bug, a plan
    # that decides per vertex): 16,959 states. union's checks decline those checkpoints.
    (Configuration("parallel", "aligned", 0, 1, 0), ("no_transaction_after_finish", "plan")),
    # a record still in flight when its upstream finishes (FLINK-21086): 55,945 states
    (Configuration("pair-and-source", "unaligned", 1, 1, 0), ("wait_for_end_of_data_acks",)),
)


def first_configurations(protocol) -> tuple[Configuration, ...]:
    """What :func:`flipcheck.explore` searches for ``protocol`` (a :class:`~flipcheck.model.protocol.Protocol`)
    given no graph: :data:`FIRST_CONFIGURATIONS`, then those of
    :data:`FIRST_CONFIGURATIONS_FOR_SWITCHES` for the switches it overrides.

    >>> from flipcheck.reference_impl.protocol_variants import protocol
    >>> [(c.graph, c.mode) for c in first_configurations(protocol("flip-147"))][::5]
    [('twin', 'aligned'), ('twin', 'unaligned')]
    >>> first_configurations(protocol("no-end-of-data-ack"))[-1].graph
    'pair-and-source'
    """
    from flipcheck.properties.protocol_coverage import overridden

    changed = set(overridden(protocol))
    return FIRST_CONFIGURATIONS + tuple(config for config, switches in FIRST_CONFIGURATIONS_FOR_SWITCHES
                                        if changed & set(switches))


def graph_bounds(mode: str | None = None, records: int | None = None, checkpoints: int | None = None,
                 failures: int | None = None, stop_with_savepoint: bool | None = None) -> list[dict]:
    """The bounds :func:`flipcheck.explore` searches a graph you give with: those you give, and
    for each you leave out its default (records 1, checkpoints 1, failures 0, no
    stop-with-savepoint), except the mode: left out, it is both aligned and unaligned (a
    stop-with-savepoint only aligned: savepoints are). Each dict is the options of a
    :class:`~flipcheck.model.protocol.Job`.

    >>> [(b["mode"], b["records"]) for b in graph_bounds()]
    [('aligned', 1), ('unaligned', 1)]
    >>> [b["mode"] for b in graph_bounds(mode="at-least-once")], [b["mode"] for b in graph_bounds(stop_with_savepoint=True)]
    (['at-least-once'], ['aligned'])
    """
    modes = (mode,) if mode is not None else ("aligned",) if stop_with_savepoint else ("aligned", "unaligned")
    return [{"mode": chosen, "records": 1 if records is None else records,
             "checkpoints": 1 if checkpoints is None else checkpoints, "failures": 0 if failures is None else failures,
             "stop_with_savepoint": bool(stop_with_savepoint)} for chosen in modes]


# What the last verify's exploration driver exercised: the rules fired over the configurations it
# explored (flipcheck verify reports it; verify_design reads it).
RULE_COVERAGE: dict = {}


def generate_case(chooser) -> tuple:
    """``(graph, mode, records, checkpoints, failures, walk seed)``."""
    return (choice(chooser, sorted(EXAMPLE_GRAPHS)), choice(chooser, MODES), chooser.integer(0, 2),
            chooser.integer(1, 3), chooser.integer(0, 1), chooser.integer(0, 2**31))


class Trace(NamedTuple):
    """A counterexample: steps from the initial state (``cycle``: a lasso's loop). ``canonical``
    says the labels carry the explorer's renamed checkpoint ids."""

    config: Configuration
    labels: tuple
    cycle: tuple = ()
    canonical: bool = True


def _configuration(case) -> Configuration:
    return case if isinstance(case, Configuration) else case.config if isinstance(case, Trace) else Configuration(*case[:5])


@lru_cache(maxsize=64)  # a sweep checks a case, then asks its size: walk once
def _walk(case: tuple, variant: str) -> tuple:
    labels, _ = random_walk(_configuration(case).job(variant), random.Random(case[5]), max_steps=400)
    return tuple(labels)


def check_case(case, variant: str = CORRECT_PROTOCOL) -> list[Violation]:
    """Every step/state property along the random schedule of ``case``, and no deadlock at its end;
    a :class:`Configuration` is explored (:func:`explore_case`)."""
    if isinstance(case, Configuration):
        return explore_case(case, variant)[0]
    if isinstance(case, Trace):
        return _check_trace(case, variant)
    return check_trace(_configuration(case).job(variant), _walk(tuple(case), variant))


def _check_trace(trace: Trace, variant: str) -> list[Violation]:
    """A counterexample re-checked: its steps (real checkpoint ids) with every step/state property;
    a lasso's cycle, when it replays, is a run that never ends the job."""
    from flipcheck.properties.protocol_explore import replay
    from flipcheck.properties.protocol_properties import END_REACHABLE

    job = trace.config.job(variant)
    steps = replay(job, trace.labels, trace.cycle, canonical_labels=trace.canonical)
    found = [] if trace.cycle else check_trace(job, [step.label for step in steps])
    if trace.cycle:
        found.append(Violation(END_REACHABLE, f"after {len(trace.labels)} steps the job can repeat a cycle of "
                                              f"{len(trace.cycle)} steps forever without ending"))
    return found


def verify(budget_seconds: float = 20.0, variant: str | None = None) -> list[dict]:
    """Rows ``{"name", "cases", "violations", "driver"}``; ``variant`` names a protocol variant."""
    name = check_variant(variant or CORRECT_PROTOCOL, protocol_class)
    started = time.perf_counter()
    deadline = started + budget_seconds * 0.5
    states, found, explored = 0, Counter(), 0
    coverage = Coverage()
    for config in EXPLORATION_CONFIGS:
        if time.perf_counter() > deadline and states:
            break
        # the budget ends a search under way too (the first, smallest, always runs to the end)
        result = explore_job(config.job(name), max_states=100_000, deadline=deadline if states else None,
                             coverage=True)
        states += result.states
        explored += 1
        coverage.add(result.coverage)
        for prop in set(result.violated()):
            found[prop] += 1
        for c in result.counterexamples:  # shortest first: the one verify shows
            report_finding(Finding(c.property, c.message, Trace(config, tuple(c.labels), tuple(c.cycle)), "exploration"))
    RULE_COVERAGE.clear()
    RULE_COVERAGE.update(rule_coverage_report(coverage, explored, len(EXPLORATION_CONFIGS)))
    rows = [{"name": n, "cases": states, "violations": found[n], "driver": "exploration"} for n in ROW_NAMES]
    remaining = max(0.3, budget_seconds - (time.perf_counter() - started))
    check = lambda case: check_case(case, name)  # noqa: E731
    for tally in (seeded_driver(generate_case, check, budget_seconds=remaining * 0.5, seed="verify-protocol",
                                suite=PROTOCOL_SUITE.name),
                  hypothesis_driver(generate_case, check, budget_seconds=remaining * 0.5, suite=PROTOCOL_SUITE.name)):
        rows += [{"name": n, "cases": tally.cases, "violations": tally.violations[n], "driver": tally.driver}
                 for n in ROW_NAMES]
    return rows


# -- the mutant catalogue (flipcheck mutants) ------------------------------------------------------

# (graph, records, further Job options, state bound) in the order a hunt explores them: small
# first, so the first trace is short; configurations with a failover or a stop-with-savepoint next
# (only their bugs need them: FLINK-32945, FLINK-24161), then the parallel graph (a checkpoint can
# reach a sink after its final one: FLINK-23473, about 61,000 states breadth-first); last the one
# only unaligned barriers show (no-end-of-data-ack: its shortest trace is 23 steps deep, about
# 300,000 states breadth-first).
HUNT_CONFIGS = (("pair", 1, {}, 60_000), ("twin", 0, {}, 60_000), ("twin", 1, {}, 60_000), ("union", 0, {}, 60_000),
                ("chain", 1, {}, 60_000), ("pair", 0, {"failures": 1}, 60_000),
                ("pair", 0, {"stop_with_savepoint": True}, 60_000), ("parallel", 0, {}, 100_000),
                ("union", 1, {"mode": "unaligned"}, 400_000))
# Sink V2 mutants hunt on a Sink V2 graph with one failover: their bugs need a restore (FLINK-25920,
# FLINK-37605).
SINK_V2_HUNT_CONFIGS = (("pair-v2", 0, {"failures": 1}, 60_000), ("pair-v2", 1, {"failures": 1}, 60_000))
# The Protocol switches only a Sink V2 vertex reads (model/protocol/tasks.py rules S1-S4; the
# rule method end_of_input_checkpoint_id is S1).
SINK_V2_ATTRIBUTES = ("no_pre_barrier_commit_after_end_of_input", "restore_end_of_input",
                      "end_of_input_id_is_next_checkpoint", "end_of_input_checkpoint_id")


def hunt_configs(variant: str) -> tuple:
    """``(graph, records, Job options, state bound)`` in the order :func:`hunt` explores
    them for ``variant`` (a variant overriding a Sink V2 attribute hunts on
    :data:`SINK_V2_HUNT_CONFIGS`).

    >>> hunt_configs("end-input-again-after-restore")[0], hunt_configs("pre-flip-147")[0]
    (('pair-v2', 0, {'failures': 1}, 60000), ('pair', 1, {}, 60000))
    """
    from flipcheck.model.protocol import Protocol

    cls = protocol_class(variant)
    if any(getattr(cls, a) != getattr(Protocol, a) for a in SINK_V2_ATTRIBUTES):
        return SINK_V2_HUNT_CONFIGS
    return HUNT_CONFIGS


def mutants() -> list:
    """This suite's entries of :func:`flipcheck.designs.mutants.catalogue` (ids ``protocol-<variant>``:
    the plan suite has its own ``trigger-sources-only``)."""
    from flipcheck.designs.contract import Mutant
    from flipcheck.reference_impl.protocol_variants import PROTOCOL_VARIANTS

    return [Mutant(f"protocol-{name}", "protocol", name, cls.flink_issue,
                   " ".join((cls.__doc__ or "").split()).split(". ")[0].rstrip(".") + ".")
            for name, cls in PROTOCOL_VARIANTS.items()]


def hunt(mutant, budget_seconds: float):
    """Breadth-first exploration of :func:`hunt_configs` until a violation: a shortest trace."""
    from flipcheck.designs.contract import Detection

    started = time.perf_counter()
    states = 0
    for graph, records, options, max_states in hunt_configs(mutant.variant):
        if time.perf_counter() - started > budget_seconds:
            break
        job = make_job(example_graph(graph), mutant.variant, records=records, **options)
        result = explore_job(job, stop_at_first=True, liveness=False, max_states=max_states)
        states += result.states
        if result.counterexamples:
            c = result.counterexamples[0]
            return Detection(True, c.property, "exploration", states, time.perf_counter() - started, c.length,
                             Trace(Configuration(graph, job.mode, records, job.checkpoints, job.failures,
                                                 job.stop_with_savepoint),
                                   tuple(c.labels), tuple(c.cycle)))
    return Detection(False, seconds=time.perf_counter() - started)


# -- the sweep's suite (flipcheck.designs.protocol) ---------------------------------------------------

ENGINE = CORRECT_PROTOCOL
ENGINES = tuple(PROTOCOLS)
PROPERTY_NAMES = ROW_NAMES
# Every configuration an exhaustive sweep explores completely: the small graphs with every bound
# the issue names (records <= 2, checkpoints <= 3, failures <= 1, each mode), the larger graphs
# at the bounds that stay under a few hundred thousand states. Unaligned diamond and union with a
# record exceed that since barriers overtake (rule J5u: over 3,000,000 and 1,000,000 states).
EXHAUSTIVE_CONFIGS = tuple(
    [Configuration("pair", m, r, c, f) for m, r, c, f in product(MODES, (0, 1, 2), (1, 2, 3), (0, 1))]
    + [Configuration("chain", m, r, c, f) for m, r, c, f in product(MODES, (0, 1), (1, 2), (0, 1))]
    + [Configuration("diamond", m, 1, 1, f) for m, f in product(("aligned", "at-least-once"), (0, 1))]
    + [Configuration("twin", m, 1, 1, 0) for m in ("aligned", "at-least-once")]
    + [Configuration("union", m, 1, 1, 0) for m in ("aligned", "at-least-once")]
    + [Configuration("join", "aligned", 1, 1, 0)]
    # stop-with-savepoint without drain (aligned, no failures: Job's bounds for it)
    + [Configuration("pair", "aligned", r, 1, 0, True) for r in (0, 1, 2)]
    + [Configuration("chain", "aligned", r, 1, 0, True) for r in (0, 1)]
    + [Configuration(g, "aligned", 0, 1, 0, True) for g in ("union", "twin")]
    + [Configuration("parallel", "aligned", 0, 1, 0)]  # a checkpoint can reach a sink after its final one
    # Sink V2 with a failover (S1-S4): the two pinned in tests/manifests/protocol.json; a restore
    # bug of the Sink V2 rules passed every configuration above (issue 24, finding 8).
    + [Configuration("pair-v2", "aligned", 1, 1, 1), Configuration("pair-v2", "unaligned", 2, 2, 1)])
EXHAUSTIVE_BOUNDS = {"graphs": sorted({c.graph for c in EXHAUSTIVE_CONFIGS}), "modes": list(MODES),
                     "max_records": 2, "max_checkpoints": 3, "max_failures": 1}
# Exhaustive sweeps search the graph reduced by partial-order and symmetry reduction
# (properties/protocol_reduction.py, protocol_symmetry.py): the same verdicts in fewer states.
EXHAUSTIVE_REDUCTION = "all"
# The largest configuration, chain unaligned with records 1, checkpoints 2 and a failover, has
# 747,362 states unreduced (about 80 s and 0.7 GB on one core); a configuration cut by the bound
# (on the states searched) is reported.
_MAX_STATES = 1_000_000
EXHAUSTIVE_STATEMENT = (
    "in every reachable state ({states:,} states searched, reduced by partial-order and symmetry "
    "reduction, which keep every verdict) of the {units} example jobs (pair: records <= 2, "
    "checkpoints <= 3, failures <= 1; chain: records <= 1, checkpoints <= 2, failures <= 1; every mode each; "
    "diamond (failures <= 1), twin and union aligned and at-least-once; join and parallel aligned; pair-v2 (a Sink "
    "V2 sink) with a failover; pair, chain, union and twin stopped with a savepoint without drain), the {algorithm} protocol keeps every end-to-end "
    "property: consistent cuts, exactly-once, no dangling transaction, no deadlock, the end stays reachable, final "
    "checkpoints before finishing")


def exhaustive_cases() -> list[Configuration]:
    return list(EXHAUSTIVE_CONFIGS)


def explore_case(config: Configuration, variant: str = CORRECT_PROTOCOL,
                 reduction: str | None = None) -> tuple:
    """(violations, states searched, the first shortest counterexample as a :class:`Trace` or None);
    an exploration cut short by the state bound is a violation too (nothing was proved). The
    search is reduced by :data:`EXHAUSTIVE_REDUCTION` unless ``reduction`` says otherwise; the
    verdict is the same either way, and a counterexample is the full model's shortest trace."""
    result = explore_job(config.job(variant), max_states=_MAX_STATES,
                         reduction=EXHAUSTIVE_REDUCTION if reduction is None else reduction)
    violations = [Violation(c.property, c.message) for c in result.counterexamples]
    if not result.complete:
        violations.append(Violation("exploration_complete", f"stopped after {result.states} states"))
    first = result.counterexamples[0] if result.counterexamples else None
    return violations, result.states, (Trace(config, tuple(first.labels), tuple(first.cycle)) if first else None)


def minimise_case(case, variant: str, prop: str):
    """The shortest trace violating ``prop`` in the smallest configuration that shows it: the
    case's graph and mode with no more records, checkpoints or failures than the case, smallest
    first, each explored breadth-first until that property's shortest trace is known. The case
    itself when no bounded exploration reaches it."""
    config = _configuration(case)
    for smaller in smaller_configurations(config):
        bound = _MAX_STATES if smaller == config else _MINIMISE_MAX_STATES
        result = explore_job(smaller.job(variant), max_states=bound, shortest_of=prop,
                             liveness=prop in GRAPH_PROPERTIES)
        for c in result.counterexamples:  # shortest first
            if c.property == prop:
                return Trace(smaller, tuple(c.labels), tuple(c.cycle))
    return case


# A smaller configuration than the case's is explored up to this many states while minimising;
# most are explored completely well below it (the case's own configuration gets _MAX_STATES).
_MINIMISE_MAX_STATES = 200_000


def smaller_configurations(config: Configuration) -> list[Configuration]:
    """``config`` and every configuration below it, fewest records + checkpoints + failures first
    (at least one checkpoint where ``config`` has one: most properties need a checkpoint)."""
    smaller = [config._replace(records=r, checkpoints=c, failures=f)
               for r in range(config.records + 1) for c in range(min(1, config.checkpoints), config.checkpoints + 1)
               for f in range(config.failures + 1)]
    return sorted(smaller, key=lambda c: (c.records + c.checkpoints + c.failures, c.failures, c.checkpoints, c.records))


def _as_trace(case, variant: str) -> Trace:
    if isinstance(case, Trace):
        return case
    if isinstance(case, Configuration):
        return explore_case(case, variant)[2] or Trace(case, ())
    return Trace(_configuration(case), _walk(tuple(case), variant), (), False)


def render_case(case, out_path: str, variant: str = CORRECT_PROTOCOL) -> str:
    """The case's trace (a random case's schedule, or an exploration's first counterexample) as a
    message-sequence chart."""
    from flipcheck.properties.protocol_explore import replay
    from flipcheck.render.protocol import render_trace

    trace = _as_trace(case, variant)
    job = trace.config.job(variant)
    steps = replay(job, trace.labels, trace.cycle, canonical_labels=trace.canonical)
    found = _check_trace(trace, variant)
    title = f"{variant}: " + (found[0].property + " violated" if found else "trace")
    c = trace.config
    return render_trace(job, steps, out_path, title,
                        f"{c.graph} graph, {c.mode}, records {c.records}, checkpoints {c.checkpoints}, failures {c.failures}"
                        + (", stop-with-savepoint without drain" if c.stop_with_savepoint else ""))


def describe_case(case, variant: str = CORRECT_PROTOCOL) -> dict:
    """The case as JSON: its configuration; a counterexample's ``trace`` as structured steps
    (:func:`flipcheck.render.protocol_labels.trace_json`; a lasso's cycle marked ``loop``)."""
    described = dict(_configuration(case)._asdict())
    if isinstance(case, Trace):
        described["steps"] = len(case.labels) + len(case.cycle)
        described["trace"] = trace_steps(case, variant)
    elif not isinstance(case, Configuration):
        described["walk_seed"] = case[5]
    return described


def trace_steps(trace: Trace, variant: str = CORRECT_PROTOCOL) -> list[dict]:
    """A counterexample's steps, structured (actor, action, checkpoint id, sentence, ...), as the
    variant that found it takes them."""
    from flipcheck.properties.protocol_explore import replay

    job = trace.config.job(variant)
    return trace_json(job, replay(job, trace.labels, trace.cycle, canonical_labels=trace.canonical))


def explore_command(graph_path: str, variant: str, mode: str = "aligned", records: int = 1, checkpoints: int = 1,
                    failures: int = 0, stop_with_savepoint: bool = False, prop: str | None = None) -> list[str]:
    """The ``flipcheck explore`` command line that searches this configuration again: every
    violated property, each with its shortest trace; with ``prop``, only until that property's
    shortest trace is known.

    >>> " ".join(explore_command("pair.json", "pre-flip-147", failures=1))
    'flipcheck explore pair.json --variant pre-flip-147 --mode aligned --records 1 --checkpoints 1 --failures 1'
    """
    return (["flipcheck", "explore", graph_path, "--variant", variant, "--mode", mode, "--records", str(records),
             "--checkpoints", str(checkpoints), "--failures", str(failures)]
            + (["--stop-with-savepoint"] if stop_with_savepoint else []) + (["--property", prop] if prop else []))


def replay_argv(case, variant: str, prop: str, save_graph) -> list[str]:
    """The command that shows ``case``'s violation of ``prop`` again, trace by trace: ``flipcheck
    explore --property`` of its configuration, the graph saved by ``save_graph(graph) -> path``."""
    c = _configuration(case)
    return explore_command(save_graph(example_graph(c.graph)), variant, c.mode, c.records, c.checkpoints,
                           c.failures, c.stop_with_savepoint, prop if prop in JOB_PROPERTIES else None)


def case_size(case) -> int:
    """Steps: of a trace, of a random case's schedule (correct protocol); a configuration's tasks."""
    if isinstance(case, Trace):
        return len(case.labels) + len(case.cycle)
    if isinstance(case, Configuration):
        return len(case.job().tasks)
    return len(_walk(tuple(case), CORRECT_PROTOCOL))


def case_shape(case) -> str:
    c = _configuration(case)
    return f"{c.graph} {c.mode} r{c.records} c{c.checkpoints} f{c.failures}" + (" stop" if c.stop_with_savepoint else "")


# A user's own protocol (FILE.py:CLASS or MODULE:CLASS) subclasses flipcheck.model.protocol.Protocol.
variant_class = protocol_class
# A random case takes about 1 ms (a plan case about 0.1 ms): 200 per Spark task.
PROTOCOL_SUITE = GeneratedSuite("protocol", __name__, random_batch=200, relative_cost=10)


# -- the design contract (flipcheck.designs.contract.Design) ------------------------------------

name = "protocol"
title = title_of(name)
seed = "FLIP-147 end to end: Checkpoint Format with Finished Tasks; Do Not Cancel Pending Checkpoint on Finish; Failover and Recovery"
spec = "flipcheck.model.protocol"
engine = ENGINE
variants = ENGINES
properties = ROW_NAMES
drivers = ("seeded", "hypothesis", "exploration")
suite = PROTOCOL_SUITE
render = PROTOCOL_SUITE.render

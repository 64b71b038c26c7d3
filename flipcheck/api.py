"""flipcheck's public Python API: check a checkpoint or recovery design from your own code.

Everything here is re-exported by :mod:`flipcheck` itself (``import flipcheck``); these names,
their parameters and the fields of their results are the stable surface (docs/api.md). Every
other module is internal and may change.

Each check returns a :class:`Result`: ``ok`` (the verdict), ``counts`` (what was covered),
``counterexample`` (a :class:`Counterexample`, or None) and ``render(path)``, which draws the
counterexample (or, with none, what was checked) into a ``.svg`` or ``.png`` file.

Example
-------
>>> import flipcheck
>>> graph = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])
>>> flipcheck.explore(graph).ok
True
>>> flipcheck.explore(graph, "cancel-pending-on-finish").counterexample.property
'final_checkpoint_before_finish'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from flipcheck.errors import InputError, SearchCut, UsageError
from flipcheck.model.graph_json import GraphFormatError, graph_to_json, load_graph, parse_graph
from flipcheck.model.jobgraph import ALL_TO_ALL, POINTWISE, JobGraph
from flipcheck.model.plan import CheckpointPlan, PlanResult, checkpoint_plan
from flipcheck.model.protocol import Job, Protocol

__all__ = ["Result", "Counterexample", "job_graph", "load_job_graph", "save_job_graph", "plan", "prove", "replay_barriers",
           "explore", "verify", "sweep"]

_PATTERNS = {"all-to-all": ALL_TO_ALL, "pointwise": POINTWISE, ALL_TO_ALL: ALL_TO_ALL, POINTWISE: POINTWISE}


@dataclass(frozen=True)
class Counterexample:
    """A shortest way to break a property: ``property`` and ``message`` say what broke,
    ``steps`` (readable, in order) how, and ``replay`` how to get it again from a shell.

    >>> import flipcheck
    >>> g = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])
    >>> found = flipcheck.explore(g, "cancel-pending-on-finish", records=1).counterexample
    >>> found.property, len(found.steps), found.steps[-1]
    ('final_checkpoint_before_finish', 5, 'src[0] finishes')
    >>> found.replay
    'flipcheck explore GRAPH.json --variant cancel-pending-on-finish --mode aligned --records 1 --checkpoints 1 --failures 0'
    >>> print(found)
    final_checkpoint_before_finish violated: src[0] finished without performing a checkpoint after its end of data
        1. src[0] emits record r0
        2. src[0] reaches end of data
        3. sink[0] polls record r0 from src[0]
        4. sink[0] polls EndOfData from src[0]
        5. src[0] finishes
    replay: flipcheck explore GRAPH.json --variant cancel-pending-on-finish --mode aligned --records 1 --checkpoints 1 --failures 0
    """

    property: str
    message: str
    steps: tuple = ()
    replay: str = ""

    def __str__(self) -> str:
        lines = [f"{self.property} violated: {self.message}"]
        from flipcheck.render.trace_steps import step_lines

        lines += step_lines(self.steps)
        if self.replay:
            lines.append(f"replay: {self.replay}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Result:
    """The outcome of a check: ``ok``, ``counts``, the first ``counterexample`` (None when ok),
    every violation found (``violations``, as ``(property, message)``), the check's own output
    (``detail``: the plan, the property rows, the sweep's summary; for ``explore`` the per-rule
    ``coverage``), how to draw it, and ``warnings``: what the check could not tell (for
    ``explore``, a change of yours that made no difference in any state searched).

    >>> import flipcheck
    >>> g = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])
    >>> result = flipcheck.explore(g, "pre-flip-147", records=1, mode="aligned")
    >>> result.ok, result.counterexample.property, result.counts["complete"]   # it stopped at the first
    (False, 'final_checkpoint_before_finish', False)
    >>> print(result.report())  # doctest: +ELLIPSIS
    explore pre-flip-147: FAILED (states ..., transitions ..., complete False, reduction all, seconds ..., configurations 1)
    searched: your graph, aligned, records 1, checkpoints 1, failures 0: 10 states, violated: final_checkpoint_before_finish
    final_checkpoint_before_finish violated: src[0] finished without performing a checkpoint after its end of data
        1. src[0] emits record r0
        ...
    >>> sorted(result.detail["coverage"]["rules"])[:2], result.warnings
    (['C1', 'C2'], ())
    >>> flipcheck.explore(g, records=1).ok        # FLIP-147 as Flink ships it
    True
    """

    check: str
    ok: bool
    counts: dict = field(default_factory=dict)
    counterexample: Counterexample | None = None
    violations: tuple = ()
    detail: Any = field(default=None, repr=False, compare=False)
    _draw: Callable[[str], str] | None = field(default=None, repr=False, compare=False)
    warnings: tuple = ()

    def render(self, path: str | os.PathLike) -> str:
        """Draw the counterexample (or what was checked, when there is none) into ``path``
        (``.svg`` or ``.png``; needs graphviz's ``dot``) and return the path."""
        if self._draw is None:
            raise UsageError(f"{self.check}: nothing to draw")
        return self._draw(str(path))

    def report(self) -> str:
        """The verdict, the counts and the counterexample step by step, as text."""
        counts = ", ".join(f"{key} {value:,}" if isinstance(value, int) and not isinstance(value, bool)
                           else f"{key} {value}" for key, value in self.counts.items())
        head = f"{self.check}: {'ok' if self.ok else 'FAILED'}" + (f" ({counts})" if counts else "")
        head += "".join(f"\nwarning: {warning}" for warning in self.warnings)
        if isinstance(self.detail, dict) and "configurations" in self.detail:
            head += "".join(f"\n{configuration_line(entry)}" for entry in self.detail["configurations"])
        if self.counterexample is not None:
            return head + "\n" + str(self.counterexample)
        return head + "".join(f"\n{prop} violated: {message}" for prop, message in self.violations)


# -- job graphs ---------------------------------------------------------------------------------

def job_graph(vertices: Sequence[tuple], edges: Sequence[tuple], states: dict | None = None,
              checkpoints_after_tasks_finished: bool = True) -> JobGraph:
    """A job graph built in code: ``vertices`` as ``(id, parallelism)``, ``edges`` as
    ``(source, target, "all-to-all" | "pointwise")`` (or the constants :data:`flipcheck.ALL_TO_ALL`
    and :data:`flipcheck.POINTWISE`, the values an edge's ``pattern`` has), ``states`` optionally as ``{vertex id:
    [ExecutionState name per subtask]}`` (default: every task RUNNING).

    >>> g = job_graph([("src", 2), ("map", 2)], [("src", "map", "pointwise")], states={"src": ["FINISHED", "RUNNING"]})
    >>> [v.id for v in g.vertices], g.vertex("src").parallelism
    (['src', 'map'], 2)
    >>> g.inputs("map")[0].pattern == POINTWISE   # flipcheck.POINTWISE, which job_graph takes too
    True
    """
    document: dict[str, Any] = {
        "vertices": [{"id": vid, "parallelism": parallelism} for vid, parallelism in vertices],
        "edges": [{"source": s, "target": t, "pattern": _pattern(pattern)} for s, t, pattern in edges],
        "checkpoints_after_tasks_finished": checkpoints_after_tasks_finished,
    }
    if states:
        document["states"] = states
    try:
        return parse_graph(document)
    except GraphFormatError as error:
        raise InputError("job_graph", str(error)) from None


def load_job_graph(source: str | os.PathLike | dict) -> JobGraph:
    """A job graph from a JSON file (docs/graph-format.md) or an already parsed JSON document.

    >>> load_job_graph("examples/graphs/figure1.json").vertex("A").parallelism
    1
    """
    try:
        if isinstance(source, dict):
            return parse_graph(source)
        return load_graph(os.fspath(source))
    except GraphFormatError as error:
        raise InputError(str(source) if not isinstance(source, dict) else "graph", str(error)) from None


def save_job_graph(graph: JobGraph, path: str | os.PathLike) -> str:
    """Write ``graph`` as job-graph JSON (the format every command reads) and return the path.

    >>> import os, tempfile
    >>> path = save_job_graph(job_graph([("src", 1)], []), os.path.join(tempfile.mkdtemp(), "g.json"))
    >>> load_job_graph(path) == job_graph([("src", 1)], [])
    True
    """
    import json

    Path(path).write_text(json.dumps(graph_to_json(graph)) + "\n")
    return os.fspath(path)


def _graph(graph) -> JobGraph:
    return graph if isinstance(graph, JobGraph) else load_job_graph(graph)


def _pattern(pattern: str) -> str:
    try:
        return _PATTERNS[pattern]
    except KeyError:
        raise InputError("job_graph", f"edge pattern {pattern!r} is not all-to-all or pointwise") from None


# -- the checkpoint plan ------------------------------------------------------------------------

def plan(graph, algorithm: str | Callable[[JobGraph], PlanResult] | Any = "flink") -> Result:
    """Compute ``algorithm``'s checkpoint plan for ``graph`` (with its task states) and check it
    against the specification (model/plan.py) with every plan property. ``algorithm`` is a name
    (``flipcheck plan --help`` lists them), a plan calculator (an object with
    ``calculate(graph)``) or a function ``graph -> plan``. ``detail`` is the plan itself.

    >>> g = load_job_graph("examples/graphs/figure1.json")
    >>> plan(g).ok, sorted(plan(g).detail.tasks_to_trigger)
    (True, [('B', 0)])
    >>> print(plan(g, "wiki-b").counterexample)
    no_triggered_task_has_running_predecessor violated: triggered but not roots: ('C', 0) (reads running ('B', 0))
        1. C: RUNNING
        2. A: FINISHED
        3. B: RUNNING
    replay: flipcheck plan --algorithm wiki-b GRAPH.json
    """
    from flipcheck.properties.plan_properties import check_plan
    from flipcheck.reference_impl.plan import plan_algorithm

    graph = _graph(graph)
    name, compute = _plan_function(algorithm, plan_algorithm)
    result = compute(graph)
    spec = checkpoint_plan(graph)
    violations = tuple((v.property, v.message) for v in check_plan(graph, result, spec))
    first = None
    if violations:
        first = Counterexample(violations[0][0], violations[0][1],
                               tuple(f"{v.id}: {', '.join(v.states)}" for v in _states_of(graph)),
                               _plan_replay(algorithm, name))

    def draw(path: str) -> str:
        from flipcheck.render.core import render_counterexample, render_plan_graph

        drawing = render_counterexample if violations else render_plan_graph
        return drawing(graph, name, path, result=result)

    counts = {"tasks": graph.num_tasks}
    if isinstance(result, CheckpointPlan):
        counts.update(to_trigger=len(result.tasks_to_trigger), to_wait_for=len(result.tasks_to_wait_for))
    else:
        counts["declined"] = str(getattr(result, "reason", result))
    return Result(f"plan {name}", not violations, counts, first, violations, detail=result, _draw=draw)


def _plan_function(algorithm, by_name) -> tuple[str, Callable]:
    if isinstance(algorithm, str):
        try:
            return algorithm, by_name(algorithm)
        except (KeyError, ValueError) as error:
            raise UsageError(f"algorithm: {error.args[0] if error.args else error}") from None
    if isinstance(algorithm, type):
        algorithm = algorithm()
    from flipcheck.reference_impl.plan import FlinkPlanCalculator

    if isinstance(algorithm, FlinkPlanCalculator):
        _check_names(type(algorithm), FlinkPlanCalculator, "algorithm")
    if hasattr(algorithm, "calculate"):
        return _own_name(type(algorithm)), algorithm.calculate
    if callable(algorithm):
        return getattr(algorithm, "__name__", "algorithm"), algorithm
    raise UsageError(f"algorithm: {algorithm!r} is neither a name, a plan calculator nor a function")


def _plan_replay(algorithm, name: str) -> str:
    from flipcheck.reference_impl.user_variants import spec_of

    if isinstance(algorithm, str):
        return f"flipcheck plan --algorithm {name} GRAPH.json"
    spec = spec_of(algorithm if isinstance(algorithm, type) else type(algorithm))
    return f"flipcheck plan --algorithm {spec} GRAPH.json" if spec and hasattr(algorithm, "calculate") else ""


def _states_of(graph: JobGraph):
    from types import SimpleNamespace

    document = graph_to_json(graph)
    states = document.get("states", {})
    return [SimpleNamespace(id=v["id"], states=states.get(v["id"], ["RUNNING"] * v["parallelism"]))
            for v in document["vertices"]]


def prove(graph, algorithm: str = "flink", states: str = "binary") -> Result:
    """Prove with z3 that ``algorithm`` computes the specification's plan for EVERY assignment of
    task states on ``graph``'s topology (``states="binary"``: RUNNING/FINISHED; ``"all"``: the
    ten ExecutionStates). Only algorithms with a z3 encoding can be proved (``flipcheck prove
    --help``); a user's own algorithm is checked with :func:`plan` or :func:`verify` instead.

    >>> g = load_job_graph("examples/graphs/figure1.json")
    >>> prove(g).ok, prove(g, "flink-before-40482", states="all").ok
    (True, False)
    """
    from flipcheck.properties.z3_plan import PLAN_ENCODERS, prove_plan, proof_size_problem

    graph = _graph(graph)
    if algorithm not in PLAN_ENCODERS:
        raise UsageError(f"algorithm: no z3 encoding for {algorithm!r} (encoded: {', '.join(sorted(PLAN_ENCODERS))})")
    if states not in ("binary", "all"):
        raise UsageError(f"states: {states!r} is not binary or all")
    too_large = proof_size_problem(graph)
    if too_large:
        raise InputError("graph", too_large)
    proof = prove_plan(graph, algorithm, states)
    counts = {"tasks": proof.num_tasks, "assignments": f"{proof.values_per_task}^{proof.num_tasks}",
              "seconds": round(proof.seconds, 3)}
    if proof.proved:
        return Result(f"prove {algorithm}", True, counts, None, (),
                      _draw=lambda path: _render_plan(graph, algorithm, path))
    found = proof.counterexample
    summary = proof.summary()
    example = Counterexample("equals_spec", summary, tuple(f"{v.id}: {', '.join(v.states)}" for v in _states_of(found)),
                             f"flipcheck prove --algorithm {algorithm} --states {states} GRAPH.json")
    return Result(f"prove {algorithm}", False, counts, example, (("equals_spec", summary),),
                  detail=found, _draw=lambda path: _render_counterexample(found, algorithm, path))


def _render_plan(graph: JobGraph, algorithm: str, path: str) -> str:
    from flipcheck.render.core import render_plan_graph

    return render_plan_graph(graph, algorithm, path)


def _render_counterexample(graph: JobGraph, algorithm: str, path: str) -> str:
    from flipcheck.render.core import render_counterexample

    return render_counterexample(graph, algorithm, path)


# -- one task's barrier alignment ---------------------------------------------------------------

def replay_barriers(events: str | Sequence[str], channels: int, mode: str = "aligned", handler: str | type = "model",
                    checkpoints_after_tasks_finished: bool = True, alignment_timeout: int | None = None) -> Result:
    """Replay input events through one task's barrier handling (the spec ``"model"``, Flink's
    ``"flink"``, a named variant or your own :class:`~flipcheck.BarrierHandler` subclass) and check
    every barrier property. ``events`` are the tokens of
    ``flipcheck barriers --help`` (``B1@0``: barrier 1 on channel 0, ``E@1``: EndOfPartition,
    ``D@0``: a record, ...), as one string or a list.

    >>> replay_barriers("B1@0 E@1", channels=2).counts["triggered"]
    [1]
    >>> replay_barriers("B1@0 E@1", channels=2, handler="eop-not-aligned").ok
    False
    """
    from flipcheck.model.barriers import Config, parse_event
    from flipcheck.properties.barriers_replay import ImpossibleEvent, replay, summary

    tokens = events.split() if isinstance(events, str) else list(events)
    handler = _variant_name(handler, "handler")
    if mode not in ("aligned", "unaligned", "at-least-once"):
        raise UsageError(f"mode: {mode!r} is not aligned, unaligned or at-least-once")
    parsed = []
    for position, token in enumerate(tokens, 1):
        try:
            parsed.append(parse_event(token))
        except ValueError as error:
            raise InputError(f"event {position} ({token})", str(error)) from None
    config = Config(channels, mode, checkpoints_after_tasks_finished, alignment_timeout=bool(alignment_timeout))
    try:
        outcome = replay(config, parsed, alignment_timeout=alignment_timeout, handler=handler)
    except ImpossibleEvent as error:
        raise InputError(f"event {error.position} ({error.token})", error.reason) from None
    except KeyError:
        raise UsageError(f"handler: unknown barrier handler {handler!r}") from None
    violations = tuple((str(v).split(":", 1)[0], str(v)) for v in outcome.violations)
    first = None
    if violations:
        first = Counterexample(violations[0][0], violations[0][1], tuple(outcome.tokens),
                               f"flipcheck barriers --channels {channels} --mode {mode} --handler {handler} "
                               + " ".join(tokens))

    def draw(path: str) -> str:
        from flipcheck.render.barriers import render_chart

        return render_chart(outcome, path)

    return Result(f"barriers {handler}", not violations, {"events": len(tokens), **summary(outcome)}, first,
                  violations, _draw=draw)


# -- the whole job ------------------------------------------------------------------------------

def explore(graph=None, protocol: str | Protocol | type[Protocol] | None = None, *, mode: str | None = None,
            records: int | None = None, checkpoints: int | None = None, failures: int | None = None,
            stop_with_savepoint: bool | None = None, max_states: int | None = None, reduction: str = "all",
            stop_at_first: bool = True) -> Result:
    """Explore every reachable state of the whole job (coordinator, tasks, channels;
    docs/protocol.md) running ``protocol``: None for FLIP-147 as Flink ships it, a variant's name,
    or your own :class:`Protocol` subclass (or instance). ``ok`` means no property violated in
    the states searched. The counterexample is the full model's shortest trace.

    What is searched is a set of configurations (``detail["configurations"]`` lists them, each
    with its states):

    * ``graph`` given: that graph with the bounds you give; one you leave out takes its default
      (``records`` 1 per source subtask, ``checkpoints`` 1, ``failures`` 0, no
      ``stop_with_savepoint``), except ``mode``: left out, the graph is searched both
      ``"aligned"`` and ``"unaligned"``, since some changes show only in one of them;
    * no graph: flipcheck's first configuration set, small jobs that together can show each kind
      of change its catalogue of real Flink bugs has: two sources in both modes, a failover, a
      stop-with-savepoint, union list state, a Sink V2 sink; and for a protocol that changes its
      ``plan``, ``no_transaction_after_finish`` or ``wait_for_end_of_data_acks``, the larger job
      that shows such a change (``FIRST_CONFIGURATIONS_FOR_SWITCHES`` in
      flipcheck/designs/protocol.py). Its bounds are its own.

    ``max_states`` bounds the states of the whole set; a search it cut short has
    ``counts["complete"]`` false and warns (a ``UserWarning``) that it did not search them all.
    The search ends at the first violation unless ``stop_at_first=False``, which finds every
    property violated (``violations``), each with its shortest trace, at the cost of every state.

    >>> g = job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])
    >>> result = explore(g)
    >>> result.ok, result.counts["complete"], [c["mode"] for c in result.detail["configurations"]]
    (True, True, ['aligned', 'unaligned'])
    >>> class FinishesEarly(Protocol):
    ...     name = "finishes-early"
    ...     wait_for_final_checkpoint = False
    >>> bad = explore(g, FinishesEarly, mode="aligned")
    >>> bad.ok, bad.counterexample.property
    (False, 'final_checkpoint_before_finish')
    >>> bad.detail["coverage"]["overrides"]["wait_for_final_checkpoint"]["changed_successors"] > 0
    True
    >>> class NoWait(Protocol):   # the exit rule changed: shows only with two sources or unaligned
    ...     wait_for_pending_checkpoints = False
    >>> found = explore(protocol=NoWait)
    >>> found.counterexample.property, found.detail["configurations"][0]["graph"]
    ('no_pending_checkpoint_cancelled', 'twin')
    """
    import shlex
    from collections import Counter

    from flipcheck.designs.protocol import explore_command
    from flipcheck.model.protocol import MAX_RECORDS
    from flipcheck.properties.protocol_coverage import Coverage, vacuity_messages
    from flipcheck.properties.protocol_explore import explore_job, replay
    from flipcheck.properties.protocol_reduction import REDUCTIONS
    from flipcheck.render.protocol_labels import trace_json
    from flipcheck.render.trace_steps import step_text

    chosen = _protocol(protocol)
    label, variant = _protocol_names(protocol, chosen)
    if reduction not in REDUCTIONS:
        raise UsageError(f"reduction: {reduction!r} is not one of {', '.join(REDUCTIONS)}")
    if records is not None and not 0 <= records <= MAX_RECORDS:
        raise UsageError(f"records: {records} is not between 0 and {MAX_RECORDS:,}")
    searches = _searches(graph, chosen, mode=mode, records=records, checkpoints=checkpoints, failures=failures,
                         stop_with_savepoint=stop_with_savepoint)
    searched, coverage, totals, found, violations = [], Coverage(), Counter(), None, {}
    used_reduction = reduction   # explore_job searches an overridden rule method unreduced
    for name, job_records, job in searches:
        entry = {"graph": name, "mode": job.mode, "records": job_records, "checkpoints": job.checkpoints,
                 "failures": job.failures, "stop_with_savepoint": job.stop_with_savepoint, "states": 0,
                 "complete": False, "violated": []}
        searched.append(entry)
        left = None if max_states is None else max_states - totals["states"]
        if (left is not None and left <= 0) or (found is not None and stop_at_first):
            continue   # listed, not searched: the bound is spent, or a violation ended the search
        result = explore_job(job, max_states=left, reduction=reduction, stop_at_first=stop_at_first, coverage=True)
        entry.update(states=result.states, complete=result.complete, violated=result.violated())
        used_reduction = result.reduction
        totals.update(states=result.states, transitions=result.transitions, seconds=result.seconds)
        coverage.add(result.coverage)
        if result.counterexamples and found is None:
            found = (job, job_records, result.counterexamples[0])
        for c in result.counterexamples:   # each property's first, shortest trace
            violations.setdefault(c.property, c.message)
    complete = all(entry["complete"] for entry in searched)
    counts = {"states": totals["states"], "transitions": totals["transitions"], "complete": complete,
              "reduction": used_reduction, "seconds": round(totals["seconds"], 3),
              "configurations": sum(1 for entry in searched if entry["states"])}
    violations = tuple(violations.items())
    first, steps, job = None, [], None
    if found is not None:
        job, job_records, c = found
        steps = replay(job, c.labels, c.cycle)
        command = shlex.join(explore_command("GRAPH.json", variant, job.mode, job_records, job.checkpoints,
                                             job.failures, job.stop_with_savepoint))
        first = Counterexample(c.property, c.message, tuple(map(step_text, trace_json(job, steps))), command)

    def draw(path: str) -> str:
        from flipcheck.render.protocol import render_trace

        if first is None:
            raise UsageError(f"explore {label}: no violation, nothing to draw")
        return render_trace(job, steps, path, f"{label}: {first.property} violated",
                            first.message if len(first.message) < 160 else first.message[:157] + "...")

    if not complete and not violations:
        import warnings

        warnings.warn(cut_message(f"explore {label}", totals["states"], max_states), SearchCut, stacklevel=2)
    detail = {"coverage": coverage.as_json(), "configurations": searched, "graph": job.graph if job else None}
    return Result(f"explore {label}", not violations, counts, first, violations, detail=detail, _draw=draw,
                  warnings=tuple(vacuity_messages(coverage)))


def _searches(graph, protocol: Protocol, **bounds) -> list[tuple[str, int, Job]]:
    """``(graph name, records, job)`` for each configuration :func:`explore` searches: ``graph``
    with :func:`~flipcheck.designs.protocol.graph_bounds`, or with none the first configuration set."""
    from flipcheck.designs.protocol import first_configurations, graph_bounds
    from flipcheck.generators.protocol import example_graph

    if graph is None:
        given = [name for name, value in bounds.items() if value is not None]
        if given:
            raise UsageError(f"{given[0]}: without a graph, explore searches its first configuration set, whose "
                             f"bounds are its own; give a graph to choose them")
        return [(config.graph, config.records,
                 Job(example_graph(config.graph), protocol=protocol,
                     **{key: value for key, value in config._asdict().items() if key != "graph"}))
                for config in first_configurations(protocol)]
    graph = _graph(graph)
    try:
        return [("given", options["records"], Job(graph, protocol=protocol, **options))
                for options in graph_bounds(**bounds)]
    except ValueError as error:
        raise UsageError(str(error)) from None


def configuration_line(entry: dict) -> str:
    """One configuration of ``explore``'s ``detail["configurations"]`` as the reports say it.

    >>> configuration_line({"graph": "twin", "mode": "unaligned", "records": 0, "checkpoints": 1, "failures": 0,
    ...                     "stop_with_savepoint": False, "states": 11148, "complete": True, "violated": []})
    'searched: twin graph, unaligned, records 0, checkpoints 1, failures 0: 11,148 states'
    """
    graph = "your graph" if entry["graph"] == "given" else f"{entry['graph']} graph"
    line = (f"{graph}, {entry['mode']}, records {entry['records']}, checkpoints {entry['checkpoints']}, "
            f"failures {entry['failures']}" + (", stop-with-savepoint" if entry["stop_with_savepoint"] else ""))
    if not entry["states"]:
        return f"not searched: {line}"
    line += f": {entry['states']:,} states" + ("" if entry["complete"] or entry["violated"] else " (cut short)")
    return f"searched: {line}" + (f", violated: {', '.join(entry['violated'])}" if entry["violated"] else "")


def cut_message(check: str, states: int, max_states: int | None) -> str:
    """The one line every front end (the command, the API, the plugin) says about a search its
    bound cut short, so that a cut is never read as a whole search."""
    bound = f"max_states {max_states:,}" if max_states is not None else "its bound"
    return (f"{check}: no violation in {states:,} states, but the search stopped at {bound} before it "
            f"searched them all (complete: false)")


def _protocol_names(given, chosen: Protocol) -> tuple[str, str]:
    """How a report names the protocol (a class of yours by its own ``name`` or class name, never
    by the name it inherits) and the ``--variant`` that replays it."""
    from flipcheck.reference_impl.user_variants import absolute_spec, spec_of

    if given is None or isinstance(given, str):
        return chosen.name, absolute_spec(given) if given else chosen.name
    cls = type(chosen)
    return _own_name(cls), spec_of(cls) or f"<define {cls.__name__} at the top level of a file to replay it>"


def _own_name(cls: type) -> str:
    """A class of yours by the ``name`` it sets itself, else its class name: never the name it
    inherits (a subclass of Flink's protocol or calculator is not "flip-147" or "flink")."""
    return cls.__dict__.get("name") or cls.__name__


def _variant_name(variant, option: str) -> str | None:
    """A variant as the registries name it: a registered name, a spec, or for a class of yours the
    spec that loads it again (in Spark executors too)."""
    from flipcheck.reference_impl.user_variants import absolute_spec, spec_of

    if variant is None or isinstance(variant, str):
        return variant if variant is None else absolute_spec(variant)
    spec = spec_of(variant if isinstance(variant, type) else type(variant))
    if spec is None:
        raise UsageError(f"{option}: {variant!r} cannot be loaded by name; define the class at the top level of a file")
    return spec


def _check_names(cls: type, base: type, option: str) -> None:
    """A class of yours passed in code is held to its base's names as a spec is (a typo in an
    attribute is a UsageError, a value the base already has a warning)."""
    import warnings

    from flipcheck.reference_impl.user_variants import UserVariantError, VariantWarning, check_names

    try:
        found = check_names(cls, base)
    except UserVariantError as error:
        raise UsageError(f"{option}: {error}") from None
    for warning in found:
        warnings.warn(warning, VariantWarning, stacklevel=4)


def _protocol(protocol) -> Protocol:
    from flipcheck.reference_impl.protocol_variants import CORRECT_PROTOCOL, protocol as protocol_named

    if protocol is None:
        protocol = CORRECT_PROTOCOL
    if isinstance(protocol, str):
        try:
            return protocol_named(protocol)
        except ValueError as error:
            raise UsageError(f"protocol: {error}") from None
    if isinstance(protocol, type) and issubclass(protocol, Protocol):
        _check_names(protocol, Protocol, "protocol")
        return protocol()
    if isinstance(protocol, Protocol):
        _check_names(type(protocol), Protocol, "protocol")
        return protocol
    raise UsageError(f"protocol: {protocol!r} is not a protocol name or a flipcheck.Protocol subclass")


# -- whole suites -------------------------------------------------------------------------------

def verify(suite: str, variant: str | type | None = None, budget: float = 20.0,
           out: str | os.PathLike | None = None) -> Result:
    """Every property of a design (``flipcheck verify --help`` lists them: plan, barriers,
    protocol, the recovery designs) with every driver (examples, hypothesis, z3, exploration)
    within ``budget`` seconds, against the engine, a named ``variant`` or your own class (the
    suite's base class: :class:`~flipcheck.Protocol` for ``protocol``, ...).
    ``counts["properties"]`` has one row per property and driver. The counterexample is the
    shortest one of the first violated property, step by step, with a replay command that
    works from any folder: its files (the graph, a copy of your class's file) are saved in
    ``out`` (default ``.flipcheck/verify-SUITE`` in the current folder), as ``flipcheck verify``
    saves them; ``detail["counterexamples"]`` has one per violated property.

    >>> verify("plan", budget=1).ok
    True
    """
    from flipcheck.designs import DesignUnavailable, verify_design
    from flipcheck.designs.counterexamples import default_folder

    variant = _variant_name(variant, "variant")
    folder = Path(out) if out is not None else default_folder("verify", suite)
    try:
        report = verify_design(suite, budget, variant, out=folder)
    except DesignUnavailable as error:
        raise UsageError(f"suite: {error}") from None
    except (KeyError, ValueError) as error:
        raise UsageError(f"variant: {error.args[0] if error.args else error}") from None
    failing = tuple((row["name"], f"{row['violations']} violation(s) found by {row['driver']}")
                    for row in report["properties"] if row["violations"])
    first = None
    if report["counterexamples"]:
        first = _counterexample(report["counterexamples"][0])
    elif failing:
        first = Counterexample(*failing[0], (), f"flipcheck verify --suite {suite}" + (f" --variant {variant}" if variant else ""))

    def draw(path: str) -> str:
        return _copy_picture(folder, report["counterexamples"], path, f"verify {suite}")

    return Result(f"verify {suite}", not failing, {"violations": report["violations"],
                                                    "properties": report["properties"]}, first, failing,
                  detail=report, _draw=draw)


def _counterexample(entry: dict) -> Counterexample:
    """A saved counterexample (:func:`flipcheck.designs.counterexamples.save_counterexample`)
    as the API gives it: its steps as text, its replay."""
    from flipcheck.render.trace_steps import step_text

    steps = entry["minimised"].get("trace") or () if isinstance(entry["minimised"], dict) else ()
    return Counterexample(entry["property"], entry["message"] or f"{entry['suite']}/{entry['algorithm']} minimised "
                          f"to {entry['size']} {entry['size_unit']}", tuple(map(step_text, steps)), entry["replay"] or "")


def _copy_picture(folder, entries: list, path: str, check: str) -> str:
    """Copy the first counterexample's picture (drawn when it was saved) to ``path``."""
    import shutil

    if not entries or not entries[0].get("picture"):
        raise UsageError(f"{check}: no counterexample picture to copy")
    picture = Path(folder) / entries[0]["picture"]
    if picture.suffix != Path(path).suffix:
        raise UsageError(f"{check}: the picture is {picture.suffix}; give a {picture.suffix} path")
    shutil.copyfile(picture, path)
    return path


def sweep(suite: str, out: str | os.PathLike, *, cases: int | None = None, seed: str | None = None,
          exhaustive: bool = False, variant: str | type | None = None, master: str = "local[*]") -> Result:
    """Check many cases of a suite on Spark (``master``: ``local[*]`` or any Spark master URL),
    writing results, pictures and report.html to ``out``; a killed sweep resumes from ``out``.
    Give ``cases`` (random, with ``seed``) or ``exhaustive=True``. ``render(path)`` copies the
    first counterexample's picture; ``detail`` is the sweep's summary (summary.json).

    >>> import tempfile
    >>> found = sweep("plan", tempfile.mkdtemp(), cases=300, seed="1", variant="wiki-b", master="local[1]")
    >>> found.ok, found.counts["cases"], found.counterexample.replay.startswith("flipcheck replay plan:1:")
    (False, 300, True)
    """
    from flipcheck.designs import DesignUnavailable
    from flipcheck.sweep.runner import SweepRefused, plan_sweep, run_sweep, suite_names
    from flipcheck.sweep.spark import check_master

    variant = _variant_name(variant, "variant")
    try:
        spec = plan_sweep(suite_names(suite), variant, cases=cases, seed=seed, exhaustive=exhaustive)
        check_master(master)
    except DesignUnavailable as error:
        raise UsageError(f"suite: {error}") from None
    except ValueError as error:
        raise UsageError(str(error)) from None
    try:
        summary = run_sweep(spec, os.fspath(out), master=master)
    except SweepRefused as error:
        raise InputError(os.fspath(out), str(error)) from None
    found = summary["counterexamples"]
    first = _counterexample(found[0]) if found else None

    def draw(path: str) -> str:
        return _copy_picture(out, found, path, "sweep")

    counts = {"cases": summary["cases"], "violations": summary["violations"], "errors": summary.get("errors", 0),
              "report": str(Path(out) / "report.html")}
    violations = tuple((c["property"], c["case_id"]) for c in found)
    return Result(f"sweep {suite}", not summary["violations"] and not summary.get("errors"), counts, first,
                  violations, detail=summary, _draw=draw)

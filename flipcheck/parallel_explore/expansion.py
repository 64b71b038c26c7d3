"""What every parallel explorer shares: the job as plain JSON, the expansion of a batch of states
(done where the states are: a Spark executor or a worker process) and the numbering of a level
(done by the driver, in the single-process explorer's order).

The expansion calls the single-process explorer's own functions
(:func:`flipcheck.properties.protocol_explore.search_functions`) and the numbering drives its
own bookkeeping (:class:`~flipcheck.properties.explore.GraphBuilder`), so every parallel
explorer builds the graph ``explore_job(..., store="fingerprints")`` builds, number for number.

Example
-------
>>> from flipcheck.generators.protocol import example_graph
>>> spec = job_spec(example_graph("pair"), "flip-147", {"records": 1})
>>> sorted(spec), spec["variant"]
(['graph', 'options', 'variant'], 'flip-147')
>>> job_from_spec(spec).tasks[0].records
(0,)
>>> text = spec_text(spec)
>>> key, state, mark, problems = initial(text)
>>> records = list(expand(text, [(key, (0, state))]))
>>> [r[0] for r in records][-1], records[-1][1]       # the successors, then the state's steps
('step', 0)
"""

from __future__ import annotations

import json
from collections import Counter

from flipcheck.model.graph_json import dumps_graph, loads_graph
from flipcheck.model.protocol import initial_state
from flipcheck.properties.explore import GraphBuilder, cycle_collector_paused
from flipcheck.properties.fingerprints import fingerprint, stable_fingerprint
from flipcheck.properties.protocol_coverage import Coverage, covering
from flipcheck.properties.protocol_explore import search_functions
from flipcheck.reference_impl.protocol_variants import make_job

__all__ = ["job_spec", "job_from_spec", "spec_text", "initial", "expand", "number_level", "take_coverage",
           "cycle_collector_paused"]

_JOBS: dict = {}   # per process: spec text -> (job, search functions)


def job_spec(graph, variant: str, options: dict) -> dict:
    """What an executor or a worker needs to rebuild the job: plain JSON."""
    return {"graph": dumps_graph(graph), "variant": variant, "options": dict(options)}


def job_from_spec(spec: dict):
    return make_job(loads_graph(spec["graph"]), spec["variant"], **spec["options"])


def spec_text(spec: dict, reduction: str = "none", coverage: bool = False, stable: bool = False) -> str:
    """The key a process builds (and caches) its job and search functions under; with
    ``coverage`` its expansions also count rules and overrides (:func:`take_coverage`); with
    ``stable`` they fingerprint states with
    :func:`~flipcheck.properties.fingerprints.stable_fingerprint`, which processes not forked from
    one another compute alike (Spark executors, a resumed search)."""
    return json.dumps(dict(spec, reduction=reduction, **({"coverage": True} if coverage else {}),
                           **({"stable_fingerprints": True} if stable else {})), sort_keys=True)


def _functions(text: str):
    if text not in _JOBS:
        spec = json.loads(text)
        job = job_from_spec(spec)
        functions = search_functions(job, spec.get("reduction", "none"))
        if spec.get("coverage"):
            functions["coverage"] = Coverage()
            functions["successors"] = covering(job, functions["coverage"])
        functions["fingerprint"] = stable_fingerprint if spec.get("stable_fingerprints") else fingerprint
        _JOBS[text] = (job, functions)
    return _JOBS[text]


def take_coverage(text: str) -> Coverage | None:
    """What this process's expansions of ``text`` covered since the last call (None unless asked
    for); its counts start again from zero, so a forked worker does not count its driver's."""
    counting = _functions(text)[1].get("coverage")
    if counting is None:
        return None
    taken = Coverage(Counter(counting.rules), dict(counting.overrides), counting.states)
    for name in counting.rules:
        counting.rules[name] = 0
    for name in counting.overrides:
        counting.overrides[name] = 0
    counting.states = 0
    return taken


def initial(text: str) -> tuple:
    """(fingerprint, state, mark, problems) of the initial representative."""
    job, f = _functions(text)
    state = f["canonical"](initial_state(job))
    return f["fingerprint"](state), state, f["mark"](state), list(f["check_state"](state))


def expand(text: str, items):
    """Expand a batch of a level's ``(fingerprint, (number, state))``. Per state, for the driver:
    ``("step", number, final, steps, ample)`` with per step (label, successor's fingerprint, step
    violations, successor's mark, successor's own violations), and the positions of the steps the
    reduction would follow (None: all). Per successor fingerprint, once in the batch:
    ``("state", fingerprint, successor)``, kept where it was made for the next level."""
    with cycle_collector_paused():
        yield from _expand(text, items)


def _expand(text: str, items):
    job, f = _functions(text)
    ample = f.get("ample")
    fingerprint_of = f["fingerprint"]
    judged: dict = {}   # fingerprint -> (mark, own violations) of each successor made in this batch
    labels: dict = {}   # one object per distinct label: pickled once a batch, then by reference
    for _, (number, state) in items:
        steps: list = []
        successors: list | None = [] if ample is not None else None   # only the reduction reads them
        for label, nxt, found in f["successors"](state):
            nxt = f["canonical"](nxt)
            if successors is not None:
                successors.append((label, nxt, found))
            key = fingerprint_of(nxt)
            known = judged.get(key)
            if known is None:   # a state reached again in the batch is judged once
                known = judged[key] = (f["mark"](nxt), tuple(f["check_state"](nxt)))
                yield "state", key, nxt
            steps.append((labels.setdefault(label, label), key, tuple(found), known[0], known[1]))
        chosen = ample(state, successors) if successors is not None and len(successors) > 1 else None
        yield "step", number, (not steps and f["is_final"](state)), steps, chosen


def _reduced(builder: GraphBuilder, depth: int, steps: list, ample) -> list:
    """The steps to follow: the reduction's, if each leads to an unseen state or one first
    reached at ``depth`` (the cycle proviso of :func:`~flipcheck.properties.explore.explore_graph`,
    decided the same way, so the graphs are equal), else all."""
    if ample is None or len(ample) == len(steps):
        return steps
    for k in ample:
        j = builder.seen(None, key=steps[k][1], may_add=False)
        if j >= 0 and builder.graph.depth[j] != depth:
            return steps
    builder.graph.reduced += 1
    return [steps[k] for k in ample]


def number_level(builder: GraphBuilder, depth: int, results, max_states: int | None) -> tuple[dict, bool]:
    """Enter one level's expansions into ``builder``: ``results`` are the ``"step"`` records of
    :func:`expand` without their tag, in the order of the expanded states' numbers. New states are
    numbered as the single-process explorer numbers them (by the expanded state's number, then by
    step). Returns the new states' ``{fingerprint: number}`` and whether ``max_states`` cut the
    level short: then, as in the single-process search, the state that met the bound is the last
    one expanded, and the rest of ``results`` is left unread (the caller drains it, and stops)."""
    fresh: dict = {}
    truncated = False
    for number, final, steps, ample in results:
        steps = _reduced(builder, depth, steps, ample)
        for label, child, found, child_mark, child_problems in steps:
            room = max_states is None or len(builder) < max_states
            j = builder.seen(None, key=child, may_add=room)
            if j < 0:
                if room:
                    j = builder.add(None, number, label, depth, child_mark, child_problems)
                    fresh[child] = j
                else:
                    truncated = True
            builder.edge(j)
            if found:
                builder.step_problems(number, label, found)
        builder.expanded(number, len(steps), final)
        if truncated:
            break   # explore_graph's bound: the rest of the frontier would only be looked up
    return fresh, truncated

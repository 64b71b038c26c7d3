"""A campaign run as rounds of sweeps of the ``flink-campaign`` suite (:mod:`flipcheck.flink.campaign`
says what a campaign is; :mod:`flipcheck.designs.flink_campaign` runs and judges one case).

Each round is planned from the coverage of the rounds before it, written down as its token
(``DIR/rounds/NNN.token``) before it runs, and run as a sweep into ``DIR/rounds/NNN`` on one Spark
session; a killed campaign reads the tokens back, so its rounds are the same and each sweep
reruns only its missing runs.

Example (no Spark, no JVM: planning the first round)
-------
>>> planner = Planner(["chain"], ["aligned", "unaligned"], "1", {})
>>> state = {}
>>> [(c.graph, c.mode, c.faults) for c in planner.plan_round("guided", 2, state)]   # the corpus' seeds
[('chain', 'aligned', ()), ('chain', 'unaligned', ())]
>>> state["runs"], planner.plan_round("random", 2, {}) == planner.plan_round("random", 2, {})
(2, True)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence

from flipcheck.errors import UsageError
from flipcheck.flink.campaign import ARMS, CampaignCase, decode_round, encode_round, write_campaign

__all__ = ["Planner", "PairTargets", "campaign_settings", "run_campaign"]

ROUNDS_FOLDER = "rounds"
SETTINGS_FILE = "settings.json"
_PATH_CANDIDATES = 64   # uncovered targets tried, nearest first, for faults no run of the arm had


class PairTargets:
    """The targets of one graph in one mode, and the exploration's shortest path to each."""

    def __init__(self, graph, mode: str, max_states: int):
        from flipcheck.flink.campaign import target_job
        from flipcheck.properties.protocol_abstraction import explored_transitions, transition_key
        from flipcheck.properties.protocol_explore import explore_job

        self.graph, self.mode = graph, mode
        self.job = target_job(graph, mode)
        began = time.perf_counter()
        exploration = explore_job(self.job, liveness=False, max_states=max_states)
        self.complete = exploration.complete
        self._graph = exploration.graph
        self.first_step: dict = {}   # key -> (state number, label): in breadth-first order
        for i, label, transition in explored_transitions(self.job, self._graph):
            self.first_step.setdefault(transition_key(transition), (i, label))
        self.keys = frozenset(self.first_step)
        self.seconds = time.perf_counter() - began

    def faults_towards(self, key: str) -> tuple:
        """The faults of the model's shortest path to target ``key``
        (:func:`~flipcheck.flink.guidance.faults_for_path`)."""
        from flipcheck.flink.guidance import faults_for_path
        from flipcheck.properties.protocol_abstraction import abstract_state
        from flipcheck.properties.protocol_explore import replay
        from flipcheck.model.protocol import initial_state

        i, label = self.first_step[key]
        labels = self._graph.path_to(i)[0] + [label]
        steps = replay(self.job, labels)
        states = [abstract_state(self.job, initial_state(self.job))] + [abstract_state(self.job, s.state) for s in steps]
        tasks = [(t.vertex, t.subtask) for t in self.job.tasks]
        # every kind of flipcheck.flink.faults whose template this graph can run (docs/coverage.md)
        return faults_for_path(self.graph, tasks, states, [s.label for s in steps])


# How often a mutation is drawn again when it gives faults the arm already ran.
_MUTATION_TRIES = 8


class Planner:
    """Plans each arm's runs from what its runs so far covered (deterministic in the campaign's
    seed and the covered sets, so a rerun plans the same)."""

    def __init__(self, graphs: Sequence[str], modes: Sequence[str], seed: str, pairs: dict, loaded: dict | None = None):
        self.graphs, self.modes, self.seed, self.pairs = list(graphs), list(modes), seed, pairs
        self.loaded = loaded or {}

    def _graph(self, name: str):
        if name not in self.loaded:
            from flipcheck.designs.flink_campaign import campaign_graph

            self.loaded[name] = campaign_graph(name)
        return self.loaded[name]

    def plan_round(self, arm: str, count: int, state: dict) -> list[CampaignCase]:
        """``count`` cases of ``arm``; ``state`` is the arm's history: ``runs`` (so far),
        ``covered`` (pair -> keys), ``corpus`` (faults of runs that covered something new, per
        pair), ``tried`` (faults run, per pair)."""
        from flipcheck.flink.guidance import mutate, random_faults
        from flipcheck.generators.choices import SeededChooser, choice

        cases = []
        done = state.get("runs", 0)
        every = [(g, m) for g in self.graphs for m in self.modes]
        for n in range(done, done + count):
            graph_name, mode = every[n % len(every)]
            graph = self._graph(graph_name)
            pair = f"{graph_name}/{mode}"
            chooser = SeededChooser.for_case(f"{self.seed}-{arm}", n)
            tried = state.setdefault("tried", {}).setdefault(pair, [])
            if arm == "random":
                faults = random_faults(graph, chooser)
            elif not tried:
                faults = ()          # the seed of the corpus: a fault-free run
            else:
                faults = self._towards_uncovered(pair, state, tried) if n % 2 == 0 else None
                if faults is None:
                    corpus = state.get("corpus", {}).get(pair) or [()]
                    for _ in range(_MUTATION_TRIES):   # a mutant the arm ran already teaches little
                        faults = mutate(graph, tuple(choice(chooser, corpus)), chooser)
                        if list(faults) not in tried:
                            break
            tried.append(list(faults))
            cases.append(CampaignCase(arm, graph_name, mode, tuple(faults)))
        state["runs"] = done + count
        return cases

    def _towards_uncovered(self, pair: str, state: dict, tried: list) -> tuple | None:
        """Faults of the shortest model path to an uncovered target that no run of the arm had
        (nearest targets first); None when the nearest candidates all need faults tried."""
        targets = self.pairs[pair]
        covered = state.get("covered", {}).get(pair, set())
        missing = sorted((k for k in targets.keys if k not in covered), key=lambda k: targets.first_step[k][0])
        for key in missing[:_PATH_CANDIDATES]:
            faults = targets.faults_towards(key)
            if faults and list(faults) not in tried:
                return faults
        return None


def campaign_settings(graphs, modes, runs, arms, seed, target_states) -> dict:
    """What ``DIR/settings.json`` holds: a rerun with other settings is refused, not resumed."""
    from flipcheck.properties.protocol_abstraction import DEFAULT_ABSTRACTION

    # the abstraction the covered keys are in: a campaign measured in another one does not resume
    return {"graphs": list(graphs), "modes": list(modes), "runs": runs, "arms": list(arms), "seed": seed,
            "target_states": target_states, "abstraction": DEFAULT_ABSTRACTION}


def run_campaign(graph_files: Sequence[str], runs: int, out: Path, *, arms: Sequence[str] = ("guided",),
                 modes: Sequence[str] = ("aligned", "unaligned", "at-least-once"), seed: str = "1",
                 master: str | None = None, round_size: int = 2, target_states: int | None = None,
                 own_build=None, progress=None, spark=None) -> dict:
    """Run (or resume) a campaign into ``out`` and write ``campaign.json`` and ``campaign.html``;
    returns the document. ``arms`` share ``runs`` evenly (the first arm takes the remainder).
    ``spark`` is a session to use (kept running); otherwise one is started for ``master``."""
    from flipcheck.designs.flink_jobs import RELEASE_ENV
    from flipcheck.flink.campaign import TARGET_STATES, check_graph_for_campaign
    from flipcheck.errors import InputError
    from flipcheck.model.graph_json import GraphFormatError, graph_to_json, load_graph
    from flipcheck.sweep.runner import SweepSpec, Target, run_sweep
    from flipcheck.sweep.spark import DEFAULT_MASTER, start_spark, stop_spark
    from flipcheck.sweep.summary import read_cases

    target_states = target_states or TARGET_STATES
    out.mkdir(parents=True, exist_ok=True)
    graphs, loaded = [], {}
    for path in graph_files:
        name = Path(path).stem
        try:
            graph = load_graph(path)
        except GraphFormatError as error:
            raise InputError(path, str(error)) from None
        check_graph_for_campaign(name, graph)
        if name in loaded:
            raise UsageError(f"GRAPH: two graphs are named {name!r} (a campaign names a graph by its file name)")
        graphs.append(name)
        loaded[name] = graph
    settings = campaign_settings(graphs, modes, runs, arms, seed, target_states)
    saved = out / SETTINGS_FILE
    if saved.is_file():
        before = json.loads(saved.read_text())
        if before != settings:
            changed = next(k for k in settings if before.get(k) != settings[k])
            raise UsageError(f"--out: {out} holds a campaign with other {changed!r} ({before.get(changed)!r}); "
                             "resume it with the same options or use another --out")
    elif any(out.iterdir()):
        raise UsageError(f"--out: {out} is not empty and holds no campaign; use an empty or new directory")
    (out / "graphs").mkdir(exist_ok=True)
    for name, graph in loaded.items():
        (out / "graphs" / f"{name}.json").write_text(json.dumps(graph_to_json(graph, include_states=False), indent=1) + "\n")
    saved.write_text(json.dumps(settings, indent=1) + "\n")

    pairs = {f"{g}/{m}": PairTargets(loaded[g], m, target_states) for g in graphs for m in modes}
    planner = Planner(graphs, modes, seed, pairs, loaded)
    budget = {arm: runs // len(arms) + (runs % len(arms) if i == 0 else 0) for i, arm in enumerate(arms)}
    states = {arm: {} for arm in arms}
    records: list[dict] = []
    curves = {arm: [] for arm in arms}
    reached_all: dict = {arm: set() for arm in arms}
    owned, wall = spark is None, 0.0
    conf = {}
    if own_build is not None:
        import os

        conf[f"spark.executorEnv.{RELEASE_ENV}"] = json.dumps(own_build.describe())
        os.environ[RELEASE_ENV] = conf[f"spark.executorEnv.{RELEASE_ENV}"]
    try:
        number = 0
        while any(states[arm].get("runs", 0) < budget[arm] for arm in arms):
            folder = out / ROUNDS_FOLDER / f"{number:04d}"
            token_file = folder.with_suffix(".token")
            if token_file.is_file():   # resumed: the round as it was planned
                token = token_file.read_text().strip()
                for arm in arms:  # keep the planners' counters where the planned round leaves them
                    planned = [c for c in decode_round(token) if c.arm == arm]
                    state = states[arm]
                    state["runs"] = state.get("runs", 0) + len(planned)
                    for c in planned:
                        state.setdefault("tried", {}).setdefault(f"{c.graph}/{c.mode}", []).append(list(c.faults))
            else:
                cases = []
                for arm in arms:
                    count = min(round_size, budget[arm] - states[arm].get("runs", 0))
                    if count > 0:
                        cases += planner.plan_round(arm, count, states[arm])
                token = encode_round(cases)
                token_file.parent.mkdir(parents=True, exist_ok=True)
                token_file.write_text(token + "\n")
            cases = decode_round(token)
            began = time.perf_counter()
            if spark is None:
                spark = start_spark(master or DEFAULT_MASTER, app_name="flipcheck campaign", conf=conf)
            spec = SweepSpec("exhaustive", (Target("flink-campaign", "flink", token, len(cases), 1),), None)
            run_sweep(spec, str(folder), spark=spark)
            seconds_file = folder.with_suffix(".seconds")
            if not seconds_file.is_file():
                seconds_file.write_text(f"{time.perf_counter() - began:.3f}\n")
            wall += float(seconds_file.read_text())
            rows = read_cases(str(folder), ["index", "detail", "outcome", "message"]).to_pylist()
            for row in sorted(rows, key=lambda r: r["index"]):
                case = cases[row["index"]]
                detail = json.loads(row["detail"]) if row["detail"] else {}
                records.append(_record(case, row, detail, spec, out))
                _learn(states[case.arm], case, detail, pairs, reached_all[case.arm])
                curves[case.arm].append(sum(len(v) for v in states[case.arm].get("covered", {}).values()))
            if progress is not None:
                progress(len(records), sum(budget.values()))
            number += 1
    finally:
        if owned and spark is not None:
            stop_spark(spark)
    document = _document(records, pairs, arms, states, curves, reached_all, wall)
    write_campaign(out, document)
    return document


def _record(case: CampaignCase, row: dict, detail: dict, spec, out: Path) -> dict:
    from flipcheck.designs.suite import ERROR

    run_dir = detail.get("run_dir")
    relative = str(Path(run_dir).resolve().relative_to(out.resolve())) if run_dir else None
    validated = row["outcome"] != ERROR and detail.get("conforms") is not None
    first = detail.get("first_unexplained") or {}
    why = row["message"] or ""
    if first:
        why = f"{first.get('file')}:{first.get('line')} {first.get('event')}: {first.get('why')}"
    picture = detail.get("picture")
    return {"case": f"flink-campaign:{spec.targets[0].token}:{row['index']}", "arm": case.arm, "graph": case.graph,
            "mode": case.mode, "faults": list(case.faults), "validated": validated,
            "conforms": validated and bool(detail.get("conforms")) and row["outcome"] != "violation",
            "why": why if not (validated and detail.get("conforms")) else "", "run": relative,
            "picture": str(Path(picture).resolve().relative_to(out.resolve())) if picture else None,
            "seconds": detail.get("seconds"), "transitions": detail.get("transitions")}


def _learn(state: dict, case: CampaignCase, detail: dict, pairs: dict, reached: set) -> None:
    """Add a run's covered targets to its arm's; a run that covered a new one joins the corpus."""
    pair = f"{case.graph}/{case.mode}"
    keys = set(detail.get("transitions") or ())
    reached |= {(pair, k) for k in keys}
    covered = state.setdefault("covered", {}).setdefault(pair, set())
    new = (keys & pairs[pair].keys) - covered
    covered |= new
    if new:
        state.setdefault("corpus", {}).setdefault(pair, []).append(list(case.faults))


def _document(records, pairs, arms, states, curves, reached_all, wall) -> dict:
    from flipcheck.flink.campaign import campaign_document
    from flipcheck.properties.protocol_abstraction import DEFAULT_ABSTRACTION, describe, transition_from_key

    targets = sum(len(p.keys) for p in pairs.values())
    covered = {arm: sum(len(v) for v in states[arm].get("covered", {}).values()) for arm in arms}
    lead = "guided" if "guided" in arms else arms[0]
    outside = sum(1 for pair, k in reached_all[lead] if k not in pairs[pair].keys)
    missing_first = []
    for name, p in pairs.items():
        have = states[lead].get("covered", {}).get(name, set())
        nearest = sorted((k for k in p.keys if k not in have), key=lambda k: p.first_step[k][0])[:5]
        for key in nearest:
            t = transition_from_key(key)
            missing_first.append(f"{name}: {describe(p.job, t.source)} --{t.kind}-->")
    extra = {
        "arms": list(arms),
        "abstraction": DEFAULT_ABSTRACTION,
        "outside": outside,
        "curves": curves,
        "pairs": [{"graph": name.split("/")[0], "mode": name.split("/")[1], "targets": len(p.keys),
                   "complete": p.complete, "targets_seconds": round(p.seconds, 2),
                   "covered": {arm: len(states[arm].get("covered", {}).get(name, ())) for arm in arms}}
                  for name, p in pairs.items()],
        "missing_first": missing_first,
        "unexplained_detail": [{k: r[k] for k in ("case", "why", "run", "picture", "faults")}
                               for r in records if not r["conforms"]],
        # validated runs whose transitions could not be compared with the targets (the plan numbered
        # the tasks otherwise, flipcheck.flink.campaign.same_tasks): they count as covering nothing
        "coverage_unmapped": sum(1 for r in records if r["validated"] and r["transitions"] is None),
        "wall_seconds": round(wall, 2),
        "run_list": [{k: r[k] for k in ("case", "arm", "graph", "mode", "faults", "validated", "conforms", "seconds")}
                     for r in records],
    }
    return campaign_document(records, targets, arms, covered, wall, extra)

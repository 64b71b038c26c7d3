"""``flipcheck demo``: the tour `make demo` runs."""

from __future__ import annotations

import json
import os
import sys

HELP = "the tour `make demo` runs: proofs, the seed's buggy algorithm caught and drawn"
DESCRIPTION = """\
A short tour of flipcheck on the FLIP-147 checkpoint plan:

  1. prove with z3 that Flink's plan calculator equals the specification for every assignment
     of task states on the example graphs;
  2. prove the same for the seed's second Appendix algorithm (wiki-b) as written, find its
     counterexample, and draw it next to the specification's plan;
  3. hunt the mutant catalogue (real Flink bugs) and print the kill rate.

Pictures and counterexamples go to --out (default: out/demo); their paths are printed.
"""


def configure(parser) -> None:
    parser.add_argument("--out", default=os.path.join("out", "demo"), metavar="DIR", help="where pictures go (default: %(default)s)")
    parser.add_argument("--budget", type=float, default=5.0, metavar="SECONDS", help="budget per mutant (default: %(default)s)")


def run(args) -> int:
    from pathlib import Path

    from flipcheck.model.graph_json import graph_to_json, load_graph
    from flipcheck.mutants import catalogue, hunt
    from flipcheck.properties.z3_plan import prove_plan
    from flipcheck.render import render_counterexample
    from flipcheck.verify_plan import EXAMPLE_GRAPHS

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    say = lambda text="": print(text, flush=True)  # noqa: E731

    say("1. z3: Flink's plan calculator equals the specification for every task-state assignment")
    examples = [p for p in sorted(EXAMPLE_GRAPHS.glob("*.json")) if load_graph(str(p)).num_tasks <= 500]
    all_proved = True
    for path in examples:
        graph = load_graph(str(path))
        result = prove_plan(graph, "flink")
        all_proved &= result.proved
        verdict = "proved" if result.proved else "COUNTEREXAMPLE"
        say(f"   {verdict:<14} {path.name:<22} {graph.num_tasks:>4} tasks, 2^{graph.num_tasks} assignments, {result.seconds:.2f} s")

    say("\n2. z3: the seed's second Appendix algorithm (wiki-b), as written")
    figure1 = load_graph(str(EXAMPLE_GRAPHS / "figure1.json"))
    result = prove_plan(figure1, "wiki-b")
    if result.proved:
        say("   proved: no counterexample")
    else:
        picture = render_counterexample(result.counterexample, "wiki-b", str(out / "wiki-b-counterexample.svg"))
        (out / "wiki-b-counterexample.json").write_text(json.dumps(graph_to_json(result.counterexample)) + "\n")
        say(f"   counterexample: {result.summary()}")
        say(f"   picture:        {picture}")
        say(f"   graph:          {out / 'wiki-b-counterexample.json'} (flipcheck plan --algorithm wiki-b ...)")

    say("\n3. mutants: real Flink bugs and rejected designs, hunted by the suite")
    mutants = list(catalogue().values())
    caught = 0
    for mutant in mutants:
        detection = hunt(mutant, args.budget)
        caught += detection.caught
        say(f"   {'caught' if detection.caught else 'SURVIVED':<9} {mutant.id:<38} {mutant.flink_issue or '':<12} "
            f"by {detection.property or '-'} ({detection.driver or '-'})")
    say(f"   kill rate {caught}/{len(mutants)}")
    say(f"\npictures and counterexamples: {out.resolve()}")
    return 0 if all_proved and caught == len(mutants) else 1

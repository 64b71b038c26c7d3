"""``flipcheck prove``: z3 proof that a plan algorithm equals the specification for all task states."""

from __future__ import annotations

import json
import sys

HELP = "z3: prove a plan algorithm equals the spec for every assignment of task states"
DESCRIPTION = """\
Prove with z3 that a checkpoint-plan algorithm computes exactly what the specification
(model/plan.py) computes -- the same decline reason, or the same tasks to trigger, wait for and
commit to, finished tasks and fully finished vertices -- for EVERY assignment of task states on
the topology of GRAPH.json, without enumerating them: each task's state is a z3 variable and
the algorithm's own steps (loops over vertices and edges, fast checks, per-task scans) are
encoded as formulas over those variables.

The states in GRAPH.json are ignored (all of them are covered); its
"checkpoints_after_tasks_finished" flag is used as given. By default each task is RUNNING or
FINISHED (2^tasks assignments); --states all lets each task take any of Flink's ten
ExecutionStates (10^tasks assignments), which is where CANCELED/FAILED bugs show.

A counterexample found by z3 is re-checked by running the concrete algorithm and the spec on
it, and shrunk (tasks set back to RUNNING while the difference stays) before it is printed.
"""
EPILOG = """\
output:
  proved:          one line on stdout, e.g.
                   proved: flink == spec on g.json: 80 tasks, all 2^80 RUNNING/FINISHED assignments, 0.05 s
  counterexample:  the job graph with the offending task states on stdout (the GRAPH.json format,
                   with a "comment" saying what differs), accepted by `flipcheck plan` and
                   `flipcheck render`; one summary line on stderr naming the field and tasks.

examples:
  flipcheck prove examples/graphs/pipeline-80.json
  flipcheck prove --algorithm wiki-b examples/graphs/pipeline-80.json > cex.json     exit 1
  flipcheck plan --algorithm wiki-b cex.json; flipcheck plan --algorithm spec cex.json
  flipcheck prove --algorithm flink-before-40482 --states all --render cex.svg examples/graphs/figure1.json
                                                                                   exit 1

limits: a graph of at most 2,000 vertices, 10,000 tasks and 1,000,000 task-level connections (an
  ALL_TO_ALL edge counts upstream x downstream subtasks); a larger one is refused up front (exit 2).

exit codes: 0 proved, 1 counterexample printed, 2 bad input or option,
            3 internal error (a z3 encoding disagrees with its implementation: a flipcheck bug).
"""


def configure(parser) -> None:
    from flipcheck.reference_impl.plan import PLAN_ALGORITHMS

    parser.add_argument("graph", metavar="GRAPH.json", help="job-graph file (its topology and flag are used)")
    parser.add_argument(
        "--algorithm", default="flink", choices=sorted(PLAN_ALGORITHMS), metavar="NAME",
        help="algorithm to prove: %(choices)s (default: %(default)s)",
    )
    parser.add_argument(
        "--states", default="binary", choices=("binary", "all"),
        help="task-state domain: binary = RUNNING/FINISHED (default), all = the ten ExecutionStates",
    )
    parser.add_argument(
        "--render", metavar="FILE.svg",
        help="also draw the counterexample (the algorithm's plan against the spec's); nothing is drawn when proved",
    )
    parser.add_argument(
        "--no-shrink", dest="shrink", action="store_false",
        help="print z3's counterexample as found instead of shrinking it",
    )


def _renderer(out_path: str):
    """The function drawing a counterexample into ``out_path``; a UsageError when it cannot."""
    from flipcheck.errors import UsageError

    try:
        from flipcheck.render import core as render
    except ImportError:
        raise UsageError("rendering unavailable") from None
    if not out_path.lower().endswith((".svg", ".png")):
        raise UsageError(f"--render {out_path}: use a .svg or .png file name")
    # Prefer the picture that marks where the plan differs from the spec's.
    draw = getattr(render, "render_counterexample", None) or getattr(render, "render_plan_graph", None)
    if draw is None:
        raise UsageError("rendering unavailable")
    return draw


def run(args) -> int:
    from flipcheck.errors import InputError, UsageError
    from flipcheck.model.graph_json import GraphFormatError, graph_to_json, load_graph
    from flipcheck.properties.z3_plan import PLAN_ENCODERS, EncodingMismatch, proof_size_problem, prove_plan

    if args.algorithm not in PLAN_ENCODERS:
        raise UsageError(f"no z3 encoding for {args.algorithm!r} yet (encoded: {', '.join(sorted(PLAN_ENCODERS))})")
    try:
        graph = load_graph(args.graph)
    except GraphFormatError as error:
        raise InputError(args.graph, str(error)) from None
    too_large = proof_size_problem(graph)
    if args.render and not too_large:
        from flipcheck.cli.render import render_size_problem

        too_large = render_size_problem(graph)
    if too_large:
        raise InputError(args.graph, too_large)
    # Fail before proving, not after, when the picture cannot be drawn.
    draw = _renderer(args.render) if args.render else None

    try:
        result = prove_plan(graph, args.algorithm, args.states, shrink=args.shrink)
    except EncodingMismatch as error:
        sys.stderr.write(f"flipcheck prove: internal error: {error}\n")
        return 3

    domain = "RUNNING/FINISHED" if args.states == "binary" else "ExecutionState"
    if result.proved:
        sys.stdout.write(
            f"proved: {args.algorithm} == spec on {args.graph}: {result.num_tasks} tasks, "
            f"all {result.values_per_task}^{result.num_tasks} {domain} assignments, {result.seconds:.2f} s\n"
        )
        return 0

    summary = result.summary()
    if draw is not None:
        draw(result.counterexample, args.algorithm, args.render)
    document = {"comment": f"flipcheck prove --algorithm {args.algorithm} --states {args.states}: {summary}"}
    document.update(graph_to_json(result.counterexample))
    sys.stdout.write(json.dumps(document) + "\n")
    drawn = f"; drawn to {args.render}" if args.render else ""
    sys.stderr.write(
        f"flipcheck prove: {args.algorithm} != spec on {args.graph} ({result.num_tasks} tasks, {domain}, "
        f"{result.seconds:.2f} s): {summary} [counterexample graph on stdout{drawn}]\n"
    )
    return 1

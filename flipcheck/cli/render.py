"""``flipcheck render``: draw the execution graph of a job graph and its checkpoint plan."""

from __future__ import annotations

import sys

HELP = "draw the execution graph and its checkpoint plan as SVG or PNG (needs graphviz's dot)"
DESCRIPTION = """\
Draw GRAPH.json's execution graph with the checkpoint plan an algorithm computes for it:
one box per job vertex (its id, parallelism, "fully finished" when every subtask is FINISHED),
one node per subtask inside it. Triggered tasks are blue, running tasks that are waited for
white, FINISHED tasks grey, unfinished tasks in another state yellow with the state named.
ALL_TO_ALL job edges are one bold edge between vertices; POINTWISE edges go subtask to subtask,
dashed. A declined plan shows its reason in the title. Vertices with more than 12 subtasks are
collapsed into runs of subtasks that look alike (labelled 0-49 (50)). See docs/render.md.

With --compare the picture shows where the algorithm's plan differs from the spec's: triggered
by both (blue), by the algorithm only (red), by the spec only (red dashed border).
"""
EPILOG = """\
examples:
  flipcheck render examples/graphs/figure1.json --out figure1.svg
  flipcheck render examples/graphs/figure1.json --out figure1.png --algorithm wiki-b --compare

output: the picture in FILE (format from its extension: .svg or .png); on stdout one line
  FILE: ALGORITHM plan: <summary>

limits: at most 1,000 job vertices and 5,000 job edges (larger graphs are refused, exit 2).

exit codes: 0 picture written, 2 a malformed graph, a bad option or no graphviz dot program.
"""


# dot lays out one box per job vertex: a chain of 3,000 vertices took 5 s and 570 MB, of 5,000
# vertices 10 s and 1.4 GB, and such a picture is unreadable anyway.
MAX_RENDER_VERTICES = 1_000
MAX_RENDER_EDGES = 5_000


def render_size_problem(graph) -> str | None:
    """Why ``graph`` is too large to draw (None when it is not)."""
    if len(graph.vertices) > MAX_RENDER_VERTICES:
        return f"too large to draw: {len(graph.vertices):,} vertices (limit {MAX_RENDER_VERTICES:,})"
    if len(graph.edges) > MAX_RENDER_EDGES:
        return f"too large to draw: {len(graph.edges):,} edges (limit {MAX_RENDER_EDGES:,})"
    return None


def configure(parser) -> None:
    from flipcheck.reference_impl.plan import PLAN_ALGORITHMS

    parser.add_argument("graph", metavar="GRAPH.json", help="job-graph file")
    parser.add_argument("--out", required=True, metavar="FILE", help="picture to write: FILE.svg or FILE.png")
    parser.add_argument(
        "--algorithm", default="flink", choices=sorted(PLAN_ALGORITHMS), metavar="NAME",
        help="plan algorithm: %(choices)s (default: %(default)s)",
    )
    parser.add_argument("--compare", action="store_true", help="highlight where the algorithm's plan differs from the spec's")
    parser.add_argument("--title", help="picture title (default: names the algorithm)")


def run(args) -> int:
    from flipcheck.errors import InputError, UsageError
    from flipcheck.model.graph_json import GraphFormatError, id_problem, load_graph
    from flipcheck.model.plan import Declined
    from flipcheck.reference_impl.plan import plan_algorithm
    from flipcheck.render.core import output_format, render_counterexample, render_plan_graph

    output_format(args.out)  # a bad --out fails before the graph is read
    if args.title is not None and id_problem(args.title):
        raise UsageError(f"--title {args.title!r}: {id_problem(args.title)}")
    try:
        graph = load_graph(args.graph)
    except GraphFormatError as error:
        raise InputError(args.graph, str(error)) from None
    too_large = render_size_problem(graph)
    if too_large:
        raise InputError(args.graph, too_large)
    result = plan_algorithm(args.algorithm)(graph)
    draw = render_counterexample if args.compare else render_plan_graph
    draw(graph, args.algorithm, args.out, result=result, title=args.title)
    if isinstance(result, Declined):
        summary = f"declined ({result.reason})"
    else:
        summary = f"{len(result.tasks_to_trigger)} to trigger, {len(result.tasks_to_wait_for)} to wait for"
    sys.stdout.write(f"{args.out}: {args.algorithm} plan: {summary}\n")
    return 0

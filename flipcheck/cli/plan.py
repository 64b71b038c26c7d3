"""``flipcheck plan``: compute the checkpoint plan of job graphs."""

from __future__ import annotations

import sys

HELP = "compute the checkpoint plan (tasks to trigger, wait for, commit to) of job graphs"
DESCRIPTION = """\
Compute the checkpoint plan the coordinator derives from a job graph and its task states
(FLIP-147: trigger the running tasks that have no running predecessor; wait for and commit to
every non-finished task), or the reason the checkpoint is declined.

GRAPH.json is the job-graph format described in docs/graph-format.md:
  {"vertices": [{"id": "src", "parallelism": 4}, ...],
   "edges": [{"source": "src", "target": "map", "pattern": "ALL_TO_ALL" | "POINTWISE"}, ...],
   "states": {"src": ["FINISHED", "RUNNING", ...]},
   "checkpoints_after_tasks_finished": true}
"""
EPILOG = """\
algorithms:
  spec                the specification (model/plan.py): obvious and quadratic
  flink               Flink's DefaultCheckpointPlanCalculator as shipped (default)
  naive               per-task scan of all execution-graph predecessors (the seed's O(n^2) baseline)
  wiki-a              the seed's first Appendix pseudocode (fast check), as written
  wiki-b              the seed's second Appendix pseudocode (topological walk), as written
  flink-before-40482  counted CANCELED/FAILED tasks as finished (FLINK-40482)

output (--json): one object per input file, one per line, in order:
  {"status": "ok", "tasks_to_trigger": [["src", 2], ...], "tasks_to_wait_for": [...],
   "tasks_to_commit_to": [...], "finished_tasks": [...], "fully_finished_vertices": [...]}
  {"status": "declined", "reason": "NOT_ALL_REQUIRED_TASKS_RUNNING" | "NO_TASKS_TO_WAIT_FOR"}

exit codes: 0 plans printed, 2 a malformed graph or option (nothing printed for any file).
"""


def configure(parser) -> None:
    from flipcheck.cli.types import variant
    from flipcheck.reference_impl.plan import PLAN_ALGORITHMS

    parser.add_argument("graphs", nargs="+", metavar="GRAPH.json", help="job-graph files")
    parser.add_argument(
        "--algorithm", default="flink", type=variant, metavar="NAME",
        help=f"plan algorithm: {', '.join(sorted(PLAN_ALGORITHMS))}, or your own subclass of "
             "flipcheck.PlanCalculator as FILE.py:CLASS or MODULE:CLASS (default: %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per file instead of a table")


def run(args) -> int:
    from flipcheck.errors import InputError, UsageError
    from flipcheck.model.graph_json import GraphFormatError, load_graph
    from flipcheck.render.plan_text import plan_json_line, plan_table
    from flipcheck.reference_impl.plan import plan_algorithm

    try:
        algorithm = plan_algorithm(args.algorithm)
    except ValueError as error:   # an unknown name, or a spec that names no calculator
        raise UsageError(f"--algorithm: {error}") from None
    # Parse every file first so that a bad file prints nothing at all on stdout.
    graphs = []
    for path in args.graphs:
        try:
            graphs.append(load_graph(path))
        except GraphFormatError as error:
            raise InputError(path, str(error)) from None
    out = sys.stdout
    for path, graph in zip(args.graphs, graphs):
        result = algorithm(graph)
        if args.json:
            out.write(plan_json_line(graph, result) + "\n")
        else:
            title = f"{path} ({args.algorithm})" if len(args.graphs) > 1 or args.algorithm != "flink" else path
            out.write(plan_table(graph, result, title=title) + "\n")
    return 0

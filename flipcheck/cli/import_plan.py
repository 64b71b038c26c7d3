"""``flipcheck import-plan``: convert Flink's JSON plans into the job-graph format."""

from __future__ import annotations

import json
import sys

HELP = "convert a Flink JSON plan (REST /jobs/<id>/plan or getExecutionPlan()) into a job graph"
DESCRIPTION = """\
Convert one of Flink's JSON plans into flipcheck's job-graph format, printed on stdout:

  * the REST API's /jobs/<id>/plan (also /jobs/<id> or /jars/<id>/plan, which wrap it as
    {"plan": {...}}): one node per job vertex, operators already chained;
  * the execution-plan JSON of StreamExecutionEnvironment.getExecutionPlan(), `flink info` or
    EXPLAIN JSON_EXECUTION_PLAN: one node per operator ("predecessors" lists the inputs).

FORWARD and RESCALE edges become POINTWISE, every other ship strategy (HASH, REBALANCE,
BROADCAST, SHUFFLE, GLOBAL, CUSTOM, ...) ALL_TO_ALL. --chain merges the execution plan's
operators into job vertices the way Flink's default chaining does: an operator joins its input's
chain when it has exactly one input, that input is FORWARD and the parallelism is the same.
Slot-sharing groups, disableChaining()/startNewChain() and disabled chaining are not in the
JSON and not modelled. Every task is RUNNING in the result; add "states" to model finished
tasks. See docs/import-plan.md.
"""
EPILOG = """\
examples:
  curl -s localhost:8081/jobs/$JOB/plan > plan.json && flipcheck import-plan plan.json > job.json
                                                                   (needs a running Flink job)
  flipcheck import-plan --chain tests/fixtures/flink_plans/exec_plan_wordcount.json > job.json \\
      && flipcheck plan job.json

output: one job-graph JSON document (docs/graph-format.md); vertex ids are readable slugs of
  the operator name plus the Flink id, the original id is kept in "flink_id", the name in
  "name", and the chained operator ids in "chain".

exit codes: 0 converted, 2 an unreadable file, invalid JSON, an unknown plan format or a
  missing or malformed field (named on stderr).
"""


def configure(parser) -> None:
    parser.add_argument("plan", metavar="FILE.json", help="Flink JSON plan")
    parser.add_argument(
        "--chain", action="store_true",
        help="merge the execution plan's operators into job vertices like Flink's default chaining",
    )


def run(args) -> int:
    from flipcheck.errors import InputError
    from flipcheck.flink.import_plan import PlanFormatError, load_plan
    from flipcheck.model.graph_json import graph_to_json

    try:
        imported = load_plan(args.plan, chain=args.chain)
    except PlanFormatError as error:
        raise InputError(args.plan, str(error)) from None
    what = f"Flink {imported.format}" + (f" of job {imported.job_name!r}" if imported.job_name else "")
    document = {"comment": f"imported from {what} by flipcheck import-plan" + (" --chain" if args.chain else "")}
    document.update(graph_to_json(imported.graph))
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return 0

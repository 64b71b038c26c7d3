#!/usr/bin/env bash
# End-to-end speed of `flipcheck plan` on a 1M-task job graph (parse 11 MB of JSON, plan, print
# 31 MB of JSON). The graph: 31 vertices x parallelism 32768 (Flink's maximum parallelism), every
# task's state listed explicitly, the first two vertices partly finished.
#   bash benchmarks/plan_cli.sh            # best of 5 runs, in seconds
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
graph=$(mktemp --suffix=.json)
trap 'rm -f "$graph"' EXIT
"$BIN/python" - "$graph" <<'PY'
import json, sys
from flipcheck.bench_graphs import pipeline_graph
from flipcheck.model.graph_json import graph_to_json
graph = pipeline_graph(31, 32768)
document = graph_to_json(graph)
document["states"] = {v: list(s) for v, s in graph.states.items()}
with open(sys.argv[1], "w") as out:
    json.dump(document, out)
print(f"graph: {graph.num_tasks} tasks", file=sys.stderr)
PY
echo "file: $(du -h "$graph" | cut -f1)" >&2
best=999
for run in 1 2 3 4 5; do
  start=$(date +%s.%N)
  "$BIN/flipcheck" plan --json "$graph" > /dev/null
  end=$(date +%s.%N)
  best=$(python3 -c "print(min($best, $end - $start))")
done
echo "flipcheck plan --json, 1M tasks, end to end: best of 5 = ${best} s"
start=$(date +%s.%N); "$BIN/flipcheck" --help > /dev/null; end=$(date +%s.%N)
echo "flipcheck --help start-up: $(python3 -c "print(round($end - $start, 3))") s"

#!/usr/bin/env bash
# `make test`'s two pytest runs, side by side, then what must come after both.
#
#   scripts/run-tests.sh VENV_BIN
#
# The pure-Python tests keep both cores busy (-n 2, the slow ones first, worksteal). The tests
# that start Spark, a browser or real Flink run one at a time in a second pytest beside them:
# they mostly wait on JVMs, sockets and sleeps (measured: 535 s of CPU in 889 s, 0.6 of a core),
# and run one at a time because the order within one process matters to the SparkSession they
# share (tests/spark/conftest.py). They first wait for what the prefetch fetches (chromium, and
# Flink 1.20.0 for the one live older-release test). Their output goes to build/test-phase2.log
# and is printed once both runs are done, so the two never interleave in a CI log.
# Ctrl-C or a failure stops both. Exit code 5 of the second run ("none collected") is not a failure.
set -u
bin=$1
log=build/test-phase2.log
prefetch=build/test-prefetch.log
mkdir -p build
rm -f "$prefetch.done" "$log.rc"

( scripts/provide-tools.sh "$bin" chromium; "$bin/flipcheck" flink releases --install 1.20.0 >/dev/null
  touch "$prefetch.done" ) > "$prefetch" 2>&1 &
prefetch_pid=$!

( while [ ! -e "$prefetch.done" ]; do sleep 1; done
  "$bin/python" -m pytest -m "spark or browser or flink" --durations=15
  echo $? > "$log.rc" ) > "$log" 2>&1 &
second_pid=$!

stop_both() {
  kill -- "$prefetch_pid" "$second_pid" 2>/dev/null
  pkill -P "$second_pid" 2>/dev/null
}
trap 'stop_both; exit 130' INT TERM

"$bin/python" -m pytest -n 2 --dist worksteal -m "not spark and not browser and not flink" --durations=15
first=$?

while [ ! -e "$log.rc" ] && kill -0 "$second_pid" 2>/dev/null; do sleep 1; done
echo "----- what the prefetch said ($prefetch) -----"
cat "$prefetch"
echo "----- the tests that start Spark, a browser or Flink, run beside the others ($log) -----"
cat "$log"
second=$(cat "$log.rc" 2>/dev/null || echo 1)
[ "$second" -eq 5 ] && second=0
echo "make test: pure-Python tests exit $first; Spark, browser and Flink tests exit $second"
[ "$first" -eq 0 ] && [ "$second" -eq 0 ]

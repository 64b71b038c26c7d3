#!/usr/bin/env bash
# `make test`'s tests in three lanes side by side.
#
#   scripts/run-tests.sh VENV_BIN
#
# Lane one: the pure-Python tests on both cores (-n 2, the slow ones first, worksteal). The tests
# that start Spark, a browser or real Flink mostly wait on JVMs, sockets and sleeps (run alone:
# 535 s of CPU in 889 s, 0.6 of a core), so they run beside it, in two more lanes, each one test
# at a time: the Spark and browser tests (their order matters to the SparkSession they share,
# tests/spark/conftest.py), and the Flink tests that start no Spark (every Flink port is any free
# one on 127.0.0.1), followed by the tests that patch a compiled module, in the pure build, and
# the example user project from a wheel. Both wait first for what the prefetch fetches (chromium,
# and Flink 1.20.0 for the one live older-release test). Each lane's output goes to its own file
# under build/ and is printed when all are done, so nothing interleaves in a CI log.
# Ctrl-C stops them all. Exit code 5 ("none collected") of a lane's pytest is not a failure.
set -u
bin=$1
spark_log=build/test-spark.log
flink_log=build/test-flink.log
prefetch=build/test-prefetch.log
mkdir -p build
rm -f "$prefetch.done" "$spark_log.rc" "$flink_log.rc"

( scripts/provide-tools.sh "$bin" chromium; "$bin/flipcheck" flink releases --install 1.20.0 >/dev/null
  touch "$prefetch.done" ) > "$prefetch" 2>&1 &
prefetch_pid=$!

# The Spark and browser tests, one at a time (the order matters to the SparkSession they share).
( while [ ! -e "$prefetch.done" ]; do sleep 1; done
  "$bin/python" -m pytest -m "spark or browser" --durations=15
  code=$?; [ "$code" -eq 5 ] && code=0
  echo "$code" > "$spark_log.rc" ) > "$spark_log" 2>&1 &
spark_pid=$!

# The real-Flink tests that start no Spark, one at a time; then the tests that patch a compiled
# module, once more in the pure build (tests/cover/compiled_build.py); then flipcheck as a user
# gets it: a wheel in a clean venv, with examples/user-project. Exit codes on one line.
( while [ ! -e "$prefetch.done" ]; do sleep 1; done
  "$bin/python" -m pytest -m "flink and not spark and not browser" --durations=15
  code=$?; [ "$code" -eq 5 ] && code=0
  FLIPCHECK_PURE_PYTHON=1 "$bin/python" -m pytest -q -m pure_python tests/cover tests/quality
  code="$code $?"
  "$bin/python" scripts/check_user_project.py
  echo "$code $?" > "$flink_log.rc" ) > "$flink_log" 2>&1 &
flink_pid=$!

stop_all() {
  kill -- "$prefetch_pid" "$spark_pid" "$flink_pid" 2>/dev/null
  pkill -P "$spark_pid" 2>/dev/null
  pkill -P "$flink_pid" 2>/dev/null
}
trap 'stop_all; exit 130' INT TERM

"$bin/python" -m pytest -n 2 --dist worksteal -m "not spark and not browser and not flink" --durations=15
first=$?

for lane in "$spark_log:$spark_pid" "$flink_log:$flink_pid"; do
  while [ ! -e "${lane%%:*}.rc" ] && kill -0 "${lane##*:}" 2>/dev/null; do sleep 1; done
done
echo "----- what the prefetch said ($prefetch) -----"
cat "$prefetch"
echo "----- the Spark and browser tests, beside the others ($spark_log) -----"
cat "$spark_log"
echo "----- the Flink tests, the pure build, the user project, beside the others ($flink_log) -----"
cat "$flink_log"
read -r spark < "$spark_log.rc" 2>/dev/null || spark=1
read -r flink pure user < "$flink_log.rc" 2>/dev/null || { flink=1 pure=1 user=1; }
echo "make test: exit codes: pure-Python tests $first; Spark and browser tests $spark; Flink tests $flink;" \
     "compiled-patching tests in the pure build $pure; the user project $user"
[ "$first" -eq 0 ] && [ "$spark" -eq 0 ] && [ "$flink" -eq 0 ] && [ "$pure" -eq 0 ] && [ "$user" -eq 0 ]

#!/usr/bin/env bash
# `make test`'s tests in two lanes side by side.
#
#   scripts/run-tests.sh VENV_BIN
#
# The pure-Python tests keep both cores busy (-n 2, the slow ones first, worksteal). The tests
# that start Spark, a browser or real Flink run one at a time in a second pytest beside them:
# they mostly wait on JVMs, sockets and sleeps (measured: 535 s of CPU in 889 s, 0.6 of a core),
# and run one at a time because the order within one process matters to the SparkSession they
# share (tests/spark/conftest.py). They first wait for what the prefetch fetches (chromium, and
# Flink 1.20.0 for the one live older-release test). After the pure-Python tests, in the first
# lane, the tests that patch a compiled module run in the pure build, and the example user project
# runs from a wheel in a clean venv. The second lane's output goes to build/test-phase2.log and is
# printed once both lanes are done, so the two never interleave in a CI log.
# Ctrl-C stops both. Exit code 5 of the Spark, browser and Flink run ("none collected") is not a failure.
set -u
bin=$1
log=build/test-phase2.log
prefetch=build/test-prefetch.log
mkdir -p build
rm -f "$prefetch.done" "$log.rc"

( scripts/provide-tools.sh "$bin" chromium; "$bin/flipcheck" flink releases --install 1.20.0 >/dev/null
  touch "$prefetch.done" ) > "$prefetch" 2>&1 &
prefetch_pid=$!

# The second lane: its exit code in "$log.rc".
( while [ ! -e "$prefetch.done" ]; do sleep 1; done
  "$bin/python" -m pytest -m "spark or browser or flink" --durations=15
  code=$?; [ "$code" -eq 5 ] && code=0
  echo "$code" > "$log.rc" ) > "$log" 2>&1 &
second_pid=$!

stop_both() {
  kill -- "$prefetch_pid" "$second_pid" 2>/dev/null
  pkill -P "$second_pid" 2>/dev/null
}
trap 'stop_both; exit 130' INT TERM

"$bin/python" -m pytest -n 2 --dist worksteal -m "not spark and not browser and not flink" --durations=15
first=$?
# Then, in the first lane (the second one takes longer when a real run races): the tests that
# patch a compiled module, once more in the pure build (tests/cover/compiled_build.py), and
# flipcheck as a user gets it: a wheel in a clean venv, with examples/user-project.
FLIPCHECK_PURE_PYTHON=1 "$bin/python" -m pytest -q -m pure_python tests/cover tests/quality
pure=$?
"$bin/python" scripts/check_user_project.py
user=$?

while [ ! -e "$log.rc" ] && kill -0 "$second_pid" 2>/dev/null; do sleep 1; done
echo "----- what the prefetch said ($prefetch) -----"
cat "$prefetch"
echo "----- the second lane: Spark, browser and Flink tests ($log) -----"
cat "$log"
read -r second < "$log.rc" 2>/dev/null || second=1
echo "make test: exit codes: pure-Python tests $first; Spark, browser and Flink tests $second;" \
     "compiled-patching tests in the pure build $pure; the user project $user"
[ "$first" -eq 0 ] && [ "$second" -eq 0 ] && [ "$pure" -eq 0 ] && [ "$user" -eq 0 ]

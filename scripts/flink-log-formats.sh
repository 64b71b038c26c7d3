#!/usr/bin/env bash
# The log message formats one Flink release writes, from its class files, without running it:
# how the rows of flipcheck/flink/logs.py PATTERNS were checked per release (issue 23).
#
#   python3 -m pip install --no-deps --target /tmp/flink-1.14.6 apache-flink-libraries==1.14.6
#   scripts/flink-log-formats.sh /tmp/flink-1.14.6/pyflink/lib/flink-dist*.jar > 1.14.txt
#   diff 1.14.txt 2.0.txt
#
# Every Utf8 constant of the classes whose lines the reader reads that looks like one of their
# messages: the SLF4J formats ("{}") and, from 2.0 on (Java 11 string concatenation), the
# recipes ("\u0001"). Needs javap (a JDK).
set -euo pipefail
jar=${1:?usage: flink-log-formats.sh FLINK-DIST.jar}
for class in runtime.checkpoint.CheckpointCoordinator runtime.checkpoint.CheckpointFailureManager \
             runtime.taskexecutor.TaskExecutor streaming.runtime.io.checkpointing.SingleCheckpointBarrierHandler \
             streaming.runtime.tasks.StreamTask runtime.executiongraph.Execution runtime.taskmanager.Task \
             runtime.executiongraph.ExecutionAttemptID runtime.util.EnvironmentInformation; do
  javap -v -p -cp "$jar" "org.apache.flink.$class" 2>/dev/null | grep -a "= Utf8" | sed 's/^ *#[0-9]* = Utf8 *//' \
    | grep -E "Triggering checkpoint|acknowledge message for|Decline checkpoint|Completed checkpoint|Failed to trigger or|Trigger checkpoint|unknown task|Confirm|Abort checkpoint|Received barrier|aligned for|^Finished|Starting checkpoint|switched from|Deploying|^%s_|Starting .*Version" \
    | sed "s/^/${class##*.}: /" || true
done | sort -u

// Faults at protocol points, for the release matrix's scenarios (flipcheck/flink/matrix.py): read
// once from the job spec's "faults" before the job starts (Faults.configure), consulted by the
// job's sources and sinks. Static, because the MiniCluster runs every task attempt in this JVM
// with this class loader; a fault that throws fires once per run, so the restarted attempt runs
// clean. No Flink API here, so one copy serves every release.
//
//   "slow_snapshot_ms": {"VERTEX": MS}   every snapshot of VERTEX's source subtasks sleeps MS
//                                        first: a late acknowledgement keeps checkpoints pending
//   "end_after_checkpoint": ["VERTEX"]   a source stops pacing at the first checkpoint it
//                                        snapshots after its first record: the rest of its records
//                                        and its end of input follow that barrier at once, while
//                                        the checkpoint is still pending
//   "fail_in_notify_of_end_checkpoint": ["VERTEX"]
//                                        a source throws once in notifyCheckpointComplete(k), after
//                                        NOTIFY_GRACE_MS (the other tasks handle k's notification
//                                        meanwhile), where k is the checkpoint at which an
//                                        end_after_checkpoint source stopped pacing: the job
//                                        restores from k
//   "fail_after_end_of_input_commit": ["VERTEX"]
//                                        a Sink V2 committer throws right after its first commit
//                                        of a non-empty batch after its writer's end of input
//   "fail_in_enumerator": ["VERTEX"]     the lazy split enumerator of a "splits" source throws once,
//                                        on the request that would hand out its middle split:
//                                        SourceCoordinator fails the job over globally
//   "drop_add_split_event": ["VERTEX"]   the RPC carrying the middle split of a "splits" source to its
//                                        reader fails once, as if lost (Flink 2.x: compat/flink2/
//                                        EventDrops.java); Flink fails that reader over

import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

final class Faults {
    static final long NOTIFY_GRACE_MS = 300;
    static final Map<String, Long> SNAPSHOT_DELAY_MS = new ConcurrentHashMap<>();
    static final Set<String> END_AFTER_CHECKPOINT = ConcurrentHashMap.newKeySet();
    static final Set<String> FAIL_AFTER_END_OF_INPUT_COMMIT = ConcurrentHashMap.newKeySet();
    static final Set<String> FAIL_IN_NOTIFY_OF_END_CHECKPOINT = ConcurrentHashMap.newKeySet();
    static final Set<String> FAIL_IN_ENUMERATOR = ConcurrentHashMap.newKeySet();
    static final Set<String> DROP_ADD_SPLIT_EVENT = ConcurrentHashMap.newKeySet();
    /** Each lazy source's number of splits (LazyEnumerator), for drop_add_split_event. */
    static final Map<String, Integer> SPLIT_COUNTS = new ConcurrentHashMap<>();
    /** The checkpoint at which an end_after_checkpoint source stopped pacing (-1: none yet). */
    static final AtomicLong END_CHECKPOINT = new AtomicLong(-1);
    /** Sink vertices whose writer reached end of input; sources that stopped pacing; faults fired. */
    static final Set<String> ENDED = ConcurrentHashMap.newKeySet();
    static final Set<String> UNPACED = ConcurrentHashMap.newKeySet();
    static final Set<String> FIRED = ConcurrentHashMap.newKeySet();

    private Faults() {}

    // ---- faults at protocol points (flipcheck/flink/faults.py) -------------------------------

    static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("flipcheck.Faults");

    /** One fault of "fault_points"; `at` and `value` are -1 when the kind takes none. */
    static final class Point {
        final String spec;
        final String kind;
        final String vertex;
        final int subtask;
        final long at;
        final long value;

        Point(JsonNode node) {
            spec = node.get("spec").asText();
            kind = node.get("kind").asText();
            vertex = node.path("vertex").asText(null);
            subtask = node.path("subtask").asInt(-1);
            at = node.path("at").asLong(-1);
            value = node.path("value").asLong(-1);
        }

        boolean of(String kind, String vertex, int subtask) {
            return this.kind.equals(kind) && vertex.equals(this.vertex) && this.subtask == subtask;
        }
    }

    static final List<Point> POINTS = new CopyOnWriteArrayList<>();
    /** "vertex[subtask]" of the subtasks whose input ended (for after-end-of-input-throw). */
    static final Set<String> INPUT_ENDED = ConcurrentHashMap.newKeySet();

    static void configurePoints(JsonNode points) {
        if (points != null) {
            for (JsonNode point : points) {
                POINTS.add(new Point(point));
            }
        }
    }

    /** The line every fault logs when it strikes (faults.py reads it: FAULT_LINE). */
    static void struck(String kind, String vertex, int subtask, String where) {
        LOG.info("flipcheck fault {} {}{}", kind, vertex == null ? "job" : vertex + "[" + subtask + "]",
                where.isEmpty() ? "" : " " + where);
    }

    /** The fault of `kind` at this subtask (and checkpoint or record `at`, -1: any) that has not struck yet. */
    private static Point armed(String kind, String vertex, int subtask, long at) {
        for (Point point : POINTS) {
            if (point.of(kind, vertex, subtask) && (point.at < 0 || point.at == at) && !FIRED.contains(point.spec)) {
                return point;
            }
        }
        return null;
    }

    private static RuntimeException strike(Point point, String vertex, int subtask, String where) {
        FIRED.add(point.spec);
        struck(point.kind, vertex, subtask, where);
        FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
        return new RuntimeException("flipcheck fault " + point.spec + ": injected failure in " + vertex + "[" + subtask
                + "]" + (where.isEmpty() ? "" : " at " + where));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** snapshotState of checkpoint `checkpointId` in a subtask: delay-snapshot, snapshot-throw,
     * after-end-of-input-throw. */
    static void snapshot(String vertex, int subtask, long checkpointId) {
        Point delay = armed("delay-snapshot", vertex, subtask, checkpointId);
        if (delay != null) {
            FIRED.add(delay.spec);
            struck(delay.kind, vertex, subtask, "checkpoint " + checkpointId + " for " + delay.value + " ms");
            sleep(delay.value);
        }
        Point point = armed("snapshot-throw", vertex, subtask, checkpointId);
        if (point != null) {
            throw strike(point, vertex, subtask, "checkpoint " + checkpointId);
        }
        point = armed("after-end-of-input-throw", vertex, subtask, -1);
        if (point != null && INPUT_ENDED.contains(vertex + "[" + subtask + "]")) {
            throw strike(point, vertex, subtask, "checkpoint " + checkpointId);
        }
    }

    /** notifyCheckpointComplete(checkpointId) in a subtask: notify-throw. */
    static void notified(String vertex, int subtask, long checkpointId) {
        Point point = armed("notify-throw", vertex, subtask, checkpointId);
        if (point != null) {
            throw strike(point, vertex, subtask, "checkpoint " + checkpointId);
        }
    }

    /** The subtask's input ended (a source's reader: END_OF_INPUT; an operator or sink: finish). */
    static void inputEnded(String vertex, int subtask) {
        INPUT_ENDED.add(vertex + "[" + subtask + "]");
    }

    /** finish() of a subtask's operator: its input ended; finish-throw. */
    static void finishing(String vertex, int subtask) {
        inputEnded(vertex, subtask);
        Point point = armed("finish-throw", vertex, subtask, -1);
        if (point != null) {
            throw strike(point, vertex, subtask, "finish");
        }
    }

    /** A new attempt of the subtask starts: its input has not ended. */
    static void attemptStarts(String vertex, int subtask) {
        INPUT_ENDED.remove(vertex + "[" + subtask + "]");
    }

    /** close() of a subtask's function or reader after its input ended: close-throw (a close
     * while a failover cancels the task is not the protocol point, and is left alone). */
    static void closing(String vertex, int subtask) {
        Point point = armed("close-throw", vertex, subtask, -1);
        if (point != null && INPUT_ENDED.contains(vertex + "[" + subtask + "]")) {
            throw strike(point, vertex, subtask, "close");
        }
    }

    /** initializeState of a subtask's function: restore-throw, when it restores. */
    static void initializing(String vertex, int subtask, boolean restored) {
        attemptStarts(vertex, subtask);
        Point point = restored ? armed("restore-throw", vertex, subtask, -1) : null;
        if (point != null) {
            throw strike(point, vertex, subtask, "restore");
        }
    }

    /** A source reader's pollNext (on the task thread): delay-first-poll, at its first call. While
     * it sleeps, the coordinator's events and the next checkpoint's trigger wait in the task's
     * mailbox together (docs/reference/fault-points.md). */
    static void polling(String vertex, int subtask) {
        Point point = armed("delay-first-poll", vertex, subtask, -1);
        if (point != null) {
            FIRED.add(point.spec);
            struck(point.kind, vertex, subtask, "first poll for " + point.value + " ms");
            sleep(point.value);
        }
    }

    /** Whether delay-after-split-request waits for this subtask's first poll after its snapshot
     * of `checkpointId`. */
    static boolean armedAfterSplitRequest(String vertex, int subtask, long checkpointId) {
        return armed("delay-after-split-request", vertex, subtask, checkpointId) != null;
    }

    /** delay-after-split-request: the reader of a lazy source asked for a split at its first poll
     * after its snapshot of `checkpointId`; its task thread sleeps now. The answer (an
     * AddSplitEvent) and the next checkpoint's trigger arrive meanwhile and wait in its mailbox
     * together (docs/reference/fault-points.md). */
    static void afterSplitRequest(String vertex, int subtask, long checkpointId) {
        Point point = armed("delay-after-split-request", vertex, subtask, checkpointId);
        if (point != null) {
            FIRED.add(point.spec);
            struck(point.kind, vertex, subtask, "split request after checkpoint " + checkpointId + " for "
                    + point.value + " ms");
            sleep(point.value);
        }
    }

    /** A source's split enumerator starts (SourceCoordinator.start, as the job starts, before the
     * checkpoint scheduler runs): global-failure-at-start hands the coordinator an action that
     * throws, as global-failure does at a snapshot, so the JobManager fails the job over before
     * its first checkpoint. Once a run: the restarted job's enumerators start clean. */
    static void enumeratorStart(String vertex, SplitEnumeratorContext<?> context) {
        for (Point point : POINTS) {
            if (point.kind.equals("global-failure-at-start") && FIRED.add(point.spec)) {
                struck(point.kind, null, -1, "the start of the split enumerator of " + vertex);
                FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
                RuntimeException failure = new RuntimeException("flipcheck fault " + point.spec
                        + ": injected failure in the split enumerator of " + vertex + " at its start");
                context.callAsync(() -> null, (ignored, error) -> {
                    throw failure;
                });
            }
        }
    }

    /** A source's split enumerator snapshots checkpoint `checkpointId`: coordinator-snapshot-throw
     * throws, which fails that checkpoint only; global-failure hands the
     * coordinator an action that throws (SplitEnumeratorContext.callAsync, whose handler runs in
     * the coordinator thread). SourceCoordinatorContext catches it and fails the job: a global
     * failover while the checkpoint is pending, no task fails. (Thrown from snapshotState itself,
     * it would only fail that checkpoint: checkpointCoordinator completes its future
     * exceptionally.) */
    static void enumeratorSnapshot(String vertex, long checkpointId, SplitEnumeratorContext<?> context) {
        for (Point point : POINTS) {
            if (point.kind.equals("coordinator-snapshot-throw") && point.at == checkpointId && FIRED.add(point.spec)) {
                // Thrown here: SourceCoordinator.checkpointCoordinator fails checkpoint K, the job runs on.
                struck(point.kind, null, -1, "checkpoint " + checkpointId + " in the split enumerator of " + vertex);
                throw new RuntimeException("flipcheck fault " + point.spec + ": injected failure in the snapshot of the "
                        + "split enumerator of " + vertex + " at checkpoint " + checkpointId);
            }
            if (point.kind.equals("global-failure") && point.at == checkpointId && FIRED.add(point.spec)) {
                struck(point.kind, null, -1, "checkpoint " + checkpointId + " in the split enumerator of " + vertex);
                FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
                RuntimeException failure = new RuntimeException("flipcheck fault " + point.spec
                        + ": injected failure in the split enumerator of " + vertex + " at checkpoint " + checkpointId);
                context.callAsync(() -> null, (ignored, error) -> {
                    throw failure;
                });
            }
        }
    }

    /** A subtask consumes a record: backpressure (logged once, slept every time). */
    static void consuming(String vertex, int subtask) {
        for (Point point : POINTS) {
            if (point.of("backpressure", vertex, subtask)) {
                if (FIRED.add(point.spec)) {
                    struck(point.kind, vertex, subtask, point.value + " ms per record");
                }
                sleep(point.value);
            }
        }
    }

    /** Which job's busy threads may run: reset() moves it on, so a job server's next job starts
     * without the previous job's contention. */
    static final AtomicLong CONTENTION_EPOCH = new AtomicLong();

    /** cpu-contention=N: N busy daemon threads until the JVM exits or the next job (reset()). */
    static void startContention() {
        for (Point point : POINTS) {
            if (point.kind.equals("cpu-contention") && FIRED.add(point.spec)) {
                struck(point.kind, null, -1, point.value + " threads");
                for (int n = 0; n < point.value; n++) {
                    long epoch = CONTENTION_EPOCH.get();
                    Thread busy = new Thread(() -> {
                        long x = n0();
                        while (epoch == CONTENTION_EPOCH.get()) {
                            x = x * 6364136223846793005L + 1442695040888963407L;
                            if (x == 42) {
                                LOG.debug("unreachable {}", x);   // keeps the loop from being optimised away
                            }
                        }
                    }, "flipcheck-cpu-contention-" + n);
                    busy.setDaemon(true);
                    busy.start();
                }
            }
        }
    }

    private static long n0() {
        return System.nanoTime();
    }

    static void configure(JsonNode faults) {
        if (faults == null || faults.isNull()) {
            return;
        }
        JsonNode slow = faults.get("slow_snapshot_ms");
        if (slow != null) {
            for (Iterator<Map.Entry<String, JsonNode>> it = slow.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                SNAPSHOT_DELAY_MS.put(entry.getKey(), entry.getValue().asLong());
            }
        }
        names(faults.get("end_after_checkpoint"), END_AFTER_CHECKPOINT);
        names(faults.get("fail_after_end_of_input_commit"), FAIL_AFTER_END_OF_INPUT_COMMIT);
        names(faults.get("fail_in_notify_of_end_checkpoint"), FAIL_IN_NOTIFY_OF_END_CHECKPOINT);
        names(faults.get("fail_in_enumerator"), FAIL_IN_ENUMERATOR);
        names(faults.get("drop_add_split_event"), DROP_ADD_SPLIT_EVENT);
    }

    /** Forgets every fault and what fired: JobServer runs many jobs in one JVM, and each starts
     * as a fresh JVM would (a test checks that every static field here is reset). */
    static void reset() {
        SNAPSHOT_DELAY_MS.clear();
        END_AFTER_CHECKPOINT.clear();
        FAIL_AFTER_END_OF_INPUT_COMMIT.clear();
        FAIL_IN_NOTIFY_OF_END_CHECKPOINT.clear();
        FAIL_IN_ENUMERATOR.clear();
        DROP_ADD_SPLIT_EVENT.clear();
        SPLIT_COUNTS.clear();
        END_CHECKPOINT.set(-1);
        ENDED.clear();
        UNPACED.clear();
        FIRED.clear();
        POINTS.clear();
        INPUT_ENDED.clear();
        CONTENTION_EPOCH.incrementAndGet();   // the previous job's busy threads end
    }

    private static void names(JsonNode list, Set<String> into) {
        if (list != null) {
            for (JsonNode name : list) {
                into.add(name.asText());
            }
        }
    }

    /** A source subtask of `vertex` snapshots checkpoint `checkpointId` after `emitted` records. */
    static void onSourceSnapshot(String vertex, long checkpointId, long emitted) {
        Long delay = SNAPSHOT_DELAY_MS.get(vertex);
        if (delay != null && delay > 0) {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (emitted > 0 && END_AFTER_CHECKPOINT.contains(vertex) && UNPACED.add(vertex)) {
            END_CHECKPOINT.compareAndSet(-1, checkpointId);
            FlipcheckJob.say("fault", "end_after_checkpoint " + vertex + " " + checkpointId);
        }
    }

    /** A source subtask of `vertex` was notified that checkpoint `checkpointId` completed. */
    static void onSourceNotified(String vertex, long checkpointId) {
        if (FAIL_IN_NOTIFY_OF_END_CHECKPOINT.contains(vertex) && checkpointId == END_CHECKPOINT.get()
                && FIRED.add(vertex)) {
            try {
                Thread.sleep(NOTIFY_GRACE_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
            throw new RuntimeException("flipcheck fault fail_in_notify_of_end_checkpoint: injected failure in "
                    + vertex + " on the completion of checkpoint " + checkpointId);
        }
    }

    /** Whether a source of `vertex` still paces its records. */
    static boolean paced(String vertex) {
        return !UNPACED.contains(vertex);
    }

    /** The sink writer of `vertex` reached end of input. */
    static void endOfInput(String vertex) {
        ENDED.add(vertex);
    }

    /** The committer of `vertex` committed `count` committables. */
    static void afterCommit(String vertex, int count) {
        if (count > 0 && FAIL_AFTER_END_OF_INPUT_COMMIT.contains(vertex) && ENDED.contains(vertex) && FIRED.add(vertex)) {
            FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
            throw new RuntimeException("flipcheck fault fail_after_end_of_input_commit: injected failure in " + vertex
                    + " right after its first commit after end of input");
        }
    }

    /** The lazy enumerator of `vertex` is about to hand out its `assigned`-th split (from 0) of `total`. */
    static void beforeAssignment(String vertex, int assigned, int total) {
        if (assigned == total / 2 && FAIL_IN_ENUMERATOR.contains(vertex) && FIRED.add("enumerator " + vertex)) {
            FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
            throw new RuntimeException("flipcheck fault fail_in_enumerator: injected failure in the split enumerator of "
                    + vertex + " before it hands out split " + assigned + " of " + total);
        }
    }

    /** Whether a run drops an operator event (EventDrops wraps the MiniCluster's RPC service). */
    static boolean dropsEvents() {
        return !DROP_ADD_SPLIT_EVENT.isEmpty();
    }

    /** The lazy enumerator of `vertex` hands out `total` splits. */
    static void lazySource(String vertex, int total) {
        SPLIT_COUNTS.put(vertex, total);
    }

    /** Whether to drop the AddSplitEvent carrying `splits` to `subtask`: once, the one carrying
     * the middle split of a source with the fault (logged as our split lines are). */
    static boolean dropAddSplitEvent(java.util.List<FlipcheckJob.RangeSplit> splits, int subtask) {
        for (String vertex : DROP_ADD_SPLIT_EVENT) {
            Integer total = SPLIT_COUNTS.get(vertex);
            for (FlipcheckJob.RangeSplit split : splits) {
                if (total != null && split.number == total / 2 && FIRED.add("drop " + vertex)) {
                    FlipcheckJob.say("failure_injected", Long.toString(System.currentTimeMillis()));
                    FlipcheckJob.SPLITS_LOG.info("flipcheck splits {}: dropped the event carrying splits {} to subtask {}",
                            vertex, FlipcheckJob.ids(splits), subtask);
                    return true;
                }
            }
        }
        return false;
    }
}

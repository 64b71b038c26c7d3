// Flink 2.x: `flipcheck flink run --batch` (FLIP-383 batch job recovery). The spec's "batch" says
// which tasks a latch holds and whether a JobManager failover happens:
//
//   "batch": {"hold": ["VERTEX:SUBTASK", ...], "failover": true|false, "lose_task_manager": true|false,
//             "delete_shuffle_files": true|false}
//
// The held tasks wait at their first record. Once every held task waits and every other task is
// FINISHED or not yet deployed (the job can make no more progress), the JobManager loses its
// leadership (MiniCluster.getHaLeadershipControl().revokeJobMasterLeadership: a graceful stop, so
// the buffered job events are flushed), optionally the TaskManager is terminated and a new one
// started (its partitions are gone: missed on recovery), or the blocking partitions' files under the
// run's io.tmp.dirs are deleted (the TaskManager still lists them), leadership is granted again (a new
// JobMaster replays the job events), and the latch opens. Static state, like Faults: every task
// attempt runs in this JVM with this class loader.
//
// compat/flink1/Batch.java is the stub older releases compile (engine.py refuses --batch there).

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.connector.source.SupportsBatchSnapshot;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/** The marker a source enumerator implements so the SourceCoordinator snapshots it into job events. */
interface BatchSnapshot extends SupportsBatchSnapshot {}

final class Batch {
    static final Set<String> HOLD = ConcurrentHashMap.newKeySet();
    static final Set<String> WAITING = ConcurrentHashMap.newKeySet();
    static final CountDownLatch RELEASED = new CountDownLatch(1);
    static volatile boolean enabled;
    static volatile boolean failover;
    static volatile boolean loseTaskManager;
    static volatile boolean deleteShuffleFiles;
    static volatile String tmpDir;
    static final long QUIESCENT_POLL_MS = 50;
    static final long FAILOVER_WAIT_SECONDS = 120;

    private Batch() {}

    static void configure(JsonNode batch) {
        if (batch == null || batch.isNull()) {
            return;
        }
        enabled = true;
        for (JsonNode held : batch.get("hold")) {
            HOLD.add(held.asText());
        }
        failover = batch.get("failover").asBoolean();
        loseTaskManager = batch.get("lose_task_manager").asBoolean();
        deleteShuffleFiles = batch.get("delete_shuffle_files").asBoolean();
        tmpDir = batch.get("tmp_dir").asText();
    }

    /** The builder of the cluster: leadership the runner can revoke and grant (batch runs). */
    static MiniClusterConfiguration.Builder cluster(MiniClusterConfiguration.Builder builder) {
        return enabled ? builder.setHaServices(MiniCluster.HaServices.WITH_LEADERSHIP_CONTROL) : builder;
    }

    /** Called at every record: a held task waits here until the failover is over. */
    static void hold(String vertex, int subtask) {
        if (HOLD.isEmpty() || RELEASED.getCount() == 0) {
            return;
        }
        String task = vertex + ":" + subtask;
        if (HOLD.contains(task)) {
            WAITING.add(task);
            try {
                RELEASED.await();
            } catch (InterruptedException e) {
                // The task is cancelled (its JobManager is gone): end this attempt.
                Thread.currentThread().interrupt();
                throw new RuntimeException("flipcheck: " + task + " cancelled while held", e);
            }
        }
    }

    /** After submission: the JobManager failover of the spec, on a thread of its own. */
    static void start(MiniCluster cluster, JobID jobId) {
        if (!failover) {
            RELEASED.countDown();
            return;
        }
        Thread thread = new Thread(() -> {
            try {
                failover(cluster, jobId);
            } catch (Exception e) {
                FlipcheckJob.say("failover_error", String.valueOf(e));
            } finally {
                RELEASED.countDown();
            }
        }, "flipcheck-jm-failover");
        thread.setDaemon(true);
        thread.start();
    }

    static void failover(MiniCluster cluster, JobID jobId) throws Exception {
        long deadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(FAILOVER_WAIT_SECONDS);
        while (!quiescent(cluster, jobId)) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the job never waited only on its held tasks");
            }
            Thread.sleep(QUIESCENT_POLL_MS);
        }
        FlipcheckJob.say("jm_revoke", Long.toString(System.currentTimeMillis()));
        cluster.getHaLeadershipControl().get().revokeJobMasterLeadership(jobId).get();
        if (loseTaskManager) {
            cluster.terminateTaskManager(0).get();
            cluster.startTaskManager();
            FlipcheckJob.say("task_manager_lost", Long.toString(System.currentTimeMillis()));
        }
        if (deleteShuffleFiles) {
            FlipcheckJob.say("shuffle_files_deleted", String.valueOf(deleteShuffleFiles()));
        }
        FlipcheckJob.say("jm_grant", Long.toString(System.currentTimeMillis()));
        cluster.getHaLeadershipControl().get().grantJobMasterLeadership(jobId).get();
    }

    /** Deletes the sort-merge shuffle's data files (PartitionedFile's ".shuffle.data") under the
     * run's temporary directory; returns how many. */
    static int deleteShuffleFiles() throws java.io.IOException {
        java.util.List<java.nio.file.Path> found;
        try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(java.nio.file.Paths.get(tmpDir))) {
            found = walk.filter(p -> p.getFileName().toString().endsWith(".shuffle.data"))
                    .collect(java.util.stream.Collectors.toList());
        }
        for (java.nio.file.Path file : found) {
            java.nio.file.Files.delete(file);
        }
        return found.size();
    }

    /** Every held task waits at the latch, every other task is FINISHED or not deployed yet. */
    static boolean quiescent(MiniCluster cluster, JobID jobId) throws Exception {
        if (!WAITING.containsAll(HOLD)) {
            return false;
        }
        for (AccessExecutionJobVertex jobVertex : cluster.getExecutionGraph(jobId).get().getVerticesTopologically()) {
            String name = jobVertex.getName().replaceFirst("^Source: ", "");
            for (AccessExecutionVertex vertex : jobVertex.getTaskVertices()) {
                ExecutionState state = vertex.getExecutionState();
                boolean held = HOLD.contains(name + ":" + vertex.getParallelSubtaskIndex()) && state == ExecutionState.RUNNING;
                if (!held && state != ExecutionState.FINISHED && state != ExecutionState.CREATED
                        && state != ExecutionState.SCHEDULED) {
                    return false;
                }
            }
        }
        return true;
    }
}

// Task-local recovery in the job builder (`flipcheck flink run --local-recovery`, issue 25 item 2):
// the keyed state a "keyed_state" vertex keeps, and the two faults that only a run with local
// recovery has: losing the TaskManager a subtask runs on, and damaging the local copies.
//
//   keyed state      a "keyed_state" operator keys its input by BlockKey (KEY_BLOCK consecutive
//                    record ids share a key) and keeps one count per key in ValueState; it emits
//                    the block's first id plus that count. With correct state after every restore,
//                    a key's outputs are exactly its block's ids, so the committed output shows
//                    a wrong count (lost or doubled state) as a missing and a repeated id.
//   "taskmanager"    at its fail point a subtask asks the main thread to terminate the TaskManager
//                    it runs on (MiniCluster.terminateTaskManager) and start a new one
//                    (MiniCluster.startTaskManager); the subtask waits until it is cancelled.
//   "damage-local-copy"
//                    at its fail point a subtask deletes every file under the local backup
//                    directory, then throws: each copy it damaged is logged first.
//
// Both faults are logged by this class's logger ("flipcheck fault ...") into flink.log, where
// flipcheck/flink/conform_local_recovery.py reads where they struck.

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.taskexecutor.TaskExecutor;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

final class LocalRecovery {
    static final Logger LOG = LoggerFactory.getLogger(LocalRecovery.class);
    static final long KEY_BLOCK = 8;
    /** The subtask whose TaskManager is to go: {vertex, subtask}; completed once per run. */
    static final CompletableFuture<String[]> LOSE_TASK_MANAGER = new CompletableFuture<>();
    // <root>/.../aid_<allocation>/jid_<job>/vtx_<vertex>_sti_<subtask>/chk_<checkpoint>/...
    // (LocalRecoveryDirectoryProviderImpl's layout).
    static final Pattern COPY = Pattern.compile(
            "aid_([^/]+)/jid_[^/]+/vtx_([^/]+)_sti_(\\d+)/chk_(\\d+)(?:/|$)");

    private LocalRecovery() {}

    static final class BlockKey implements KeySelector<Long, Long> {
        public Long getKey(Long value) {
            return Math.floorDiv(value, KEY_BLOCK);
        }
    }

    /** Counts the records of each key in keyed state; emits the key's first id plus the count. */
    static final class KeyedCount extends RichMapFunction<Long, Long> {
        final FlipcheckJob.Handling handling;
        transient ValueState<Long> count;

        KeyedCount(FlipcheckJob.Handling handling) {
            this.handling = handling;
        }

        public Long map(Long value) throws Exception {
            handling.handle(Compat.subtask(getRuntimeContext()));
            if (count == null) {
                count = getRuntimeContext().getState(new ValueStateDescriptor<>("flipcheck-count", Types.LONG));
            }
            Long seen = count.value();
            long n = seen == null ? 0 : seen;
            count.update(n + 1);
            return Math.floorDiv(value, KEY_BLOCK) * KEY_BLOCK + n;
        }
    }

    /** "taskmanager": hand the loss to the main thread's watcher, then wait to be cancelled. */
    static void loseTaskManager(String vertex, int subtask) {
        LOSE_TASK_MANAGER.complete(new String[] {vertex, Integer.toString(subtask)});
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** "damage-local-copy": delete every file under `root`, logging each local copy damaged. */
    static void damageLocalCopies(String root) {
        Map<String, Integer> copies = new TreeMap<>();
        List<Path> files = new ArrayList<>();
        Path base = Paths.get(root);
        if (Files.isDirectory(base)) {
            try (Stream<Path> walk = Files.walk(base)) {
                walk.filter(Files::isRegularFile).forEach(files::add);
            } catch (IOException e) {
                throw new RuntimeException("flipcheck fault damage-local-copy: cannot list " + root, e);
            }
        }
        for (Path file : files) {
            Matcher copy = COPY.matcher(base.relativize(file).toString().replace('\\', '/'));
            String key = copy.find() ? copy.group(4) + " " + copy.group(2) + " " + copy.group(3) + " " + copy.group(1)
                    : "other";
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                throw new RuntimeException("flipcheck fault damage-local-copy: cannot delete " + file, e);
            }
            copies.merge(key, 1, Integer::sum);
        }
        for (Map.Entry<String, Integer> entry : copies.entrySet()) {
            if (entry.getKey().equals("other")) {
                LOG.info("flipcheck fault damage-local-copy: deleted {} files outside any local copy", entry.getValue());
                continue;
            }
            String[] part = entry.getKey().split(" ");
            LOG.info("flipcheck fault damage-local-copy: deleted {} files of the local copy of checkpoint {} "
                    + "of subtask ({} - {}) under allocation id {}", entry.getValue(), part[0], part[1], part[2], part[3]);
        }
    }

    /** Starts the daemon that terminates a TaskManager when a subtask asks for it (once). */
    static void watch(MiniCluster cluster, URI rest, JobID jobId, JobGraph jobGraph) {
        Thread watcher = new Thread(() -> {
            try {
                String[] asked = LOSE_TASK_MANAGER.get();
                loseTaskManagerOf(cluster, rest, jobId, jobGraph, asked[0], Integer.parseInt(asked[1]));
            } catch (Exception e) {
                LOG.error("flipcheck fault lose-taskmanager failed", e);
                FlipcheckJob.say("fault_error", String.valueOf(e));
            }
        }, "flipcheck-taskmanager-loss");
        watcher.setDaemon(true);
        watcher.start();
    }

    private static void loseTaskManagerOf(MiniCluster cluster, URI rest, JobID jobId, JobGraph jobGraph,
                                          String vertex, int subtask) throws Exception {
        String vertexId = null;
        for (JobVertex v : jobGraph.getVertices()) {
            String name = v.getName();
            if (name.equals(vertex) || name.equals("Source: " + vertex) || name.startsWith("Source: " + vertex + " -> ")
                    || name.equals("Sink: " + vertex) || name.startsWith(vertex + ": Writer")) {
                vertexId = v.getID().toString();
            }
        }
        JsonNode details = new ObjectMapper().readTree(
                FlipcheckJob.fetch(rest, "/jobs/" + jobId + "/vertices/" + vertexId));
        String resourceId = details.get("subtasks").get(subtask).get("taskmanager-id").asText();
        // MiniCluster numbers its TaskManagers by their place in this private list only.
        java.lang.reflect.Field field = MiniCluster.class.getDeclaredField("taskManagers");
        field.setAccessible(true);
        @SuppressWarnings("unchecked")
        List<TaskExecutor> taskManagers = (List<TaskExecutor>) field.get(cluster);
        int index = -1;
        synchronized (taskManagers) {
            for (int i = 0; i < taskManagers.size(); i++) {
                if (taskManagers.get(i).getResourceID().getResourceIdString().equals(resourceId)) {
                    index = i;
                }
            }
        }
        if (index < 0) {
            throw new IllegalStateException("no TaskManager " + resourceId + " in the MiniCluster");
        }
        LOG.info("flipcheck fault lose-taskmanager: terminating TaskManager {} that runs subtask {} of {}",
                resourceId, subtask, vertex);
        cluster.terminateTaskManager(index).get();
        cluster.startTaskManager();
        LOG.info("flipcheck fault lose-taskmanager: terminated TaskManager {}; started a new TaskManager", resourceId);
        FlipcheckJob.say("taskmanager_lost", resourceId);
    }
}

// flipcheck's job server (issue 26 item 5): one JVM and one MiniCluster run many jobs of the job
// builder, one after the other, so a job does not pay a JVM's and a cluster's start.
//
// Usage: java -Dflipcheck.log.pattern=LAYOUT -cp CLASSES:FLINK_LIB/* JobServer
// stdin:  one line per job, the path of a spec.json as flipcheck/flink/engine.py writes it for
//         FlipcheckJob; "quit" or the end of stdin ends the server (so it dies with its parent's pipe).
//         Nothing else is read: no network listener, no Java objects deserialized, only JSON.
// stdout: FlipcheckJob's "FLIPCHECK <key> <value>" lines for each job, then "FLIPCHECK end <exit>"
//         (0 succeeded, 1 the job failed, 2 the server could not run it; "FLIPCHECK error <line>" says why).
//
// What a reused cluster changes, and how each job still looks like a run of its own:
//   * each job gets its own flink.log: a file appender on log4j's root logger is attached before
//     the job is submitted and detached after it ended and the cluster is quiet again (every slot
//     free); jobs never overlap, so a line belongs to the job whose file is attached;
//   * the static state of Faults and FlipcheckJob (what fired) is reset before each job;
//   * the cluster is started again when a job needs another cluster: a cluster-level
//     configuration key differs (job-level keys: the checkpoint interval, mode, unaligned and
//     FLIP-147's switch, which go with the job graph), more slots, or dropped events (EventDrops);
//   * local-recovery and batch runs are refused (two TaskManagers, a JobManager failover): engine.py
//     runs them in a JVM of their own;
//   * checkpoint ids start at 1 again for every job: each job has its own CheckpointCoordinator
//     and checkpoint id counter.
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.messages.webmonitor.ClusterOverview;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.FileAppender;
import org.apache.logging.log4j.core.config.AbstractConfiguration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;

public class JobServer {
    /** Slots of a server's TaskManager: the parallelism of flipcheck's standard and random jobs. */
    static final int SERVER_SLOTS = 4;
    /** How long to wait for the slots of a finished job to be free again before the next job. */
    static final long QUIET_TIMEOUT_MS = 10_000;
    /** Finished jobs the cluster's job store keeps (JobManagerOptions.JOB_STORE_MAX_CAPACITY). */
    static final int JOB_STORE_CAPACITY = 4;
    /** Configuration keys that travel with the job graph (CheckpointConfig, StreamGraph), so one
     * cluster serves jobs that differ in them; every other key is the cluster's. */
    static final Set<String> JOB_LEVEL_KEYS = Set.of(
            "execution.checkpointing.interval", "execution.checkpointing.mode",
            "execution.checkpointing.unaligned", "execution.checkpointing.unaligned.enabled",
            "execution.checkpointing.checkpoints-after-tasks-finish.enabled",
            "execution.checkpointing.checkpoints-after-tasks-finish");

    static MiniCluster cluster;
    static String clusterKey;

    public static void main(String[] args) throws Exception {
        FlipcheckJob.say("server", Long.toString(System.currentTimeMillis()));
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
            int exit;
            try {
                exit = serve(json.readTree(new File(line.trim())), json);
            } catch (Throwable error) {
                FlipcheckJob.say("error", oneLine(error));
                stopCluster();  // a job that broke the cluster must not break the next one
                exit = 2;
            }
            FlipcheckJob.say("end", Integer.toString(exit));
        }
        stopCluster();
        System.exit(0);  // Flink leaves non-daemon threads behind
    }

    static int serve(JsonNode spec, ObjectMapper json) throws Exception {
        if (spec.path("local_recovery").asBoolean(false) || !spec.path("batch").isNull() && !spec.path("batch").isMissingNode()) {
            throw new IllegalArgumentException("the job server runs neither local-recovery nor batch jobs");
        }
        FlipcheckJob.FailPoint.FIRED.set(false);
        Faults.reset();
        Faults.configure(spec.get("faults"));
        Faults.configurePoints(spec.get("fault_points"));
        Configuration conf = FlipcheckJob.configuration(spec);
        int slots = Math.max(SERVER_SLOTS, FlipcheckJob.slots(spec));
        String key = clusterKey(spec, slots);
        if (cluster == null || !key.equals(clusterKey)) {
            stopCluster();
            // A finished job's archived graph stays in the dispatcher's job store (an hour by
            // default): a few are enough, so a server of thousands of jobs keeps a bounded heap.
            Configuration clusterConfiguration = new Configuration(conf);
            clusterConfiguration.setString("jobstore.max-capacity", Integer.toString(JOB_STORE_CAPACITY));
            MiniClusterConfiguration clusterConf = new MiniClusterConfiguration.Builder()
                    .setConfiguration(clusterConfiguration).setNumTaskManagers(1).setNumSlotsPerTaskManager(slots).build();
            cluster = EventDrops.miniCluster(clusterConf);
            cluster.start();
            clusterKey = key;
            FlipcheckJob.say("cluster_up", Long.toString(System.currentTimeMillis()));
        }
        JobGraph jobGraph = FlipcheckJob.jobGraph(spec, conf);
        String appender = attachLog(spec.get("out").asText() + File.separator + "flink.log");
        try {
            int exit = FlipcheckJob.runJob(cluster, jobGraph, spec, json);
            FlipcheckJob.say("quiet", Boolean.toString(awaitQuiet()));
            return exit;
        } finally {
            detachLog(appender);
        }
    }

    /** What a job needs of its cluster: the cluster-level configuration, the slots, dropped events. */
    static String clusterKey(JsonNode spec, int slots) {
        Map<String, String> keys = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = spec.get("configuration").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            if (!JOB_LEVEL_KEYS.contains(entry.getKey())) {
                keys.put(entry.getKey(), entry.getValue().asText());
            }
        }
        return keys + " slots=" + slots + " drops=" + Faults.dropsEvents();
    }

    /** Waits until every slot is free again (the finished job's tasks are gone); false on timeout. */
    static boolean awaitQuiet() throws Exception {
        long deadline = System.currentTimeMillis() + QUIET_TIMEOUT_MS;
        while (System.currentTimeMillis() < deadline) {
            ClusterOverview overview = cluster.requestClusterOverview().get();
            if (overview.getNumSlotsAvailable() == overview.getNumSlotsTotal() && overview.getNumJobsRunningOrPending() == 0) {
                return true;
            }
            Thread.sleep(10);
        }
        return false;
    }

    static String attachLog(String file) {
        LoggerContext context = LoggerContext.getContext(false);
        PatternLayout layout = PatternLayout.newBuilder().withPattern(System.getProperty("flipcheck.log.pattern")).build();
        String name = "job-" + file;
        FileAppender appender = FileAppender.newBuilder().withFileName(file).setName(name).setLayout(layout).build();
        appender.start();
        context.getConfiguration().addAppender(appender);
        context.getConfiguration().getRootLogger().addAppender(appender, null, null);
        context.updateLoggers();
        return name;
    }

    static void detachLog(String name) {
        LoggerContext context = LoggerContext.getContext(false);
        LoggerConfig root = context.getConfiguration().getRootLogger();
        root.removeAppender(name);
        context.updateLoggers();
        org.apache.logging.log4j.core.Appender appender = context.getConfiguration().getAppender(name);
        ((AbstractConfiguration) context.getConfiguration()).removeAppender(name);
        if (appender != null) {
            appender.stop();
        }
    }

    static void stopCluster() {
        if (cluster != null) {
            try {
                cluster.close();
            } catch (Exception error) {
                FlipcheckJob.say("error", "closing the cluster: " + oneLine(error));
            }
            cluster = null;
            clusterKey = null;
        }
    }

    static String oneLine(Throwable error) {
        String text = error.getClass().getSimpleName() + ": " + error.getMessage();
        return text.replaceAll("\\s+", " ");
    }
}

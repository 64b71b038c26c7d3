// Flink 1.x: no batch job recovery here (SupportsBatchSnapshot is from 1.20, and engine.py runs
// --batch on 2.0 and later only), so compat/flink2/Batch.java's hooks do nothing.

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

interface BatchSnapshot {}

final class Batch {
    private Batch() {}

    static void configure(JsonNode batch) {
        if (batch != null && !batch.isNull()) {
            throw new UnsupportedOperationException("batch job recovery needs Flink 2.0 or later");
        }
    }

    static MiniClusterConfiguration.Builder cluster(MiniClusterConfiguration.Builder builder) {
        return builder;
    }

    static void hold(String vertex, int subtask) {}

    static void start(MiniCluster cluster, JobID jobId) {}
}

// Flink 1.x: the MiniCluster of a run as it is. The fault "drop_add_split_event" wraps the RPC
// service (compat/flink2/EventDrops.java), which is built against 2.x's RpcService only.

import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

final class EventDrops {
    private EventDrops() {}

    static MiniCluster miniCluster(MiniClusterConfiguration configuration) {
        if (Faults.dropsEvents()) {
            throw new UnsupportedOperationException("flipcheck fault drop_add_split_event needs Flink 2.0 or later");
        }
        return new MiniCluster(configuration);
    }
}

// Flink 2.x: the MiniCluster of a run, its RPC service wrapped so that the fault
// "drop_add_split_event" (Faults.java) can drop one AddSplitEvent on its way to a reader: the
// JobMaster's TaskExecutorGateway fails that send, as a lost RPC would (FLINK-21996's case).
// MiniCluster.createLocalRpcService is overridable and TaskExecutorGatewayDecoratorBase is a
// production class; Flink's OperatorEventSendingCheckpointITCase drops events the same way.

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.messages.Acknowledge;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.rpc.FencedRpcGateway;
import org.apache.flink.runtime.rpc.RpcEndpoint;
import org.apache.flink.runtime.rpc.RpcGateway;
import org.apache.flink.runtime.rpc.RpcServer;
import org.apache.flink.runtime.rpc.RpcService;
import org.apache.flink.runtime.rpc.RpcSystem;
import org.apache.flink.runtime.source.event.AddSplitEvent;
import org.apache.flink.runtime.taskexecutor.TaskExecutorGateway;
import org.apache.flink.runtime.taskexecutor.TaskExecutorGatewayDecoratorBase;
import org.apache.flink.util.SerializedValue;
import org.apache.flink.util.concurrent.FutureUtils;
import org.apache.flink.util.concurrent.ScheduledExecutor;

final class EventDrops {
    private EventDrops() {}

    /** A MiniCluster whose TaskExecutor gateways consult Faults before each operator event. */
    static MiniCluster miniCluster(MiniClusterConfiguration configuration) {
        if (!Faults.dropsEvents()) {
            return new MiniCluster(configuration);
        }
        return new MiniCluster(configuration) {
            @Override
            protected RpcService createLocalRpcService(Configuration conf, RpcSystem rpcSystem) throws Exception {
                return new Intercepting(super.createLocalRpcService(conf, rpcSystem));
            }
        };
    }

    /** The RPC service as it is, but a TaskExecutorGateway it connects to is a Dropping one. */
    static final class Intercepting implements RpcService {
        final RpcService service;

        Intercepting(RpcService service) {
            this.service = service;
        }

        public String getAddress() {
            return service.getAddress();
        }

        public int getPort() {
            return service.getPort();
        }

        public <C extends RpcGateway> C getSelfGateway(Class<C> type, RpcServer server) {
            return service.getSelfGateway(type, server);
        }

        @SuppressWarnings("unchecked")
        public <C extends RpcGateway> CompletableFuture<C> connect(String address, Class<C> type) {
            CompletableFuture<C> gateway = service.connect(address, type);
            if (!TaskExecutorGateway.class.equals(type)) {
                return gateway;
            }
            return gateway.thenApply(original -> (C) new Dropping((TaskExecutorGateway) original));
        }

        public <F extends java.io.Serializable, C extends FencedRpcGateway<F>> CompletableFuture<C> connect(
                String address, F fencingToken, Class<C> type) {
            return service.connect(address, fencingToken, type);
        }

        public <C extends RpcEndpoint & RpcGateway> RpcServer startServer(C endpoint, Map<String, String> context) {
            return service.startServer(endpoint, context);
        }

        public void stopServer(RpcServer server) {
            service.stopServer(server);
        }

        public ScheduledExecutor getScheduledExecutor() {
            return service.getScheduledExecutor();
        }

        public CompletableFuture<Void> closeAsync() {
            return service.closeAsync();
        }
    }

    /** Fails the send of the AddSplitEvent Faults picks, once; every other call goes through. */
    static final class Dropping extends TaskExecutorGatewayDecoratorBase {
        Dropping(TaskExecutorGateway original) {
            super(original);
        }

        @Override
        public CompletableFuture<Acknowledge> sendOperatorEventToTask(
                ExecutionAttemptID task, OperatorID operator, SerializedValue<OperatorEvent> event) {
            try {
                OperatorEvent value = event.deserializeValue(EventDrops.class.getClassLoader());
                if (value instanceof AddSplitEvent) {
                    @SuppressWarnings("unchecked")
                    List<FlipcheckJob.RangeSplit> splits =
                            ((AddSplitEvent<FlipcheckJob.RangeSplit>) value).splits(new FlipcheckJob.SplitSerializer());
                    if (Faults.dropAddSplitEvent(splits, task.getSubtaskIndex())) {
                        return FutureUtils.completedExceptionally(new java.io.IOException(
                                "flipcheck fault drop_add_split_event: the RPC carrying " + FlipcheckJob.ids(splits)
                                        + " to subtask " + task.getSubtaskIndex() + " was dropped"));
                    }
                }
            } catch (Exception e) {
                throw new RuntimeException("flipcheck fault drop_add_split_event: cannot read an operator event", e);
            }
            return originalGateway.sendOperatorEventToTask(task, operator, event);
        }
    }
}

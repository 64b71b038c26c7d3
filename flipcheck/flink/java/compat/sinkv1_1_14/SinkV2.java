// "sink_v2" on Flink 1.14, which has only Sink V1: a writer whose committables are prepared at each
// checkpoint and a Committer (no GlobalCommitter, no writer state) that commits them, the same
// roles as Sink V2's. The behaviour is FlipcheckJob.Transactions'.

import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

import org.apache.flink.api.connector.sink.Committer;
import org.apache.flink.api.connector.sink.GlobalCommitter;
import org.apache.flink.api.connector.sink.Sink;
import org.apache.flink.api.connector.sink.SinkWriter;
import org.apache.flink.core.io.SimpleVersionedSerializer;

final class SinkV2 implements Sink<Long, String, Void, Void> {
    final FlipcheckJob.Transactions transactions;

    SinkV2(FlipcheckJob.Transactions transactions) {
        this.transactions = transactions;
    }

    public SinkWriter<Long, String, Void> createWriter(InitContext context, List<Void> states) {
        FlipcheckJob.Transactions.Writer writer = transactions.writer(context.getSubtaskId());
        return new SinkWriter<Long, String, Void>() {
            public void write(Long value, SinkWriter.Context context) throws IOException {
                writer.write(value);
            }

            public List<String> prepareCommit(boolean flush) {
                if (flush) {  // Sink V1's end of input
                    writer.endOfInput();
                }
                return writer.prepareCommit();
            }

            public void close() {}
        };
    }

    public Optional<Committer<String>> createCommitter() {
        return Optional.of(new Committer<String>() {
            public List<String> commit(List<String> names) throws IOException {
                for (String name : names) {
                    transactions.commit(name);
                }
                transactions.committed(names.size());
                return Collections.emptyList();  // nothing to retry
            }

            public void close() {}
        });
    }

    public Optional<SimpleVersionedSerializer<String>> getCommittableSerializer() {
        return Optional.of(new FlipcheckJob.NameSerializer());
    }

    public Optional<GlobalCommitter<String, Void>> createGlobalCommitter() {
        return Optional.empty();
    }

    public Optional<SimpleVersionedSerializer<Void>> getGlobalCommittableSerializer() {
        return Optional.empty();
    }

    public Optional<SimpleVersionedSerializer<Void>> getWriterStateSerializer() {
        return Optional.empty();
    }
}

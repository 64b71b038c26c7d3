// "sink_v2" on Flink 1.15-1.20: TwoPhaseCommittingSink with a PrecommittingSinkWriter (1.19 and
// 1.20 keep it, deprecated, beside SupportsCommitter, and still create writers through
// Sink.InitContext). The behaviour is FlipcheckJob.Transactions'.

import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.TwoPhaseCommittingSink;
import org.apache.flink.core.io.SimpleVersionedSerializer;

final class SinkV2 implements TwoPhaseCommittingSink<Long, String> {
    final FlipcheckJob.Transactions transactions;

    SinkV2(FlipcheckJob.Transactions transactions) {
        this.transactions = transactions;
    }

    public PrecommittingSinkWriter<Long, String> createWriter(InitContext context) {
        return new Writer(transactions.writer(context.getSubtaskId()));
    }

    public Committer<String> createCommitter() {
        return new Sink2Parts.FileCommitter(transactions);
    }

    public SimpleVersionedSerializer<String> getCommittableSerializer() {
        return new FlipcheckJob.NameSerializer();
    }

    static final class Writer extends Sink2Parts.Writer implements PrecommittingSinkWriter<Long, String> {
        Writer(FlipcheckJob.Transactions.Writer writer) {
            super(writer);
        }
    }
}

// "sink_v2" on Flink 1.15-1.20: TwoPhaseCommittingSink with a PrecommittingSinkWriter (1.19 and
// 1.20 keep it, deprecated, beside SupportsCommitter, and still create writers through
// Sink.InitContext). The behaviour is FlipcheckJob.Transactions'.

import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.TwoPhaseCommittingSink;

final class SinkV2 extends Sink2Parts.FileSink implements TwoPhaseCommittingSink<Long, String> {
    SinkV2(FlipcheckJob.Transactions transactions) {
        super(transactions);
    }

    public PrecommittingSinkWriter<Long, String> createWriter(InitContext context) {
        return new Writer(transactions.writer(context.getSubtaskId()));
    }

    public Committer<String> createCommitter() {
        return new Sink2Parts.FileCommitter(transactions);
    }

    static final class Writer extends Sink2Parts.Writer implements PrecommittingSinkWriter<Long, String> {
        Writer(FlipcheckJob.Transactions.Writer writer) {
            super(writer);
        }
    }
}

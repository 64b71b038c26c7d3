// "sink_v2" on Flink 2.x: Sink + SupportsCommitter, a CommittingSinkWriter (the API 1.19 added and
// 2.0 kept alone). The behaviour is FlipcheckJob.Transactions'.

import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

final class SinkV2 extends Sink2Parts.FileSink implements Sink<Long>, SupportsCommitter<String> {
    SinkV2(FlipcheckJob.Transactions transactions) {
        super(transactions);
    }

    public SinkWriter<Long> createWriter(WriterInitContext context) {
        return new Writer(transactions.writer(context.getTaskInfo().getIndexOfThisSubtask()));
    }

    public Committer<String> createCommitter(CommitterInitContext context) {
        return new Sink2Parts.FileCommitter(transactions);
    }

    static final class Writer extends Sink2Parts.Writer implements CommittingSinkWriter<Long, String> {
        Writer(FlipcheckJob.Transactions.Writer writer) {
            super(writer);
        }
    }
}

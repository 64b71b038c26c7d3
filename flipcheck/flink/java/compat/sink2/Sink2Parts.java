// What the Sink V2 APIs of 1.15-1.20 and of 2.x share: the sink's state and committable
// serializer, the writer's methods but for the interface that marks it as committing, and the
// committer. compat/sinkv2_1_15 and compat/sinkv2_2_0 use them.

import java.io.IOException;
import java.io.Serializable;
import java.util.Collection;

import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.core.io.SimpleVersionedSerializer;

final class Sink2Parts {
    /** A sink over FlipcheckJob.Transactions; a subclass adds the release's committing Sink API. */
    abstract static class FileSink implements Serializable {
        final FlipcheckJob.Transactions transactions;

        FileSink(FlipcheckJob.Transactions transactions) {
            this.transactions = transactions;
        }

        public SimpleVersionedSerializer<String> getCommittableSerializer() {
            return new FlipcheckJob.NameSerializer();
        }
    }

    /** A writer over FlipcheckJob.Transactions; a subclass adds the release's committing interface. */
    abstract static class Writer implements SinkWriter<Long> {
        final FlipcheckJob.Transactions.Writer writer;

        Writer(FlipcheckJob.Transactions.Writer writer) {
            this.writer = writer;
        }

        public void write(Long value, SinkWriter.Context context) throws IOException {
            writer.write(value);
        }

        public void flush(boolean endOfInput) {
            if (endOfInput) {
                writer.endOfInput();
            }
        }

        public Collection<String> prepareCommit() {
            return writer.prepareCommit();
        }

        public void close() {}
    }

    /** Commits each committable: renames its pending file. */
    static final class FileCommitter implements Committer<String> {
        final FlipcheckJob.Transactions transactions;

        FileCommitter(FlipcheckJob.Transactions transactions) {
            this.transactions = transactions;
        }

        public void commit(Collection<CommitRequest<String>> requests) throws IOException {
            for (CommitRequest<String> request : requests) {
                transactions.commit(request.getCommittable());
            }
            transactions.committed(requests.size());
        }

        public void close() {}
    }
}

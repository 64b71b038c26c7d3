// flipcheck's job builder for real Flink 1.14-2.3 (`flipcheck flink run`): reads a job spec written by
// flipcheck/flink/engine.py, starts a local MiniCluster bound to 127.0.0.1, submits one streaming
// job with one Flink job vertex per flipcheck vertex, writes the REST plan, waits for the result.
//
// It compiles against every release from 1.14 to 2.3. What differs between releases:
//   * the legacy sink functions live in ...functions.sink before 2.0: engine.py compiles a copy of
//     this file whose three ...sink.legacy imports say ...sink (the classes did not change);
//   * Compat (compat/flink1, compat/flink2): the subtask index of a RuntimeContext;
//   * SinkV2 (compat/sinkv1_1_14, compat/sinkv2_1_15, compat/sinkv2_2_0, with the parts of
//     compat/sink2 that 1.15+ share): the "sink_v2" role on the release's committing Sink API,
//     delegating to Transactions below;
//   * configuration keys: engine.py names them as the release does, in the spec's "configuration".
//
// Usage: java -cp CLASSES:FLINK_LIB/* FlipcheckJob SPEC.json
// stdout: lines "FLIPCHECK <key> <value>" that engine.py reads (timestamps in epoch ms, the job id,
// the result); everything else goes to Flink's log (log4j2 properties chosen by engine.py).
//
// The spec (JSON, read with the Jackson that Flink shades) lists the vertices in topological order;
// engine.py has already decided each vertex's role and each input's partitioning, so this file only
// builds what it is told:
//   role "source":   a bounded FLIP-27 source; subtask i emits `records` ids first + i*records ...
//   role "operator": a pass-through map (one input), co-map (two inputs, keyed when both "hash"),
//                    with "splits": N, the same ids cut into N splits that a lazy enumerator hands
//                    out one per request (RangeSource's LazyEnumerator and LazyReader; logger flipcheck.SplitAssignment)
//                    or a map over the union of its inputs (three or more); "keyed_state": a
//                    keyed map with a count per key (LocalRecovery.java)
//   role "two_phase_commit_sink": TwoPhaseCommitSinkFunction (Flink 2.x keeps it in ...sink.legacy)
//   role "sink_v2":  a committing sink (Sink V2; Sink V1 on 1.14); writer and committer chain into one task
//   role "discard":  a vertex without outputs and without a sink flag: a sink that drops records
// Every operator but the Sink V2 pair has chaining disabled, so each vertex is one task per subtask.
// Committed output: OUT/output/<vertex>/committed/<file>, one record id per line; a transaction is
// written to .../pending/<file> and committed by renaming it, so committing twice is harmless.

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.VoidSerializer;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.co.RichCoMapFunction;
import org.apache.flink.streaming.api.operators.StreamMap;
import org.apache.flink.streaming.api.operators.co.CoStreamMap;
import org.apache.flink.streaming.api.functions.sink.legacy.RichSinkFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.SinkFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.TwoPhaseCommitSinkFunction;

public class FlipcheckJob {

    static void say(String key, String value) {
        System.out.println("FLIPCHECK " + key + " " + value);
        System.out.flush();
    }

    // ---- --fail VERTEX:SUBTASK@RECORD ---------------------------------------------------------

    /** Where to throw, carried by every function; the "once" flag is static because the
     * MiniCluster runs every attempt in this JVM, with this class loader (no user jars). */
    static final class FailPoint implements Serializable {
        static final AtomicBoolean FIRED = new AtomicBoolean(false);
        final String vertex;
        final int subtask;
        final long record;
        final String how;        // "task", or LocalRecovery's "taskmanager" / "damage-local-copy"
        final String localRoot;  // the local backup directory ("damage-local-copy")

        FailPoint(String vertex, int subtask, long record, String how, String localRoot) {
            this.vertex = vertex;
            this.subtask = subtask;
            this.record = record;
            this.how = how;
            this.localRoot = localRoot;
        }

        /** Throws once per run, when subtask `subtask` of `vertex` handles its `record`-th record. */
        void check(String vertex, int subtask, long handled) {
            if (this.vertex.equals(vertex) && this.subtask == subtask && handled == record
                    && FIRED.compareAndSet(false, true)) {
                say("failure_injected", Long.toString(System.currentTimeMillis()));
                Faults.struck(how.equals("task") ? "fail" : how.equals("taskmanager") ? "lose-taskmanager" : how,
                        vertex, subtask, "record " + record);
                if (how.equals("taskmanager")) {
                    LocalRecovery.loseTaskManager(vertex, subtask);
                } else if (how.equals("damage-local-copy")) {
                    LocalRecovery.damageLocalCopies(localRoot);
                }
                throw new RuntimeException("flipcheck --fail: injected failure in " + vertex + " subtask "
                        + subtask + " at record " + record);
            }
        }

        static void check(FailPoint fail, String vertex, int subtask, long handled) {
            if (fail != null) {
                fail.check(vertex, subtask, handled);
            }
        }
    }

    // ---- what every operator does with a record ----------------------------------------------

    /** Counts the records a subtask handles, throws at the --fail point, and (a "union_list_state"
     * vertex) keeps real union list state: the count, which on restore every subtask receives
     * from every subtask (getUnionListState). */
    static final class Handling implements Serializable {
        final String vertex;
        final FailPoint fail;
        final boolean unionListState;
        transient ListState<Long> state;
        long handled;
        int subtask = -1;   // known from initialize(context, subtask) on: the protocol-point faults' hooks

        Handling(String vertex, FailPoint fail, boolean unionListState) {
            this.vertex = vertex;
            this.fail = fail;
            this.unionListState = unionListState;
        }

        void handle(int subtask) {
            handled++;
            Faults.consuming(vertex, subtask);
            Batch.hold(vertex, subtask);
            FailPoint.check(fail, vertex, subtask, handled);
        }

        void initialize(FunctionInitializationContext context) throws Exception {
            if (unionListState) {
                state = context.getOperatorStateStore().getUnionListState(
                        new ListStateDescriptor<>("flipcheck-union-" + vertex, Types.LONG));
            }
        }

        void snapshot() throws Exception {
            if (unionListState) {
                state.update(Collections.singletonList(handled));
            }
        }

        // The hooks of the faults at protocol points (Faults.java): the functions below call them.
        void initialize(FunctionInitializationContext context, int subtask) throws Exception {
            this.subtask = subtask;
            Faults.initializing(vertex, subtask, context.isRestored());
            initialize(context);
        }

        void snapshot(long checkpointId) throws Exception {
            Faults.snapshot(vertex, subtask, checkpointId);
            snapshot();
        }

        void notified(long checkpointId) {
            Faults.notified(vertex, subtask, checkpointId);
        }

        void finishing() {
            Faults.finishing(vertex, subtask);
        }

        void closing() {
            Faults.closing(vertex, subtask);
        }
    }

    // ---- sources ------------------------------------------------------------------------------

    /** Split `number`: ids first .. first+count-1, `offset` of them emitted. A RangeSource has
     * one split per subtask (split i for subtask i), a LazySplitSource "splits" of them. */
    static final class RangeSplit implements SourceSplit, Serializable {
        final int number;
        final long first;
        final long count;
        long offset;

        RangeSplit(int number, long first, long count, long offset) {
            this.number = number;
            this.first = first;
            this.count = count;
            this.offset = offset;
        }

        @Override
        public String splitId() {
            return "split-" + number;
        }

        RangeSplit copy() {
            return new RangeSplit(number, first, count, offset);
        }

        void write(DataOutputStream out) throws IOException {
            out.writeInt(number);
            out.writeLong(first);
            out.writeLong(count);
            out.writeLong(offset);
        }

        static RangeSplit read(DataInputStream in) throws IOException {
            return new RangeSplit(in.readInt(), in.readLong(), in.readLong(), in.readLong());
        }
    }

    static final class SplitSerializer implements SimpleVersionedSerializer<RangeSplit> {
        public int getVersion() {
            return 1;
        }

        public byte[] serialize(RangeSplit split) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            split.write(new DataOutputStream(bytes));
            return bytes.toByteArray();
        }

        public RangeSplit deserialize(int version, byte[] data) throws IOException {
            return RangeSplit.read(new DataInputStream(new ByteArrayInputStream(data)));
        }
    }

    static final class PendingSerializer implements SimpleVersionedSerializer<List<RangeSplit>> {
        public int getVersion() {
            return 1;
        }

        public byte[] serialize(List<RangeSplit> splits) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(splits.size());
            for (RangeSplit split : splits) {
                split.write(out);
            }
            return bytes.toByteArray();
        }

        public List<RangeSplit> deserialize(int version, byte[] data) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
            List<RangeSplit> splits = new ArrayList<>();
            for (int n = in.readInt(); n > 0; n--) {
                splits.add(RangeSplit.read(in));
            }
            return splits;
        }
    }

    /** A snapshot's copy of `splits` (their offsets move on after it). */
    static List<RangeSplit> copies(Iterable<RangeSplit> splits) {
        List<RangeSplit> copy = new ArrayList<>();
        for (RangeSplit split : splits) {
            copy.add(split.copy());
        }
        return copy;
    }

    /** A source subtask's pace: a seeded, jittered sleep before each record (so subtasks drift
     * apart, as real sources do, and a run spans checkpoints), and the --fail point. */
    static final class Pacer {
        final String vertex;
        final int subtask;
        final long delayMs;
        final Random random;
        final FailPoint fail;

        Pacer(String vertex, int subtask, long delayMs, long seed, FailPoint fail) {
            this.vertex = vertex;
            this.subtask = subtask;
            this.delayMs = delayMs;
            this.random = new Random(seed * 1_000_003L + vertex.hashCode() * 31L + subtask);
            this.fail = fail;
        }

        /** Emits the next record of `split`, this subtask's `handled`-th as the --fail point counts. */
        void emitNext(RangeSplit split, long handled, ReaderOutput<Long> output) throws InterruptedException {
            if (delayMs > 0 && Faults.paced(vertex)) {
                Thread.sleep(delayMs + random.nextInt((int) Math.max(1, delayMs / 2)));
            }
            Batch.hold(vertex, subtask);
            FailPoint.check(fail, vertex, subtask, handled);
            output.collect(split.first + split.offset);
            split.offset++;
        }
    }

    /** Assigns split i to subtask i, so each subtask emits a known range (the model's J1). */
    /** BatchSnapshot (compat/): the SourceCoordinator snapshots it into batch job events (--batch). */
    static final class RangeEnumerator implements SplitEnumerator<RangeSplit, List<RangeSplit>>, BatchSnapshot {
        final String vertex;
        final SplitEnumeratorContext<RangeSplit> context;
        final List<RangeSplit> pending;

        RangeEnumerator(String vertex, SplitEnumeratorContext<RangeSplit> context, List<RangeSplit> pending) {
            this.vertex = vertex;
            this.context = context;
            this.pending = new ArrayList<>(pending);
        }

        public void start() {
            Faults.enumeratorStart(vertex, context);
        }

        public void handleSplitRequest(int subtask, String host) {}

        public void addSplitsBack(List<RangeSplit> splits, int subtask) {
            pending.addAll(splits);
        }

        public void addReader(int subtask) {
            for (RangeSplit split : new ArrayList<>(pending)) {
                if (split.number == subtask) {
                    pending.remove(split);
                    context.assignSplit(split, subtask);
                }
            }
            context.signalNoMoreSplits(subtask);
        }

        public List<RangeSplit> snapshotState(long checkpointId) {
            Faults.enumeratorSnapshot(vertex, checkpointId, context);
            return copies(pending);
        }

        public void close() {}
    }

    /** Emits its splits' ids one by one, sleeping between records so a run spans checkpoints. */
    static final class RangeReader implements SourceReader<Long, RangeSplit> {
        final String vertex;
        final Pacer pacer;
        final List<RangeSplit> splits = new ArrayList<>();
        boolean noMoreSplits;
        CompletableFuture<Void> available = new CompletableFuture<>();
        long emitted;  // for Faults.onSourceSnapshot

        RangeReader(String vertex, int subtask, long delayMs, long seed, FailPoint fail) {
            this.vertex = vertex;
            this.pacer = new Pacer(vertex, subtask, delayMs, seed, fail);
            Faults.attemptStarts(vertex, subtask);
        }

        public void start() {}

        public InputStatus pollNext(ReaderOutput<Long> output) throws Exception {
            Faults.polling(vertex, pacer.subtask);
            for (RangeSplit split : splits) {
                if (split.offset < split.count) {
                    pacer.emitNext(split, split.offset + 1, output);
                    emitted++;
                    return InputStatus.MORE_AVAILABLE;
                }
            }
            if (noMoreSplits) {
                Faults.inputEnded(vertex, pacer.subtask);
                return InputStatus.END_OF_INPUT;
            }
            if (available.isDone()) {
                available = new CompletableFuture<>();
            }
            return InputStatus.NOTHING_AVAILABLE;
        }

        public List<RangeSplit> snapshotState(long checkpointId) {
            Faults.onSourceSnapshot(vertex, checkpointId, emitted);
            Faults.snapshot(vertex, pacer.subtask, checkpointId);
            return copies(splits);
        }

        public void notifyCheckpointComplete(long checkpointId) {
            Faults.onSourceNotified(vertex, checkpointId);
            Faults.notified(vertex, pacer.subtask, checkpointId);
        }

        public CompletableFuture<Void> isAvailable() {
            return available;
        }

        public void addSplits(List<RangeSplit> added) {
            splits.addAll(added);
            available.complete(null);
        }

        public void notifyNoMoreSplits() {
            noMoreSplits = true;
            available.complete(null);
        }

        public void close() {
            Faults.closing(vertex, pacer.subtask);
        }
    }

    /** `records` ids per subtask from `first`: split i for subtask i (RangeEnumerator), or with
     * `splits` > 0 ("splits": N, split assignment) all of them cut into N splits that a lazy
     * enumerator hands out one per request (LazyEnumerator, LazyReader). */
    static final class RangeSource implements Source<Long, RangeSplit, List<RangeSplit>> {
        final String vertex;
        final long first;
        final long records;
        final long delayMs;
        final long seed;
        final FailPoint fail;
        final int splits;

        RangeSource(String vertex, long first, long records, long delayMs, long seed, FailPoint fail, int splits) {
            this.vertex = vertex;
            this.first = first;
            this.records = records;
            this.delayMs = delayMs;
            this.seed = seed;
            this.fail = fail;
            this.splits = splits;
        }

        public Boundedness getBoundedness() {
            return Boundedness.BOUNDED;
        }

        public SplitEnumerator<RangeSplit, List<RangeSplit>> createEnumerator(SplitEnumeratorContext<RangeSplit> context) {
            List<RangeSplit> all = new ArrayList<>();
            if (splits > 0) {
                long total = records * context.currentParallelism();
                for (int i = 0; i < splits; i++) {
                    long from = first + total * i / splits;
                    all.add(new RangeSplit(i, from, first + total * (i + 1) / splits - from, 0));
                }
                return new LazyEnumerator(vertex, context, all, splits);
            }
            for (int i = 0; i < context.currentParallelism(); i++) {
                all.add(new RangeSplit(i, first + i * records, records, 0));
            }
            return new RangeEnumerator(vertex, context, all);
        }

        public SplitEnumerator<RangeSplit, List<RangeSplit>> restoreEnumerator(
                SplitEnumeratorContext<RangeSplit> context, List<RangeSplit> pending) {
            return splits > 0 ? new LazyEnumerator(vertex, context, pending, splits) : new RangeEnumerator(vertex, context, pending);
        }

        public SimpleVersionedSerializer<RangeSplit> getSplitSerializer() {
            return new SplitSerializer();
        }

        public SimpleVersionedSerializer<List<RangeSplit>> getEnumeratorCheckpointSerializer() {
            return new PendingSerializer();
        }

        public SourceReader<Long, RangeSplit> createReader(SourceReaderContext context) {
            return splits > 0 ? new LazyReader(vertex, context, delayMs, seed, fail)
                    : new RangeReader(vertex, context.getIndexOfSubtask(), delayMs, seed, fail);
        }
    }

    // ---- "splits": a lazy FLIP-27 source (split assignment, issue 25 item 1) -----------------

    /** Our own lines about split assignment: Flink logs neither the assignment nor what a reader
     * holds (docs/conformance.md lists them; flipcheck/flink/conform_split_assignment.py reads them). */
    static final org.slf4j.Logger SPLITS_LOG = org.slf4j.LoggerFactory.getLogger("flipcheck.SplitAssignment");

    static String ids(Collection<? extends RangeSplit> splits) {
        List<Integer> numbers = new ArrayList<>();
        for (RangeSplit split : splits) {
            numbers.add(split.number);
        }
        Collections.sort(numbers);
        return numbers.toString();
    }

    /** Hands out one split per request, always its smallest pending one (the model's A2), so a
     * reader's next split may be on its way across a checkpoint. */
    static final class LazyEnumerator implements SplitEnumerator<RangeSplit, List<RangeSplit>> {
        final String vertex;
        final SplitEnumeratorContext<RangeSplit> context;
        final java.util.TreeMap<Integer, RangeSplit> pending = new java.util.TreeMap<>();
        final int total;

        LazyEnumerator(String vertex, SplitEnumeratorContext<RangeSplit> context, List<RangeSplit> pending, int total) {
            this.vertex = vertex;
            this.context = context;
            this.total = total;
            Faults.lazySource(vertex, total);
            for (RangeSplit split : pending) {
                this.pending.put(split.number, split);
            }
        }

        public void start() {
            SPLITS_LOG.info("flipcheck splits {}: enumerator started, pending {}", vertex, ids(pending.values()));
            Faults.enumeratorStart(vertex, context);
        }

        public void handleSplitRequest(int subtask, String host) {
            if (pending.isEmpty()) {
                SPLITS_LOG.info("flipcheck splits {}: no more splits for subtask {}", vertex, subtask);
                context.signalNoMoreSplits(subtask);
                return;
            }
            // Before the split leaves `pending`: an enumerator that throws keeps what it had.
            Faults.beforeAssignment(vertex, total - pending.size(), total);
            Map.Entry<Integer, RangeSplit> next = pending.pollFirstEntry();
            SPLITS_LOG.info("flipcheck splits {}: assigned split {} to subtask {}", vertex, next.getKey(), subtask);
            context.assignSplit(next.getValue(), subtask);
        }

        public void addSplitsBack(List<RangeSplit> splits, int subtask) {
            SPLITS_LOG.info("flipcheck splits {}: splits {} added back from subtask {}", vertex, ids(splits), subtask);
            for (RangeSplit split : splits) {
                pending.put(split.number, split);
            }
        }

        public void addReader(int subtask) {}

        public List<RangeSplit> snapshotState(long checkpointId) {
            Faults.enumeratorSnapshot(vertex, checkpointId, context);
            SPLITS_LOG.info("flipcheck splits {}: enumerator snapshot for checkpoint {}, pending {}", vertex, checkpointId,
                    ids(pending.values()));
            return copies(pending.values());
        }

        public void close() {}
    }

    /** Reads its smallest unfinished split first (the model's A4), asks for the next split while
     * it holds fewer than two, and logs what it receives, restores, snapshots and finishes. */
    static final class LazyReader implements SourceReader<Long, RangeSplit> {
        final String vertex;
        final int subtask;
        final Pacer pacer;
        final SourceReaderContext context;
        final java.util.TreeMap<Integer, RangeSplit> splits = new java.util.TreeMap<>();
        boolean started;
        boolean requested;
        boolean noMoreSplits;
        boolean ended;
        CompletableFuture<Void> available = new CompletableFuture<>();
        long emitted;
        long requestAfter;  // a checkpoint just snapshot, for delay-after-split-request (0: none)

        LazyReader(String vertex, SourceReaderContext context, long delayMs, long seed, FailPoint fail) {
            this.vertex = vertex;
            this.context = context;
            this.subtask = context.getIndexOfSubtask();
            this.pacer = new Pacer(vertex, subtask, delayMs, seed, fail);
            Faults.attemptStarts(vertex, subtask);
        }

        void requestIfLow() {
            if (started && !requested && !noMoreSplits && splits.size() < 2) {
                requested = true;
                context.sendSplitRequest();
            }
        }

        /** delay-after-split-request: at the first poll after the snapshot of its checkpoint, one
         * more request (a reader may ask at any time), then the task thread sleeps. */
        void requestAfterSnapshot() {
            if (requestAfter > 0 && Faults.armedAfterSplitRequest(vertex, subtask, requestAfter)) {
                requested = true;
                context.sendSplitRequest();
                Faults.afterSplitRequest(vertex, subtask, requestAfter);
            }
            requestAfter = 0;
        }

        public void start() {
            started = true;
            requestIfLow();
        }

        public InputStatus pollNext(ReaderOutput<Long> output) throws Exception {
            Faults.polling(vertex, subtask);
            requestAfterSnapshot();
            Map.Entry<Integer, RangeSplit> current = splits.firstEntry();
            if (current != null) {
                RangeSplit split = current.getValue();
                pacer.emitNext(split, emitted + 1, output);
                emitted++;
                if (split.offset >= split.count) {
                    splits.remove(current.getKey());
                    SPLITS_LOG.info("flipcheck splits {}: subtask {} finished split {}", vertex, subtask, split.number);
                    requestIfLow();
                }
                return InputStatus.MORE_AVAILABLE;
            }
            if (noMoreSplits) {
                if (!ended) {
                    ended = true;
                    SPLITS_LOG.info("flipcheck splits {}: subtask {} end of input", vertex, subtask);
                    Faults.inputEnded(vertex, subtask);
                }
                return InputStatus.END_OF_INPUT;
            }
            if (available.isDone()) {
                available = new CompletableFuture<>();
            }
            return InputStatus.NOTHING_AVAILABLE;
        }

        public List<RangeSplit> snapshotState(long checkpointId) {
            SPLITS_LOG.info("flipcheck splits {}: subtask {} snapshot for checkpoint {}, splits {}", vertex, subtask,
                    checkpointId, ids(splits.values()));
            Faults.onSourceSnapshot(vertex, checkpointId, emitted);
            Faults.snapshot(vertex, subtask, checkpointId);
            requestAfter = checkpointId;
            return copies(splits.values());
        }

        public void notifyCheckpointComplete(long checkpointId) {
            Faults.onSourceNotified(vertex, checkpointId);
            Faults.notified(vertex, subtask, checkpointId);
        }

        public CompletableFuture<Void> isAvailable() {
            return available;
        }

        public void addSplits(List<RangeSplit> added) {
            // SourceOperator hands the restored splits over before it starts the reader.
            SPLITS_LOG.info("flipcheck splits {}: subtask {} {} splits {}", vertex, subtask,
                    started ? "received" : "restored", ids(added));
            for (RangeSplit split : added) {
                splits.put(split.number, split);
            }
            if (started) {
                requested = false;
            }
            requestIfLow();
            available.complete(null);
        }

        public void notifyNoMoreSplits() {
            SPLITS_LOG.info("flipcheck splits {}: subtask {} told no more splits", vertex, subtask);
            noMoreSplits = true;
            requested = false;
            available.complete(null);
        }

        public void close() {
            Faults.closing(vertex, subtask);
        }
    }

    // ---- operators ----------------------------------------------------------------------------

    static final class HashKey implements KeySelector<Long, Long> {
        final long seed;

        HashKey(long seed) {
            this.seed = seed;
        }

        public Long getKey(Long value) {
            long x = (value ^ seed) * 0x9E3779B97F4A7C15L;
            return x ^ (x >>> 29);
        }
    }

    /** What Pass, PassCo and Discard do at the protocol points: keep their state (Handling) and
     * call the hooks of the faults (Faults.java). close() stays theirs: a class's wins over a default. */
    interface Hooked extends CheckpointedFunction, CheckpointListener {
        Handling handling();

        int subtaskIndex();

        default void initializeState(FunctionInitializationContext context) throws Exception {
            handling().initialize(context, subtaskIndex());
        }

        default void snapshotState(FunctionSnapshotContext context) throws Exception {
            handling().snapshot(context.getCheckpointId());
        }

        default void notifyCheckpointComplete(long checkpointId) {
            handling().notified(checkpointId);
        }
    }

    /** One input: passes every record on. */
    static final class Pass extends RichMapFunction<Long, Long> implements Hooked {
        final Handling handling;

        Pass(Handling handling) {
            this.handling = handling;
        }

        public Long map(Long value) {
            handling.handle(Compat.subtask(getRuntimeContext()));
            return value;
        }

        public Handling handling() {
            return handling;
        }

        public int subtaskIndex() {
            return Compat.subtask(getRuntimeContext());
        }

        public void close() throws Exception {
            handling.closing();
            super.close();
        }
    }

    /** Two inputs: passes the records of both on. */
    static final class PassCo extends RichCoMapFunction<Long, Long, Long> implements Hooked {
        final Handling handling;

        PassCo(Handling handling) {
            this.handling = handling;
        }

        public Long map1(Long value) {
            handling.handle(Compat.subtask(getRuntimeContext()));
            return value;
        }

        public Long map2(Long value) {
            return map1(value);
        }

        public Handling handling() {
            return handling;
        }

        public int subtaskIndex() {
            return Compat.subtask(getRuntimeContext());
        }

        public void close() throws Exception {
            handling.closing();
            super.close();
        }
    }

    /** Pass as its operator (StreamMap): a function has no finish(), the operator does (finish-throw). */
    static final class Finishing extends StreamMap<Long, Long> {
        final Handling handling;

        Finishing(Pass pass) {
            super(pass);
            this.handling = pass.handling;
        }

        public void finish() throws Exception {
            handling.finishing();
            super.finish();
        }
    }

    /** PassCo as its operator (CoStreamMap), for finish() as Finishing. */
    static final class FinishingCo extends CoStreamMap<Long, Long, Long> {
        final Handling handling;

        FinishingCo(PassCo pass) {
            super(pass);
            this.handling = pass.handling;
        }

        public void finish() throws Exception {
            handling.finishing();
            super.finish();
        }
    }

    /** A vertex without outputs and without a sink flag: handles records and drops them. */
    static final class Discard extends RichSinkFunction<Long> implements Hooked {
        final Handling handling;

        Discard(Handling handling) {
            this.handling = handling;
        }

        public void invoke(Long value, SinkFunction.Context context) {
            handling.handle(Compat.subtask(getRuntimeContext()));
        }

        public void finish() {
            handling.finishing();
        }

        public Handling handling() {
            return handling;
        }

        public int subtaskIndex() {
            return Compat.subtask(getRuntimeContext());
        }

        public void close() throws Exception {
            handling.closing();
            super.close();
        }
    }

    // ---- exactly-once file output -------------------------------------------------------------

    /** OUT/output/<vertex>/{pending,committed}/<name>: one record id per line. */
    static final class Files2pc implements Serializable {
        final String pending;
        final String committed;

        Files2pc(String outDir, String vertex) {
            Path base = Paths.get(outDir, "output", vertex);
            this.pending = base.resolve("pending").toString();
            this.committed = base.resolve("committed").toString();
        }

        static String newName(String vertex, int subtask) {
            return vertex.replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + subtask + "-" + UUID.randomUUID();
        }

        void append(String name, Long value) throws IOException {
            Path file = Paths.get(pending, name);
            Files.createDirectories(file.getParent());
            Files.write(file, (value + "\n").getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        }

        boolean hasPending(String name) {
            return Files.exists(Paths.get(pending, name));
        }

        /** Idempotent: a committed name is committed again without effect; an empty transaction
         * (no file) commits nothing. */
        void commit(String name) throws IOException {
            Path from = Paths.get(pending, name);
            Path to = Paths.get(committed, name);
            if (!Files.exists(from)) {
                return;
            }
            Files.createDirectories(to.getParent());
            try {
                Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
            }
        }

        void abort(String name) {
            try {
                Files.deleteIfExists(Paths.get(pending, name));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** "two_phase_commit_sink": Flink's TwoPhaseCommitSinkFunction, a transaction per checkpoint. */
    static final class TwoPhaseFileSink extends TwoPhaseCommitSinkFunction<Long, String, Void> {
        final Handling handling;
        final Files2pc files;

        TwoPhaseFileSink(Handling handling, String outDir) {
            super(StringSerializer.INSTANCE, VoidSerializer.INSTANCE);
            this.handling = handling;
            this.files = new Files2pc(outDir, handling.vertex);
        }

        int subtask() {
            return Compat.subtask(getRuntimeContext());
        }

        protected String beginTransaction() {
            return Files2pc.newName(handling.vertex, subtask());
        }

        protected void invoke(String transaction, Long value, SinkFunction.Context context) throws Exception {
            handling.handle(subtask());
            files.append(transaction, value);
        }

        protected void preCommit(String transaction) {
            // Every record is already written through to the pending file.
        }

        protected void commit(String transaction) {
            try {
                files.commit(transaction);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }

        protected void abort(String transaction) {
            files.abort(transaction);
        }

        public void initializeState(FunctionInitializationContext context) throws Exception {
            handling.initialize(context, subtask());   // restore-throw before the transactions are recovered
            super.initializeState(context);
        }

        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            handling.snapshot(context.getCheckpointId());
            super.snapshotState(context);
        }

        // TwoPhaseCommitSinkFunction.finish (final) calls it at the end of input.
        protected void finishProcessing(String transaction) {
            handling.finishing();
            super.finishProcessing(transaction);
        }

        public void close() throws Exception {
            handling.closing();
            super.close();
        }
    }

    /** "sink_v2": what its writer and committer do, on whichever Sink API the release has (the
     * SinkV2 adapter implements the API and delegates here): a writer's committable at each
     * checkpoint is its pending file, the committer renames it. */
    static final class Transactions implements Serializable {
        final String vertex;
        final Files2pc files;
        final FailPoint fail;

        Transactions(String vertex, String outDir, FailPoint fail) {
            this.vertex = vertex;
            this.files = new Files2pc(outDir, vertex);
            this.fail = fail;
        }

        Writer writer(int subtask) {
            return new Writer(subtask);
        }

        void commit(String name) throws IOException {
            files.commit(name);
        }

        /** After a committer committed `count` committables: where Faults may strike. */
        void committed(int count) {
            Faults.afterCommit(vertex, count);
        }

        final class Writer {
            final int subtask;
            final Handling handling = new Handling(vertex, fail, false);
            String current;

            Writer(int subtask) {
                this.subtask = subtask;
            }

            /** The writer's end of input (SinkWriter.flush(true), or Sink V1's final prepareCommit). */
            void endOfInput() {
                Faults.endOfInput(vertex);
            }

            void write(Long value) throws IOException {
                handling.handle(subtask);
                if (current == null) {
                    current = Files2pc.newName(vertex, subtask);
                }
                files.append(current, value);
            }

            List<String> prepareCommit() {
                if (current == null) {
                    return Collections.emptyList();
                }
                String done = current;
                current = null;
                return Collections.singletonList(done);
            }
        }
    }

    /** A committable (a pending file's name) as UTF-8 bytes. */
    static final class NameSerializer implements SimpleVersionedSerializer<String> {
        public int getVersion() {
            return 1;
        }

        public byte[] serialize(String name) {
            return name.getBytes(StandardCharsets.UTF_8);
        }

        public String deserialize(int version, byte[] data) {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    // ---- the job ------------------------------------------------------------------------------

    static DataStream<Long> partition(DataStream<Long> stream, String how, long seed) {
        switch (how) {
            case "forward": return stream.forward();
            case "rescale": return stream.rescale();
            case "rebalance": return stream.rebalance();
            case "hash": return stream.keyBy(new HashKey(seed));
            default: throw new IllegalArgumentException("unknown partitioning " + how);
        }
    }

    static void build(StreamExecutionEnvironment env, JsonNode spec, String outDir) {
        long seed = spec.get("seed").asLong();
        long delayMs = spec.get("record_delay_ms").asLong();
        JsonNode failNode = spec.get("fail");
        FailPoint fail = failNode == null || failNode.isNull() ? null
                : new FailPoint(failNode.get("vertex").asText(), failNode.get("subtask").asInt(), failNode.get("record").asLong(),
                        failNode.path("how").asText("task"), spec.path("local_backup_dir").asText(""));
        Map<String, DataStream<Long>> streams = new HashMap<>();
        for (JsonNode v : spec.get("vertices")) {
            String id = v.get("id").asText();
            int parallelism = v.get("parallelism").asInt();
            String role = v.get("role").asText();
            boolean union = v.get("union_list_state").asBoolean();
            List<DataStream<Long>> inputs = new ArrayList<>();
            List<String> partitionings = new ArrayList<>();
            for (JsonNode input : v.get("inputs")) {
                partitionings.add(input.get("partitioning").asText());
                inputs.add(partition(streams.get(input.get("source").asText()), input.get("partitioning").asText(), seed));
            }
            if (role.equals("source")) {
                RangeSource range = new RangeSource(id, v.get("first_record").asLong(), v.get("records").asLong(), delayMs,
                        seed, fail, v.hasNonNull("splits") ? v.get("splits").asInt() : 0);
                SingleOutputStreamOperator<Long> source = env
                        .fromSource(range, WatermarkStrategy.noWatermarks(), id, Types.LONG)
                        .uid(id).setParallelism(parallelism);
                if (v.get("outputs").asInt() == 0) {
                    // A lone source: a Flink job needs a sink; chained, it adds no job vertex.
                    source.addSink(new Discard(new Handling(id + "-discard", null, false))).name(id + "-discard").uid(id + "-discard")
                            .setParallelism(parallelism);
                } else {
                    source.disableChaining();
                }
                streams.put(id, source);
                continue;
            }
            if (v.path("keyed_state").asBoolean(false)) {
                // engine.py allows it on an operator with one ALL_TO_ALL input only.
                streams.put(id, streams.get(v.get("inputs").get(0).get("source").asText()).keyBy(new LocalRecovery.BlockKey())
                        .map(new LocalRecovery.KeyedCount(new Handling(id, fail, union)), Types.LONG).name(id).uid(id)
                        .setParallelism(parallelism).disableChaining());
                continue;
            }
            DataStream<Long> in = inputs.get(0);
            if (role.equals("operator") && inputs.size() == 2) {
                SingleOutputStreamOperator<Long> co;
                if (partitionings.get(0).equals("hash") && partitionings.get(1).equals("hash")) {
                    co = streams.get(v.get("inputs").get(0).get("source").asText())
                            .connect(streams.get(v.get("inputs").get(1).get("source").asText()))
                            .keyBy(new HashKey(seed), new HashKey(seed))
                            .transform(id, Types.LONG, new FinishingCo(new PassCo(new Handling(id, fail, union))));
                } else {
                    co = inputs.get(0).connect(inputs.get(1)).transform(id, Types.LONG, new FinishingCo(new PassCo(new Handling(id, fail, union))));
                }
                streams.put(id, co.name(id).uid(id).setParallelism(parallelism).disableChaining());
                continue;
            }
            if (inputs.size() > 1) {
                in = inputs.get(0).union(inputs.subList(1, inputs.size()).toArray(new DataStream[0]));
            }
            switch (role) {
                case "operator":
                    streams.put(id, in.transform(id, Types.LONG, new Finishing(new Pass(new Handling(id, fail, union)))).name(id).uid(id)
                            .setParallelism(parallelism).disableChaining());
                    break;
                case "two_phase_commit_sink":
                    in.addSink(new TwoPhaseFileSink(new Handling(id, fail, union), outDir)).name(id).uid(id)
                            .setParallelism(parallelism).disableChaining();
                    break;
                case "sink_v2":
                    // No disableChaining: the writer and its committer chain into one task.
                    in.sinkTo(new SinkV2(new Transactions(id, outDir, fail))).name(id).uid(id).setParallelism(parallelism);
                    break;
                case "discard":
                    in.addSink(new Discard(new Handling(id, fail, union))).name(id).uid(id).setParallelism(parallelism).disableChaining();
                    break;
                default:
                    throw new IllegalArgumentException("unknown role " + role);
            }
        }
    }

    /** The spec's "configuration": string keys, which engine.py names as the release spells them. */
    static Configuration configuration(JsonNode spec) {
        Configuration conf = new Configuration();
        for (Iterator<Map.Entry<String, JsonNode>> it = spec.get("configuration").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            conf.setString(entry.getKey(), entry.getValue().asText());
        }
        return conf;
    }

    static String fetch(URI rest, String path) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        HttpRequest request = HttpRequest.newBuilder(rest.resolve(path)).timeout(Duration.ofSeconds(30)).GET().build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("GET " + path + ": HTTP " + response.statusCode() + " " + response.body());
        }
        return response.body();
    }

    /** The job graph of `spec`, built in an environment configured with `conf`. */
    static JobGraph jobGraph(JsonNode spec, Configuration conf) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        build(env, spec, spec.get("out").asText());
        org.apache.flink.streaming.api.graph.StreamGraph streamGraph = env.getStreamGraph();
        streamGraph.setJobName(spec.get("job_name").asText());
        return streamGraph.getJobGraph();
    }

    /** The slots a job of `spec` needs: its largest parallelism. */
    static int slots(JsonNode spec) {
        int slots = 1;
        for (JsonNode v : spec.get("vertices")) {
            slots = Math.max(slots, v.get("parallelism").asInt());
        }
        return slots;
    }

    public static void main(String[] args) throws Exception {
        say("main", Long.toString(System.currentTimeMillis()));
        ObjectMapper json = new ObjectMapper();
        JsonNode spec = json.readTree(new File(args[0]));
        Faults.configure(spec.get("faults"));
        Faults.configurePoints(spec.get("fault_points"));
        Batch.configure(spec.get("batch"));
        Configuration conf = configuration(spec);
        int slots = slots(spec);
        JobGraph jobGraph = jobGraph(spec, conf);

        // Local recovery runs on two TaskManagers, each with half the slots, so a job spreads over both.
        int taskManagers = spec.path("taskmanagers").asInt(1);
        MiniClusterConfiguration clusterConf = Batch.cluster(new MiniClusterConfiguration.Builder())
                .setConfiguration(conf).setNumTaskManagers(taskManagers)
                .setNumSlotsPerTaskManager((slots + taskManagers - 1) / taskManagers).build();
        int exit;
        try (MiniCluster cluster = EventDrops.miniCluster(clusterConf)) {
            cluster.start();
            say("cluster_up", Long.toString(System.currentTimeMillis()));
            exit = runJob(cluster, jobGraph, spec, json);
        }
        say("closed", Long.toString(System.currentTimeMillis()));
        System.exit(exit);  // Flink leaves non-daemon threads behind
    }

    /** Submits `jobGraph` to the running `cluster`, writes its plan, waits for its end and says
     * the result; 0 when it succeeded. Shared by main (one job per JVM) and JobServer (many). */
    static int runJob(MiniCluster cluster, JobGraph jobGraph, JsonNode spec, ObjectMapper json) throws Exception {
        String outDir = spec.get("out").asText();
        URI rest = cluster.getRestAddress().get();
        say("rest", rest.toString());
        Faults.startContention();
        JobID jobId = cluster.submitJob(jobGraph).get().getJobID();
        say("submitted", Long.toString(System.currentTimeMillis()));
        say("job_id", jobId.toString());
        LocalRecovery.watch(cluster, rest, jobId, jobGraph);
        // Until its JobMaster runs, the job is INITIALIZING and REST serves a sparse graph whose
        // plan is empty (JobMasterServiceLeadershipRunner.requestJob): wait for the real one.
        while (cluster.getJobStatus(jobId).get() == org.apache.flink.api.common.JobStatus.INITIALIZING) {
            Thread.sleep(20);
        }
        // The plan exactly as the REST API serves it (JsonPlanGenerator on the submitted JobGraph).
        Files.writeString(Paths.get(outDir, "plan.json"), fetch(rest, "/jobs/" + jobId + "/plan"));
        ObjectNode vertices = json.createObjectNode();
        for (JobVertex vertex : jobGraph.getVertices()) {
            vertices.put(vertex.getID().toString(), vertex.getName());
        }
        say("vertices", json.writeValueAsString(vertices));
        Batch.start(cluster, jobId);
        JobResult result = cluster.requestJobResult(jobId).get();
        say("done", Long.toString(System.currentTimeMillis()));
        ObjectNode outcome = json.createObjectNode();
        // Asked of the dispatcher: JobResult carries a JobStatus only from 2.3 on, and the REST
        // API serves a cached execution graph that may still say RUNNING.
        outcome.put("status", cluster.getJobStatus(jobId).get().name());
        result.getSerializedThrowable().ifPresent(outer -> {
            Throwable root = outer;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            outcome.put("cause", root == outer ? outer.getMessage()
                    : outer.getMessage() + " (root cause: " + root.getMessage() + ")");
        });
        say("result", json.writeValueAsString(outcome));
        return result.isSuccess() ? 0 : 1;
    }
}

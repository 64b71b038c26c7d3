// flipcheck's component harness for approximate recovery (`flipcheck flink component
// approximate-recovery`): drives Flink's own PipelinedApproximateSubpartition, its read views and
// the writer in front of it (PipelinedResultPartition, i.e. BufferWritingResultPartition#emitRecord
// and #broadcastEvent) through the event sequences of model/approximate_recovery.py, and prints
// what each step did as JSON lines. It runs no job: the approximate-recovery switch cannot start a
// job on Flink 1.14-2.3 (docs/approximate-recovery.md, "Flink's component"). What it relies on in
// Flink's classes is docs/reference/recovery-facts.md §1.8.
//
// It lives in Flink's package because the subpartition's constructor is package-private; it is
// compiled by flipcheck/flink/engine.py against a release's jars (nothing in Flink is changed).
// Constructor arities and the availability listener differ between releases, so both are reached
// through reflection; everything else compiles unchanged against 1.14 to 2.3.
//
// Usage: java -cp CLASSES:FLINK_LIB/* org.apache.flink.runtime.io.network.partition.FlipcheckApproximateHarness
// stdin, one command a line (written by flipcheck/flink/component.py, never by hand):
//   sequence NAME CAPACITY    a fresh partition of one subpartition, buffers of CAPACITY bytes
//   emit N                    the writer emits one record of N bytes (emitRecord)
//   barrier 1|0               the writer broadcasts checkpoint barrier #events: 1 an aligned,
//                             exactly-once barrier (blocks the subpartition), 0 an at-least-once one
//   connect A                 consumer attempt A requests a view (createReadView)
//   release_view A            attempt A's view is released (releaseAllResources)
//   poll A                    attempt A's live view polls once (getNextBuffer)
//   resume A                  attempt A's live view resumes consumption (resumeConsumption)
//   release_partition         the partition is released (ResultPartition#release)
// stdout: {"harness": ..., "flink": VERSION}, then per step {"sequence", "step", "out": [...]}
// with the model's output vocabulary: ["view_created", A], ["view_released", A],
// ["rejected", A, REASON], ["none", A], ["data", A, SEQ, START, END] (stream offsets: byte k of
// the stream holds k % 256, so a slice's first byte names its offset), ["event", A, SEQ, ID,
// BLOCKING], ["partition_released"], and ["error", TEXT] for anything Flink threw.

package org.apache.flink.runtime.io.network.partition;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.io.network.api.CheckpointBarrier;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.BufferPool;
import org.apache.flink.runtime.io.network.buffer.NetworkBufferPool;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.util.EnvironmentInformation;

public final class FlipcheckApproximateHarness {
    /** Flink's default network buffers per channel: pollBuffer then never hands out empty buffers. */
    private static final int EXCLUSIVE_BUFFERS_PER_CHANNEL = 2;
    /** Offsets are written as k % 256, so a sequence writes at most this many bytes. */
    private static final int MAX_BYTES = 256;

    private final NetworkBufferPool networkBuffers;
    private final PipelinedResultPartition partition;
    private final PipelinedApproximateSubpartition subpartition;
    private final Map<Integer, ResultSubpartitionView> views = new TreeMap<>();
    private int written;
    private int events;

    private FlipcheckApproximateHarness(int capacity) throws Exception {
        int segments = MAX_BYTES / capacity + 2;
        networkBuffers = new NetworkBufferPool(segments, capacity);
        ResultSubpartition[] subpartitions = new ResultSubpartition[1];
        // As ResultPartitionFactory builds a PIPELINED_APPROXIMATE partition: the partition first,
        // then its subpartition pointing back at it.
        partition = new PipelinedResultPartition("flipcheck-producer", 0, new ResultPartitionID(),
                ResultPartitionType.PIPELINED_APPROXIMATE, subpartitions, 1, new ResultPartitionManager(), null,
                () -> bufferPool(networkBuffers, segments));
        subpartition = newSubpartition(capacity, partition);
        subpartitions[0] = subpartition;
        partition.setup();
    }

    /** (index, exclusive buffers, parent) up to 1.20; (index, exclusive buffers, starting buffer size, parent) in 2.x. */
    private static PipelinedApproximateSubpartition newSubpartition(int capacity, ResultPartition parent) throws Exception {
        for (Constructor<?> constructor : PipelinedApproximateSubpartition.class.getDeclaredConstructors()) {
            constructor.setAccessible(true);
            if (constructor.getParameterCount() == 3) {
                return (PipelinedApproximateSubpartition) constructor.newInstance(0, EXCLUSIVE_BUFFERS_PER_CHANNEL, parent);
            }
            if (constructor.getParameterCount() == 4) {
                return (PipelinedApproximateSubpartition) constructor.newInstance(
                        0, EXCLUSIVE_BUFFERS_PER_CHANNEL, capacity, parent);
            }
        }
        throw new IllegalStateException("no known constructor of PipelinedApproximateSubpartition");
    }

    /**
     * A pool for one subpartition (the two-argument createBufferPool knows no subpartitions, and
     * the writer's request for subpartition 0 fails): (required, max, subpartitions, max per
     * subpartition) up to 1.16, plus the overdraft buffers from 1.17.
     */
    private static BufferPool bufferPool(NetworkBufferPool networkBuffers, int segments) throws IOException {
        try {
            for (Method method : NetworkBufferPool.class.getMethods()) {
                if (method.getName().equals("createBufferPool") && method.getParameterCount() == 4) {
                    return (BufferPool) method.invoke(networkBuffers, segments, segments, 1, segments);
                }
                if (method.getName().equals("createBufferPool") && method.getParameterCount() == 5) {
                    return (BufferPool) method.invoke(networkBuffers, segments, segments, 1, segments, 0);
                }
            }
        } catch (ReflectiveOperationException failed) {
            throw new IOException(failed);
        }
        throw new IOException("no known createBufferPool of NetworkBufferPool");
    }

    /** A listener that ignores notifications (its one abstract method changed arity in 2.0). */
    private static BufferAvailabilityListener quietListener() {
        return (BufferAvailabilityListener) Proxy.newProxyInstance(
                BufferAvailabilityListener.class.getClassLoader(), new Class<?>[] {BufferAvailabilityListener.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "hashCode": return System.identityHashCode(proxy);
                        case "equals": return proxy == args[0];
                        case "toString": return "flipcheck listener";
                        default: return null;
                    }
                });
    }

    private void close() {
        partition.release();
        networkBuffers.destroyAllBufferPools();
        networkBuffers.destroy();
    }

    private List<Integer> liveViews() {
        List<Integer> live = new ArrayList<>();
        for (Map.Entry<Integer, ResultSubpartitionView> entry : views.entrySet()) {
            if (!entry.getValue().isReleased()) {
                live.add(entry.getKey());
            }
        }
        return live;
    }

    /** One step: the view changes first (released, then created), then what the step returned. */
    private List<String> step(String kind, int argument) {
        List<Integer> liveBefore = liveViews();
        boolean releasedBefore = subpartition.isReleased();
        List<String> out = new ArrayList<>();
        try {
            switch (kind) {
                case "emit":
                    emit(argument);
                    break;
                case "barrier":
                    CheckpointOptions options = argument == 1
                            ? CheckpointOptions.alignedNoTimeout(CheckpointType.CHECKPOINT, CheckpointStorageLocationReference.getDefault())
                            : CheckpointOptions.notExactlyOnce(CheckpointType.CHECKPOINT, CheckpointStorageLocationReference.getDefault());
                    partition.broadcastEvent(new CheckpointBarrier(events, 0L, options), false);
                    events++;
                    break;
                case "connect":
                    try {
                        views.put(argument, subpartition.createReadView(quietListener()));
                    } catch (IllegalStateException refused) {
                        out.add(array(quote("rejected"), argument, quote(subpartition.isReleased() ? "released"
                                : refused.getClass().getSimpleName())));
                    }
                    break;
                case "release_view":
                    if (views.containsKey(argument)) {
                        views.get(argument).releaseAllResources();
                    }
                    break;
                case "poll":
                    out.add(poll(argument));
                    break;
                case "resume":
                    ResultSubpartitionView view = views.get(argument);
                    if (view != null && !view.isReleased()) {
                        view.resumeConsumption();
                    }
                    break;
                case "release_partition":
                    partition.release();
                    break;
                default:
                    throw new IllegalArgumentException("unknown command " + kind);
            }
        } catch (Throwable thrown) {
            out.add(array(quote("error"), quote(thrown.getClass().getSimpleName() + ": " + thrown.getMessage())));
        }
        List<String> changes = new ArrayList<>();
        List<Integer> liveAfter = liveViews();
        for (int attempt : liveBefore) {
            if (!liveAfter.contains(attempt)) {
                changes.add(array(quote("view_released"), attempt));
            }
        }
        if (kind.equals("connect") && liveAfter.contains(argument) && !liveBefore.contains(argument)) {
            changes.add(array(quote("view_created"), argument));
        }
        if (subpartition.isReleased() && !releasedBefore) {
            out.add(array(quote("partition_released")));
        }
        changes.addAll(out);
        return changes;
    }

    private void emit(int length) throws Exception {
        if (length < 1 || written + length > MAX_BYTES) {
            throw new IllegalArgumentException("a sequence writes records of 1.." + MAX_BYTES + " bytes in all");
        }
        byte[] record = new byte[length];
        for (int k = 0; k < length; k++) {
            record[k] = (byte) (written + k);
        }
        written += length;
        partition.emitRecord(ByteBuffer.wrap(record), 0);
    }

    /** A released view's reader has left the network stack: it polls nothing (as the model's environment). */
    private String poll(int attempt) throws Exception {
        ResultSubpartitionView view = views.get(attempt);
        ResultSubpartition.BufferAndBacklog next = view == null || view.isReleased() ? null : view.getNextBuffer();
        if (next == null) {
            return array(quote("none"), attempt);
        }
        Buffer buffer = next.buffer();
        try {
            if (buffer.isBuffer()) {
                return data(attempt, next.getSequenceNumber(), buffer.getNioBufferReadable());
            }
            AbstractEvent event = EventSerializer.fromBuffer(buffer, getClass().getClassLoader());
            if (!(event instanceof CheckpointBarrier)) {
                return array(quote("error"), quote("unexpected event " + event));
            }
            return array(quote("event"), attempt, next.getSequenceNumber(), ((CheckpointBarrier) event).getId(),
                    buffer.getDataType().isBlockingUpstream());
        } finally {
            buffer.recycleBuffer();
        }
    }

    private static String data(int attempt, int sequence, ByteBuffer bytes) {
        int start = bytes.get(bytes.position()) & 0xff;
        int length = bytes.remaining();
        StringBuilder seen = new StringBuilder();
        boolean consecutive = true;
        for (int k = 0; k < length; k++) {
            int value = bytes.get(bytes.position() + k) & 0xff;
            consecutive &= value == ((start + k) & 0xff);
            seen.append(k == 0 ? "" : ",").append(value);
        }
        if (!consecutive) {
            return array(quote("garbled"), attempt, sequence, "[" + seen + "]");
        }
        return array(quote("data"), attempt, sequence, start, start + length);
    }

    private static String quote(String text) {
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                quoted.append('\\').append(c);
            } else if (c < 0x20) {
                quoted.append(String.format("\\u%04x", (int) c));
            } else {
                quoted.append(c);
            }
        }
        return quoted.append('"').toString();
    }

    private static String array(Object... items) {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < items.length; i++) {
            json.append(i == 0 ? "" : ", ").append(items[i]);
        }
        return json.append(']').toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("{\"harness\": \"approximate-subpartition\", \"flink\": "
                + quote(EnvironmentInformation.getVersion()) + "}");
        FlipcheckApproximateHarness harness = null;
        String sequence = null;
        int stepNumber = 0;
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" ");
            if (words[0].isEmpty()) {
                continue;
            }
            if (words[0].equals("sequence")) {
                if (harness != null) {
                    harness.close();
                }
                sequence = words[1];
                harness = new FlipcheckApproximateHarness(Integer.parseInt(words[2]));
                stepNumber = 0;
                continue;
            }
            if (harness == null) {
                System.err.println("a step before the first sequence line: " + line);
                System.exit(2);
            }
            stepNumber++;
            List<String> out = harness.step(words[0], words.length > 1 ? Integer.parseInt(words[1]) : 0);
            System.out.println("{\"sequence\": " + quote(sequence) + ", \"step\": " + stepNumber
                    + ", \"out\": " + array(out.toArray()) + "}");
        }
        if (harness != null) {
            harness.close();
        }
        System.out.flush();
    }
}

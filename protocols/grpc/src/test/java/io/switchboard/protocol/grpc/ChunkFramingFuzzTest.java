package io.switchboard.protocol.grpc;

import io.switchboard.codec.binary.BinaryCodec;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.DecoderCheck;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fuzzes the chunk framing of the bulk protocol as the server meets it: arbitrary bytes are cut
 * into gRPC messages, each parsed as a protobuf {@code Chunk} ({@link Frame.Incoming#parse}),
 * queued in a {@link ChunkQueue} with small limits, and decoded as a request. Input layout: one
 * byte picks the operation, then frames, each one length byte and that many bytes. Only
 * {@link WireFormatException} may come out, within 5 s; the queue must never ask for more
 * chunks than it was given plus its window; a request it reads must survive a round trip through
 * the writer.
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../ChunkFramingFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/grpc test -Dtest=ChunkFramingFuzzTest}.
 */
class ChunkFramingFuzzTest {
    private static final List<OperationDescriptor> OPS = ConformanceComponent.DESCRIPTOR.operations();
    private static final long MAX_MESSAGE = 1 << 20;
    private static final int MAX_CHUNK = 64;
    private static final BinaryLimits LIMITS = BinaryLimits.of(MAX_MESSAGE, 10_000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(WireFormatException.class), 8L << 20, 256);

    @FuzzTest(maxDuration = "2m")
    void framing(byte[] input) {
        if (input.length < 1) {
            return;
        }
        OperationDescriptor op = OPS.get((input[0] & 0xFF) % OPS.size());
        Object decoded = CHECK.run(input.length, () -> {
            AtomicLong requested = new AtomicLong();
            // the stream has ended before decoding starts, so the queue must never wait: waiting is an
            // undocumented exception (a failure), not a refusal
            ChunkQueue queue = new ChunkQueue(requested::addAndGet, Duration.ofSeconds(1),
                    () -> new IllegalStateException("the queue waited for data after the stream ended"),
                    MAX_MESSAGE, MAX_CHUNK);
            int frames = 0;
            int at = 1;
            while (at < input.length) {
                int n = Math.min(input[at] & 0xFF, input.length - at - 1);
                byte[] frame = Arrays.copyOfRange(input, at + 1, at + 1 + n);
                queue.add(Frame.Incoming.parse(new ByteArrayInputStream(frame)));
                frames++;
                at += 1 + n;
            }
            queue.end();
            try {
                BinaryReader in = new BinaryReader(op.service().codec(BinaryCodec.class), queue, LIMITS);
                Object request = in.readMessage(op.requestClass());
                in.expectEnd();
                if (requested.get() > frames) {
                    throw new IllegalStateException("the queue requested " + requested.get() + " chunks, was given "
                            + frames);
                }
                return request;
            } finally {
                queue.close();
            }
        });
        if (decoded != null) {
            BinaryCodec codec = op.service().codec(BinaryCodec.class);
            DecoderCheck.assertRoundTrip(decoded, v -> BinaryWriter.toBytes(codec, v, 10_000),
                    bytes -> BinaryReader.fromBytes(codec, bytes, LIMITS, op.requestClass()));
        }
    }
}

package io.switchboard.protocol.grpc;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.testing.DecoderCheck;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fuzzes the typed wire as the server meets it: arbitrary bytes are cut into gRPC messages, each
 * parsed as a {@link Part}, queued in a {@link PartQueue} with small limits, and merged into a
 * request by the generated {@link ProtoCodec}. Input layout: one byte picks the operation, then
 * parts, each one length byte and that many bytes. Only {@link WireFormatException} may come out,
 * within 5 s; the queue must never ask for more parts than it was given plus its window; a request
 * it reads must survive a round trip through the writer.
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../PartFramingFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/grpc test -Dtest=PartFramingFuzzTest}.
 */
class PartFramingFuzzTest {
    private static final List<OperationDescriptor> OPS = ConformanceComponent.DESCRIPTOR.operations();
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final long MAX_MESSAGE = 1 << 20;
    private static final MessageLimits LIMITS = MessageLimits.of(MAX_MESSAGE, 10_000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(WireFormatException.class), 8L << 20, 256);

    @FuzzTest(maxDuration = "2m")
    void framing(byte[] input) {
        if (input.length < 1) {
            return;
        }
        OperationDescriptor op = OPS.get((input[0] & 0xFF) % OPS.size());
        String message = op.requestElement().getLocalPart();
        Object decoded = CHECK.run(input.length, () -> {
            AtomicLong requested = new AtomicLong();
            // the stream has ended before reading starts, so the queue must never wait: waiting is an
            // undocumented exception (a failure), not a refusal
            PartQueue queue = new PartQueue(requested::addAndGet, Duration.ofSeconds(1),
                    () -> new IllegalStateException("the queue waited for data after the stream ended"), MAX_MESSAGE);
            int parts = 0;
            int at = 1;
            while (at < input.length) {
                int n = Math.min(input[at] & 0xFF, input.length - at - 1);
                byte[] part = Arrays.copyOfRange(input, at + 1, at + 1 + n);
                queue.add(Part.MARSHALLER.parse(new ByteArrayInputStream(part)));
                parts++;
                at += 1 + n;
            }
            queue.end();
            try {
                ProtoCodec.Reader reader = CODEC.reader(message, LIMITS, -1);
                Part.Scratch scratch = new Part.Scratch();
                for (Part p = queue.take(); p != null; p = queue.take()) {
                    reader.readPart(p.read(scratch), 0, p.length);
                }
                if (requested.get() > parts) {
                    throw new IllegalStateException("the queue requested " + requested.get() + " parts, was given "
                            + parts);
                }
                return reader.finish();
            } finally {
                queue.close();
            }
        });
        if (decoded != null) {
            DecoderCheck.assertRoundTrip(decoded, v -> CODEC.toBytes(message, v, 10_000),
                    bytes -> CODEC.fromBytes(message, bytes, LIMITS));
        }
    }
}

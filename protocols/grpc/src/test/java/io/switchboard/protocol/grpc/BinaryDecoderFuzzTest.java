package io.switchboard.protocol.grpc;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormat;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.DecoderCheck;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes the packed binary decoder ({@link BinaryReader} with the generated conformance codec)
 * with arbitrary bytes, as the gRPC server reads a request and the client reads a response.
 * The first byte picks the operation and direction, the second how the bytes are cut into
 * chunks; the rest is the message. Only {@link WireFormatException} may come out, within
 * 5 s and without allocating much more than the input could hold; a message it reads must survive
 * a round trip through the writer ({@link DecoderCheck#assertRoundTrip}).
 *
 * <p>{@code decodeDynamic} runs the same inputs through the model-driven codec of a client without
 * generated code.
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../BinaryDecoderFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/grpc test -Dtest=BinaryDecoderFuzzTest}.
 */
class BinaryDecoderFuzzTest {
    private static final BinaryCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(BinaryCodec.class);
    private static final List<OperationDescriptor> OPS = ConformanceComponent.DESCRIPTOR.operations();
    private static final io.switchboard.idl.runtime.ServiceDescriptor DYNAMIC =
            io.switchboard.codec.dynamic.DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema())
                    .descriptor();
    /** The server's defaults: 64 MiB, 2,000,000 nodes. */
    private static final BinaryLimits LIMITS = BinaryLimits.of(64L << 20, 2_000_000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(WireFormatException.class), 8L << 20, 256);

    @FuzzTest(maxDuration = "2m")
    void decode(byte[] input) {
        decode(CODEC, OPS, input);
    }

    /**
     * The same inputs through the model-driven codec of a client without generated code
     * ({@code DynamicBinaryCodec} on the conformance schema), which reads messages by element name.
     */
    @FuzzTest(maxDuration = "2m")
    void decodeDynamic(byte[] input) {
        decode(DYNAMIC.codec(BinaryCodec.class), DYNAMIC.operations(), input);
    }

    private static void decode(BinaryCodec codec, List<OperationDescriptor> ops, byte[] input) {
        if (input.length < 2) {
            return;
        }
        OperationDescriptor op = ops.get((input[0] & 0x7F) % ops.size());
        boolean response = (input[0] & 0x80) != 0;
        int piece = 1 + (input[1] & 0xFF);
        byte[] message = Arrays.copyOfRange(input, 2, input.length);
        String[] element = new String[1];
        Class<?>[] type = new Class<?>[1];
        Object value = CHECK.run(message.length, () -> {
            BinaryReader in = new BinaryReader(codec, pieces(message, piece), LIMITS);
            element[0] = op.requestElement().getLocalPart();
            type[0] = op.requestClass();
            if (response && op.oneWay()) {
                in.expectEnd();
                return null;
            }
            if (response) {
                int kind = in.readKind();
                if (kind == WireFormat.DECLARED_FAULT && op.faultInfoClass() != null) {
                    element[0] = op.faultElement().getLocalPart();
                    type[0] = op.faultInfoClass();
                } else if (kind == WireFormat.RESPONSE) {
                    element[0] = op.responseElement().getLocalPart();
                    type[0] = op.responseClass();
                } else {
                    throw WireFormatException.malformed("response starts with kind " + kind);
                }
            }
            Object read = in.readMessage(element[0], type[0]);
            in.expectEnd();
            return read;
        });
        if (value != null) {
            // what the reader took, the writer writes, and reads back the same
            DecoderCheck.assertRoundTrip(value, v -> BinaryWriter.toBytes(codec, v, 2_000_000),
                    bytes -> BinaryReader.fromBytes(codec, bytes, LIMITS, element[0], type[0]));
        }
    }

    /** The message in pieces of {@code size} bytes; like a chunked stream, it announces its whole size. */
    static BinaryReader.Source pieces(byte[] bytes, int size) {
        return new BinaryReader.Source() {
            private int at;

            @Override
            public ByteBuffer next() {
                if (at >= bytes.length) {
                    return null;
                }
                int n = Math.min(size, bytes.length - at);
                ByteBuffer b = ByteBuffer.wrap(bytes, at, n).slice();
                at += n;
                return b;
            }

            @Override
            public long knownSize() {
                return bytes.length;
            }
        };
    }
}

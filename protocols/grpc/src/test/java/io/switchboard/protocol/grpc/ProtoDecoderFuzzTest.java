package io.switchboard.protocol.grpc;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.testing.DecoderCheck;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes the protobuf decoders, the generated one ({@code ConformanceProtoCodec}) and the
 * model-driven one of a client without generated code ({@code DynamicProtoCodec}), with arbitrary
 * bytes as every message of the conformance interface: requests, as a server reads them, and
 * responses and declared faults, as a client does. The first byte picks the message, the second
 * how the bytes are cut into the buffers a part is read from in place; the rest is the message.
 * Only {@link WireFormatException} may come out, within 5 s and without allocating much more than
 * the input could hold; a message it reads must survive a round trip through the writer
 * ({@link DecoderCheck#assertRoundTrip}).
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../ProtoDecoderFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/grpc test -Dtest=ProtoDecoderFuzzTest}.
 */
class ProtoDecoderFuzzTest {
    private static final ServiceDescriptor DYNAMIC =
            io.switchboard.codec.dynamic.DynamicInterface.fromSchema(ConformanceComponent.DESCRIPTOR.schema()).descriptor();
    /** The server's defaults: 64 MiB, 2,000,000 nodes. */
    private static final MessageLimits LIMITS = MessageLimits.of(64L << 20, 2_000_000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(WireFormatException.class), 8L << 20, 256);

    @FuzzTest(maxDuration = "2m")
    void decode(byte[] input) {
        decode(ConformanceComponent.DESCRIPTOR, input);
    }

    /** The same inputs through the model-driven codec, which reads messages as records. */
    @FuzzTest(maxDuration = "2m")
    void decodeDynamic(byte[] input) {
        decode(DYNAMIC, input);
    }

    /** Every message of an interface, in operation order: request, response, declared fault. */
    static List<String> messages(ServiceDescriptor d) {
        List<String> names = new ArrayList<>();
        for (OperationDescriptor op : d.operations()) {
            names.add(op.requestElement().getLocalPart());
            if (!op.oneWay()) {
                names.add(op.responseElement().getLocalPart());
            }
            if (op.faultInfoClass() != null) {
                names.add(op.faultElement().getLocalPart());
            }
        }
        return names;
    }

    private static void decode(ServiceDescriptor d, byte[] input) {
        if (input.length < 2) {
            return;
        }
        ProtoCodec codec = d.codec(ProtoCodec.class);
        List<String> messages = messages(d);
        String element = messages.get((input[0] & 0xFF) % messages.size());
        int piece = 1 + (input[1] & 0xFF);
        byte[] message = Arrays.copyOfRange(input, 2, input.length);
        Object value = CHECK.run(message.length, () -> {
            ProtoCodec.Reader reader = codec.reader(element, LIMITS, message.length);
            reader.readPart(pieces(message, piece), message.length);
            return reader.finish();
        });
        if (value != null) {
            // what the reader took, the writer writes, and reads back the same
            DecoderCheck.assertRoundTrip(value, v -> codec.toBytes(element, v, 2_000_000),
                    bytes -> codec.fromBytes(element, bytes, LIMITS));
        }
    }

    /** The message in buffers of {@code size} bytes, as gRPC's buffers hold a part. */
    static ProtoInput.Source pieces(byte[] bytes, int size) {
        return new ProtoInput.Source() {
            private int at;

            @Override
            public ByteBuffer next() {
                int n = Math.min(size - at % size, bytes.length - at);
                return ByteBuffer.wrap(bytes, at, Math.max(n, 0)).slice();
            }

            @Override
            public void skip(int n) {
                at = Math.min(bytes.length, at + n);
            }
        };
    }
}

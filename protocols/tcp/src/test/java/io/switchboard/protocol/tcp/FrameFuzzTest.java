package io.switchboard.protocol.tcp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.testing.DecoderCheck;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzes the tcp wire as a server meets it: arbitrary bytes, delivered in pieces whose sizes the
 * input's first byte sets, go through the {@link FrameDecoder} (small limits), and each frame whose
 * meta names an operation of the conformance component has its data read as that operation's
 * request by the generated codec, decompressed first when its {@code compress_type} says so. Only
 * a {@link FrameDecoder.FrameException} (the connection would close) or a
 * {@link WireFormatException} (the call would be refused) may come out, within
 * 5 s and bounded allocation; a request that reads must survive a round trip through the writer.
 *
 * <p>CI runs the inputs in {@code src/test/resources/.../FrameFuzzTestInputs}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn -pl protocols/tcp test -Dtest=FrameFuzzTest}.
 */
class FrameFuzzTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final MessageLimits LIMITS = MessageLimits.of(1 << 20, 10_000);
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(FrameDecoder.FrameException.class, WireFormatException.class), 8L << 20, 256);

    @FuzzTest(maxDuration = "2m")
    void frames(byte[] input) {
        if (input.length < 1) {
            return;
        }
        int piece = 1 + (input[0] & 0xFF);
        List<Object[]> requests = CHECK.run(input.length, () -> {
            EmbeddedChannel ch = new EmbeddedChannel(FrameDecoderTest.handler(new FrameDecoder(64 << 10, 4 << 10)));
            List<Object[]> read = new ArrayList<>();
            try {
                for (int at = 1; at < input.length; at += piece) {
                    ch.writeInbound(Unpooled.wrappedBuffer(input, at, Math.min(piece, input.length - at)));
                    for (Object o = ch.readInbound(); o != null; o = ch.readInbound()) {
                        Frame f = (Frame) o;
                        try {
                            Object[] r = request(f);
                            if (r != null) {
                                read.add(r);
                            }
                        } finally {
                            f.release();
                        }
                    }
                }
            } finally {
                ch.finishAndReleaseAll();
            }
            return read;
        });
        if (requests != null) {
            for (Object[] r : requests) {
                String message = (String) r[0];
                DecoderCheck.assertRoundTrip(r[1], v -> CODEC.toBytes(message, v, 10_000),
                        bytes -> CODEC.fromBytes(message, bytes, LIMITS));
            }
        }
    }

    /** The request a frame carries, as {message, value}, or null when it names no operation or has no data. */
    private static Object[] request(Frame f) {
        if (f.oversized() || !f.meta.isRequest() || !ConformanceComponent.DESCRIPTOR.hasOperation(f.meta.method())) {
            return null;
        }
        TcpCompression compression = TcpCompression.ofWireType(f.meta.compressType());
        if (compression == null || f.meta.attachmentSize() != 0) {
            return null;   // the server answers these EREQUEST without reading the data
        }
        OperationDescriptor op = ConformanceComponent.DESCRIPTOR.operation(f.meta.method());
        String message = op.requestElement().getLocalPart();
        io.netty.buffer.ByteBuf data = compression == TcpCompression.NONE ? f.data
                : FrameCompression.decompress(compression, f.data, LIMITS.maxMessageBytes());
        try {
            int n = data.readableBytes();
            ProtoCodec.Reader reader = CODEC.reader(message, LIMITS, n);
            reader.readPart(Frame.source(data), n);
            return new Object[] {message, reader.finish()};
        } finally {
            if (data != f.data) {
                data.release();
            }
        }
    }
}

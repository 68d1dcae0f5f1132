package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.switchboard.codec.proto.ProtoOutput;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The frame decoder against hostile and awkward input, on an embedded channel: limits hold before buffers grow. */
class FrameDecoderTest {
    private static final RpcMeta PING = RpcMeta.request("switchboard.conformance.Conformance", "ping", "id-1", 500, 7,
            Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));

    /** {@code decoder} fed each read, as a server's connection feeds it, each frame passed on to the next handler. */
    static io.netty.channel.ChannelHandler handler(FrameDecoder decoder) {
        return new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                decoder.read(ctx, msg, io.netty.channel.ChannelHandlerContext::fireChannelRead);
            }

            @Override
            public void handlerRemoved(io.netty.channel.ChannelHandlerContext ctx) {
                decoder.release();
            }
        };
    }

    private static EmbeddedChannel channel(int maxData, int maxMeta) {
        return new EmbeddedChannel(handler(new FrameDecoder(maxData, maxMeta)));
    }

    private static byte[] header(long body, long meta) {
        return Unpooled.buffer(12).writeInt(Frame.MAGIC).writeInt((int) body).writeInt((int) meta).array();
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }

    private static List<Frame> frames(EmbeddedChannel ch) {
        List<Frame> out = new ArrayList<>();
        for (Object o = ch.readInbound(); o != null; o = ch.readInbound()) {
            out.add((Frame) o);
        }
        return out;
    }

    @Test
    void aFrameReadsBackWhateverWayItsBytesArrive() {
        byte[] data = {8, 1, 16, 2};
        byte[] wire = RawTcp.frame(PING, data);
        for (int step : new int[] {1, 2, 5, 11, 12, 13, wire.length}) {
            EmbeddedChannel ch = channel(1 << 20, 1 << 16);
            for (int at = 0; at < wire.length; at += step) {
                ch.writeInbound(Unpooled.wrappedBuffer(wire, at, Math.min(step, wire.length - at)));
            }
            List<Frame> got = frames(ch);
            assertEquals(1, got.size(), "step " + step);
            Frame f = got.get(0);
            assertEquals(PING, f.meta);
            byte[] back = new byte[f.data.readableBytes()];
            f.data.readBytes(back);
            assertArrayEquals(data, back);
            assertEquals(wire.length, f.wireBytes);
            f.release();
            assertTrue(ch.isActive());
        }
    }

    @Test
    void eachRequestOnAConnectionReadsItsOwnNamesThoughTheLastOnesAreTakenAgain() {
        String service = PING.service();
        List<RpcMeta> sent = List.of(PING,
                RpcMeta.request(service, "ping", "id-2", 0, 8, null),
                RpcMeta.request(service, "pong", "id-3", 0, 9, null),              // one byte apart
                RpcMeta.request(service, "p\u00e9g", "id-4", 0, 10, null),         // as many bytes, not ASCII
                RpcMeta.request(service.replace('C', 'c'), "p\u00e9g", "id-5", 0, 11, null),
                RpcMeta.request(service, "", "id-6", 0, 12, null),
                RpcMeta.request(service, "ping", "id-7", 0, 13, null));
        EmbeddedChannel ch = channel(1 << 20, 1 << 16);
        for (RpcMeta meta : sent) {
            ch.writeInbound(Unpooled.wrappedBuffer(RawTcp.frame(meta, new byte[0])));
        }
        List<Frame> got = frames(ch);
        assertEquals(sent.size(), got.size());
        for (int i = 0; i < sent.size(); i++) {
            assertEquals(sent.get(i), got.get(i).meta, "request " + i);
            got.get(i).release();
        }
        assertSame(got.get(0).meta.service(), got.get(1).meta.service(), "the service's name is not copied again");
        assertSame(got.get(0).meta.method(), got.get(1).meta.method());
    }

    @Test
    void bytesThatAreNotPrpcCloseTheConnection() {
        EmbeddedChannel ch = channel(1 << 20, 1 << 16);
        assertThrows(FrameDecoder.FrameException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer("GET / HTTP/1.1\r\n\r\n".getBytes())));
    }

    @Test
    void aMetaLargerThanItsBodyOrTheLimitIsRefusedOnTheHeader() {
        assertThrows(FrameDecoder.FrameException.class,
                () -> channel(1 << 20, 1 << 16).writeInbound(Unpooled.wrappedBuffer(header(10, 11))));
        // announced, not sent: refused on the 12 bytes of the header, before any buffer grows
        assertThrows(FrameDecoder.FrameException.class,
                () -> channel(1 << 20, 1 << 16).writeInbound(Unpooled.wrappedBuffer(header(0xFFFF_FFFFL, 0x7FFF_FFFFL))));
    }

    @Test
    void aFrameOverTheDataLimitIsReportedByItsMetaAndItsDataSkipped() {
        EmbeddedChannel ch = channel(100, 1 << 16);
        byte[] big = RawTcp.frame(PING, new byte[1000]);
        byte[] next = RawTcp.frame(RpcMeta.request("s.S", "m", null, 0, 8, null), new byte[] {1, 2, 3});
        byte[] wire = concat(big, next);
        for (int at = 0; at < wire.length; at += 97) {
            ch.writeInbound(Unpooled.wrappedBuffer(wire, at, Math.min(97, wire.length - at)));
        }
        List<Frame> got = frames(ch);
        assertEquals(2, got.size());
        assertTrue(got.get(0).oversized());
        assertNull(got.get(0).data);
        assertEquals(1000, got.get(0).dataBytes);
        assertEquals(7, got.get(0).meta.correlationId(), "the meta says which call to refuse");
        assertEquals(8, got.get(1).meta.correlationId(), "the stream goes on after the skipped data");
        assertEquals(3, got.get(1).data.readableBytes());
        got.get(1).release();
    }

    @Test
    void aHugeAnnouncedFrameAllocatesNothingForItsData() {
        EmbeddedChannel ch = channel(4 << 20, 1 << 16);
        byte[] meta = PING.encode();
        ch.writeInbound(Unpooled.wrappedBuffer(header(meta.length + 0xFFFF_0000L, meta.length), meta));
        List<Frame> got = frames(ch);
        assertEquals(1, got.size());
        assertTrue(got.get(0).oversized(), "4 GiB announced: skipped as it arrives, never buffered");
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[64 << 10]));
        assertTrue(ch.isActive());
    }

    /**
     * A 3.2 MB frame arriving in 64 KiB reads, with the next frame's start in its last read: the
     * decoder collects it in one heap buffer of its size. Grown by doubling in the connection's
     * pool of direct buffers it ended in a 4 MiB buffer, a whole pool chunk, that went back to the
     * system after every such frame and was faulted in again for the next.
     */
    @Test
    void aLargeFrameIsCollectedInOneBufferOfItsSizeNotGrownFromThePool() {
        EmbeddedChannel ch = channel(4 << 20, 1 << 16);
        byte[] data = new byte[3_200_000];
        new java.util.Random(5).nextBytes(data);
        byte[] small = {8, 1};
        byte[] wire = concat(RawTcp.frame(PING, data), RawTcp.frame(PING, small));
        int read = 64 << 10;
        for (int at = 0; at < wire.length; at += read) {
            int n = Math.min(read, wire.length - at);
            ch.writeInbound(Unpooled.directBuffer(n).writeBytes(wire, at, n));   // as the epoll transport reads
        }
        List<Frame> got = frames(ch);
        assertEquals(2, got.size());
        byte[] back = new byte[got.get(0).data.readableBytes()];
        got.get(0).data.readBytes(back);
        assertArrayEquals(data, back, "the large frame's data, byte for byte");
        assertTrue(got.get(0).data.unwrap().capacity() <= RawTcp.frame(PING, data).length + read,
                "one buffer of the frame's size (and at most one read more), not a power of two: "
                        + got.get(0).data.unwrap().capacity());
        assertFalse(got.get(0).data.isDirect(), "on the heap, not in the connection's pool of direct buffers");
        byte[] next = new byte[2];
        got.get(1).data.readBytes(next);
        assertArrayEquals(small, next, "the frame after it, started in its last read");
        got.forEach(Frame::release);
        ch.finishAndReleaseAll();
    }

    @Test
    void aMalformedMetaClosesTheConnection() {
        byte[][] metas = {
            {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF},                              // a broken varint
            {0x0A, 0x7F},                                                          // a request longer than the meta
            {0x0A, 0x02, 0x0A, 0x00},                                              // a request without its method
            {0x07},                                                                // field 0
        };
        for (byte[] meta : metas) {
            EmbeddedChannel ch = channel(1 << 20, 1 << 16);
            assertThrows(FrameDecoder.FrameException.class,
                    () -> ch.writeInbound(Unpooled.wrappedBuffer(concat(header(meta.length, meta.length), meta))));
        }
    }

    @Test
    void moreUserFieldsThanTheLimitCloseTheConnection() {
        ProtoOutput out = new ProtoOutput(64);
        for (int i = 0; i <= RpcMeta.MAX_USER_FIELDS; i++) {
            ProtoOutput entry = new ProtoOutput(16);
            entry.writeString(1, "k" + i);
            entry.writeString(2, "v");
            byte[] e = entry.toByteArray();
            out.writeBytes(9, e, 0, e.length);
        }
        byte[] meta = out.toByteArray();
        assertThrows(FrameDecoder.FrameException.class, () -> channel(1 << 20, 1 << 16)
                .writeInbound(Unpooled.wrappedBuffer(concat(header(meta.length, meta.length), meta))));
    }

    @Test
    void unknownMetaFieldsAreSkipped() {
        ProtoOutput out = new ProtoOutput(64);
        byte[] known = PING.encode();
        out.writeBytes(8, new byte[] {1, 2, 3}, 0, 3);      // stream_settings (authentication_data, 7, is read)
        out.writeInt64(100, 42);                            // an implementation's extension
        byte[] extra = out.toByteArray();
        byte[] meta = concat(extra, known);
        EmbeddedChannel ch = channel(1 << 20, 1 << 16);
        ch.writeInbound(Unpooled.wrappedBuffer(concat(header(meta.length, meta.length), meta)));
        Frame f = frames(ch).get(0);
        assertEquals(PING, f.meta);
        f.release();
    }

    @Test
    void aRequestFrameWrittenInOneArrayIsTheFrameOfItsMetaAndMessage() {
        io.switchboard.codec.proto.ProtoCodec codec = io.switchboard.testing.conformance.ConformanceComponent.DESCRIPTOR
                .codec(io.switchboard.codec.proto.ProtoCodec.class);
        io.switchboard.testing.conformance.EchoDoubles m = new io.switchboard.testing.conformance.EchoDoubles();
        m.setValues(new double[] {Double.NaN, -0.0, 1.5});
        byte[] data = codec.toBytes("echoDoubles", m, 10);
        // a user field whose value is not ASCII, a call id and a bearer token: every variable part of the meta
        Map<String, String> user = Map.of("traceparent", PING.userField("traceparent"), "x", "\u00e9t\u00e9");
        RpcMeta meta = RpcMeta.request("switchboard.conformance.Conformance", "echoDoubles", "id-\u00e9", 90_000,
                Long.MAX_VALUE, user, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln");
        io.switchboard.codec.proto.ProtoOutput out = Frame.request(RpcMeta.names(meta.service(), meta.method()),
                meta.requestId(), meta.timeoutMillis(), meta.correlationId(), user, meta.authentication(),
                codec.writer("echoDoubles", m, 10));
        byte[] oneArray = java.util.Arrays.copyOf(out.array(), out.size());
        assertArrayEquals(RawTcp.frame(meta, data), oneArray);

        EmbeddedChannel ch = channel(1 << 20, 1 << 16);
        ch.writeInbound(Unpooled.wrappedBuffer(oneArray));
        Frame f = frames(ch).get(0);
        assertEquals(meta, f.meta);
        f.release();
    }

    @Test
    void aReaderLearnsHowMuchOfAFrameIsMissingOnlyWithinTheLimits() {
        FrameDecoder d = new FrameDecoder(1 << 20, 1 << 10);
        ByteBuf in = Unpooled.buffer().writeBytes(header(100_000, 50)).writeBytes(new byte[30]);
        assertEquals(12 + 100_000 - 42, d.missingBytes(in));
        in.readerIndex(0);
        assertEquals(0, d.missingBytes(Unpooled.wrappedBuffer(header(100_000, 50), 0, 11)), "no whole header yet");
        assertEquals(0, d.missingBytes(Unpooled.wrappedBuffer(header((1 << 20) + 51, 50))), "data over the limit is skipped, not buffered");
        assertEquals(0, d.missingBytes(Unpooled.wrappedBuffer(header(100_000, 2_000))), "a meta over the limit closes the connection");
        assertEquals(0, d.missingBytes(Unpooled.wrappedBuffer(header(0xFFFF_FFFFL, 50))), "an announced 4 GiB allocates nothing");
        assertEquals(0, d.missingBytes(Unpooled.wrappedBuffer("HTTP/1.1 200 OK\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))));
    }

    @Test
    void everyMetaFieldRoundTrips() {
        RpcMeta answer = RpcMeta.response(Long.MAX_VALUE, TcpErrors.DECLARED_FAULT, "division by zero \uD83D\uDD25",
                Map.of(TcpErrors.REFUSED, "malformed", TcpErrors.REFUSED_FIELD, "Record.name"));
        EmbeddedChannel ch = channel(1 << 20, 1 << 16);
        ByteBuf buf = Unpooled.wrappedBuffer(RawTcp.frame(answer, new byte[0]));
        ch.writeInbound(buf);
        Frame f = frames(ch).get(0);
        assertEquals(answer, f.meta);
        assertTrue(!f.meta.isRequest());
        f.release();
    }
}

package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.WireBytes;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoDoublesResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.InflaterInputStream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.xerial.snappy.Snappy;

/**
 * brpc's {@code compress_type} on a tcp server, from a raw socket whose frames are compressed and
 * read back here with the JDK's and snappy-java's own streams (not the server's code), and from
 * the Java client: each compression both ways; a small frame that inflates past the limit refused
 * {@code ELIMIT} with nothing run; an unknown compression and an attachment answered
 * {@code EREQUEST}, each with the connection going on to the next request written right behind it.
 */
class TcpCompressionTest {
    private static final String SERVICE = ProtoSchemas.serviceName(ConformanceComponent.DESCRIPTOR.name());
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final double[] VALUES = {Double.NaN, -0.0, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, 1e308, 3.5};
    @AutoClose
    private CountedServer server;

    private Endpoint start(TcpLimits limits) {
        server = new CountedServer(limits);
        return server.endpoint();
    }

    private int runs() {
        return server.runs();
    }

    private static RpcMeta request(String method, long id, int compressType, int attachmentSize) {
        return new RpcMeta(SERVICE, method, 0, null, 0, 0, null, id, compressType, attachmentSize, null, null);
    }

    private static byte[] echoDoubles(double[] values) {
        EchoDoubles m = new EchoDoubles();
        m.setValues(values);
        return CODEC.toBytes("echoDoubles", m, 10);
    }

    /** Compressed as a brpc peer compresses, with the JDK's streams and snappy-java's raw format. */
    static byte[] compress(TcpCompression c, byte[] plain) throws IOException {
        if (c == TcpCompression.SNAPPY) {
            return Snappy.compress(plain);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (OutputStream out = c == TcpCompression.GZIP ? new GZIPOutputStream(bytes) : new DeflaterOutputStream(bytes)) {
            out.write(plain);
        }
        return bytes.toByteArray();
    }

    static byte[] uncompress(TcpCompression c, byte[] data) throws IOException {
        if (c == TcpCompression.SNAPPY) {
            return Snappy.uncompress(data);
        }
        try (InputStream in = c == TcpCompression.GZIP ? new GZIPInputStream(new ByteArrayInputStream(data))
                : new InflaterInputStream(new ByteArrayInputStream(data))) {
            return in.readAllBytes();
        }
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void aCompressedRequestIsAnsweredInItsCompression(TcpCompression c) throws Exception {
        try (RawTcp raw = new RawTcp(start(TcpLimits.defaults()))) {
            RawTcp.Answer answer = raw.call(request("echoDoubles", 1, c.wireType(), 0), compress(c, echoDoubles(VALUES)));
            assertEquals(0, answer.meta().errorCode(), answer.meta().errorText());
            assertEquals(c.wireType(), answer.meta().compressType(), "the answer in the request's compression");
            EchoDoublesResponse back = (EchoDoublesResponse) CODEC.fromBytes("echoDoublesResponse",
                    uncompress(c, answer.data()), MessageLimits.of(1 << 20, 10));
            assertEquals(VALUES.length, back.getValues().length);
            for (int i = 0; i < VALUES.length; i++) {
                assertEquals(Double.doubleToRawLongBits(VALUES[i]), Double.doubleToRawLongBits(back.getValues()[i]));
            }
            RawTcp.Answer plain = raw.call(request("ping", 2, 0, 0), new byte[0]);
            assertEquals(0, plain.meta().errorCode());
            assertEquals(0, plain.meta().compressType(), "an uncompressed request's answer is not compressed");
        }
        assertEquals(2, runs());
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void theJavaClientCompressesWhenAskedAndReadsTheCompressedAnswer(TcpCompression c) {
        Endpoint at = start(TcpLimits.defaults());
        ProtocolClient client = new TcpProtocolProvider().newClient(ClientSettings.defaults());
        try {
            ConformanceStub stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            double[] zeros = new double[10_000];   // 80 KB of message each way, compressing to a few KB
            zeros[1234] = -0.0;
            WireBytes wire = new WireBytes();
            double[] back = stub.withOptions(CallOptions.DEFAULT.withWireBytes(wire).with(TcpCompression.OPTION, c))
                    .echoDoubles(zeros);
            assertEquals(zeros.length, back.length);
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(back[1234]));
            assertTrue(wire.sent() < 8_000 && wire.received() < 8_000, "compressed both ways: " + wire);
            WireBytes plain = new WireBytes();
            stub.withOptions(CallOptions.DEFAULT.withWireBytes(plain)).echoDoubles(zeros);
            assertTrue(plain.sent() > 80_000 && plain.received() > 80_000, "uncompressed without the option: " + plain);
        } finally {
            client.close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void aSmallFrameThatInflatesPastTheLimitIsRefusedAndTheConnectionGoesOn(TcpCompression c) throws Exception {
        // 10 MB of zeros as the packed doubles of echoDoubles, compressed to a few KB (snappy: under 0.5 MB)
        byte[] plain = new byte[10 << 20];
        plain[0] = 0x0A;   // field 1, length-delimited, then a varint length covering the rest
        int n = plain.length - 5;
        plain[1] = (byte) (n | 0x80);
        plain[2] = (byte) ((n >>> 7) | 0x80);
        plain[3] = (byte) ((n >>> 14) | 0x80);
        plain[4] = (byte) (n >>> 21);
        byte[] bomb = compress(c, plain);
        assertTrue(bomb.length < (1 << 20), "the frame itself is within the limit: " + bomb.length);
        try (RawTcp raw = new RawTcp(start(TcpLimits.defaults().withMaxFrameBytes(1 << 20)))) {
            // the bomb and a plain request behind it, in one write
            raw.write(concat(RawTcp.frame(request("echoDoubles", 1, c.wireType(), 0), bomb),
                    RawTcp.frame(request("ping", 2, 0, 0), new byte[0])));
            Map<Long, RawTcp.Answer> answers = readTwo(raw);
            RawTcp.Answer refused = answers.get(1L);
            assertEquals(TcpErrors.LIMIT, refused.meta().errorCode(), refused.meta().errorText());
            assertEquals(WireFormatException.SIZE_LIMIT, refused.meta().userField(TcpErrors.REFUSED));
            assertTrue(refused.meta().errorText().contains("inflates past the limit"), refused.meta().errorText());
            RawTcp.Answer next = answers.get(2L);
            assertEquals(0, next.meta().errorCode(), "the connection goes on: " + next.meta().errorText());
        }
        assertEquals(1, runs(), "only the ping ran");
    }

    @Test
    void anUnknownCompressionIsAnsweredBadRequestAndTheConnectionGoesOn() throws Exception {
        assertRefusedAndTheNextAnswered(RawTcp.frame(request("echoDoubles", 1, 7, 0), echoDoubles(VALUES)),
                "RpcMeta.compress_type", "compress_type 7 is not one this server takes");
    }

    @Test
    void aRequestWithAnAttachmentIsAnsweredBadRequestAndTheConnectionGoesOn() throws Exception {
        byte[] withAttachment = concat(echoDoubles(VALUES), new byte[] {1, 2, 3, 4, 5});
        assertRefusedAndTheNextAnswered(RawTcp.frame(request("echoDoubles", 1, 0, 5), withAttachment),
                "RpcMeta.attachment_size", "attachments are not taken");
    }

    /** {@code first} (correlation id 1) and a ping behind it in one write: the first refused EREQUEST, the ping answered. */
    private void assertRefusedAndTheNextAnswered(byte[] first, String field, String text) throws IOException {
        try (RawTcp raw = new RawTcp(start(TcpLimits.defaults()))) {
            raw.write(concat(first, RawTcp.frame(request("ping", 2, 0, 0), new byte[0])));
            Map<Long, RawTcp.Answer> answers = readTwo(raw);
            RpcMeta refused = answers.get(1L).meta();
            assertEquals(TcpErrors.BAD_REQUEST, refused.errorCode());
            assertEquals(WireFormatException.MALFORMED, refused.userField(TcpErrors.REFUSED));
            assertEquals(field, refused.userField(TcpErrors.REFUSED_FIELD));
            assertTrue(refused.errorText().contains(text), refused.errorText());
            assertEquals(0, answers.get(2L).meta().errorCode(), "the connection goes on");
        }
        assertEquals(1, runs(), "only the ping ran");
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void dataThatIsNotInItsClaimedCompressionIsAnsweredBadRequest(TcpCompression c) throws Exception {
        try (RawTcp raw = new RawTcp(start(TcpLimits.defaults()))) {
            // a plain message under a compression's flag
            RawTcp.Answer refused = raw.call(request("echoDoubles", 1, c.wireType(), 0), echoDoubles(VALUES));
            assertEquals(TcpErrors.BAD_REQUEST, refused.meta().errorCode(), refused.meta().errorText());
            assertEquals(WireFormatException.MALFORMED, refused.meta().userField(TcpErrors.REFUSED));
            assertEquals(0, raw.call(request("ping", 2, 0, 0), new byte[0]).meta().errorCode());
        }
        assertEquals(1, runs(), "only the ping ran");
    }

    /** The next two answers by correlation id: calls on a connection are answered as they finish. */
    private static Map<Long, RawTcp.Answer> readTwo(RawTcp raw) throws IOException {
        Map<Long, RawTcp.Answer> answers = new java.util.HashMap<>();
        for (int i = 0; i < 2; i++) {
            RawTcp.Answer a = raw.read();
            answers.put(a.meta().correlationId(), a);
        }
        assertEquals(java.util.Set.of(1L, 2L), answers.keySet());
        return answers;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}

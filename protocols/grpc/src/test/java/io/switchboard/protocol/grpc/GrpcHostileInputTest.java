package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormat;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoList;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Values;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Malformed and oversized requests, sent as raw bytes: each ends with a gRPC status that names
 * the problem, and the same server answers a good call right after.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcHostileInputTest {
    private static final BinaryCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(BinaryCodec.class);
    private static final OperationDescriptor ECHO_LIST = ConformanceComponent.DESCRIPTOR.operation("echoList");
    private static final OperationDescriptor ECHO_DOUBLES = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");

    private ProtocolServer server;
    private ProtocolClient client;
    private Transport transport;
    private Conformance stub;
    private RawCalls raw;

    @BeforeAll
    void start() {
        GrpcProtocolProvider grpc = new GrpcProtocolProvider();
        server = grpc.newServer(ServerSettings.defaults().withMaxMessageBytes(1 << 20).withMaxGraphNodes(100),
                new BinaryLimits(1 << 20, 100, 1000));
        Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        client = grpc.newClient(ClientSettings.defaults());
        transport = client.connect(ConformanceComponent.DESCRIPTOR, at);
        stub = ConformanceComponent.stub(transport);
        raw = new RawCalls(at);
    }

    @AfterAll
    void stop() throws Exception {
        raw.close();
        client.close();
        server.close();
    }

    @AfterEach
    void serverStillServes() {
        Values.assertSameDoubles(new double[] {1, -0.0}, stub.echoDoubles(new double[] {1, -0.0}));
    }

    private static byte[] threeNodeList() {
        EchoList m = new EchoList();
        m.setHead(Values.list(3));
        return BinaryWriter.toBytes(CODEC, m, 100);
    }

    private void assertRefused(RawCalls.Result r, Status.Code code, String reason, String text) {
        assertEquals(code, r.status().getCode(), String.valueOf(r.status()));
        assertEquals(reason, r.trailers().get(GrpcErrors.REFUSED));
        assertTrue(r.status().getDescription().contains(text), r.status().getDescription());
    }

    @Test
    void aValidRawMessageIsAnswered() throws Exception {
        RawCalls.Result r = raw.call(ECHO_LIST, threeNodeList());
        assertEquals(Status.Code.OK, r.status().getCode());
        assertEquals(WireFormat.RESPONSE, r.data()[0]);
    }

    @Test
    void truncatedMessage() throws Exception {
        byte[] ok = threeNodeList();
        assertRefused(raw.call(ECHO_LIST, Arrays.copyOf(ok, ok.length - 3)), Status.Code.INVALID_ARGUMENT, "malformed",
                "truncated");
    }

    @Test
    void emptyMessage() throws Exception {
        assertRefused(raw.call(ECHO_LIST, new byte[0]), Status.Code.INVALID_ARGUMENT, "malformed", "truncated");
    }

    @Test
    void referenceOutOfRange() throws Exception {
        byte[] bad = threeNodeList();
        bad[bad.length - 1] = 9; // the root's REF index
        assertRefused(raw.call(ECHO_LIST, bad), Status.Code.INVALID_ARGUMENT, "malformed",
                "reference to node 9, but the message has 3 nodes");
    }

    @Test
    void wrongTypeTag() throws Exception {
        byte[] bad = threeNodeList();
        bad[4] = WireFormat.DOUBLE; // node 0's first field (llong) after count and three node types
        RawCalls.Result r = raw.call(ECHO_LIST, bad);
        assertRefused(r, Status.Code.INVALID_ARGUMENT, "malformed", "LinkEntry[node 0].llong: expected tag LONG, got DOUBLE");
        assertEquals("LinkEntry[node 0].llong", r.trailers().get(GrpcErrors.REFUSED_FIELD), "the field, in its own trailer");
    }

    @Test
    void unknownNodeType() throws Exception {
        byte[] bad = threeNodeList();
        bad[2] = 7;
        assertRefused(raw.call(ECHO_LIST, bad), Status.Code.INVALID_ARGUMENT, "malformed", "unknown node type 7");
    }

    @Test
    void trailingBytes() throws Exception {
        byte[] ok = threeNodeList();
        assertRefused(raw.call(ECHO_LIST, Arrays.copyOf(ok, ok.length + 2)), Status.Code.INVALID_ARGUMENT, "malformed",
                "2 unexpected bytes after the message");
    }

    @Test
    void chunkThatIsNotAChunkMessage() throws Exception {
        // field 4, varint: not one of data, offset, total
        assertRefused(raw.call(ECHO_LIST, List.of(Frame.raw(new byte[] {0x20, 0x01}))),
                Status.Code.INVALID_ARGUMENT, "malformed", "not a Chunk message: it has protobuf key 32 (field 4");
    }

    /** A valid message cut into three chunks, each with its offset and the first with the total. */
    private static List<Frame> threeChunks(byte[] message) {
        int a = message.length / 3;
        int b = 2 * message.length / 3;
        return List.of(Frame.chunk(0, message.length, Arrays.copyOfRange(message, 0, a)),
                Frame.chunk(a, 0, Arrays.copyOfRange(message, a, b)),
                Frame.chunk(b, 0, Arrays.copyOfRange(message, b, message.length)));
    }

    @Test
    void chunksInOrderDecode() throws Exception {
        assertEquals(Status.Code.OK, raw.call(ECHO_LIST, threeChunks(threeNodeList())).status().getCode());
    }

    @Test
    void chunkOutOfOrder() throws Exception {
        byte[] ok = threeNodeList();
        List<Frame> c = threeChunks(ok);
        int a = ok.length / 3;
        int b = 2 * ok.length / 3;
        assertRefused(raw.call(ECHO_LIST, List.of(c.get(0), c.get(2), c.get(1))), Status.Code.INVALID_ARGUMENT,
                "malformed", "chunk out of order: expected offset " + a + ", got " + b);
    }

    @Test
    void chunkGap() throws Exception {
        byte[] ok = threeNodeList();
        List<Frame> c = threeChunks(ok);
        int a = ok.length / 3;
        int b = 2 * ok.length / 3;
        assertRefused(raw.call(ECHO_LIST, List.of(c.get(0), c.get(2))), Status.Code.INVALID_ARGUMENT, "malformed",
                "chunk out of order: expected offset " + a + ", got " + b + " (a gap of " + (b - a) + " bytes)");
    }

    @Test
    void repeatedChunk() throws Exception {
        byte[] ok = threeNodeList();
        List<Frame> c = threeChunks(ok);
        Frame again = Frame.chunk(0, ok.length, Arrays.copyOfRange(ok, 0, ok.length / 3));
        assertRefused(raw.call(ECHO_LIST, List.of(c.get(0), again, c.get(1), c.get(2))), Status.Code.INVALID_ARGUMENT,
                "malformed", "chunk out of order: expected offset " + ok.length / 3 + ", got 0 (data already received)");
    }

    @Test
    void firstChunkNotAtOffsetZero() throws Exception {
        byte[] ok = threeNodeList();
        assertRefused(raw.call(ECHO_LIST, List.of(Frame.chunk(5, ok.length, ok))), Status.Code.INVALID_ARGUMENT,
                "malformed", "chunk out of order: expected offset 0, got 5");
    }

    @Test
    void firstChunkAnnouncesMoreThanTheLimit() throws Exception {
        // refused on the first chunk, before any more data is read
        assertRefused(raw.call(ECHO_DOUBLES, List.of(Frame.chunk(0, (1 << 20) + 1, new byte[] {0}))),
                Status.Code.RESOURCE_EXHAUSTED, "size-limit", "message of 1048577 bytes (the first chunk's total) "
                        + "is larger than the limit of 1048576 bytes");
    }

    @Test
    void streamEndsBeforeTheTotal() throws Exception {
        byte[] ok = threeNodeList();
        // the whole message, but the first chunk announced 10 bytes more
        assertRefused(raw.call(ECHO_LIST, List.of(Frame.chunk(0, ok.length + 10, ok))), Status.Code.INVALID_ARGUMENT,
                "malformed", "truncated stream: it ended after " + ok.length + " of the " + (ok.length + 10) + " bytes");
        // two chunks of three: the stream ends inside the message
        assertRefused(raw.call(ECHO_LIST, threeChunks(ok).subList(0, 2)), Status.Code.INVALID_ARGUMENT, "malformed",
                "truncated stream: it ended after " + 2 * ok.length / 3 + " of the " + ok.length + " bytes");
    }

    @Test
    void chunkPastTheTotal() throws Exception {
        byte[] ok = threeNodeList();
        assertRefused(raw.call(ECHO_LIST, List.of(Frame.chunk(0, 5, ok))), Status.Code.INVALID_ARGUMENT, "malformed",
                "chunk at offset 0 carries " + ok.length + " bytes, past the end of the message");
    }

    @Test
    void laterChunkContradictsTheTotal() throws Exception {
        byte[] ok = threeNodeList();
        int a = ok.length / 3;
        assertRefused(raw.call(ECHO_LIST, List.of(Frame.chunk(0, ok.length, Arrays.copyOfRange(ok, 0, a)),
                Frame.chunk(a, ok.length + 1, Arrays.copyOfRange(ok, a, ok.length)))), Status.Code.INVALID_ARGUMENT,
                "malformed", "says the message has " + (ok.length + 1) + " bytes, the first chunk said " + ok.length);
    }

    @Test
    void chunkOverTheChunkLimit() throws Exception {
        byte[] big = new byte[GrpcProtocolProvider.DEFAULT_MAX_CHUNK_BYTES + 1];
        assertRefused(raw.call(ECHO_DOUBLES, List.of(Frame.chunk(0, 100, big))), Status.Code.RESOURCE_EXHAUSTED,
                "chunk-limit", "carries 4194305 bytes, more than the limit of 4194304 bytes per chunk");
    }

    @Test
    void chunkFarOverTheChunkLimitIsStoppedByGrpc() throws Exception {
        // too large for gRPC's inbound message limit (the chunk limit plus framing): gRPC ends the call itself
        RawCalls.Result r = raw.call(ECHO_DOUBLES, List.of(Frame.chunk(0, 100,
                new byte[GrpcProtocolProvider.DEFAULT_MAX_CHUNK_BYTES + 4096])));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, r.status().getCode(), String.valueOf(r.status()));
    }

    @Test
    void endlessEmptyChunksAreCut() throws Exception {
        List<Frame> frames = new java.util.ArrayList<>();
        frames.add(Frame.chunk(0, 10, new byte[0]));
        for (int i = 0; i < 1100; i++) {
            frames.add(Frame.chunk(0, 0, new byte[0]));
        }
        assertRefused(raw.call(ECHO_LIST, frames), Status.Code.RESOURCE_EXHAUSTED, "chunk-limit",
                "more than 1024 chunks for a message of 10 bytes");
    }

    @Test
    void messageCutAcrossManyChunksStillDecodes() throws Exception {
        byte[] ok = threeNodeList();
        List<Frame> frames = new java.util.ArrayList<>();
        for (int i = 0; i < ok.length; i++) {
            frames.add(Frame.chunk(i, i == 0 ? ok.length : 0, new byte[] {ok[i]}));
        }
        assertEquals(Status.Code.OK, raw.call(ECHO_LIST, frames).status().getCode());
    }

    @Test
    void hostileCountIsRefusedBeforeAllocating() throws Exception {
        // node table empty, then PACKED_DOUBLE with a count of 2^40
        byte[] bad = {0, (byte) (WireFormat.PACKED | WireFormat.DOUBLE), (byte) 0x80, (byte) 0x80, (byte) 0x80,
            (byte) 0x80, (byte) 0x80, 0x20};
        assertRefused(raw.call(ECHO_DOUBLES, bad), Status.Code.RESOURCE_EXHAUSTED, "size-limit",
                "exceed the message size limit");
    }

    @Test
    void tooManyNodesIsRefusedWithItsReason() {
        RefusedException e = assertThrows(RefusedException.class, () -> stub.echoList(Values.list(101)));
        assertEquals("node-limit", e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains("more than the limit of 100"), e.getMessage());
    }

    @Test
    void tooLargeMessageIsRefusedWithItsReason() {
        RefusedException e = assertThrows(RefusedException.class, () -> stub.echoDoubles(new double[200_000]));
        assertEquals("size-limit", e.reason(), e.getMessage());
    }

    @Test
    void tooLongStringIsRefusedWithItsReason() {
        Record r = new Record();
        r.setName("x".repeat(1001));
        RefusedException e = assertThrows(RefusedException.class, () -> stub.echoRecord(r));
        assertEquals("string-limit", e.reason(), e.getMessage());
    }

    @Test
    void invalidUtf8IsRefused() throws Exception {
        // echoRecord: no nodes, STRUCT, name = STRING of 2 bytes that are not UTF-8, then cut short
        byte[] bad = {0, WireFormat.STRUCT, WireFormat.STRING, 2, (byte) 0xC3, (byte) 0x28};
        assertRefused(raw.call(ConformanceComponent.DESCRIPTOR.operation("echoRecord"), bad),
                Status.Code.INVALID_ARGUMENT, "malformed", "not valid UTF-8");
    }

    @Test
    void unknownServiceIsUnimplemented() throws Exception {
        EchoDoubles m = new EchoDoubles();
        byte[] ok = BinaryWriter.toBytes(CODEC, m, 10);
        server.unexport("Conformance");
        try {
            assertEquals(Status.Code.UNIMPLEMENTED, raw.call(ECHO_DOUBLES, ok).status().getCode());
        } finally {
            server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        }
    }

    // ---- heterogeneous lists (CHOICES): nesting, nulls and alternatives are checked before use

    private static final OperationDescriptor ECHO_MIXED = ConformanceComponent.DESCRIPTOR.operation("echoMixed");
    /** The alternative number of {@code list} (a nested Mixed) in conformance.xsd's Mixed. */
    private static final int NESTED_LIST = 9;

    /** An echoMixed request whose {@code list} field holds {@code depth} lists, one inside the other. */
    private static byte[] nestedLists(int depth) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        b.write(0);   // empty node table
        for (int i = 0; i < depth; i++) {
            b.write(WireFormat.CHOICES);
            b.write(i == depth - 1 ? 0 : 1);   // count
            if (i < depth - 1) {
                b.write(NESTED_LIST);
            }
        }
        b.write(WireFormat.NULL);   // the field "more"
        return b.toByteArray();
    }

    @Test
    void heterogeneousListsNestedAtTheLimitAreAnswered() throws Exception {
        RawCalls.Result r = raw.call(ECHO_MIXED, nestedLists(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH));
        assertEquals(Status.Code.OK, r.status().getCode(), String.valueOf(r.status()));
    }

    @Test
    void heterogeneousListsNestedTooDeeplyAreRefusedBeforeTheStackNotices() throws Exception {
        assertRefused(raw.call(ECHO_MIXED, nestedLists(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH + 1)),
                Status.Code.RESOURCE_EXHAUSTED, "depth-limit", "nested deeper than the limit of 64 levels");
        assertRefused(raw.call(ECHO_MIXED, nestedLists(200_000)), Status.Code.RESOURCE_EXHAUSTED, "depth-limit",
                "nested deeper than the limit of 64 levels");
    }

    @Test
    void nullElementOrUnknownAlternativeIsRefused() throws Exception {
        byte[] nullText = {0, (byte) WireFormat.CHOICES, 1, 3, (byte) WireFormat.NULL, (byte) WireFormat.NULL};
        assertRefused(raw.call(ECHO_MIXED, nullText), Status.Code.INVALID_ARGUMENT, "malformed",
                "null element in a heterogeneous list");
        byte[] nullDouble = {0, (byte) WireFormat.CHOICES, 1, 0, (byte) WireFormat.NULL, (byte) WireFormat.NULL};
        assertRefused(raw.call(ECHO_MIXED, nullDouble), Status.Code.INVALID_ARGUMENT, "malformed", "required");
        byte[] unknown = {0, (byte) WireFormat.CHOICES, 1, 10, (byte) WireFormat.NULL, (byte) WireFormat.NULL};
        assertRefused(raw.call(ECHO_MIXED, unknown), Status.Code.INVALID_ARGUMENT, "malformed",
                "alternative 10 of a list type that has 10");
        byte[] countWithNothingBehind = {0, (byte) WireFormat.CHOICES, (byte) 0xE8, 0x07};   // 1000 elements
        assertRefused(raw.call(ECHO_MIXED, countWithNothingBehind), Status.Code.INVALID_ARGUMENT, "malformed",
                "do not fit");
        byte[] hugeCount = {0, (byte) WireFormat.CHOICES, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F};
        assertRefused(raw.call(ECHO_MIXED, hugeCount), Status.Code.RESOURCE_EXHAUSTED, "size-limit",
                "exceed the message size limit");
    }
}

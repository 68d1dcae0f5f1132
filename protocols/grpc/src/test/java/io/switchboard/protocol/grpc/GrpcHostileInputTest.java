package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.grpc.Metadata;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
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
 * Malformed and oversized requests, sent as raw parts of the typed protobuf messages: each ends
 * with a gRPC status that names the problem (and the field, in sb-refused-field), and the same
 * server answers a good call right after.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcHostileInputTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final OperationDescriptor ECHO_LIST = ConformanceComponent.DESCRIPTOR.operation("echoList");
    private static final OperationDescriptor ECHO_DOUBLES = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");
    private static final OperationDescriptor ECHO_RECORD = ConformanceComponent.DESCRIPTOR.operation("echoRecord");
    private static final OperationDescriptor ECHO_MIXED = ConformanceComponent.DESCRIPTOR.operation("echoMixed");

    private ProtocolServer server;
    private ProtocolClient client;
    private Transport transport;
    private Conformance stub;
    private RawCalls raw;

    @BeforeAll
    void start() {
        GrpcProtocolProvider grpc = new GrpcProtocolProvider();
        server = grpc.newServer(ServerSettings.defaults().withMaxMessageBytes(1 << 20).withMaxGraphNodes(100),
                new MessageLimits(1 << 20, 100, 1000));
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
        return CODEC.toBytes("echoList", m, 100);
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
        assertTrue(Arrays.equals(threeNodeList(), r.data()), "the same list comes back, the same bytes");
    }

    @Test
    void truncatedPartIsRefusedByField() throws Exception {
        byte[] ok = threeNodeList();
        RawCalls.Result r = raw.call(ECHO_LIST, Arrays.copyOf(ok, ok.length - 3));
        assertRefused(r, Status.Code.INVALID_ARGUMENT, "malformed", "runs past its message");
        assertEquals("echoList.sb_nodes", r.trailers().get(GrpcErrors.REFUSED_FIELD), "the field the part was cut in");
    }

    @Test
    void referenceOutOfRange() throws Exception {
        byte[] bad = threeNodeList();
        assertEquals(0x08, bad[0], "head, field 1 varint");
        bad[1] = 9;
        RawCalls.Result r = raw.call(ECHO_LIST, bad);
        assertRefused(r, Status.Code.INVALID_ARGUMENT, "malformed", "node number 9 is not in the node table of 3 nodes");
        assertEquals("echoList.head", r.trailers().get(GrpcErrors.REFUSED_FIELD));
    }

    @Test
    void valueOutOfItsSchemaRange() throws Exception {
        // echoRecord { record (1) { small (4) = 300 } }
        ProtoOutput inner = new ProtoOutput(16);
        inner.writeInt32(4, 300);
        ProtoOutput out = new ProtoOutput(16);
        out.writeBytes(1, inner.toByteArray(), 0, inner.size());
        RawCalls.Result r = raw.call(ECHO_RECORD, out.toByteArray());
        assertRefused(r, Status.Code.INVALID_ARGUMENT, "malformed", "300 is out of the range of a byte");
        assertEquals("Record.small", r.trailers().get(GrpcErrors.REFUSED_FIELD));
    }

    @Test
    void unknownFieldsAreSkipped() throws Exception {
        ProtoOutput extra = new ProtoOutput(16);
        extra.writeInt64(100, 42);
        byte[] ok = threeNodeList();
        assertEquals(Status.Code.OK, raw.call(ECHO_LIST, List.of(ok, extra.toByteArray())).status().getCode());
    }

    @Test
    void messageInManyPartsIsMerged() throws Exception {
        EchoList m = new EchoList();
        m.setHead(Values.list(3));
        List<byte[]> parts = new java.util.ArrayList<>();
        ProtoCodec.Writer w = CODEC.writer("echoList", m, 100);
        ProtoOutput out = new ProtoOutput(64);
        do {
            out.reset();
            w.writePart(out, 1);
            parts.add(out.toByteArray());
        } while (w.hasMore());
        assertTrue(parts.size() >= 4, "head, then a part per node");
        RawCalls.Result r = raw.call(ECHO_LIST, parts);
        assertEquals(Status.Code.OK, r.status().getCode());
    }

    @Test
    void aMalformedCallIdIsRefusedBeforeTheCallRuns() throws Exception {
        for (String id : new String[] {"two words", "<x/>", "x".repeat(129), "semi;colon"}) {
            Metadata headers = new Metadata();
            headers.put(GrpcErrors.CALL_ID, id);
            assertRefused(raw.call(ECHO_DOUBLES, List.of(new byte[0]), headers), Status.Code.INVALID_ARGUMENT,
                    "malformed", "sb-call-id header is malformed");
        }
    }

    @Test
    void announcedSizeOverTheLimit() throws Exception {
        Metadata headers = new Metadata();
        headers.put(GrpcErrors.SIZE, Long.toString((1 << 20) + 1));
        assertRefused(raw.call(ECHO_DOUBLES, List.of(new byte[0]), headers), Status.Code.RESOURCE_EXHAUSTED,
                "size-limit", "announced 1048577 bytes");
    }

    @Test
    void partsOverTheMessageLimit() throws Exception {
        ProtoOutput out = new ProtoOutput(1 << 19);
        out.writePackedDoubles(1, new double[60_000], 0, 60_000);
        byte[] part = out.toByteArray();
        assertRefused(raw.call(ECHO_DOUBLES, List.of(part, part, part)), Status.Code.RESOURCE_EXHAUSTED, "size-limit",
                "over the limit of 1048576 bytes");
    }

    @Test
    void endlessEmptyPartsAreCut() throws Exception {
        List<byte[]> parts = new java.util.ArrayList<>();
        for (int i = 0; i < 1100; i++) {
            parts.add(new byte[0]);
        }
        assertRefused(raw.call(ECHO_LIST, parts), Status.Code.RESOURCE_EXHAUSTED, "chunk-limit", "more than 1024 parts");
    }

    @Test
    void unaryMethodTakesOneMessage() throws Exception {
        OperationDescriptor ping = ConformanceComponent.DESCRIPTOR.operation("ping");
        assertEquals(io.grpc.MethodDescriptor.MethodType.UNARY, GrpcTransport.method(ping).getType());
        assertEquals(Status.Code.OK, raw.call(ping, new byte[0]).status().getCode());
        assertTrue(!raw.call(ping, List.of(new byte[0], new byte[0])).status().isOk(),
                "gRPC itself refuses a second request message on a unary method");
    }

    @Test
    void hostileLengthIsRefusedBeforeAllocating() throws Exception {
        // values (1), length-delimited, a length of 2^40
        byte[] bad = {0x0A, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x20};
        assertRefused(raw.call(ECHO_DOUBLES, bad), Status.Code.INVALID_ARGUMENT, "malformed", "runs past its message");
    }

    @Test
    void tooManyNodesIsRefusedWithItsReason() {
        RefusedException e = assertThrows(RefusedException.class, () -> stub.echoList(Values.list(101)));
        assertEquals("node-limit", e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains("more than 100"), e.getMessage());
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
        // echoRecord { record (1) { name (1) = C3 28 } }
        byte[] bad = {0x0A, 0x04, 0x0A, 0x02, (byte) 0xC3, (byte) 0x28};
        RawCalls.Result r = raw.call(ECHO_RECORD, bad);
        assertRefused(r, Status.Code.INVALID_ARGUMENT, "malformed", "not UTF-8");
        assertEquals("Record.name", r.trailers().get(GrpcErrors.REFUSED_FIELD));
    }

    @Test
    void declaredFaultIsInTheStatusDetails() throws Exception {
        OperationDescriptor divide = ConformanceComponent.DESCRIPTOR.operation("divide");
        ProtoOutput out = new ProtoOutput(16);
        out.writeInt64(1, 7);
        RawCalls.Result r = raw.call(divide, out.toByteArray());
        assertEquals(Status.Code.FAILED_PRECONDITION, r.status().getCode(), String.valueOf(r.status()));
        com.google.rpc.Status details = io.grpc.protobuf.StatusProto.fromStatusAndTrailers(r.status(), r.trailers());
        assertEquals(1, details.getDetailsCount());
        assertEquals("type.googleapis.com/switchboard.conformance.divideFault", details.getDetails(0).getTypeUrl());
        io.switchboard.testing.conformance.DivideFault f = (io.switchboard.testing.conformance.DivideFault)
                CODEC.fromBytes("divideFault", details.getDetails(0).getValue().toByteArray(), MessageLimits.of(1000, 10));
        assertEquals(7, f.getDividend());
    }

    @Test
    void unknownServiceIsUnimplemented() throws Exception {
        byte[] ok = CODEC.toBytes("echoDoubles", new EchoDoubles(), 10);
        server.unexport("Conformance");
        try {
            assertEquals(Status.Code.UNIMPLEMENTED, raw.call(ECHO_DOUBLES, ok).status().getCode());
        } finally {
            server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        }
    }

    /** An echoMixed request whose {@code list} field (1) holds {@code depth} lists, one inside the other (alternative 10). */
    private static byte[] nestedLists(int depth) {
        byte[] list = new byte[0];
        for (int i = 1; i < depth; i++) {
            ProtoOutput element = new ProtoOutput(list.length + 16);
            element.writeBytes(10, list, 0, list.length);
            ProtoOutput outer = new ProtoOutput(list.length + 32);
            outer.writeBytes(1, element.toByteArray(), 0, element.size());
            list = outer.toByteArray();
        }
        ProtoOutput m = new ProtoOutput(list.length + 16);
        m.writeBytes(1, list, 0, list.length);
        return m.toByteArray();
    }

    @Test
    void heterogeneousListsNestedAtTheLimitAreAnswered() throws Exception {
        RawCalls.Result r = raw.call(ECHO_MIXED, nestedLists(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH));
        assertEquals(Status.Code.OK, r.status().getCode(), String.valueOf(r.status()));
    }

    @Test
    void heterogeneousListsNestedTooDeeplyAreRefusedBeforeTheStackNotices() throws Exception {
        assertRefused(raw.call(ECHO_MIXED, nestedLists(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH + 1)),
                Status.Code.RESOURCE_EXHAUSTED, "depth-limit", "lists nest deeper than 64");
        assertRefused(raw.call(ECHO_MIXED, nestedLists(2_000)), Status.Code.RESOURCE_EXHAUSTED, "depth-limit",
                "lists nest deeper than 64");
    }

    @Test
    void elementWithNoAlternativeIsRefused() throws Exception {
        // echoMixed { list (1) { elements (1) { } } }
        byte[] unset = {0x0A, 0x02, 0x0A, 0x00};
        RawCalls.Result r = raw.call(ECHO_MIXED, unset);
        assertRefused(r, Status.Code.INVALID_ARGUMENT, "malformed", "an element with no alternative set");
        assertEquals("Mixed.elements", r.trailers().get(GrpcErrors.REFUSED_FIELD));
    }
}

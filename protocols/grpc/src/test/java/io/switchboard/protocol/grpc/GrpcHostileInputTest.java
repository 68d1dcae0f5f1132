package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.binary.BinaryCodec;
import io.switchboard.idl.runtime.binary.BinaryLimits;
import io.switchboard.idl.runtime.binary.BinaryWriter;
import io.switchboard.idl.runtime.binary.WireFormat;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ProtocolClient;
import io.switchboard.protocol.ProtocolServer;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Transport;
import io.switchboard.protocol.conformance.Conformance;
import io.switchboard.protocol.conformance.ConformanceComponent;
import io.switchboard.protocol.conformance.ConformanceImpl;
import io.switchboard.protocol.conformance.EchoDoubles;
import io.switchboard.protocol.conformance.EchoList;
import io.switchboard.protocol.conformance.Record;
import io.switchboard.protocol.conformance.Values;
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
    private static final BinaryCodec CODEC = ConformanceComponent.DESCRIPTOR.binaryCodec();
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
        assertRefused(raw.call(ECHO_LIST, bad), Status.Code.INVALID_ARGUMENT, "malformed",
                "LinkEntry.llong: expected tag LONG, got DOUBLE");
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
        assertRefused(raw.call(ECHO_LIST, List.of(new Frame(new byte[] {0x10, 0x01}, 0, 2))),
                Status.Code.INVALID_ARGUMENT, "malformed", "not a Chunk message");
    }

    @Test
    void messageCutAcrossManyChunksStillDecodes() throws Exception {
        byte[] ok = threeNodeList();
        List<Frame> frames = new java.util.ArrayList<>();
        for (byte b : ok) {
            frames.add(Frame.ofData(new byte[] {b}));
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
}

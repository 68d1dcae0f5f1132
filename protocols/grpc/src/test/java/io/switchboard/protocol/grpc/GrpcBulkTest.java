package io.switchboard.protocol.grpc;

import io.switchboard.idl.runtime.ServiceDescriptor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.LinkEntry;
import io.switchboard.testing.conformance.Point;
import io.switchboard.testing.conformance.Record;
import io.switchboard.testing.conformance.Values;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** What the bulk protocol promises beyond the shared suite: exact bits, big messages, deep lists, deadlines. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcBulkTest {
    /** A marker value: echoDoubles with it blocks until the call is cancelled. */
    private static final double BLOCK = -42.5;

    private final CountDownLatch blocking = new CountDownLatch(1);
    private final CountDownLatch interrupted = new CountDownLatch(1);
    private ProtocolServer server;
    private ProtocolClient client;
    private Transport transport;
    private Conformance stub;

    @BeforeAll
    void start() {
        server = Protocols.get("grpc").newServer(ServerSettings.defaults());
        Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl() {
            @Override
            public double[] echoDoubles(double[] values) {
                if (values != null && values.length == 1 && values[0] == BLOCK) {
                    blocking.countDown();
                    try {
                        Thread.sleep(Long.MAX_VALUE);
                    } catch (InterruptedException e) {
                        interrupted.countDown();
                    }
                }
                return values;
            }
        }));
        assertTrue(at.address().matches("grpc://127\\.0\\.0\\.1:\\d+/Conformance(\\?unix=.*)?"), at.address());
        client = Protocols.get("grpc").newClient(ClientSettings.defaults());
        transport = client.connect(ConformanceComponent.DESCRIPTOR, at);
        stub = ConformanceComponent.stub(transport);
    }

    @AfterAll
    void stop() {
        client.close();
        server.close();
    }

    @Test
    void aMessageThatFitsOnePartBySizeButIsCutInTwoStillGoesWhole() {
        // 131,071 doubles: 1,048,572 bytes, under the part target (1 MiB), but a packed piece leaves
        // 16 bytes of room, so the writer cuts it in two: the call must not assume one part from the size
        int n = (io.switchboard.codec.proto.ProtoCodec.PART_BYTES - 16) / 8 + 1;
        double[] values = new double[n];
        for (int i = 0; i < n; i++) {
            values[i] = i * 0.5 - 7;
        }
        io.switchboard.testing.conformance.EchoDoubles request = new io.switchboard.testing.conformance.EchoDoubles();
        request.setValues(values);
        io.switchboard.codec.proto.ProtoCodec.Writer writer = ConformanceComponent.DESCRIPTOR
                .codec(io.switchboard.codec.proto.ProtoCodec.class).writer("echoDoubles", request, 1000);
        int target = io.switchboard.codec.proto.ProtoCodec.PART_BYTES;
        assertTrue(writer.size() <= target, "the premise: within one part by size, " + writer.size());
        writer.writePart(new io.switchboard.codec.proto.ProtoOutput(target + 64), target);
        assertTrue(writer.hasMore(), "the premise: the writer cuts it in two");

        // promptly: a call made as one part's stalled on its second until the call's timeout (60 s)
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            assertArrayEquals(values, stub.echoDoubles(values));
            assertArrayEquals(values, ConformanceComponent.stub(transport).echoDoublesAsync(values).join());
        });
    }

    @Test
    void nanPayloadsAndSignedZerosKeepTheirBits() {
        long[] bits = {0x7ff0000000000001L, 0x7ff8000000000abcL, 0xfff0000000123456L, 0xfff8000000000000L,
            Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY),
            Double.doubleToRawLongBits(Double.MIN_VALUE), Double.doubleToRawLongBits(-Double.MAX_VALUE)};
        double[] values = new double[bits.length];
        for (int i = 0; i < bits.length; i++) {
            values[i] = Double.longBitsToDouble(bits[i]);
        }
        double[] back = stub.echoDoubles(values);
        for (int i = 0; i < bits.length; i++) {
            assertEquals(bits[i], Double.doubleToRawLongBits(back[i]), "bits of value " + i);
        }
    }

    @Test
    void floatNanPayloadInARecord() {
        Record r = new Record();
        int nan = 0x7fc00123;
        r.setFloats(new float[] {Float.intBitsToFloat(nan), -0.0f});
        r.setRatio(Float.intBitsToFloat(0xffc00042));
        Record back = stub.echoRecord(r);
        assertEquals(nan, Float.floatToRawIntBits(back.getFloats()[0]));
        assertEquals(Float.floatToRawIntBits(-0.0f), Float.floatToRawIntBits(back.getFloats()[1]));
        assertEquals(0xffc00042, Float.floatToRawIntBits(back.getRatio()));
    }

    @Test
    void nullAndEmptyStayApartInEveryKindOfField() {
        Record empty = Values.emptyRecord();
        empty.setName("");
        Record back = stub.echoRecord(empty);
        Values.assertSameRecord(empty, back);
        assertNotNull(back.getTags());
        assertEquals(0, back.getInts().length);
        assertEquals("", back.getName());
        Record nulls = new Record();
        Record none = stub.echoRecord(nulls);
        assertNull(none.getTags());
        assertNull(none.getInts());
        assertNull(none.getFloats());
        assertNull(none.getFlags());
        assertNull(none.getData());
        assertNull(none.getPoints());
        assertNull(none.getCount());
        assertNull(none.getRatio());
    }

    @Test
    void nullElementsOfListsSurvive() {
        Record r = Values.fullRecord();
        Record back = stub.echoRecord(r);
        Values.assertSameRecord(r, back);
        assertNull(back.getTags().get(2));
        assertNull(back.getPoints().get(1));
    }

    @Test
    void supplementaryCharactersAndLongStrings() {
        Record r = new Record();
        String s = "\uD83D\uDE00\uD834\uDD1E\r\t e\u0301 " + "\uD800\uDC00".repeat(50_000);
        r.setName(s);
        r.setTags(new ArrayList<>(Values.EDGE_STRINGS));
        Record back = stub.echoRecord(r);
        assertEquals(s, back.getName());
        assertEquals(Values.EDGE_STRINGS, back.getTags());
    }

    @Test
    void stringsThatXmlCannotCarryAreRefusedBeforeSending() {
        // the same values as on SOAP, so that a call's fate never depends on the protocol it takes
        for (String bad : new String[] {"nul \u0000", "lone \uD800 high", "lone \uDC00 low", "\uFFFF"}) {
            Record r = new Record();
            r.setName(bad);
            RefusedException e = assertThrows(RefusedException.class, () -> stub.echoRecord(r));
            assertEquals("malformed", e.reason());
            assertEquals("Record.name", e.field(), e.getMessage());
        }
    }

    @Test
    void arrayAboveTheFourMebibyteMessageLimitIsStreamedBothWays() {
        double[] values = new double[1_500_001]; // 12 MB: a dozen chunks, an odd count splits a value
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 0.5 - 1e6;
        }
        values[values.length - 1] = Double.longBitsToDouble(0x7ff0000000000777L);
        double[] back = stub.echoDoubles(values);
        Values.assertSameDoubles(values, back);
        assertEquals(0x7ff0000000000777L, Double.doubleToRawLongBits(back[back.length - 1]));
    }

    @Test
    void millionNodeListAtTheDefaultStack() {
        LinkEntry head = Values.list(1_000_000);
        LinkEntry back = stub.echoList(head);
        assertEquals(1_000_000, Values.length(back));
        Values.assertSameList(head, back);
    }

    @Test
    void cycleIntoTheMiddleKeepsItsShape() {
        LinkEntry head = Values.list(5);
        LinkEntry third = head.getNextLink().getNextLink();
        LinkEntry tail = third.getNextLink().getNextLink();
        tail.setNextLink(third); // third is shared: its predecessor and the tail both point at it
        LinkEntry back = stub.echoList(head);
        LinkEntry backThird = back.getNextLink().getNextLink();
        assertSame(backThird, backThird.getNextLink().getNextLink().getNextLink());
        Values.assertSameList(head, back);
    }

    @Test
    void listsOfStructsAndEveryScalar() {
        Record r = Values.fullRecord();
        List<Point> points = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            Point p = new Point();
            p.setX(i);
            p.setY(-i);
            points.add(p);
        }
        r.setPoints(points);
        r.setData(new byte[100_000]);
        Arrays.fill(r.getData(), (byte) 7);
        Values.assertSameRecord(r, stub.echoRecord(r));
    }

    @Test
    void deadlinePassesThroughAndCancelsTheServerWork() throws Exception {
        Conformance hurried = ConformanceComponent.stub(transport)
                .withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
        TransportException e = assertThrows(TransportException.class, () -> hurried.echoDoubles(new double[] {BLOCK}));
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery());
        assertTrue(e.getMessage().contains("deadline"), e.getMessage());
        assertTrue(blocking.await(30, TimeUnit.SECONDS), "the operation started");
        assertTrue(interrupted.await(30, TimeUnit.SECONDS), "the cancelled call interrupted the operation");
        stub.ping();
    }

    @Test
    void protoDescribesTheServiceTheServerRuns() {
        String proto = ConformanceComponent.DESCRIPTOR.document(ServiceDescriptor.PROTO);
        assertTrue(proto.contains("package switchboard.conformance;"), proto);
        assertTrue(proto.contains("service Conformance {"), proto);
        assertTrue(proto.contains("// Convention (Switchboard typed protobuf"), proto);
        for (var op : ConformanceComponent.DESCRIPTOR.operations()) {
            String stream = GrpcTransport.streams(op) ? "stream " : "";
            String response = op.oneWay() ? "Empty" : op.responseElement().getLocalPart();
            String pkg = "(\\.switchboard\\.conformance\\.)?";
            assertTrue(proto.matches("(?s).*  rpc " + op.name() + "\\(" + stream + pkg + op.requestElement().getLocalPart()
                    + "\\) returns \\(" + stream + pkg + response + "\\);.*"), op.name());
            assertEquals(ProtoSchemas.serviceName("Conformance") + "/" + op.name(),
                    GrpcTransport.method(op).getFullMethodName());
        }
        assertEquals("switchboard.conformance.Conformance", ProtoSchemas.serviceName("Conformance"));
    }

    @Test
    void bytesFieldRoundTripsExactly() {
        Record r = new Record();
        byte[] data = new byte[70_000]; // above the size at which the writer stops copying
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31);
        }
        r.setData(data);
        assertArrayEquals(data, stub.echoRecord(r).getData());
    }
}

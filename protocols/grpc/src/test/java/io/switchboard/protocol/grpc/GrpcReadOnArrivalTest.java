package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.ProtoParts;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.EchoDoublesResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A message announced larger than one part is merged on gRPC's event loop as its parts arrive
 * ({@link PartQueue#readOnArrival}), on the server for requests and on the client for responses.
 * The limits and refusals of the part queue hold there as they do for parts taken by a reading
 * thread: a part cut short, a message over the limit, too many parts. Each server case checks
 * that the call did take the on-arrival path; that the client's large calls do is
 * {@link BulkMemoryTest}'s check (the response's array allocated on the event loop).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcReadOnArrivalTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final OperationDescriptor ECHO_DOUBLES = ConformanceComponent.DESCRIPTOR.operation("echoDoubles");
    private static final int LIMIT = 4 << 20;
    /** Over one part, under the limit: the server reads such a request on arrival. */
    private static final long ANNOUNCED = 3 << 20;

    private GrpcServer server;
    private ProtocolClient client;
    private ConformanceStub stub;
    private RawCalls raw;

    @BeforeAll
    void start() {
        server = (GrpcServer) new GrpcProtocolProvider().newServer(ServerSettings.defaults().withMaxMessageBytes(LIMIT));
        Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        client = new GrpcProtocolProvider().newClient(ClientSettings.defaults());
        Transport transport = client.connect(ConformanceComponent.DESCRIPTOR, at);
        stub = ConformanceComponent.stub(transport);
        raw = new RawCalls(at);
    }

    @AfterAll
    void stop() {
        raw.close();
        client.close();
        server.close();
    }

    @AfterEach
    void serverStillServes() {
        double[] values = doubles(200_000); // 1.6 MB: two parts each way, read on arrival on both sides
        assertArrayEquals(values, stub.echoDoubles(values));
    }

    private static double[] doubles(int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = i % 7 == 0 ? Double.NaN : i * -0.5;
        }
        v[0] = -0.0;
        return v;
    }

    /** The request's parts as a Switchboard client cuts them. */
    private static List<byte[]> parts(double[] values) {
        EchoDoubles request = new EchoDoubles();
        request.setValues(values);
        return ProtoParts.of(CODEC.writer("echoDoubles", request, 10), ProtoCodec.PART_BYTES);
    }

    private static Metadata announcing(long size) {
        Metadata headers = new Metadata();
        headers.put(GrpcErrors.SIZE, Long.toString(size));
        return headers;
    }

    private RawCalls.Result callReadOnArrival(List<byte[]> parts, long announced) throws Exception {
        long before = server.readOnArrivalCalls();
        RawCalls.Result r = raw.call(ECHO_DOUBLES, parts, announcing(announced));
        assertEquals(before + 1, server.readOnArrivalCalls(), "the server did not read this request on arrival");
        return r;
    }

    private static void assertRefused(RawCalls.Result r, Status.Code code, String reason, String text) {
        assertEquals(code, r.status().getCode(), String.valueOf(r.status()));
        assertEquals(reason, r.trailers().get(GrpcErrors.REFUSED));
        assertTrue(r.status().getDescription().contains(text), r.status().getDescription());
    }

    @Test
    void aRequestOfSeveralPartsIsMergedOnArrivalAndAnsweredExactly() throws Exception {
        double[] values = doubles(300_000);
        List<byte[]> parts = parts(values);
        assertTrue(parts.size() >= 3, "several parts: " + parts.size());
        long size = parts.stream().mapToLong(p -> p.length).sum();
        RawCalls.Result r = callReadOnArrival(parts, size);
        assertEquals(Status.Code.OK, r.status().getCode(), String.valueOf(r.status()));
        EchoDoublesResponse back = (EchoDoublesResponse) CODEC.fromBytes(ECHO_DOUBLES.responseElement().getLocalPart(),
                r.data(), io.switchboard.codec.message.MessageLimits.unlimited());
        assertArrayEquals(values, back.getValues());
    }

    @Test
    void aPartCutShortIsRefused() throws Exception {
        List<byte[]> parts = parts(doubles(300_000));
        byte[] last = parts.get(parts.size() - 1);
        parts.set(parts.size() - 1, Arrays.copyOf(last, last.length - 3));
        assertRefused(callReadOnArrival(parts, ANNOUNCED), Status.Code.INVALID_ARGUMENT, "malformed", "runs past");
    }

    @Test
    void partsOverTheMessageLimitAreRefused() throws Exception {
        List<byte[]> parts = parts(doubles(700_000)); // 5.6 MB in 1 MiB parts, announced as 3 MiB
        assertRefused(callReadOnArrival(parts, ANNOUNCED), Status.Code.RESOURCE_EXHAUSTED, "size-limit",
                "over the limit of " + LIMIT + " bytes");
    }

    @Test
    void endlessEmptyPartsAreCut() throws Exception {
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < 1100; i++) {
            parts.add(new byte[0]);
        }
        assertRefused(callReadOnArrival(parts, ANNOUNCED), Status.Code.RESOURCE_EXHAUSTED, "chunk-limit",
                "more than 1024 parts");
    }

    @Test
    void aResponseCutShortIsRefusedByAClientWhoseRequestWasSeveralParts() throws Exception {
        // a server that answers any request with a valid part and then one cut short
        List<byte[]> response = new ArrayList<>();
        EchoDoublesResponse m = new EchoDoublesResponse();
        m.setValues(doubles(200_000));
        ProtoCodec.Writer w = CODEC.writer(ECHO_DOUBLES.responseElement().getLocalPart(), m, 10);
        ProtoOutput out = new ProtoOutput(ProtoCodec.PART_BYTES + 64);
        do {
            out.reset();
            w.writePart(out, ProtoCodec.PART_BYTES);
            response.add(out.toByteArray());
        } while (w.hasMore());
        byte[] last = response.get(response.size() - 1);
        response.set(response.size() - 1, Arrays.copyOf(last, last.length - 3));
        io.grpc.MethodDescriptor<Part, Part> method = GrpcTransport.method(ECHO_DOUBLES);
        Server fake = NettyServerBuilder.forPort(0)
                .addService(ServerServiceDefinition.builder(method.getServiceName())
                        .addMethod(method, new ServerCallHandler<Part, Part>() {
                            @Override
                            public ServerCall.Listener<Part> startCall(ServerCall<Part, Part> call, Metadata headers) {
                                call.request(Integer.MAX_VALUE);
                                return new ServerCall.Listener<>() {
                                    @Override
                                    public void onHalfClose() {
                                        call.sendHeaders(announcing(ANNOUNCED));
                                        for (byte[] p : response) {
                                            call.sendMessage(new Part(p, p.length));
                                        }
                                        call.close(Status.OK, new Metadata());
                                    }
                                };
                            }
                        }).build())
                .build().start();
        try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, new Endpoint("grpc",
                "grpc://127.0.0.1:" + fake.getPort() + "/" + ConformanceComponent.DESCRIPTOR.name()))) {
            // a request of several parts: the client reads the response on arrival
            TransportException e = assertThrows(TransportException.class,
                    () -> ConformanceComponent.stub(t).echoDoubles(doubles(300_000)));
            assertTrue(e.getMessage().contains("unreadable response") && e.getMessage().contains("runs past"),
                    e.getMessage());
        } finally {
            fake.shutdownNow();
        }
    }
}

package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.CallIds;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.spi.DeduplicatingInterceptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.UnusedPorts;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The behaviour every protocol must have, run against a real server on loopback. A protocol
 * module extends this class and names its protocol; nothing else.
 *
 * <pre>{@code
 * class SoapConformanceTest extends AbstractProtocolConformanceTest {
 *     protected String protocolName() { return "soap"; }
 * }
 * }</pre>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractProtocolConformanceTest {
    protected ProtocolProvider provider;
    protected ProtocolServer server;
    protected ProtocolClient client;
    protected ConformanceImpl impl;
    protected Endpoint endpoint;
    protected Transport transport;
    protected Conformance stub;

    /** The protocol's key, as its provider names it. */
    protected abstract String protocolName();

    /** The provider under test: the one on the class path by that name, unless a test configures its own. */
    protected ProtocolProvider provider() {
        return Protocols.get(protocolName());
    }

    protected ServerSettings serverSettings() {
        return ServerSettings.defaults();
    }

    protected ClientSettings clientSettings() {
        return ClientSettings.defaults();
    }

    /**
     * The endpoint the client connects to, given the one the server returned: that one, unless a
     * protocol with more than one way to a server runs the suite once per way (tcp: over TCP and
     * over a Unix domain socket).
     */
    protected Endpoint connectTo(Endpoint served) {
        return served;
    }

    /** What {@link Transport#via()} says once a call went through: null for a protocol with one way only. */
    protected String expectedVia() {
        return null;
    }

    @BeforeAll
    void startServer() {
        provider = provider();
        server = provider.newServer(serverSettings());
        impl = new ConformanceImpl();
        // callers named in the trace state: two identities over one plain connection, for the call-id tests
        endpoint = server.export(ServerInterceptorChain.of(null, protocolName(), List.of(CALLER_GUARD,
                new CallerFromTraceState(), new DeduplicatingInterceptor(1 << 20, java.time.Duration.ofMinutes(5))),
                ConformanceComponent.skeleton(impl)));
        client = provider.newClient(clientSettings());
        transport = client.connect(ConformanceComponent.DESCRIPTOR, connectTo(endpoint));
        stub = ConformanceComponent.stub(transport);
    }

    /** {@code increment} by this is refused as an authorization policy refuses a caller. */
    static final int BY_DENIED = -403;
    /** {@code increment} by this is refused as bad credentials are. */
    static final int BY_UNAUTHENTICATED = -401;
    static final String GUARDED_PATH = "/switchboard.conformance.Conformance/increment";

    /** Stands for the server's authorization step: refuses two marked requests because of who sent them. */
    private static final io.switchboard.protocol.ServerInterceptor CALLER_GUARD = (call, next) -> {
        if (call.request() instanceof Increment i && (i.getBy() == BY_DENIED || i.getBy() == BY_UNAUTHENTICATED)) {
            throw i.getBy() == BY_DENIED
                    ? io.switchboard.protocol.PermissionDeniedException.denied(GUARDED_PATH, "permission denied: "
                            + GUARDED_PATH + " is not allowed to an anonymous caller")
                    : io.switchboard.protocol.PermissionDeniedException.unauthenticated(GUARDED_PATH,
                            "the bearer token did not verify");
        }
        return next.proceed(call);
    };

    @Test
    void aCallerRefusedByTheServerGetsPermissionDeniedNotDelivered() {
        long before = impl.increments.get();
        io.switchboard.protocol.PermissionDeniedException denied = assertThrows(
                io.switchboard.protocol.PermissionDeniedException.class, () -> stub.increment(BY_DENIED));
        assertEquals(io.switchboard.protocol.PermissionDeniedException.DENIED, denied.reason());
        assertEquals(GUARDED_PATH, denied.path());
        assertEquals(TransportException.Delivery.NOT_DELIVERED, denied.delivery());
        assertTrue(denied.getMessage().contains("not allowed to an anonymous caller"), denied.getMessage());
        io.switchboard.protocol.PermissionDeniedException unauthenticated = assertThrows(
                io.switchboard.protocol.PermissionDeniedException.class, () -> stub.increment(BY_UNAUTHENTICATED));
        assertTrue(unauthenticated.unauthenticated(), unauthenticated.reason());
        assertEquals(GUARDED_PATH, unauthenticated.path());
        assertEquals(before, impl.increments.get(), "neither ran");
        long total = impl.total.get();
        assertEquals(total + 1, stub.increment(1), "the transport serves on");
    }

    @Test
    void callsTakeTheWayTheSuiteRunsOver() {
        stub.ping();
        assertEquals(expectedVia(), transport.via());
    }

    @AfterAll
    void stopServer() {
        if (transport != null) {
            transport.close();
        }
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void providerIsFoundByItsName() {
        assertEquals(protocolName(), provider.name());
        assertEquals(protocolName(), endpoint.protocol());
        assertEquals(protocolName(), transport.protocol());
    }

    @Test
    void emptyCall() {
        stub.ping();
    }

    @Test
    void edgeDoublesRoundTripExactly() {
        Values.assertSameDoubles(Values.EDGE_DOUBLES, stub.echoDoubles(Values.EDGE_DOUBLES.clone()));
    }

    @Test
    void emptyAndNullArraysStayApart() {
        double[] empty = stub.echoDoubles(new double[0]);
        assertNotNull(empty, "an empty array must not come back as null");
        assertEquals(0, empty.length);
        assertNull(stub.echoDoubles(null), "a null array must not come back as empty");
    }

    @Test
    void largeArrayRoundTrips() {
        double[] values = new double[100_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 1.000001 - 50_000;
        }
        Values.assertSameDoubles(values, stub.echoDoubles(values));
    }

    @Test
    void recordsWithEveryFieldSetEmptyOrAbsent() {
        for (Record r : new Record[] {Values.fullRecord(), Values.emptyRecord(), new Record(), null}) {
            Values.assertSameRecord(r, stub.echoRecord(r));
        }
    }

    @Test
    void unicodeStringsRoundTrip() {
        for (String s : Values.EDGE_STRINGS) {
            Record r = new Record();
            r.setName(s);
            assertEquals(s, stub.echoRecord(r).getName());
        }
    }

    @Test
    void nullListIsNull() {
        assertNull(stub.echoList(null));
    }

    @Test
    void hundredThousandNodeListAtDefaultStack() {
        LinkEntry head = Values.list(100_000);
        LinkEntry back = stub.echoList(head);
        assertEquals(100_000, Values.length(back));
        Values.assertSameList(head, back);
    }

    @Test
    void cyclicListKeepsItsShape() {
        LinkEntry head = Values.list(3);
        head.getNextLink().getNextLink().setNextLink(head);
        LinkEntry back = stub.echoList(head);
        assertSame(back, back.getNextLink().getNextLink().getNextLink(), "tail points back at the head");
        Values.assertSameList(head, back);
    }

    @Test
    void declaredFaultComesBackAsItsException() {
        DivideFaultException e = assertThrows(DivideFaultException.class, () -> stub.divide(7, 0));
        assertEquals("division by zero", e.getFaultInfo().getReason());
        assertEquals(7, e.getFaultInfo().getDividend());
    }

    @Test
    void multiFieldResponse() throws Exception {
        DivideResponse r = stub.divide(-7, 2);
        assertEquals(-3, r.getQuotient());
        assertEquals(-1, r.getRemainder());
    }

    @Test
    void undeclaredErrorCarriesTheServerMessage() {
        RemoteInvocationException e = assertThrows(RemoteInvocationException.class,
                () -> stub.fail("disk on fire \uD83D\uDD25"));
        assertTrue(e.getMessage().contains("disk on fire \uD83D\uDD25"), e.getMessage());
        stub.ping();
    }

    @Test
    void nonIdempotentCallRunsOnce() {
        long before = impl.increments.get();
        stub.increment(5);
        assertEquals(before + 1, impl.increments.get());
    }

    @Test
    void callIdTravelsSoARepeatRunsOnceAndGetsTheFirstResult() {
        long before = impl.increments.get();
        Conformance once = ConformanceComponent.stub(transport)
                .withOptions(CallOptions.DEFAULT.withCallId("conformance-" + System.nanoTime()));
        long first = once.increment(3);
        long repeat = once.increment(3);
        assertEquals(first, repeat, "the repeat answers with the first result");
        assertEquals(before + 1, impl.increments.get(), "the operation ran once");
        Conformance other = ConformanceComponent.stub(transport)
                .withOptions(CallOptions.DEFAULT.withCallId("conformance-other-" + System.nanoTime()));
        other.increment(3);
        assertEquals(before + 2, impl.increments.get(), "another call id runs again");
    }

    /** A stub whose calls carry call id {@code callId}, made by {@code caller} (null: anonymous). */
    private Conformance calling(String caller, String callId) {
        CallOptions options = CallOptions.DEFAULT.withCallId(callId);
        return ConformanceComponent.stub(transport).withOptions(caller == null ? options
                : options.with(TraceContext.OPTION, CallerFromTraceState.as(caller)));
    }

    @Test
    void aCallIdReusedByAnotherCallerOrForAnotherRequestIsRefusedAndNeverRuns() {
        String x = CallIds.next();
        long before = impl.increments.get();
        long alices = calling("alice", x).increment(100);

        RefusedException other = assertThrows(RefusedException.class, () -> calling("bob", x).increment(5));
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, other.reason(), other.getMessage());
        RefusedException same = assertThrows(RefusedException.class, () -> calling("bob", x).increment(100));
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, same.reason(), "the id is alice's, whatever bob asks");
        assertEquals(before + 1, impl.increments.get(), "bob's increments never ran");

        assertEquals(alices, calling("alice", x).increment(100), "alice's repeat is answered from her first run");
        RefusedException changed = assertThrows(RefusedException.class, () -> calling("alice", x).increment(7));
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, changed.reason(), "alice's own id for another request");
        assertEquals(before + 1, impl.increments.get());
        stub.ping();
    }

    @Test
    void anonymouslyAnotherRequestUnderAUsedCallIdIsRefused() {
        String x = CallIds.next();
        long before = impl.increments.get();
        long first = calling(null, x).increment(1);
        RefusedException e = assertThrows(RefusedException.class, () -> calling(null, x).increment(2));
        assertEquals(DeduplicatingInterceptor.CALL_ID_REUSE, e.reason(), e.getMessage());
        assertEquals(first, calling(null, x).increment(1), "a true repeat still gets the first answer");
        assertEquals(before + 1, impl.increments.get());
    }

    @Test
    void repeatedCallIdOfAFailedCallGetsTheSameFault() {
        Conformance once = ConformanceComponent.stub(transport)
                .withOptions(CallOptions.DEFAULT.withCallId("fault-" + System.nanoTime()));
        DivideFaultException first = assertThrows(DivideFaultException.class, () -> once.divide(1, 0));
        DivideFaultException again = assertThrows(DivideFaultException.class, () -> once.divide(1, 0));
        assertEquals(first.getFaultInfo().getReason(), again.getFaultInfo().getReason());
    }

    @Test
    void concurrentCallsOnOneTransport() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<double[]>> results = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                double[] v = new double[i * 10];
                java.util.Arrays.fill(v, i);
                results.add(pool.submit(() -> stub.echoDoubles(v)));
            }
            for (int i = 0; i < 64; i++) {
                double[] back = results.get(i).get();
                assertEquals(i * 10, back.length);
                for (double d : back) {
                    assertEquals(i, d);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void asyncCallsCompleteWithWhatTheBlockingFormReturnsOrThrows() throws Exception {
        ConformanceStub async = ConformanceComponent.stub(transport);
        List<CompletableFuture<double[]>> results = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            double[] v = new double[i * 100];
            java.util.Arrays.fill(v, -i - 0.5);
            results.add(async.echoDoublesAsync(v));
        }
        for (int i = 0; i < 32; i++) {
            double[] back = results.get(i).get(60, TimeUnit.SECONDS);
            assertEquals(i * 100, back.length);
            for (double d : back) {
                assertEquals(-i - 0.5, d);
            }
        }
        Values.assertSameDoubles(Values.EDGE_DOUBLES, async.echoDoublesAsync(Values.EDGE_DOUBLES.clone())
                .get(60, TimeUnit.SECONDS));
        assertNull(async.echoDoublesAsync(null).get(60, TimeUnit.SECONDS));
        assertEquals(-3, async.divideAsync(-7, 2).get(60, TimeUnit.SECONDS).getQuotient());
        ExecutionException fault = assertThrows(ExecutionException.class,
                () -> async.divideAsync(7, 0).get(60, TimeUnit.SECONDS));
        assertEquals("division by zero", assertInstanceOf(DivideFaultException.class, fault.getCause())
                .getFaultInfo().getReason());
        ExecutionException error = assertThrows(ExecutionException.class,
                () -> async.failAsync("async \uD83D\uDD25").get(60, TimeUnit.SECONDS));
        assertTrue(assertInstanceOf(RemoteInvocationException.class, error.getCause()).getMessage()
                .contains("async \uD83D\uDD25"), error.getCause().getMessage());
    }

    @Test
    void oneWayCallRunsExactlyOnceBlockingOrNot() throws Exception {
        ConformanceStub oneWay = ConformanceComponent.stub(transport);
        String blocking = protocolName() + "-blocking-" + System.nanoTime();
        impl.delivered = new CountDownLatch(1);
        oneWay.deliver(blocking);
        assertTrue(impl.delivered.await(60, TimeUnit.SECONDS), "the one-way call never ran");
        String async = protocolName() + "-async-" + System.nanoTime();
        impl.delivered = new CountDownLatch(1);
        assertNull(oneWay.deliverAsync(async).get(60, TimeUnit.SECONDS));
        assertTrue(impl.delivered.await(60, TimeUnit.SECONDS), "the async one-way call never ran");
        stub.ping();
        assertEquals(1, impl.deliveries.get(blocking).get(), "the blocking one-way call ran more than once");
        assertEquals(1, impl.deliveries.get(async).get(), "the async one-way call ran more than once");

        String repeated = protocolName() + "-repeated-" + System.nanoTime();
        ConformanceStub once = oneWay.withOptions(CallOptions.DEFAULT.withCallId(repeated));
        once.deliver(repeated);
        once.deliver(repeated);
        assertEquals(1, impl.deliveries.get(repeated).get(), "a repeated call id of a one-way call ran again");

        String failing = "fail:" + protocolName() + "-" + System.nanoTime();
        RemoteInvocationException e = assertThrows(RemoteInvocationException.class, () -> oneWay.deliver(failing));
        assertTrue(e.getMessage().contains("one-way failure " + failing), e.getMessage());
        assertEquals(1, impl.deliveries.get(failing).get());
    }

    @Test
    void unexportedComponentIsRefusedAndServerStillServes() {
        ConformanceImpl other = new ConformanceImpl();
        try (ProtocolServer second = provider.newServer(serverSettings())) {
            Endpoint at = second.export(ConformanceComponent.skeleton(other));
            try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, at)) {
                Conformance s = ConformanceComponent.stub(t);
                s.ping();
                second.unexport(ConformanceComponent.DESCRIPTOR.name());
                assertThrows(SwitchboardException.class, s::ping);
            }
        }
        stub.ping();
    }

    @Test
    void connectionRefusedSaysTheRequestWasNotSent() throws Exception {
        int port = UnusedPorts.port();
        Endpoint dead = deadEndpoint(port);
        try (Transport t = client.connect(ConformanceComponent.DESCRIPTOR, dead)) {
            TransportException e = assertThrows(TransportException.class, () -> ConformanceComponent.stub(t).ping());
            assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery(), e.getMessage());
        }
    }

    /** An endpoint of this protocol at a port where nothing listens. */
    protected abstract Endpoint deadEndpoint(int port);

    @Test
    void exportingTheSameNameTwiceIsAnError() {
        Exception e = assertThrows(Exception.class, () -> server.export(ConformanceComponent.skeleton(new ConformanceImpl())));
        assertInstanceOf(IllegalStateException.class, e);
    }

    // ---- n-d arrays (the <sb:ndarray/> convention), date-times and bytes

    @Test
    void matrixOf2000By2000RoundTripsExactly() {
        int n = 2000;
        double[] flat = new double[n * n];
        for (int i = 0; i < flat.length; i++) {
            flat[i] = i;   // short decimal forms keep the SOAP message within the default 64 MiB
        }
        System.arraycopy(Values.EDGE_DOUBLES, 0, flat, n * n / 2, Values.EDGE_DOUBLES.length);
        Tensor m = Tensor.of(new int[] {n, n}, flat);
        Tensor back = stub.echoTensor(m);
        Values.assertSameTensor(m, back);
        double[][] rows = back.toArray();
        assertEquals(n, rows.length);
        assertEquals(n, rows[n - 1].length);
        assertEquals((double) (n * n - 1), rows[n - 1][n - 1]);
        assertEquals(flat[n + 7], back.get(1, 7));
    }

    @Test
    void nestedArraysOfEveryRankAndEdgeShapeRoundTrip() {
        double[][] matrix = new double[3][6];
        for (int i = 0; i < 3; i++) {
            System.arraycopy(Values.EDGE_DOUBLES, i * 6, matrix[i], 0, 6);
        }
        double[][][] cube = new double[2][3][4];
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
                for (int k = 0; k < 4; k++) {
                    cube[i][j][k] = Values.EDGE_DOUBLES[(i * 12 + j * 4 + k) % Values.EDGE_DOUBLES.length];
                }
            }
        }
        for (Tensor t : new Tensor[] {Tensor.of(matrix), Tensor.of(cube), Tensor.of(new double[0][]),
                Tensor.of(new double[3][0]), Tensor.of(new double[2][0][5]), Tensor.of(new int[0], new double[] {Double.NaN}),
                Tensor.of(new int[] {4}, new double[] {-0.0, 1, 2, 3}), null}) {
            Values.assertSameTensor(t, stub.echoTensor(t));
        }
        double[][][] cubeBack = stub.echoTensor(Tensor.of(cube)).toArray();
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
                Values.assertSameDoubles(cube[i][j], cubeBack[i][j]);
            }
        }
        int[][][] ints = {{{Integer.MIN_VALUE, 0}, {1, 2}}, {{3, 4}, {5, Integer.MAX_VALUE}}};
        IntTensor back = stub.echoIntTensor(IntTensor.of(ints));
        assertTrue(java.util.Arrays.deepEquals(ints, back.<int[][][]>toArray()));
        assertNull(stub.echoIntTensor(null));
    }

    @Test
    void raggedOrInconsistentArraysAreRefusedByName() {
        IllegalArgumentException ragged = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(new double[][] {{1, 2, 3}, {4, 5}}));
        assertTrue(ragged.getMessage().contains("ragged") && ragged.getMessage().contains("[1]"), ragged.getMessage());
        IllegalArgumentException nullRow = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(new double[][] {{1}, null}));
        assertTrue(nullRow.getMessage().contains("[1] is null"), nullRow.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Tensor.of(new int[] {2, 2}, new double[3]));
        Tensor bad = new Tensor();
        bad.setShape(new int[] {2, 2});
        bad.setValues(new double[3]);
        SwitchboardException e = assertThrows(SwitchboardException.class, () -> stub.echoTensor(bad));
        assertTrue(String.valueOf(e.getMessage()).contains("needs 4 values"), e.getMessage());
        stub.ping();
    }

    @Test
    void dateTimesKeepTheirOffsetAndBytesTheirValues() {
        byte[] every = new byte[1 << 20];
        for (int i = 0; i < every.length; i++) {
            every[i] = (byte) (i * 31 + (i >> 8));
        }
        java.time.OffsetDateTime[] times = {
            java.time.OffsetDateTime.of(2026, 3, 29, 1, 30, 0, 0, java.time.ZoneOffset.UTC),
            java.time.OffsetDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_999, java.time.ZoneOffset.ofHours(-8)),
            java.time.OffsetDateTime.of(2099, 1, 1, 0, 0, 0, 1_000, java.time.ZoneOffset.ofHours(14)),
            java.time.OffsetDateTime.of(2026, 11, 22, 10, 15, 30, 0, java.time.ZoneOffset.ofHoursMinutes(-9, -30)),
        };
        for (java.time.OffsetDateTime when : times) {
            Record r = new Record();
            r.setWhen(when);
            r.setData(every);
            Record back = stub.echoRecord(r);
            assertEquals(when, back.getWhen(), "instant and offset");
            assertEquals(when.getOffset(), back.getWhen().getOffset());
            org.junit.jupiter.api.Assertions.assertArrayEquals(every, back.getData());
        }
    }

    @Test
    void byReferenceOperationRoundTripsLikeAnyOther() {
        Record r = Values.fullRecord();
        Values.assertSameRecord(r, stub.echoShared(r));
        assertNull(stub.echoShared(null));
    }

    // ---- heterogeneous lists (a named type whose content is one xs:choice maxOccurs="unbounded")

    @Test
    void heterogeneousListsOfEveryAlternativeRoundTrip() {
        Mixed every = Values.mixedOfEveryKind();
        EchoMixedResponse back = stub.echoMixed(every, List.of(Mixed.of(), Mixed.of(1L), every));
        Values.assertSameMixed(every, back.getList());
        assertEquals(3, back.getMore().size());
        Values.assertSameMixed(Mixed.of(), back.getMore().get(0));
        Values.assertSameMixed(Mixed.of(1L), back.getMore().get(1));
        Values.assertSameMixed(every, back.getMore().get(2));
    }

    @Test
    void nullAndEmptyHeterogeneousListsStayApart() {
        EchoMixedResponse empty = stub.echoMixed(Mixed.of(), new ArrayList<>());
        assertNotNull(empty.getList(), "an empty list must not come back as null");
        assertEquals(0, empty.getList().getItems().size());
        assertNotNull(empty.getMore(), "an empty repeated field must not come back as null");
        assertEquals(0, empty.getMore().size());
        EchoMixedResponse none = stub.echoMixed(null, null);
        assertNull(none.getList(), "a null list must not come back as empty");
        assertNull(none.getMore());
    }

    @Test
    void deepButLegalNestingRoundTrips() {
        Mixed deepest = Values.nested(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH);
        Values.assertSameMixed(deepest, stub.echoMixed(deepest, null).getList());
    }

    @Test
    void nestingDeeperThanTheLimitIsRefusedByName() {
        Mixed tooDeep = Values.nested(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH + 1);
        RuntimeException e = assertThrows(RuntimeException.class, () -> stub.echoMixed(tooDeep, null));
        assertTrue(String.valueOf(e.getMessage()).contains("deeper than " + io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH),
                e.toString());
        Mixed self = Mixed.of(1.0);
        self.getItems().add(self);   // a list that holds itself never ends: refused, not a stack overflow
        RuntimeException cycle = assertThrows(RuntimeException.class, () -> stub.echoMixed(self, null));
        String why = String.valueOf(cycle.getMessage());
        assertTrue(why.contains("deeper than") || why.contains("cycle is detected"), cycle.toString());
        stub.ping();
    }

    @Test
    void nullOrForeignElementsAreRefusedByName() {
        Mixed withNull = Mixed.of(1.0, null);
        RuntimeException e = assertThrows(RuntimeException.class, () -> stub.echoMixed(withNull, null));
        assertTrue(String.valueOf(e.getMessage()).contains("null"), e.toString());
        Mixed foreign = Mixed.of(1.0, 3);   // an Integer: no alternative is xs:int
        RuntimeException f = assertThrows(RuntimeException.class, () -> stub.echoMixed(foreign, null));
        assertTrue(String.valueOf(f.getMessage()).contains("java.lang.Integer"), f.toString());
        stub.ping();
    }

    @Test
    void byteArraysEmptyEveryValueAndLarge() {
        byte[] large = new byte[8 << 20];
        new java.util.Random(42).nextBytes(large);
        for (byte[] data : new byte[][] {new byte[0], Values.allByteValues(), large, null}) {
            Record r = new Record();
            r.setData(data);
            org.junit.jupiter.api.Assertions.assertArrayEquals(data, stub.echoRecord(r).getData());
        }
    }

    @Test
    void dateTimesKeepEveryOffsetExactly() {
        java.time.ZoneOffset[] offsets = {java.time.ZoneOffset.UTC, java.time.ZoneOffset.ofHoursMinutes(5, 30),
            java.time.ZoneOffset.ofHoursMinutes(5, 45), java.time.ZoneOffset.ofHours(-12), java.time.ZoneOffset.ofHours(14),
            java.time.ZoneOffset.ofHoursMinutes(-3, -30)};
        for (java.time.ZoneOffset offset : offsets) {
            java.time.OffsetDateTime when = java.time.OffsetDateTime.of(2026, 2, 28, 23, 59, 59, 120_000_000, offset);
            Record r = new Record();
            r.setWhen(when);
            java.time.OffsetDateTime back = stub.echoRecord(r).getWhen();
            assertEquals(when, back, "instant and offset " + offset);
            assertEquals(when.toString(), back.toString(), "the same text, Z included");
        }
    }
}

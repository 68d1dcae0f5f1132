package io.switchboard.protocol.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.DeduplicatingSkeleton;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ProtocolClient;
import io.switchboard.protocol.ProtocolProvider;
import io.switchboard.protocol.ProtocolServer;
import io.switchboard.protocol.Protocols;
import io.switchboard.protocol.RemoteInvocationException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.Transport;
import io.switchboard.protocol.TransportException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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

    protected ServerSettings serverSettings() {
        return ServerSettings.defaults();
    }

    protected ClientSettings clientSettings() {
        return ClientSettings.defaults();
    }

    @BeforeAll
    void startServer() {
        provider = Protocols.get(protocolName());
        server = provider.newServer(serverSettings());
        impl = new ConformanceImpl();
        endpoint = server.export(new DeduplicatingSkeleton(ConformanceComponent.skeleton(impl), 1000,
                java.time.Duration.ofMinutes(5)));
        client = provider.newClient(clientSettings());
        transport = client.connect(ConformanceComponent.DESCRIPTOR, endpoint);
        stub = ConformanceComponent.stub(transport);
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
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
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
}

package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.Values;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.SchedulerLag;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Faults on the wire between a meta-stub and real SOAP and gRPC servers on loopback, injected by
 * a {@link FaultProxy} in front of one endpoint: a gRPC connection reset in the middle of a
 * large request, a reset after the server ran the operation, a SOAP endpoint slower than the
 * call's deadline, truncated responses. Each test checks what the caller sees and counts what
 * each server really executed: nothing lost, nothing non-idempotent run twice.
 */
class FaultInjectionTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final List<CallRecord> calls = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();
    /** Runs inside the server's skeleton, after the operation and before the response is sent. */
    private volatile Consumer<String> afterRun = p -> { };

    /**
     * Closes the client, the proxies and the servers, the last made first. Counting what ran after
     * this cannot miss a late request: nothing reaches a closed server.
     */
    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        closing.clear();
    }

    private Skeleton counting(String protocol, Skeleton inner) {
        return new CountingSkeleton(inner, protocol, served, label -> afterRun.accept(label));   // the hook a test sets now
    }

    private Endpoint export(String protocol, Skeleton skeleton) {
        ProtocolServer s = Protocols.get(protocol).newServer(ServerSettings.defaults());
        closing.add(s);
        return s.export(counting(protocol, skeleton));
    }

    private FaultProxy proxy(Endpoint target) {
        FaultProxy p = FaultProxy.to(target);
        closing.add(p);
        return p;
    }

    private ConformanceStub client(List<String> protocols, List<Endpoint> endpoints, SelectionPolicy policy,
                                   boolean callIds) {
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols(protocols).endpoints(endpoints)
                .policy(policy).serverRecognisesCallIds(callIds).listener(calls::add).build();
        closing.add(channel::close);
        return ConformanceComponent.stub(channel);
    }

    private record Proxied(FaultProxy proxy, ConformanceStub stub) { }

    /** gRPC and SOAP servers for one skeleton, the gRPC one behind a proxy; calls pinned to gRPC by the policy. */
    private Proxied grpcBehindProxy(Skeleton skeleton, boolean callIds) {
        Endpoint grpc = export("grpc", skeleton);
        Endpoint soap = export("soap", skeleton);
        FaultProxy proxy = proxy(grpc);
        return new Proxied(proxy, client(List.of("grpc", "soap"), List.of(proxy.route(grpc), soap),
                new FixedPolicy("grpc"), callIds));
    }

    /** A SOAP server behind a proxy, and a SOAP-only client. */
    private Proxied soapBehindProxy() {
        Endpoint soap = export("soap", ConformanceComponent.skeleton(impl));
        FaultProxy proxy = proxy(soap);
        return new Proxied(proxy, client(List.of("soap"), List.of(proxy.route(soap)), new FixedPolicy("soap"), false));
    }

    private int served(String protocol) {
        AtomicInteger n = served.get(protocol);
        return n == null ? 0 : n.get();
    }

    private List<String> protocols() {
        return calls.stream().map(CallRecord::protocol).toList();
    }

    @Test
    void grpcConnectionResetMidRequestOfALargeCallFallsBackToSoapAndRunsOnce() {
        Proxied proxied = grpcBehindProxy(ConformanceComponent.skeleton(impl), false);
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();                                          // the connection is up, through the proxy
        proxy.resetOnce(FaultProxy.Direction.REQUEST, 2 << 20); // 2 MiB into the 8 MB request: RST

        double[] big = new double[1_000_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = i * 0.5;
        }
        Values.assertSameDoubles(big, stub.echoDoubles(big));

        assertEquals(List.of("grpc", "grpc", "soap"), protocols(), "ping, the cut call, its SOAP fallback");
        assertTrue(calls.get(1).error() != null, "the gRPC attempt failed: " + calls.get(1));
        System.out.println("gRPC reset mid-request: attempt failed with " + calls.get(1).error() + "; then "
                + calls.get(2).reason());
        assertTrue(calls.get(2).fallback(), calls.get(2).reason());
        assertEquals(1, served("grpc"), "only the ping ran over gRPC: the cut request never reached the operation");
        assertEquals(1, served("soap"), "echoDoubles ran once, over SOAP");
    }

    @Test
    void grpcConnectionResetAfterTheServerRanANonIdempotentCallSaysItMayHaveRunAndRunsOnce() throws Exception {
        Proxied proxied = grpcBehindProxy(ConformanceComponent.skeleton(impl), false);
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        afterRun = p -> proxy.resetAll();                     // the response never leaves

        TransportException e = assertThrows(TransportException.class, () -> stub.increment(5));
        System.out.println("gRPC reset after the run: caller got " + e);
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.getMessage());
        assertTrue(e.getMessage().contains("may have run"), e.getMessage());
        assertEquals(List.of("grpc"), protocols(), "every attempt is recorded before the caller is answered");
        stop();
        assertEquals(1, impl.increments.get(), "ran once, not repeated over SOAP");
        assertEquals(0, served("soap"));
    }

    @Test
    void grpcConnectionResetAfterTheServerRanIsRepeatedOverSoapWithCallIdsAndRunsOnce() {
        Proxied proxied = grpcBehindProxy(new DeduplicatingSkeleton(ConformanceComponent.skeleton(impl), 1 << 20, Duration.ofMinutes(1)), true);
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        afterRun = p -> {
            if (p.equals("grpc")) {
                proxy.resetAll();
            }
        };

        assertEquals(5, stub.increment(5), "the SOAP repeat answers with the first run's result");
        assertEquals(1, impl.increments.get(), "executed exactly once");
        assertEquals(List.of("grpc", "soap"), protocols());
    }

    @Test
    void slowSoapEndpointPastTheDeadlineFailsInTimeAndRunsAtMostOnce() throws Exception {
        Proxied proxied = soapBehindProxy();
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();
        proxy.hold();                                         // the server is slow until pass() below

        RuntimeException e = answeredAtItsDeadline(RuntimeException.class,
                () -> stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))).increment(1));
        assertEquals(1, served("soap"), "the request is still held: the answer was the deadline's, not the server's");
        TransportException t = assertInstanceOf(TransportException.class, e, e.toString());
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, t.delivery(), t.getMessage());

        proxy.pass();                                         // the held request arrives late, if at all
        assertTrue(proxy.awaitNothingHeld(Duration.ofSeconds(10)), "the held request was forwarded or dropped");
        stop();                                               // the server finishes what it runs; nothing after
        assertTrue(impl.increments.get() <= 1, "ran at most once: " + impl.increments.get());
        System.out.println("slow SOAP: caller got " + e + "; the late request ran "
                + impl.increments.get() + " time(s)");
        assertEquals(impl.increments.get() + 1, served("soap"), "ping plus whatever the late request did");
    }

    @Test
    void truncatedSoapResponseIsAClearErrorAndTheCallRanOnce() throws Exception {
        Proxied proxied = soapBehindProxy();
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        proxy.truncateOnce(FaultProxy.Direction.RESPONSE, 120); // the HTTP headers and a little of the envelope

        TransportException e = assertThrows(TransportException.class, () -> stub.increment(7));
        System.out.println("truncated SOAP response: caller got " + e);
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.getMessage());
        assertEquals(List.of("soap"), protocols(), "one attempt, not repeated");
        assertEquals(1, impl.increments.get(), "the truncated response was being sent: the call had run");
        assertEquals(7, stub.increment(0), "the next call works and sees the one increment");
        stop();
        assertEquals(2, impl.increments.get(), "the truncated call and the next one, each once");
    }

    @Test
    void truncatedGrpcResponseOfALargeIdempotentCallFallsBackToSoap() {
        Proxied proxied = grpcBehindProxy(ConformanceComponent.skeleton(impl), false);
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();
        proxy.truncateOnce(FaultProxy.Direction.RESPONSE, 4 << 20); // half of the 8 MB response, then FIN

        double[] big = new double[1_000_000];
        java.util.Arrays.fill(big, Math.PI);
        Values.assertSameDoubles(big, stub.echoDoubles(big));
        assertEquals(List.of("grpc", "grpc", "soap"), protocols());
        assertEquals(2, served("grpc"), "ping and the echo whose response was cut");
        assertEquals(1, served("soap"), "the idempotent echo repeated once over SOAP");
    }
    @Test
    void slowGrpcEndpointPastTheDeadlineFailsInTimeAndANonIdempotentCallIsNotRepeated() throws Exception {
        Proxied proxied = grpcBehindProxy(ConformanceComponent.skeleton(impl), false);
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();
        proxy.hold();                                         // the server is slow until pass() below

        TransportException e = answeredAtItsDeadline(TransportException.class,
                () -> stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))).increment(1));
        assertEquals(1, served("grpc"), "the request is still held: the answer was the deadline's, not the server's");
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.getMessage());
        assertEquals(List.of("grpc", "grpc"), protocols(), "the ping and the one attempt: not repeated over SOAP");

        proxy.pass();                                         // the held request arrives late, if at all
        assertTrue(proxy.awaitNothingHeld(Duration.ofSeconds(10)), "the held request was forwarded or dropped");
        stop();                                               // the servers finish what they run; nothing after
        System.out.println("slow gRPC: caller got " + e + "; the late request ran "
                + impl.increments.get() + " time(s)");
        assertTrue(impl.increments.get() <= 1, "ran at most once: " + impl.increments.get());
        assertEquals(0, served("soap"), "a non-idempotent call without call ids is not repeated over SOAP");
    }

    @Test
    void blackHoledGrpcEndpointWithCallIdsIsRepeatedOverSoapAndRunsOnce() {
        Proxied proxied = grpcBehindProxy(new DeduplicatingSkeleton(ConformanceComponent.skeleton(impl), 1 << 20, Duration.ofMinutes(1)), true);
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();
        proxy.blackHole();                                    // the connection stays up; nothing gets through

        long answer = stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2))).increment(4);

        System.out.println("black-holed gRPC: " + calls);
        assertEquals(4, answer);
        assertEquals(1, impl.increments.get(), "ran once, over SOAP");
        assertEquals(1, served("soap"));
        assertEquals(1, served("grpc"), "only the ping reached the gRPC server");
    }

    @Test
    void soapConnectionResetMidRequestIsAClearErrorAndTheOperationNeverRan() {
        Proxied proxied = soapBehindProxy();
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();
        proxy.resetOnce(FaultProxy.Direction.REQUEST, 64 << 10); // 64 KiB into a ~2 MB request: RST

        double[] big = new double[100_000];
        java.util.Arrays.fill(big, 0.1);
        TransportException e = assertThrows(TransportException.class, () -> stub.echoDoubles(big));
        System.out.println("SOAP reset mid-request: caller got " + e);
        // not delivered when the client saw the cut while writing; may-have-run when it surfaced on the read
        assertTrue(e.delivery() == TransportException.Delivery.MAY_HAVE_RUN
                || e.getMessage().contains("the request was cut while it was sent"), e.getMessage());
        assertEquals(1, served("soap"), "only the ping ran: the cut request never reached the operation");
        Values.assertSameDoubles(new double[] {0.5}, stub.echoDoubles(new double[] {0.5}));
        assertEquals(2, served("soap"));
    }
    @Test
    void blackHoledSoapEndpointFailsAtTheDeadlineAndNothingRuns() {
        Proxied proxied = soapBehindProxy();
        FaultProxy proxy = proxied.proxy();
        ConformanceStub stub = proxied.stub();
        stub.ping();
        proxy.blackHole();

        long start = System.nanoTime();
        TransportException e = assertThrows(TransportException.class,
                () -> stub.withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1))).increment(1));
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.println("black-holed SOAP: caller got after " + millis + " ms: " + e);
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery(), e.getMessage());
        assertEquals(0, impl.increments.get(), "the request never reached the server");
        assertEquals(1, served("soap"), "only the ping");
    }

    /**
     * What {@code call}, with a 500 ms deadline on a held server, throws, once it is shown to come at
     * the deadline. The limit is the behaviour: 2 s of margin, and twice what this JVM's threads
     * waited for a CPU meanwhile; a held server would answer never.
     */
    private static <T extends Throwable> T answeredAtItsDeadline(Class<T> type,
                                                               org.junit.jupiter.api.function.Executable call) {
        try (SchedulerLag lag = SchedulerLag.start()) {
            long start = System.nanoTime();
            T thrown = assertThrows(type, call);
            long end = System.nanoTime();
            long millis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(end - start);
            long allowed = 2_500 + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(2 * lag.within(start, end));
            System.out.println("answered after " + millis + " ms, " + allowed + " allowed");
            assertTrue(millis < allowed, "answered at the deadline: " + millis + " ms, " + allowed + " allowed");
            return thrown;
        }
    }
}

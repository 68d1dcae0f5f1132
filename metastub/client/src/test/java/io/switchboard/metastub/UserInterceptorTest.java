package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An interceptor added on the builder, in a real meta-stub: it runs once per attempt and sees what
 * a tracer would record (protocol, reason, attempt, fallback, call id), blocking and asynchronous alike.
 */
class UserInterceptorTest {
    private record Attempt(String protocol, String reason, int attempt, boolean fallback, String callId,
                           String address, boolean blocking, Thread thread) {
    }

    private final List<Attempt> attempts = new CopyOnWriteArrayList<>();
    private final List<CallRecord> records = new CopyOnWriteArrayList<>();
    private ProtocolServer soap;
    private ProtocolServer inproc;
    private ConformanceStub stub;
    private String fast;
    private io.switchboard.protocol.Endpoint soapEndpoint;

    @BeforeEach
    void start() {
        Skeleton skeleton = ConformanceComponent.skeleton(new ConformanceImpl());
        soap = Protocols.get("soap").newServer(ServerSettings.defaults());
        inproc = Protocols.get("inproc").newServer(ServerSettings.defaults());
        var fastEndpoint = inproc.export(skeleton);
        fast = fastEndpoint.address();
        soapEndpoint = soap.export(skeleton);
        ClientInterceptor tracer = (call, next) -> {
            attempts.add(new Attempt(call.protocol(), call.reason(), call.attempt(), call.fallback(),
                    call.options().callId(), call.address(), call.blocking(), Thread.currentThread()));
            return next.proceed(call);
        };
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("inproc", "soap")
                .endpoints(List.of(fastEndpoint, soapEndpoint)).policy(new FirstCommonPolicy())
                .backoff(Duration.ofSeconds(2), Duration.ofSeconds(8)).interceptor(tracer).listener(records::add)
                .build();
        stub = ConformanceComponent.stub(channel);
    }

    @AfterEach
    void stop() {
        InProcessTestProtocol.FAILURES.clear();
        soap.close();
        inproc.close();
    }

    @Test
    void seesEveryAttemptOfAFallbackWithOneCallId() {
        InProcessTestProtocol.FAILURES.put(fast, InProcessTestProtocol.Failure.NOT_DELIVERED);
        assertEquals(4.5, stub.echoDoubles(new double[] {4.5})[0]);
        assertEquals(2, attempts.size());
        Attempt first = attempts.get(0);
        Attempt second = attempts.get(1);
        assertEquals("inproc", first.protocol());
        assertEquals("first-common (stub policy)", first.reason());
        assertEquals(0, first.attempt());
        assertEquals(fast, first.address());
        assertTrue(first.blocking());
        assertEquals("soap", second.protocol());
        assertEquals(1, second.attempt());
        assertTrue(second.fallback());
        assertTrue(second.reason().startsWith("fallback from inproc"), second.reason());
        assertEquals(first.callId(), second.callId());
        assertEquals(records.get(1).callId(), second.callId(), "the record and the interceptor see the same call");
        assertTrue(attempts.stream().allMatch(a -> a.thread() == Thread.currentThread()),
                "a blocking call and its fallback run on the caller's thread");
    }

    @Test
    void anAsynchronousCallGoesDownTheSameChain() throws Exception {
        InProcessTestProtocol.FAILURES.put(fast, InProcessTestProtocol.Failure.NOT_DELIVERED);
        CompletableFuture<double[]> later = stub.echoDoublesAsync(new double[] {2.5});
        assertEquals(2.5, later.get(30, TimeUnit.SECONDS)[0]);
        assertEquals(List.of("inproc", "soap"), attempts.stream().map(Attempt::protocol).toList());
        assertTrue(attempts.stream().noneMatch(Attempt::blocking));
    }

    @Test
    void theOptionsItSetsReachTheTransport() throws Exception {
        Skeleton conformance = ConformanceComponent.skeleton(new ConformanceImpl());
        List<String> idsReceived = new CopyOnWriteArrayList<>();
        Skeleton watching = new Skeleton() {
            @Override
            public io.switchboard.idl.runtime.ServiceDescriptor descriptor() {
                return conformance.descriptor();
            }

            @Override
            public Object invoke(io.switchboard.idl.runtime.OperationDescriptor operation, Object request)
                    throws io.switchboard.idl.runtime.DeclaredFault {
                return conformance.invoke(operation, request);
            }

            @Override
            public Object invoke(io.switchboard.idl.runtime.OperationDescriptor operation, Object request, String callId)
                    throws io.switchboard.idl.runtime.DeclaredFault {
                idsReceived.add(callId);
                return conformance.invoke(operation, request);
            }
        };
        ProtocolServer other = Protocols.get("inproc").newServer(ServerSettings.defaults());
        ClientInterceptor withId = (call, next) -> {
            call.options(call.options().withCallId("chosen-by-interceptor"));
            return next.proceed(call);
        };
        try (MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("inproc", "soap")
                .endpoints(List.of(other.export(watching), soapEndpoint)).policy(new FirstCommonPolicy())
                .interceptor(withId).listener(records::add).build()) {
            ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT).ping();
        } finally {
            other.close();
        }
        assertEquals(List.of("chosen-by-interceptor"), idsReceived, "what the transport sent");
        assertEquals("chosen-by-interceptor", records.get(0).callId());
    }
}

package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.TransportException;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.DivideFaultException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The failsafe with a real SOAP server behind an in-process fast protocol whose failures are
 * injected: what is repeated over SOAP, what is not, and how often the operation really ran.
 */
class FailsafeTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final List<CallRecord> calls = new CopyOnWriteArrayList<>();
    private final AtomicLong now = new AtomicLong();
    private ProtocolServer soap;
    private ProtocolServer inproc;
    private Endpoint fast;

    @AfterEach
    void stop() {
        InProcessTestProtocol.FAILURES.clear();
        soap.close();
        inproc.close();
    }

    private ConformanceStub client(boolean serverDeduplicates) {
        Skeleton skeleton = ConformanceComponent.skeleton(impl);
        if (serverDeduplicates) {
            skeleton = new DeduplicatingSkeleton(skeleton, 1 << 20, Duration.ofMinutes(1));
        }
        soap = Protocols.get("soap").newServer(ServerSettings.defaults());
        inproc = Protocols.get("inproc").newServer(ServerSettings.defaults());
        fast = inproc.export(skeleton);
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("inproc", "soap")
                .endpoints(List.of(fast, soap.export(skeleton))).serverRecognisesCallIds(serverDeduplicates)
                .policy(new FirstCommonPolicy())
                .backoff(Duration.ofSeconds(2), Duration.ofSeconds(8)).nanoClock(now::get)
                .listener(calls::add).build();
        return ConformanceComponent.stub(channel);
    }

    private void fail(InProcessTestProtocol.Failure failure) {
        InProcessTestProtocol.FAILURES.put(fast.address(), failure);
    }

    private List<String> protocols() {
        return calls.stream().map(CallRecord::protocol).toList();
    }

    @Test
    void idempotentCallFallsBackToSoapAndRunsThere() {
        ConformanceStub stub = client(false);
        fail(InProcessTestProtocol.Failure.NOT_DELIVERED);
        double[] back = stub.echoDoubles(new double[] {4.5});
        assertEquals(4.5, back[0]);
        assertEquals(List.of("inproc", "soap"), protocols());
        assertTrue(calls.get(1).fallback(), calls.get(1).reason());
        assertEquals(calls.get(0).callId(), calls.get(1).callId(), "the retry carries the same call id");
    }

    @Test
    void nonIdempotentCallThatNeverArrivedIsRepeatedAndRunsOnce() {
        ConformanceStub stub = client(false);
        fail(InProcessTestProtocol.Failure.NOT_DELIVERED);
        assertEquals(5, stub.increment(5));
        assertEquals(1, impl.increments.get());
        assertTrue(calls.get(1).reason().contains("never reached"), calls.get(1).reason());
    }

    @Test
    void nonIdempotentCallThatMayHaveRunIsNotRepeatedWithoutCallIds() {
        ConformanceStub stub = client(false);
        fail(InProcessTestProtocol.Failure.AFTER_RUNNING);
        TransportException e = assertThrows(TransportException.class, () -> stub.increment(5));
        assertEquals(TransportException.Delivery.MAY_HAVE_RUN, e.delivery());
        assertTrue(e.getMessage().contains("may have run"), e.getMessage());
        assertEquals(1, impl.increments.get(), "ran once, on the fast protocol, and never again");
        assertEquals(List.of("inproc"), protocols());
    }

    @Test
    void nonIdempotentCallThatMayHaveRunIsRepeatedWhenTheServerKnowsCallIdsAndStillRunsOnce() {
        ConformanceStub stub = client(true);
        fail(InProcessTestProtocol.Failure.AFTER_RUNNING);
        assertEquals(5, stub.increment(5), "the repeat gets the first run's result");
        assertEquals(1, impl.increments.get(), "executed exactly once");
        assertEquals(List.of("inproc", "soap"), protocols());
    }

    @Test
    void declaredFaultIsAnAnswerNotAFailure() {
        ConformanceStub stub = client(true);
        assertThrows(DivideFaultException.class, () -> stub.divide(1, 0));
        assertEquals(List.of("inproc"), protocols());
    }

    @Test
    void failedProtocolIsAvoidedForTheBackOffThenProbedAgain() {
        ConformanceStub stub = client(false);
        fail(InProcessTestProtocol.Failure.NOT_DELIVERED);
        stub.ping();                                   // inproc fails, soap answers; inproc avoided for 2 s
        InProcessTestProtocol.FAILURES.clear();
        stub.ping();                                   // still in back-off: straight to soap
        now.addAndGet(Duration.ofSeconds(3).toNanos());
        stub.ping();                                   // back-off over: inproc probed, and it works
        stub.ping();
        assertEquals(List.of("inproc", "soap", "soap", "inproc", "inproc"), protocols());
    }

    @Test
    void backOffGrowsWithFailuresInARow() {
        ConformanceStub stub = client(false);
        fail(InProcessTestProtocol.Failure.NOT_DELIVERED);
        stub.ping();                                   // failure 1: 2 s
        now.addAndGet(Duration.ofSeconds(3).toNanos());
        stub.ping();                                   // probe fails again: failure 2, 4 s
        now.addAndGet(Duration.ofSeconds(3).toNanos());
        stub.ping();                                   // 3 s into a 4 s back-off: soap only
        assertEquals(List.of("inproc", "soap", "inproc", "soap", "soap"), protocols());
    }

    @Test
    void pinnedCallIsNotRepeatedElsewhere() {
        ConformanceStub stub = client(true);
        fail(InProcessTestProtocol.Failure.NOT_DELIVERED);
        ConformanceStub pinned = stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "inproc"));
        assertThrows(TransportException.class, pinned::ping);
        assertEquals(List.of("inproc"), protocols());
    }
}

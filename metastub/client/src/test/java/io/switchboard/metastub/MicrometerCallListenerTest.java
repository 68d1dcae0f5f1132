package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.DivideFaultException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Micrometer listener against a real SOAP server and the in-process fast protocol: counts per
 * protocol, outcome and kind (chosen, fallback, pinned), and the payload summary.
 */
class MicrometerCallListenerTest {
    private static final String COMPONENT = ConformanceComponent.DESCRIPTOR.name();

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<CallRecord> records = new CopyOnWriteArrayList<>();
    private final AtomicLong now = new AtomicLong();
    private ProtocolServer soap;
    private ProtocolServer inproc;
    private Endpoint fast;
    private ConformanceStub stub;

    @BeforeEach
    void start() {
        Skeleton skeleton = ConformanceComponent.skeleton(new ConformanceImpl());
        soap = Protocols.get("soap").newServer(ServerSettings.defaults());
        inproc = Protocols.get("inproc").newServer(ServerSettings.defaults());
        fast = inproc.export(skeleton);
        // size policy with a 100-byte threshold: ping goes over SOAP, 200 doubles over inproc,
        // and every call chosen by the policy carries a payload estimate
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("inproc", "soap")
                .endpoints(List.of(fast, soap.export(skeleton))).policy(new SizePolicy(100))
                .backoff(Duration.ofSeconds(2), Duration.ofSeconds(8)).nanoClock(now::get)
                .listener(new MicrometerCallListener(registry)).listener(records::add).build();
        stub = ConformanceComponent.stub(channel);
    }

    @AfterEach
    void stop() {
        InProcessTestProtocol.FAILURES.clear();
        soap.close();
        inproc.close();
    }

    private Timer timer(String operation, String protocol, String outcome, String kind) {
        return registry.find(MicrometerCallListener.CALLS).tag("component", COMPONENT).tag("operation", operation)
                .tag("protocol", protocol).tag("outcome", outcome).tag("kind", kind).timer();
    }

    private long count(String operation, String protocol, String outcome, String kind) {
        Timer t = timer(operation, protocol, outcome, kind);
        return t == null ? 0 : t.count();
    }

    @Test
    void countsAttemptsPerProtocolOutcomeAndKind() {
        double[] large = new double[200];
        stub.echoDoubles(large);                                   // inproc, chosen, ok
        stub.echoDoubles(large);                                   // inproc, chosen, ok
        stub.ping();                                               // soap, chosen, ok
        InProcessTestProtocol.FAILURES.put(fast.address(), InProcessTestProtocol.Failure.NOT_DELIVERED);
        stub.echoDoubles(large);                                   // inproc, chosen, error; then soap, fallback, ok
        stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).ping();   // soap, pinned, ok

        assertEquals(2, count("echoDoubles", "inproc", "ok", "chosen"));
        assertEquals(1, count("echoDoubles", "inproc", "error", "chosen"));
        assertEquals(1, count("echoDoubles", "soap", "ok", "fallback"));
        assertEquals(1, count("ping", "soap", "ok", "chosen"));
        assertEquals(1, count("ping", "soap", "ok", "pinned"));
        assertNull(timer("echoDoubles", "soap", "ok", "chosen"), "no such attempt was made");
        long total = registry.find(MicrometerCallListener.CALLS).timers().stream().mapToLong(Timer::count).sum();
        assertEquals(records.size(), total, "one timer count per attempt");
        assertEquals(6, total);
        double recordedNanos = registry.find(MicrometerCallListener.CALLS).timers().stream()
                .mapToDouble(t -> t.totalTime(TimeUnit.NANOSECONDS)).sum();
        double expectedNanos = records.stream().mapToLong(r -> r.latency().toNanos()).sum();
        assertEquals(expectedNanos, recordedNanos, 1.0, "latencies are recorded as measured");
    }

    @Test
    void payloadSummaryHoldsTheEstimatesThePolicyWorkedWith() {
        double[] large = new double[200];
        stub.echoDoubles(large);
        stub.echoDoubles(large);
        stub.ping();
        stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).echoDoubles(large);  // size learns nothing: no estimate

        DistributionSummary inprocDoubles = registry.find(MicrometerCallListener.PAYLOAD).tag("operation", "echoDoubles")
                .tag("protocol", "inproc").summary();
        long estimate = records.get(0).estimatedBytes();
        assertTrue(estimate > 100, "200 doubles pass the 100-byte threshold: " + estimate);
        assertEquals(2, inprocDoubles.count());
        assertEquals(2.0 * estimate, inprocDoubles.totalAmount());
        assertEquals(1, registry.find(MicrometerCallListener.PAYLOAD).tag("operation", "ping").summary().count());
        assertNull(registry.find(MicrometerCallListener.PAYLOAD).tag("operation", "echoDoubles").tag("protocol", "soap")
                .summary(), "the pinned call had no estimate");
        assertEquals(-1, records.get(3).estimatedBytes());
    }

    @Test
    void declaredFaultIsAnOkAnswer() {
        assertThrows(DivideFaultException.class, () -> stub.divide(1, 0));
        assertEquals(1, registry.find(MicrometerCallListener.CALLS).tag("operation", "divide").tag("outcome", "ok")
                .timer().count());
    }

    @Test
    void metersAreRegisteredOncePerTagSet() {
        for (int i = 0; i < 50; i++) {
            stub.ping();
        }
        assertEquals(50, count("ping", "soap", "ok", "chosen"));
        assertEquals(4, registry.getMeters().size(), "one timer, one payload summary, a wire summary per direction");
        assertEquals(50, registry.get(MicrometerCallListener.WIRE).tag("direction", "sent").summary().count());
        assertEquals(50, registry.get(MicrometerCallListener.WIRE).tag("direction", "received").summary().count());
    }

    @Test
    void kindComesFromTheReason() {
        assertEquals("pinned", MicrometerCallListener.kind(record("pinned on call")));
        assertEquals("fallback", MicrometerCallListener.kind(record("fallback from grpc (the operation is idempotent)")));
        assertEquals("chosen", MicrometerCallListener.kind(record("size (stub policy)")));
    }

    private static CallRecord record(String reason) {
        return new CallRecord("C", "op", "id", "soap", "addr", reason, -1, Duration.ZERO, null);
    }
}

package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.Values;
import io.switchboard.testing.CountingSkeleton;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The meta-stub calls a component served in its own JVM over {@code local} whatever its stub
 * policy says; pins and call or operation policies still win; a {@code local} endpoint of another
 * JVM is never a candidate. Real servers for every protocol; executions counted per protocol.
 */
class InProcessPreferenceTest {
    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final List<CallRecord> records = new CopyOnWriteArrayList<>();
    private final List<ProtocolServer> servers = new ArrayList<>();
    private final List<MetaStub> channels = new ArrayList<>();

    @AfterEach
    void stop() {
        channels.forEach(MetaStub::close);
        servers.forEach(ProtocolServer::close);
    }

    private Endpoint export(String protocol) {
        ProtocolServer s = Protocols.get(protocol).newServer(ServerSettings.defaults());
        servers.add(s);
        Skeleton skeleton = ConformanceComponent.skeleton(impl);
        return s.export(new CountingSkeleton(skeleton, protocol, served, label -> { }));
    }

    private MetaStub channel(List<Endpoint> endpoints, MetaStub.Builder settings) {
        MetaStub channel = settings.endpoints(endpoints).listener(records::add).build();
        channels.add(channel);
        return channel;
    }

    private int served(String protocol) {
        AtomicInteger n = served.get(protocol);
        return n == null ? 0 : n.get();
    }

    private CallRecord last() {
        return records.get(records.size() - 1);
    }

    @Test
    void componentInThisJvmIsCalledInProcessOverTheStubPolicyButNotOverPinsOrCallAndOperationPolicies()
            throws Exception {
        List<Endpoint> all = List.of(export("grpc"), export("local"), export("soap"));
        MetaStub channel = channel(all, MetaStub.builder(ConformanceComponent.DESCRIPTOR).policy(new SizePolicy()));
        ConformanceStub stub = ConformanceComponent.stub(channel);

        Values.assertSameDoubles(new double[100_000], stub.echoDoubles(new double[100_000]));   // size says grpc
        assertEquals("local", last().protocol());
        assertTrue(last().reason().startsWith("in-process"), last().reason());
        stub.ping();                                                                          // size says soap
        assertEquals("local", last().protocol());
        assertEquals(7, stub.incrementAsync(7).get(1, TimeUnit.MINUTES));
        assertEquals("local", last().protocol());
        assertEquals(3, served("local"));

        stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).ping();
        assertEquals("soap", last().protocol(), "a pinned protocol wins");
        stub.withOptions(CallOptions.DEFAULT.with(MetaStub.POLICY, new FixedPolicy("grpc"))).ping();
        assertEquals("grpc", last().protocol(), "a policy set on the call wins");
        channel.setOperationPolicy("ping", new FixedPolicy("soap"));
        stub.ping();
        assertEquals("soap", last().protocol(), "a policy set for the operation wins");
        assertEquals(3, served("local"));
        assertEquals(2, served("soap"));
        assertEquals(1, served("grpc"));
    }

    @Test
    void preferenceCanBeTurnedOffForAStub() {
        List<Endpoint> all = List.of(export("grpc"), export("local"), export("soap"));
        ConformanceStub stub = ConformanceComponent.stub(channel(all,
                MetaStub.builder(ConformanceComponent.DESCRIPTOR).policy(new SizePolicy()).preferInProcess(false)));
        stub.ping();
        assertEquals("soap", last().protocol());
        stub.echoDoubles(new double[100_000]);
        assertEquals("grpc", last().protocol());
        assertEquals(0, served("local"));
    }

    @Test
    void localEndpointOfAnotherJvmIsNeverACandidate() {
        Endpoint foreign = new Endpoint("local", "local://" + UUID.randomUUID() + "/s1/Conformance");
        List<Endpoint> endpoints = List.of(foreign, export("grpc"), export("soap"));
        MetaStub channel = channel(endpoints, MetaStub.builder(ConformanceComponent.DESCRIPTOR)
                .protocols("local", "grpc", "soap").policy(new FirstCommonPolicy()));
        assertEquals(List.of("grpc", "soap"), channel.suite().candidates());
        assertNull(channel.suite().inProcessCandidate());
        ConformanceStub stub = ConformanceComponent.stub(channel);
        stub.ping();
        assertEquals("grpc", last().protocol(), "first-common skips the foreign local endpoint");
        assertThrows(NoCommonProtocolException.class,
                () -> stub.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "local")).ping());
        assertEquals(0, served("local"));
    }

    @Test
    void componentUnexportedFromThisJvmFallsBackToSoapWithoutRunningTwice() {
        List<Endpoint> all = List.of(export("local"), export("soap"));
        MetaStub channel = channel(all, MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols("local", "soap"));
        assertEquals("local", channel.suite().inProcessCandidate());
        servers.get(0).unexport("Conformance");
        long before = impl.increments.get();
        assertEquals(5, ConformanceComponent.stub(channel).increment(5));
        assertEquals(before + 1, impl.increments.get(), "ran once");
        assertEquals(List.of("local", "soap"), records.stream().map(CallRecord::protocol).toList());
        assertTrue(records.get(1).fallback(), records.get(1).reason());
    }
}

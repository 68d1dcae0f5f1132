package io.switchboard.server.authz;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.ReplicatedChannel;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.metastub.FixedPolicy;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TransportException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.ServerCallStats;
import io.switchboard.testing.ThisProcess;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A policy on a running component server, over SOAP, gRPC, tcp and the local protocol: a denied
 * call reaches the client as a {@link PermissionDeniedException} on each, runs nothing, is counted
 * per identity and path, and is neither repeated over SOAP nor moved to another replica. Callers
 * here are anonymous: that is what every protocol establishes without credentials.
 */
class AuthorizationEndToEndTest {
    private static final List<String> PROTOCOLS = List.of("soap", "grpc", "tcp", "local");
    private static final String COMPONENT = ConformanceComponent.DESCRIPTOR.name();
    private static final String ECHO = CallPaths.of(COMPONENT, "echoDoubles");
    private static final String INCREMENT = CallPaths.of(COMPONENT, "increment");

    private static final AuthorizationPolicy ECHO_ONLY = AuthorizationPolicy.parse("""
            {
              "name": "echo-only",
              "allow_rules": [{"name": "anyone-echoes", "request": {"paths": ["%s"]}}]
            }""".formatted(ECHO));

    private static ConformanceStub pinned(MetaStub channel, String protocol) {
        return ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
    }

    @Test
    void aDeniedCallIsAPermissionDeniedExceptionOnEveryProtocolAndRunsNothing() {
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().protocols("tcp", "grpc", "local", "soap")
                .authorization(ECHO_ONLY).build()) {
            assertTrue(server.protocols().containsAll(PROTOCOLS), server.protocols().toString());
            ComponentEntry entry = server.export(ConformanceComponent.skeleton(impl));
            try (MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                    .serverRecognisesCallIds(true).build()) {
                for (String protocol : PROTOCOLS) {
                    ConformanceStub stub = pinned(channel, protocol);
                    assertArrayEquals(new double[] {1.5}, stub.echoDoubles(new double[] {1.5}), protocol + " allows echo");
                    PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> stub.increment(1),
                            protocol);
                    assertEquals(PermissionDeniedException.DENIED, e.reason(), protocol);
                    assertEquals(INCREMENT, e.path(), protocol);
                    assertEquals(TransportException.Delivery.NOT_DELIVERED, e.delivery());
                    assertTrue(e.getMessage().contains(INCREMENT) && !e.getMessage().contains("anyone-echoes"),
                            "the caller learns the path, not the policy: " + e.getMessage());
                }
            }
            assertEquals(0, impl.increments.get(), "no denied call reached the component");
            List<ServerCallStats.Denial> denials = server.callStats().denials();
            // each protocol names its caller: soap anonymous, local in process, tcp and grpc by their Unix sockets' uid
            java.util.Map<String, Long> byIdentity = new java.util.TreeMap<>();
            for (ServerCallStats.Denial d : denials) {
                assertEquals(INCREMENT, d.path());
                byIdentity.merge(d.identity().startsWith("UNIX_SOCKET:uid:") ? "UNIX_SOCKET" : d.identity(), d.count(), Long::sum);
            }
            assertEquals(java.util.Map.of("ANONYMOUS", 1L, "IN_PROCESS:in-process", 1L, "UNIX_SOCKET", 2L), byIdentity);
            for (String protocol : PROTOCOLS) {
                assertEquals(1.0, server.callStats().meters().get(ServerCallStats.DENIALS).tag("protocol", protocol)
                        .tag("path", INCREMENT).counter().count(), protocol);
                io.switchboard.registry.CallSummary.Row row = server.callStats().summary(COMPONENT).row("increment", protocol);
                assertEquals(1, row.refusals(), "a refusal in the figures the lease reports carry: " + protocol);
                assertEquals(0, row.calls(), "and no call: " + protocol);
            }
        }
    }

    @Test
    void aDenialIsNotRepeatedOverSoapNorOnAnotherReplica() {
        ConformanceImpl first = new ConformanceImpl();
        ConformanceImpl second = new ConformanceImpl();
        List<CallRecord> calls = new CopyOnWriteArrayList<>();
        List<AutoCloseable> closing = new ArrayList<>();
        try (ComponentServer a = ComponentServer.builder().protocols("grpc", "soap").authorization(ECHO_ONLY).build();
             ComponentServer b = ComponentServer.builder().protocols("grpc", "soap").build()) {
            ComponentEntry ea = a.export(ConformanceComponent.skeleton(first));
            ComponentEntry eb = b.export(ConformanceComponent.skeleton(second));

            // one server, the fast protocol chosen by policy (not pinned): the failsafe would retry a transport failure
            MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(ea.endpoints())
                    .policy(new FixedPolicy("grpc")).listener(calls::add).serverRecognisesCallIds(true).build();
            closing.add(channel);
            assertThrows(PermissionDeniedException.class, () -> ConformanceComponent.stub(channel).increment(1));
            assertEquals(List.of("grpc"), calls.stream().map(CallRecord::protocol).toList(), "no fallback to SOAP");
            // over gRPC's Unix socket on this host: the caller is this process's uid
            assertEquals(List.of(new ServerCallStats.Denial("UNIX_SOCKET:uid:" + ThisProcess.uid(), INCREMENT, 1)),
                    a.callStats().denials());

            // two replicas in order, the first denies: the call is not taken to the second
            ReplicatedChannel replicas = new ReplicatedChannel(COMPONENT, List.of(ea, eb), e -> {
                MetaStub m = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(e.endpoints())
                        .serverRecognisesCallIds(true).build();
                closing.add(m);
                return m;
            }, ReplicatedChannel.Choice.IN_ORDER, Duration.ofSeconds(5));
            closing.add(replicas);
            assertThrows(PermissionDeniedException.class, () -> ConformanceComponent.stub(replicas).increment(1));
            assertEquals(0, second.increments.get(), "the other replica never ran it");
            assertEquals(0, first.increments.get());
            assertEquals(2, a.callStats().denials().get(0).count());
        } finally {
            for (AutoCloseable c : closing) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closing what the test opened; a failure here says nothing about authorization
                }
            }
        }
    }

    /**
     * Random policies over the component's operations, swapped under one running server: every
     * protocol decides each call as the policy evaluated here does. Principal patterns stay out
     * of reach of the callers here (anonymous), so that the protocols' peers cannot differ.
     */
    @Test
    void randomPoliciesAreDecidedTheSameOnEveryProtocol() {
        Random random = new Random(39);
        List<String> operations = List.of("echoDoubles", "increment", "ping");
        AtomicReference<AuthorizationPolicy> policy = new AtomicReference<>(ECHO_ONLY);
        ConformanceImpl impl = new ConformanceImpl();
        try (ComponentServer server = ComponentServer.builder().protocols("tcp", "grpc", "local", "soap")
                .authorization(policy::get).build()) {
            ComponentEntry entry = server.export(ConformanceComponent.skeleton(impl));
            try (MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                    .serverRecognisesCallIds(true).build()) {
                int allowed = 0;
                int denied = 0;
                for (int round = 0; round < 25; round++) {
                    String json = randomPolicy(random, operations);
                    AuthorizationPolicy p = AuthorizationPolicy.parse(json);
                    policy.set(p);
                    for (String operation : operations) {
                        boolean expected = p.evaluate(Peer.UNKNOWN, CallPaths.of(COMPONENT, operation)).allowed();
                        for (String protocol : PROTOCOLS) {
                            boolean actual = call(pinned(channel, protocol), operation);
                            assertEquals(expected, actual, operation + " over " + protocol + " under " + json);
                            if (actual) {
                                allowed++;
                            } else {
                                denied++;
                            }
                        }
                    }
                }
                assertTrue(allowed > 20 && denied > 20, "both outcomes were tried: " + allowed + " allowed, "
                        + denied + " denied");
            }
        }
    }

    /** Whether the call was allowed (it ran); false when it was denied. */
    private static boolean call(ConformanceStub stub, String operation) {
        try {
            switch (operation) {
                case "echoDoubles" -> stub.echoDoubles(new double[] {2});
                case "increment" -> stub.increment(1);
                default -> stub.ping();
            }
            return true;
        } catch (PermissionDeniedException e) {
            return false;
        }
    }

    private static String randomPolicy(Random random, List<String> operations) {
        StringBuilder json = new StringBuilder("{\"name\": \"random\"");
        if (random.nextBoolean()) {
            json.append(", \"deny_rules\": [").append(rules(random, operations, "d")).append("]");
        }
        json.append(", \"allow_rules\": [").append(rules(random, operations, "a")).append("]}");
        return json.toString();
    }

    private static String rules(Random random, List<String> operations, String prefix) {
        List<String> rules = new ArrayList<>();
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            StringBuilder r = new StringBuilder("{\"name\": \"" + prefix + i + "\"");
            if (random.nextInt(4) == 0) {   // a rule for callers with an identity, which no caller here has
                r.append(", \"source\": {\"principals\": [\"spiffe://example.org/*\"]}");
            }
            List<String> paths = new ArrayList<>();
            for (int k = random.nextInt(3); k > 0; k--) {
                String op = operations.get(random.nextInt(operations.size()));
                String path = CallPaths.of(COMPONENT, op);
                paths.add("\"" + switch (random.nextInt(4)) {
                    case 0 -> path;
                    case 1 -> path.substring(0, path.length() - 2) + "*";
                    case 2 -> "*" + op.substring(op.length() - 3);
                    default -> "/nothing.Here/" + op;
                } + "\"");
            }
            if (!paths.isEmpty() || random.nextBoolean()) {
                r.append(", \"request\": {\"paths\": [").append(String.join(", ", paths)).append("]}");
            }
            rules.add(r.append("}").toString());
        }
        return String.join(", ", rules);
    }
}

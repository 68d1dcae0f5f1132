package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.Skeleton;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.wire.Bind;
import io.switchboard.registry.wire.Lookup;
import io.switchboard.registry.wire.RegistryComponent;
import io.switchboard.registry.wire.Watch;
import io.switchboard.server.ServerCallStats;
import io.switchboard.server.authz.AuthorizationInterceptor;
import io.switchboard.server.authz.AuthorizationPolicy;
import java.net.URI;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The registry's operations as paths with the entry's name: a policy says who may bind which
 * names and who may look them up or watch them, on SOAP and on the gRPC listener.
 */
class RegistryAuthorizationTest {
    private static final String BIND_A = RegistryPaths.SERVICE + "bind/team-a.billing";

    /** Each team binds and renews its own names; everyone may look up and watch team-a's; nobody lists. */
    private static final AuthorizationPolicy TEAMS = AuthorizationPolicy.parse("""
            {
              "name": "teams",
              "deny_rules": [{"name": "no-list", "request": {"paths": ["/switchboard.registry.Registry/list"]}}],
              "allow_rules": [
                {"name": "team-a-writes", "source": {"principals": ["spiffe://example.org/team-a/*"]},
                 "request": {"paths": ["/switchboard.registry.Registry/bind/team-a.*",
                                       "/switchboard.registry.Registry/unbind/team-a.*",
                                       "/switchboard.registry.Registry/renew/team-a.*"]}},
                {"name": "team-b-writes", "source": {"principals": ["spiffe://example.org/team-b/*"]},
                 "request": {"paths": ["/switchboard.registry.Registry/bind/team-b.*"]}},
                {"name": "anonymous-writes-sandbox",
                 "request": {"paths": ["/switchboard.registry.Registry/bind/sandbox.*"]}},
                {"name": "console-for-anyone", "request": {"paths": ["/switchboard.registry.Registry/console"]}},
                {"name": "reads-of-team-a",
                 "request": {"paths": ["/switchboard.registry.Registry/lookup/team-a.*",
                                       "/switchboard.registry.Registry/watch/team-a.*"]}}
              ]
            }""");
    /** Anyone may do anything. */
    private static final String OPEN_TEXT = """
            {"name": "open", "allow_rules": [{"name": "anything"}]}""";
    private static final AuthorizationPolicy OPEN = AuthorizationPolicy.parse(OPEN_TEXT);
    /** Sandbox names only: bind them, and look up and watch each by its name, but not every name at once. */
    private static final String SANDBOX_BY_NAME_TEXT = """
            {"name": "sandbox-by-name", "allow_rules": [{"name": "sandbox", "request": {"paths": [
               "/switchboard.registry.Registry/bind/sandbox.*",
               "/switchboard.registry.Registry/lookup/sandbox.*",
               "/switchboard.registry.Registry/watch/sandbox.*"]}}]}""";
    private static final AuthorizationPolicy SANDBOX_BY_NAME = AuthorizationPolicy.parse(SANDBOX_BY_NAME_TEXT);
    private static final Peer TEAM_A = Peer.of("spiffe://example.org/team-a/deployer", Peer.Authentication.MUTUAL_TLS, null);
    private static final Peer TEAM_B = Peer.of("spiffe://example.org/team-b/deployer", Peer.Authentication.MUTUAL_TLS, null);

    private static ComponentEntry entry(String name) {
        return RegistryWatchTest.entry(name, name + "-1", 4001, 0);
    }

    private static Object as(Peer peer, Skeleton registry, String operation, Object request) throws Exception {
        try (ServerCallContext.Scope scope = ServerCallContext.create(null, null, peer).enter()) {
            return registry.invoke(RegistryComponent.DESCRIPTOR.operation(operation), request, null);
        }
    }

    private static Bind bind(String name) {
        Bind b = new Bind();
        b.setEntry(Entries.toWire(entry(name)));
        return b;
    }

    @Test
    void aBindOfAnotherTeamsNameIsDeniedAndItsOwnPasses() throws Exception {
        RegistryService service = new RegistryService(new io.switchboard.registry.store.InMemoryRegistryStore(), null,
                Clock.systemUTC());
        ServerCallStats stats = new ServerCallStats(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
        Skeleton registry = ServerInterceptorChain.of("Registry", "soap", List.of(new AuthorizationInterceptor(TEAMS,
                RegistryPaths.INSTANCE, (call, protocol, peer, path) -> stats.denied(peer.identity(), path, protocol))),
                RegistryComponent.skeleton(service));

        as(TEAM_A, registry, "bind", bind("team-a.billing"));
        PermissionDeniedException e = assertThrows(PermissionDeniedException.class,
                () -> as(TEAM_B, registry, "bind", bind("team-a.billing")));
        assertEquals(BIND_A, e.path());
        as(TEAM_B, registry, "bind", bind("team-b.search"));
        assertThrows(PermissionDeniedException.class, () -> as(TEAM_A, registry, "bind", bind("team-b.evil")));
        assertEquals(List.of("team-a.billing-1"), service.store().lookup("team-a.billing").stream()
                .map(ComponentEntry::instanceId).toList(), "team-b's bind did not replace team-a's entry");
        assertTrue(service.store().lookup("team-b.evil").isEmpty());

        // a watch must be allowed every name it names
        Watch both = new Watch();
        both.setNames(List.of("team-a.billing", "team-b.search"));
        PermissionDeniedException hidden = assertThrows(PermissionDeniedException.class,
                () -> as(TEAM_A, registry, "watch", both));
        assertEquals(RegistryPaths.SERVICE + "watch/team-b.search", hidden.path());
        Watch onlyA = new Watch();
        onlyA.setNames(List.of("team-a.billing"));
        onlyA.setWaitSeconds(0);
        as(TEAM_B, registry, "watch", onlyA);
        Watch everything = new Watch();
        everything.setWaitSeconds(0);
        assertEquals(RegistryPaths.SERVICE + "watch", assertThrows(PermissionDeniedException.class,
                () -> as(TEAM_A, registry, "watch", everything)).path(), "a watch of every name needs the bare path");
        assertEquals(List.of(new ServerCallStats.Denial("MUTUAL_TLS:spiffe://example.org/team-a/deployer",
                        RegistryPaths.SERVICE + "bind/team-b.evil", 1),
                new ServerCallStats.Denial("MUTUAL_TLS:spiffe://example.org/team-a/deployer",
                        RegistryPaths.SERVICE + "watch", 1),
                new ServerCallStats.Denial("MUTUAL_TLS:spiffe://example.org/team-a/deployer",
                        RegistryPaths.SERVICE + "watch/team-b.search", 1),
                new ServerCallStats.Denial("MUTUAL_TLS:spiffe://example.org/team-b/deployer", BIND_A, 1)),
                stats.denials());
    }

    @Test
    void overTheWireAnAnonymousCallerIsHeldToThePolicyOnSoapAndTheGrpcListener() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().authorization(TEAMS).start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            client.bind(entry("sandbox.demo"));
            PermissionDeniedException bind = assertThrows(PermissionDeniedException.class,
                    () -> client.bind(entry("team-a.billing")));
            assertEquals(BIND_A, bind.path());
            assertThrows(PermissionDeniedException.class, client::list);
            assertThrows(PermissionDeniedException.class, () -> client.lookup("sandbox.demo"),
                    "nobody was allowed to look up sandbox names");
            assertTrue(client.lookup("team-a.billing").isEmpty(), "an allowed lookup answers");

            // the SOAP watch
            try (MetaStub soap = MetaStub.builder(RegistryComponent.DESCRIPTOR)
                    .endpoints(List.of(new Endpoint("soap", registry.endpoint()))).build()) {
                PermissionDeniedException watch = assertThrows(PermissionDeniedException.class,
                        () -> RegistryComponent.stub(soap).watch(List.of("sandbox.demo"), null, null, 0));
                assertEquals(RegistryPaths.SERVICE + "watch/sandbox.demo", watch.path());
                RegistryComponent.stub(soap).watch(List.of("team-a.billing"), null, null, 0);
                PermissionDeniedException lean = assertThrows(PermissionDeniedException.class,
                        () -> RegistryComponent.stub(soap).lookupLean("sandbox.demo", null));
                assertEquals(RegistryPaths.SERVICE + "lookup/sandbox.demo", lean.path());
                assertTrue(RegistryComponent.stub(soap).lookupLean("team-a.billing", null).getEntries().isEmpty());
            }

            // the gRPC listener: lookups and the watch stream
            ManagedChannel channel = watchChannel(registry);
            try {
                Lookup hidden = new Lookup();
                hidden.setName("sandbox.demo");
                StatusRuntimeException lookup = assertThrows(StatusRuntimeException.class,
                        () -> io.grpc.stub.ClientCalls.blockingUnaryCall(channel, WatchStreamMethod.LOOKUP,
                                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), hidden));
                assertEquals(Status.Code.PERMISSION_DENIED, lookup.getStatus().getCode());
                io.switchboard.registry.wire.LookupLean hiddenLean = new io.switchboard.registry.wire.LookupLean();
                hiddenLean.setName("sandbox.demo");
                StatusRuntimeException lean = assertThrows(StatusRuntimeException.class,
                        () -> io.grpc.stub.ClientCalls.blockingUnaryCall(channel, WatchStreamMethod.LOOKUP_LEAN,
                                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), hiddenLean));
                assertEquals(Status.Code.PERMISSION_DENIED, lean.getStatus().getCode(), "the lean form is a lookup too");
                Watch watch = new Watch();
                watch.setNames(List.of("team-a.billing", "sandbox.demo"));
                StatusRuntimeException follow = assertThrows(StatusRuntimeException.class,
                        () -> io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel, WatchStreamMethod.client(),
                                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), watch).next());
                assertEquals(Status.Code.PERMISSION_DENIED, follow.getStatus().getCode());
                Watch allowed = new Watch();
                allowed.setNames(List.of("team-a.billing"));
                assertTrue(io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel, WatchStreamMethod.client(),
                        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), allowed).hasNext(),
                        "an allowed watch gets its first answer");
            } finally {
                channel.shutdownNow();
            }
            List<String> denied = registry.denials().stream().map(d -> d.identity() + " " + d.path()).toList();
            assertTrue(denied.contains("ANONYMOUS " + BIND_A) && denied.contains("ANONYMOUS "
                    + RegistryPaths.SERVICE + "watch/sandbox.demo"), denied.toString());

            // the console shows them, per identity and path, on the names its reader may look up
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String page = http.send(java.net.http.HttpRequest.newBuilder(URI.create(registry.consoleUrl())).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(page.contains("Denied by the authorization policy") && page.contains("<td>ANONYMOUS</td><td>"
                    + BIND_A + "</td><td>1</td>"), page);
            String live = http.send(java.net.http.HttpRequest.newBuilder(URI.create(registry.consoleUrl() + "/live.json"))
                    .build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(live.contains("\"path\":\"" + BIND_A + "\""), live);
        }
    }

    @Test
    void aWatchStreamThePolicyNoLongerAllowsEndsBeforeItsNextChangeIsSent() throws Exception {
        java.util.concurrent.atomic.AtomicReference<AuthorizationPolicy> policy =
                new java.util.concurrent.atomic.AtomicReference<>(OPEN);
        try (RegistryServer registry = RegistryServer.builder().authorization(policy::get).start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            ManagedChannel channel = watchChannel(registry);
            try {
                java.util.Iterator<io.switchboard.registry.wire.WatchResponse> everyName = watchOfEveryName(channel);
                client.bind(entry("sandbox.one"));
                assertEquals(List.of("sandbox.one"), names(everyName.next()), "allowed, the stream is told");

                policy.set(SANDBOX_BY_NAME);   // as a policy file edited while the stream runs
                client.bind(entry("sandbox.two"));
                StatusRuntimeException ended = assertThrows(StatusRuntimeException.class, everyName::next,
                        "no change reaches a stream the policy in force refuses");
                assertEquals(Status.Code.PERMISSION_DENIED, ended.getStatus().getCode());
                assertTrue(ended.getStatus().getDescription().contains(RegistryPaths.SERVICE + "watch"),
                        ended.getStatus().toString());
                assertTrue(registry.denials().stream().anyMatch(d -> d.path().equals(RegistryPaths.SERVICE + "watch")),
                        "the ended stream is counted as a denial: " + registry.denials());

                Watch byName = new Watch();
                byName.setNames(List.of("sandbox.two"));
                assertEquals(List.of("sandbox.two"), names(io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel,
                        WatchStreamMethod.client(), io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                        byName).next()), "a watch of a name the policy allows is still served, from a snapshot");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void aPolicyFileReloadedToRefuseAWatchStreamEndsItWithoutWaitingForAChange(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("registry-policy.json");
        java.nio.file.Files.writeString(file, OPEN_TEXT);
        try (RegistryServer registry = RegistryServer.builder()
                .authorization(file, java.time.Duration.ofMillis(20)).start()) {
            assertARefusingPolicyEndsAnOpenStream(registry, () -> {
                // edited as an operator would: whole, in one rename
                java.nio.file.Path next = dir.resolve("registry-policy.json.next");
                java.nio.file.Files.writeString(next, SANDBOX_BY_NAME_TEXT);
                java.nio.file.Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            });
        }
    }

    @Test
    void aWatchStreamItsSuppliedPolicyNoLongerAllowsEndsWithoutWaitingForAChange() throws Exception {
        java.util.concurrent.atomic.AtomicReference<AuthorizationPolicy> policy =
                new java.util.concurrent.atomic.AtomicReference<>(OPEN);
        try (RegistryServer registry = RegistryServer.builder().authorization(policy::get).start()) {
            // replaced where the registry is not told (a supplier of the application's own)
            assertARefusingPolicyEndsAnOpenStream(registry, () -> policy.set(SANDBOX_BY_NAME));
        }
    }

    @Test
    void aLongPollThePolicyNoLongerAllowsWhileItWaitsIsAnsweredWithTheDenial() throws Exception {
        java.util.concurrent.atomic.AtomicReference<AuthorizationPolicy> policy =
                new java.util.concurrent.atomic.AtomicReference<>(OPEN);
        try (RegistryServer registry = RegistryServer.builder().authorization(policy::get).start();
             RegistryClient client = RegistryClient.connect(registry.endpoint());
             MetaStub soap = MetaStub.builder(RegistryComponent.DESCRIPTOR)
                     .endpoints(List.of(new Endpoint("soap", registry.endpoint()))).build()) {
            var stub = RegistryComponent.stub(soap);
            io.switchboard.registry.wire.WatchResponse now = stub.watch(List.of(), null, null, 0);
            var poll = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return stub.watch(List.of(), now.getEpoch(), now.getVersion(), 30);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            WatchHub hub = registry.service().watches().hub();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (hub.waiting() == 0) {   // the poll was let in, and waits for a change
                assertTrue(System.nanoTime() < end, "the long poll never waited");
                Thread.sleep(10);
            }

            policy.set(SANDBOX_BY_NAME);   // as a policy file edited while the poll waits
            client.bind(entry("sandbox.two"));
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> poll.get(30, TimeUnit.SECONDS), "the change found is not sent to a caller the policy now refuses");
            Throwable refused = e.getCause() instanceof java.util.concurrent.CompletionException c ? c.getCause() : e.getCause();
            assertTrue(refused instanceof PermissionDeniedException, String.valueOf(refused));
            assertEquals(RegistryPaths.SERVICE + "watch", ((PermissionDeniedException) refused).path());
            assertEquals(List.of("sandbox.two"), names(stub.watch(List.of("sandbox.two"), now.getEpoch(), now.getVersion(), 0)),
                    "a poll of a name it allows is answered");
        }
    }

    /** Replaces a registry's policy; may write files. */
    private interface PolicyReplacement {
        void replace() throws Exception;
    }

    /**
     * A watch stream of every name, open under a policy that allows it, ends with the denial once
     * {@code replacement} puts a policy in force that refuses it, with nothing bound afterwards (so
     * no change asks the policy again) and long before its 30 s deadline; the end is counted as a
     * denial and frees its watch slot.
     */
    private static void assertARefusingPolicyEndsAnOpenStream(RegistryServer registry, PolicyReplacement replacement)
            throws Exception {
        ManagedChannel channel = watchChannel(registry);
        try {
            java.util.Iterator<io.switchboard.registry.wire.WatchResponse> everyName = watchOfEveryName(channel);
            replacement.replace();
            StatusRuntimeException ended = assertThrows(StatusRuntimeException.class, everyName::next,
                    "a stream the policy in force refuses ends");
            assertEquals(Status.Code.PERMISSION_DENIED, ended.getStatus().getCode(),
                    "ended by the registry's sweep, not by its deadline: " + ended.getStatus());
            assertTrue(registry.denials().stream().anyMatch(d -> d.path().equals(RegistryPaths.SERVICE + "watch")),
                    "the ended stream is counted as a denial: " + registry.denials());
            assertEquals(0, registry.openWatchStreams(), "the ended stream no longer holds a watch");
        } finally {
            channel.shutdownNow();
        }
    }

    private static ManagedChannel watchChannel(RegistryServer registry) {
        URI stream = URI.create(registry.watchStreamAddress());
        return NettyChannelBuilder.forAddress(stream.getHost(), stream.getPort()).usePlaintext().build();
    }

    /** A watch stream of every name, past its opening snapshot. */
    private static java.util.Iterator<io.switchboard.registry.wire.WatchResponse> watchOfEveryName(ManagedChannel channel) {
        java.util.Iterator<io.switchboard.registry.wire.WatchResponse> everyName =
                io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel, WatchStreamMethod.client(),
                        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new Watch());
        assertTrue(everyName.next().getReset(), "the stream opens with a snapshot");
        return everyName;
    }

    private static List<String> names(io.switchboard.registry.wire.WatchResponse r) {
        return r.getEvents() == null ? List.of() : r.getEvents().stream().map(e -> e.getName()).toList();
    }
}

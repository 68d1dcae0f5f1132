package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TransportException;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry and a component server over TLS with client certificates (keys from {@link
 * TestCertificates}): trusted parties bind, look up and call over SOAP and gRPC; plain HTTP, a TLS
 * caller without a key, one with an untrusted key and one that does not trust the registry are
 * refused before the registry does anything, and the registry counts the refusals.
 */
class TlsRegistryTest {
    private final TestCertificates certs = TestCertificates.get();

    private static ClientSettings with(TlsSettings tls) {
        return ClientSettings.defaults().withTls(tls);
    }

    @Test
    void aServerWithoutATrustStoreTakesAnyTlsCallerThatTrustsIt() {
        try (RegistryServer registry = RegistryServer.builder().secret("s").tls(certs.server()).start()) {
            assertTrue(registry.endpoint().startsWith("https://127.0.0.1:"), registry.endpoint());
            try (RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), "s",
                    with(certs.clientWithoutKey()))) {
                client.bind(RegistryWatchTest.entry("Secure", "s1", 1001, 0));
                assertEquals(1, client.lookup("Secure").size());
            }
            // a client that does not trust the registry's certificate does not get through
            try (RegistryClient client = RegistryClient.connect(registry.endpoint())) {
                TransportException e = assertThrows(TransportException.class, () -> client.lookup("Secure"));
                assertTrue(e.getMessage().toLowerCase().contains("certif") || e.getMessage().contains("PKIX"),
                        e.getMessage());
            }
        }
    }

    @Test
    void withMutualTlsOnlyTrustedCallersReachTheRegistry() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().secret("s").tls(certs.serverMutual()).start()) {
            try (RegistryClient trusted = RegistryClient.connect(List.of(registry.endpoint()), "s", with(certs.client()))) {
                trusted.bind(RegistryWatchTest.entry("Secure", "s1", 1001, 0));
                assertEquals(List.of("s1"), trusted.lookup("Secure").stream().map(ComponentEntry::instanceId).toList());
            }
            long refusedBefore = registry.refusedConnections();

            String plain = registry.endpoint().replaceFirst("^https:", "http:");
            try (RegistryClient client = RegistryClient.connect(plain, "s")) {
                assertThrows(TransportException.class, () -> client.bind(RegistryWatchTest.entry("Secure", "p", 1002, 0)));
            }
            HttpClient http = HttpClient.newHttpClient();
            assertThrows(IOException.class, () -> http.send(HttpRequest.newBuilder(URI.create(plain + "?wsdl")).build(),
                    HttpResponse.BodyHandlers.ofString()));
            for (TlsSettings refused : List.of(certs.clientWithoutKey(), certs.rogueClient())) {
                try (RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), "s", with(refused))) {
                    assertThrows(TransportException.class, () -> client.lookup("Secure"), refused.toString());
                    assertThrows(TransportException.class,
                            () -> client.bind(RegistryWatchTest.entry("Secure", "r", 1003, 0)), refused.toString());
                }
            }

            assertEquals(1, registry.store().lookup("Secure").size(), "no refused write ran");
            long end = System.nanoTime() + 10_000_000_000L;
            while (registry.refusedConnections() < refusedBefore + 5 && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertTrue(registry.refusedConnections() >= refusedBefore + 5,
                    "refusals counted: " + (registry.refusedConnections() - refusedBefore));
        }
    }

    /**
     * A lookup waits for the client's watch to know what is bound, up to the connect timeout. A
     * registry that refuses the client's TLS handshake will not be known by waiting: the lookup
     * fails at once with the refusal, not after the whole minute.
     */
    @Test
    void aLookupByAClientTheRegistryRefusesAtTlsFailsAtOnceWithTheRefusal() {
        try (RegistryServer registry = RegistryServer.builder().secret("s").tls(certs.serverMutual()).start();
             Switchboard keyless = Switchboard.builder(registry.endpoint())
                     .settings(new ClientSettings(java.time.Duration.ofMinutes(1), ClientSettings.defaults().callTimeout(),
                             ClientSettings.defaults().maxMessageBytes(), ClientSettings.defaults().maxGraphNodes(),
                             certs.clientWithoutKey(), null))
                     .connect()) {
            long start = System.nanoTime();
            TransportException refused = assertThrows(TransportException.class,
                    () -> keyless.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub));
            long seconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            assertTrue(seconds < 30, "the lookup waited " + seconds + " s of its minute for a watch that cannot start");
            assertTrue(refused.getMessage().contains("TLS") || refused.getMessage().contains("Broken pipe"),
                    refused.getMessage());
        }
    }

    @Test
    void aComponentServerWithMutualTlsIsCalledOverHttpsAndGrpcsByTrustedClientsOnly() throws InterruptedException {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        List<CallRecord> calls = new CopyOnWriteArrayList<>();
        try (RegistryServer registry = RegistryServer.builder().secret("s").tls(certs.serverMutual()).start();
             ComponentServer components = ComponentServer.builder().protocols("grpc", "soap")
                     .settings(ServerSettings.defaults().withTls(certs.serverMutual()))
                     .registry(registry.endpoint(), "s").build()) {
            ComponentEntry entry = components.export(new CountingSkeleton(
                    ConformanceComponent.skeleton(new ConformanceImpl()), "runs", runs, label -> { }));
            List<String> addresses = entry.endpoints().stream().map(Endpoint::address).toList();
            assertTrue(addresses.get(0).startsWith("grpcs://127.0.0.1:"), addresses.toString());
            assertTrue(addresses.get(1).startsWith("https://127.0.0.1:"), addresses.toString());

            try (Switchboard sb = Switchboard.builder(registry.endpoint()).tls(certs.client())
                    .listener(calls::add).connect()) {
                ConformanceStub c = sb.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
                for (String protocol : List.of("grpc", "soap")) {
                    c.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol)).ping();
                }
                c.ping();
            }
            assertEquals(3, runs.get("runs").get());
            assertEquals(List.of("grpc", "soap"), calls.stream().limit(2).map(CallRecord::protocol).toList());

            // an untrusted client reaches neither the registry nor the component
            try (Switchboard sb = Switchboard.builder(registry.endpoint()).settings(with(certs.rogueClient()))
                    .follow(false).connect()) {
                assertThrows(TransportException.class, () -> sb.registry().lookup("Conformance"));
            }
            // nor do plain text, a TLS caller without a key and one with an untrusted key, on either endpoint
            for (Endpoint e : entry.endpoints()) {
                Endpoint plain = new Endpoint(e.protocol(), e.address().replaceFirst("^(https|grpcs):",
                        e.protocol().equals("soap") ? "http:" : "grpc:"));
                for (TlsSettings refused : java.util.Arrays.asList(null, certs.clientWithoutKey(), certs.rogueClient())) {
                    Endpoint at = refused == null ? plain : e;
                    try (var client = io.switchboard.protocol.spi.Protocols.get(e.protocol()).newClient(with(refused))) {
                        assertThrows(TransportException.class,
                                () -> ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at)).ping(),
                                at + " with " + refused);
                    }
                }
            }
            assertEquals(3, runs.get("runs").get(), "no refused call ran");
            long end = System.nanoTime() + 10_000_000_000L;   // counted as each refused connection closes
            while (!components.refusedConnections().values().stream().allMatch(n -> n >= 3) && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertTrue(components.refusedConnections().values().stream().allMatch(n -> n >= 3),
                    "each listener counted its refusal: " + components.refusedConnections());
        }
    }

    /**
     * A watch stream outlives the check its start passed: once the revocation list names its
     * caller, the stream is ended as unauthenticated before the next change would reach it, while a
     * watcher of another certificate of the same authority is told that change.
     */
    @Test
    void aWatcherRevokedWhileItsStreamIsOpenIsToldNothingMore(@TempDir Path dir) throws Exception {
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        BlockingQueue<String> toldRevoked = new LinkedBlockingQueue<>();
        BlockingQueue<String> toldTrusted = new LinkedBlockingQueue<>();
        try (RegistryServer registry = RegistryServer.builder().secret("s")
                .tls(certs.serverMutual().withRevocationList(crl.path())).start();
             RegistryClient writer = RegistryClient.connect(List.of(registry.endpoint()), "s", with(certs.spiffeClient()));
             RegistryClient revoked = RegistryClient.connect(List.of(registry.endpoint()), null, with(certs.client()));
             RegistryClient trusted = RegistryClient.connect(List.of(registry.endpoint()), null, with(certs.dnsClient()));
             RegistryWatch revokedWatch = RegistryWatch.start(revoked, List.of("Secure"), appearing(toldRevoked));
             RegistryWatch trustedWatch = RegistryWatch.start(trusted, List.of("Secure"), appearing(toldTrusted))) {
            assertTrue(revokedWatch.awaitSynced(Duration.ofSeconds(60)) && trustedWatch.awaitSynced(Duration.ofSeconds(60)));
            writer.bind(RegistryWatchTest.entry("Secure", "s1", 1001, 0));
            assertEquals("s1", toldRevoked.poll(60, TimeUnit.SECONDS));
            assertEquals("s1", toldTrusted.poll(60, TimeUnit.SECONDS));
            assertEquals(2, registry.openWatchStreams(), "a stream per watch");

            // other names change all the time from before the revocation until the stream ends:
            // the registry's stream dispatcher is never idle for long
            java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.CompletableFuture<Integer> binds = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                int i = 0;
                for (; busy.get(); i++) {
                    writer.bind(RegistryWatchTest.entry("Busy", "b" + i, 2000 + i % 1000, 0));
                }
                return i;
            });
            crl.revoke(certs.clientKeyStore());
            // a new connection of the revoked caller is refused: the registry has read the new list
            try (RegistryClient again = RegistryClient.connect(List.of(registry.endpoint()), null, with(certs.client()))) {
                assertThrows(TransportException.class, () -> again.lookup("Secure"));
            }
            // ended with no change of its names to send, and not opened again: its new handshakes are refused
            long end = System.nanoTime() + 30_000_000_000L;
            while (registry.openWatchStreams() > 1) {
                assertTrue(System.nanoTime() < end, "the revoked caller's stream is still open with no change sent");
                assertTrue(!binds.isDone(), "the other names stopped changing: " + binds);
                Thread.sleep(10);
            }
            busy.set(false);
            assertTrue(binds.get(60, TimeUnit.SECONDS) > 0);
            writer.bind(RegistryWatchTest.entry("Secure", "s2", 1002, 0));
            assertEquals("s2", toldTrusted.poll(60, TimeUnit.SECONDS));
            assertEquals(1, registry.openWatchStreams(), "the trusted caller's stream stays open");
            assertEquals(null, toldRevoked.poll(), "the revoked caller was told of a change after its revocation");
        }
    }

    @Test
    void aSoapLongPollWhoseCallerIsRevokedWhileItWaitsIsRefusedNotAnswered(@TempDir Path dir) throws Exception {
        TestCertificates.RevocationFile crl = certs.revocationFile(dir);
        try (RegistryServer registry = RegistryServer.builder().secret("s")
                .tls(certs.serverMutual().withRevocationList(crl.path())).start();
             RegistryClient writer = RegistryClient.connect(List.of(registry.endpoint()), "s", with(certs.spiffeClient()));
             MetaStub soap = MetaStub.builder(io.switchboard.registry.wire.RegistryComponent.DESCRIPTOR)
                     .endpoints(List.of(new Endpoint("soap", registry.endpoint()))).settings(with(certs.client())).build()) {
            var stub = io.switchboard.registry.wire.RegistryComponent.stub(soap);
            io.switchboard.registry.wire.WatchResponse now = stub.watch(List.of("Secure"), null, null, 0);
            var poll = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return stub.watch(List.of("Secure"), now.getEpoch(), now.getVersion(), 25);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            WatchHub hub = registry.service().watches().hub();
            long end = System.nanoTime() + 30_000_000_000L;
            while (hub.waiting() == 0) {   // the poll was let in, on its trusted connection, and waits
                assertTrue(System.nanoTime() < end, "the long poll never waited");
                Thread.sleep(10);
            }

            crl.revoke(certs.clientKeyStore());
            // a new connection of the revoked caller is refused: the registry has read the new list
            try (RegistryClient again = RegistryClient.connect(List.of(registry.endpoint()), null, with(certs.client()))) {
                assertThrows(TransportException.class, () -> again.lookup("Secure"));
            }
            writer.bind(RegistryWatchTest.entry("Secure", "s1", 1001, 0));
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> poll.get(60, TimeUnit.SECONDS), "the change found is not sent to a caller revoked meanwhile");
            Throwable refused = e.getCause() instanceof java.util.concurrent.CompletionException c ? c.getCause() : e.getCause();
            assertTrue(refused instanceof io.switchboard.protocol.PermissionDeniedException p && p.unauthenticated(),
                    String.valueOf(refused));
        }
    }

    private static Consumer<RegistryEvent> appearing(BlockingQueue<String> told) {
        return e -> {
            if (e.kind() == RegistryEvent.Kind.APPEAR) {
                told.add(e.instanceId());
            }
        };
    }
}

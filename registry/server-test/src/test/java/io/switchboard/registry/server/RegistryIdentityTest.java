package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.TestTokens;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The registry's reads see who asked, over SOAP and over its gRPC listener alike: the client
 * certificate's principal, or a verified token's; a token that does not verify is refused on both
 * listeners before the registry reads its store.
 */
class RegistryIdentityTest {
    private final TestTokens tokens = TestTokens.get();
    private final TestCertificates certs = TestCertificates.get();

    @Test
    void readsOverEitherListenerSeeTheCertificatesPrincipalOrTheTokens() {
        for (boolean stream : new boolean[] {true, false}) {
            PeerStore store = new PeerStore();
            try (RegistryServer registry = RegistryServer.builder().store(store).tls(certs.serverMutual())
                    .tokenVerifier(tokens.verifier()).watchStream(stream).start()) {
                String via = stream ? "the gRPC listener" : "SOAP";
                ClientSettings spiffe = ClientSettings.defaults().withTls(certs.spiffeClient());
                try (RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), null, spiffe)) {
                    client.lookup("Billing");
                }
                assertEquals(Peer.Authentication.MUTUAL_TLS, store.last().authentication(), via);
                assertEquals(TestCertificates.SPIFFE_ID, store.last().principal(), via);

                try (RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), null,
                        spiffe.withToken(() -> tokens.valid("team-a")))) {
                    client.list();
                }
                assertEquals(Peer.Authentication.TOKEN, store.last().authentication(), via);
                assertEquals("team-a", store.last().principal(), via);

                int reads = store.seen.size();
                for (Map.Entry<String, String> hostile : tokens.hostile("mallory").entrySet()) {
                    try (RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), null,
                            spiffe.withToken(hostile::getValue))) {
                        assertThrows(RuntimeException.class, () -> client.lookup("Billing"), via + ": " + hostile.getKey());
                    }
                }
                assertEquals(reads, store.seen.size(), via + ": a refused caller's read reached the store");
            }
        }
    }

    @Test
    void theGrpcListenerAnswersABadTokenUnauthenticatedAndAGoodOne() throws Exception {
        PeerStore store = new PeerStore();
        try (RegistryServer registry = RegistryServer.builder().store(store).tokenVerifier(tokens.verifier()).start()) {
            URI at = URI.create(registry.watchStreamAddress());
            ManagedChannel channel = NettyChannelBuilder.forAddress(at.getHost(), at.getPort()).usePlaintext().build();
            try {
                StatusRuntimeException refused = assertThrows(StatusRuntimeException.class,
                        () -> lookup(channel, "Bearer " + tokens.hostile("mallory").get("wrong audience")));
                assertEquals(Status.Code.UNAUTHENTICATED, refused.getStatus().getCode());
                assertTrue(refused.getStatus().getDescription().contains("bearer token"), refused.getStatus().toString());
                assertEquals(Status.Code.UNAUTHENTICATED, assertThrows(StatusRuntimeException.class,
                        () -> lookup(channel, "Basic YWxpY2U6cHc=")).getStatus().getCode());
                assertEquals(0, store.seen.size());

                // the watch stream itself: refused before a follower is made
                io.switchboard.registry.wire.Watch watch = new io.switchboard.registry.wire.Watch();
                watch.setNames(List.of("Billing"));
                var stream = ClientCalls.blockingServerStreamingCall(ClientInterceptors.intercept(channel,
                                MetadataUtils.newAttachHeadersInterceptor(authorization(
                                        "Bearer " + tokens.hostile("mallory").get("expired")))),
                        WatchStreamMethod.client(), io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                        watch);
                assertEquals(Status.Code.UNAUTHENTICATED,
                        assertThrows(StatusRuntimeException.class, stream::hasNext).getStatus().getCode());
                assertEquals(0, registry.openWatchStreams(), "a refused watch holds a follower");

                lookup(channel, "Bearer " + tokens.valid("reader"));
                assertEquals("reader", store.last().principal());
                lookup(channel, null);
                assertEquals(Peer.Authentication.ANONYMOUS, store.last().authentication());
                assertTrue(store.last().remoteAddress().startsWith("127.0.0.1:"), store.last().toString());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static Metadata authorization(String value) {
        Metadata headers = new Metadata();
        if (value != null) {
            headers.put(WatchStreamMethod.AUTHORIZATION, value);
        }
        return headers;
    }

    private static void lookup(ManagedChannel channel, String authorization) {
        Metadata headers = authorization(authorization);
        io.switchboard.registry.wire.Lookup request = new io.switchboard.registry.wire.Lookup();
        request.setName("Billing");
        ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                        MetadataUtils.newAttachHeadersInterceptor(headers)), WatchStreamMethod.LOOKUP,
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), request);
    }

    /** An empty store noting who each read was made by, as the registry's call context tells it. */
    private static final class PeerStore implements RegistryStore {
        final List<Peer> seen = new CopyOnWriteArrayList<>();

        Peer last() {
            return seen.get(seen.size() - 1);
        }

        @Override
        public void bind(ComponentEntry entry) {
        }

        @Override
        public void rebind(ComponentEntry entry) {
        }

        @Override
        public int unbind(String name, String instanceId) {
            return 0;
        }

        @Override
        public List<ComponentEntry> lookup(String name) {
            seen.add(ServerCallContext.peer());
            return List.of();
        }

        @Override
        public List<ComponentEntry> list() {
            Peer p = ServerCallContext.peer();
            if (p != Peer.UNKNOWN) {
                seen.add(p);   // the registry lists its store once at start, outside of any call
            }
            return List.of();
        }
    }
}

package io.switchboard.registry.server;

import static io.switchboard.registry.server.RegistryWatchTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.wire.Lookup;
import io.switchboard.registry.wire.LookupResponse;
import io.switchboard.registry.wire.Watch;
import io.switchboard.registry.wire.WatchResponse;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The registry's stream listener against one greedy client: its streams are counted per remote
 * address however many connections it opens, its reads beyond their share are refused at once,
 * and its idle connections make way for others; another client is served throughout.
 */
class StreamListenerSharesTest {
    private static final long GENEROUS_SECONDS = 30;

    /** A channel to the registry's stream listener, from {@code source} (a loopback address). */
    private static ManagedChannel channel(RegistryServer registry, String source) {
        URI at = URI.create(registry.watchStream().address());
        return NettyChannelBuilder.forAddress(at.getHost(), at.getPort()).usePlaintext()
                .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
                    @Override
                    public SocketAddress createSocketAddress(SocketAddress remote, io.grpc.Attributes attrs) {
                        return new InetSocketAddress(source, 0);
                    }
                }).build();
    }

    /** One watch stream: the messages it gets and how it ends. */
    private static final class Stream {
        final BlockingQueue<WatchResponse> messages = new LinkedBlockingQueue<>();
        final CompletableFuture<Status> end = new CompletableFuture<>();
        ClientCall<Watch, WatchResponse> call;

        static Stream open(ManagedChannel channel, String name) {
            Stream s = new Stream();
            s.call = channel.newCall(WatchStreamMethod.client(), CallOptions.DEFAULT);
            s.call.start(new ClientCall.Listener<>() {
                @Override
                public void onMessage(WatchResponse message) {
                    s.messages.add(message);
                    s.call.request(1);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    s.end.complete(status);
                }
            }, new Metadata());
            Watch w = new Watch();
            w.setNames(List.of(name));
            s.call.sendMessage(w);
            s.call.halfClose();
            s.call.request(1);
            return s;
        }

        /** Waits for its first message (the names' state as it starts): it was admitted. */
        void awaitAdmitted() throws InterruptedException {
            assertNotNull(messages.poll(GENEROUS_SECONDS, TimeUnit.SECONDS), "the stream was not admitted");
        }
    }

    private static <Q, A> CompletableFuture<Status> unary(ManagedChannel channel, MethodDescriptor<Q, A> method, Q request) {
        CompletableFuture<Status> done = new CompletableFuture<>();
        ClientCall<Q, A> call = channel.newCall(method, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                done.complete(status);
            }
        }, new Metadata());
        call.sendMessage(request);
        call.halfClose();
        call.request(1);
        return done;
    }

    private static Lookup lookup(String name) {
        Lookup l = new Lookup();
        l.setName(name);
        return l;
    }

    @Test
    void streamsAreCountedPerAddressNotPerConnectionAndAnotherAddressStillWatches() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().maxWatches(100, 3).start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint())) {
            ManagedChannel first = channel(registry, "127.0.0.1");
            ManagedChannel second = channel(registry, "127.0.0.1");
            ManagedChannel other = channel(registry, "127.0.0.2");
            try {
                List<Stream> admitted = new ArrayList<>();
                for (ManagedChannel c : List.of(first, first, second)) {
                    Stream s = Stream.open(c, "Shared");
                    s.awaitAdmitted();
                    admitted.add(s);
                }
                // a fresh connection from the same address does not bring a fresh share
                Status refused = Stream.open(second, "Shared").end.get(GENEROUS_SECONDS, TimeUnit.SECONDS);
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getCode());
                assertTrue(refused.getDescription().contains("address"), refused.getDescription());
                assertEquals(3, registry.openWatchStreams());

                Stream elsewhere = Stream.open(other, "Shared");
                elsewhere.awaitAdmitted();
                writer.bind(entry("Shared", "s1", 4101, 0));
                assertNotNull(elsewhere.messages.poll(GENEROUS_SECONDS, TimeUnit.SECONDS),
                        "the other address's watch is told of the bind");
                for (Stream s : admitted) {
                    assertNotNull(s.messages.poll(GENEROUS_SECONDS, TimeUnit.SECONDS), "admitted streams go on");
                    assertNull(s.end.getNow(null));
                }
                assertEquals(1, registry.refusedWatchStreams());
            } finally {
                first.shutdownNow();
                second.shutdownNow();
                other.shutdownNow();
            }
        }
    }

    @Test
    void tenThousandLookupsFromOneClientAreBoundedWhileAnotherClientsBindAndLookupAreAnswered() throws Exception {
        int flood = 10_000;
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint())) {
            writer.bind(entry("Read", "r1", 4201, 0));
            ManagedChannel greedy = channel(registry, "127.0.0.1");
            ManagedChannel polite = channel(registry, "127.0.0.1");
            try {
                AtomicInteger ok = new AtomicInteger();
                AtomicInteger exhausted = new AtomicInteger();
                AtomicInteger other = new AtomicInteger();
                CountDownLatch all = new CountDownLatch(flood);
                for (int i = 0; i < flood; i++) {
                    unary(greedy, WatchStreamMethod.LOOKUP, lookup("Read")).thenAccept(s -> {
                        (s.isOk() ? ok : s.getCode() == Status.Code.RESOURCE_EXHAUSTED ? exhausted : other)
                                .incrementAndGet();
                        all.countDown();
                    });
                }
                // The other client is answered, not refused, while the flood holds its share. How fast is a
                // benchmark's question (a wall-clock bound here failed on a loaded machine, not on a starved read).
                writer.bind(entry("Read", "r2", 4202, 0));
                Status politeRead = unary(polite, WatchStreamMethod.LOOKUP, lookup("Read"))
                        .get(GENEROUS_SECONDS, TimeUnit.SECONDS);
                assertTrue(politeRead.isOk(), politeRead.toString());

                assertTrue(all.await(GENEROUS_SECONDS * 2, TimeUnit.SECONDS), all.getCount() + " lookups unanswered");
                assertEquals(0, other.get(), "every lookup is answered or refused as exhausted");
                assertTrue(exhausted.get() > 0, "the flood was bounded: " + ok.get() + " answered");
                assertEquals(exhausted.get(), registry.refusedStreamReads());
                assertTrue(ok.get() >= WatchStreamServer.MAX_READS_PER_CONNECTION, ok.get() + " answered");
            } finally {
                greedy.shutdownNow();
                polite.shutdownNow();
            }
        }
    }

    @Test
    void atTheConnectionLimitTheIdleConnectionMakesWayAndAWatchingOneStays() throws Exception {
        ServerSettings settings = ServerSettings.defaults().withMaxConnectionsPerAddress(2);
        try (RegistryServer registry = RegistryServer.builder().settings(settings).start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint())) {
            ManagedChannel watching = channel(registry, "127.0.0.1");
            ManagedChannel idle = channel(registry, "127.0.0.1");
            ManagedChannel late = channel(registry, "127.0.0.1");
            try {
                Stream w = Stream.open(watching, "Kept");
                w.awaitAdmitted();
                assertTrue(unary(idle, WatchStreamMethod.LOOKUP, lookup("Kept")).get(GENEROUS_SECONDS, TimeUnit.SECONDS)
                        .isOk());
                GrpcConnectionSharesProbe shares = new GrpcConnectionSharesProbe(registry);
                assertTrue(unary(late, WatchStreamMethod.LOOKUP, lookup("Kept")).get(GENEROUS_SECONDS, TimeUnit.SECONDS)
                        .isOk(), "the newcomer is admitted");
                assertEquals(1, shares.evictions(), "the idle connection made way");
                writer.bind(entry("Kept", "k1", 4301, 0));
                assertNotNull(w.messages.poll(GENEROUS_SECONDS, TimeUnit.SECONDS), "the watching connection stays");
                assertNull(w.end.getNow(null));
            } finally {
                watching.shutdownNow();
                idle.shutdownNow();
                late.shutdownNow();
            }
        }
    }

    /** The stream listener's connection counts. */
    private record GrpcConnectionSharesProbe(RegistryServer registry) {
        long evictions() {
            return registry.watchStream().connections().evictions();
        }
    }
}

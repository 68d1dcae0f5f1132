package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.RegistryWatch;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.wire.Watch;
import io.switchboard.registry.wire.WatchResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/**
 * A watch stream that answers with a snapshot and ends: the watch asks again after a back-off that
 * keeps doubling, not ten times a second; only a stream that lived 5 s starts the back-off over.
 * The registry is real (the watch learns the stream's address from its SOAP {@code watch}); the
 * stream it names is a fake that ends each call as told.
 */
class ShortLivedWatchStreamTest {
    private static final Duration GENEROUS = Duration.ofSeconds(60);
    private static final long FIRST_RETRY_MILLIS = 100;

    @Test
    void aStreamThatAnswersOnceAndEndsIsAskedForAgainLessAndLessOften() throws Exception {
        try (FakeStream fake = new FakeStream(open -> false);
             RegistryServer registry = RegistryServer.builder().watchStream(false).start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            registry.service().watches().streamAt(fake.address());
            try (RegistryWatch watch = RegistryWatch.start(client, List.of("Echo"), e -> { })) {
                List<Long> gaps = fake.gaps(6);
                assertTrue(watch.awaitSynced(Duration.ZERO), "the snapshot was applied");
                for (int k = 1; k <= gaps.size(); k++) {
                    // the k-th pause is 100 ms * 2^(k-1), less a quarter of jitter: half of it is a safe floor
                    // (a watch that starts over after every snapshot waits about 100 ms each time)
                    long floor = FIRST_RETRY_MILLIS * (1L << (k - 1)) / 2;
                    assertTrue(gaps.get(k - 1) >= floor, "gap " + k + " was " + gaps.get(k - 1) + " ms, under "
                            + floor + " ms; all gaps: " + gaps);
                }
            }
        }
    }

    @Test
    void aStreamThatLivedFiveSecondsStartsTheBackOffOver() throws Exception {
        int shortOnes = 5;
        // the first five streams end at once (back-off 100 ms .. 1.6 s, 3.2 s next); the sixth lives 5.5 s
        try (FakeStream fake = new FakeStream(open -> open == shortOnes + 1);
             RegistryServer registry = RegistryServer.builder().watchStream(false).start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            registry.service().watches().streamAt(fake.address());
            try (RegistryWatch watch = RegistryWatch.start(client, List.of("Echo"), e -> { })) {
                List<Long> gaps = fake.gaps(shortOnes + 1);
                long afterHealthy = gaps.get(shortOnes);
                // without the reset this pause would be 3.2 s less a quarter of jitter at the least
                long withoutReset = FIRST_RETRY_MILLIS * (1L << shortOnes) * 3 / 4;
                assertTrue(afterHealthy < withoutReset, "after a stream that lived 5 s the watch waited "
                        + afterHealthy + " ms, as long as after a failure; all gaps: " + gaps);
            }
        }
    }

    /**
     * A token that cannot be read as the watch connects again (a token file caught mid-rotation) is
     * a failure like any other: the watch asks again after its back-off, rather than never again.
     */
    @Test
    void aTokenThatCannotBeReadAsTheWatchConnectsAgainLeavesItToTheNextTry() throws Exception {
        AtomicInteger connects = new AtomicInteger();
        AtomicInteger thrown = new AtomicInteger();
        java.util.function.Supplier<String> token = () -> {
            boolean connecting = StackWalker.getInstance().walk(frames -> frames.anyMatch(f ->
                    f.getClassName().equals(RegistryWatch.class.getName()) && f.getMethodName().equals("connect")));
            if (connecting && connects.incrementAndGet() == 2) {   // the stream's second connect
                thrown.incrementAndGet();
                throw new java.io.UncheckedIOException(new java.io.IOException("cannot read token file: it is being replaced"));
            }
            return "a-token";
        };
        try (FakeStream fake = new FakeStream(open -> false);
             RegistryServer registry = RegistryServer.builder().watchStream(false).start();
             RegistryClient client = RegistryClient.connect(List.of(registry.endpoint()), null,
                     io.switchboard.protocol.ClientSettings.defaults().withToken(token))) {
            registry.service().watches().streamAt(fake.address());
            try (RegistryWatch watch = RegistryWatch.start(client, List.of("Echo"), e -> { })) {
                fake.gaps(1);   // the first stream, its end, and a stream again
                assertEquals(1, thrown.get(), "the token's read failed once, as the watch connected");
                assertTrue(connects.get() >= 3, "connects: " + connects.get());
            }
        }
    }

    /**
     * The registry's watch stream as a fake: each call is sent one valid snapshot, then ended OK at
     * once, or after 5.5 s when {@code lingers} says so of the call's number (from 1). It notes when
     * each call opened.
     */
    private static final class FakeStream implements AutoCloseable {
        private static final long LINGER_MILLIS = 5_500;
        private final BlockingQueue<Long> opened = new LinkedBlockingQueue<>();
        private final BlockingQueue<Long> ended = new LinkedBlockingQueue<>();
        private final AtomicInteger calls = new AtomicInteger();
        private final java.util.concurrent.ScheduledExecutorService timer =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        private final Server server;

        FakeStream(IntPredicate lingers) throws java.io.IOException {
            byte[] snapshot = WatchStreamMethod.encode(snapshot());
            ServerServiceDefinition service = ServerServiceDefinition.builder(WatchStreamMethod.SERVICE)
                    .addMethod(WatchStreamMethod.server(), handler(lingers, snapshot))
                    .build();
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service)
                    .build().start();
        }

        private ServerCallHandler<Watch, byte[]> handler(IntPredicate lingers, byte[] snapshot) {
            return (call, headers) -> {
                opened.add(System.nanoTime());
                boolean linger = lingers.test(calls.incrementAndGet());
                call.request(1);
                return new ServerCall.Listener<Watch>() {
                    @Override
                    public void onHalfClose() {
                        call.sendHeaders(new Metadata());
                        call.sendMessage(snapshot);
                        if (linger) {
                            timer.schedule(() -> end(call), LINGER_MILLIS, TimeUnit.MILLISECONDS);
                        } else {
                            end(call);
                        }
                    }
                };
            };
        }

        private void end(ServerCall<Watch, byte[]> call) {
            call.close(Status.OK, new Metadata());
            ended.add(System.nanoTime());
        }

        private static WatchResponse snapshot() {
            WatchResponse r = new WatchResponse();
            r.setEpoch("fake-epoch");
            r.setVersion(7L);
            r.setReset(true);
            r.setEvents(new ArrayList<>());
            return r;
        }

        String address() {
            return "grpc://127.0.0.1:" + ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
        }

        /**
         * Waits for {@code count} calls after the first and tells the pauses, in ms, from each call's
         * end to the next call.
         */
        List<Long> gaps(int count) throws InterruptedException {
            List<Long> gaps = new ArrayList<>();
            assertNotNull(take(opened), "the watch never opened the stream");
            for (int i = 0; i < count; i++) {
                Long end = take(ended);
                assertNotNull(end, "a call did not end within " + GENEROUS);
                Long next = take(opened);
                assertNotNull(next, "the watch did not open the stream again within " + GENEROUS + "; gaps: " + gaps);
                gaps.add(TimeUnit.NANOSECONDS.toMillis(next - end));
            }
            return gaps;
        }

        private static Long take(BlockingQueue<Long> times) throws InterruptedException {
            return times.poll(GENEROUS.toSeconds(), TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            timer.shutdownNow();
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}

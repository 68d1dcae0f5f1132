package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * client → A → B, where A's operation makes its call to B on a pool's thread through
 * {@link ServerCallContext#propagating}: B gets what is left of the caller's deadline, and the
 * caller's cancel reaches B, over each protocol A may call B by. Without the hand-over, B's call
 * would have the stub's own 120 s and no cancel at all.
 */
class HandedOverCallsTest {
    private static final List<ComponentServer> servers = new ArrayList<>();
    private static final List<MetaStub> stubs = new ArrayList<>();
    private static final Relay A = new Relay();
    private static final Waiter B = new Waiter();
    private static ComponentEntry a;
    private static ComponentEntry b;

    /** Hands each call on to the next hop, made on a pool's thread in this call. */
    static final class Relay extends ConformanceImpl {
        final ExecutorService pool = Executors.newCachedThreadPool();
        volatile ConformanceStub next;

        @Override
        public long spin(double[] values, int maxRounds) {
            CompletableFuture<Long> onward = CompletableFuture.supplyAsync(() -> next.spin(values, maxRounds),
                    ServerCallContext.propagating(pool));
            try {
                return onward.get();
            } catch (InterruptedException e) {   // this call was cancelled: so is the one on the pool
                Thread.currentThread().interrupt();
                return -1;
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            }
        }
    }

    /** Notes the deadline its call came with; waits for its cancel when told to. */
    static final class Waiter extends ConformanceImpl {
        volatile boolean waitForCancel;
        volatile Long deadlineSeen;
        volatile long startedAt;
        volatile CountDownLatch started = new CountDownLatch(1);
        volatile CountDownLatch cancelled = new CountDownLatch(1);

        @Override
        public long spin(double[] values, int maxRounds) {
            deadlineSeen = ServerCallContext.current().deadlineNanos();
            startedAt = System.nanoTime();
            started.countDown();
            if (waitForCancel) {
                CountDownLatch heard = new CountDownLatch(1);
                try (ServerCallContext.Scope s = ServerCallContext.onCancel(heard::countDown)) {
                    heard.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                cancelled.countDown();
            }
            return 0;
        }

        void reset(boolean waitForCancel) {
            this.waitForCancel = waitForCancel;
            deadlineSeen = null;
            started = new CountDownLatch(1);
            cancelled = new CountDownLatch(1);
        }
    }

    @BeforeAll
    static void serve() {
        a = serve("A", A);
        b = serve("B", B);
    }

    @AfterAll
    static void stop() {
        A.pool.shutdownNow();
        stubs.forEach(MetaStub::close);
        servers.forEach(ComponentServer::close);
    }

    private static ComponentEntry serve(String name, ConformanceImpl component) {
        ComponentServer server = ComponentServer.builder().build();
        servers.add(server);
        return server.export(name, ConformanceComponent.skeleton(component));
    }

    private static ConformanceStub stub(ComponentEntry entry, String protocol) {
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                .serverRecognisesCallIds(true).build();
        stubs.add(channel);
        ConformanceStub stub = ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
        stub.ping();   // connected and loaded: the deadline is spent on the call itself
        return stub;
    }

    @ParameterizedTest(name = "A calls B over {0}")
    @ValueSource(strings = {"tcp", "grpc", "soap", "local"})
    void theCallOnThePoolGetsWhatIsLeftOfTheCallersDeadline(String toB) {
        A.next = stub(b, toB);
        B.reset(false);
        ConformanceStub toA = stub(a, "tcp");
        long callStart = System.nanoTime();
        long callerDeadline = callStart + TimeUnit.SECONDS.toNanos(5);
        toA.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "tcp").withDeadlineAfter(Duration.ofSeconds(5)))
                .spin(new double[] {1}, 1);
        Long seen = B.deadlineSeen;
        assertTrue(seen != null, "B's call has a deadline");
        // each hop counts the time left from the request's arrival: no later than the caller's by
        // more than the call's way to B (the stub's own 120 s would be nearly two minutes later)
        assertTrue(seen - callerDeadline <= B.startedAt - callStart, "B's deadline "
                + TimeUnit.NANOSECONDS.toMillis(seen - callerDeadline) + " ms after the caller's");
    }

    @ParameterizedTest(name = "A calls B over {0}")
    @ValueSource(strings = {"tcp", "grpc", "soap", "local"})
    void theCallersCancelReachesTheCallOnThePool(String toB) throws Exception {
        A.next = stub(b, toB);
        B.reset(true);
        CompletableFuture<Long> call = stub(a, "tcp").spinAsync(new double[] {1}, 1);
        assertTrue(B.started.await(10, TimeUnit.SECONDS), "the call reached B");
        assertTrue(call.cancel(true));
        assertTrue(B.cancelled.await(10, TimeUnit.SECONDS), "B's call, made on A's pool, was cancelled with its caller's");
        assertThrows(CancellationException.class, call::get);
    }
}

package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Fast operations move onto the event loop, slow ones never do and send a fast one back to workers. */
class InlineRunsTest {
    @Test
    void anOperationRunsInlineAfterItsFastRunsAndBacksOffAfterASlowOne() {
        InlineRuns runs = new InlineRuns(TimeUnit.MICROSECONDS.toNanos(100));
        for (int i = 0; i < InlineRuns.FAST_RUNS; i++) {
            runs.ran(5_000_000, false);   // slow runs on a worker (a cold JIT) do not count
            assertFalse(runs.inline(10), "run " + i + " is still watched on a worker");
            runs.ran(10_000, false);
        }
        assertTrue(runs.inline(10));
        assertFalse(runs.inline(InlineRuns.MAX_INLINE_REQUEST_BYTES + 1), "a large request is read on a worker");
        runs.ran(150_000, true);      // slow: a strike, not yet a reason to leave
        runs.ran(10_000, true);       // outweighed
        runs.ran(150_000, true);
        runs.ran(150_000, true);
        assertTrue(runs.inline(10), "two strikes");
        runs.ran(InlineRuns.STALL_NANOS + 1, true);   // a stall of the event loop: back to workers at once
        for (int i = 0; i < InlineRuns.BACK_OFF_CALLS + InlineRuns.FAST_RUNS; i++) {
            assertFalse(runs.inline(10), "call " + i + " after the slow run goes to a worker");
            runs.ran(10_000, false);
        }
        assertTrue(runs.inline(10), "watched again, and fast again");
        assertFalse(new InlineRuns(0).inline(0), "0 turns it off");
    }

    @Test
    void onAServerFastCallsEndUpOnTheEventLoopAndSlowOnesStayOnWorkers() throws Exception {
        List<String> threads = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
        ConformanceImpl impl = new ConformanceImpl();
        TcpProtocolProvider provider = new TcpProtocolProvider();
        try (ProtocolServer server = provider.newServer(ServerSettings.defaults());
             ProtocolClient client = provider.newClient(ClientSettings.defaults())) {
            Endpoint at = server.export(new CountingSkeleton(ConformanceComponent.skeleton(impl), "runs", counts,
                    label -> threads.add(Thread.currentThread().getName())));
            ConformanceStub stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            stub.ping();
            assertTrue(threads.get(0).startsWith("tcp-call-"), "the first ping ran on a worker: " + threads.get(0));
            for (int i = 0; i < 20_000 && !threads.get(threads.size() - 1).startsWith("tcp-server-"); i++) {
                stub.ping();   // once the JIT compiled it, a ping takes microseconds
            }
            assertTrue(threads.get(threads.size() - 1).startsWith("tcp-server-"), "pings moved to the event loop after "
                    + threads.size() + " calls: " + threads.get(threads.size() - 1));
            threads.clear();
            for (int i = 0; i < 3; i++) {
                CompletableFuture<Long> spin = stub.spinAsync(new double[0], 600_000);
                assertTrue(impl.spinStarted.await(30, TimeUnit.SECONDS));
                spin.cancel(true);
                assertTrue(impl.spinSawCancel.await(30, TimeUnit.SECONDS), "a spin on a worker is cancelled");
                impl.spinStarted = new java.util.concurrent.CountDownLatch(1);
                impl.spinSawCancel = new java.util.concurrent.CountDownLatch(1);
            }
            assertEquals(0, threads.stream().filter(t -> t.startsWith("tcp-server-")).count(), threads.toString());
        }
    }
}

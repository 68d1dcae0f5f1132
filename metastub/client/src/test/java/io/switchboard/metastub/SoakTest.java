package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.junit.jupiter.api.Test;

/**
 * Load and soak: 64 client threads call real SOAP and gRPC servers through meta-stubs for a fixed
 * time with a mix of small and large calls (the adaptive policy choosing, plus calls pinned to
 * SOAP), and every answer is checked. Between the end of the warm-up and the end of the run the
 * heap after a full GC and the JVM's thread count must not grow beyond wide margins, no call may
 * fail, and the servers must have run exactly as many operations as the clients completed.
 * Latency percentiles go to standard output and {@code target/soak-report.md}, never to asserts.
 *
 * <p>CI runs it for 20 s; a long run: {@code mvn -B -ntp -pl metastub -am verify -Dtest=SoakTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dswitchboard.soak.seconds=1800}.
 */
class SoakTest {
    private static final int CLIENT_THREADS = 64;
    private static final int STUBS = 16;
    private static final long HEAP_MARGIN_BYTES = 64L << 20;
    private static final int THREAD_MARGIN = 16;

    /** One kind of call in the mix, with its share of the calls in percent. */
    enum Kind {
        SMALL_DOUBLES(45), PING_SOAP(15), SMALL_DOUBLES_SOAP(10), INCREMENT_SOAP(5), LIST_100(15), LARGE_DOUBLES(10);

        final int percent;

        Kind(int percent) {
            this.percent = percent;
        }

        static Kind pick(SplittableRandom random) {
            int r = random.nextInt(100);
            for (Kind k : values()) {
                r -= k.percent;
                if (r < 0) {
                    return k;
                }
            }
            throw new IllegalStateException();
        }
    }

    private final ConformanceImpl impl = new ConformanceImpl();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> byProtocol = new ConcurrentHashMap<>();
    private final AtomicLong fallbacks = new AtomicLong();
    private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    /** Calls hold it shared; a measurement holds it alone, so no call is in flight while the heap is weighed. */
    private final ReentrantReadWriteLock quiet = new ReentrantReadWriteLock(true);

    @Test
    void sixtyFourClientsOnMixedCallsStayCorrectWithoutGrowth() throws Exception {
        int seconds = Integer.getInteger("switchboard.soak.seconds", 20);
        List<AutoCloseable> closing = new ArrayList<>();
        try {
            Skeleton skeleton = ConformanceComponent.skeleton(impl);
            List<Endpoint> endpoints = new ArrayList<>();
            for (String protocol : List.of("grpc", "soap")) {
                ProtocolServer server = Protocols.get(protocol).newServer(ServerSettings.defaults());
                closing.add(server);
                endpoints.add(server.export(new CountingSkeleton(skeleton, protocol, served, p -> { })));
            }
            List<ConformanceStub> stubs = new ArrayList<>();
            for (int i = 0; i < STUBS; i++) {
                MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols(List.of("grpc", "soap"))
                        .endpoints(endpoints).listener(this::record).build();
                closing.add(channel::close);
                stubs.add(ConformanceComponent.stub(channel));
            }

            long start = System.nanoTime();
            long end = start + seconds * 1_000_000_000L;
            long warmUpEnd = start + seconds * 1_000_000_000L / 3;   // the first third
            List<Map<Kind, long[]>> latencies = new ArrayList<>();
            AtomicLong completed = new AtomicLong();
            AtomicLong increments = new AtomicLong();
            CountDownLatch done = new CountDownLatch(CLIENT_THREADS);
            List<Thread> clients = new ArrayList<>();
            for (int t = 0; t < CLIENT_THREADS; t++) {
                Map<Kind, LongList> mine = new EnumMap<>(Kind.class);
                ConformanceStub stub = stubs.get(t % STUBS);
                SplittableRandom random = new SplittableRandom(t);
                Thread thread = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end && errors.isEmpty()) {
                            Kind kind = Kind.pick(random);
                            quiet.readLock().lock();
                            try {
                                long t0 = System.nanoTime();
                                call(stub, kind, random, increments);
                                long took = System.nanoTime() - t0;
                                if (t0 >= warmUpEnd) {
                                    mine.computeIfAbsent(kind, k -> new LongList()).add(took);
                                }
                                completed.incrementAndGet();
                            } finally {
                                quiet.readLock().unlock();
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    } finally {
                        synchronized (latencies) {
                            Map<Kind, long[]> arrays = new EnumMap<>(Kind.class);
                            mine.forEach((k, v) -> arrays.put(k, v.toArray()));
                            latencies.add(arrays);
                        }
                        done.countDown();
                    }
                }, "soak-client-" + t);
                thread.setDaemon(true);
                clients.add(thread);
            }
            clients.forEach(Thread::start);

            sleepUntil(warmUpEnd);
            Snapshot first = snapshot();
            sleepUntil(end - 500_000_000L);
            Snapshot last = snapshot();
            done.await();
            double elapsed = (System.nanoTime() - start) / 1e9;

            String report = report(seconds, elapsed, completed.get(), first, last, merge(latencies));
            System.out.println(report);
            Path file = Path.of("target", "soak-report.md");
            Files.createDirectories(file.getParent());
            Files.writeString(file, report);

            assertTrue(errors.isEmpty(), () -> "failed calls: " + errors.size() + ", first: " + errors.peek());
            assertEquals(0, fallbacks.get(), "no call needed the failsafe: nothing failed on the wire");
            long ran = served.values().stream().mapToLong(AtomicInteger::get).sum();
            assertEquals(completed.get(), ran, "operations the servers ran = calls the clients completed: none lost,"
                    + " none run twice");
            assertEquals(increments.get(), impl.increments.get(), "non-idempotent increments ran exactly once each");
            assertTrue(byProtocol.getOrDefault("grpc", new AtomicLong()).get() > 0
                    && byProtocol.getOrDefault("soap", new AtomicLong()).get() > 0, "both protocols carried calls: "
                    + byProtocol);
            assertTrue(last.heapBytes <= first.heapBytes + Math.max(HEAP_MARGIN_BYTES, first.heapBytes / 2),
                    "heap after GC grew from " + first.heapBytes + " to " + last.heapBytes);
            assertTrue(last.threads <= first.threads + THREAD_MARGIN,
                    "threads grew from " + first.threads + " to " + last.threads);
        } finally {
            for (int i = closing.size() - 1; i >= 0; i--) {
                closing.get(i).close();
            }
        }
    }

    private void record(CallRecord r) {
        byProtocol.computeIfAbsent(r.protocol(), p -> new AtomicLong()).incrementAndGet();
        if (r.fallback()) {
            fallbacks.incrementAndGet();
        }
    }

    private static final CallOptions SOAP = CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap");
    private static final double[] SMALL = {1.5, -0.0, Double.NaN, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, 7, 8, 9,
        10, 11};
    private static final double[] LARGE = new double[20_000];
    private static final io.switchboard.testing.conformance.LinkEntry LIST = Values.list(100);

    static {
        for (int i = 0; i < LARGE.length; i++) {
            LARGE[i] = i * 0.25 - 1e6;
        }
    }

    private static void call(ConformanceStub stub, Kind kind, SplittableRandom random, AtomicLong increments) {
        switch (kind) {
            case SMALL_DOUBLES -> Values.assertSameDoubles(SMALL, stub.echoDoubles(SMALL));
            case PING_SOAP -> stub.withOptions(SOAP).ping();
            case SMALL_DOUBLES_SOAP -> Values.assertSameDoubles(SMALL, stub.withOptions(SOAP).echoDoubles(SMALL));
            case INCREMENT_SOAP -> {
                stub.withOptions(SOAP).increment(1 + random.nextInt(3));
                increments.incrementAndGet();
            }
            case LIST_100 -> Values.assertSameList(LIST, stub.echoList(LIST));
            case LARGE_DOUBLES -> Values.assertSameDoubles(LARGE, stub.echoDoubles(LARGE));
        }
    }

    private record Snapshot(long heapBytes, int threads) { }

    /**
     * Heap after a full GC and the live thread count, with no call in flight: the least of three
     * readings, after a pause in which servers finish the calls their clients already have answers to.
     */
    private Snapshot snapshot() throws InterruptedException {
        quiet.writeLock().lock();
        try {
            Thread.sleep(300);
            long heap = Long.MAX_VALUE;
            for (int i = 0; i < 3; i++) {
                System.gc();
                heap = Math.min(heap, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                Thread.sleep(100);
            }
            int threads = ManagementFactory.getThreadMXBean().getThreadCount();
            return new Snapshot(heap, threads);
        } finally {
            quiet.writeLock().unlock();
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, left / 1_000_000L));
        }
    }

    private static Map<Kind, long[]> merge(List<Map<Kind, long[]>> perThread) {
        Map<Kind, long[]> all = new EnumMap<>(Kind.class);
        for (Map<Kind, long[]> m : perThread) {
            m.forEach((k, v) -> all.merge(k, v, (a, b) -> {
                long[] c = Arrays.copyOf(a, a.length + b.length);
                System.arraycopy(b, 0, c, a.length, b.length);
                return c;
            }));
        }
        all.values().forEach(Arrays::sort);
        return all;
    }

    private String report(int seconds, double elapsed, long completed, Snapshot first, Snapshot last,
                          Map<Kind, long[]> latencies) {
        StringBuilder b = new StringBuilder();
        b.append("# Soak run ").append(Instant.now()).append("\n\n");
        b.append(String.format("%d client threads on %d meta-stubs, %d s planned, %.1f s run, %d calls (%.0f/s), "
                        + "%d processors, calls by protocol %s, failsafe fallbacks %d, errors %d%n%n", CLIENT_THREADS,
                STUBS, seconds, elapsed, completed, completed / elapsed, Runtime.getRuntime().availableProcessors(),
                byProtocol, fallbacks.get(), errors.size()));
        b.append(String.format("heap after GC: %.1f MiB after warm-up, %.1f MiB at the end; threads: %d, %d%n%n",
                first.heapBytes / 1048576.0, last.heapBytes / 1048576.0, first.threads, last.threads));
        b.append("| call | count | p50 ms | p90 ms | p99 ms | max ms |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
        latencies.forEach((kind, sorted) -> b.append(String.format("| %s | %d | %.2f | %.2f | %.2f | %.2f |%n",
                kind.name().toLowerCase(), sorted.length, pct(sorted, 50), pct(sorted, 90), pct(sorted, 99),
                sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6)));
        return b.toString();
    }

    private static double pct(long[] sorted, int p) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, sorted.length * p / 100)] / 1e6;
    }

    /** A growable list of primitive longs, so latencies do not box. */
    private static final class LongList {
        private long[] values = new long[1024];
        private int size;

        void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        long[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }
}

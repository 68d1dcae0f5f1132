package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.Values;
import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.CountingSkeleton;
import io.switchboard.testing.NetworkNamespaces;
import io.switchboard.testing.TestCertificates;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * Load and soak: 64 client threads call real tcp, gRPC and SOAP servers through meta-stubs for a
 * fixed time with a mix of small, large and bulk calls (the adaptive policy choosing among the
 * three, as the default client lists them, plus calls pinned to SOAP), and every answer is checked.
 * Between the end of the warm-up and the end of the run the heap after a full GC, the JVM's thread
 * count and its open file descriptors must not grow beyond wide margins, no call may fail, and the
 * servers must have run exactly as many operations as the clients completed.
 * Then the same mix runs under {@code fixed:tcp}, {@code fixed:grpc} and {@code fixed:soap} instead
 * of adaptive: the pinned references whose calls/s the report puts beside adaptive's, with each
 * phase's calls per protocol. Latencies and calls/s go to standard output and {@code target/soak-report.md},
 * never to asserts.
 *
 * <p>CI runs it for 20 s, in a test JVM whose JIT stops at its first tier (the root pom's
 * {@code switchboard.test.jit}), so its calls/s are below a tuned JVM's; a long run, with the full
 * JIT: {@code mvn -B -ntp -pl metastub -am verify -Dtest=SoakTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dswitchboard.soak.seconds=1800 -Dswitchboard.test.jit=}. With {@code -Dswitchboard.soak.tls=true} every
 * server requires a client certificate and every call goes over TLS ({@code tcps}, {@code grpcs},
 * {@code https}), with one handshake per connection as a client's pools open them. With
 * {@code -Dswitchboard.soak.hosts=true} (root and {@code ip}: {@link NetworkNamespaces}) the servers run on
 * one host and the clients on another, each a JVM of its own, and every call crosses TCP between them
 * (under TLS too, with both properties).
 */
class SoakTest {
    private static final int CLIENT_THREADS = 64;
    private static final int STUBS = 16;
    /** The policy soaked (the default's); the other phases pin the policy's calls to one protocol. */
    private static final String SOAK_POLICY = "adaptive";
    private static final long HEAP_MARGIN_BYTES = 64L << 20;
    private static final int THREAD_MARGIN = 16;
    /**
     * Open file descriptors (sockets, mostly) may grow this much from the warm-up's end to the end:
     * two per caller, as connection pools that fill late under load may; a connection leaked every
     * hundred calls passes it within seconds.
     */
    private static final int DESCRIPTOR_MARGIN = 2 * CLIENT_THREADS;
    /**
     * Pools that may hold more than a thread per caller without leaking. The SOAP server's (Jetty's,
     * {@code soap-#}): the thread that answered on a connection waits up to 5 ms there for the next
     * request (SoapEndPoint), while its caller's next call may take another connection and thread;
     * so two threads per caller, and the pool keeps idle threads for its idle timeout (a minute), so
     * its count is the highest it reached.
     */
    private static final Map<String, Integer> THREADS_PER_CALLER = Map.of("soap-#", 2);

    /** One kind of call in the mix, with its share of the calls in percent. */
    enum Kind {
        SMALL_DOUBLES(44, false), PING_SOAP(15, true), SMALL_DOUBLES_SOAP(10, true), INCREMENT_SOAP(5, true),
        LIST_100(15, false), LARGE_DOUBLES(10, false),
        /** Over the policies' bound for tcp (2 MiB): the policy's bulk calls, over gRPC. */
        BULK_DOUBLES(1, false);

        final int percent;
        /** Pinned to SOAP on the call; the others go where the stub's policy sends them. */
        final boolean pinnedToSoap;

        Kind(int percent, boolean pinnedToSoap) {
            this.percent = percent;
            this.pinnedToSoap = pinnedToSoap;
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
    private volatile Map<String, AtomicLong> byProtocol = new ConcurrentHashMap<>();
    private final AtomicLong increments = new AtomicLong();
    private final AtomicLong fallbacks = new AtomicLong();
    private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    /**
     * Calls hold it shared; a measurement holds it alone, so no call is in flight while the heap is
     * weighed. Not fair: a fair lock queues every reader behind any thread already queued, so after
     * the first reading the 64 callers on 2 busy cores never drained the queue and most of them sat
     * in it for the rest of the soak (a JFR of the run: about 56 of 64 parked here throughout),
     * which cut the soak's calls/s to half its references'. Unfair, a reader waits only for a
     * writer at the head of the queue.
     */
    private final ReentrantReadWriteLock quiet = new ReentrantReadWriteLock(false);
    /** Mutual TLS on every server and client ({@code switchboard.soak.tls}). */
    private final boolean tls = Boolean.getBoolean("switchboard.soak.tls");

    @Test
    void sixtyFourClientsOnMixedCallsStayCorrectWithoutGrowth() throws Exception {
        if (Boolean.getBoolean("switchboard.soak.hosts")) {
            soakAcrossHosts();
            return;
        }
        List<ProtocolServer> servers = new ArrayList<>();
        try {
            Soaked soaked = soak(serve(ServerSettings.defaults(), tls, impl, served, servers));
            assertEquals(soaked.completed(), ran(served),
                    "operations the servers ran = calls the clients completed: none lost, none run twice");
            assertEquals(soaked.increments(), impl.increments.get(), "non-idempotent increments ran exactly once each");
            assertEquals(0, shed(servers), "with each phase's stubs closed with it, no server shed a connection of the one client address");
        } finally {
            for (int i = servers.size() - 1; i >= 0; i--) {
                servers.get(i).close();
            }
        }
    }

    /**
     * The conformance component on a server of each of {@link #PROTOCOLS} (each added to
     * {@code servers} as it starts, for the caller to close), with mutual TLS if {@code tls}, every
     * operation counted by protocol in {@code served}; returns their endpoints.
     */
    static List<Endpoint> serve(ServerSettings settings, boolean tls, ConformanceImpl impl,
                                Map<String, AtomicInteger> served, List<ProtocolServer> servers) throws IOException {
        Skeleton skeleton = ConformanceComponent.skeleton(impl);
        ServerSettings chosen = tls ? settings.withTls(TestCertificates.get().serverMutual()) : settings;
        List<Endpoint> endpoints = new ArrayList<>();
        for (String protocol : PROTOCOLS) {
            ProtocolServer server = Protocols.get(protocol).newServer(chosen);
            servers.add(server);
            endpoints.add(server.export(new CountingSkeleton(skeleton, protocol, served, p -> { })));
        }
        return endpoints;
    }

    /** The operations the servers of {@link #serve} ran, over every protocol. */
    static long ran(Map<String, AtomicInteger> served) {
        return served.values().stream().mapToLong(AtomicInteger::get).sum();
    }

    /** Connections the servers displaced or refused at their limits ({@link ProtocolServer#shedConnections}). */
    static long shed(List<ProtocolServer> servers) {
        return servers.stream().mapToLong(ProtocolServer::shedConnections).sum();
    }

    /** Heap used after a full GC: the least of three readings, 100 ms apart. */
    static long heapAfterGc() throws InterruptedException {
        long heap = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            heap = Math.min(heap, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
            Thread.sleep(100);
        }
        return heap;
    }

    /** What the clients of a soak completed, for the servers' counts to be held against. */
    record Soaked(long completed, long increments) { }

    /**
     * The soak's phases against servers at {@code endpoints}, with every assertion on the clients'
     * side (answers, protocols chosen, fallbacks, heap, threads, descriptors); the report goes to
     * standard output and {@code target/soak-report.md}.
     */
    Soaked soak(List<Endpoint> endpoints) throws Exception {
        int seconds = soakSeconds();
        int referenceSeconds = referenceSeconds(seconds);
        List<AutoCloseable> closing = new ArrayList<>();
        try {
            // the soak under the default policy, with the same mix with the policy's calls pinned to each
            // protocol before and after it: the references adaptive's calls/s is judged against, each the
            // mean of its two runs, so that neither the JIT's warm-up nor a change of load favours a side
            List<Phase> phases = new ArrayList<>();
            for (String policy : List.of("fixed:tcp", "fixed:grpc", "fixed:soap", SOAK_POLICY, "fixed:soap", "fixed:grpc",
                    "fixed:tcp")) {
                List<ConformanceStub> stubs = new ArrayList<>();
                int phaseChannels = closing.size();
                for (int i = 0; i < STUBS; i++) {
                    MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).protocols(PROTOCOLS)
                            .endpoints(endpoints).policy(Policies.byName(policy)).listener(this::record)
                            .settings(tls ? ClientSettings.defaults().withTls(TestCertificates.get().client())
                                    : ClientSettings.defaults()).build();
                    closing.add(channel::close);
                    stubs.add(ConformanceComponent.stub(channel));
                }
                byProtocol = new ConcurrentHashMap<>();
                boolean soak = policy.equals(SOAK_POLICY);
                phases.add(drive(policy, stubs, soak ? seconds : referenceSeconds, soak));
                // closed with their phase, as a client done with its stubs would: kept to the end, every
                // phase's connections from this one address would pile up on the servers' per-peer limits
                closeFrom(closing, phaseChannels);
                if (!errors.isEmpty()) {
                    break;
                }
            }

            assertTrue(errors.isEmpty(), () -> "failed calls: " + errors.size() + ", first: " + errors.peek());
            if (tls) {
                for (Endpoint e : endpoints) {
                    assertTrue(e.address().matches("(tcps|grpcs|https)://.*"), "served over TLS only: " + e.address());
                }
            }
            String report = report(phases);
            System.out.println(report);
            Path file = Path.of("target", "soak-report.md");
            Files.createDirectories(file.getParent());
            Files.writeString(file, report);

            assertEquals(0, fallbacks.get(), "no call needed the failsafe: nothing failed on the wire");
            Phase soak = soakPhase(phases);
            for (String protocol : PROTOCOLS) {
                assertTrue(soak.byProtocol().getOrDefault(protocol, 0L) > 0, () -> protocol
                        + " carried calls in the soak (tcp the small, gRPC the bulk, SOAP the pinned): " + soak.byProtocol());
            }
            for (Phase p : phases) {
                if (p.policy().startsWith("fixed:")) {
                    String pinned = p.policy().substring("fixed:".length());
                    Map<String, Long> expected = new java.util.TreeMap<>(Map.of("soap", p.soapPinned()));
                    expected.merge(pinned, p.completed() - p.soapPinned(), Long::sum);
                    expected.values().removeIf(n -> n == 0);
                    assertEquals(expected, p.byProtocol(), p.policy() + " sent every call not pinned to SOAP over " + pinned);
                }
            }
            assertTrue(soak.last().heapBytes <= soak.first().heapBytes + Math.max(HEAP_MARGIN_BYTES, soak.first().heapBytes / 2),
                    "heap after GC grew from " + soak.first().heapBytes + " to " + soak.last().heapBytes);
            assertTrue(soak.last().descriptors <= soak.first().descriptors + DESCRIPTOR_MARGIN, "open file descriptors grew from "
                    + soak.first().descriptors + " to " + soak.last().descriptors + " (" + soak.middle().descriptors + " halfway)");
            String leaked = leakedThreads(soak.middle().pools(), soak.last().pools(), CLIENT_THREADS);
            assertTrue(leaked.isEmpty(), "threads grew in the second half (" + soak.middle().threads + " to "
                    + soak.last().threads + ", " + soak.first().threads + " after the warm-up): " + leaked);
            return new Soaked(phases.stream().mapToLong(Phase::completed).sum(), increments.get());
        } finally {
            closeFrom(closing, 0);
        }
    }

    /** Closes the resources from index {@code from} on, the last opened first, and forgets them. */
    private static void closeFrom(List<AutoCloseable> closing, int from) throws Exception {
        for (int i = closing.size() - 1; i >= from; i--) {
            closing.remove(i).close();
        }
    }

    private static int soakSeconds() {
        return Integer.getInteger("switchboard.soak.seconds", 20);
    }

    /**
     * References of half the soak's time in a long run; in CI's short one they are asserted alike but
     * their calls/s only feed the report, so 1 s each keep six of them from costing more than the soak
     * (a fixed:soap phase runs seconds longer, its last bulk calls over SOAP).
     */
    private static int referenceSeconds(int soakSeconds) {
        return Integer.getInteger("switchboard.soak.reference.seconds", soakSeconds >= 60 ? soakSeconds / 2 : 1);
    }

    /**
     * The soak with servers and clients on two hosts: the servers in one network namespace, the
     * clients in another ({@link SoakServerMain}, {@link SoakClientMain}), each a JVM of its own,
     * every call over TCP between the two. The client's JVM is weighed; the servers' counts of the
     * operations they ran are held against what the clients completed.
     */
    private void soakAcrossHosts() throws Exception {
        String why = NetworkNamespaces.unavailableReason();
        assertNull(why, () -> "switchboard.soak.hosts needs network namespaces: " + why);
        int seconds = soakSeconds();
        int referenceSeconds = referenceSeconds(seconds);
        Path dir = Files.createDirectories(Path.of("target", "soak-hosts"));
        List<String> jvm = new ArrayList<>(List.of("-Xmx1g",
                // the two hosts share one file system and host name: without these a client would take
                // the servers' Unix sockets, and no call would cross the link between the hosts
                "-Dswitchboard.tcp.unix=false", "-Dswitchboard.grpc.unix=false",
                "-Dswitchboard.soak.seconds=" + seconds, "-Dswitchboard.soak.reference.seconds=" + referenceSeconds,
                "-Dswitchboard.soak.tls=" + tls));
        // the children compile and collect as this JVM does (switchboard.test.jit, switchboard.test.gc), the full JIT
        // when this JVM has it
        List<String> mine = ManagementFactory.getRuntimeMXBean().getInputArguments();
        jvm.add(mine.stream().filter(o -> o.startsWith("-XX:TieredStopAtLevel=")).reduce((a, b) -> b)
                .orElse("-XX:TieredStopAtLevel=4"));
        mine.stream().filter(o -> o.matches("-XX:\\+Use\\w+GC")).forEach(jvm::add);
        try (NetworkNamespaces net = NetworkNamespaces.create("server", "client");
             ChildJvm server = ChildJvm.start(net.launcher("server"), jvm, dir.resolve("server.err"), SoakServerMain.class,
                     net.address("server"), tls ? "tls" : "plain")) {
            // under TLS the clients check that the server's certificate names the address they call
            assertEquals(TestCertificates.NAMESPACE_SERVER_ADDRESS, net.address("server"), "the address the certificate names");
            String[] endpoints = server.await("endpoints").split(" ");
            for (String e : endpoints) {
                assertTrue(e.contains("://" + net.address("server") + ":"), "served on the server host's address: " + e);
            }
            String[] before = server.ask("weigh", Duration.ofMinutes(1)).split(" ");
            try (ChildJvm client = ChildJvm.start(net.launcher("client"), jvm, dir.resolve("client.err"),
                    SoakClientMain.class, endpoints)) {
                String output = client.outputUntilExit(Duration.ofSeconds(seconds + 6L * referenceSeconds + 300));
                System.out.print(output);
                // reported, not judged: before the first call the servers hold none of the state a run
                // builds up to its bounds (pools, the repeat guard's calls), so growth says little alone
                String[] after = server.ask("weigh", Duration.ofMinutes(1)).split(" ");
                System.out.printf("Servers' JVM, before the first call and after the run: heap after GC %.1f -> %.1f MiB,"
                        + " threads %s -> %s, open file descriptors %s -> %s%n", Long.parseLong(before[0]) / 1048576.0,
                        Long.parseLong(after[0]) / 1048576.0, before[1], after[1], before[2], after[2]);
                String[] soaked = output.lines().filter(l -> l.startsWith("soaked ")).reduce((a, b) -> b)
                        .orElseThrow(() -> new AssertionError("the clients printed no 'soaked' line")).split(" ");
                String[] counts = server.ask("counts", Duration.ofMinutes(1)).split(" ");
                assertEquals(Long.parseLong(soaked[1]), Long.parseLong(counts[0]),
                        "operations the servers ran = calls the clients completed: none lost, none run twice");
                assertEquals(Long.parseLong(soaked[2]), Long.parseLong(counts[1]),
                        "non-idempotent increments ran exactly once each");
                // all the clients' connections come from one address: with each phase's stubs closed with
                // it, no server reaches its per-peer limit
                assertEquals(0, Long.parseLong(counts[2]), "no server shed a connection of the one client address");
            }
        }
    }

    /**
     * One phase of the run under one stub policy.
     *
     * @param windowCalls calls completed after the warm-up (the first third), over {@code windowSeconds}
     * @param soapPinned  calls of the kinds pinned to SOAP whatever the policy
     */
    private record Phase(String policy, double seconds, long completed, long windowCalls, double windowSeconds,
                         long soapPinned, Map<String, Long> byProtocol, Snapshot first, Snapshot middle, Snapshot last,
                         Map<Kind, long[]> latencies) {
        double callsPerSecond() {
            return windowCalls / windowSeconds;
        }
    }

    /**
     * 64 client threads on the stubs for {@code seconds}. With {@code weigh}, the heap and threads are
     * weighed after the warm-up and near the end, and calls/s count the calls between the two readings;
     * else the calls between the warm-up's end and the end.
     */
    private Phase drive(String policy, List<ConformanceStub> stubs, int seconds, boolean weigh) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        long warmUpEnd = start + seconds * 1_000_000_000L / 3;   // the first third
        // the calls/s window, [open, close]: set around the readings when weighing
        AtomicLong windowOpen = new AtomicLong(weigh ? Long.MAX_VALUE : warmUpEnd);
        AtomicLong windowClose = new AtomicLong(end);
        List<Map<Kind, long[]>> latencies = new ArrayList<>();
        AtomicLong completed = new AtomicLong();
        AtomicLong windowCalls = new AtomicLong();
        AtomicLong soapPinned = new AtomicLong();
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
                            if (t0 >= windowOpen.get() && t0 + took <= windowClose.get()) {
                                windowCalls.incrementAndGet();
                            }
                            completed.incrementAndGet();
                            if (kind.pinnedToSoap) {
                                soapPinned.incrementAndGet();
                            }
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
        Snapshot first = weigh ? snapshot() : null;
        if (weigh) {
            windowOpen.set(System.nanoTime());
        }
        Snapshot middle = null;
        long paused = 0;
        if (weigh) {
            sleepUntil(warmUpEnd + (end - 500_000_000L - warmUpEnd) / 2);
            long t0 = System.nanoTime();
            middle = snapshot();
            paused = System.nanoTime() - t0;   // no call ran meanwhile: not part of the calls/s window
        }
        sleepUntil(end - 500_000_000L);
        if (weigh) {
            windowClose.set(System.nanoTime());   // the readings hold every call back: outside the window
        }
        Snapshot last = weigh ? snapshot() : null;
        done.await();
        double windowSeconds = (windowClose.get() - windowOpen.get() - paused) / 1e9;
        Map<String, Long> protocols = new java.util.TreeMap<>();
        byProtocol.forEach((k, v) -> protocols.put(k, v.get()));
        return new Phase(policy, (System.nanoTime() - start) / 1e9, completed.get(), windowCalls.get(), windowSeconds,
                soapPinned.get(), protocols, first, middle, last, merge(latencies));
    }

    private void record(CallRecord r) {
        byProtocol.computeIfAbsent(r.protocol(), p -> new AtomicLong()).incrementAndGet();
        if (r.fallback()) {
            fallbacks.incrementAndGet();
        }
    }

    /** The default client's protocols, in its order. */
    static final List<String> PROTOCOLS = List.of("tcp", "grpc", "soap");
    private static final CallOptions SOAP = CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap");
    private static final double[] SMALL = {1.5, -0.0, Double.NaN, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, 7, 8, 9,
        10, 11};
    private static final double[] LARGE = new double[20_000];
    /** 2.4 MB, past the policies' 2 MiB bound for tcp. */
    private static final double[] BULK = new double[300_000];
    private static final io.switchboard.testing.conformance.LinkEntry LIST = Values.list(100);

    static {
        for (int i = 0; i < LARGE.length; i++) {
            LARGE[i] = i * 0.25 - 1e6;
        }
        for (int i = 0; i < BULK.length; i++) {
            BULK[i] = i % 7 == 0 ? Double.NaN : i * -0.125;
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
            case BULK_DOUBLES -> Values.assertSameDoubles(BULK, stub.echoDoubles(BULK));
        }
    }

    /** Heap after GC, live threads, live threads by pool ({@link #pool}), and open file descriptors (-1: not known). */
    private record Snapshot(long heapBytes, int threads, Map<String, Integer> pools, long descriptors) { }

    static long openDescriptors() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix
                ? unix.getOpenFileDescriptorCount() : -1;
    }

    /** A thread's pool: its name with the numbers in it left out ({@code grpc-call-12} is {@code grpc-call-#}). */
    static String pool(String threadName) {
        return threadName.replaceAll("[0-9]+", "#");
    }

    /**
     * The threads of the second half of the soak that look leaked, or "" if none. A pool may grow
     * until it holds a thread per concurrent caller ({@code concurrency}, and the margin): under
     * load it may reach that late in the run, and a pool of a thread per call in progress stays
     * within it. What grows beyond it (a pool past the callers, a new kind of thread by the dozen)
     * is held to the margin in all: a leak keeps growing.
     */
    static String leakedThreads(Map<String, Integer> middle, Map<String, Integer> last, int concurrency) {
        int beyond = 0;
        StringBuilder which = new StringBuilder();
        for (Map.Entry<String, Integer> e : last.entrySet()) {
            int before = middle.getOrDefault(e.getKey(), 0);
            int grown = e.getValue() - before;
            if (grown <= 0) {
                continue;
            }
            int fill = THREADS_PER_CALLER.getOrDefault(e.getKey(), 1) * concurrency + THREAD_MARGIN;
            int past = e.getValue() - Math.max(before, fill);
            if (past > 0) {
                beyond += past;
            }
            which.append(which.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(before).append(" -> ")
                    .append(e.getValue());
        }
        return beyond > THREAD_MARGIN ? which.toString() : "";
    }

    @Test
    void poolsMayFillToTheCallersButThreadsBeyondThemAreALeak() {
        // a worker pool reaching the 64 callers late in the run, as on a loaded machine: not a leak
        assertEquals("", leakedThreads(Map.of("grpc-call-#", 30, "main", 1), Map.of("grpc-call-#", 64, "main", 1), 64));
        // a pool growing past its callers, or a new kind of thread by the dozen: a leak
        assertEquals("grpc-call-# 70 -> 100", leakedThreads(Map.of("grpc-call-#", 70), Map.of("grpc-call-#", 100), 64));
        assertEquals("reconnect-# 0 -> 120", leakedThreads(Map.of(), Map.of("reconnect-#", 120), 64));
        assertEquals("", leakedThreads(Map.of("timer-#", 2), Map.of("timer-#", 5), 64), "a few threads are the margin");
        // the SOAP server's pool, two threads per caller at most: 85 -> 104 with 64 callers, seen on a fresh clone
        assertEquals("", leakedThreads(Map.of("soap-#", 85), Map.of("soap-#", 104), 64));
        assertEquals("soap-# 85 -> 170", leakedThreads(Map.of("soap-#", 85), Map.of("soap-#", 170), 64));
    }

    /**
     * Heap after a full GC and the live thread count, with no call in flight: the least of three
     * readings, after a pause in which servers finish the calls their clients already have answers to.
     */
    private Snapshot snapshot() throws InterruptedException {
        quiet.writeLock().lock();
        try {
            Thread.sleep(300);
            long heap = heapAfterGc();
            int threads = ManagementFactory.getThreadMXBean().getThreadCount();
            Map<String, Integer> pools = new java.util.TreeMap<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                pools.merge(pool(t.getName()), 1, Integer::sum);
            }
            return new Snapshot(heap, threads, pools, openDescriptors());
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

    private String report(List<Phase> phases) {
        StringBuilder b = new StringBuilder();
        b.append("# Soak run ").append(Instant.now()).append(tls ? ", mutual TLS on every connection" : "").append("\n\n");
        b.append(String.format("%d client threads on %d meta-stubs per phase, %d processors; the mix: %s. Calls/s count the "
                        + "calls made after each phase's warm-up (its first third; in the soak, between the first and last "
                        + "heap readings, less the middle one's pause); "
                        + "each phase's policy chooses the protocol of the calls not pinned to SOAP.%n%n", CLIENT_THREADS,
                STUBS, Runtime.getRuntime().availableProcessors(), Arrays.stream(Kind.values())
                        .map(k -> k.name().toLowerCase() + " " + k.percent + "%").collect(java.util.stream.Collectors.joining(", "))));
        b.append("| policy | s run | calls | calls/s after warm-up | over tcp | over gRPC | over SOAP (pinned kinds) "
                + "| policy's calls over tcp / gRPC / SOAP |\n");
        b.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (Phase p : phases) {
            long tcp = p.byProtocol().getOrDefault("tcp", 0L);
            long grpc = p.byProtocol().getOrDefault("grpc", 0L);
            long soap = p.byProtocol().getOrDefault("soap", 0L);
            double chosen = Math.max(1, p.completed() - p.soapPinned()) / 100.0;
            b.append(String.format("| %s | %.1f | %d | %.0f | %d | %d | %d (%d) | %.1f%% / %.1f%% / %.1f%% |%n", p.policy(),
                    p.seconds(), p.completed(), p.callsPerSecond(), tcp, grpc, soap, p.soapPinned(), tcp / chosen,
                    grpc / chosen, (soap - p.soapPinned()) / chosen));
        }
        Phase soak = soakPhase(phases);
        Map<String, Double> references = phases.stream().filter(p -> p != soak).collect(java.util.stream.Collectors.groupingBy(
                Phase::policy, java.util.TreeMap::new, java.util.stream.Collectors.averagingDouble(Phase::callsPerSecond)));
        double best = references.values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
        b.append(String.format("%nThe references, calls/s (mean of the runs before and after the soak): %s. adaptive ÷ the best "
                        + "pinned reference, calls/s: %.2f. Failsafe fallbacks %d, errors %d.%n%n",
                references.entrySet().stream().map(e -> String.format("%s %.0f", e.getKey(), e.getValue()))
                        .collect(java.util.stream.Collectors.joining(", ")),
                best == 0 ? 0 : soak.callsPerSecond() / best, fallbacks.get(), errors.size()));
        b.append(String.format("Soak (%s): heap after GC %.1f MiB after warm-up, %.1f MiB halfway, %.1f MiB at the end; "
                        + "threads: %d, %d, %d; open file descriptors: %d, %d, %d%n%n", soak.policy(),
                soak.first().heapBytes / 1048576.0,
                soak.middle().heapBytes / 1048576.0, soak.last().heapBytes / 1048576.0, soak.first().threads,
                soak.middle().threads, soak.last().threads, soak.first().descriptors, soak.middle().descriptors,
                soak.last().descriptors));
        for (Phase p : phases) {
            b.append("### ").append(p.policy()).append("\n\n");
            b.append("| call | count | p50 ms | p90 ms | p99 ms | max ms |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
            p.latencies().forEach((kind, sorted) -> b.append(String.format("| %s | %d | %.2f | %.2f | %.2f | %.2f |%n",
                    kind.name().toLowerCase(), sorted.length, pct(sorted, 50), pct(sorted, 90), pct(sorted, 99),
                    sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6)));
            b.append('\n');
        }
        return b.toString();
    }

    private static Phase soakPhase(List<Phase> phases) {
        return phases.stream().filter(p -> p.policy().equals(SOAK_POLICY)).findFirst().orElseThrow();
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

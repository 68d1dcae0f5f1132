package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DeadlineExceededException;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A call that goes client → A → B → C, each hop over another protocol: C sees a deadline no later
 * than the caller's; when it passes, or when the caller cancels, every hop is told to stop (by its
 * own deadline, or by its upstream's cancel; 50 ms is the target, the bound below allows for a
 * starved machine) and the caller hears it (a {@link DeadlineExceededException}, a cancelled future). SOAP
 * hops included: SOAP carries the deadline in its {@code sb:deadline} header and a cancel as a
 * message naming the call id.
 *
 * <p>What is timed, and against what: each hop notes when it was first told to stop and by which
 * signal (its call's cancel listener, its operation noticing the interrupt, or its call to the next
 * hop ending at the inherited deadline), measured from the event the hop acts on.
 * <ul>
 * <li>After a deadline, from the deadline the hop itself received: each hop's server arms its own
 * timer from it, so the stop waits for no message from upstream (an upstream cancel that arrives
 * first stops it earlier). That is one timer thread waking: 0.1-9 ms late in most runs, but a
 * fresh-clone run with one core kept busy and other builds beside it (load about 20) saw a hop
 * 50.9 ms late, so a thread waiting for a CPU can take the whole 50 ms by itself. The test asserts
 * the mechanism (each hop stopped by its own deadline or its upstream's cancel, never by a read
 * timeout) and holds the time to {@link #ACROSS_THREADS_WITHIN_MILLIS}, printing each hop's figure.
 * <li>After a cancel, from the moment its upstream was told (the caller's cancel for A, A's signal
 * for B, B's for C): one hop of the cancel message, which wakes at least one thread on the far
 * side. On tcp that is all: the upstream's listener writes the cancel frame itself and the
 * server's event loop that reads it runs the call's listeners. gRPC adds the client's event loop;
 * SOAP posts its cancel message from a thread of its own to a server thread. On 2 CPUs with
 * 16-34 threads runnable each of those waits for a CPU: tcp hops were seen to take 61 and 85 ms
 * while the cancel frame still waited for the client's executor to start a thread (until
 * 2026-11-27, commit 503c133), and gRPC and SOAP hops 75-100 ms at a load of 7; no bound that
 * tight holds there, so this one and the operations' returns (thread wake-ups again) are held to
 * {@link #ACROSS_THREADS_WITHIN_MILLIS}, and every hop's figure is printed.
 * </ul>
 */
class CallAcrossHopsTest {
    /**
     * How late a hop may be told to stop after its own deadline, or by its upstream's cancel after
     * the upstream was told, and every hop's operation returned and the caller answered. The
     * target is 50 ms; 450 ms of margin absorb a starved scheduler (on 2 CPUs at a load average
     * of 16-35 an operation was seen to return 68-173 ms after the deadline, and gRPC and SOAP hops
     * of a cancel 75-100 ms at a load of 7). A hop that is not cancelled runs for ever and fails
     * {@code awaitStopped}; one stopped only by a read timeout takes seconds and fails this bound.
     */
    private static final long ACROSS_THREADS_WITHIN_MILLIS = 50 + 450;

    /** A server per hop: a component's interface is exported once per server. */
    private static final List<ComponentServer> servers = new ArrayList<>();
    private static final Hop A = new Hop("A");
    private static final Hop B = new Hop("B");
    private static final Hop C = new Hop("C");
    private static ComponentEntry a;
    private static ComponentEntry b;
    private static ComponentEntry c;
    private static final List<MetaStub> stubs = new ArrayList<>();

    /** What told a hop to stop. */
    enum Signal {
        /** Its call was cancelled once its own deadline had passed: its server's timer (or a cancel that came after it). */
        OWN_DEADLINE("its own deadline"),
        /** Its call was cancelled before its own deadline: the upstream's cancel came first. */
        UPSTREAM_CANCEL("its upstream's cancel"),
        /** Its call to the next hop, which inherited its deadline, ended with {@code DeadlineExceededException}. */
        NEXT_HOP_DEADLINE("its call to the next hop reaching the deadline it inherited");

        final String what;

        Signal(String what) {
            this.what = what;
        }
    }

    /**
     * One hop: records the deadline it saw, when and by what its call was told to stop, and when its
     * operation returned; C waits for its call to be cancelled.
     */
    static final class Hop extends ConformanceImpl {
        final String name;
        volatile ConformanceStub next;
        volatile Long deadlineSeen;
        volatile long startedAt;
        /** When the hop was first told to stop, and by what (null: not yet). */
        volatile long signalAt;
        volatile Signal signal;
        volatile long stoppedAt;
        volatile CountDownLatch started = new CountDownLatch(1);
        volatile CountDownLatch stopped = new CountDownLatch(1);

        Hop(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }

        /**
         * Notes the first signal only: its call to the next hop reaching its deadline, or else its
         * own deadline if that has passed, or else its upstream's cancel.
         */
        synchronized void told(boolean nextHopDeadline) {
            if (signal == null) {
                long now = System.nanoTime();
                signalAt = now;
                signal = nextHopDeadline ? Signal.NEXT_HOP_DEADLINE
                        : deadlineSeen != null && now - deadlineSeen >= 0 ? Signal.OWN_DEADLINE : Signal.UPSTREAM_CANCEL;
            }
        }

        void reset() {
            deadlineSeen = null;
            signalAt = 0;
            signal = null;
            started = new CountDownLatch(1);
            stopped = new CountDownLatch(1);
        }

        @Override
        public long spin(double[] values, int maxRounds) {
            ServerCallContext call = ServerCallContext.current();
            deadlineSeen = call.deadlineNanos();
            startedAt = System.nanoTime();
            // registered before the call to the next hop, so it runs before that call's own cancel
            ServerCallContext.Scope told = call.addCancelListener(() -> told(false));
            started.countDown();
            try {
                if (next != null) {
                    try {
                        return next.spin(values, maxRounds);
                    } catch (DeadlineExceededException e) {
                        told(true);
                        throw e;
                    }
                }
                CountDownLatch cancelled = new CountDownLatch(1);
                try (ServerCallContext.Scope s = ServerCallContext.onCancel(cancelled::countDown)) {
                    cancelled.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 0;
            } finally {
                told.close();
                // a cancel interrupts the operation's thread before it runs the listeners: the
                // operation may notice first, and that is when it was told
                told(false);
                stoppedAt = System.nanoTime();
                stopped.countDown();
            }
        }
    }

    @BeforeAll
    static void serve() {
        a = serve("A", A);
        b = serve("B", B);
        c = serve("C", C);
    }

    @AfterAll
    static void stop() {
        stubs.forEach(MetaStub::close);
        servers.forEach(ComponentServer::close);
    }

    private static ComponentEntry serve(String name, Hop hop) {
        ComponentServer server = ComponentServer.builder().build();
        servers.add(server);
        return server.export(name, ConformanceComponent.skeleton(hop));
    }

    /** The caller's deadline as its meta-stub fixed it, seen by the caller's own interceptor. */
    private static volatile Long callerDeadline;

    private static ConformanceStub stub(ComponentEntry entry, String protocol) {
        MetaStub channel = MetaStub.builder(ConformanceComponent.DESCRIPTOR).endpoints(entry.endpoints())
                .serverRecognisesCallIds(true).interceptor((call, next) -> {
                    if (ServerCallContext.current() == null && call.options().deadlineNanoTime() != null) {
                        callerDeadline = call.options().deadlineNanoTime();
                    }
                    return next.proceed(call);
                }).build();
        stubs.add(channel);
        return ConformanceComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
    }

    /** Wires A → B over {@code toB} and B → C over {@code toC}; returns the caller's stub to A over {@code toA}. */
    private static ConformanceStub route(String toA, String toB, String toC) {
        for (Hop h : List.of(A, B, C)) {
            h.reset();
        }
        A.next = stub(b, toB);
        B.next = stub(c, toC);
        ConformanceStub first = stub(a, toA);
        for (ConformanceStub hop : List.of(first, A.next, B.next)) {
            hop.ping();   // connections up and classes loaded: the deadline is spent on the call itself
        }
        return first;
    }

    private static void awaitStopped() throws InterruptedException {
        for (Hop h : List.of(A, B, C)) {
            if (!h.stopped.await(10, TimeUnit.SECONDS)) {
                StringBuilder threads = new StringBuilder();
                Thread.getAllStackTraces().forEach((t, stack) -> {
                    if (java.util.Arrays.stream(stack).anyMatch(f -> f.getClassName().contains("CallAcrossHops"))) {
                        threads.append(t).append('\n');
                        for (StackTraceElement f : stack) {
                            threads.append("  ").append(f).append('\n');
                        }
                    }
                });
                throw new AssertionError(h + " never stopped (started: " + (h.started.getCount() == 0) + ")\n" + threads);
            }
        }
    }

    private static long millisAfter(long at, long from) {
        return TimeUnit.NANOSECONDS.toMillis(at - from);
    }

    private static long micros(long nanos) {
        return TimeUnit.NANOSECONDS.toMicros(nanos);
    }

    @ParameterizedTest(name = "client -{0}-> A -{1}-> B -{2}-> C")
    @CsvSource({"soap, grpc, tcp", "grpc, tcp, soap", "tcp, soap, local", "local, soap, grpc"})
    void theDeadlineTravelsEveryHopAndStopsThemAllWhenItPasses(String toA, String toB, String toC) throws Exception {
        ConformanceStub toAStub = route(toA, toB, toC);
        callerDeadline = null;
        long callStart = System.nanoTime();
        DeadlineExceededException e = assertThrows(DeadlineExceededException.class, () -> toAStub
                .withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, toA).withDeadlineAfter(Duration.ofMillis(400)))
                .spin(new double[] {1}, Integer.MAX_VALUE));
        long answered = System.nanoTime();
        awaitStopped();
        long deadline = callerDeadline;
        String seen = "A, B, C's deadlines after the caller's: " + millisAfter(A.deadlineSeen, deadline) + ", "
                + millisAfter(B.deadlineSeen, deadline) + ", " + millisAfter(C.deadlineSeen, deadline) + " ms";
        // the time left travels, as grpc-timeout does: each hop counts it from the request's
        // arrival, so C's deadline is the caller's, later by no more than the request's way to C
        assertTrue(C.deadlineSeen - deadline <= C.startedAt - callStart, seen + "; C started "
                + millisAfter(C.startedAt, callStart) + " ms after the call");
        String route = toA + "," + toB + "," + toC + ": ";
        for (Hop h : List.of(A, B, C)) {
            // told to stop: at its own deadline, or before it by its upstream's cancel (the 50 ms target is printed)
            assertTrue(h.signal != null, h + " was never told to stop");
            double late = micros(h.signalAt - h.deadlineSeen) / 1000.0;
            String told = h + " told to stop " + String.format(java.util.Locale.ROOT, "%.1f", late)
                    + " ms after its own deadline, by " + h.signal.what;
            System.out.println(route + told + "; its operation returned " + millisAfter(h.stoppedAt, deadline)
                    + " ms after the caller's deadline");
            assertTrue(late <= ACROSS_THREADS_WITHIN_MILLIS, told + "; " + seen);
            assertTrue(millisAfter(h.stoppedAt, deadline) <= ACROSS_THREADS_WITHIN_MILLIS, h + "'s operation returned "
                    + millisAfter(h.stoppedAt, deadline) + " ms after the deadline; " + seen);
        }
        assertTrue(millisAfter(answered, deadline) <= ACROSS_THREADS_WITHIN_MILLIS,
                "the caller heard " + millisAfter(answered, deadline) + " ms after the deadline: " + e);
    }

    @ParameterizedTest(name = "client -{0}-> A -{1}-> B -{2}-> C")
    @CsvSource({"soap, grpc, tcp", "grpc, tcp, soap", "tcp, soap, local", "local, soap, grpc", "soap, local, soap"})
    void aCancelReachesEveryHop(String toA, String toB, String toC) throws Exception {
        ConformanceStub toAStub = route(toA, toB, toC);
        CompletableFuture<Long> call = toAStub.spinAsync(new double[] {1}, Integer.MAX_VALUE);
        assertTrue(C.started.await(10, TimeUnit.SECONDS), "the call reached C");
        long cancelledAt = System.nanoTime();
        assertTrue(call.cancel(true));
        awaitStopped();
        String route = toA + "," + toB + "," + toC + ": ";
        long upstreamTold = cancelledAt;
        for (Hop h : List.of(A, B, C)) {
            // no deadline here: the only signal is the upstream's cancel, one hop of its message
            assertEquals(Signal.UPSTREAM_CANCEL, h.signal, h + " has no deadline: only its upstream can tell it to stop");
            double late = micros(h.signalAt - upstreamTold) / 1000.0;
            String told = h + " told to stop " + String.format(java.util.Locale.ROOT, "%.1f", late) + " ms after "
                    + (h == A ? "the caller cancelled" : "its upstream was told") + " (" + millisAfter(h.signalAt, cancelledAt)
                    + " ms after the caller's cancel)";
            System.out.println(route + told + "; its operation returned " + millisAfter(h.stoppedAt, cancelledAt)
                    + " ms after the cancel");
            assertTrue(late <= ACROSS_THREADS_WITHIN_MILLIS, told);
            assertTrue(millisAfter(h.stoppedAt, cancelledAt) <= ACROSS_THREADS_WITHIN_MILLIS, h + "'s operation returned "
                    + millisAfter(h.stoppedAt, cancelledAt) + " ms after the cancel");
            upstreamTold = h.signalAt;
        }
        assertThrows(CancellationException.class, call::get);
    }
}

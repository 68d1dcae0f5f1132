package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The server's calls are admitted at their headers (busy over the limit) and their workers woken
 * only once asked to ({@link WorkerGate.Ticket#start}: the request is in, or more parts are coming),
 * or by the sweep once a call has waited {@link WorkerGate#LATE}.
 */
class WorkerGateTest {
    /** Holds submitted work until the test runs it; rejects when told to. */
    private static final class HeldWork implements Executor {
        final List<Runnable> held = new ArrayList<>();
        boolean reject;

        @Override
        public void execute(Runnable command) {
            if (reject) {
                throw new RejectedExecutionException("full");
            }
            held.add(command);
        }

        void runAll() {
            List<Runnable> now = new ArrayList<>(held);
            held.clear();
            now.forEach(Runnable::run);
        }
    }

    @Test
    void aCallIsAdmittedAtOnceButItsWorkerWokenOnlyWhenStartedAndOnlyOnce() {
        HeldWork workers = new HeldWork();
        AtomicInteger ran = new AtomicInteger();
        try (WorkerGate gate = new WorkerGate(workers, 2, false)) {
            WorkerGate.Ticket first = gate.admit(ran::incrementAndGet, () -> { });
            WorkerGate.Ticket second = gate.admit(ran::incrementAndGet, () -> { });
            assertNotNull(first);
            assertNotNull(second);
            assertNull(gate.admit(ran::incrementAndGet, () -> { }), "a third call is busy: two are admitted");
            assertEquals(0, workers.held.size(), "no worker is woken at admission");

            first.start();
            first.start();
            assertEquals(1, workers.held.size(), "started once however often asked");
            workers.runAll();
            assertEquals(1, ran.get());
            assertEquals(1, gate.admitted(), "a finished call frees its place");
            assertNotNull(gate.admit(ran::incrementAndGet, () -> { }));
        }
    }

    @Test
    void aCallCancelledBeforeItsWorkerStartedFreesItsPlaceAndNeverRuns() {
        HeldWork workers = new HeldWork();
        AtomicInteger ran = new AtomicInteger();
        try (WorkerGate gate = new WorkerGate(workers, 1, false)) {
            WorkerGate.Ticket t = gate.admit(ran::incrementAndGet, () -> { });
            t.abandon();
            t.start();
            assertEquals(0, workers.held.size());
            assertEquals(0, gate.admitted());
            assertNotNull(gate.admit(ran::incrementAndGet, () -> { }), "the place is free again");
        }
    }

    @Test
    void aCallNoWorkerCanTakeWhenItStartsIsRefusedAndFreesItsPlace() {
        HeldWork workers = new HeldWork();
        AtomicInteger refused = new AtomicInteger();
        try (WorkerGate gate = new WorkerGate(workers, 1, false)) {
            WorkerGate.Ticket t = gate.admit(() -> { }, refused::incrementAndGet);
            workers.reject = true;
            t.start();
            assertEquals(1, refused.get(), "refused as busy: the call never ran");
            assertEquals(0, gate.admitted());
        }
    }

    @Test
    void aStalledCallWhoseRefusalThrowsLeavesTheSweepToTheNext() {
        HeldWork workers = new HeldWork();
        AtomicInteger refused = new AtomicInteger();
        try (WorkerGate gate = new WorkerGate(workers, 4, false)) {
            gate.admit(() -> { }, () -> {
                throw new IllegalStateException("call already closed");
            });
            gate.admit(() -> { }, refused::incrementAndGet);
            workers.reject = true;
            gate.sweep(System.nanoTime() + WorkerGate.LATE.toNanos());
            assertEquals(1, refused.get(), "the call after the one whose refusal threw is refused too");
            assertEquals(0, gate.admitted(), "neither holds its place");
        }
    }

    @Test
    void theSweepStartsOnlyACallThatWaitedTooLong() {
        HeldWork workers = new HeldWork();
        try (WorkerGate gate = new WorkerGate(workers, 4, false)) {
            WorkerGate.Ticket started = gate.admit(() -> { }, () -> { });
            started.start();
            workers.runAll();
            gate.admit(() -> { }, () -> { });   // headers, and then nothing
            gate.sweep(System.nanoTime());
            assertEquals(0, workers.held.size(), "not yet: it has not waited " + WorkerGate.LATE);
            gate.sweep(System.nanoTime() + WorkerGate.LATE.toNanos());
            assertEquals(1, workers.held.size(), "the stalled call gets its worker (the part queue's limits then bound it)");
            assertEquals(1, gate.lateStarts(), "the call started normally is not counted");
        }
    }
}

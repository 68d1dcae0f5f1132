package io.switchboard.client;

import io.switchboard.metastub.Backoff;
import io.switchboard.metastub.MetaStub;
import io.switchboard.registry.ComponentEntry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** One instance of a replicated component: its meta-stub, calls in flight, back-off. */
final class Replica {
    /** 1 s after a failure, doubling up to 30 s. */
    static final Backoff BACKOFF = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), System::nanoTime);

    volatile ComponentEntry entry;
    final MetaStub stub;
    final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicBoolean closedStub = new AtomicBoolean();
    private volatile boolean retired;
    private volatile int failures;
    private volatile long avoidUntil;

    Replica(ComponentEntry entry, MetaStub stub) {
        this.entry = entry;
        this.stub = stub;
    }

    /** Counts a call in; false if the replica was dropped (the call goes elsewhere). */
    boolean enter() {
        inFlight.incrementAndGet();
        if (retired) {
            exit();
            return false;
        }
        return true;
    }

    void exit() {
        if (inFlight.decrementAndGet() == 0 && retired) {
            closeStub();
        }
    }

    /** No new calls; the meta-stub closes when the last call under way ends. */
    void retire() {
        retired = true;
        if (inFlight.get() == 0) {
            closeStub();
        }
    }

    private void closeStub() {
        if (closedStub.compareAndSet(false, true)) {
            stub.close();
        }
    }

    void failed() {
        int f = failures + 1;
        failures = f;
        avoidUntil = BACKOFF.until(f);
    }

    void succeeded() {
        if (failures != 0) {
            failures = 0;
            avoidUntil = 0;
        }
    }

    boolean avoided(long now) {
        return failures != 0 && Backoff.before(now, avoidUntil);
    }

    @Override
    public String toString() {
        return entry.instanceId();
    }
}

package io.switchboard.client.load;

import io.switchboard.protocol.DaemonThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * A load: callers, each with one call in flight, calling for a while (or until {@link #stop}),
 * optionally at a fixed rate in all, every call counted in a {@link LoadTally}. The engine of
 * {@code ./switchboard load}; a test puts a deployment under the same load from code. Stopping
 * starts no new call; those under way finish and are counted.
 *
 * <pre>{@code
 * LoadTally tally = new LoadTally();
 * try (Switchboard sb = Switchboard.builder(url).listener(tally).connect()) {
 *     EchoStub echo = sb.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
 *     LoadRun run = LoadRun.builder(() -> () -> echo.echoDoubles(new double[] {1}))
 *             .concurrency(8).duration(Duration.ofSeconds(10)).tally(tally).start();
 *     run.await(Duration.ofMinutes(1));
 * }
 * }</pre>
 */
public final class LoadRun {
    /** One call; what it throws is counted as a failure of its kind. */
    @FunctionalInterface
    public interface Call {
        void run() throws Exception;
    }

    private final List<Thread> callers = new ArrayList<>();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final LoadTally tally;
    private final long start;
    private volatile long end;

    private LoadRun(Builder b) {
        this.tally = b.tally;
        this.start = System.nanoTime();
        boolean bounded = !b.duration.isZero();
        long until = start + b.duration.toNanos();
        long interval = b.rate == 0 ? 0 : (long) (1e9 / b.rate);
        AtomicLong nextStart = new AtomicLong(start);
        for (int i = 0; i < b.concurrency; i++) {
            Call call = b.calls.get();   // one per caller: what it holds is not shared between threads
            Thread t = DaemonThreads.named("load-" + i).newThread(() -> {
                while (!stopping.get()) {
                    if (interval > 0) {
                        long at = nextStart.getAndAdd(interval);
                        if (bounded && at - until >= 0) {
                            break;
                        }
                        LockSupport.parkNanos(at - System.nanoTime());
                        if (stopping.get()) {
                            break;
                        }
                    } else if (bounded && System.nanoTime() - until >= 0) {
                        break;
                    }
                    tally.call(call);
                }
            });
            callers.add(t);
        }
        callers.forEach(Thread::start);
    }

    /** @param calls makes each caller's call, once per caller */
    public static Builder builder(Supplier<Call> calls) {
        return new Builder(calls);
    }

    /** Starts no new call; those under way finish. Returns at once: {@link #await} for the end. */
    public void stop() {
        stopping.set(true);
    }

    /** Waits up to {@code timeout} for every caller to end; whether they all have. */
    public boolean await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread t : callers) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        boolean ended = callers.stream().noneMatch(Thread::isAlive);
        if (ended && end == 0) {
            end = System.nanoTime();
        }
        return ended;
    }

    /** What the callers did so far. */
    public LoadTally tally() {
        return tally;
    }

    /** Seconds from the start to the end seen by {@link #await}, or to now while it runs. */
    public double elapsedSeconds() {
        long last = end == 0 ? System.nanoTime() : end;
        return (last - start) / 1e9;
    }

    /** How a load runs: callers, how long, how fast, where it is counted. */
    public static final class Builder {
        private final Supplier<Call> calls;
        private int concurrency = 8;
        private Duration duration = Duration.ZERO;
        private double rate;
        private LoadTally tally = new LoadTally();

        private Builder(Supplier<Call> calls) {
            this.calls = calls;
        }

        /** Callers, each with one call in flight (default 8). */
        public Builder concurrency(int callers) {
            if (callers < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1, not " + callers);
            }
            this.concurrency = callers;
            return this;
        }

        /** How long to call; zero (the default): until {@link #stop}. */
        public Builder duration(Duration duration) {
            if (duration.isNegative()) {
                throw new IllegalArgumentException("duration must not be negative, not " + duration);
            }
            this.duration = duration;
            return this;
        }

        /** Calls started per second in all, spread evenly (default: as fast as the callers go). */
        public Builder rate(double callsPerSecond) {
            if (!(callsPerSecond > 0) || Double.isInfinite(callsPerSecond)) {
                throw new IllegalArgumentException("rate must be a positive number of calls per second, not "
                        + callsPerSecond);
            }
            this.rate = callsPerSecond;
            return this;
        }

        /** Where the calls are counted (default a tally of its own). */
        public Builder tally(LoadTally tally) {
            this.tally = java.util.Objects.requireNonNull(tally, "tally");
            return this;
        }

        /** Starts the callers. */
        public LoadRun start() {
            return new LoadRun(this);
        }
    }
}

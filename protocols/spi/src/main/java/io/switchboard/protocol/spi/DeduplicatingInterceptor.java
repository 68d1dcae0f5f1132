package io.switchboard.protocol.spi;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.SwitchboardException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Runs each call id at most once: a repeat of a call that ran (or is running) gets the first
 * outcome, whichever protocol the repeat arrives on, and the steps after this one (and the
 * component) do not run again. This is what lets the meta-stub retry a non-idempotent call over
 * SOAP after the fast protocol failed mid-call. Put the same instance in the chain of every
 * protocol of a component. {@code ComponentServer} does; {@link DeduplicatingSkeleton} is the same
 * around a bare skeleton.
 *
 * <p>Only operations not marked idempotent are remembered: an idempotent one may simply run again,
 * and remembering its results (large arrays, long lists) would cost memory for nothing. It keeps
 * the last {@code capacity} calls for {@code retention}; a repeat older than that runs again, so
 * retention must exceed the longest client timeout plus its retries. Results are held only that
 * long: expired ones are dropped as new calls arrive.
 *
 * <pre>{@code
 * DeduplicatingInterceptor once = new DeduplicatingInterceptor(10_000, Duration.ofMinutes(10));
 * grpcServer.export(ServerInterceptorChain.of("Echo", "grpc", List.of(once), skeleton));
 * soapServer.export(ServerInterceptorChain.of("Echo", "soap", List.of(once), skeleton));
 * }</pre>
 */
public final class DeduplicatingInterceptor implements ServerInterceptor {
    private final int capacity;
    private final long retentionNanos;
    private final Map<String, Remembered> recent;
    private final Clock clock;

    private record Remembered(CompletableFuture<Object> outcome, long at) {
    }

    public DeduplicatingInterceptor(int capacity, Duration retention) {
        this(capacity, retention, null);
    }

    /**
     * The same, ageing remembered calls by {@code clock} instead of {@link System#nanoTime}: a test
     * moves a clock by hand to see retention run out without waiting for it.
     */
    public DeduplicatingInterceptor(int capacity, Duration retention, Clock clock) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
        this.retentionNanos = retention.toNanos();
        this.clock = clock;
        this.recent = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Remembered> eldest) {
                return size() > DeduplicatingInterceptor.this.capacity;
            }
        };
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        OperationDescriptor operation = call.operation();
        String callId = call.callId();
        if (callId == null || operation.idempotent()) {
            return next.proceed(call);
        }
        String key = operation.name() + "/" + callId;
        CompletableFuture<Object> mine = new CompletableFuture<>();
        CompletableFuture<Object> first;
        long now = nanoTime();
        synchronized (recent) {
            dropExpired(now);
            Remembered r = recent.get(key);
            if (r != null && now - r.at() > retentionNanos) {
                recent.remove(key);
                r = null;
            }
            if (r == null) {
                recent.put(key, new Remembered(mine, now));
                first = null;
            } else {
                first = r.outcome();
            }
        }
        if (first != null) {
            return await(first);
        }
        try {
            Object result = next.proceed(call);
            mine.complete(result);
            return result;
        } catch (DeclaredFault | RuntimeException | Error e) {
            mine.completeExceptionally(e);
            throw e;
        }
    }

    private long nanoTime() {
        if (clock == null) {
            return System.nanoTime();
        }
        Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** Entries are in arrival order, so the expired ones are at the head. */
    private void dropExpired(long now) {
        var it = recent.values().iterator();
        while (it.hasNext()) {
            if (now - it.next().at() <= retentionNanos) {
                return;
            }
            it.remove();
        }
    }

    /**
     * Whether a call with this id has run, or is running, here: a call arriving with it now is a
     * repeat (the client's fallback or failover after a failure mid-call) and gets the first
     * outcome. Always false for an idempotent operation or without an id: those are not remembered.
     */
    public boolean remembers(OperationDescriptor operation, String callId) {
        if (callId == null || operation.idempotent()) {
            return false;
        }
        synchronized (recent) {
            Remembered r = recent.get(operation.name() + "/" + callId);
            return r != null && nanoTime() - r.at() <= retentionNanos;
        }
    }

    /** How many calls are remembered now (for tests and metrics). */
    public int remembered() {
        synchronized (recent) {
            return recent.size();
        }
    }

    private static Object await(CompletableFuture<Object> first) throws DeclaredFault {
        try {
            return first.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchboardException("interrupted while waiting for the first run of a repeated call", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof DeclaredFault f) {
                throw f;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw (Error) cause;
        }
    }
}

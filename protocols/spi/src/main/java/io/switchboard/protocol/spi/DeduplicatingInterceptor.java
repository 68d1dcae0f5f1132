package io.switchboard.protocol.spi;

import io.switchboard.codec.message.WireFormatException;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.CallIds;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.SwitchboardException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Runs each call id at most once per caller: a true repeat of a call that ran (or is running), the
 * same caller sending the same request under the same call id, gets the first outcome, whichever
 * protocol it arrives on, and the steps after this one (and the component) do not run again. This
 * is what lets the meta-stub retry a non-idempotent call over SOAP after the fast protocol failed
 * mid-call. Put the same instance in the chain of every protocol of a component.
 * {@code ComponentServer} does; {@link DeduplicatingSkeleton} is the same around a bare skeleton.
 *
 * <p>A call id names one request of one caller. The server remembers, per operation and call id,
 * the caller's {@linkplain io.switchboard.protocol.Peer#identity() identity} and a SHA-256 digest of
 * the request's canonical bytes (its binary encoding). A call that reuses the id with another
 * request, or from another identity, is refused as {@value #CALL_ID_REUSE} (a
 * {@link RefusedException}; the operation does not run) and learns nothing of the first call's
 * outcome. A call id that is not {@linkplain CallIds#wellFormed well-formed} is refused as
 * {@code malformed} rather than remembered.
 *
 * <p>Only operations not marked idempotent are remembered: an idempotent one may simply run again.
 * Calls are kept for {@code retention} (a repeat older than that runs again, so retention must
 * exceed the longest client timeout plus its retries) within {@code maxBytes}, each counted at its
 * outcome's encoded size plus its key. Every identity has a share of at most
 * {@code maxBytesPerIdentity}; past it the identity's own oldest calls go, and when the whole is
 * full the largest share gives up its oldest: one caller's flood of fresh ids evicts only its own
 * calls. Anonymous callers are one identity, and a caller known only by its Unix socket's uid is
 * one of them: the meta-stub's failsafe repeats a tcp call that failed over the Unix socket over
 * SOAP, where the same process arrives anonymous, and its repeat must find its first run.
 *
 * <pre>{@code
 * DeduplicatingInterceptor once = new DeduplicatingInterceptor(64 << 20, 8 << 20, Duration.ofMinutes(10), null);
 * grpcServer.export(ServerInterceptorChain.of("Echo", "grpc", List.of(once), skeleton));
 * soapServer.export(ServerInterceptorChain.of("Echo", "soap", List.of(once), skeleton));
 * }</pre>
 */
public final class DeduplicatingInterceptor implements ServerInterceptor {
    /** {@link RefusedException#reason()} of a call that reused a call id with another request or identity. */
    public static final String CALL_ID_REUSE = "call-id-reuse";
    /** What a remembered call costs beyond its outcome: the entry, its map nodes, the digest. */
    static final int ENTRY_BYTES = 256;
    /** What a remembered failure costs beyond its message. */
    static final int FAILURE_BYTES = 1024;

    private final long retentionNanos;
    private final RecentCalls recent;
    private final Clock clock;

    /** At most {@code maxBytes} of remembered calls, one identity as many as all. */
    public DeduplicatingInterceptor(long maxBytes, Duration retention) {
        this(maxBytes, maxBytes, retention, null);
    }

    /**
     * At most {@code maxBytes} of remembered calls, {@code maxBytesPerIdentity} of one identity's,
     * ageing them by {@code clock} (null: {@link System#nanoTime}; a test moves a clock by hand to
     * see retention run out without waiting for it).
     */
    public DeduplicatingInterceptor(long maxBytes, long maxBytesPerIdentity, Duration retention, Clock clock) {
        this.recent = new RecentCalls(maxBytes, maxBytesPerIdentity);
        this.retentionNanos = retention.toNanos();
        this.clock = clock;
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        OperationDescriptor operation = call.operation();
        String callId = call.callId();
        if (callId == null || operation.idempotent()) {
            return next.proceed(call);
        }
        if (!CallIds.wellFormed(callId)) {
            throw new RefusedException(WireFormatException.MALFORMED, "the call id of " + operation.name()
                    + " is malformed: " + CallIds.rule());
        }
        String identity = callerOf(call.peer());
        byte[] digest = RequestDigest.sha256(operation.service(), operation.requestElement().getLocalPart(),
                call.request());
        String key = operation.name() + '/' + callId;
        CompletableFuture<Object> mine = new CompletableFuture<>();
        RecentCalls.Entry first;
        RecentCalls.Entry added = null;
        synchronized (recent) {
            long now = nanoTime();
            recent.dropExpired(now, retentionNanos);
            first = recent.get(key);
            if (first == null) {
                added = recent.add(identity, key, digest, mine, now,
                        ENTRY_BYTES + 2L * (key.length() + identity.length()));
            }
        }
        if (first != null) {
            if (!first.identity.equals(identity) || !Arrays.equals(first.digest, digest)) {
                throw new RefusedException(CALL_ID_REUSE, "call id " + callId + " of " + operation.name()
                        + " was used for another request; it did not run (a call id names one request of one caller)");
            }
            return await(first.outcome);
        }
        try {
            Object result = next.proceed(call);
            mine.complete(result);
            long size = operation.oneWay() ? 0 : RequestDigest.encodedSize(operation.service(),
                    operation.responseElement().getLocalPart(), result);
            account(added, size < 0 ? FAILURE_BYTES : size);
            return result;
        } catch (DeclaredFault | RuntimeException | Error e) {
            mine.completeExceptionally(e);
            String message = e.getMessage();
            account(added, FAILURE_BYTES + (message == null ? 0 : 2L * message.length()));
            throw e;
        }
    }

    private void account(RecentCalls.Entry entry, long outcomeBytes) {
        synchronized (recent) {
            recent.grow(entry, outcomeBytes);
        }
    }

    private long nanoTime() {
        if (clock == null) {
            return System.nanoTime();
        }
        Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /**
     * Whether the current call's caller ({@link ServerCallContext#peer()}) has a call with this id
     * that ran, or is running, here: a call arriving with it now is a repeat (the client's fallback
     * or failover after a failure mid-call) or, with another request, refused. Always false for an
     * idempotent operation or without an id: those are not remembered.
     */
    public boolean remembers(OperationDescriptor operation, String callId) {
        if (callId == null || operation.idempotent()) {
            return false;
        }
        String identity = callerOf(ServerCallContext.peer());
        synchronized (recent) {
            RecentCalls.Entry e = recent.get(operation.name() + '/' + callId);
            return e != null && e.identity.equals(identity) && nanoTime() - e.at <= retentionNanos;
        }
    }

    /**
     * Whom a call is remembered for: the peer's identity, except that a uid proved only by the Unix
     * socket counts as anonymous. The failsafe's SOAP repeat of a call that failed over the socket
     * comes over TCP, where nothing names the uid; keyed apart, the repeat would be refused as
     * {@value #CALL_ID_REUSE} and the caller would lose the answer of a call that ran.
     */
    static String callerOf(io.switchboard.protocol.Peer peer) {
        return peer.authentication() == io.switchboard.protocol.Peer.Authentication.UNIX_SOCKET
                ? io.switchboard.protocol.Peer.UNKNOWN.identity() : peer.identity();
    }

    /** How many calls are remembered now (for tests and metrics). */
    public int remembered() {
        synchronized (recent) {
            return recent.size();
        }
    }

    /** The bytes the remembered calls are counted at now, all identities together (for tests and metrics). */
    public long rememberedBytes() {
        synchronized (recent) {
            return recent.bytes();
        }
    }

    /** The bytes {@code identity}'s remembered calls are counted at now ({@link io.switchboard.protocol.Peer#identity()}). */
    public long rememberedBytes(String identity) {
        synchronized (recent) {
            return recent.bytes(identity);
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

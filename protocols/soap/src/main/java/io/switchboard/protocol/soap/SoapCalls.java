package io.switchboard.protocol.soap;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.spi.RecentCalls;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The calls a SOAP server runs that came with a call id, by component, caller and id, so that a
 * client's cancel message ({@code POST} to the component's address with the {@value #CANCEL_HEADER}
 * header naming the call id, no body) reaches the operation: SOAP itself has no cancel, and a
 * client's connection closing is noticed only once the operation has run a second
 * ({@link SoapEndPoint#checkClientGone}). A cancel acts
 * only on a call of the same {@linkplain Peer#identity() identity}: a call id seen by another
 * caller (call ids are exported as trace attributes) cancels nothing.
 *
 * <p>The cancel travels on a connection of its own and can overtake its call's request. A cancel
 * that finds no call of its caller's running is therefore remembered for a while (the time a
 * request has to arrive, {@code ServerSettings.requestTimeout()}), and the call that then arrives
 * with that id from that identity does not run; the memory is used up by it. Unless the cancel
 * says {@value #RUNNING_ONLY_HEADER}: the client's cancel of an attempt that timed out, which it
 * may repeat under the same id. The memory is a new way for strangers to hold the server's
 * memory, so it is bounded as the call-id memory is ({@link RecentCalls}): {@value #PER_IDENTITY}
 * cancels per identity, {@value #IN_ALL} in all, the oldest of the largest share going first.
 */
final class SoapCalls {
    /** The HTTP header of a cancel message: the call id to cancel. */
    static final String CANCEL_HEADER = "Switchboard-Cancel";
    /**
     * The header of the {@code 503} the server answers when its connection limits refuse a
     * request: the request did not run, so a client may send it elsewhere ({@link ServerBusyAnswers}).
     */
    static final String BUSY_HEADER = "Switchboard-Busy";
    /**
     * With a cancel message (any value): cancel the call only if it runs now, and do not remember
     * the cancel: the client may send its call again under the same id (a retry after a timeout).
     */
    static final String RUNNING_ONLY_HEADER = "Switchboard-Cancel-Running-Only";
    /** The property of a request's {@code MessageContext} that holds when it arrived ({@link System#nanoTime()}). */
    static final String ARRIVED = "switchboard.arrived";
    /** The refusal's reason for a call whose caller cancelled it before it arrived. */
    static final String CANCELLED = "cancelled";
    /** Early cancels one identity may have remembered; its oldest go first. */
    static final int PER_IDENTITY = 64;
    /** Early cancels remembered in all. */
    static final int IN_ALL = 4096;

    /** What a cancel is, found or not. */
    enum Outcome {
        /** The call ran, and is cancelled now. */
        CANCELLED,
        /** No call of that id and identity runs: the cancel waits for it. */
        REMEMBERED,
        /** No call of that id and identity runs, and the cancel asked not to be remembered. */
        NOT_FOUND
    }

    private final Map<String, ServerCallContext> running = new HashMap<>();
    /** Cancels that came before their call, each counted as one. */
    private final RecentCalls early;
    private final long memoryNanos;
    private final LongSupplier nanoClock;

    /** Remembers early cancels for {@code memory} by {@code nanoClock}, at most so many per identity and in all. */
    SoapCalls(Duration memory, int perIdentity, int inAll, LongSupplier nanoClock) {
        this.early = new RecentCalls(inAll, perIdentity);
        this.memoryNanos = memory.toNanos();
        this.nanoClock = nanoClock;
    }

    /**
     * Registers a call, made by {@link ServerCallContext#callPeer()}, until the returned scope
     * closes; a second call with the same id from the same caller is not registered. Null when
     * its caller cancelled it before it came: it must not run.
     */
    ServerCallContext.Scope running(String component, String callId, ServerCallContext call) {
        if (callId == null) {
            return () -> { };
        }
        String key = key(component, call.callPeer(), callId);
        synchronized (this) {
            early.dropExpired(nanoClock.getAsLong(), memoryNanos);
            if (early.remove(key)) {
                return null;
            }
            if (running.putIfAbsent(key, call) != null) {
                return () -> { };
            }
        }
        return () -> {
            synchronized (this) {
                running.remove(key, call);
            }
        };
    }

    /**
     * Cancels the call {@code callId} of {@code component} that {@code canceller} made, if it runs;
     * otherwise remembers the cancel for the call to come, unless {@code runningOnly}.
     */
    Outcome cancel(String component, String callId, Peer canceller, boolean runningOnly) {
        String key = key(component, canceller, callId);
        ServerCallContext call;
        synchronized (this) {
            call = running.get(key);
            if (call == null) {
                if (runningOnly) {
                    return Outcome.NOT_FOUND;
                }
                long now = nanoClock.getAsLong();
                early.dropExpired(now, memoryNanos);
                if (early.get(key) == null) {   // a repeated cancel keeps its first time
                    early.add(canceller.identity(), key, null, null, now, 1);
                }
                return Outcome.REMEMBERED;
            }
        }
        call.cancel();   // outside the lock: it runs the call's cancel listeners
        return Outcome.CANCELLED;
    }

    /** How many early cancels {@code identity} has remembered now (tests). */
    synchronized long remembered(String identity) {
        return early.bytes(identity);
    }

    /** How many early cancels are remembered now (tests). */
    synchronized int remembered() {
        return early.size();
    }

    private static String key(String component, Peer peer, String callId) {
        // a call id has no spaces (CallIds.wellFormed), so the parts cannot run into each other
        return component + ' ' + callId + ' ' + peer.identity();
    }
}

package io.switchboard.protocol.soap;

import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The calls a SOAP server runs that came with a call id, by component, caller and id, so that a
 * client's cancel message ({@code POST} to the component's address with the {@value #CANCEL_HEADER}
 * header naming the call id, no body) reaches the operation: SOAP itself has no cancel, and a
 * server does not notice a client's connection closing while the operation runs. A cancel acts
 * only on a call of the same {@linkplain Peer#identity() identity}: a call id seen by another
 * caller (call ids are exported as trace attributes) cancels nothing.
 */
final class SoapCalls {
    /** The HTTP header of a cancel message: the call id to cancel. */
    static final String CANCEL_HEADER = "Switchboard-Cancel";
    /** The property of a request's {@code MessageContext} that holds when it arrived ({@link System#nanoTime()}). */
    static final String ARRIVED = "switchboard.arrived";

    private final Map<String, ServerCallContext> running = new ConcurrentHashMap<>();

    /**
     * Registers a call, made by {@link ServerCallContext#callPeer()}, until the returned scope
     * closes; a second call with the same id from the same caller is not registered.
     */
    ServerCallContext.Scope running(String component, String callId, ServerCallContext call) {
        if (callId == null) {
            return () -> { };
        }
        String key = key(component, call.callPeer(), callId);
        if (running.putIfAbsent(key, call) != null) {
            return () -> { };
        }
        return () -> running.remove(key, call);
    }

    /** Cancels the call {@code callId} of {@code component} that {@code canceller} made, if it runs; whether one did. */
    boolean cancel(String component, String callId, Peer canceller) {
        ServerCallContext call = running.get(key(component, canceller, callId));
        if (call == null) {
            return false;
        }
        call.cancel();
        return true;
    }

    private static String key(String component, Peer peer, String callId) {
        // a call id has no spaces (CallIds.wellFormed), so the parts cannot run into each other
        return component + ' ' + callId + ' ' + peer.identity();
    }
}

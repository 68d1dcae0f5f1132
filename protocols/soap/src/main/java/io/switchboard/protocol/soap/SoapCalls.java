package io.switchboard.protocol.soap;

import io.switchboard.protocol.ServerCallContext;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The calls a SOAP server runs that came with a call id, by component and id, so that a client's
 * cancel message ({@code POST} to the component's address with the {@value #CANCEL_HEADER} header
 * naming the call id, no body) reaches the operation: SOAP itself has no cancel, and a server does
 * not notice a client's connection closing while the operation runs.
 */
final class SoapCalls {
    /** The HTTP header of a cancel message: the call id to cancel. */
    static final String CANCEL_HEADER = "Switchboard-Cancel";
    /** The property of a request's {@code MessageContext} that holds when it arrived ({@link System#nanoTime()}). */
    static final String ARRIVED = "switchboard.arrived";

    private final Map<String, ServerCallContext> running = new ConcurrentHashMap<>();

    /** Registers a call until the returned scope closes; a second call with the same id is not registered. */
    ServerCallContext.Scope running(String component, String callId, ServerCallContext call) {
        if (callId == null) {
            return () -> { };
        }
        String key = component + ' ' + callId;
        if (running.putIfAbsent(key, call) != null) {
            return () -> { };
        }
        return () -> running.remove(key, call);
    }

    /** Cancels the call {@code callId} of {@code component}, if it runs; whether one did. */
    boolean cancel(String component, String callId) {
        ServerCallContext call = running.get(component + ' ' + callId);
        if (call == null) {
            return false;
        }
        call.cancel();
        return true;
    }
}

package io.switchboard.metastub;

import java.time.Duration;

/**
 * What the meta-stub did for one attempt of a call: which operation, its call id, over which
 * protocol to which address, why, the request payload the policy counted (-1 if it counted none,
 * or stopped short of the whole message), the response payload (-1 when not counted), how long
 * it took and how it ended ({@code error} is null on success, including a declared fault). A
 * call that fell back to SOAP gives two records with the same call id.
 *
 * <p>{@code requestWireBytes} and {@code responseWireBytes} are the bytes the transport actually
 * sent and received for this attempt (see {@link io.switchboard.protocol.WireBytes}: SOAP HTTP
 * bodies, gRPC serialized chunks, the in-process protocol's copied encoding), -1 when it counted
 * none (nothing sent; a failure before any response; a one-way call's response). The estimates
 * stay what policies decide by; these are what a call cost on the wire.
 *
 * <p>{@code callsInFlight} is how many attempts the meta-stubs of this JVM had under way when this
 * one started, itself included: a latency measured among many others is mostly waiting, and a
 * policy may weigh it so ({@link AdaptivePolicy}).
 *
 * <p>{@code via} is how the attempt reached the endpoint when its protocol has more than one way
 * ({@link io.switchboard.protocol.spi.Transport#via()}): {@code unix} for a tcp call over the
 * server's Unix domain socket on this host, {@code tcp} for one over TCP; null for the other
 * protocols, and when no connection was made.
 */
public record CallRecord(String component, String operation, String callId, String protocol, String address,
                         String reason, long estimatedBytes, Duration latency, String error, long responseBytes,
                         long requestWireBytes, long responseWireBytes, int callsInFlight, String via) {

    /** A record without a way ({@link #via()} null). */
    public CallRecord(String component, String operation, String callId, String protocol, String address,
                      String reason, long estimatedBytes, Duration latency, String error, long responseBytes,
                      long requestWireBytes, long responseWireBytes, int callsInFlight) {
        this(component, operation, callId, protocol, address, reason, estimatedBytes, latency, error, responseBytes,
                requestWireBytes, responseWireBytes, callsInFlight, null);
    }

    /** A record of an attempt made alone. */
    public CallRecord(String component, String operation, String callId, String protocol, String address,
                      String reason, long estimatedBytes, Duration latency, String error, long responseBytes,
                      long requestWireBytes, long responseWireBytes) {
        this(component, operation, callId, protocol, address, reason, estimatedBytes, latency, error, responseBytes,
                requestWireBytes, responseWireBytes, 1);
    }

    /** A record whose wire bytes were not counted. */
    public CallRecord(String component, String operation, String callId, String protocol, String address,
                      String reason, long estimatedBytes, Duration latency, String error, long responseBytes) {
        this(component, operation, callId, protocol, address, reason, estimatedBytes, latency, error, responseBytes,
                -1, -1);
    }

    /** A record whose response was not counted. */
    public CallRecord(String component, String operation, String callId, String protocol, String address,
                      String reason, long estimatedBytes, Duration latency, String error) {
        this(component, operation, callId, protocol, address, reason, estimatedBytes, latency, error, -1);
    }

    /** Request and response payload together, or -1 when the request was not counted whole. */
    public long payloadBytes() {
        return estimatedBytes < 0 ? -1 : estimatedBytes + Math.max(0, responseBytes);
    }

    public boolean succeeded() {
        return error == null;
    }

    /** Whether this attempt was the failsafe's retry over SOAP. */
    public boolean fallback() {
        return reason.startsWith("fallback");
    }
}

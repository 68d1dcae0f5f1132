package io.switchboard.metastub;

import java.time.Duration;

/**
 * What the meta-stub did for one attempt of a call: which operation, its call id, over which
 * protocol to which address, why, the request payload the policy counted (-1 if it counted none,
 * or stopped short of the whole message), the response payload (-1 when not counted), how long
 * it took and how it ended ({@code error} is null on success, including a declared fault). A
 * call that fell back to SOAP gives two records with the same call id.
 */
public record CallRecord(String component, String operation, String callId, String protocol, String address,
                         String reason, long estimatedBytes, Duration latency, String error, long responseBytes) {

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

package io.switchboard.metastub;

import java.time.Duration;

/**
 * What the meta-stub did for one attempt of a call: which operation, its call id, over which
 * protocol to which address, why, the payload estimate the policy worked with (-1 if it needed
 * none), how long it took and how it ended ({@code error} is null on success, including a
 * declared fault). A call that fell back to SOAP gives two records with the same call id.
 */
public record CallRecord(String component, String operation, String callId, String protocol, String address,
                         String reason, long estimatedBytes, Duration latency, String error) {
    public boolean succeeded() {
        return error == null;
    }

    /** Whether this attempt was the failsafe's retry over SOAP. */
    public boolean fallback() {
        return reason.startsWith("fallback");
    }
}

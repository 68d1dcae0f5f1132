package io.switchboard.metastub;

import java.time.Duration;

/**
 * What the meta-stub did for one call: which operation, over which protocol, why, how long it
 * took and how it ended ({@code error} is null on success, including a declared fault).
 */
public record CallRecord(String component, String operation, String protocol, String reason, Duration latency,
                         String error) {
    public boolean succeeded() {
        return error == null;
    }
}

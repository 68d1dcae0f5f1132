package io.switchboard.metastub;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Recent response payload per operation to a small request (an average over the last few), for
 * size-aware policies: a large request is a bulk call anyway; a small one may not be. The call
 * record step teaches it; the selection step reads it into each {@link CallContext}.
 */
final class ResponseSizes {
    /** Responses are counted up to this far: enough to tell a bulk answer, bounded for a long list. */
    static final long RESPONSE_CAP = 64 * 1024;
    /** Requests up to this size teach what the operation answers to a small request. */
    static final long SMALL_REQUEST = 2 * 1024;

    private final Map<String, Long> sizes = new ConcurrentHashMap<>();

    long expected(String operation) {
        return sizes.getOrDefault(operation, 0L);
    }

    /** {@code responseBytes} answered a request of {@code requestBytes} (-1: not counted whole). */
    void learn(String operation, long requestBytes, long responseBytes) {
        if (requestBytes >= 0 && requestBytes <= SMALL_REQUEST) {
            // what a small question gets back: echo-like operations answer small, a result() large
            Long was = sizes.get(operation);
            if (was == null || (was * 3 + responseBytes) / 4 != was) {   // a steady size writes nothing
                sizes.merge(operation, responseBytes, (before, now) -> (before * 3 + now) / 4);
            }
        }
    }
}

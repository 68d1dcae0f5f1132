package io.switchboard.metastub;

import io.switchboard.protocol.CallIds;
import java.util.concurrent.CompletableFuture;

/**
 * Gives a call its id ({@link CallIds#next()}: 128 bits from {@code SecureRandom}) unless the caller set one: every attempt below, the
 * fallback over SOAP included, carries the same id, so a server that remembers recent call ids
 * ({@link io.switchboard.protocol.spi.DeduplicatingSkeleton}) runs the operation once.
 */
final class CallIdInterceptor implements ClientInterceptor {
    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        if (call.options().callId() == null) {
            call.options(call.options().withNewCallId());
        }
        return next.proceed(call);
    }
}

package io.switchboard.metastub;

import io.switchboard.protocol.WireBytes;
import java.util.concurrent.CompletableFuture;

/**
 * Gives each attempt a fresh {@link WireBytes} in its options, into which the transport adds the
 * bytes it really sent and received (only it sees them); the call record step reads them when the
 * attempt ends.
 */
final class WireByteInterceptor implements ClientInterceptor {
    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        WireBytes wire = new WireBytes();
        call.wire = wire;
        call.options(call.options().withWireBytes(wire));
        return next.proceed(call);
    }
}

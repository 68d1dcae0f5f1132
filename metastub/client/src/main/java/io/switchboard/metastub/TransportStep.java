package io.switchboard.metastub;

import java.util.concurrent.CompletableFuture;

/** The last step of a meta-stub's chain: the attempt goes to the transport the connect step found. */
final class TransportStep implements ClientInterceptor.Chain {
    @Override
    public CompletableFuture<Object> proceed(ClientCall call) {
        return call.send(call.transport);
    }

    @Override
    public String toString() {
        return "transport";
    }
}

package io.switchboard.metastub;

import io.switchboard.protocol.spi.Transport;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * Finds (or opens) the transport to the server's endpoint for the attempt's protocol, in the
 * call's suite, as OkHttp's connect interceptor finds a connection. A transport that cannot be
 * had fails the attempt without a call record; the failsafe above sees that failure like any other.
 */
final class ConnectInterceptor implements ClientInterceptor {
    private final BiFunction<ProtocolSuite, String, Transport> transports;

    ConnectInterceptor(BiFunction<ProtocolSuite, String, Transport> transports) {
        this.transports = transports;
    }

    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        try {
            call.transport = transports.apply(call.suite, call.protocol());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return next.proceed(call);
    }
}

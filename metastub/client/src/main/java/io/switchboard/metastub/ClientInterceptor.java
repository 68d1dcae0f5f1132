package io.switchboard.metastub;

import java.util.concurrent.CompletableFuture;

/**
 * One step of a client call, in the manner of grpc-java's {@code ClientInterceptor} and OkHttp's
 * {@code Interceptor}: it may look at or change the {@link ClientCall}, hand it on with
 * {@link Chain#proceed} (once, several times, or not at all), and look at or change the outcome.
 * A meta-stub is such a chain, built once when the stub is built and shown in one place
 * ({@link MetaStub}'s class comment): call id, selection, failsafe fallback, connect, your
 * interceptors, call record, wire bytes, the transport.
 *
 * <p>Blocking and asynchronous calls run the same chain. The outcome is a future: for a blocking
 * call every step below has finished when {@code proceed} returns (the future is complete, on the
 * caller's thread); for an asynchronous one it may complete later, on a transport's thread. So an
 * interceptor never blocks on the future and never assumes which thread completes it. It should
 * not throw: a failure is a failed future (a throw before anything was sent reaches the caller as
 * it would from the channel).
 *
 * <p>An interceptor added through {@link MetaStub.Builder#interceptor} runs once per attempt,
 * after the protocol is chosen and the transport found: it sees {@link ClientCall#protocol()},
 * {@link ClientCall#reason()}, {@link ClientCall#attempt()}, {@link ClientCall#fallback()} and the
 * {@link ClientCall#options()} the transport will get, which it may replace (the call id and the
 * trace context are the options transports put on the wire). One instance serves every call of the stub,
 * concurrently: keep per-call state in local variables or the call's options.
 *
 * <pre>{@code
 * ClientInterceptor timing = (call, next) -> {
 *     long start = System.nanoTime();
 *     return next.proceed(call).whenComplete((response, failure) -> log.info("{} over {} (attempt {}): {} µs",
 *             call.operation().name(), call.protocol(), call.attempt(), (System.nanoTime() - start) / 1000));
 * };
 * MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entry.endpoints())
 *         .interceptor(timing).build();
 * }</pre>
 */
@FunctionalInterface
public interface ClientInterceptor {
    /**
     * Handles {@code call}, usually by handing it to {@code next}. Returns the call's outcome: the
     * response message, or the failure the caller gets (unwrapped or in a
     * {@link java.util.concurrent.CompletionException}).
     */
    CompletableFuture<Object> intercept(ClientCall call, Chain next);

    /** The rest of the chain after one interceptor. */
    @FunctionalInterface
    interface Chain {
        CompletableFuture<Object> proceed(ClientCall call);
    }
}

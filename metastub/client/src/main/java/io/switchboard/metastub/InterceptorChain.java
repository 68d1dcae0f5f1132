package io.switchboard.metastub;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A chain of {@link ClientInterceptor}s ending in a last step (the one that sends), linked once
 * when a channel is built: a call allocates nothing to walk it.
 *
 * <pre>{@code
 * ClientInterceptor.Chain chain = InterceptorChain.of(List.of(tracing, failover), call -> call.send(channel));
 * CompletableFuture<Object> outcome = chain.proceed(new ClientCall("Echo", operation, request, options, null));
 * }</pre>
 */
public final class InterceptorChain implements ClientInterceptor.Chain {
    private final ClientInterceptor interceptor;
    private final ClientInterceptor.Chain next;

    private InterceptorChain(ClientInterceptor interceptor, ClientInterceptor.Chain next) {
        this.interceptor = interceptor;
        this.next = next;
    }

    /** {@code interceptors} in the order a call meets them, then {@code last}. */
    public static ClientInterceptor.Chain of(List<? extends ClientInterceptor> interceptors,
                                             ClientInterceptor.Chain last) {
        ClientInterceptor.Chain chain = last;
        for (int i = interceptors.size() - 1; i >= 0; i--) {
            chain = new InterceptorChain(interceptors.get(i), chain);
        }
        return chain;
    }

    @Override
    public CompletableFuture<Object> proceed(ClientCall call) {
        return interceptor.intercept(call, next);
    }

    @Override
    public String toString() {
        return interceptor.getClass().getSimpleName() + " -> " + next;
    }
}

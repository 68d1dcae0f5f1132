package io.switchboard.protocol.spi;

import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.Skeleton;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A bare skeleton that runs each call id at most once per caller: a {@link DeduplicatingInterceptor} in front
 * of it, for a skeleton exported straight on protocol servers (a {@code ComponentServer} puts the
 * interceptor in its own chain). A repeat of a call that ran (or is running) gets the first
 * outcome, whichever protocol the repeat arrives on. Export the same instance on every protocol of
 * a component. What is remembered, for how long, and which reuses of a call id are refused: see
 * {@link DeduplicatingInterceptor}.
 *
 * <pre>{@code
 * Skeleton once = new DeduplicatingSkeleton(EchoComponent.skeleton(impl), 64 << 20, Duration.ofMinutes(10));
 * soapServer.export(once);
 * grpcServer.export(once);
 * }</pre>
 */
public final class DeduplicatingSkeleton implements Skeleton {
    private final DeduplicatingInterceptor once;
    private final Skeleton chain;

    /** Remembers at most {@code maxBytes} of calls (see {@link DeduplicatingInterceptor}). */
    public DeduplicatingSkeleton(Skeleton delegate, long maxBytes, Duration retention) {
        this(delegate, maxBytes, retention, null);
    }

    /** The same, ageing remembered calls by {@code clock} (see {@link DeduplicatingInterceptor}). */
    public DeduplicatingSkeleton(Skeleton delegate, long maxBytes, Duration retention, Clock clock) {
        Objects.requireNonNull(delegate);
        this.once = new DeduplicatingInterceptor(maxBytes, maxBytes, retention, clock);
        this.chain = ServerInterceptorChain.of(null, null, List.of(once), delegate);
    }

    @Override
    public ServiceDescriptor descriptor() {
        return chain.descriptor();
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request) throws DeclaredFault {
        return chain.invoke(operation, request);
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request, String callId) throws DeclaredFault {
        return chain.invoke(operation, request, callId);
    }

    @Override
    public void refused(OperationDescriptor operation, String reason) {
        chain.refused(operation, reason);
    }

    /** The interceptor that remembers the calls (for a counting step that asks it about repeats). */
    public DeduplicatingInterceptor interceptor() {
        return once;
    }

    /** See {@link DeduplicatingInterceptor#remembers}. */
    public boolean remembers(OperationDescriptor operation, String callId) {
        return once.remembers(operation, callId);
    }

    /** How many calls are remembered now (for tests and metrics). */
    public int remembered() {
        return once.remembered();
    }
}

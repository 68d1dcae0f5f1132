package io.switchboard.testing;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Skeleton;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Counts, per label (usually the protocol it is exported on), the calls a server really ran, so
 * a test can tell a call that ran once from one that ran twice or never. An optional hook runs
 * after each run, before the answer leaves (to break a connection at that moment, say).
 *
 * <pre>{@code
 * Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
 * grpcServer.export(new CountingSkeleton(inner, "grpc", served, label -> { }));
 * }</pre>
 */
public final class CountingSkeleton implements Skeleton {
    private final Skeleton inner;
    private final String label;
    private final Map<String, AtomicInteger> served;
    private final Consumer<String> afterRun;

    public CountingSkeleton(Skeleton inner, String label, Map<String, AtomicInteger> served, Consumer<String> afterRun) {
        this.inner = inner;
        this.label = label;
        this.served = served;
        this.afterRun = afterRun;
    }

    @Override
    public ServiceDescriptor descriptor() {
        return inner.descriptor();
    }

    @Override
    public Object invoke(OperationDescriptor op, Object request) throws DeclaredFault {
        return invoke(op, request, null);
    }

    @Override
    public Object invoke(OperationDescriptor op, Object request, String callId) throws DeclaredFault {
        served.computeIfAbsent(label, p -> new AtomicInteger()).incrementAndGet();
        Object response = inner.invoke(op, request, callId);
        afterRun.accept(label);
        return response;
    }
}

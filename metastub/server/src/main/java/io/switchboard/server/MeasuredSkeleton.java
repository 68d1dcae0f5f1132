package io.switchboard.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.DeduplicatingSkeleton;

/**
 * One protocol's view of a component's skeleton that counts each call in {@link ServerCallStats}:
 * its outcome and how long the operation took (decoding and encoding are the protocol's and not
 * included). Export one per protocol around the one {@link DeduplicatingSkeleton} they share.
 */
final class MeasuredSkeleton implements Skeleton {
    private final Skeleton delegate;
    private final DeduplicatingSkeleton dedup;
    private final ServerCallStats stats;
    private final String component;
    private final String protocol;

    MeasuredSkeleton(Skeleton delegate, ServerCallStats stats, String component, String protocol) {
        this.delegate = delegate;
        this.dedup = delegate instanceof DeduplicatingSkeleton d ? d : null;
        this.stats = stats;
        this.component = component;
        this.protocol = protocol;
    }

    @Override
    public ServiceDescriptor descriptor() {
        return delegate.descriptor();
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request) throws DeclaredFault {
        return invoke(operation, request, null);
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request, String callId) throws DeclaredFault {
        boolean repeat = dedup != null && dedup.remembers(operation, callId);
        ServerCallStats.Outcome outcome = ServerCallStats.Outcome.ERROR;
        long started = System.nanoTime();
        try {
            Object response = delegate.invoke(operation, request, callId);
            outcome = ServerCallStats.Outcome.OK;
            return response;
        } catch (DeclaredFault fault) {
            outcome = ServerCallStats.Outcome.FAULT;
            throw fault;
        } finally {
            stats.record(component, operation.name(), protocol, repeat ? ServerCallStats.Outcome.REPEAT : outcome,
                    System.nanoTime() - started);
        }
    }

    @Override
    public void refused(OperationDescriptor operation, String reason) {
        stats.refused(component, operation.name(), protocol, reason);
    }
}

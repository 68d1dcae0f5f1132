package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import java.util.concurrent.CompletableFuture;

/**
 * A channel that looks its component up in the registry at its first call, not when the stub bean
 * is made: the component may be another instance of this very application, bound only once it is
 * ready. A lookup that finds nothing is tried again at the next call.
 */
final class LookupOnFirstCall implements Channel {
    private final Switchboard switchboard;
    private final String name;
    private final ServiceDescriptor descriptor;
    private volatile Channel replicas;

    LookupOnFirstCall(Switchboard switchboard, String name, ServiceDescriptor descriptor) {
        this.switchboard = switchboard;
        this.name = name;
        this.descriptor = descriptor;
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        return replicas().call(operation, request, options);
    }

    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        return replicas().callAsync(operation, request, options);
    }

    private Channel replicas() {
        Channel found = replicas;
        if (found == null) {
            synchronized (this) {
                if (replicas == null) {
                    // the replicas follow the registry from here on: one lookup is enough
                    replicas = switchboard.replicas(name, descriptor);
                }
                found = replicas;
            }
        }
        return found;
    }

    @Override
    public String toString() {
        return "stub channel for " + name;
    }
}

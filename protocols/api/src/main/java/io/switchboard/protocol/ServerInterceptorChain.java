package io.switchboard.protocol;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.util.List;
import java.util.Objects;

/**
 * A chain of {@link ServerInterceptor}s ending in a component's {@link Skeleton}, as one skeleton
 * to export over one protocol. Linked once when built: a call allocates its {@link ServerCall}
 * and nothing else to walk it. Export one chain per protocol; the same interceptor instances may
 * sit in several chains (a de-duplicator shared by every protocol, for one). API.
 *
 * <pre>{@code
 * Skeleton component = EchoComponent.skeleton(new EchoService());
 * DeduplicatingInterceptor once = new DeduplicatingInterceptor(64 << 20, Duration.ofMinutes(5));
 * grpcServer.export(ServerInterceptorChain.of("Echo", "grpc", List.of(audit, once), component));
 * soapServer.export(ServerInterceptorChain.of("Echo", "soap", List.of(audit, once), component));
 * }</pre>
 */
public final class ServerInterceptorChain implements Skeleton {
    private final String component;
    private final String protocol;
    private final List<ServerInterceptor> interceptors;
    private final Skeleton skeleton;
    private final ServiceDescriptor descriptor;
    private final ServerInterceptor.Chain first;

    private ServerInterceptorChain(String component, String protocol, List<ServerInterceptor> interceptors,
                                   Skeleton skeleton) {
        this.component = component;
        this.protocol = protocol;
        this.interceptors = interceptors;
        this.skeleton = skeleton;
        this.descriptor = skeleton.descriptor();
        ServerInterceptor.Chain chain = new Last(skeleton);
        for (int i = interceptors.size() - 1; i >= 0; i--) {
            chain = new Link(interceptors.get(i), chain);
        }
        this.first = chain;
    }

    /**
     * {@code interceptors} in the order a call meets them, then {@code skeleton}, served as
     * {@code component} (null: the skeleton's interface name) over {@code protocol} (null: not known).
     */
    public static ServerInterceptorChain of(String component, String protocol,
                                            List<? extends ServerInterceptor> interceptors, Skeleton skeleton) {
        Objects.requireNonNull(skeleton, "skeleton");
        return new ServerInterceptorChain(component != null ? component : skeleton.descriptor().name(), protocol,
                List.copyOf(interceptors), skeleton);
    }

    /** The interceptors, in the order a call meets them. */
    public List<ServerInterceptor> interceptors() {
        return interceptors;
    }

    /** The protocol this chain is exported over; null when not known. */
    public String protocol() {
        return protocol;
    }

    @Override
    public ServiceDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request) throws DeclaredFault {
        return invoke(operation, request, null);
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request, String callId) throws DeclaredFault {
        return first.proceed(new ServerCall(component, descriptor, protocol, operation, request, callId));
    }

    /** Tells every interceptor, in order, then the skeleton. */
    @Override
    public void refused(OperationDescriptor operation, String reason) {
        ServerCall call = new ServerCall(component, descriptor, protocol, operation, null, null);
        for (ServerInterceptor i : interceptors) {
            i.refused(call, reason);
        }
        skeleton.refused(operation, reason);
    }

    @Override
    public String toString() {
        return component + " over " + protocol + ": " + first;
    }

    private static final class Link implements ServerInterceptor.Chain {
        private final ServerInterceptor interceptor;
        private final ServerInterceptor.Chain next;

        Link(ServerInterceptor interceptor, ServerInterceptor.Chain next) {
            this.interceptor = interceptor;
            this.next = next;
        }

        @Override
        public Object proceed(ServerCall call) throws DeclaredFault {
            return interceptor.intercept(call, next);
        }

        @Override
        public String toString() {
            String name = interceptor.getClass().getSimpleName();
            return (name.isEmpty() ? interceptor.getClass().getName() : name) + " -> " + next;
        }
    }

    /** The component itself. */
    private static final class Last implements ServerInterceptor.Chain {
        private final Skeleton skeleton;

        Last(Skeleton skeleton) {
            this.skeleton = skeleton;
        }

        @Override
        public Object proceed(ServerCall call) throws DeclaredFault {
            return skeleton.invoke(call.operation(), call.request(), call.callId());
        }

        @Override
        public String toString() {
            return "the skeleton";
        }
    }
}

package io.switchboard.metastub;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.spi.Transport;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A second protocol for selection tests: calls the skeleton in the same JVM. Registered as
 * {@code inproc} in this module's test class path only.
 */
public final class InProcessTestProtocol implements ProtocolProvider {
    static final Map<String, Skeleton> SKELETONS = new ConcurrentHashMap<>();
    /** Failure to inject per endpoint address. */
    static final Map<String, Failure> FAILURES = new ConcurrentHashMap<>();

    /** How a call to an endpoint fails, to exercise the failsafe. */
    enum Failure {
        /** Like a refused connection: the operation never sees the request. */
        NOT_DELIVERED,
        /** The operation runs, then the connection breaks before the answer. */
        AFTER_RUNNING
    }
    private static final AtomicInteger IDS = new AtomicInteger();

    @Override
    public String name() {
        return "inproc";
    }

    @Override
    public ProtocolServer newServer(ServerSettings settings) {
        return new ProtocolServer() {
            private final String id = "srv" + IDS.incrementAndGet();

            @Override
            public String protocol() {
                return "inproc";
            }

            @Override
            public Endpoint export(Skeleton skeleton) {
                String address = "inproc://" + id + "/" + skeleton.descriptor().name();
                SKELETONS.put(address, skeleton);
                return new Endpoint("inproc", address);
            }

            @Override
            public void unexport(String componentName) {
                SKELETONS.remove("inproc://" + id + "/" + componentName);
            }

            @Override
            public void close() {
                SKELETONS.keySet().removeIf(k -> k.startsWith("inproc://" + id + "/"));
            }
        };
    }

    @Override
    public ProtocolClient newClient(ClientSettings settings) {
        return new ProtocolClient() {
            @Override
            public String protocol() {
                return "inproc";
            }

            @Override
            public Transport connect(ServiceDescriptor descriptor, Endpoint endpoint) {
                return new Transport() {
                    @Override
                    public String protocol() {
                        return "inproc";
                    }

                    @Override
                    public Endpoint endpoint() {
                        return endpoint;
                    }

                    @Override
                    public Object call(OperationDescriptor operation, Object request, CallOptions options)
                            throws DeclaredFault {
                        Skeleton s = SKELETONS.get(endpoint.address());
                        Failure failure = FAILURES.get(endpoint.address());
                        if (failure == Failure.NOT_DELIVERED) {
                            throw new io.switchboard.protocol.TransportException("inproc",
                                    io.switchboard.protocol.TransportException.Delivery.NOT_DELIVERED, "injected: refused", null);
                        }
                        if (failure == Failure.AFTER_RUNNING) {
                            s.invoke(operation, request, options.callId());
                            throw new io.switchboard.protocol.TransportException("inproc",
                                    io.switchboard.protocol.TransportException.Delivery.MAY_HAVE_RUN,
                                    "injected: connection reset after the operation ran", null);
                        }
                        if (s == null) {
                            throw new io.switchboard.protocol.TransportException("inproc",
                                    io.switchboard.protocol.TransportException.Delivery.NOT_DELIVERED,
                                    "nothing exported at " + endpoint.address(), null);
                        }
                        return s.invoke(operation, request, options.callId());
                    }

                    @Override
                    public void close() {
                    }
                };
            }

            @Override
            public void close() {
            }
        };
    }
}

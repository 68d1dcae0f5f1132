package io.switchboard.protocol.spi;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.util.Map;

/**
 * A protocol implementation, found through {@link java.util.ServiceLoader} and named by a short key
 * ({@code soap}, {@code grpc}, {@code local}). Register it in
 * {@code META-INF/services/io.switchboard.protocol.spi.ProtocolProvider}.
 */
public interface ProtocolProvider {
    /** The key that names the protocol in configuration, registry entries and the command line. */
    String name();

    ProtocolServer newServer(ServerSettings settings);

    ProtocolClient newClient(ClientSettings settings);

    /**
     * Whether this protocol reaches only components in the caller's own JVM (it has no network
     * form, like {@code local}). A client never uses such an endpoint unless
     * {@link #reachableInProcess} holds for it: a registry entry of a component in another JVM may
     * list one.
     */
    default boolean inProcessOnly() {
        return false;
    }

    /**
     * Whether a call to {@code endpoint} would run in this JVM, without a network: the component
     * is served here, now. The meta-stub then prefers this protocol over its stub policy.
     */
    default boolean reachableInProcess(Endpoint endpoint) {
        return false;
    }

    /**
     * Whether a selection policy may pick this protocol for a call on its own ({@code adaptive},
     * {@code size}, {@code first-common}); when false, only a call that pins it or a policy that
     * names it ({@code fixed:NAME}) reaches it. True by default.
     */
    default boolean chosenByPolicies() {
        return true;
    }

    /**
     * The largest call, in payload bytes (the request's estimate plus the response the operation
     * gave lately), for which a selection policy may pick this protocol on its own; a larger call
     * reaches it only when pinned or under {@code fixed:NAME}. Unbounded by default; tcp keeps to
     * small calls, so that they never queue behind bulk on its connections.
     */
    default long policyMaxBytes() {
        return Long.MAX_VALUE;
    }

    /**
     * Whether this is the failsafe: the protocol every party speaks, that serves the registry,
     * that every entry must list and that a call falls back to (SOAP). One provider on a class
     * path says so.
     */
    default boolean failsafe() {
        return false;
    }

    /**
     * Why {@code address} is not an endpoint of this protocol as a registry entry may carry it, or
     * null when it is one. By default: an absolute URI with a host and a port, at most 2,048 characters.
     */
    default String checkAddress(String address) {
        return Endpoints.checkNetworkAddress(address);
    }

    /**
     * Whether calls to {@code endpoint} are protected: they travel over TLS ({@code https://},
     * {@code grpcs://}) or never leave the JVM. A client never trades an entry's protected failsafe
     * endpoint for an unprotected one of another protocol (see the meta-stub's {@code ProtocolSuite}).
     * By default: only in-process-only protocols.
     */
    default boolean protectedEndpoint(Endpoint endpoint) {
        return inProcessOnly();
    }

    /**
     * What a registry entry publishes for a component served at {@code endpoint}: document kind
     * ({@link ServiceDescriptor#WSDL}, {@link ServiceDescriptor#PROTO}) to its text or URL. None by default.
     */
    default Map<String, String> published(ServiceDescriptor descriptor, Endpoint endpoint) {
        return Map.of();
    }
}

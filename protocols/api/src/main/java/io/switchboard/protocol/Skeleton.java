package io.switchboard.protocol;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;

/**
 * The server side of a component, independent of any protocol: takes a decoded request message
 * and returns the response message. The interface compiler generates one per component
 * ({@code XxxSkeleton}), which unwraps the request and calls the implementation.
 *
 * <pre>{@code
 * Skeleton skeleton = EchoComponent.skeleton(new EchoImpl());
 * Endpoint soap = soapServer.export(skeleton);
 * }</pre>
 */
public interface Skeleton {
    ServiceDescriptor descriptor();

    /**
     * Runs one operation. Returns the response message, or null for a one-way operation.
     *
     * @throws DeclaredFault the operation's declared fault, to be sent back as such
     */
    Object invoke(OperationDescriptor operation, Object request) throws DeclaredFault;

    /**
     * Runs one operation that arrived with a call id. Protocol servers call this form; a plain
     * skeleton ignores the id, {@link DeduplicatingSkeleton} uses it to run each call at most once.
     */
    default Object invoke(OperationDescriptor operation, Object request, String callId) throws DeclaredFault {
        return invoke(operation, request);
    }

    /**
     * Told by protocol servers that a request for {@code operation} was refused before it ran
     * (malformed, over a limit; {@code reason} is the refusal's code, e.g. {@code malformed}), so
     * that a server can count refusals. Does nothing by default; must not throw.
     */
    default void refused(OperationDescriptor operation, String reason) {
    }
}

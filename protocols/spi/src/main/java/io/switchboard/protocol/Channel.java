package io.switchboard.protocol;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;

/**
 * The client side of a component as generated stubs see it: one call in, one response out. A
 * {@link Transport} is a channel over one protocol; the meta-stub is a channel that picks a
 * transport per call.
 *
 * <pre>{@code
 * Echo echo = EchoComponent.stub(channel);
 * double[] back = echo.echoDoubles(new double[] {1, 2, 3});
 * }</pre>
 */
public interface Channel {
    /**
     * Sends {@code request} and waits for the response message (null for a one-way operation).
     *
     * @throws DeclaredFault the operation's declared fault, as the server raised it
     * @throws SwitchboardException anything else: transport failures, remote errors, refusals
     */
    Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault;
}

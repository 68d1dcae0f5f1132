package io.switchboard.protocol;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import java.util.concurrent.CompletableFuture;

/**
 * The client side of a component as generated stubs see it: one call in, one response out. A
 * {@link Transport} is a channel over one protocol; the meta-stub is a channel that picks a
 * transport per call.
 *
 * <pre>{@code
 * Echo echo = EchoComponent.stub(channel);
 * double[] back = echo.echoDoubles(new double[] {1, 2, 3});
 * CompletableFuture<double[]> later = echo.echoDoublesAsync(new double[] {1, 2, 3});
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

    /**
     * Sends {@code request} without waiting: the future completes with what {@link #call} would
     * return, or exceptionally with what it would throw (the exception itself, or wrapped in a
     * {@link java.util.concurrent.CompletionException} by later stages; {@link AsyncCalls#unwrap}).
     * Cancelling the future cancels the call as far as the channel can: the default runs the
     * blocking call on a shared pool ({@link AsyncCalls#onPool}) and interrupts it; a protocol
     * with a non-blocking client overrides this and cancels the call on the wire.
     */
    default CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        return AsyncCalls.onPool(this, operation, request, options);
    }
}

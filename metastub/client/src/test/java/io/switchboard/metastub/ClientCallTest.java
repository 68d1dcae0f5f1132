package io.switchboard.metastub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** ClientCall.send, the one place where blocking and asynchronous calls part. */
class ClientCallTest {
    private final OperationDescriptor ping = ConformanceComponent.DESCRIPTOR.operation("ping");

    /** A channel that says which form was called, and on which thread. */
    private static final class Probe implements Channel {
        Thread blockingOn;
        final CompletableFuture<Object> async = new CompletableFuture<>();

        @Override
        public Object call(OperationDescriptor operation, Object request, CallOptions options) {
            blockingOn = Thread.currentThread();
            return "blocking";
        }

        @Override
        public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
            return async;
        }
    }

    @Test
    void aBlockingCallIsSentOnTheCallersThreadAndIsCompleteAtOnce() {
        Probe channel = new Probe();
        CompletableFuture<Object> f = new ClientCall("Conformance", ping, null, CallOptions.DEFAULT, null).send(channel);
        assertTrue(f.isDone());
        assertEquals("blocking", f.join());
        assertSame(Thread.currentThread(), channel.blockingOn);
    }

    @Test
    void anAsynchronousCallUsesTheChannelsOwnFormAndTheCallersCancelReachesIt() {
        Probe channel = new Probe();
        CompletableFuture<Object> caller = new CompletableFuture<>();
        CompletableFuture<Object> f = new ClientCall("Conformance", ping, null, CallOptions.DEFAULT, caller).send(channel);
        assertSame(channel.async, f);
        assertFalse(f.isDone());
        caller.cancel(true);
        assertTrue(channel.async.isCancelled());
    }

    @Test
    void aChannelThatThrowsGivesAFailedFuture() {
        Channel broken = new Channel() {
            @Override
            public Object call(OperationDescriptor operation, Object request, CallOptions options) {
                throw new IllegalStateException("closed");
            }

            @Override
            public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request,
                                                       CallOptions options) {
                throw new IllegalStateException("closed");
            }
        };
        assertTrue(new ClientCall("Conformance", ping, null, CallOptions.DEFAULT, null).send(broken)
                .isCompletedExceptionally());
        assertTrue(new ClientCall("Conformance", ping, null, CallOptions.DEFAULT, new CompletableFuture<>())
                .send(broken).isCompletedExceptionally());
    }
}

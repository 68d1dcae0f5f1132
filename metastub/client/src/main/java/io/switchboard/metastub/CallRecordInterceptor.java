package io.switchboard.metastub;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.WireBytes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records every attempt when it ends: a {@link CallRecord} (timed from here, with the wire bytes
 * the transport counted) that the choosing policy learns from and every {@link CallListener}
 * (metrics: {@link MicrometerCallListener}) is told of; for size-aware policies also the response
 * payload, to learn what the operation answers to a small request. A blocking attempt is recorded
 * on the caller's thread without a stage of its own. It also counts the attempts under way in
 * this JVM, over all meta-stubs, for {@link CallRecord#callsInFlight()}.
 */
final class CallRecordInterceptor implements ClientInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(MetaStub.class);
    /** Attempts under way in this JVM: one machine's cores are shared by all its stubs. */
    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();

    private final List<CallListener> listeners;
    private final MessageSize sizes;
    private final ResponseSizes responseSizes;

    /** @param listeners read on every call (a copy-on-write list: listeners may be added later) */
    CallRecordInterceptor(List<CallListener> listeners, MessageSize sizes, ResponseSizes responseSizes) {
        this.listeners = listeners;
        this.sizes = sizes;
        this.responseSizes = responseSizes;
    }

    @Override
    public CompletableFuture<Object> intercept(ClientCall call, Chain next) {
        SelectionPolicy learner = call.policy;
        if (!call.context.estimated() && learner.learningEstimateCap() > 0) {   // a pinned call: nobody counted it yet
            call.context.estimatedBytes(learner.learningEstimateCap());
        }
        int inFlight = IN_FLIGHT.incrementAndGet();
        long start = System.nanoTime();
        CompletableFuture<Object> sent;
        try {
            sent = next.proceed(call);
        } catch (RuntimeException | Error e) {
            IN_FLIGHT.decrementAndGet();
            throw e;
        }
        if (sent.isDone()) {
            record(call, start, inFlight, sent);
            return sent;
        }
        return sent.whenComplete((response, failure) -> record(call, start, inFlight, sent));
    }

    private void record(ClientCall call, long start, int inFlight, CompletableFuture<Object> done) {
        IN_FLIGHT.decrementAndGet();
        Throwable thrown = RetryingInterceptor.failureOf(done);
        OperationDescriptor operation = call.operation();
        SelectionPolicy learner = call.policy;
        String error = null;
        long responseBytes = -1;
        if (thrown == null) {
            Object response = done.join();
            if (response != null && learner.usesResponseSizes()) {
                responseBytes = sizes.estimateResponse(response, operation, ResponseSizes.RESPONSE_CAP);
                responseSizes.learn(operation.name(), call.context.knownEstimate(), responseBytes);
            }
        } else if (thrown instanceof RuntimeException) {
            error = thrown.getClass().getSimpleName() + ": " + thrown.getMessage();
        }
        WireBytes wire = call.wire;
        CallRecord r = new CallRecord(call.component(), operation.name(), call.options().callId(), call.protocol(),
                call.address(), call.reason(), call.context.knownEstimate(),
                Duration.ofNanos(System.nanoTime() - start), error, responseBytes,
                wire == null ? -1 : wire.sent(), wire == null ? -1 : wire.received(), inFlight, call.via());
        learner.observe(r);
        if (LOG.isDebugEnabled()) {
            LOG.debug("{}.{} over {}{} because {} in {} µs, {} bytes sent, {} received{}", r.component(), r.operation(),
                    r.protocol(), r.via() == null ? "" : " via " + r.via(), r.reason(), r.latency().toNanos() / 1000,
                    r.requestWireBytes(), r.responseWireBytes(), r.error() == null ? "" : " failed: " + r.error());
        }
        for (CallListener l : listeners) {
            try {
                l.onCall(r);
            } catch (RuntimeException e) {
                LOG.warn("call listener {} failed: {}", l, e.toString());
            }
        }
    }
}

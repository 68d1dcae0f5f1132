package io.switchboard.metastub;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.WireBytes;
import io.switchboard.protocol.spi.Transport;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One call as {@link ClientInterceptor}s see it, the one object a call allocates for its way down
 * the chain: what is called, with which options, and, once chosen, over which protocol, why, and
 * which attempt this is. Steps fill it in as the call goes down; attempts follow one another, so
 * one thread at a time reads or changes it.
 *
 * <pre>{@code
 * ClientInterceptor patient = (call, next) -> {
 *     call.options(call.options().withTimeout(Duration.ofSeconds(30)));
 *     return next.proceed(call);
 * };
 * }</pre>
 */
public class ClientCall {
    private final String component;
    private final OperationDescriptor operation;
    private final Object request;
    /** The future the asynchronous caller holds (its cancellation cancels the attempt); null for a blocking call. */
    private final CompletableFuture<Object> caller;
    private CallOptions options;
    private String protocol;
    private String reason;
    private int attempt;
    private boolean fallback;

    // what the meta-stub's own steps hand each other
    ProtocolSuite suite;
    CallContext context;
    /** The policy that chose, and learns from the records: the call's, the operation's or the stub's. */
    SelectionPolicy policy;
    boolean pinned;
    Transport transport;
    WireBytes wire;
    /** The failure the failsafe fell back from, and its protocol. */
    io.switchboard.protocol.TransportException fallbackCause;
    String fallbackFrom;
    /** What each attempt may take at most, fixed at the first one, when the call has a deadline (DeadlineInterceptor). */
    java.time.Duration attemptTimeout;
    /** The failure of an attempt before this one: the first that may have run the operation, else the latest. */
    Throwable earlierFailure;

    /**
     * @param caller the future an asynchronous caller holds, or null for a blocking call (then
     *               every attempt completes before its step returns)
     */
    public ClientCall(String component, OperationDescriptor operation, Object request, CallOptions options,
                      CompletableFuture<Object> caller) {
        this.component = component;
        this.operation = operation;
        this.request = request;
        this.options = Objects.requireNonNull(options, "options");
        this.caller = caller;
    }

    /** The component's interface name. */
    public String component() {
        return component;
    }

    public OperationDescriptor operation() {
        return operation;
    }

    public Object request() {
        return request;
    }

    /** The options the next steps and the transport get (with the call id once given one). */
    public CallOptions options() {
        return options;
    }

    /** Replaces the options for the steps after this one (for this attempt and those after it). */
    public void options(CallOptions newOptions) {
        this.options = Objects.requireNonNull(newOptions, "options");
    }

    /** Whether the caller waits: its attempts complete on its thread before each step returns. */
    public boolean blocking() {
        return caller == null;
    }

    /** Whether an asynchronous caller cancelled the call: no further attempt is made. */
    public boolean cancelled() {
        return caller != null && caller.isCancelled();
    }

    /** The protocol of this attempt; null before one is chosen. */
    public String protocol() {
        return protocol;
    }

    /** Why this protocol: the policy and level that chose it, "pinned on call", or "fallback from ...". */
    public String reason() {
        return reason;
    }

    /** 0 for the first attempt, then 1, 2, ... for each attempt repeated by a step above. */
    public int attempt() {
        return attempt;
    }

    /** Whether this attempt is the failsafe's repetition over SOAP. */
    public boolean fallback() {
        return fallback;
    }

    /** The address of this attempt's endpoint; null before the transport is found. */
    public String address() {
        return transport == null ? null : transport.endpoint().address();
    }

    /**
     * How this attempt reached its endpoint, when its protocol has more than one way
     * ({@link Transport#via()}: tcp's {@code unix} or {@code tcp}); null otherwise.
     */
    public String via() {
        return transport == null ? null : transport.via();
    }

    /** Sets the protocol of the first attempt and why it was chosen. */
    public void route(String newProtocol, String why) {
        this.protocol = newProtocol;
        this.reason = why;
    }

    /** Makes the next attempt a repetition: over {@code newProtocol} (null: the same), for {@code why}. */
    public void repeat(String newProtocol, String why, boolean isFallback) {
        if (newProtocol != null) {
            this.protocol = newProtocol;
        }
        this.reason = why;
        this.fallback = isFallback;
        this.attempt++;
        this.transport = null;
        this.wire = null;
    }

    /**
     * Sends this call over {@code channel}, the last step of a chain: blocking, the outcome as a
     * completed future; otherwise the channel's own asynchronous call, which the caller's
     * cancellation cancels. The one place where blocking and asynchronous calls part. Never throws.
     */
    public CompletableFuture<Object> send(Channel channel) {
        if (caller == null) {
            return AsyncCalls.now(channel, operation, request, options);
        }
        CompletableFuture<Object> sent;
        try {
            sent = channel.callAsync(operation, request, options);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        AsyncCalls.cancelWith(caller, sent);
        return sent;
    }

    /** Notes a failed attempt before another one starts (a repeating step's loop). */
    void attemptFailed(Throwable failure) {
        if (!DeadlineInterceptor.mayHaveRun(earlierFailure)) {
            earlierFailure = failure;
        }
    }

    @Override
    public String toString() {
        return "ClientCall[" + component + "." + operation.name() + ", " + protocol + ", attempt " + attempt
                + (fallback ? ", fallback" : "") + "]";
    }
}

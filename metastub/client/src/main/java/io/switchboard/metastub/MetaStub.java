package io.switchboard.metastub;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.WireBytes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A channel that chooses the protocol of every call among those client and server share. Give it
 * to a generated stub: the stub stays the same whatever protocol carries each call.
 *
 * <p>Which policy decides, from the most specific to the least: a protocol pinned on the call
 * ({@link #PROTOCOL}), a policy set on the call ({@link #POLICY}), a policy set for the operation,
 * the in-process preference, the stub's policy. The in-process preference: when the server's
 * endpoints include one that runs in this JVM (the {@code local} protocol, for a component
 * exported here; {@link io.switchboard.protocol.spi.ProtocolProvider#reachableInProcess}), the call
 * goes there, with the reason {@code in-process (...)}; {@link Builder#preferInProcess} turns it
 * off. An in-process-only endpoint of another JVM is never a candidate.
 *
 * <p>Every call has a non-blocking form, {@link #callAsync} (generated stubs: {@code opAsync}),
 * on the same path: the same negotiation, failsafe and call records; cancelling its future
 * cancels the attempt under way (on the wire where the protocol can) and starts no fallback.
 * One-way operations return when the server has run them; see docs/guide.md for the delivery each
 * protocol guarantees.
 *
 * <p>The failsafe: when a call chosen by a policy fails on a protocol other than SOAP with a
 * {@link TransportException}, it runs again over SOAP with the same call id if that cannot run
 * the operation twice (the request never reached the operation, the operation is idempotent, or
 * the server answers a repeated call id with the first result); otherwise the caller gets a
 * {@code TransportException} saying the operation may have run. The failed protocol is avoided
 * for a back-off period. Refusals, declared faults and remote errors are answers: never repeated.
 * A call pinned to a protocol goes there and is not repeated elsewhere.
 *
 * <pre>{@code
 * MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR)
 *         .protocols("grpc", "soap")
 *         .endpoints(entry.endpoints())
 *         .policy(new SizePolicy())
 *         .build();
 * EchoStub echo = EchoComponent.stub(channel);
 * echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "soap")).empty();
 * CompletableFuture<double[]> later = echo.echoDoublesAsync(values);
 * }</pre>
 */
public final class MetaStub implements Channel, AutoCloseable {
    /** Pins the protocol of one call (or of a stub, through {@code withOptions}). */
    public static final CallOptions.Key<String> PROTOCOL = CallOptions.Key.of("switchboard.protocol", null);
    /** Sets the selection policy of one call (or of a stub, through {@code withOptions}). */
    public static final CallOptions.Key<SelectionPolicy> POLICY = CallOptions.Key.of("switchboard.policy", null);

    private static final Logger LOG = LoggerFactory.getLogger(MetaStub.class);

    private final ServiceDescriptor descriptor;
    /** Immutable; swapped whole by {@link #updateEndpoints} so that a call sees one consistent suite. */
    private volatile ProtocolSuite suite;
    private final SelectionPolicy policy;
    private final Map<String, SelectionPolicy> operationPolicies = new ConcurrentHashMap<>();
    private final ClientSettings settings;
    private final Map<String, ProtocolClient> clients = new ConcurrentHashMap<>();
    /** By endpoint, not protocol: a server that moved gets a new transport, and the old one is closed. */
    private final Map<Endpoint, Transport> transports = new ConcurrentHashMap<>();
    private final List<CallListener> listeners = new CopyOnWriteArrayList<>();
    private final ProtocolHealth health;
    private final boolean serverRecognisesCallIds;
    private final MessageSize sizes;
    private final boolean preferInProcess;
    /**
     * Recent response payload per operation to a small request (an average over the last few), for
     * size-aware policies: a large request is a bulk call anyway; a small one may not be.
     */
    private final Map<String, Long> responseSizes = new ConcurrentHashMap<>();
    /** Responses are counted up to this far: enough to tell a bulk answer, bounded for a long list. */
    static final long RESPONSE_CAP = 64 * 1024;
    /** Requests up to this size teach what the operation answers to a small request. */
    static final long SMALL_REQUEST = 2 * 1024;
    private volatile boolean closed;

    private MetaStub(Builder b) {
        this.descriptor = b.descriptor;
        this.suite = ProtocolSuite.of(b.protocols, b.endpoints);
        this.policy = b.policy;
        this.settings = b.settings;
        this.listeners.addAll(b.listeners);
        this.health = new ProtocolHealth(b.backoff, b.maxBackoff, b.nanoClock);
        this.serverRecognisesCallIds = b.serverRecognisesCallIds;
        this.sizes = new MessageSize(descriptor.model());
        this.preferInProcess = b.preferInProcess;
    }

    public static Builder builder(ServiceDescriptor descriptor) {
        return new Builder(descriptor);
    }

    public ProtocolSuite suite() {
        return suite;
    }

    /**
     * Points this meta-stub at the server's new endpoints (its registry entry changed: it
     * restarted on other ports, or speaks other protocols now). Calls already under way finish
     * on the transports they hold, except that transports to endpoints that went away are closed
     * (a call on one then fails as its protocol reports a closed connection); calls started
     * afterwards see the new suite. A protocol whose endpoint changed leaves back-off: the new
     * endpoint has not failed yet.
     *
     * <pre>{@code
     * channel.updateEndpoints(changedEntry.endpoints());
     * }</pre>
     *
     * @throws IllegalArgumentException client and new server do not share SOAP; nothing changes
     */
    public synchronized void updateEndpoints(List<Endpoint> serverEndpoints) {
        ProtocolSuite old = suite;
        ProtocolSuite next = ProtocolSuite.of(old.clientProtocols(), serverEndpoints);
        suite = next;
        List<Endpoint> kept = next.serverEndpoints();
        for (Endpoint e : old.serverEndpoints()) {
            if (!kept.contains(e)) {
                health.succeeded(e.protocol());
            }
        }
        transports.entrySet().removeIf(t -> {
            if (kept.contains(t.getKey())) {
                return false;
            }
            t.getValue().close();
            return true;
        });
        LOG.debug("{}: endpoints now {}", descriptor.name(), kept);
    }

    public SelectionPolicy policy() {
        return policy;
    }

    /** Sets the policy for one operation, over the stub's; null removes it. */
    public void setOperationPolicy(String operation, SelectionPolicy operationPolicy) {
        descriptor.operation(operation);
        if (operationPolicy == null) {
            operationPolicies.remove(operation);
        } else {
            operationPolicies.put(operation, operationPolicy);
        }
    }

    public void addListener(CallListener listener) {
        listeners.add(Objects.requireNonNull(listener));
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        // the blocking form runs the same path as the asynchronous one, with blocking attempts: its
        // future is complete when run returns, and await throws what the attempt threw
        return AsyncCalls.await(run(operation, request, options, null));
    }

    /**
     * The non-blocking form of {@link #call}: the same negotiation, failsafe and call records,
     * with each attempt made through the transport's own {@link Channel#callAsync}. Cancelling
     * the future cancels the attempt in progress (on the wire where its protocol can) and starts
     * no fallback.
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        return AsyncCalls.start(caller -> run(operation, request, options, caller));
    }

    /**
     * One call, blocking ({@code caller} null: every attempt completes before it returns) or not
     * ({@code caller} is the future the caller holds; cancelling it cancels the attempt under way).
     */
    private CompletableFuture<Object> run(OperationDescriptor operation, Object request, CallOptions options,
                                          CompletableFuture<Object> caller) {
        if (closed) {
            throw new IllegalStateException("meta-stub for " + descriptor.name() + " is closed");
        }
        CallOptions withId = options.callId() != null ? options : options.withCallId(CallIds.next());
        ProtocolSuite suite = this.suite;   // one suite for the whole call, even if the endpoints change meanwhile
        List<String> candidates = health.filter(suite.candidates());
        CallContext call = new CallContext(operation, request, suite, sizes)
                .expectingResponse(responseSizes.getOrDefault(operation.name(), 0L));
        String protocol;
        String reason;
        String pinned = options.get(PROTOCOL);
        if (pinned != null) {
            if (!suite.candidates().contains(pinned)) {
                throw new NoCommonProtocolException("call pins " + pinned + ", which client and server do not share "
                        + suite.candidates());
            }
            // a pinned call goes where it is told, also while that protocol is in back-off, and does not fall back
            return attempt(pinned, "pinned on call", call, policy, withId, caller);
        }
        SelectionPolicy chosen = options.get(POLICY);
        String level = "call";
        if (chosen == null) {
            chosen = operationPolicies.get(operation.name());
            level = "operation";
        }
        if (chosen == null) {
            chosen = policy;
            level = "stub";
        }
        String inProcess = suite.inProcessCandidate();
        if (preferInProcess && "stub".equals(level) && inProcess != null && candidates.contains(inProcess)) {
            // the component is served in this JVM: no policy set on the call or operation picks otherwise
            protocol = inProcess;
            reason = "in-process (the component is served in this JVM; over the stub's " + chosen.name() + " policy)";
        } else {
            protocol = chosen.select(call, candidates);
            reason = chosen.name() + " (" + level + " policy"
                    + (candidates.size() < suite.candidates().size() ? "; " + health.describeAvoided() : "") + ")";
        }
        if (ProtocolSuite.FAILSAFE.equals(protocol)) {
            return attempt(protocol, reason, call, chosen, withId, caller);
        }
        SelectionPolicy learner = chosen;
        return attempt(protocol, reason, call, chosen, withId, caller).exceptionallyCompose(failure -> {
            Throwable first = AsyncCalls.unwrap(failure);
            if (!(first instanceof TransportException e) || (caller != null && caller.isCancelled())) {
                return CompletableFuture.failedFuture(first);
            }
            health.failed(protocol);
            String why = repeatable(operation, e);
            if (why == null) {
                return CompletableFuture.failedFuture(new TransportException(protocol, TransportException.Delivery.MAY_HAVE_RUN,
                        operation.name() + " failed and was not repeated over SOAP: it is not idempotent and the "
                                + "server does not recognise call ids (" + e.getMessage() + ")", e));
            }
            LOG.debug("{}.{} over {} failed ({}); repeating over SOAP: {}", descriptor.name(), operation.name(),
                    protocol, e.getMessage(), why);
            return attempt(ProtocolSuite.FAILSAFE, "fallback from " + protocol + " (" + why + ")", call, learner, withId,
                    caller).exceptionallyCompose(secondFailure -> {
                Throwable again = AsyncCalls.unwrap(secondFailure);
                if (e.delivery() == TransportException.Delivery.MAY_HAVE_RUN && again instanceof TransportException t
                        && t.delivery() == TransportException.Delivery.NOT_DELIVERED) {
                    // the first attempt may have run even though the fallback never arrived: say so,
                    // or a caller that moves to another replica would run the operation twice
                    return CompletableFuture.failedFuture(new TransportException(ProtocolSuite.FAILSAFE,
                            TransportException.Delivery.MAY_HAVE_RUN, operation.name() + " over " + protocol
                            + " may have run; the fallback over SOAP was not delivered (" + again.getMessage() + ")",
                            again));
                }
                return CompletableFuture.failedFuture(again);
            });
        });
    }

    /** Why a call that failed on a fast protocol may run again over SOAP, or null if it may not. */
    private String repeatable(OperationDescriptor operation, TransportException failure) {
        if (failure.delivery() == TransportException.Delivery.NOT_DELIVERED) {
            return "the request never reached the operation";
        }
        if (operation.idempotent()) {
            return "the operation is idempotent";
        }
        if (serverRecognisesCallIds) {
            return "the server answers a repeated call id with the first result";
        }
        return null;
    }

    /**
     * One attempt over one protocol, recorded when it ends. Blocking ({@code caller} null) it
     * returns a completed future; otherwise the transport's own future, which {@code caller}'s
     * cancellation cancels. Never throws: a failure to even start is the future's failure.
     */
    private CompletableFuture<Object> attempt(String protocol, String reason, CallContext call, SelectionPolicy learner,
                                              CallOptions options, CompletableFuture<Object> caller) {
        OperationDescriptor operation = call.operation();
        Object request = call.request();
        Transport transport;
        try {
            transport = transport(call.suite(), protocol);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (!call.estimated() && learner.learningEstimateCap() > 0) {    // a pinned call: nobody counted it yet
            call.estimatedBytes(learner.learningEstimateCap());
        }
        long start = System.nanoTime();
        WireBytes wire = new WireBytes();   // what the transport really sent and received, for the record
        CallOptions wired = options.withWireBytes(wire);
        CompletableFuture<Object> sent;
        if (caller == null) {
            sent = AsyncCalls.now(transport, operation, request, wired);
        } else {
            try {
                sent = transport.callAsync(operation, request, wired);
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            AsyncCalls.cancelWith(caller, sent);
        }
        return sent.handle((response, failure) -> {
            String error = null;
            long responseBytes = -1;
            Throwable thrown = failure == null ? null : AsyncCalls.unwrap(failure);
            try {
                if (thrown == null) {
                    health.succeeded(protocol);
                    if (response != null && learner.usesResponseSizes()) {
                        responseBytes = sizes.estimateResponse(response, operation, RESPONSE_CAP);
                        long asked = call.knownEstimate();
                        if (asked >= 0 && asked <= SMALL_REQUEST) {
                            // what a small question gets back: echo-like operations answer small, a result() large
                            responseSizes.merge(operation.name(), responseBytes, (was, now) -> (was * 3 + now) / 4);
                        }
                    }
                    return response;
                }
                if (thrown instanceof DeclaredFault) {
                    health.succeeded(protocol);
                } else if (thrown instanceof RuntimeException) {
                    error = thrown.getClass().getSimpleName() + ": " + thrown.getMessage();
                }
                throw new CompletionException(thrown);
            } finally {
                CallRecord r = new CallRecord(descriptor.name(), operation.name(), options.callId(), protocol,
                        transport.endpoint().address(), reason, call.knownEstimate(), Duration.ofNanos(System.nanoTime() - start),
                        error, responseBytes, wire.sent(), wire.received());
                learner.observe(r);
                record(r);
            }
        });
    }

    private void record(CallRecord r) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("{}.{} over {} because {} in {} µs, {} bytes sent, {} received{}", r.component(), r.operation(),
                    r.protocol(), r.reason(), r.latency().toNanos() / 1000, r.requestWireBytes(), r.responseWireBytes(),
                    r.error() == null ? "" : " failed: " + r.error());
        }
        for (CallListener l : listeners) {
            try {
                l.onCall(r);
            } catch (RuntimeException e) {
                LOG.warn("call listener {} failed: {}", l, e.toString());
            }
        }
    }

    private Transport transport(ProtocolSuite callSuite, String protocol) {
        Endpoint endpoint = callSuite.endpoint(protocol);
        return transports.computeIfAbsent(endpoint, e -> {
            ProtocolClient client = clients.computeIfAbsent(protocol, name -> Protocols.get(name).newClient(settings));
            return client.connect(descriptor, e);
        });
    }

    @Override
    public void close() {
        closed = true;
        for (Transport t : transports.values()) {
            t.close();
        }
        for (ProtocolClient c : clients.values()) {
            c.close();
        }
        transports.clear();
        clients.clear();
    }

    /**
     * Configures a {@link MetaStub}. Defaults: the client speaks every protocol on the class path,
     * SOAP last; the adaptive policy.
     */
    public static final class Builder {
        private final ServiceDescriptor descriptor;
        private List<String> protocols;
        private List<Endpoint> endpoints = List.of();
        private SelectionPolicy policy = new AdaptivePolicy();
        private ClientSettings settings = ClientSettings.defaults();
        private final List<CallListener> listeners = new ArrayList<>();
        private boolean serverRecognisesCallIds;
        private Duration backoff = Duration.ofSeconds(2);
        private Duration maxBackoff = Duration.ofMinutes(1);
        private java.util.function.LongSupplier nanoClock = System::nanoTime;
        private boolean preferInProcess = true;

        private Builder(ServiceDescriptor descriptor) {
            this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
            List<String> all = new ArrayList<>(Protocols.names());
            all.remove(ProtocolSuite.FAILSAFE);
            all.add(ProtocolSuite.FAILSAFE);
            this.protocols = all;
        }

        /** The client's protocols, most preferred first. */
        public Builder protocols(String... names) {
            this.protocols = List.of(names);
            return this;
        }

        public Builder protocols(List<String> names) {
            this.protocols = List.copyOf(names);
            return this;
        }

        /** The server's endpoints, as its registry entry lists them. */
        public Builder endpoints(List<Endpoint> serverEndpoints) {
            this.endpoints = List.copyOf(serverEndpoints);
            return this;
        }

        public Builder policy(SelectionPolicy stubPolicy) {
            this.policy = Objects.requireNonNull(stubPolicy);
            return this;
        }

        public Builder settings(ClientSettings clientSettings) {
            this.settings = Objects.requireNonNull(clientSettings);
            return this;
        }

        public Builder listener(CallListener listener) {
            this.listeners.add(Objects.requireNonNull(listener));
            return this;
        }

        /**
         * Whether the server runs each call id at most once (its registry entry says
         * {@code call-ids}); then any call that failed on a fast protocol may be repeated over SOAP.
         */
        public Builder serverRecognisesCallIds(boolean recognises) {
            this.serverRecognisesCallIds = recognises;
            return this;
        }

        /** How long a protocol that failed is avoided: {@code initial}, doubling per failure, at most {@code max}. */
        public Builder backoff(Duration initial, Duration max) {
            this.backoff = Objects.requireNonNull(initial);
            this.maxBackoff = Objects.requireNonNull(max);
            return this;
        }

        /**
         * Whether a component served in this JVM is called in process (default) whatever the
         * stub's policy says; false leaves every call to the policy. Policies set on a call or
         * an operation, and pinned protocols, win over this preference either way.
         */
        public Builder preferInProcess(boolean prefer) {
            this.preferInProcess = prefer;
            return this;
        }

        /** The clock back-off is measured with (tests pass a fake one). */
        public Builder nanoClock(java.util.function.LongSupplier clock) {
            this.nanoClock = Objects.requireNonNull(clock);
            return this;
        }

        public MetaStub build() {
            return new MetaStub(this);
        }
    }
}

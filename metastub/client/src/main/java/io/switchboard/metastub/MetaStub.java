package io.switchboard.metastub;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.spi.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
 * <p>Every call, blocking or not, goes down one chain of {@link ClientInterceptor}s, built once
 * per meta-stub (the constructor shows it), one concern each:
 * <ol>
 * <li>{@code PhaseMarkInterceptor}: the benchmark's call start and end marks, only in a JVM run
 * with {@code -Dswitchboard.phases=true} ({@link io.switchboard.protocol.spi.PhaseMarks});
 * <li>{@link DeadlineInterceptor#call}: fixes the whole call's deadline
 * ({@link CallOptions#withDeadlineAfter}), if it has one, when the call starts;
 * <li>{@code CallIdInterceptor}: the call id, kept over every attempt;
 * <li>{@code SelectionInterceptor}: the protocol, and why;
 * <li>{@code FailsafeInterceptor}: the fallback to SOAP and the protocols' back-off;
 * <li>{@link DeadlineInterceptor#attempt}: per attempt, the smaller of the time left and the
 * attempt's timeout; no attempt (a fallback) once the deadline has passed;
 * <li>{@code ConnectInterceptor}: the transport to the chosen endpoint;
 * <li>{@code TracingInterceptor}: an OpenTelemetry client span per attempt, when tracing is on
 * ({@link Builder#tracing});
 * <li>the interceptors added with {@link Builder#interceptor}, once per attempt;
 * <li>{@code CallRecordInterceptor}: the {@link CallRecord} of each attempt, for the policy and the listeners;
 * <li>{@code WireByteInterceptor}: where the transport counts the bytes it moved;
 * <li>the transport, which only moves bytes.
 * </ol>
 *
 * <p>The protocol clients (a gRPC channel per server address, a SOAP connection pool) are a
 * {@link ProtocolClients}: a meta-stub built alone makes its own and closes them with itself; one
 * built by a {@code Switchboard} shares the switchboard's ({@link Builder#clients}), which the
 * switchboard closes.
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
    /** The protocol clients: this stub's own (closed with it) or shared ones (closed by their owner). */
    private final ProtocolClients clients;
    private final boolean ownsClients;
    /** By endpoint, not protocol: a server that moved gets a new transport, and the old one is closed. */
    private final Map<Endpoint, Transport> transports = new ConcurrentHashMap<>();
    private final List<CallListener> listeners = new CopyOnWriteArrayList<>();
    private final ProtocolHealth health;
    /** Built once: a call walks it without allocating. */
    private final ClientInterceptor.Chain chain;
    private volatile boolean closed;

    private MetaStub(Builder b) {
        this.descriptor = b.descriptor;
        this.suite = ProtocolSuite.of(b.protocols, b.endpoints);
        this.policy = b.policy;
        this.ownsClients = b.clients == null;
        this.clients = ownsClients ? new ProtocolClients(b.settings) : b.clients;
        this.listeners.addAll(b.listeners);
        this.health = new ProtocolHealth(b.backoff, b.maxBackoff, b.nanoClock);
        MessageSize sizes = new MessageSize(descriptor.model());
        ResponseSizes responseSizes = new ResponseSizes();
        // the whole call path, in the order a call meets it
        List<ClientInterceptor> steps = new ArrayList<>();
        if (PhaseMarks.ENABLED) {   // a constant: a JVM without phase marks has no such step
            steps.add(new PhaseMarkInterceptor(PhaseMarks::mark));
        }
        steps.add(DeadlineInterceptor.call(b.nanoClock));   // outside every step that repeats a call
        steps.add(new CallIdInterceptor());
        steps.add(new SelectionInterceptor(this::suite, policy, operationPolicies, health, sizes, responseSizes,
                b.preferInProcess));
        steps.add(new FailsafeInterceptor(health, b.serverRecognisesCallIds));
        steps.add(DeadlineInterceptor.attempt(b.nanoClock, clients.settings().callTimeout()));
        steps.add(new ConnectInterceptor(this::transport));
        io.opentelemetry.api.OpenTelemetry tracing = b.tracingSet ? b.tracing
                : io.opentelemetry.api.GlobalOpenTelemetry.get();
        if (!TracingInterceptor.isNoop(tracing)) {
            steps.add(new TracingInterceptor(tracing));     // a span per attempt, around the user's steps
        }
        steps.addAll(b.interceptors);       // once per attempt: they see protocol, reason, attempt, fallback
        steps.add(new CallRecordInterceptor(listeners, sizes, responseSizes));
        steps.add(new WireByteInterceptor());
        this.chain = InterceptorChain.of(steps, new TransportStep());
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
        if (ServerCallContext.current() != null) {
            return awaitWithin(callAsync(operation, request, options));
        }
        // the same chain as the asynchronous form: every attempt completes on this thread before
        // proceed returns, and await throws what the attempt threw
        return AsyncCalls.await(chain.proceed(newCall(operation, request, options, null)));
    }

    /**
     * A blocking call made by an operation, on its thread: made as an asynchronous one, so that
     * the operation's cancel (its caller's, or its deadline's) cancels it on the wire whatever its
     * protocol; an interrupt of the waiting thread cancels it too.
     */
    private static Object awaitWithin(CompletableFuture<Object> call) throws DeclaredFault {
        while (!call.isDone()) {
            try {
                call.get();
            } catch (InterruptedException e) {
                call.cancel(true);
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.CancellationException e) {
                break;   // done: await throws it as the blocking form would
            }
        }
        return AsyncCalls.await(call);
    }

    /**
     * The non-blocking form of {@link #call}: the same chain (negotiation, failsafe, call
     * records), with each attempt made through the transport's own {@link Channel#callAsync}.
     * Cancelling the future cancels the attempt in progress (on the wire where its protocol can)
     * and starts no fallback.
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        CompletableFuture<Object> result = AsyncCalls.start(caller -> chain.proceed(newCall(operation, request,
                options, caller)));
        ServerCallContext context = ServerCallContext.current();
        if (context != null && !result.isDone()) {
            // made by an operation: cancelled when the operation's own call is (its caller's cancel, its deadline)
            ServerCallContext.Scope registration = context.addCancelListener(() -> result.cancel(true));
            result.whenComplete((r, t) -> registration.close());
        }
        return result;
    }

    private ClientCall newCall(OperationDescriptor operation, Object request, CallOptions options,
                               CompletableFuture<Object> caller) {
        if (closed) {
            throw new IllegalStateException("meta-stub for " + descriptor.name() + " is closed");
        }
        return new ClientCall(descriptor.name(), operation, request, options, caller);
    }

    /** The chain every call goes down, for tests and the curious: {@code CallIdInterceptor -> ... -> transport}. */
    String describeChain() {
        return chain.toString();
    }

    private Transport transport(ProtocolSuite callSuite, String protocol) {
        Endpoint endpoint = callSuite.endpoint(protocol);
        return transports.computeIfAbsent(endpoint, e -> clients.get(protocol).connect(descriptor, e));
    }

    /** The protocol clients this meta-stub's transports come from (shared when a {@code Switchboard} built it). */
    public ProtocolClients clients() {
        return clients;
    }

    /** Closes this stub's transports, and its protocol clients unless they are shared ({@link Builder#clients}). */
    @Override
    public void close() {
        closed = true;
        for (Transport t : transports.values()) {
            t.close();
        }
        transports.clear();
        if (ownsClients) {
            clients.close();
        }
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
        private ProtocolClients clients;
        private final List<CallListener> listeners = new ArrayList<>();
        private final List<ClientInterceptor> interceptors = new ArrayList<>();
        private boolean serverRecognisesCallIds;
        /** A failed protocol's first back-off. */
        public static final Duration DEFAULT_BACKOFF = Duration.ofSeconds(2);
        /** The longest back-off, reached by doubling. */
        public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMinutes(1);
        private Duration backoff = DEFAULT_BACKOFF;
        private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
        private java.util.function.LongSupplier nanoClock = System::nanoTime;
        private boolean preferInProcess = true;
        private io.opentelemetry.api.OpenTelemetry tracing;
        private boolean tracingSet;

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

        /** Settings of the protocol clients this stub makes for itself; with {@link #clients}, theirs apply. */
        public Builder settings(ClientSettings clientSettings) {
            this.settings = Objects.requireNonNull(clientSettings);
            return this;
        }

        /**
         * Shares these protocol clients (and their settings) instead of making its own: closing
         * the stub leaves them open, for their owner (a {@code Switchboard}) to close.
         */
        public Builder clients(ProtocolClients shared) {
            this.clients = Objects.requireNonNull(shared);
            return this;
        }

        public Builder listener(CallListener listener) {
            this.listeners.add(Objects.requireNonNull(listener));
            return this;
        }

        /**
         * Adds a step to every attempt of every call, after the protocol is chosen and the
         * transport found, before the call is recorded and sent; interceptors run in the order
         * added. See {@link ClientInterceptor}.
         */
        public Builder interceptor(ClientInterceptor interceptor) {
            this.interceptors.add(Objects.requireNonNull(interceptor));
            return this;
        }

        /**
         * Traces every attempt with this OpenTelemetry ({@link TracingInterceptor}); null turns
         * tracing off. By default the global one ({@code GlobalOpenTelemetry.get()}, read when the
         * stub is built) when an SDK is registered there, else none.
         */
        public Builder tracing(io.opentelemetry.api.OpenTelemetry openTelemetry) {
            this.tracing = openTelemetry;
            this.tracingSet = true;
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

        /** The clock back-off and deadlines are measured with, as {@link System#nanoTime} (tests pass a fake one). */
        public Builder nanoClock(java.util.function.LongSupplier clock) {
            this.nanoClock = Objects.requireNonNull(clock);
            return this;
        }

        public MetaStub build() {
            return new MetaStub(this);
        }
    }
}

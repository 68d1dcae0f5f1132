package io.switchboard.protocol.grpc;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.util.MutableHandlerRegistry;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.Endpoints;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.spi.CallerIdentity;
import io.switchboard.protocol.TraceContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One gRPC listener serving any number of components, each as the service
 * {@code switchboard.<name>.<Name>} of its typed {@code .proto}: per operation a unary method, or
 * for operations whose messages can grow without bound ({@link ProtoSchemas#streams}) a
 * bidirectional stream of partial messages. A worker thread per call runs the skeleton; the parts
 * of a request announced larger than one part are merged on gRPC's event loop as they arrive
 * ({@link PartQueue#readOnArrival}), and a response of several parts is sent from gRPC's readiness
 * callbacks ({@link ResponseSender}), so the bytes of a large call do not pass between threads part
 * by part. A declared fault ends the call with a status
 * whose {@code google.rpc.Status} details hold the fault message as {@code Any}.
 *
 * <p>Beside the components, every server offers server reflection ({@code grpc.reflection.v1}, the
 * descriptors built from each component's interface model) and the standard health service
 * ({@code grpc.health.v1}): a component's service is SERVING while it is exported and NOT_SERVING
 * after it is unexported or the server closes; the server as a whole ({@code ""}) is SERVING until
 * it closes.
 *
 * <p>Fair shares: connections are held to the settings' limits per remote address and in all, the
 * longest idle making way for a newcomer ({@link GrpcConnectionShares}); a connection runs at most
 * half the server's calls, one more refused as busy before it runs.
 *
 * <p>On Linux a server without TLS also listens on a Unix domain socket in a private directory
 * ({@link UnixSockets#GRPC}), named by its endpoints' query, for clients on the same host; the same
 * services and limits, its connections one remote address (docs/grpc-wire.md).
 */
final class GrpcServer implements ProtocolServer {
    private static final Logger LOG = LoggerFactory.getLogger(GrpcServer.class);
    /** The refusal reason of a request that arrived too slowly (a limit: RESOURCE_EXHAUSTED). */
    static final String TOO_SLOW = "too-slow";

    private final ServerSettings settings;
    private final MessageLimits limits;
    private final int maxPartBytes;
    private final MutableHandlerRegistry registry = new MutableHandlerRegistry();
    private final Map<String, ServerServiceDefinition> exported = new ConcurrentHashMap<>();
    /**
     * How long calls under way (health watchers among them) may go on once the listener closes: a
     * listener's close is a stop, as a crash of it would be; a component server drains its calls
     * before it closes its listeners ({@code ComponentServer.close}), so only watchers are left then.
     */
    private static final long CLOSE_GRACE_MILLIS = 250;
    private final HealthStatusManager health = new HealthStatusManager();
    private final ExecutorService workers;
    private final WorkerGate gate;
    /** Most calls one connection runs at once; one more is refused as busy. */
    private final int callsPerConnection;
    private final LongAdder busyRefusals = new LongAdder();
    private final LongAdder readOnArrivalCalls = new LongAdder();
    /** Counts connections refused at TLS; a plain-text server has none. */
    private final GrpcTls.Refusals refusals;
    private final GrpcConnectionShares connections;
    private Server server;
    /** The same services on a Unix socket, for clients on this host; null without one. */
    private Server unixServer;
    private Path unixDirectory;
    private volatile Path unixSocket;
    private boolean closed;
    /** Whether health answers NOT_SERVING for good already ({@link #drain}, {@link #close}). */
    private boolean notServing;

    GrpcServer(ServerSettings settings, MessageLimits limits, int maxPartBytes) {
        if (maxPartBytes <= 0) {
            throw new IllegalArgumentException("part limit out of range: " + maxPartBytes);
        }
        this.settings = settings;
        this.limits = limits;
        this.maxPartBytes = maxPartBytes;
        this.refusals = new GrpcTls.Refusals(settings.tls() != null);
        // as many threads as calls run, up to the limit, idle ones kept a minute; no queue: a call
        // over the limit is refused at once (Handler.startCall) rather than left waiting unseen
        this.workers = new ThreadPoolExecutor(0, settings.maxConcurrentCalls(), 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), DaemonThreads.numbered("grpc-call"));
        this.gate = new WorkerGate(workers, settings.maxConcurrentCalls());
        // below the server's, so one connection cannot take every worker (as tcp's share)
        this.callsPerConnection = Math.max(1, settings.maxConcurrentCalls() / 2);
        this.connections = new GrpcConnectionShares(settings, "grpc-server");
    }

    @Override
    public String protocol() {
        return GrpcProtocolProvider.NAME;
    }

    private synchronized void start() {
        if (closed) {
            throw new IllegalStateException("gRPC server is closed");
        }
        if (server != null) {
            return;
        }
        try {
            server = configure(connections.applyTunedForLargeMessages(NettyServerBuilder.forAddress(
                            new InetSocketAddress(settings.bindAddress(), settings.port()), GrpcTls.server(settings.tls())))
                    .addTransportFilter(refusals))
                    .build()
                    .start();
            LOG.debug("gRPC listening on {}:{}", settings.bindAddress(), port());
        } catch (IOException e) {
            server = null;
            throw new SwitchboardException("gRPC server cannot listen on " + settings.bindAddress() + ":"
                    + settings.port() + ": " + e.getMessage(), e);
        }
        if (settings.tls() == null && UnixSockets.GRPC.enabled() && Epoll.isAvailable()) {
            startUnix();
        }
    }

    /** What the TCP listener and the Unix socket's have alike: the services, limits and Netty settings. */
    private NettyServerBuilder configure(NettyServerBuilder builder) {
        return builder
                .intercept(connections.callCounter())
                .fallbackHandlerRegistry(registry)
                // reflection finds the components in the fallback registry too (the server's mutable services)
                .addService(ProtoReflectionServiceV1.newInstance())
                .addService(health.getHealthService())
                // callbacks only queue parts and wake a worker: they may run on the event loop
                .directExecutor()
                // a part is cut only between fields and inside packed arrays, so one unsplit value
                // (a long string, a nested message) makes a part as large as itself: the
                // message limit bounds it, and gRPC's per-message buffer with it
                .maxInboundMessageSize(maxInbound(maxPartBytes, limits.maxMessageBytes()))
                .flowControlWindow(NettyTuning.FLOW_CONTROL_WINDOW)
                .withChildOption(ChannelOption.ALLOCATOR, NettyTuning.ALLOCATOR)
                .withChildOption(ChannelOption.WRITE_BUFFER_WATER_MARK, NettyTuning.WRITE_WATER_MARK)
                .maxConnectionIdle(settings.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Also listens on a Unix socket in a private directory (plain text only, as tcp's: its callers
     * are this host's processes of this OS user, the directory's mode says so), which same-host
     * clients take instead of TCP. If none can be made, the server warns and serves on TCP only.
     */
    private void startUnix() {
        Path directory = null;
        try {
            Path path = UnixSockets.GRPC.newSocketPath();
            directory = path.getParent();
            unixServer = configure(connections.applyUnix(NettyServerBuilder.forAddress(new DomainSocketAddress(path.toFile()))))
                    .build()
                    .start();
            unixDirectory = directory;
            unixSocket = path;
            LOG.debug("gRPC listening on the Unix socket {}", path);
        } catch (IOException | RuntimeException e) {
            LOG.warn("gRPC serves over TCP only: no Unix socket: {}", e.toString());
            removeDirectory(directory);
        }
    }

    /** Removes the Unix socket's directory, the socket in it first. */
    private static void removeDirectory(Path directory) {
        try {
            UnixSockets.GRPC.removeSocketDirectory(directory);
        } catch (IOException e) {
            LOG.debug("gRPC leaves {}: {}", directory, e.toString());
        }
    }

    /** The Unix socket the server listens on too, or null. */
    Path unixSocket() {
        return unixSocket;
    }

    @Override
    public long refusedConnections() {
        return refusals.refused.count();
    }

    @Override
    public long shedConnections() {
        return connections.evictions() + connections.refusals();
    }

    /** The largest gRPC message accepted: the part limit, or the message limit when larger. */
    static int maxInbound(int maxPartBytes, long maxMessageBytes) {
        return (int) Math.max(maxPartBytes, Math.min(Integer.MAX_VALUE - 16, maxMessageBytes));
    }

    int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    @Override
    public synchronized Endpoint export(Skeleton skeleton) {
        start();
        ServiceDescriptor d = skeleton.descriptor();
        if (d.codec(ProtoCodec.class) == null) {
            throw new IllegalArgumentException(d.name() + " has no protobuf codec: recompile it with this Switchboard");
        }
        String serviceName = ProtoSchemas.serviceName(d.name());
        io.grpc.ServiceDescriptor.Builder schema = io.grpc.ServiceDescriptor.newBuilder(serviceName)
                .setSchemaDescriptor(new ReflectionSchema(ProtoDescriptors.build(ProtoSchemas.typed(d.model())), d.name()));
        for (OperationDescriptor op : d.operations()) {
            schema.addMethod(GrpcTransport.method(op));
        }
        ServerServiceDefinition.Builder service = ServerServiceDefinition.builder(schema.build());
        for (OperationDescriptor op : d.operations()) {
            service.addMethod(GrpcTransport.method(op), new Handler(skeleton, op));
        }
        ServerServiceDefinition definition = service.build();
        if (exported.putIfAbsent(d.name(), definition) != null) {
            throw new IllegalStateException(d.name() + " is already exported on this gRPC server");
        }
        registry.addService(definition);
        health.setStatus(serviceName, ServingStatus.SERVING);
        String host = Endpoints.uriHost(settings.hostForEndpoints());
        String address = GrpcTls.scheme(settings.tls()) + "://" + host + ":" + port() + "/" + d.name();
        return new Endpoint(protocol(), unixSocket == null ? address : address + "?" + UnixSockets.query(unixSocket));
    }

    @Override
    public synchronized void unexport(String componentName) {
        ServerServiceDefinition definition = exported.remove(componentName);
        if (definition != null) {
            registry.removeService(definition);
            health.setStatus(definition.getServiceDescriptor().getName(), ServingStatus.NOT_SERVING);
        }
    }

    /** Every service, the server's own ("") included, answers NOT_SERVING from here on; calls still run. */
    @Override
    public void drain() {
        notServing();
    }

    /** Health NOT_SERVING for good, once (gRPC logs a second call as an error). */
    private synchronized void notServing() {
        if (!notServing) {
            notServing = true;
            health.enterTerminalState();
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        exported.clear();
        // every service, the server's own ("") included, answers NOT_SERVING from here on; a health
        // watcher hears it before its stream ends with the server: a stream cut at once (shutdownNow)
        // could drop the message the client had received but not yet handed on, so calls get a
        // short grace first (refused: new ones)
        notServing();
        for (Server s : new Server[] {server, unixServer}) {
            if (s != null) {
                s.shutdown();
            }
        }
        for (Server s : new Server[] {server, unixServer}) {
            if (s == null) {
                continue;
            }
            try {
                if (!s.awaitTermination(CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                    s.shutdownNow();
                    s.awaitTermination(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                s.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        removeDirectory(unixDirectory);
        workers.shutdownNow();
        gate.close();
        connections.close();
    }

    /** The listener's connections within their shares; for tests. */
    GrpcConnectionShares connections() {
        return connections;
    }

    /** Starts a call: queues its parts and gives the work to a worker thread. */
    private final class Handler implements ServerCallHandler<Part, Part> {
        private final Skeleton skeleton;
        private final OperationDescriptor op;

        Handler(Skeleton skeleton, OperationDescriptor op) {
            this.skeleton = skeleton;
            this.op = op;
        }

        @Override
        public ServerCall.Listener<Part> startCall(ServerCall<Part, Part> call, Metadata headers) {
            String callId = headers.get(GrpcErrors.CALL_ID);
            if (callId != null && !io.switchboard.protocol.CallIds.wellFormed(callId)) {
                Metadata trailers = new Metadata();
                trailers.put(GrpcErrors.REFUSED, WireFormatException.MALFORMED);
                call.close(Status.INVALID_ARGUMENT.withDescription("the sb-call-id header is malformed: "
                                + io.switchboard.protocol.CallIds.rule()),
                        trailers);
                return new ServerCall.Listener<>() { };
            }
            // counted already (GrpcConnectionShares.callCounter), this call included
            if (connections.openCalls(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)) > callsPerConnection) {
                return refuseBusy(call, "this connection runs " + callsPerConnection + " calls, its limit");
            }
            if (GrpcTransport.streamed(op)) {
                call.setOnReadyThreshold(NettyTuning.ON_READY_THRESHOLD);
            }
            String traceparent = headers.get(GrpcErrors.TRACEPARENT);
            TraceContext trace = traceparent == null ? null     // malformed: none, the call runs all the same
                    : TraceContext.of(traceparent, headers.get(GrpcErrors.TRACESTATE));
            // who calls: the client certificate of the connection (over the Unix socket, the uid of
            // the process at its other end), unless a bearer token verifies
            java.net.SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            Peer unix = connections.unixPeer(remote);
            javax.net.ssl.SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
            CallerIdentity caller = CallerIdentity.of(unix != null ? unix : CallerIdentity.tlsPeer(session, remote),
                    CallerIdentity.bearer(headers.get(GrpcErrors.AUTHORIZATION)), settings.tokenVerifier())
                    .unlessNoLongerTrusted(settings.tls(), session);
            Call c = new Call(skeleton, op, call, callId, trace, caller);
            c.queue.announce(GrpcErrors.size(headers));   // before the first part: it sizes the request's arrays
            if (GrpcTransport.streamed(op) && c.queue.announced() > ProtoCodec.PART_BYTES) {
                c.readOnArrival();
            }
            // admitted now, refused now if busy; the worker wakes once the request is in (WorkerGate)
            c.ticket = gate.admit(c::run, () -> {
                c.queue.close();
                refuseBusy(call, workersBusy());
            });
            if (c.ticket == null) {
                return refuseBusy(call, workersBusy());
            }
            call.request(PartQueue.WINDOW);
            return c.listener;
        }
    }

    private String workersBusy() {
        return "all " + settings.maxConcurrentCalls() + " call workers are running calls";
    }

    /**
     * Every worker runs a call, or the call's connection runs its share: this one is refused
     * before it runs, with UNAVAILABLE and the {@code sb-busy} trailer, so the client knows it
     * never ran and may try another server or protocol.
     */
    private ServerCall.Listener<Part> refuseBusy(ServerCall<Part, Part> call, String reason) {
        busyRefusals.increment();
        long n = busyRefusals.sum();
        if (StrangerWarnings.due(n)) {
            LOG.warn("gRPC server busy: {}; refusing {} ({} refused so far)", reason,
                    call.getMethodDescriptor().getFullMethodName(), n);
        }
        Metadata trailers = new Metadata();
        trailers.put(GrpcErrors.BUSY, Integer.toString(settings.maxConcurrentCalls()));
        call.close(Status.UNAVAILABLE.withDescription("server busy: " + reason + "; the call did not run"), trailers);
        return new ServerCall.Listener<>() { };
    }

    /** The server's calls: admitted, their workers started once their requests are in; for tests. */
    WorkerGate gate() {
        return gate;
    }

    /** Calls whose request was merged on the event loop as its parts arrived; for tests. */
    long readOnArrivalCalls() {
        return readOnArrivalCalls.sum();
    }

    /** Calls refused because every worker was running a call; for tests and logs. */
    long busyRefusals() {
        return busyRefusals.sum();
    }

    /** Connections closed because a call's answer was not taken within the request timeout; for tests. */
    long answersNotTaken() {
        return connections.answersNotTaken();
    }

    /** One call on the server: the listener side fills the queue, {@link #run} does the work. */
    private final class Call {
        private final Skeleton skeleton;
        private final OperationDescriptor op;
        private final ServerCall<Part, Part> call;
        private final String callId;
        private final TraceContext trace;
        /** What the operation asks about its call: the deadline, whether it was cancelled. */
        private final ServerCallContext context;
        /** Who calls; a token that did not verify refuses the call before its operation runs. */
        private final CallerIdentity caller;
        private final PartQueue queue;
        private final MessageReader requestReader;
        /** The response of several parts being sent from gRPC's readiness callbacks, or null. */
        private volatile ResponseSender sender;
        private final Object ready = new Object();
        private volatile boolean cancelled;
        private Thread worker;
        private WorkerGate.Ticket ticket;
        /** Parts and bytes arrived so far; gRPC's callbacks only. */
        private int parts;
        private long arrived;

        final ServerCall.Listener<Part> listener = new ServerCall.Listener<>() {
            @Override
            public void onMessage(Part message) {
                PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
                queue.add(message);
                if (queue.readsOnArrival()) {
                    // the worker is needed only at the request's end
                    if (queue.failed()) {
                        ticket.start(); // refused on arrival: the worker sends the refusal now
                    }
                    return;
                }
                // more parts to come: the worker merges them as they arrive
                arrived += message.length;
                if (++parts > 1 || arrived < queue.announced()) {
                    ticket.start();
                }
            }

            @Override
            public void onHalfClose() {
                queue.end();
                ticket.start(); // the whole request is in: the worker reads it without waiting
            }

            @Override
            public void onCancel() {
                ticket.abandon(); // not started yet: it never will be
                cancelled = true;
                context.cancel();   // the operation's own calls under way are cancelled in turn
                queue.fail(new CancelledException());
                synchronized (ready) {
                    ready.notifyAll();
                }
                synchronized (Call.this) {
                    // a cancelled client call stops the server work: interrupt the operation
                    if (worker != null) {
                        worker.interrupt();
                    }
                }
            }

            @Override
            public void onReady() {
                ResponseSender s = sender;
                if (s != null) {
                    s.send();
                    return;
                }
                synchronized (ready) {
                    ready.notifyAll();
                }
            }
        };

        Call(Skeleton skeleton, OperationDescriptor op, ServerCall<Part, Part> call, String callId, TraceContext trace,
             CallerIdentity caller) {
            this.trace = trace;
            this.caller = caller;
            // the caller's grpc-timeout, as gRPC fixed it for this call; gRPC cancels the call when it passes
            io.grpc.Deadline deadline = io.grpc.Context.current().getDeadline();
            this.context = ServerCallContext.create(deadline == null ? null
                    : System.nanoTime() + deadline.timeRemaining(TimeUnit.NANOSECONDS), trace, caller.peer())
                    .trustedBy(settings.tls(), settings.tls() == null ? null
                            : call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
            this.skeleton = skeleton;
            this.op = op;
            this.call = call;
            this.callId = callId;
            this.queue = new PartQueue(call::request, settings.idleTimeout(), () -> new WireFormatException(
                    WireFormatException.MALFORMED, "no data for " + settings.idleTimeout().toSeconds() + " s"),
                    limits.maxMessageBytes());
            this.requestReader = new MessageReader(() -> op.service().codec(ProtoCodec.class)
                    .reader(op.requestElement().getLocalPart(), limits, queue.announced()));
            // a request must arrive within the idle time plus its size at the settings' minimum rate
            // (64 KiB/s by default: 64 MiB in 17 minutes): a sender that trickles parts cannot hold
            // this call's worker thread for longer
            long minRate = settings.minRequestBytesPerSecond();
            this.queue.requireMinRate(minRate, () -> new WireFormatException(TOO_SLOW,
                    "the request arrived slower than " + minRate + " bytes/s after the first "
                    + settings.idleTimeout().toSeconds() + " s"));
        }

        /** The request's parts are merged on gRPC's event loop as they arrive, within the queue's limits. */
        void readOnArrival() {
            queue.readOnArrival(requestReader);
            readOnArrivalCalls.increment();
        }

        void run() {
            synchronized (this) {
                worker = Thread.currentThread();
            }
            try {
                serve();
            } catch (CancelledException | PartQueue.CallInterruptedException e) {
                LOG.debug("{} cancelled by the client", op);
            } catch (RuntimeException | Error e) {
                LOG.warn("{} failed inside the gRPC protocol", op, e);
                closeQuietly(Status.INTERNAL.withDescription(String.valueOf(e)), new Metadata());
            } finally {
                queue.close();
                synchronized (this) {
                    worker = null;
                }
                Thread.interrupted(); // a late cancel must not leak into the pool thread's next call
            }
        }

        private void serve() {
            ProtoCodec codec = op.service().codec(ProtoCodec.class);
            Object request;
            try {
                // parts read on arrival leave only the end (or the refusal) to take here
                for (Part part = queue.take(); part != null; part = queue.take()) {
                    requestReader.accept(part);
                }
                request = requestReader.finish();
                PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            } catch (WireFormatException e) {
                skeleton.refused(op, e.reason());
                Metadata trailers = new Metadata();
                closeQuietly(GrpcErrors.refusal(e, op.toString(), trailers), trailers);
                return;
            } finally {
                queue.close(); // the request is read (or refused): queued parts go before the operation runs
            }
            Object response;
            if (context.expired()) {
                return;   // the caller's deadline passed before the call could start: gRPC ends it
            }
            try (ServerCallContext.Scope scope = context.enter()) {
                caller.checkVerified();
                response = skeleton.invoke(op, request, callId);
            } catch (DeclaredFault fault) {
                if (!cancelled) {
                    sendFault(codec, fault);
                }
                return;
            } catch (RuntimeException e) {
                if (cancelled) {
                    return;
                }
                Metadata trailers = new Metadata();
                closeQuietly(GrpcErrors.failure(e, trailers), trailers);
                return;
            }
            if (cancelled) {
                return;
            }
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
            ProtoCodec.Writer writer;
            try {
                // a one-way operation answers Empty: a unary method must send one message
                if (op.oneWay()) {
                    writer = GrpcTransport.EMPTY.writer("", null, 0);
                } else {
                    NodeTable nodes = MessageChecks.of(op.service()).check(response, settings.maxGraphNodes());
                    writer = NodeTable.during(nodes, () -> codec.writer(op.responseElement().getLocalPart(), response,
                            settings.maxGraphNodes()));
                }
                PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
            } catch (WireFormatException e) {
                Metadata trailers = new Metadata();
                closeQuietly(GrpcErrors.failure(new IllegalStateException("the response of " + op
                        + " cannot be sent: " + e.getMessage()), trailers), trailers);
                return;
            }
            Metadata headers = new Metadata();
            headers.put(GrpcErrors.SIZE, Long.toString(writer.size()));
            call.sendHeaders(headers);
            int target = GrpcTransport.partTarget(op);
            if (writer.size() > target) {
                // a message of several parts: sent from gRPC's readiness callbacks, each part written
                // straight into gRPC's buffers; the worker stays with its call until the response is
                // out, so the server's call limit still counts it
                ResponseSender s = new ResponseSender(writer, target);
                sender = s;
                s.send();
                s.awaitSent();
                return;
            }
            ProtoOutput out = new ProtoOutput((int) Math.min(writer.size(), target) + 64);
            do {
                out.reset();
                writer.writePart(out, target);
                awaitReady();
                call.sendMessage(new Part(out));
            } while (writer.hasMore());
            call.close(Status.OK, new Metadata());
            PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
        }

        /**
         * Sends a response of several parts as flow control allows: first on the worker, then from
         * each {@code onReady} on gRPC's event loop, and closes the call after the last part.
         * Synchronized: gRPC's call takes one caller at a time.
         */
        private final class ResponseSender {
            private final ProtoCodec.Writer writer;
            private final int target;
            private final byte[] block = new byte[Part.BLOCK_BYTES];
            private boolean done;

            ResponseSender(ProtoCodec.Writer writer, int target) {
                this.writer = writer;
                this.target = target;
            }

            synchronized void send() {
                if (done) {
                    return;
                }
                try {
                    while (!cancelled && call.isReady() && writer.hasMore()) {
                        Part part = new Part(writer, target, block);
                        call.sendMessage(part);
                        if (!part.taken()) {
                            finish(); // the call is over: gRPC takes no more messages
                            return;
                        }
                    }
                    if (cancelled) {
                        finish();
                    } else if (!writer.hasMore()) {
                        call.close(Status.OK, new Metadata());
                        PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
                        finish();
                    }
                } catch (RuntimeException | Error e) {
                    LOG.warn("{} failed inside the gRPC protocol", op, e);
                    finish();
                    closeQuietly(Status.INTERNAL.withDescription(String.valueOf(e)), new Metadata());
                }
            }

            private void finish() {
                done = true;
                notifyAll();
            }

            /** Until the last part is sent, or the call is cancelled (the worker is interrupted then). */
            synchronized void awaitSent() {
                while (!done && !cancelled) {
                    try {
                        wait(1000);
                    } catch (InterruptedException e) {
                        throw new CancelledException();
                    }
                }
            }
        }

        /** A declared fault: the call's status, the fault message in its google.rpc.Status details. */
        private void sendFault(ProtoCodec codec, DeclaredFault fault) {
            byte[] info;
            try {
                MessageChecks.of(op.service()).check(fault.faultInfo(), settings.maxGraphNodes());
                info = codec.toBytes(op.faultElement().getLocalPart(), fault.faultInfo(), settings.maxGraphNodes());
            } catch (WireFormatException e) {
                Metadata trailers = new Metadata();
                closeQuietly(GrpcErrors.failure(new IllegalStateException("the declared fault of " + op
                        + " cannot be sent: " + e.getMessage()), trailers), trailers);
                return;
            }
            io.grpc.StatusRuntimeException status = GrpcErrors.fault(op, fault, info);
            closeQuietly(status.getStatus(), status.getTrailers());
        }

        /** Waits until gRPC can take another part without buffering it: sending never outruns the peer. */
        private void awaitReady() {
            synchronized (ready) {
                while (!call.isReady()) {
                    if (cancelled) {
                        throw new CancelledException();
                    }
                    try {
                        ready.wait(1000);
                    } catch (InterruptedException e) {
                        throw new CancelledException();
                    }
                }
            }
        }

        private void closeQuietly(Status status, Metadata trailers) {
            if (cancelled) {
                return;
            }
            try {
                call.close(status, trailers);
            } catch (IllegalStateException alreadyClosed) {
                LOG.trace("{} already closed", op);
            }
        }
    }

    /** The client cancelled the call, or its deadline passed. */
    static final class CancelledException extends RuntimeException {
        CancelledException() {
            super("call cancelled", null, false, false);
        }
    }
}

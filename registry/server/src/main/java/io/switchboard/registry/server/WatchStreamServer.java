package io.switchboard.registry.server;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.ServerInterceptors;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.grpc.GrpcConnectionShares;
import io.switchboard.protocol.grpc.GrpcTls;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.wire.ListEntriesResponse;
import io.switchboard.registry.wire.LookupResponse;
import io.switchboard.registry.wire.Watch;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's watch stream ({@link WatchStreamMethod}): one gRPC server-streaming call per
 * watch, many calls on one HTTP/2 connection, on a listener of its own beside the SOAP one.
 *
 * <p>A watch holds no thread and no connection of its own: it is a {@link Follower}, the names it
 * watches and the version it was last sent. One dispatcher thread, woken by every change in the
 * {@link WatchHub}, sends each follower the changes after its version, encoded once for every
 * follower of the same names at the same version; a follower whose connection cannot take more
 * ({@link ServerCall#isReady}) is skipped until it can, and one left behind the hub's buffer is
 * sent a snapshot instead. So a slow watcher costs one entry in a map, never a queue.
 *
 * <p>Limits: at most {@code maxWatches} streams in all and {@code maxPerClient} per remote address
 * (a client host's share, however many connections it opens); one more is refused at once with
 * {@code RESOURCE_EXHAUSTED} and a reason the client logs, never accepted and then dropped.
 * Connections are held to the settings' shares ({@link GrpcConnectionShares}: per address and in
 * all, the longest idle making way for a newcomer), a connection without streams for the idle
 * timeout is closed, and clients may ping every 5 s at most. The SOAP listener, its threads and
 * connections are not touched by streams: binds, renewals and unbinds never wait behind a watcher.
 *
 * <p>The listener also answers the registry's reads, {@code lookup}, {@code lookupLean} and {@code listEntries}, in
 * protobuf on its two call threads (a lean lookup on the event loop itself when the store can answer at once,
 * {@link io.switchboard.registry.store.RegistryStore#lookupNow}), for clients that know it (see {@link WatchStreamMethod}); at
 * most {@value #MAX_READS} are in flight, {@value #MAX_READS_PER_CONNECTION} from one connection
 * ({@link ReadGate}), and one more is refused at once with {@code RESOURCE_EXHAUSTED}.
 */
final class WatchStreamServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WatchStreamServer.class);
    /** Reads queued or running at once, over every connection. */
    static final int MAX_READS = 256;
    /**
     * How often open streams are checked again: with client certificates, against the trust store
     * and revocation lists in force (themselves looked at at most every 100 ms); with a policy,
     * against the policy in force.
     */
    static final long SWEEP_MILLIS = 250;
    /** Reads queued or running at once for one connection. */
    static final int MAX_READS_PER_CONNECTION = 32;

    private final WatchHub hub;
    private final int maxWatches;
    private final int maxPerClient;
    private final Server server;
    private final String address;
    private final ExecutorService calls;
    private final Thread dispatcher;
    private final Set<Follower> followers = ConcurrentHashMap.newKeySet();
    /** Open streams per remote address (the host, not the connection). */
    private final Map<Object, AtomicInteger> perClient = new ConcurrentHashMap<>();
    private final GrpcConnectionShares connections;
    private final ReadGate reads = new ReadGate(MAX_READS, MAX_READS_PER_CONNECTION);
    private final AtomicLong refusedReads = new AtomicLong();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private boolean dirty;
    private boolean closed;

    /** Null: no policy, every caller may read every name. */
    private final io.switchboard.server.authz.AuthorizationInterceptor authorization;
    /** Null: plain text. */
    private final io.switchboard.protocol.TlsSettings tls;

    WatchStreamServer(RegistryService registry, ServerSettings settings, String host, int port, int maxWatches,
                      int maxPerClient) {
        this(registry, settings, host, port, maxWatches, maxPerClient, null);
    }

    WatchStreamServer(RegistryService registry, ServerSettings settings, String host, int port, int maxWatches,
                      int maxPerClient, io.switchboard.server.authz.AuthorizationInterceptor authorization) {
        this.authorization = authorization;
        this.tls = settings.tls();
        this.hub = registry.watches().hub();
        this.maxWatches = maxWatches;
        this.maxPerClient = maxPerClient;
        // the reads' threads; their queue is bounded by the read gate, which admits on the event loop
        this.calls = new ThreadPoolExecutor(2, 2, 0, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), DaemonThreads.numbered("registry-watch-calls"));
        ServerServiceDefinition service = ServerServiceDefinition.builder(WatchStreamMethod.SERVICE)
                .addMethod(WatchStreamMethod.server(), new Handler())
                // reads beside the stream, on its threads: not on the SOAP listener's, which writes keep
                .addMethod(WatchStreamMethod.LOOKUP, read(request -> {
                    refuseIfDenied(RegistryPaths.lookup(request.getName()));
                    LookupResponse r = new LookupResponse();
                    try (ServerCallContext.Scope scope = StreamCallers.context().enter()) {
                        r.setEntries(registry.reads().lookup(request.getName()));
                    }
                    return r;
                }))
                // sent as the registry keeps it encoded: a name looked up again is not encoded again;
                // answered on the event loop when the store can say at once, else on a read thread
                .addMethod(WatchStreamMethod.LOOKUP_LEAN_WIRE, read(
                        request -> lean(request, registry.reads()::lookupLeanWireNow),
                        request -> lean(request, registry.reads()::lookupLeanWire)))
                .addMethod(WatchStreamMethod.LIST, read(request -> {
                    refuseIfDenied(RegistryPaths.list());
                    ListEntriesResponse r = new ListEntriesResponse();
                    try (ServerCallContext.Scope scope = StreamCallers.context().enter()) {
                        r.setEntries(registry.reads().list());
                    }
                    return r;
                }))
                .build();
        InetSocketAddress at = ServerSettings.isWildcard(settings.bindAddress()) ? new InetSocketAddress(port)
                : new InetSocketAddress(settings.bindAddress(), port);
        this.connections = new GrpcConnectionShares(settings, "registry-watch");
        this.server = connections.apply(NettyServerBuilder.forAddress(at, GrpcTls.server(settings.tls())))
                // who calls, settled before any method (a token that does not verify ends the call);
                // the call counted first, so a refused token still counts against its connection's share
                .addService(ServerInterceptors.intercept(service, new StreamCallers(settings.tokenVerifier(), tls),
                        connections.callCounter()))
                // calls are admitted or refused on the event loop, at once: a queue in front of the
                // admission would grow with a flood before anything could refuse it
                .directExecutor()
                .maxInboundMessageSize(WatchStreamMethod.MAX_REQUEST_BYTES)
                // our own count refuses with a reason; Netty's would reset streams without one
                .maxConcurrentCallsPerConnection(Integer.MAX_VALUE)
                // clients ping every 10 s to notice a registry that is cut off; a client that is
                // cut off is noticed by the server's own ping, and its streams freed
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(false)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                // a connection without streams or reads is closed after the idle timeout
                .maxConnectionIdle(settings.idleTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .build();
        try {
            server.start();
        } catch (IOException e) {
            calls.shutdownNow();
            connections.close();
            throw new UncheckedIOException("cannot open the registry's watch stream on port " + port, e);
        }
        this.address = (settings.tls() == null ? "grpc" : "grpcs") + "://" + host + ":"
                + ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
        this.dispatcher = DaemonThreads.start(this::dispatch, "registry-watch-dispatcher-1");
        hub.onChange(this::wake);
    }

    /** {@code grpc://HOST:PORT} ({@code grpcs://} with TLS), as the SOAP {@code watch} answer tells it. */
    String address() {
        return address;
    }

    /** Streams open now. */
    int open() {
        return open.get();
    }

    /** Streams refused so far: over the total or over a client's share. */
    long refused() {
        return refused.get();
    }

    /** Reads refused so far: over the total or over a connection's share. */
    long refusedReads() {
        return refusedReads.get();
    }

    /** The listener's connections within their shares; for tests. */
    GrpcConnectionShares connections() {
        return connections;
    }

    /** What a lean lookup's reader answers, within the caller's context; a fault as gRPC says a request out of bounds. */
    private byte[] lean(io.switchboard.registry.wire.LookupLean request, LeanReader reader) {
        refuseIfDenied(RegistryPaths.lookup(request.getName()));
        try (ServerCallContext.Scope scope = StreamCallers.context().enter()) {
            return reader.read(request.getName(), request.getKnownSchemas());
        } catch (io.switchboard.registry.wire.LookupLeanFaultException e) {
            // the SOAP fault's code and reason, as gRPC says a request out of bounds
            throw Status.INVALID_ARGUMENT.withDescription(e.getFaultInfo().getCode() + ": "
                    + e.getFaultInfo().getReason()).asRuntimeException();
        }
    }

    @FunctionalInterface
    private interface LeanReader {
        byte[] read(String name, java.util.List<String> known) throws io.switchboard.registry.wire.LookupLeanFaultException;
    }

    /**
     * A read's handler: admitted by the read gate as its request is in (on the event loop),
     * refused at once with {@code RESOURCE_EXHAUSTED} over it, else answered on a call thread.
     */
    private <Q, A> ServerCallHandler<Q, A> read(java.util.function.Function<Q, A> answer) {
        return read(null, answer);
    }

    /**
     * {@code atOnce}: tried first where the request is read (admitted as any other read), for an
     * answer that needs no waiting; null from it, or no {@code atOnce}, sends the read to a call thread.
     */
    private <Q, A> ServerCallHandler<Q, A> read(java.util.function.Function<Q, A> atOnce,
                                                java.util.function.Function<Q, A> answer) {
        return (call, headers) -> {
            SocketAddress client = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            call.request(1);
            return new ServerCall.Listener<>() {
                private Q request;

                @Override
                public void onMessage(Q message) {
                    request = message;
                }

                @Override
                public void onHalfClose() {
                    if (request == null) {
                        call.close(Status.INVALID_ARGUMENT.withDescription("a read needs its request"), new Metadata());
                        return;
                    }
                    String refusal = reads.enter(client);
                    if (refusal != null) {
                        long n = refusedReads.incrementAndGet();
                        if (n == 1 || n % 1000 == 0) {
                            LOG.warn("refused a read from {}: {} ({} refused so far)", client, refusal, n);
                        }
                        call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), new Metadata());
                        return;
                    }
                    Q q = request;
                    if (atOnce != null) {
                        boolean done = true;
                        try {
                            done = answered(call, atOnce, q);
                        } finally {
                            if (done) {
                                reads.leave(client);
                            }
                        }
                        if (done) {
                            return;
                        }
                    }
                    try {
                        calls.execute(io.grpc.Context.current().wrap(() -> answer(call, answer, q, client)));
                    } catch (java.util.concurrent.RejectedExecutionException stopping) {
                        reads.leave(client);
                        call.close(Status.UNAVAILABLE.withDescription("the registry is stopping"), new Metadata());
                    }
                }
            };
        };
    }

    private <Q, A> void answer(ServerCall<Q, A> call, java.util.function.Function<Q, A> answer, Q request,
                               SocketAddress client) {
        try {
            answered(call, answer, request);
        } finally {
            reads.leave(client);
        }
    }

    /** Sends what {@code answer} gives, or the failure it throws; false (nothing sent) when it gives null. */
    private static <Q, A> boolean answered(ServerCall<Q, A> call, java.util.function.Function<Q, A> answer, Q request) {
        try {
            A a = answer.apply(request);
            if (a == null) {
                return false;
            }
            call.sendHeaders(new Metadata());
            call.sendMessage(a);
            call.close(Status.OK, new Metadata());
        } catch (RuntimeException e) {
            try {
                call.close(Status.fromThrowable(e), new Metadata());
            } catch (IllegalStateException closed) {
                // cancelled by the client meanwhile
            }
        }
        return true;
    }

    /** Messages sent so far, over every stream. */
    long sent() {
        return sent.get();
    }

    private synchronized void wake() {
        dirty = true;
        notifyAll();
    }

    private void dispatch() {
        // with client certificates, a stream whose caller was revoked ends within a sweep even
        // when no change comes for its names (changes to others' names included); with a policy,
        // so does one the policy in force no longer allows, however it was replaced (a file
        // reloaded, a supplier of the application's own), rather than holding one of its host's
        // watches until a change that may never come
        boolean sweeping = authorization != null || (tls != null && tls.requiresTrustedPeer());
        long sweepNanos = TimeUnit.MILLISECONDS.toNanos(SWEEP_MILLIS);
        long nextSweep = System.nanoTime() + sweepNanos;
        while (true) {
            boolean changed;
            synchronized (this) {
                if (!dirty && !closed) {
                    try {
                        // 0: wait for a change only
                        wait(sweeping ? Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextSweep - System.nanoTime())) : 0);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
                changed = dirty;
                dirty = false;
            }
            if (sweeping && System.nanoTime() - nextSweep >= 0) {
                for (Follower f : followers) {
                    if (f.stillTrusted()) {
                        f.stillAllowed();
                    }
                }
                nextSweep = System.nanoTime() + sweepNanos;
            }
            if (!changed) {
                continue;
            }
            Map<Object, byte[]> encoded = new HashMap<>();
            for (Follower f : followers) {
                try {
                    f.send(encoded);
                } catch (RuntimeException e) {
                    LOG.warn("watch stream to {}: {}; closing it", f.client, e.toString());
                    f.end(Status.INTERNAL.withDescription("the registry could not send a change: " + e.getMessage()));
                }
            }
        }
    }

    /** One stream: the names it watches and what it was last sent. Calls on it are made under its lock. */
    private final class Follower {
        final ServerCall<Watch, byte[]> call;
        final SocketAddress client;
        /** Who watches: what a policy on watched names decides by. */
        final Peer peer;
        /** The TLS session of the stream's connection; null in plain text. */
        final javax.net.ssl.SSLSession session;
        Set<String> names;
        /** The policy this stream's names were last allowed by; null without a policy. */
        io.switchboard.server.authz.AuthorizationPolicy allowedBy;
        String epoch;
        Long since;
        boolean started;
        boolean done;

        Follower(ServerCall<Watch, byte[]> call, SocketAddress client, Peer peer) {
            this.call = call;
            this.client = client;
            this.peer = peer;
            this.session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        }

        synchronized void start(Watch request) {
            // taken before the check: a policy replaced during it is checked again at the first send
            allowedBy = authorization == null ? null : authorization.policy();
            Status denied = denied(peer, RegistryPaths.watch(request.getNames()));
            if (denied != null) {
                end(denied);
                return;
            }
            Set<String> wanted = WatchHub.names(request.getNames());
            if (wanted.size() > RegistryWatches.MAX_WATCHED_NAMES) {
                end(Status.INVALID_ARGUMENT.withDescription("a watch names at most " + RegistryWatches.MAX_WATCHED_NAMES
                        + " components"));
                return;
            }
            names = wanted;
            epoch = request.getEpoch();
            since = request.getSinceVersion();
            started = true;
            wake();
        }

        synchronized void send(Map<Object, byte[]> encoded) {
            if (!started || done || !call.isReady() || (since != null && hub.epoch().equals(epoch)
                    && since == hub.version())) {
                return;
            }
            WatchHub.Poll poll = hub.poll(names, epoch, since, Duration.ZERO);
            if (poll.reset()) {
                poll = hub.snapshot(names);
            }
            epoch = poll.epoch();
            long from = since == null ? -1 : since;
            since = poll.version();
            if (!poll.reset() && poll.changes().isEmpty()) {
                return;   // nothing of its names changed
            }
            // a stream outlives its start's check: a caller revoked since (or of an authority
            // withdrawn) is told nothing more, as its next call would be refused
            if (!stillTrusted()) {
                return;
            }
            // and a policy replaced since (a policy file edited) is asked again before anything
            // more is sent: a watch it no longer allows ends, as a new one would be refused
            if (!stillAllowed()) {
                return;
            }
            WatchHub.Poll p = poll;
            byte[] message = encoded.computeIfAbsent(new Sent(names, p.reset() ? -1 : from, p.version()),
                    k -> WatchStreamMethod.encode(RegistryWatches.toWire(p)));
            call.sendMessage(message);
            sent.incrementAndGet();
        }

        /**
         * Whether the client certificate of the stream's connection is still trusted (true in plain
         * text); ends the stream as unauthenticated when it is not.
         */
        synchronized boolean stillTrusted() {
            if (done) {
                return false;
            }
            if (tls == null || tls.stillTrusts(session)) {
                return true;
            }
            end(Status.UNAUTHENTICATED.withDescription("the client certificate of this connection is no"
                    + " longer trusted (revoked, or its authority withdrawn)"));
            return false;
        }

        /**
         * Asks the policy in force again when it was replaced since this stream's names were last
         * allowed; ends the stream with the denial when it no longer allows them.
         */
        synchronized boolean stillAllowed() {
            if (done) {
                return false;
            }
            if (authorization == null || !started || authorization.policy() == allowedBy) {
                return true;
            }
            io.switchboard.server.authz.AuthorizationPolicy now = authorization.policy();
            Status denied = denied(peer, RegistryPaths.watch(List.copyOf(names)));
            if (denied != null) {
                end(denied);
                return false;
            }
            allowedBy = now;
            return true;
        }

        /** Ends the stream from this side (refused, invalid, or the registry stops). */
        synchronized void end(Status status) {
            if (!done) {
                done = true;
                forget(this);   // first: a client told of the end finds its watch slot free
                try {
                    call.close(status, new Metadata());
                } catch (IllegalStateException e) {
                    // closed already by the peer
                }
            }
        }

        synchronized void cancelled() {
            if (!done) {
                done = true;
                forget(this);
            }
        }
    }

    /** What one encoded message holds: the same for every follower of these names sent from this version to that. */
    private record Sent(Set<String> names, long from, long to) {
    }

    private synchronized void forget(Follower f) {
        if (followers.remove(f)) {
            open.decrementAndGet();
            perClient.computeIfPresent(host(f.client), (k, n) -> n.decrementAndGet() <= 0 ? null : n);
        }
    }

    /** Ends a read with {@code PERMISSION_DENIED} when the policy denies its caller {@code path}. */
    private void refuseIfDenied(String path) {
        Status denied = denied(StreamCallers.peer(), List.of(path));
        if (denied != null) {
            throw denied.asRuntimeException();
        }
    }

    /**
     * PERMISSION_DENIED, as gRPC's own authorization answers, when the policy in force does not
     * allow {@code peer} every one of {@code paths}; null when it does (or there is no policy).
     */
    private Status denied(Peer peer, List<String> paths) {
        if (authorization == null) {
            return null;
        }
        try {
            authorization.check("grpc", peer, paths);
            return null;
        } catch (io.switchboard.protocol.PermissionDeniedException e) {
            return Status.PERMISSION_DENIED.withDescription(e.getMessage());
        }
    }

    private final class Handler implements ServerCallHandler<Watch, byte[]> {
        @Override
        public ServerCall.Listener<Watch> startCall(ServerCall<Watch, byte[]> call, Metadata headers) {
            SocketAddress client = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            String refusal = admit(client);
            if (refusal != null) {
                long n = refused.incrementAndGet();
                if (StrangerWarnings.due(n)) {
                    LOG.warn("refused a watch stream from {}: {} ({} refused so far)", client, refusal, n);
                }
                call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
            Follower f = new Follower(call, client, StreamCallers.peer());
            followers.add(f);
            call.sendHeaders(new Metadata());
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(Watch request) {
                    f.start(request);
                }

                @Override
                public void onReady() {
                    wake();
                }

                @Override
                public void onCancel() {
                    f.cancelled();
                }
            };
        }
    }

    /** Counts one more stream for {@code client}; null if admitted, else why not. */
    private synchronized String admit(SocketAddress client) {
        if (closed) {
            return "the registry is stopping";
        }
        if (open.get() >= maxWatches) {
            return "this registry server has " + maxWatches + " watches open, its limit; watch through another"
                    + " registry server or later";
        }
        AtomicInteger mine = perClient.computeIfAbsent(host(client), k -> new AtomicInteger());
        if (mine.get() >= maxPerClient) {
            return "this client's address has " + maxPerClient + " watches open, its share; close some"
                    + " or watch every name in one";
        }
        mine.incrementAndGet();
        open.incrementAndGet();
        return null;
    }

    /** The host of a remote address: a client's share is its host's, however many connections it opens. */
    private static Object host(SocketAddress client) {
        return client instanceof InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress() : client;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        for (Follower f : followers) {
            f.end(Status.UNAVAILABLE.withDescription("the registry is stopping"));
        }
        server.shutdownNow();
        try {
            server.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        calls.shutdownNow();
        connections.close();
    }
}

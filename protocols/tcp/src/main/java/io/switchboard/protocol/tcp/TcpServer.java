package io.switchboard.protocol.tcp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.spi.CallerIdentity;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.Skeleton;
import io.switchboard.protocol.SwitchboardException;
import io.switchboard.protocol.spi.ConnectionShares;
import io.switchboard.protocol.spi.Endpoints;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.StrangerWarnings;
import io.switchboard.protocol.spi.UnixSockets;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One tcp listener serving any number of components, each as the service its typed {@code .proto}
 * names ({@code switchboard.echo.Echo}), each operation a method of it. The event loop cuts frames
 * and reads their metas; a call's message is read, its operation run and its answer written on a
 * worker thread of its own (at most {@link ServerSettings#maxConcurrentCalls()} at once; one more
 * is answered {@code EOVERCROWDED} before it runs), so calls on one connection run side by side and
 * are answered in the order they finish. A call whose client cancels it, whose {@code timeout_ms}
 * passes or whose connection closes is cancelled: its thread is interrupted and
 * {@link ServerCallContext#isCancelled()} says so; its answer is not sent.
 *
 * <p>Fair shares: connections are counted per remote address and per server
 * ({@link ConnectionShares}; a newcomer over a limit displaces the connection of its share stalled
 * longest, idle or in a frame begun and not finished); a connection runs at most half the server's
 * calls; a frame must arrive whole within the request timeout, large frames' buffers come from one
 * {@link FrameBudget}, and a frame over the limit is answered {@code ELIMIT} and its connection
 * closed without its data being read.
 *
 * <p>On Linux (epoll) a server without TLS also listens on a Unix domain socket, with the same
 * connections as its port's, and its endpoints name it for clients on the same host
 * ({@link UnixListener}, {@link UnixSockets}).
 */
final class TcpServer implements ProtocolServer {
    private static final Logger LOG = LoggerFactory.getLogger(TcpServer.class);

    /**
     * System property: how many event loops a tcp server runs, each serving its share of the
     * connections (0, the default: Netty's, two per core). One serves every connection on one
     * thread, which a call on another connection then finds warm (docs/benchmarks/small-calls.md);
     * but the server runs short operations on its event loops, so one loop runs them all on one core.
     */
    static final String EVENT_LOOPS_PROPERTY = "switchboard.tcp.eventLoops";
    private static final int MAX_EVENT_LOOPS = 1024;

    private final ServerSettings settings;
    private final TcpLimits tcpLimits;
    private final int eventLoops;
    private final MessageLimits limits;
    private final Map<String, Exported> exported = new ConcurrentHashMap<>();
    private final ExecutorService workers;
    private final StrangerWarnings tlsRefusals = new StrangerWarnings("refused at TLS");
    private final StrangerWarnings brokenFramings = new StrangerWarnings("connections closed for broken framing");
    private final LongAdder busyRefusals = new LongAdder();
    private final LongAdder slowSenders = new LongAdder();
    private final LongAdder readsPaused = new LongAdder();
    private final LongAdder connectionRefusals = new LongAdder();
    private final LongAdder acceptedConnections = new LongAdder();
    private final ConnectionShares shares;
    private final FrameBudget budget;
    /** Most calls one connection runs at once: below the server's, so one connection cannot take every worker. */
    private final int callsPerConnection;
    private final LongAdder budgetRefusals = new LongAdder();
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private EventLoopGroup loops;
    private Channel listener;
    /** The Unix domain socket beside the TCP port (Linux, without TLS), or null. */
    private UnixListener unix;
    private boolean closed;

    /** A component as served: its skeleton and its operations by name. */
    private record Exported(Skeleton skeleton, String name, Map<String, OperationDescriptor> operations,
                            Map<String, InlineRuns> inline) {
    }

    TcpServer(ServerSettings settings, TcpLimits tcpLimits) {
        this(settings, tcpLimits, eventLoops(System.getProperty(EVENT_LOOPS_PROPERTY)));
    }

    /** @param eventLoops the event loops it runs; 0: Netty's default, two per core */
    TcpServer(ServerSettings settings, TcpLimits tcpLimits, int eventLoops) {
        if (eventLoops < 0 || eventLoops > MAX_EVENT_LOOPS) {
            throw new IllegalArgumentException("a tcp server runs 0 (Netty's default) to " + MAX_EVENT_LOOPS
                    + " event loops, not " + eventLoops);
        }
        this.eventLoops = eventLoops;
        this.settings = settings;
        this.tcpLimits = tcpLimits;
        this.limits = MessageLimits.of(Math.min(settings.maxMessageBytes(), tcpLimits.maxFrameBytes()),
                settings.maxGraphNodes());
        this.shares = new ConnectionShares(settings.maxConnections(), settings.maxConnectionsPerAddress());
        this.budget = new FrameBudget(tcpLimits.effectiveLargeFrameBudget());
        this.callsPerConnection = Math.min(tcpLimits.maxCallsPerConnection(),
                Math.max(1, settings.maxConcurrentCalls() / 2));
        // as many threads as calls run, up to the limit, idle ones kept a minute; no queue: a call
        // over the limit is refused at once rather than left waiting unseen
        this.workers = new ThreadPoolExecutor(0, settings.maxConcurrentCalls(), 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), DaemonThreads.numbered("tcp-call"));
    }

    @Override
    public String protocol() {
        return TcpProtocolProvider.NAME;
    }

    private synchronized void start() {
        if (closed) {
            throw new IllegalStateException("tcp server is closed");
        }
        if (listener != null) {
            return;
        }
        boolean epoll = Epoll.isAvailable();   // Linux: fewer system calls per call than the JDK's selector
        DefaultThreadFactory threads = new DefaultThreadFactory("tcp-server", true);
        loops = epoll ? new EpollEventLoopGroup(eventLoops, threads) : new NioEventLoopGroup(eventLoops, threads);
        ChannelInitializer<Channel> connection = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                acceptedConnections.increment();
                connections.add(ch);
                SslHandler tls = settings.tls() == null ? null : TcpTls.server(settings.tls());
                if (tls != null) {
                    ch.pipeline().addLast(tls);
                }
                FrameDecoder decoder = new FrameDecoder(tcpLimits.maxFrameBytes(), tcpLimits.maxMetaBytes(),
                        settings.requestTimeout(), budget, slowSenders::increment);
                Connection c = new Connection(ch, decoder, settings.idleTimeout().toNanos());
                if (tls != null) {
                    // runs on the event loop when the handshake ends, before any request of the connection is read
                    tls.handshakeFuture().addListener(f -> {
                        if (!f.isSuccess()) {
                            tlsRefusals.log(LOG, "tcp refused a connection from {} at TLS: {}", ch.remoteAddress(),
                                    f.cause().toString());
                            return;
                        }
                        try {
                            settings.tls().checkClientStillTrusted(tls.engine().getSession());
                            if (settings.tls().requiresTrustedPeer()) {
                                c.trusted(tls.engine().getSession());
                            }
                        } catch (java.security.cert.CertificateException e) {
                            // a resumed session of a caller no longer trusted: the calls it sends for a
                            // moment are answered as refused (they did not run, and the client takes no
                            // new ones here), then the connection ends; closed at once, its client would
                            // see its connection lost under its call (may have run)
                            c.untrusted();
                            tlsRefusals.log(LOG, "tcp refused a connection from {} at TLS: {}", ch.remoteAddress(),
                                    e.getMessage());
                            ch.eventLoop().schedule(() -> ch.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
                        }
                    });
                }
                ConnectionShares.Admission admission = shares.admit(c);
                if (admission.admitted()) {
                    ch.closeFuture().addListener(f -> shares.leave(c));
                    if (admission.evicted() != null) {
                        admission.evicted().evict();
                    }
                } else if (!refuse(ch, c, admission.refusal())) {
                    return;
                }
                // one handler: the connection cuts its frames, keeps its own idle time and holds
                // the flushes of one read's answers, where a decoder, an idle and a flush handler
                // would each run on every call
                ch.pipeline().addLast(c);
            }
        };
        ServerBootstrap b = new ServerBootstrap().group(loops)
                .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, FrameArrays.ALLOCATOR)
                .childHandler(connection);
        try {
            listener = b.bind(new InetSocketAddress(settings.bindAddress(), settings.port())).sync().channel();
            LOG.debug("tcp listening on {}", listener.localAddress());
        } catch (Exception e) {
            loops.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            loops = null;
            throw new SwitchboardException("tcp server cannot listen on " + settings.bindAddress() + ":"
                    + settings.port() + ": " + e.getMessage(), e);
        }
        if (epoll && settings.tls() == null && UnixSockets.TCP.enabled()) {
            unix = UnixListener.open(loops, connection);
        }
    }

    int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** The event loops of {@link #EVENT_LOOPS_PROPERTY}'s value: 0 when unset; a clear error when not 0 to 1024. */
    static int eventLoops(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0 && n <= MAX_EVENT_LOOPS) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("-D" + EVENT_LOOPS_PROPERTY + " takes a whole number from 0 (Netty's default,"
                + " two per core) to " + MAX_EVENT_LOOPS + ", not '" + value + "'");
    }

    /** The event loops running now (0 before the first export); for tests. */
    synchronized int eventLoopCount() {
        return loops == null ? 0 : ((io.netty.util.concurrent.MultithreadEventExecutorGroup) loops).executorCount();
    }

    /** The Unix domain socket this server listens on as well, or null. */
    synchronized java.nio.file.Path unixSocket() {
        return unix == null ? null : unix.path();
    }

    @Override
    public long refusedConnections() {
        return tlsRefusals.count();
    }

    @Override
    public long shedConnections() {
        return evictions() + connectionRefusals();
    }

    /** Calls refused because every worker was running a call; for tests and logs. */
    long busyRefusals() {
        return busyRefusals.sum();
    }

    /** Connections closed because a frame arrived slower than the settings allow; for tests and logs. */
    long slowSenders() {
        return slowSenders.sum();
    }

    /**
     * Times a connection stopped being read because its answers were not being taken (more than
     * Netty's write water mark waiting); for tests.
     */
    long readsPaused() {
        return readsPaused.sum();
    }

    /** Connections closed because their bytes broke the framing (not PRPC, a frame too late); for tests and logs. */
    long brokenFramings() {
        return brokenFramings.count();
    }

    /** Connections refused because every connection of their share was working; for tests and logs. */
    long connectionRefusals() {
        return connectionRefusals.sum();
    }

    /** Refused connections open now, answering their requests EOVERCROWDED; for tests. */
    int refusedAnswering() {
        return shares.refusedAnswering();
    }

    /**
     * A connection over the shares: it answers the requests of its first read EOVERCROWDED and is
     * closed, or after {@link ConnectionShares#REFUSED_LIFETIME_MILLIS} if no request comes; at most
     * {@link ConnectionShares#MAX_REFUSED_ANSWERING} at a time. False: it is closed now, unanswered.
     */
    private boolean refuse(Channel ch, Connection c, String why) {
        connectionRefusals.increment();
        long n = connectionRefusals.sum();
        if (StrangerWarnings.due(n)) {
            LOG.warn("tcp server: {}; refusing {} ({} refused so far)", why, ch.remoteAddress(), n);
        }
        if (!shares.claimRefusedAnswer()) {
            ch.close();
            return false;
        }
        ch.closeFuture().addListener(f -> shares.refusedAnswered());
        c.refuse(why);
        return true;
    }

    /** Connections accepted so far, over TCP and the Unix socket; for tests and logs. */
    long acceptedConnections() {
        return acceptedConnections.sum();
    }

    /** Connections closed to admit another of their share; for tests and logs. */
    long evictions() {
        return shares.evictions();
    }

    /** Connections counted now, and the large-frame buffer bytes reserved now; for tests. */
    int openConnections() {
        return shares.open();
    }

    FrameBudget budget() {
        return budget;
    }

    /** Frames answered busy because the large-frame budget was spent; for tests and logs. */
    long budgetRefusals() {
        return budgetRefusals.sum();
    }

    @Override
    public synchronized Endpoint export(Skeleton skeleton) {
        start();
        ServiceDescriptor d = skeleton.descriptor();
        if (d.codec(ProtoCodec.class) == null) {
            throw new IllegalArgumentException(d.name() + " has no protobuf codec: recompile it with this Switchboard");
        }
        Map<String, OperationDescriptor> ops = new HashMap<>();
        Map<String, InlineRuns> inline = new HashMap<>();
        for (OperationDescriptor op : d.operations()) {
            ops.put(op.name(), op);
            inline.put(op.name(), new InlineRuns(TimeUnit.MICROSECONDS.toNanos(tcpLimits.inlineMicros())));
        }
        String service = ProtoSchemas.serviceName(d.name());
        if (exported.putIfAbsent(service, new Exported(skeleton, d.name(), Map.copyOf(ops), Map.copyOf(inline))) != null) {
            throw new IllegalStateException(d.name() + " is already exported on this tcp server");
        }
        String host = Endpoints.uriHost(settings.hostForEndpoints());
        return new Endpoint(protocol(), TcpTls.scheme(settings.tls()) + "://" + host + ":" + port() + "/" + d.name()
                + (unix == null ? "" : "?" + UnixSockets.query(unix.path())));
    }

    @Override
    public synchronized void unexport(String componentName) {
        exported.values().removeIf(e -> e.name().equals(componentName));
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        exported.clear();
        if (listener != null) {
            listener.close().awaitUninterruptibly();
            if (unix != null) {
                unix.close();
            }
            connections.close().awaitUninterruptibly();
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
        workers.shutdownNow();
    }

    /**
     * One connection's calls: those running, by correlation id, so that a cancel or the close finds
     * them; and its share of the server's connections.
     */
    private final class Connection extends ChannelInboundHandlerAdapter
            implements ConnectionShares.Member, TcpCall.Owner, FrameDecoder.Sink {
        /** Answers held during one read before they are flushed anyway, as Netty's FlushConsolidationHandler does. */
        private static final int MAX_HELD_ANSWERS = 256;

        private final Map<Long, TcpCall> running = new ConcurrentHashMap<>();
        private final Channel channel;
        private final FrameDecoder decoder;
        private final Object address;
        /** Since when no call has run and no frame has come (System.nanoTime). */
        private volatile long idleSince = System.nanoTime();
        /** A connection idle this long, with no call running and no frame under way, is closed; 0 or less: never. */
        private final long idleNanos;
        private io.netty.util.concurrent.ScheduledFuture<?> idleCheck;
        /** Whether the event loop is handling a read; answers written meanwhile are flushed at its end. Loop only. */
        private boolean reading;
        /** Answers written during the current read and not yet flushed. Loop only. */
        private int held;
        /** Over the connection limits: every request is answered EOVERCROWDED, then the connection closes. */
        private String refused;
        /** Its TLS client is no longer trusted ({@link #untrusted}). Loop only. */
        private boolean untrusted;
        /** The TLS session of a connection whose server requires client certificates, once its handshake is done. */
        private javax.net.ssl.SSLSession tlsSession;

        /** What the connection proves of its peer, settled at its first call (after the TLS handshake). */
        private Peer peer;
        private CallerIdentity peerCaller;

        Connection(Channel channel, FrameDecoder decoder, long idleNanos) {
            this.channel = channel;
            this.decoder = decoder;
            this.idleNanos = idleNanos;
            this.address = channel.remoteAddress() instanceof InetSocketAddress inet && inet.getAddress() != null
                    ? inet.getAddress() : "unix-socket";   // every local process on the Unix socket shares one
        }

        void refuse(String why) {
            refused = why;
        }

        /** Its TLS client is no longer trusted: each request it sends is refused until the connection closes. */
        void untrusted() {
            untrusted = true;
        }

        /** The handshake of a connection whose client must present a trusted certificate is done. Loop only. */
        void trusted(javax.net.ssl.SSLSession session) {
            tlsSession = session;
        }

        @Override
        public Object address() {
            return address;
        }

        @Override
        public long stalledSinceNanos() {
            if (!running.isEmpty()) {
                return Long.MAX_VALUE;
            }
            long frame = decoder.frameStartNanos();
            return frame != 0 ? frame : idleSince;
        }

        @Override
        public void evict() {
            LOG.debug("tcp: closing stalled {} to admit another connection", channel);
            channel.close();
        }

        /** The peer of this connection: the Unix socket's uid, the TLS client certificate, or its address alone. */
        private Peer peer(ChannelHandlerContext ctx) {
            if (peer == null) {
                peer = ConnectionPeers.of(ctx.channel());
            }
            return peer;
        }

        /** Who makes a call that carries {@code token}: without one, the connection's peer, made once. */
        private CallerIdentity caller(ChannelHandlerContext ctx, String token) {
            if (token != null && settings.tokenVerifier() != null) {
                return CallerIdentity.of(peer(ctx), token, settings.tokenVerifier());
            }
            if (peerCaller == null) {
                peerCaller = CallerIdentity.of(peer(ctx), null, null);
            }
            return peerCaller;
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            decoder.release();   // a frame begun and not finished, and its budget reservation
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            if (refused != null) {
                ctx.executor().schedule(() -> ctx.close(), ConnectionShares.REFUSED_LIFETIME_MILLIS, TimeUnit.MILLISECONDS);
            } else if (idleNanos > 0) {   // none: connections are not closed for being idle
                idleCheck = ctx.executor().schedule(() -> checkIdle(ctx), idleNanos, TimeUnit.NANOSECONDS);
            }
        }

        /** Closes the connection once idle for the idle timeout; otherwise looks again when it could be. */
        private void checkIdle(ChannelHandlerContext ctx) {
            if (!ctx.channel().isOpen()) {
                return;
            }
            long quiet = System.nanoTime() - idleSince;
            boolean working = !running.isEmpty() || decoder.frameStartNanos() != 0;
            if (!working && quiet >= idleNanos) {
                LOG.debug("tcp: closing idle connection {}", ctx.channel());
                ctx.close();
                return;
            }
            long next = working || quiet >= idleNanos ? idleNanos : idleNanos - quiet;
            idleCheck = ctx.executor().schedule(() -> checkIdle(ctx), next, TimeUnit.NANOSECONDS);
        }

        /**
         * Writes a call's answer: during a read on the event loop, held until the read ends, so
         * that the answers of the calls one read brought in leave in one write; otherwise at once.
         */
        @Override
        public void sendAnswer(ChannelHandlerContext ctx, ByteBuf frame) {
            if (ctx.executor().inEventLoop() && reading && ++held < MAX_HELD_ANSWERS) {
                ctx.write(frame, ctx.voidPromise());
            } else {
                held = 0;
                ctx.writeAndFlush(frame, ctx.voidPromise());
            }
        }

        /**
         * A client that sends calls and does not read their answers: once the answers waiting to
         * be written pass the channel's write water mark, its requests are no longer read (and its
         * calls no longer run) until they are taken. Without this, Netty would hold every answer of
         * such a client in memory, as many as it cared to ask for. A connection left so, with no
         * call running, is closed by the idle or the request timeout as any other.
         */
        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            boolean writable = ctx.channel().isWritable();
            if (!writable && ctx.channel().config().isAutoRead()) {
                readsPaused.increment();
            }
            ctx.channel().config().setAutoRead(writable);
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            reading = false;
            if (held > 0) {
                held = 0;
                ctx.flush();
            }
            if (refused != null) {
                ctx.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER)
                        .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
            }
            ctx.fireChannelReadComplete();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            decoder.read(ctx, msg, this);
        }

        /** A request's frame, cut from this connection's bytes. */
        @Override
        public void frame(ChannelHandlerContext ctx, Frame frame) {
            RpcMeta meta = frame.meta;
            reading = true;
            idleSince = System.nanoTime();
            if (!meta.isRequest()) {
                frame.release();
                LOG.debug("tcp: a response frame from a client; closing {}", ctx.channel());
                ctx.close();
                return;
            }
            if (meta.userField(TcpErrors.CANCEL) != null) {
                frame.release();
                TcpCall c = running.get(meta.correlationId());
                if (c != null) {
                    c.cancel();
                }
                return;
            }
            if (untrusted) {
                frame.release();
                if (frame.oversized()) {
                    answerAndClose(ctx, TcpErrors.noLongerTrusted(meta.correlationId()));   // its data is not read
                } else {
                    answer(ctx, TcpErrors.noLongerTrusted(meta.correlationId()));
                }
                return;
            }
            if (refused != null || running.size() >= callsPerConnection) {
                frame.release();
                busyRefusals.increment();
                answer(ctx, RpcMeta.response(meta.correlationId(), TcpErrors.OVERCROWDED, refused != null
                        ? "server busy: " + refused + "; the call did not run"
                        : "this connection runs " + callsPerConnection + " calls, its limit; the call"
                        + " did not run", null));
                return;
            }
            if (frame.overBudget) {
                budgetRefusals.increment();
                answer(ctx, RpcMeta.response(meta.correlationId(), TcpErrors.OVERCROWDED, "server busy: its "
                        + budget.bytes() + " bytes for large frames are in use; the call did not run", null));
                return;
            }
            Exported e = exported.get(meta.service());
            OperationDescriptor op = e == null ? null : e.operations().get(meta.method());
            if (op == null && frame.oversized()) {
                answerAndClose(ctx, RpcMeta.response(meta.correlationId(), TcpErrors.LIMIT, "a message of "
                        + frame.dataBytes + " bytes is over the frame limit of " + tcpLimits.maxFrameBytes(), null));
                return;
            }
            if (op == null) {
                frame.release();
                answer(ctx, RpcMeta.response(meta.correlationId(), e == null ? TcpErrors.NO_SERVICE : TcpErrors.NO_METHOD,
                        (e == null ? "no service " : "no method " + meta.method() + " in ") + meta.service()
                                + " is served here", null));
                return;
            }
            if (frame.oversized()) {
                e.skeleton().refused(op, WireFormatException.SIZE_LIMIT);
                answerAndClose(ctx, TcpErrors.refusal(meta.correlationId(), new WireFormatException(
                        WireFormatException.SIZE_LIMIT, "a message of " + frame.dataBytes + " bytes is over the frame"
                        + " limit of " + tcpLimits.maxFrameBytes() + "; its data is not read and the connection"
                        + " closes"), op.toString()));
                return;
            }
            String cannotTake = unsupported(meta);
            if (cannotTake != null) {
                frame.release();   // the frame is read whole: the connection goes on with the next one
                e.skeleton().refused(op, WireFormatException.MALFORMED);
                answer(ctx, TcpErrors.refusal(meta.correlationId(), WireFormatException.malformed(
                        meta.attachmentSize() != 0 ? "RpcMeta.attachment_size" : "RpcMeta.compress_type", cannotTake),
                        op.toString()));
                return;
            }
            String callId = meta.requestId();
            if (callId != null && !io.switchboard.protocol.CallIds.wellFormed(callId)) {
                frame.release();
                e.skeleton().refused(op, WireFormatException.MALFORMED);
                answer(ctx, TcpErrors.refusal(meta.correlationId(), WireFormatException.malformed(
                        "RpcRequestMeta.request_id", io.switchboard.protocol.CallIds.rule()), op.toString()));
                return;
            }
            PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);
            InlineRuns inline = e.inline().get(op.name());
            // who calls: the connection's peer, unless the frame's bearer token verifies; over TLS
            // the connection's client chain still trusted (revocations and withdrawals reach open connections)
            CallerIdentity caller = caller(ctx, meta.authentication());
            if (tlsSession != null) {
                caller = caller.unlessNoLongerTrusted(settings.tls(), tlsSession);
            }
            TcpCall call = new TcpCall(ctx, this, e.skeleton(), op, meta, frame.data, inline, caller, limits,
                    settings.maxGraphNodes(), tcpLimits.maxFrameBytes(), settings.tls(), tlsSession);
            // a compressed request inflates on a worker: its size on the wire says nothing of its cost
            boolean onLoop = meta.compressType() == 0 && inline.inline(frame.data.readableBytes());
            // a call run here is not listed among those running: no cancel, timer or close can reach
            // it before it ends, as all three run on this event loop
            if (onLoop ? running.containsKey(meta.correlationId())
                    : running.putIfAbsent(meta.correlationId(), call) != null) {
                frame.release();
                answer(ctx, TcpErrors.refusal(meta.correlationId(), WireFormatException.malformed(
                        "RpcMeta.correlation_id", "a call with this correlation id is under way"), op.toString()));
                return;
            }
            if (onLoop) {
                call.runUnlisted();   // a fast operation: answered from here, without a worker (InlineRuns)
                return;
            }
            try {
                workers.execute(call);
            } catch (RejectedExecutionException busy) {
                running.remove(meta.correlationId());
                frame.release();
                busyRefusals.increment();
                answer(ctx, RpcMeta.response(meta.correlationId(), TcpErrors.OVERCROWDED, "server busy: all "
                        + settings.maxConcurrentCalls() + " call workers are running calls; the call did not run", null));
                return;
            }
            if (meta.timeoutMillis() > 0) {
                call.deadline = ctx.executor().schedule(call::timedOut, meta.timeoutMillis(), TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public boolean end(long correlationId, TcpCall call) {
            idleSince = System.nanoTime();
            return running.remove(correlationId, call);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (idleCheck != null) {
                idleCheck.cancel(false);
            }
            for (TcpCall c : running.values()) {
                c.cancel();   // no one is left to answer
            }
            running.clear();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof FrameDecoder.FrameException) {
                brokenFramings.log(LOG, "tcp: closing {}: {}", ctx.channel().remoteAddress(), cause.getMessage());
            } else {
                LOG.debug("tcp: closing {}", ctx.channel(), cause);
            }
            ctx.close();
        }
    }

    /** Why a request cannot be taken (an attachment, an unknown compression), or null. */
    private static String unsupported(RpcMeta meta) {
        if (meta.attachmentSize() != 0) {
            return "attachments are not taken: this server reads the message only (attachment_size "
                    + meta.attachmentSize() + ")";
        }
        if (TcpCompression.ofWireType(meta.compressType()) == null) {
            return "compress_type " + meta.compressType() + " is not one this server takes (0 none, 1 snappy,"
                    + " 2 gzip, 3 zlib)";
        }
        return null;
    }

    /** Writes an answer of meta only. */
    static void answer(ChannelHandlerContext ctx, RpcMeta meta) {
        ctx.writeAndFlush(Frame.encode(ctx.alloc(), meta.encode(), null));
    }

    /** How long a connection closed after an answer still takes (and drops) its client's bytes. */
    private static final long LINGER_MILLIS = 1000;

    /**
     * Writes an answer of meta only and ends the connection: output first, so the answer arrives
     * ahead of the end, then the whole connection once the client closes its side or a moment has
     * passed. Closed at once, with the client's unread bytes still arriving, the connection would
     * be reset, and a reset may overtake the answer.
     */
    private static void answerAndClose(ChannelHandlerContext ctx, RpcMeta meta) {
        byte[] closing = meta.withUserField(TcpErrors.CLOSING, "1").encode();
        ctx.writeAndFlush(Frame.encode(ctx.alloc(), closing, null)).addListener(f -> {
            if (ctx.channel() instanceof io.netty.channel.socket.DuplexChannel duplex && f.isSuccess()) {
                duplex.shutdownOutput();
                ctx.executor().schedule(() -> ctx.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
            } else {
                ctx.close();
            }
        });
    }

}

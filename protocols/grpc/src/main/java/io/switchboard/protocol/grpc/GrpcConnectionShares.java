package io.switchboard.protocol.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.netty.shaded.io.netty.util.concurrent.ScheduledFuture;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ConnectionShares;
import io.switchboard.protocol.spi.StrangerWarnings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC listener's connections within their shares ({@link ConnectionShares}): at most
 * {@link ServerSettings#maxConnections()} in all and {@link ServerSettings#maxConnectionsPerAddress()}
 * from one remote address; a newcomer over either displaces the connection of its share stalled
 * longest (no call open on it, since its last call ended or it was accepted), or is refused if
 * every one has calls open. A refused connection is not counted in the shares: it answers the
 * calls it brings UNAVAILABLE with the {@code sb-busy} trailer ("the call did not run", so that a
 * client may take the call to another server or protocol, where a connection closed at once reads
 * as one that may have run the call), then is closed; at most
 * {@value ConnectionShares#MAX_REFUSED_ANSWERING} do so at a time, and those past it are closed at
 * once. gRPC offers no connection limit of its own: this one admits each
 * connection as it is accepted, on the listener's own event loops, and learns which connections
 * are working from an interceptor that counts their open calls. A server's Unix socket on the
 * same host ({@link #applyUnix}) shares the same limits: its connections all count as one remote
 * address, as TCP's from loopback do.
 *
 * <pre>{@code
 * GrpcConnectionShares shares = new GrpcConnectionShares(settings, "registry-grpc");
 * Server server = shares.apply(NettyServerBuilder.forAddress(at))
 *         .intercept(shares.callCounter())   // or ServerInterceptors.intercept(service, shares.callCounter())
 *         .build().start();
 * ...
 * server.shutdown(); shares.close();
 * }</pre>
 */
public final class GrpcConnectionShares implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GrpcConnectionShares.class);

    private final ConnectionShares shares;
    /**
     * How long a client may leave a closed call's answer untaken (its HTTP/2 window shut) before
     * its connection is closed: the settings' request timeout.
     */
    private final long answerTakenNanos;
    private final StrangerWarnings answersNotTaken = new StrangerWarnings("closed");
    /** How long a refused connection lasts after its first call was answered busy: for the answer to be read. */
    static final long REFUSED_LINGER_MILLIS = 500;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    /** The admitted connections by their remote address (address and port: one connection each). */
    private final Map<SocketAddress, Member> members = new ConcurrentHashMap<>();
    /**
     * The admitted connections over the Unix socket, by their remote address as an instance: every
     * one's is the same empty path, but each connection keeps its own instance, which gRPC hands on
     * as the call's {@link Grpc#TRANSPORT_ATTR_REMOTE_ADDR}.
     */
    private final Map<SocketAddress, Member> unixMembers = Collections.synchronizedMap(new IdentityHashMap<>());
    /** The Unix socket's event loops (epoll), made by {@link #applyUnix}. */
    private volatile EventLoopGroup unixBoss;
    private volatile EventLoopGroup unixWorkers;
    private final String name;
    /** Whether admitted connections get an {@link Http2Tuner} ({@link #applyTunedForLargeMessages}). */
    private volatile boolean tuned;

    /** Shares by {@code settings}' connection limits; {@code name} names the event loop threads. */
    public GrpcConnectionShares(ServerSettings settings, String name) {
        this.shares = new ConnectionShares(settings.maxConnections(), settings.maxConnectionsPerAddress());
        this.name = name;
        this.answerTakenNanos = settings.requestTimeout().toNanos();
        this.boss = new NioEventLoopGroup(1, new DefaultThreadFactory(name + "-accept", true));
        this.workers = new NioEventLoopGroup(0, new DefaultThreadFactory(name + "-io", true));
    }

    /** The builder with this listener's channel, which admits each connection, and its event loops. */
    public NettyServerBuilder apply(NettyServerBuilder builder) {
        return builder.channelFactory(Listener::new).bossEventLoopGroup(boss).workerEventLoopGroup(workers);
    }

    /** As {@link #apply}, each admitted connection tuned for large messages ({@link Http2Tuner}) before gRPC sets it up. */
    NettyServerBuilder applyTunedForLargeMessages(NettyServerBuilder builder) {
        tuned = true;
        return apply(builder);
    }

    /**
     * The builder of a listener on a Unix socket ({@code NettyServerBuilder.forAddress(new
     * DomainSocketAddress(path))}): its connections admitted within the same shares, tuned as
     * {@link #applyTunedForLargeMessages}, with socket buffers of {@link NettyTuning#UNIX_SOCKET_BUFFER_BYTES}, on
     * event loops of Netty's epoll transport (Linux only).
     */
    NettyServerBuilder applyUnix(NettyServerBuilder builder) {
        tuned = true;
        synchronized (this) {
            if (unixBoss == null) {
                unixBoss = new EpollEventLoopGroup(1, new DefaultThreadFactory(name + "-unix-accept", true));
                unixWorkers = new EpollEventLoopGroup(0, new DefaultThreadFactory(name + "-unix-io", true));
            }
        }
        return builder.channelFactory(this::newUnixListener).bossEventLoopGroup(unixBoss).workerEventLoopGroup(unixWorkers)
                .withChildOption(ChannelOption.SO_SNDBUF, NettyTuning.UNIX_SOCKET_BUFFER_BYTES)
                .withChildOption(ChannelOption.SO_RCVBUF, NettyTuning.UNIX_SOCKET_BUFFER_BYTES)
                // gRPC asks every connection for TCP keep-alives, which a Unix socket has not: Netty
                // would warn of an unknown option on each one
                .withChildOption(ChannelOption.SO_KEEPALIVE, null);
    }

    /**
     * Who calls over the Unix socket connection whose remote address is {@code remote}: the uid of
     * the process at its other end ({@code SO_PEERCRED}); null for a connection that is not one of
     * this listener's Unix socket connections.
     */
    Peer unixPeer(SocketAddress remote) {
        if (remote == null || remote instanceof InetSocketAddress) {
            return null;   // a TCP call, the usual one: no lock taken on the socket's map
        }
        Member m = unixMembers.get(remote);
        return m == null ? null : m.peer;
    }

    private Member member(SocketAddress remote) {
        if (remote == null) {
            return null;
        }
        return remote instanceof InetSocketAddress ? members.get(remote) : unixMembers.get(remote);
    }

    /** Counts each connection's open calls, so that one with calls open is never displaced. */
    public ServerInterceptor callCounter() {
        return new CallCounter();
    }

    /** The calls open now on the connection from {@code remote}, or 0 if it is not one of this listener's. */
    public int openCalls(SocketAddress remote) {
        Member m = member(remote);
        return m == null ? 0 : m.calls.get();
    }

    /** Connections closed so far because a call's answer was not taken in time. */
    public long answersNotTaken() {
        return answersNotTaken.count();
    }

    /** Connections displaced so far to admit others. */
    public long evictions() {
        return shares.evictions();
    }

    /** Connections refused so far because every connection of their share had calls open. */
    public long refusals() {
        return shares.refusals();
    }

    /** Connections open now. */
    public int open() {
        return shares.open();
    }

    /** Refused connections open now, answering their calls as busy; for tests. */
    int refusedAnswering() {
        return shares.refusedAnswering();
    }

    /** Shuts the event loops down; after the server has. */
    @Override
    public void close() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        if (unixBoss != null) {
            unixBoss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            unixWorkers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    /** One accepted connection: its channel and its open calls. */
    private final class Member implements ConnectionShares.Member {
        final Channel channel;
        final Object address;
        /** Over the Unix socket: who is at the other end; else null (the call's transport says). */
        final Peer peer;
        final AtomicInteger calls = new AtomicInteger();
        volatile long idleSince = System.nanoTime();
        /** Why the shares refused it, or null: admitted. A refused one answers its calls as busy. */
        volatile String refusal;

        Member(Channel channel, InetSocketAddress remote) {
            this.channel = channel;
            this.address = remote.getAddress() != null ? remote.getAddress() : remote.getHostString();
            this.peer = null;
        }

        /** A connection over the Unix socket at {@code path}: all of them count as one address, the socket's. */
        Member(EpollDomainSocketChannel channel, String path) {
            this.channel = channel;
            this.address = UNIX_ADDRESS;
            Peer p;
            try {
                p = Peer.of("uid:" + channel.peerCredentials().uid(), Peer.Authentication.UNIX_SOCKET, path);
            } catch (IOException e) {
                // the kernel always knows a connected peer; should it not, the caller proved nothing
                LOG.debug("{}: no peer credentials on the Unix socket: {}", name, e.toString());
                p = Peer.anonymous(path);
            }
            this.peer = p;
        }

        @Override
        public Object address() {
            return address;
        }

        @Override
        public long stalledSinceNanos() {
            return calls.get() > 0 ? Long.MAX_VALUE : idleSince;
        }

        @Override
        public void evict() {
            LOG.debug("{}: closing idle {} to admit another connection", name, channel.remoteAddress());
            channel.close();
        }
    }

    /**
     * Admits {@code child} as {@code m} within the shares, known by {@code remote} in
     * {@code byRemote} until it closes, and tuned; the connection it displaces, if any, is closed.
     * False if refused and not let answer its calls as busy: the caller closes {@code child}.
     */
    private boolean admit(Channel child, Member m, SocketAddress remote, Map<SocketAddress, Member> byRemote, Object from) {
        ConnectionShares.Admission a = shares.admit(m);
        if (!a.admitted()) {
            long r = shares.refusals();
            if (StrangerWarnings.due(r)) {
                LOG.warn("{}: refusing a connection from {}: {} ({} refused so far)", name, from, a.refusal(), r);
            }
            return answerRefused(child, m, a.refusal(), remote, byRemote);
        }
        byRemote.put(remote, m);
        if (tuned) {
            Http2Tuner.install(child);
        }
        child.closeFuture().addListener(f -> {
            byRemote.remove(remote, m);
            shares.leave(m);
        });
        if (a.evicted() != null) {
            a.evicted().evict();
        }
        return true;
    }

    /**
     * Lets a refused connection reach gRPC to answer its calls as busy ({@link CallCounter}), when
     * fewer than {@link ConnectionShares#MAX_REFUSED_ANSWERING} do so now: it is closed
     * {@link #REFUSED_LINGER_MILLIS} after its first such answer, or
     * {@link ConnectionShares#REFUSED_LIFETIME_MILLIS} after it opened. False: close it now.
     */
    private boolean answerRefused(Channel child, Member m, String refusal, SocketAddress remote,
                                  Map<SocketAddress, Member> byRemote) {
        if (!shares.claimRefusedAnswer()) {
            return false;
        }
        m.refusal = refusal;
        byRemote.put(remote, m);
        child.closeFuture().addListener(f -> {
            byRemote.remove(remote, m);
            shares.refusedAnswered();
        });
        child.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                ctx.executor().schedule(() -> closeAtHead(ctx.channel()), ConnectionShares.REFUSED_LIFETIME_MILLIS,
                        TimeUnit.MILLISECONDS);
                ctx.fireChannelActive();
                ctx.pipeline().remove(this);
            }
        });
        return true;
    }

    /**
     * Closes from the head of the pipeline: gRPC's own close would wait for the open calls to end
     * (a graceful GOAWAY).
     */
    private static void closeAtHead(Channel channel) {
        ChannelHandlerContext head = channel.pipeline().firstContext();
        if (head != null) {
            head.close();
        } else {
            channel.close();
        }
    }

    /** The share key of every connection over the Unix socket: one remote address, this host's. */
    private static final String UNIX_ADDRESS = "unix";

    private ServerChannel newUnixListener() {
        EpollServerDomainSocketChannel listener = new EpollServerDomainSocketChannel();
        // ahead of the handler that hands accepted connections to gRPC, which Netty adds at bind
        listener.pipeline().addFirst(new UnixAdmission());
        return listener;
    }

    /**
     * Admits each connection the Unix socket accepts before gRPC sees it (Netty's domain socket
     * listener is final: this sits first in its pipeline instead of in a subclass).
     */
    private final class UnixAdmission extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof EpollDomainSocketChannel child)) {
                ctx.fireChannelRead(msg);
                return;
            }
            // its own instance, kept by the channel and handed on by gRPC (unixMembers)
            SocketAddress remote = child.remoteAddress();
            if (remote == null) {
                child.unsafe().closeForcibly();   // not connected any more
                return;
            }
            DomainSocketAddress local = child.localAddress();
            Member m = new Member(child, local == null ? null : local.path());
            if (!admit(child, m, remote, unixMembers, "the Unix socket")) {
                child.unsafe().closeForcibly();
                return;
            }
            ctx.fireChannelRead(child);
        }
    }

    /** The listening socket: admits each connection it accepts before gRPC sees it. */
    private final class Listener extends NioServerSocketChannel {
        @Override
        protected int doReadMessages(List<Object> buf) throws Exception {
            int before = buf.size();
            int n = super.doReadMessages(buf);
            List<Object> refused = new ArrayList<>();
            for (int i = before; i < buf.size(); i++) {
                Channel child = (Channel) buf.get(i);
                if (!(child.remoteAddress() instanceof InetSocketAddress remote)) {
                    continue;
                }
                if (!admit(child, new Member(child, remote), remote, members, remote)) {
                    refused.add(child);
                }
            }
            for (Object child : refused) {
                buf.remove(child);
                ((Channel) child).unsafe().closeForcibly();
            }
            return n - refused.size();
        }
    }

    /**
     * Marks a connection working while it has calls open (watch streams among them). A call stays
     * open until its answer and trailers are written, which a client that grants no HTTP/2 window
     * (it never reads) holds off for good, with the answer in the server's memory: a call closed by
     * the server whose answer is not taken within {@link #answerTakenNanos} closes its connection.
     */
    private final class CallCounter implements ServerInterceptor {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                           ServerCallHandler<Q, A> next) {
            Member m = member(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
            if (m == null) {
                return next.startCall(call, headers);
            }
            String refusal = m.refusal;
            if (refusal != null) {
                return refuse(call, m, refusal);
            }
            m.calls.incrementAndGet();
            OpenCall open = new OpenCall(m);
            ServerCall<Q, A> watched = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void close(Status status, Metadata trailers) {
                    super.close(status, trailers);
                    open.answered();
                }
            };
            ServerCall.Listener<Q> listener;
            try {
                listener = next.startCall(watched, headers);
            } catch (RuntimeException | Error e) {
                open.end();
                throw e;
            }
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
                @Override
                public void onComplete() {
                    open.end();
                    super.onComplete();
                }

                @Override
                public void onCancel() {
                    open.end();
                    super.onCancel();
                }
            };
        }
    }

    /** A call on a refused connection: answered busy, and the connection closed soon after. */
    private <Q, A> ServerCall.Listener<Q> refuse(ServerCall<Q, A> call, Member m, String refusal) {
        Metadata trailers = new Metadata();
        trailers.put(GrpcErrors.BUSY, "connections");
        call.close(Status.UNAVAILABLE.withDescription("server busy: " + refusal + "; the call did not run"), trailers);
        m.channel.eventLoop().schedule(() -> closeAtHead(m.channel), REFUSED_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        return new ServerCall.Listener<>() { };
    }

    /** One open call of a connection, from its start until its answer is written or it is cancelled. */
    private final class OpenCall {
        private final Member member;
        private boolean ended;
        private ScheduledFuture<?> untaken;

        OpenCall(Member member) {
            this.member = member;
        }

        /** The server closed the call: its answer and trailers must now be taken in time. */
        synchronized void answered() {
            if (!ended) {
                untaken = member.channel.eventLoop().schedule(this::notTaken, answerTakenNanos, TimeUnit.NANOSECONDS);
            }
        }

        private void notTaken() {
            synchronized (this) {
                if (ended || !member.channel.isOpen()) {   // taken, or its connection closed already
                    return;
                }
            }
            answersNotTaken.log(LOG, "{}: closing the connection from {}: a call's answer was not taken within {} ms",
                    name, member.channel.remoteAddress(), TimeUnit.NANOSECONDS.toMillis(answerTakenNanos));
            // gRPC's own close would wait for the open calls to end, which this client never lets happen
            closeAtHead(member.channel);
        }

        synchronized void end() {
            if (ended) {
                return;
            }
            ended = true;
            if (untaken != null) {
                untaken.cancel(false);
            }
            member.idleSince = System.nanoTime();
            member.calls.decrementAndGet();
        }
    }
}

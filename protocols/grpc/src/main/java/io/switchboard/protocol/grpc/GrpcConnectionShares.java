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
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.netty.shaded.io.netty.util.concurrent.ScheduledFuture;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ConnectionShares;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC listener's connections within their shares ({@link ConnectionShares}): at most
 * {@link ServerSettings#maxConnections()} in all and {@link ServerSettings#maxConnectionsPerAddress()}
 * from one remote address; a newcomer over either displaces the connection of its share stalled
 * longest (no call open on it, since its last call ended or it was accepted), or is closed at once
 * if every one has calls open. gRPC offers no connection limit of its own: this one admits each
 * connection as it is accepted, on the listener's own event loops, and learns which connections
 * are working from an interceptor that counts their open calls.
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
    private final LongAdder answersNotTaken = new LongAdder();
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    /** The admitted connections by their remote address (address and port: one connection each). */
    private final Map<SocketAddress, Member> members = new ConcurrentHashMap<>();
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

    /** Counts each connection's open calls, so that one with calls open is never displaced. */
    public ServerInterceptor callCounter() {
        return new CallCounter();
    }

    /** The calls open now on the connection from {@code remote}, or 0 if it is not one of this listener's. */
    public int openCalls(SocketAddress remote) {
        Member m = remote == null ? null : members.get(remote);
        return m == null ? 0 : m.calls.get();
    }

    /** Connections closed so far because a call's answer was not taken in time. */
    public long answersNotTaken() {
        return answersNotTaken.sum();
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

    /** Shuts the event loops down; after the server has. */
    @Override
    public void close() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }

    /** One accepted connection: its channel and its open calls. */
    private final class Member implements ConnectionShares.Member {
        final Channel channel;
        final Object address;
        final AtomicInteger calls = new AtomicInteger();
        volatile long idleSince = System.nanoTime();

        Member(Channel channel, InetSocketAddress remote) {
            this.channel = channel;
            this.address = remote.getAddress() != null ? remote.getAddress() : remote.getHostString();
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
                Member m = new Member(child, remote);
                ConnectionShares.Admission a = shares.admit(m);
                if (!a.admitted()) {
                    refused.add(child);
                    long r = shares.refusals();
                    if (r == 1 || r % 100 == 0) {
                        LOG.warn("{}: refusing a connection from {}: {} ({} refused so far)", name, remote, a.refusal(), r);
                    }
                    continue;
                }
                members.put(remote, m);
                if (tuned) {
                    Http2Tuner.install(child);
                }
                child.closeFuture().addListener(f -> {
                    members.remove(remote, m);
                    shares.leave(m);
                });
                if (a.evicted() != null) {
                    a.evicted().evict();
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
            Member m = members.get(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
            if (m == null) {
                return next.startCall(call, headers);
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
            answersNotTaken.increment();
            LOG.warn("{}: closing the connection from {}: a call's answer was not taken within {} ms", name,
                    member.channel.remoteAddress(), TimeUnit.NANOSECONDS.toMillis(answerTakenNanos));
            // closed from the head of the pipeline: gRPC's own close would wait for the open
            // calls to end (a graceful GOAWAY), which is what this client never lets happen
            ChannelHandlerContext head = member.channel.pipeline().firstContext();
            if (head != null) {
                head.close();
            } else {
                member.channel.close();
            }
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

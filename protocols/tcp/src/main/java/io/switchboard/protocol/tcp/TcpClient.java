package io.switchboard.protocol.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of tcp: one connection per server address, shared by every transport to that
 * server (calls are multiplexed on it by correlation id), made on first use and again after it
 * closed; over TLS for a {@code tcps://} endpoint.
 */
final class TcpClient implements ProtocolClient {
    private static final Logger LOG = LoggerFactory.getLogger(TcpClient.class);

    private final ClientSettings settings;
    private final TcpLimits limits;
    private final EventLoopGroup loops;
    private final Map<String, Connection> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;

    TcpClient(ClientSettings settings, TcpLimits limits) {
        this.settings = settings;
        this.limits = limits;
        this.loops = new NioEventLoopGroup(1, new DefaultThreadFactory("tcp-client", true));
    }

    @Override
    public String protocol() {
        return TcpProtocolProvider.NAME;
    }

    ClientSettings settings() {
        return settings;
    }

    TcpLimits limits() {
        return limits;
    }

    @Override
    public Transport connect(ServiceDescriptor descriptor, Endpoint endpoint) {
        if (!TcpProtocolProvider.NAME.equals(endpoint.protocol())) {
            throw new IllegalArgumentException("not a tcp endpoint: " + endpoint);
        }
        if (!TcpTls.isEndpoint(endpoint.uri())) {
            throw new IllegalArgumentException("a tcp endpoint looks like tcp://HOST:PORT/Component (tcps:// with TLS), not "
                    + endpoint.address());
        }
        return new TcpTransport(this, descriptor, endpoint);
    }

    /** The open connection to the endpoint's server, or a new one on its way. */
    Connection connection(URI uri) {
        if (closed) {
            throw new TransportException(protocol(), TransportException.Delivery.NOT_DELIVERED, "the tcp client is closed",
                    null);
        }
        String host = uri.getHost().startsWith("[") ? uri.getHost().substring(1, uri.getHost().length() - 1) : uri.getHost();
        String key = uri.getScheme() + "://" + host + ":" + uri.getPort();
        Connection c = connections.get(key);
        if (c != null && c.usable()) {
            return c;
        }
        return connections.compute(key, (k, old) -> old != null && old.usable() ? old
                : open(TcpTls.TLS_SCHEME.equals(uri.getScheme()), host, uri.getPort()));
    }

    private Connection open(boolean tls, String host, int port) {
        Connection c = new Connection(host + ":" + port);
        Bootstrap b = new Bootstrap().group(loops).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) settings.connectTimeout().toMillis())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls) {
                            ch.pipeline().addLast(TcpTls.client(settings.tls(), host, port));
                        }
                        ch.pipeline().addLast(new FrameDecoder(limits.maxFrameBytes(), limits.maxMetaBytes()), c);
                    }
                });
        ChannelFuture connect = b.connect(host, port);
        c.channel = connect.channel();
        if (tls) {
            connect.addListener(f -> {
                if (!f.isSuccess()) {
                    c.fail(f.cause());
                    return;
                }
                connect.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(h -> {
                    if (h.isSuccess()) {
                        c.ready();
                    } else {
                        c.fail(h.cause());
                    }
                });
            });
        } else {
            connect.addListener(f -> {
                if (f.isSuccess()) {
                    c.ready();
                } else {
                    c.fail(f.cause());
                }
            });
        }
        return c;
    }

    @Override
    public void close() {
        closed = true;
        for (Connection c : connections.values()) {
            c.channel.close();
        }
        connections.clear();
        Future<?> f = loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        f.awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * One connection and the calls under way on it, by correlation id. Frames are written once it
     * is ready (connected, and TLS agreed); a call sent before waits in the connection's listener.
     */
    static final class Connection extends ChannelInboundHandlerAdapter {
        private final String address;
        private final AtomicLong ids = new AtomicLong();
        final Map<Long, TcpTransport.Pending> pending = new ConcurrentHashMap<>();
        volatile Channel channel;
        /** Null while connecting; then true, or false once the connection failed or closed. */
        private volatile Boolean state;
        private volatile Throwable failure;
        private final java.util.List<Runnable> waiting = new java.util.ArrayList<>();

        Connection(String address) {
            this.address = address;
        }

        long nextId() {
            return ids.incrementAndGet();
        }

        String address() {
            return address;
        }

        boolean usable() {
            return state == null || (state && channel.isActive());
        }

        /** Runs {@code write} once the connection is ready, on any thread; {@code failed} instead if it never is. */
        void whenReady(Runnable write, java.util.function.Consumer<Throwable> failed) {
            Boolean s = state;
            if (s == null) {
                synchronized (waiting) {
                    if (state == null) {
                        waiting.add(() -> whenReady(write, failed));
                        return;
                    }
                }
                s = state;
            }
            if (s) {
                write.run();
            } else {
                failed.accept(failure);
            }
        }

        void ready() {
            settle(true, null);
        }

        void fail(Throwable cause) {
            settle(false, cause);
        }

        private void settle(boolean ok, Throwable cause) {
            java.util.List<Runnable> run;
            synchronized (waiting) {
                if (state != null) {
                    return;
                }
                failure = cause;
                state = ok;
                run = new java.util.ArrayList<>(waiting);
                waiting.clear();
            }
            for (Runnable r : run) {
                r.run();
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Frame frame = (Frame) msg;
            TcpTransport.Pending p = pending.remove(frame.meta.correlationId());
            if (p == null || !p.complete(frame)) {
                frame.release();   // cancelled or timed out: nobody waits for it
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (state == null) {
                fail(new java.nio.channels.ClosedChannelException());
            } else {
                state = false;
            }
            for (TcpTransport.Pending p : pending.values()) {
                p.completeExceptionally(new TransportException(TcpProtocolProvider.NAME,
                        TransportException.Delivery.MAY_HAVE_RUN, "the connection to " + address
                        + " closed before the answer to " + p.what() + " arrived", failure));
            }
            pending.clear();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.debug("tcp: closing the connection to {}", address, cause);
            if (failure == null) {
                failure = cause;
            }
            ctx.close();
        }
    }
}

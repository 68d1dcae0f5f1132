package io.switchboard.protocol.grpc;

import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.Endpoints;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The client side of gRPC: one HTTP/2 channel per server address, shared by every transport to
 * that server (gRPC multiplexes concurrent calls on it); over TLS for a {@code grpcs://} endpoint
 * (trusting and presenting what the settings' {@link io.switchboard.protocol.TlsSettings} hold);
 * over the server's Unix socket when the endpoint names one on this host
 * ({@link UnixSockets#sameHostSocket}), as tcp does.
 */
final class GrpcClient implements ProtocolClient {
    private final ClientSettings settings;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private volatile boolean closed;
    /**
     * Decode the responses of non-blocking calls (a thread per response while its parts arrive):
     * the settings' executor when given (the caller's: never shut down here), else a pool of our own.
     */
    private final Executor readers;
    private final ExecutorService ownReaders;

    GrpcClient(ClientSettings settings) {
        this.settings = settings;
        this.ownReaders = settings.executor() != null ? null : Executors.newCachedThreadPool(DaemonThreads.named("grpc-response-reader"));
        this.readers = settings.executor() != null ? settings.executor() : ownReaders;
    }

    @Override
    public String protocol() {
        return GrpcProtocolProvider.NAME;
    }

    @Override
    public Transport connect(ServiceDescriptor descriptor, Endpoint endpoint) {
        if (!GrpcProtocolProvider.NAME.equals(endpoint.protocol())) {
            throw new IllegalArgumentException("not a gRPC endpoint: " + endpoint);
        }
        URI uri = endpoint.uri();
        if (!GrpcTls.isEndpoint(uri)) {
            throw new IllegalArgumentException("a gRPC endpoint looks like grpc://HOST:PORT/Component (grpcs:// with TLS), not "
                    + endpoint.address());
        }
        if (GrpcTls.PLAIN_SCHEME.equals(uri.getScheme()) && Epoll.isAvailable()) {
            Path socket = UnixSockets.GRPC.sameHostSocket(uri);
            ManagedChannel unix = socket == null ? null : unixChannel(socket);
            if (unix != null) {
                return new GrpcTransport(this, descriptor, endpoint, unix, UnixSockets.VIA_UNIX);
            }
        }
        return new GrpcTransport(this, descriptor, endpoint, channel(uri.getScheme(), uri.getHost(), uri.getPort()),
                UnixSockets.VIA_TCP);
    }

    /**
     * The channel to the server's Unix socket on this host; null when the socket refuses (a file
     * left by a server gone), and the call goes over TCP. The socket is tried once, when its channel
     * is made; a server that goes away later fails the channel's calls as unavailable, as over TCP.
     */
    private ManagedChannel unixChannel(Path socket) {
        if (closed) {
            throw new IllegalStateException("gRPC client is closed");
        }
        String key = "unix:" + socket;
        ManagedChannel known = channels.get(key);
        if (known != null) {
            return known;
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            // not blocking: a server whose backlog is full leaves the connect pending, and listens
            probe.configureBlocking(false);
            probe.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException | RuntimeException e) {
            return null;   // refused, or gone
        }
        return channels.computeIfAbsent(key, k -> tuned(NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toFile()),
                        InsecureChannelCredentials.create()))
                .withOption(ChannelOption.SO_SNDBUF, NettyTuning.UNIX_SOCKET_BUFFER_BYTES)
                .withOption(ChannelOption.SO_RCVBUF, NettyTuning.UNIX_SOCKET_BUFFER_BYTES)
                .withOption(ChannelOption.SO_KEEPALIVE, null)   // no TCP keep-alive on a Unix socket: Netty would warn
                .channelFactory(ClientEventLoops::newUnixChannel)
                .eventLoopGroup(ClientEventLoops.group())
                .build());
    }

    Executor readers() {
        return readers;
    }

    ClientSettings settings() {
        return settings;
    }

    /** One channel per scheme and address: a {@code grpcs} endpoint is never reached in plain text. */
    private ManagedChannel channel(String scheme, String host, int port) {
        if (closed) {
            throw new IllegalStateException("gRPC client is closed");
        }
        String h = Endpoints.socketHost(host);
        return channels.computeIfAbsent(scheme + "://" + h + ":" + port, key -> tuned(NettyChannelBuilder.forAddress(h, port,
                        GrpcTls.channel(scheme, settings.tls())))
                // gRPC's HTTP/2 handler tuned for large messages on each connection (Http2Tuner)
                .channelFactory(ClientEventLoops::newChannel)
                .eventLoopGroup(ClientEventLoops.group())
                .build());
    }

    /** What channels over TCP and over a Unix socket have alike. */
    private NettyChannelBuilder tuned(NettyChannelBuilder builder) {
        return builder
                // our listener only queues frames and wakes the calling thread
                .directExecutor()
                .maxInboundMessageSize(GrpcServer.maxInbound(GrpcProtocolProvider.DEFAULT_MAX_PART_BYTES, settings.maxMessageBytes()))
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) settings.connectTimeout().toMillis())
                .disableRetry()
                .flowControlWindow(NettyTuning.FLOW_CONTROL_WINDOW)
                .withOption(ChannelOption.ALLOCATOR, NettyTuning.ALLOCATOR)
                .withOption(ChannelOption.WRITE_BUFFER_WATER_MARK, NettyTuning.WRITE_WATER_MARK);
    }

    @Override
    public void close() {
        closed = true;
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        for (ManagedChannel c : channels.values()) {
            try {
                c.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        channels.clear();
        if (ownReaders != null) {
            ownReaders.shutdown();
        }
    }
}

package io.switchboard.protocol.tcp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tcp server's Unix domain socket: the same connections as its TCP port's (the same frames,
 * limits and components), on the event loops of its epoll transport, at {@code tcp.sock} in a
 * private directory ({@link UnixSockets#privateDirectory()}). Closing it removes the socket and
 * its directory; both are also marked to go when the JVM exits without closing it.
 */
final class UnixListener {
    private static final Logger LOG = LoggerFactory.getLogger(UnixListener.class);

    private final Channel channel;
    private final Path directory;
    private final Path path;

    private UnixListener(Channel channel, Path directory, Path path) {
        this.channel = channel;
        this.directory = directory;
        this.path = path;
    }

    /**
     * Listens with {@code connection} setting up each accepted connection; null (with a warning
     * saying why, the server still serving on TCP) when no socket can be made.
     */
    static UnixListener open(EventLoopGroup loops, ChannelInitializer<Channel> connection) {
        Path directory = null;
        try {
            Path path = UnixSockets.TCP.newSocketPath();
            directory = path.getParent();
            Channel channel = new ServerBootstrap().group(loops)
                    .channel(EpollServerDomainSocketChannel.class)
                    .childHandler(connection)
                    .childOption(ChannelOption.SO_SNDBUF, UnixSockets.SEND_BUFFER_BYTES)
                    .childOption(ChannelOption.ALLOCATOR, FrameArrays.ALLOCATOR)
                    .bind(new DomainSocketAddress(path.toFile())).sync().channel();
            LOG.debug("tcp listening on the Unix socket {}", path);
            return new UnixListener(channel, directory, path);
        } catch (Exception e) {
            LOG.warn("tcp serves over TCP only: no Unix socket: {}", e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            remove(directory);
            return null;
        }
    }

    Path path() {
        return path;
    }

    void close() {
        channel.close().awaitUninterruptibly();
        remove(directory);
    }

    /** Removes the socket and its directory. */
    private static void remove(Path directory) {
        try {
            UnixSockets.TCP.removeSocketDirectory(directory);
        } catch (IOException e) {
            LOG.warn("tcp cannot remove its Unix socket in {}: {}", directory, e.toString());
        }
    }
}

package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The event loops and connections of every gRPC client channel in this JVM: the kind gRPC itself
 * would choose (epoll where Netty's native transport loads, else NIO), shared as gRPC's default
 * group is, with daemon threads started as connections need them. Client channels name their own
 * channel factory (gRPC then requires the matching group) so that each new connection gets an
 * {@link Http2Tuner} before gRPC sets it up.
 *
 * <pre>{@code
 * NettyChannelBuilder.forAddress(host, port)
 *         .channelFactory(ClientEventLoops::newChannel)
 *         .eventLoopGroup(ClientEventLoops.group());
 * }</pre>
 */
final class ClientEventLoops {
    private static final boolean EPOLL = Epoll.isAvailable();

    private ClientEventLoops() {
    }

    /** The group, created at first use. */
    static EventLoopGroup group() {
        return Group.INSTANCE;
    }

    /** A new client connection of the group's kind, with its tuner. */
    static Channel newChannel() {
        Channel channel = EPOLL ? new EpollSocketChannel() : new NioSocketChannel();
        Http2Tuner.install(channel);
        return channel;
    }

    /** A new client connection over a Unix socket, with its tuner; epoll only. */
    static Channel newUnixChannel() {
        Channel channel = new EpollDomainSocketChannel();
        Http2Tuner.install(channel);
        return channel;
    }

    private static final class Group {
        static final EventLoopGroup INSTANCE = EPOLL
                ? new EpollEventLoopGroup(0, new DefaultThreadFactory("grpc-client-io", true))
                : new NioEventLoopGroup(0, new DefaultThreadFactory("grpc-client-io", true));
    }
}

package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.EchoDoubles;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client that grants no HTTP/2 window (it never asks for its answers): each call's answer waits
 * in the server, and the call stays open, until it is taken; such a client could hold as many
 * answers as its connection may have calls open (256). An answer not taken within the request
 * timeout of its call's close closes the connection, and with it every answer it held.
 */
class GrpcUntakenAnswerTest {
    @ParameterizedTest(name = "over the Unix socket: {0}")
    @ValueSource(booleans = {false, true})
    void aClientThatTakesNoAnswerHasItsConnectionClosed(boolean unix) throws Exception {
        assumeTrue(!unix || Epoll.isAvailable(), "epoll (Linux) is not available");
        GrpcServer server = (GrpcServer) new GrpcProtocolProvider().newServer(
                ServerSettings.defaults().withRequestTimeout(Duration.ofSeconds(1)));
        EventLoopGroup loops = unix ? new EpollEventLoopGroup(1) : null;
        try (server) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            ManagedChannel channel = (unix
                    ? NettyChannelBuilder.forAddress(new DomainSocketAddress(server.unixSocket().toFile()))
                            .channelType(EpollDomainSocketChannel.class).eventLoopGroup(loops)
                    : NettyChannelBuilder.forAddress(at.uri().getHost(), at.uri().getPort()))
                    .usePlaintext().flowControlWindow(65535).build();
            try {
                EchoDoubles m = new EchoDoubles();
                m.setValues(new double[1 << 16]);   // 512 KiB each way: past the window of 64 KiB
                byte[] message = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class).toBytes("echoDoubles", m, 10);
                for (int i = 0; i < 8; i++) {
                    ClientCall<Part, Part> call = channel.newCall(
                            GrpcTransport.method(ConformanceComponent.DESCRIPTOR.operation("echoDoubles")),
                            io.grpc.CallOptions.DEFAULT.withDeadlineAfter(120, TimeUnit.SECONDS));
                    call.start(new ClientCall.Listener<>() { }, new Metadata());
                    // no call.request(): the answers are never asked for, so no window is given back
                    call.sendMessage(new Part(message, message.length));
                    call.halfClose();
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (server.answersNotTaken() == 0 || channel.getState(false) == ConnectivityState.READY) {
                    assertTrue(System.nanoTime() < deadline, "the server still holds the answers of a client that takes"
                            + " none (" + server.answersNotTaken() + " connections closed, the client's "
                            + channel.getState(false) + ")");
                    Thread.sleep(10);
                }
                assertEquals(1, server.answersNotTaken(), "one connection, closed once");
            } finally {
                channel.shutdownNow();
            }
        } finally {
            if (loops != null) {
                loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
        }
    }
}

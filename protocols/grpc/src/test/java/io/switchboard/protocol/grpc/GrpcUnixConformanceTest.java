package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.UnixSockets;

/**
 * The conformance suite over the gRPC server's Unix domain socket: the endpoint as served, which
 * names the socket on this host. Where epoll is missing (not Linux) the server has no socket, and
 * the same suite checks that its calls went over TCP instead.
 */
class GrpcUnixConformanceTest extends GrpcConformanceTest {
    @Override
    protected Endpoint connectTo(Endpoint served) {
        return served;
    }

    @Override
    protected String expectedVia() {
        return Epoll.isAvailable() ? UnixSockets.VIA_UNIX : UnixSockets.VIA_TCP;
    }
}

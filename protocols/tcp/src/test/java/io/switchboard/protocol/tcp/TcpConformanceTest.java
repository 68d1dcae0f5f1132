package io.switchboard.protocol.tcp;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.UnixSockets;
import io.switchboard.testing.conformance.AbstractProtocolConformanceTest;

/**
 * tcp passes the protocol conformance suite over TCP: the client connects to the endpoint without
 * its Unix socket ({@link TcpUnixConformanceTest} runs the suite over that). The suite's bulk
 * cases (a 2000 × 2000 matrix, 8 MiB of bytes) are over the default 4 MiB frame, so the provider
 * under test carries 64 MiB frames: the same code path, a larger limit ({@link TcpCallsTest}
 * holds the default).
 */
class TcpConformanceTest extends AbstractProtocolConformanceTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected ProtocolProvider provider() {
        return new TcpProtocolProvider(TcpLimits.defaults().withMaxFrameBytes(64 << 20));
    }

    /** The served endpoint without the query that names its Unix socket. */
    @Override
    protected Endpoint connectTo(Endpoint served) {
        return UnixSockets.overTcp(served);
    }

    @Override
    protected String expectedVia() {
        return UnixSockets.VIA_TCP;
    }

    @Override
    protected Endpoint deadEndpoint(int port) {
        return new Endpoint("tcp", "tcp://127.0.0.1:" + port + "/Conformance");
    }
}

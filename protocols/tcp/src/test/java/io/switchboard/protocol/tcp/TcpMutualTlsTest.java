package io.switchboard.protocol.tcp;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.AbstractMutualTlsTest;

/** tcp over TLS with client certificates (the JDK's engine in Netty's SslHandler, client auth required). */
class TcpMutualTlsTest extends AbstractMutualTlsTest {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected Endpoint plainTextForm(Endpoint tlsEndpoint) {
        return new Endpoint("tcp", tlsEndpoint.address().replaceFirst("^tcps:", "tcp:"));
    }
}

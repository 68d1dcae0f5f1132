package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Settings;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import org.junit.jupiter.api.Test;

/**
 * Canaries of {@link NettyTuning}'s reliance on grpc-java's and Netty's insides (the list is in
 * docs/architecture.md, "Library internals we rely on"): each fails, naming what changed, when an
 * upgrade takes away what the shortcut assumes; the shortcut's own fallback would only make the
 * transport slower, unnoticed. {@link LendingGrpcStreamTest} is the canary of the lending stream,
 * {@link GrpcFrameSizeTest} checks the frames on the wire.
 */
class LibraryInternalsCanaryTest {
    @Test
    void nettysHttp2HandlerStillBuildsItsFirstSettingsFromAPrivateField() throws Exception {
        var field = Http2ConnectionHandler.class.getDeclaredField("initialSettings");
        assertEquals(Http2Settings.class, field.getType(), "Netty's Http2ConnectionHandler.initialSettings changed type:"
                + " NettyTuning.announceMaxFrameSize can no longer raise the largest frame");
        assertTrue(NettyTuning.canAnnounceFrameSize(), "NettyTuning could not reach initialSettings");
    }

    @Test
    void grpcStillBuildsEveryConnectionsHandlerThroughTheNegotiatorOfItsCredentials() {
        ProtocolServer server = Protocols.get("grpc").newServer(ServerSettings.defaults());
        ProtocolClient client = Protocols.get("grpc").newClient(ClientSettings.defaults());
        try {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            Conformance stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            long before = NettyTuning.tunedInAll();
            stub.ping();
            // the client's connection and the server's: each handler went through TunedHandler.newHandler
            assertTrue(NettyTuning.tunedInAll() - before >= 2, "grpc-java no longer asks the credentials' negotiator"
                    + " for each connection's handler: the composite cumulator and large frames are gone");
        } finally {
            client.close();
            server.close();
        }
    }
}

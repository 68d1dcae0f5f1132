package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Bulk parts travel in HTTP/2 frames of {@link NettyTuning#MAX_FRAME_BYTES}, both ways: read off
 * the wire by a relay that parses the frames between a Switchboard client and server. Fails if a
 * Netty or gRPC upgrade stops the handler from announcing them (frames fall back to 16 KiB).
 */
class GrpcFrameSizeTest {
    private static final int DATA = 0;

    @Test
    void bulkPartsTravelInLargeFramesBothWays() throws Exception {
        ProtocolServer server = Protocols.get("grpc").newServer(ServerSettings.defaults());
        ProtocolClient client = Protocols.get("grpc").newClient(ClientSettings.defaults());
        try (ServerSocket relay = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            URI direct = URI.create(at.address());
            FrameTap toServer = new FrameTap(true);
            FrameTap toClient = new FrameTap(false);
            Thread accept = new Thread(() -> {
                try {
                    Socket in = relay.accept();
                    Socket out = new Socket(direct.getHost(), direct.getPort());
                    pump(in.getInputStream(), out.getOutputStream(), toServer);
                    pump(out.getInputStream(), in.getOutputStream(), toClient);
                } catch (IOException e) {
                    // the test's assertions report what did not arrive
                }
            }, "frame-relay");
            accept.setDaemon(true);
            accept.start();
            Endpoint viaRelay = new Endpoint("grpc", "grpc://127.0.0.1:" + relay.getLocalPort() + direct.getPath());
            Conformance stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, viaRelay));

            double[] values = new double[1 << 20];   // 8 MiB: eight parts of 1 MiB each way
            for (int i = 0; i < values.length; i++) {
                values[i] = i * 0.5 - 3;
            }
            assertArrayEquals(values, stub.echoDoubles(values));

            assertEquals(NettyTuning.MAX_FRAME_BYTES, toServer.largestData.get(), "largest DATA frame to the server");
            assertEquals(NettyTuning.MAX_FRAME_BYTES, toClient.largestData.get(), "largest DATA frame to the client");
            assertTrue(toServer.dataFrames.get() < 2 * values.length * 8 / NettyTuning.MAX_FRAME_BYTES,
                    toServer.dataFrames + " DATA frames for 8 MiB");
        } finally {
            client.close();
            server.close();
        }
    }

    private static void pump(InputStream from, OutputStream to, FrameTap tap) {
        Thread t = new Thread(() -> {
            try (from; to) {
                tap.copy(new DataInputStream(from), to);
            } catch (IOException e) {
                // a side closed: the other direction ends too
            }
        }, "frame-relay-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Copies one direction of an HTTP/2 connection frame by frame, noting the DATA frames' sizes. */
    private static final class FrameTap {
        final AtomicInteger largestData = new AtomicInteger();
        final AtomicInteger dataFrames = new AtomicInteger();
        private final boolean fromClient;

        FrameTap(boolean fromClient) {
            this.fromClient = fromClient;
        }

        void copy(DataInputStream in, OutputStream out) throws IOException {
            if (fromClient) {
                byte[] preface = new byte[24];   // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                in.readFully(preface);
                out.write(preface);
            }
            byte[] header = new byte[9];
            byte[] payload = new byte[64 << 10];
            while (true) {
                try {
                    in.readFully(header);
                } catch (EOFException e) {
                    return;
                }
                int length = (header[0] & 0xff) << 16 | (header[1] & 0xff) << 8 | header[2] & 0xff;
                if (header[3] == DATA) {
                    dataFrames.incrementAndGet();
                    largestData.accumulateAndGet(length, Math::max);
                }
                out.write(header);
                for (int left = length; left > 0; ) {
                    int n = in.read(payload, 0, Math.min(left, payload.length));
                    if (n < 0) {
                        return;
                    }
                    out.write(payload, 0, n);
                    left -= n;
                }
                out.flush();
            }
        }
    }
}

package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.testing.TestCertificates;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * A SOAP client that closes its connection while its operation runs cancels the call, as a closed
 * tcp or gRPC connection does: HTTP/1.1 has no other sign of a client gone, and a foreign client
 * (CXF, zeep) that gives up sends no cancel message. A client that waits is answered however long
 * its operation takes, and bytes a client sends before its answer are dropped, not parsed as a
 * request, the connection closing after the answer.
 */
class SoapClientGoneTest {
    private static final String NS = "urn:switchboard:test:conformance";

    @Test
    void aClientThatClosesItsConnectionWhileItsOperationRunsCancelsTheCall() throws Exception {
        closingTheConnectionCancelsTheCall(ServerSettings.defaults(), uri -> new Socket(uri.getHost(), uri.getPort()));
    }

    @Test
    void aClientThatClosesItsTlsConnectionWhileItsOperationRunsCancelsTheCall() throws Exception {
        TestCertificates certs = TestCertificates.get();
        // the close sends TLS' close_notify, then the end of the stream
        closingTheConnectionCancelsTheCall(ServerSettings.defaults().withTls(certs.server()),
                uri -> certs.clientWithoutKey().context().getSocketFactory().createSocket(uri.getHost(), uri.getPort()));
    }

    private interface Connector {
        Socket connect(URI uri) throws IOException;
    }

    /**
     * The client closes while {@code spin} runs: the operation sees its call cancelled, and the
     * server had counted the client gone by the time it cancelled. The count is read in the call's
     * cancel listener, which the cancel runs (counted after it, the operation could see the cancel
     * before the count, as a CI run once did), and only once that listener has run: the
     * operation sees the cancel by its thread's interrupt, before the listeners run.
     */
    private static void closingTheConnectionCancelsTheCall(ServerSettings settings, Connector connector) throws Exception {
        AtomicReference<SoapServer> serving = new AtomicReference<>();
        AtomicLong goneAtCancel = new AtomicLong(-1);
        java.util.concurrent.CountDownLatch listened = new java.util.concurrent.CountDownLatch(1);
        ConformanceImpl impl = new ConformanceImpl() {
            @Override
            public long spin(double[] values, int maxRounds) {
                try (ServerCallContext.Scope s = ServerCallContext.onCancel(() -> {
                    goneAtCancel.set(serving.get().connector().clientsGone());
                    listened.countDown();
                })) {
                    return super.spin(values, maxRounds);
                }
            }
        };
        try (SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(settings)) {
            serving.set(server);
            URI uri = URI.create(server.export(ConformanceComponent.skeleton(impl)).address());
            try {
                Socket s = connector.connect(uri);
                s.getOutputStream().write(spin(uri, Integer.MAX_VALUE));
                s.getOutputStream().flush();
                assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the operation never started");
                s.close();
                assertTrue(impl.spinSawCancel.await(1, TimeUnit.MINUTES), "the operation ran on after its client left");
                assertTrue(listened.await(1, TimeUnit.MINUTES), "the call's cancel listener never ran");
                assertEquals(1, goneAtCancel.get(), "clients counted gone when the call was cancelled");
                assertEquals(1, server.connector().clientsGone());
            } finally {
                impl.stopSpinning = true;
            }
        }
    }

    /**
     * A caller that gives up at its deadline closes its connection a moment before the server's own
     * deadline, which the request's time on the way makes later. The look that finds it gone with
     * the deadline nearer than the next look leaves the call to its deadline, so the operation and
     * the calls it makes see it past its deadline, not cancelled. Here the client sends a deadline of
     * 1.9 s and hangs up as the operation starts; the first look, a second into the operation, finds
     * it gone with less than 0.9 s left. Cancelled by that look, the call would end that much early.
     */
    @Test
    void aClientGoneWithItsCallsDeadlineNearerThanTheNextLookLeavesTheCallToItsDeadline() throws Exception {
        AtomicReference<SoapServer> serving = new AtomicReference<>();
        AtomicLong leftAtEndNanos = new AtomicLong(Long.MIN_VALUE);
        AtomicLong goneAtEnd = new AtomicLong(-1);
        java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
        ConformanceImpl impl = new ConformanceImpl() {
            @Override
            public long spin(double[] values, int maxRounds) {
                // spin ends when it sees its call cancelled: by the look at once, by the deadline
                // once it has passed (the call's cancel listeners may not run then: the operation
                // sees the deadline itself, and its scope's close drops them)
                try {
                    return super.spin(values, maxRounds);
                } finally {
                    leftAtEndNanos.set(ServerCallContext.current().deadlineNanos() - System.nanoTime());
                    goneAtEnd.set(serving.get().connector().clientsGone());
                    ended.countDown();
                }
            }
        };
        try (SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults())) {
            serving.set(server);
            URI uri = URI.create(server.export(ConformanceComponent.skeleton(impl)).address());
            try (Socket s = new Socket(uri.getHost(), uri.getPort())) {
                s.getOutputStream().write(spin(uri, Integer.MAX_VALUE, 1900));
                assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the operation never started");
            }
            try {
                assertTrue(ended.await(1, TimeUnit.MINUTES), "the call was never ended");
                assertTrue(leftAtEndNanos.get() <= 0, "the call was cancelled "
                        + TimeUnit.NANOSECONDS.toMillis(leftAtEndNanos.get()) + " ms before its deadline");
                assertEquals(1, goneAtEnd.get(), "the look found the client gone before the deadline ended the call");
            } finally {
                impl.stopSpinning = true;
            }
        }
    }

    @Test
    void aClientThatWaitsIsAnsweredHoweverLongItsOperationRuns() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        try (SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults());
             Socket s = new Socket()) {
            URI uri = URI.create(server.export(ConformanceComponent.skeleton(impl)).address());
            s.connect(new java.net.InetSocketAddress(uri.getHost(), uri.getPort()));
            s.setSoTimeout((int) TimeUnit.MINUTES.toMillis(1));
            try {
                s.getOutputStream().write(spin(uri, Integer.MAX_VALUE));
                assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the operation never started");
                awaitMore(server.connector()::clientLooks, 2, "the running operation's client was never looked for");
            } finally {
                impl.stopSpinning = true;
            }
            String answer = readAnswer(s.getInputStream());
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            assertTrue(answer.contains("spinResponse"), answer);
            assertEquals(1, impl.spinSawCancel.getCount(), "a client still there was taken for gone");
            assertEquals(0, server.connector().clientsGone());
            s.getOutputStream().write(spin(uri, 3));   // the connection is kept for the next request
            assertTrue(readAnswer(s.getInputStream()).startsWith("HTTP/1.1 200"));
        }
    }

    @Test
    void bytesSentBeforeTheAnswerAreDroppedAndTheConnectionClosesAfterIt() throws Exception {
        ConformanceImpl impl = new ConformanceImpl();
        try (SoapServer server = (SoapServer) new SoapProtocolProvider().newServer(ServerSettings.defaults());
             Socket s = new Socket();
             ProtocolClient client = new SoapProtocolProvider().newClient(ClientSettings.defaults())) {
            Endpoint endpoint = server.export(ConformanceComponent.skeleton(impl));
            URI uri = URI.create(endpoint.address());
            s.connect(new java.net.InetSocketAddress(uri.getHost(), uri.getPort()));
            s.setSoTimeout((int) TimeUnit.MINUTES.toMillis(1));
            try {
                s.getOutputStream().write(spin(uri, Integer.MAX_VALUE));
                assertTrue(impl.spinStarted.await(1, TimeUnit.MINUTES), "the operation never started");
                // a second request before the first's answer: what a SOAP client must not send
                ByteArrayOutputStream early = new ByteArrayOutputStream();
                early.writeBytes(spin(uri, 3));
                early.writeBytes(new byte[10_000]);
                s.getOutputStream().write(early.toByteArray());
                awaitMore(server.connector()::earlyBytesDropped, 1, "the bytes sent before the answer were never found");
                assertEquals(1, impl.spinSawCancel.getCount(), "bytes were taken for the client's close");
            } finally {
                impl.stopSpinning = true;
            }
            String answer = readAnswer(s.getInputStream());
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            assertTrue(answer.contains("spinResponse"), answer);
            assertEquals(-1, readRest(s.getInputStream()), "the connection answered what came before the answer");
            assertEquals(0, server.connector().clientsGone());
            // the server serves others as before
            assertEquals(-0.0, ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, endpoint))
                    .echoDoubles(new double[] {-0.0})[0]);
        }
    }

    /** Waits until the counter has gone up by {@code more} from now. */
    private static void awaitMore(LongSupplier counter, long more, String failure) throws InterruptedException {
        long target = counter.getAsLong() + more;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (counter.getAsLong() < target) {
            assertTrue(System.nanoTime() < deadline, failure);
            Thread.sleep(20);
        }
    }

    private static byte[] spin(URI uri, int rounds) {
        return spin(uri, rounds, -1);
    }

    /** A spin request, with an {@code sb:deadline} of {@code timeoutMillis} unless that is negative. */
    private static byte[] spin(URI uri, int rounds, long timeoutMillis) {
        String deadline = timeoutMillis < 0 ? "" : "<soapenv:Header><sb:deadline xmlns:sb=\"urn:switchboard:soap\" timeout-ms=\""
                + timeoutMillis + "\"/></soapenv:Header>";
        String body = "<?xml version='1.0' encoding='UTF-8'?>"
                + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\">" + deadline + "<soapenv:Body>"
                + "<t:spin xmlns:t=\"" + NS + "\"><t:values>1</t:values><t:maxRounds>" + rounds + "</t:maxRounds>"
                + "</t:spin></soapenv:Body></soapenv:Envelope>";
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + uri.getPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                + "\r\nContent-Type: text/xml; charset=UTF-8\r\nSOAPAction: \"" + NS + "/spin\"\r\nContent-Length: "
                + b.length + "\r\n\r\n";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(b);
        return out.toByteArray();
    }

    /** One HTTP answer, its head and body, the body sent with a length or in chunks. */
    private static String readAnswer(InputStream in) throws IOException {
        String h = line(in, "\r\n\r\n");
        int length = 0;
        boolean chunked = false;
        for (String line : h.split("\r\n")) {
            String l = line.toLowerCase(java.util.Locale.ROOT);
            if (l.startsWith("content-length:")) {
                length = Integer.parseInt(l.substring(15).trim());
            } else if (l.startsWith("transfer-encoding:") && l.contains("chunked")) {
                chunked = true;
            }
        }
        if (!chunked) {
            return h + new String(in.readNBytes(length), StandardCharsets.UTF_8);
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int size; (size = Integer.parseInt(line(in, "\r\n").trim().split(";")[0], 16)) > 0; ) {
            body.writeBytes(in.readNBytes(size));
            line(in, "\r\n");
        }
        line(in, "\r\n");   // the last chunk's empty trailer
        return h + body.toString(StandardCharsets.UTF_8);
    }

    /** Bytes up to and with {@code end}. */
    private static String line(InputStream in, String end) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (!out.toString(StandardCharsets.ISO_8859_1).endsWith(end)) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the connection ended in an answer: " + out);
            }
            out.write(b);
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    /** Reads what more the connection sends: -1 once it ends with nothing more, else the first byte. */
    private static int readRest(InputStream in) throws IOException {
        try {
            return in.read();
        } catch (java.net.SocketException reset) {
            return -1;   // closed with our dropped bytes unread: a reset, as good as an end
        }
    }
}

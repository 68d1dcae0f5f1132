package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The turns of the threads that serve one SOAP connection ({@link SoapEndPoint.Turn}): each waits
 * on a selector of its own, given back once. A thread that has answered hands the connection back
 * to Jetty's selector, which may start another thread on it before the first has left; when both
 * shared one selector, both gave it back and the count of selectors in use went to -1 (seen once
 * in {@code SoapSlowSenderTest}, the selector queued twice for two later borrowers).
 */
class SoapEndPointTurnTest {
    @Test
    void aTurnEndingAfterTheNextBeganGivesBackItsOwnSelectorOnce() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             SocketChannel client = SocketChannel.open(listener.getLocalAddress());
             SocketChannel server = listener.accept();
             SoapEndPoint.Waiters waiters = new SoapEndPoint.Waiters()) {
            server.configureBlocking(false);
            SoapEndPoint.Turn first = new SoapEndPoint.Turn(waiters);
            assertFalse(first.awaitReadable(server, 1), "nothing was sent");
            assertEquals(1, waiters.inUse(), "the turn keeps its selector between waits");

            // the interleaving that went wrong: a second thread serves the connection before the first has left
            AtomicReference<SoapEndPoint.Turn> second = new AtomicReference<>();
            AtomicReference<Boolean> secondSawNothing = new AtomicReference<>();
            Thread other = new Thread(() -> {
                SoapEndPoint.Turn t = new SoapEndPoint.Turn(waiters);
                secondSawNothing.set(!t.awaitReadable(server, 1));
                second.set(t);
            });
            other.start();
            other.join();
            assertTrue(secondSawNothing.get());
            assertEquals(2, waiters.inUse(), "the second thread waits on a selector of its own");

            first.end();
            first.end();   // the first thread's end of its turn, after the hand-off ended it already
            assertTrue(first.ended());
            assertEquals(1, waiters.inUse(), "only the first turn's selector went back, once");
            assertFalse(first.awaitReadable(server, 1000), "an ended turn waits no more");
            assertEquals(1, waiters.inUse());

            client.write(ByteBuffer.wrap(new byte[] {1}));
            assertTrue(second.get().awaitReadable(server, 10_000), "the second turn still waits on its selector");
            second.get().end();
            assertEquals(0, waiters.inUse());
        }
    }
}

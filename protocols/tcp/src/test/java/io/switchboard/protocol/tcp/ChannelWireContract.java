package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's channel wire against a plain peer, over each kind of socket it serves (a subclass
 * each): reads that wait in the selector first still return what is there, time out when nothing
 * comes, and go on through data larger than the wire's buffers.
 */
abstract class ChannelWireContract {
    protected ServerSocketChannel listener;
    protected SocketChannel peer;
    protected Wire wire;

    /** Opens {@link #listener}, connects {@link #wire} to it and accepts {@link #peer}. */
    abstract void open() throws IOException;

    @BeforeEach
    void connect() throws IOException {
        open();
    }

    @AfterEach
    void close() throws IOException {
        wire.close();
        peer.close();
        listener.close();
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aReadWithNothingToReadTimesOutAfterItsTimeNotBefore() {
        long start = System.nanoTime();
        assertThrows(SocketTimeoutException.class, () -> wire.read(new byte[16], 0, 16, 50));
        assertTrue(System.nanoTime() - start >= 50_000_000L, "waited its 50 ms");
    }

    @Test
    void bytesAlreadyThereAreReadAndAReadAfterThemWaitsForMore() throws Exception {
        peer.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        byte[] into = new byte[10];
        assertEquals(3, wire.read(into, 2, 8, 5_000));
        assertArrayEquals(new byte[] {0, 0, 1, 2, 3, 0, 0, 0, 0, 0}, into);
        // the socket is empty now: the next read waits in the selector, and wakes for the next bytes
        Thread late = new Thread(() -> {
            try {
                Thread.sleep(20);
                peer.write(ByteBuffer.wrap(new byte[] {4}));
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        late.start();
        assertEquals(1, wire.read(into, 0, 10, 5_000));
        assertEquals(4, into[0]);
        late.join();
    }

    @Test
    void writesAndReadsLargerThanTheWireBuffersArriveWhole() throws Exception {
        byte[] sent = random(300_000, 1);   // over four times the 64 KiB buffers
        Thread writer = new Thread(() -> {
            try {
                wire.write(sent, 0, sent.length);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        writer.start();
        ByteBuffer got = ByteBuffer.allocate(sent.length);
        while (got.hasRemaining()) {
            peer.read(got);
        }
        writer.join();
        assertArrayEquals(sent, got.array());

        byte[] back = random(200_000, 2);
        Thread answer = new Thread(() -> {
            try {
                ByteBuffer b = ByteBuffer.wrap(back);
                while (b.hasRemaining()) {
                    peer.write(b);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        answer.start();
        byte[] read = new byte[back.length];
        int at = 0;
        while (at < read.length) {
            // reads of up to 100 KiB: some fill the wire's buffer, so the next one reads at once
            int n = wire.read(read, at, Math.min(100 << 10, read.length - at), 5_000);
            assertTrue(n > 0);
            at += n;
        }
        answer.join();
        assertArrayEquals(back, read);
    }

    @Test
    void theEndOfTheStreamReadsAsMinusOne() throws Exception {
        peer.close();
        assertEquals(-1, wire.read(new byte[4], 0, 4, 5_000));
    }
}

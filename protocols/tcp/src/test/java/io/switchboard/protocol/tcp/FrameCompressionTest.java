package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.switchboard.codec.message.WireFormatException;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Decompression within a limit: exactly the limit passes, one byte more is refused, and a bomb is
 * refused having allocated about the limit, not its inflated size; data that is not in its
 * compression is malformed.
 */
class FrameCompressionTest {
    private static final int LIMIT = 1 << 20;

    private static byte[] read(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.readBytes(out);
        return out;
    }

    private static byte[] decompress(TcpCompression c, byte[] compressed, long limit) {
        ByteBuf plain = FrameCompression.decompress(c, Unpooled.wrappedBuffer(compressed), limit);
        try {
            return read(plain);
        } finally {
            plain.release();
        }
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void whatIsCompressedComesBackExactlyUpToTheLimitAndNoFurther(TcpCompression c) throws Exception {
        byte[] plain = new byte[LIMIT];
        Random random = new Random(7);
        for (int i = 0; i < plain.length; i++) {
            plain[i] = (byte) (i % 3 == 0 ? random.nextInt() : i >>> 10);   // some noise, some repetition
        }
        byte[] ours = FrameCompression.compress(c, plain, 0, plain.length);
        assertArrayEquals(plain, TcpCompressionTest.uncompress(c, ours), "a peer's stream reads what we compress");
        byte[] theirs = TcpCompressionTest.compress(c, plain);
        assertArrayEquals(plain, decompress(c, theirs, LIMIT), "exactly the limit passes");
        WireFormatException over = assertThrows(WireFormatException.class, () -> decompress(c, theirs, LIMIT - 1));
        assertEquals(WireFormatException.SIZE_LIMIT, over.reason());
        assertArrayEquals(new byte[0], decompress(c, TcpCompressionTest.compress(c, new byte[0]), LIMIT), "empty");
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void aBombIsRefusedHavingAllocatedAboutTheLimitNotItsInflatedSize(TcpCompression c) throws Exception {
        byte[] bomb = TcpCompressionTest.compress(c, new byte[64 << 20]);   // 64 MiB of zeros
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        WireFormatException e = assertThrows(WireFormatException.class, () -> FrameCompression.decompress(c,
                Unpooled.wrappedBuffer(bomb), LIMIT));
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertEquals(WireFormatException.SIZE_LIMIT, e.reason());
        // growing by doubling up to the limit allocates under three times it; inflating whole would take 64 MiB
        assertTrue(allocated < 4L * LIMIT, c + " allocated " + allocated + " bytes for a " + bomb.length
                + "-byte bomb");
    }

    @ParameterizedTest
    @EnumSource(value = TcpCompression.class, names = {"SNAPPY", "GZIP", "ZLIB"})
    void dataNotInItsCompressionIsMalformed(TcpCompression c) throws Exception {
        byte[] good = TcpCompressionTest.compress(c, "a message, twice: a message".getBytes());
        byte[][] bad = {
            {0x0A, 0x07, 0x07, 0x07},   // snappy: 10 bytes, then a copy from before the start; gzip, zlib: no header
            Arrays.copyOf(good, good.length / 2),                                 // cut short
        };
        for (byte[] b : bad) {
            WireFormatException e = assertThrows(WireFormatException.class, () -> decompress(c, b, LIMIT));
            assertEquals(WireFormatException.MALFORMED, e.reason(), e.getMessage());
        }
    }
}

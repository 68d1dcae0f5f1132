package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Large frames' arrays kept between frames: handed out only where they fit, never showing a frame's bytes to the next. */
class FrameArraysTest {
    private static final int LARGE = FrameArrays.MIN_KEPT_BYTES;

    @Test
    void aKeptArrayIsHandedOutAgainForAFrameItFitsWithinAQuarter() {
        FrameArrays arrays = new FrameArrays(2);
        byte[] kept = new byte[4 * LARGE];
        arrays.give(kept);
        assertNotSame(kept, arrays.take(2 * LARGE), "twice the frame's size is too large to hand out");
        assertNotSame(kept, arrays.take(4 * LARGE + 1), "too small");
        assertSame(kept, arrays.take(4 * LARGE - LARGE / 2), "within a quarter");
        assertNotSame(kept, arrays.take(4 * LARGE - LARGE / 2), "handed out once");
    }

    @Test
    void smallArraysAreNeitherKeptNorHandedOut() {
        FrameArrays arrays = new FrameArrays(1);
        byte[] small = new byte[LARGE - 1];
        arrays.give(small);
        byte[] large = new byte[LARGE];
        arrays.give(large);   // the one place is still free
        assertSame(large, arrays.take(LARGE));
        assertNotSame(small, arrays.take(LARGE - 1));
    }

    @Test
    void aFullPoolDropsWhatIsGivenBeyondIt() {
        FrameArrays arrays = new FrameArrays(1);
        byte[] first = new byte[LARGE];
        byte[] second = new byte[LARGE];
        arrays.give(first);
        arrays.give(second);
        assertSame(first, arrays.take(LARGE));
        assertNotSame(second, arrays.take(LARGE));
    }

    @Test
    void aBufferOverAKeptArrayShowsNoneOfTheBytesAnEarlierFrameLeftInIt() {
        FrameArrays arrays = new FrameArrays(1);
        byte[] earlier = new byte[LARGE];
        Arrays.fill(earlier, (byte) 0x5A);   // an earlier caller's frame
        arrays.give(earlier);
        ByteBuf buf = arrays.heapBuffer(arrays.take(LARGE), Integer.MAX_VALUE);
        try {
            assertEquals(0, buf.readableBytes(), "nothing readable before anything is written");
            assertEquals(LARGE, buf.writableBytes());
            buf.writeBytes(new byte[] {1, 2, 3});
            assertEquals(3, buf.readableBytes());
            byte[] read = new byte[3];
            buf.readBytes(read);
            assertArrayEquals(new byte[] {1, 2, 3}, read);
            assertEquals(0, buf.readableBytes(), "the earlier frame's bytes after them are not readable");
        } finally {
            buf.release();
        }
    }

    @Test
    void aBufferGivesItsArrayBackWhenFreedAndWhenItGrows() {
        FrameArrays arrays = new FrameArrays(2);
        byte[] first = arrays.take(LARGE);
        ByteBuf buf = arrays.heapBuffer(first, Integer.MAX_VALUE);
        buf.writeBytes(new byte[LARGE]);
        buf.ensureWritable(LARGE);   // grows into a new array, giving the first back
        assertSame(first, arrays.take(LARGE));
        byte[] grown = buf.array();
        buf.release();
        assertSame(grown, arrays.take(grown.length), "freed: its array is kept");
    }

    @Test
    void aBufferThatGrowsWhileAFramesDataIsStillReadKeepsItsOldArrayFromTheNextFrame() {
        // a client's connection buffer: an answer's data handed to its caller as a retained slice,
        // decoded through a ByteBuffer over the array, while the reader makes room for the next frame
        FrameArrays arrays = new FrameArrays(2);
        byte[] first = arrays.take(LARGE);
        ByteBuf buf = arrays.heapBuffer(first, Integer.MAX_VALUE);
        byte[] answer = new byte[LARGE];
        for (int i = 0; i < answer.length; i++) {
            answer[i] = (byte) (i * 31 + 7);
        }
        buf.writeBytes(answer);
        ByteBuf data = buf.readRetainedSlice(LARGE);
        java.nio.ByteBuffer decoding = data.nioBuffer();
        buf.ensureWritable(LARGE);   // grows into a new array while the slice still reads the old one

        byte[] nextFrame = arrays.take(LARGE);
        assertNotSame(first, nextFrame, "the array a caller still reads is not handed out");
        Arrays.fill(nextFrame, (byte) 0x77);   // another call's frame, written into what it got
        byte[] read = new byte[LARGE];
        decoding.get(read);
        assertArrayEquals(answer, read, "the answer's bytes, as its caller decodes them");
        byte[] grown = buf.array();
        data.release();
        buf.release();
        assertSame(grown, arrays.take(grown.length), "freed at last, the buffer's array is kept again");
    }

    @Test
    void aBudgetCountsTheBytesAKeptArrayHoldsBeyondTheFrameOrTakesANewArray() {
        FrameArrays arrays = new FrameArrays(1);
        int frame = 4 * LARGE;
        byte[] kept = new byte[frame + LARGE / 2];   // an eighth larger than the frame
        FrameBudget tight = new FrameBudget(frame, arrays);
        arrays.give(kept);
        assertEquals(true, tight.reserve(frame));
        ByteBuf exact = tight.buffer(frame, frame);
        assertNotSame(kept, exact.array(), "no room in the budget for the kept array's extra bytes");
        assertEquals(frame, exact.capacity());
        assertEquals(frame, tight.reserved());
        exact.release();
        assertEquals(0, tight.reserved());

        FrameBudget roomy = new FrameBudget(2L * frame, arrays);
        arrays.take(frame);   // empties the place the exact array was given to
        arrays.give(kept);
        assertEquals(true, roomy.reserve(frame));
        ByteBuf larger = roomy.buffer(frame, frame);
        assertSame(kept, larger.array());
        assertEquals(0, larger.readableBytes());
        assertEquals(frame + LARGE / 2, roomy.reserved(), "the frame and the kept array's extra bytes");
        larger.release();
        assertEquals(0, roomy.reserved());
    }
}

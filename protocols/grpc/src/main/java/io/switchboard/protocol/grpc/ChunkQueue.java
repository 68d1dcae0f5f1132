package io.switchboard.protocol.grpc;

import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.protocol.spi.PhaseMarks;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Iterator;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The chunks of one incoming message, handed from gRPC's callbacks to the thread that decodes
 * them, and checked on the way: each chunk must start at the offset where the previous one ended,
 * the first one announces the message's total size, and the stream must end exactly there
 * ({@link io.switchboard.codec.binary.WireFormat#CHUNKS}). Flow control makes it bounded:
 * only {@link #WINDOW} chunks are requested ahead, and each chunk the decoder takes requests one
 * more, so a slow decoder slows the sender instead of filling memory.
 *
 * <p>The decoder reads gRPC's own buffers; a chunk is released when the decoder moves past it, and
 * {@link #close()} (by the decoder, when it is done or gives up) releases whatever is left.
 */
final class ChunkQueue implements BinaryReader.Source {
    static final int WINDOW = 4;
    /** Chunks any message may use, however small; a hostile peer cannot make a call spin on empty chunks beyond that. */
    static final int FREE_CHUNKS = 1024;
    /** Beyond {@link #FREE_CHUNKS}, one more chunk per this many bytes of the announced total. */
    static final int BYTES_PER_EXTRA_CHUNK = 1024;
    private static final Object END = new Object();
    private static final Iterator<ByteBuffer> NONE = Collections.emptyIterator();

    private final ArrayDeque<Object> items = new ArrayDeque<>();
    private final IntConsumer request;
    private final long idleNanos;
    private final Supplier<RuntimeException> idleError;
    private final long maxMessageBytes;
    private final int maxChunkBytes;
    private final long startNanos = System.nanoTime();
    private long minBytesPerSecond;
    private Supplier<RuntimeException> slowError;
    private boolean closed;

    // the decoding thread's side
    private Frame.Incoming current;
    private Iterator<ByteBuffer> parts = NONE;
    private long expected;
    private long total = -1;
    private long chunks;

    ChunkQueue(IntConsumer request, Duration idle, Supplier<RuntimeException> idleError, long maxMessageBytes,
            int maxChunkBytes) {
        this.request = request;
        this.idleNanos = idle.toNanos();
        this.idleError = idleError;
        this.maxMessageBytes = maxMessageBytes;
        this.maxChunkBytes = maxChunkBytes;
    }

    /**
     * Bounds the time the whole message may take, not only each wait: the idle time plus the
     * announced total at {@code bytesPerSecond}. Without it a sender that trickles a byte at a
     * time, each within the idle time, would hold the decoding thread for as long as it likes
     * (a slow-loris). Past the bound the decoder gets {@code error}. Call before decoding starts.
     */
    void requireMinRate(long bytesPerSecond, Supplier<RuntimeException> error) {
        this.minBytesPerSecond = bytesPerSecond;
        this.slowError = error;
    }

    /** Nanoseconds left before the message must be complete; Long.MAX_VALUE without a rate bound. */
    private long messageTimeLeft(long now) {
        if (minBytesPerSecond <= 0) {
            return Long.MAX_VALUE;
        }
        long allowance = idleNanos + (total < 0 ? 0 : total * 1_000_000_000L / minBytesPerSecond);
        return startNanos + allowance - now;
    }

    void add(Frame frame) {
        Frame.Incoming chunk = (Frame.Incoming) frame;
        synchronized (this) {
            if (!closed) {
                items.add(chunk);
                notifyAll();
                return;
            }
        }
        chunk.release(); // the decoder is gone: nobody will read it
    }

    /** The message is complete: the peer half-closed, or the call ended well. */
    synchronized void end() {
        items.add(END);
        notifyAll();
    }

    /**
     * The call failed: the decoder gets {@code error} on its next read, ahead of any chunk left.
     * The chunk the decoder is reading stays with it: only the decoding thread releases that one.
     */
    synchronized void fail(RuntimeException error) {
        releaseQueued();
        items.add(error);
        notifyAll();
    }

    /** The decoder is done or gives up: every buffer still held goes back to gRPC. Decoding thread only. */
    void close() {
        synchronized (this) {
            closed = true;
            releaseQueued();
        }
        parts = NONE;
        if (current != null) {
            current.release();
            current = null;
        }
    }

    private void releaseQueued() {
        for (Object item : items) {
            if (item instanceof Frame.Incoming chunk) {
                chunk.release();
            }
        }
        items.clear();
    }

    @Override
    public ByteBuffer next() {
        while (true) {
            if (parts.hasNext()) {
                return parts.next();
            }
            if (current != null) {
                current.release(); // the reader has moved past every view of it
                current = null;
            }
            Object item = take();
            if (item == END) {
                if (total >= 0 && expected < total) {
                    throw WireFormatException.malformed("truncated stream: it ended after " + expected + " of the "
                            + total + " bytes its first chunk announced");
                }
                return null;
            }
            current = (Frame.Incoming) item;
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_START);
            request.accept(1);
            check(current);
            parts = current.data.iterator();
        }
    }

    /** The total the first chunk announced, once the decoder has taken it; else -1. Decoding thread only. */
    @Override
    public long knownSize() {
        return total;
    }

    /** Takes the next chunk, or END, or throws the call's failure; waits up to the idle time. */
    private Object take() {
        Object item;
        synchronized (this) {
            long start = System.nanoTime();
            if (messageTimeLeft(start) <= 0) {
                throw slowError.get();
            }
            long idleDeadline = start + idleNanos;
            while (items.isEmpty()) {
                long now = System.nanoTime();
                long left = messageTimeLeft(now);
                if (left <= 0) {
                    throw slowError.get();
                }
                long wait = Math.min(idleDeadline - now, left);
                if (idleDeadline - now <= 0) {
                    throw idleError.get();
                }
                try {
                    wait(wait / 1_000_000, (int) (wait % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CallInterruptedException();
                }
            }
            item = items.peek();
            if (item instanceof Frame.Incoming) {
                items.poll();
            }
        }
        if (item instanceof RuntimeException e) {
            throw e;
        }
        return item;
    }

    /** The chunk's place in the message: where the last one ended, within the announced total and the limits. */
    private void check(Frame.Incoming chunk) {
        if (chunk.error != null) {
            throw chunk.error;
        }
        chunks++;
        if (chunk.offset != expected) {
            long d = chunk.offset - expected;
            throw WireFormatException.malformed("chunk out of order: expected offset " + expected + ", got "
                    + chunk.offset + (d > 0 ? " (a gap of " + d + " bytes)" : " (data already received)"));
        }
        if (total < 0) {
            if (chunk.total < 0 || chunk.total > maxMessageBytes) { // negative: a uint64 past 2^63
                throw new WireFormatException(WireFormatException.SIZE_LIMIT, "message of "
                        + Long.toUnsignedString(chunk.total)
                        + " bytes (the first chunk's total) is larger than the limit of " + maxMessageBytes + " bytes");
            }
            total = chunk.total;
        } else if (chunk.total != 0 && chunk.total != total) {
            throw WireFormatException.malformed("chunk at offset " + chunk.offset + " says the message has "
                    + chunk.total + " bytes, the first chunk said " + total);
        }
        if (chunk.dataLength > maxChunkBytes) {
            throw new WireFormatException(WireFormatException.CHUNK_LIMIT, "chunk at offset " + chunk.offset + " carries "
                    + chunk.dataLength + " bytes, more than the limit of " + maxChunkBytes + " bytes per chunk");
        }
        if (chunk.dataLength > total - expected) {
            throw WireFormatException.malformed("chunk at offset " + chunk.offset + " carries " + chunk.dataLength
                    + " bytes, past the end of the message: the first chunk announced a total of " + total + " bytes");
        }
        long allowed = FREE_CHUNKS + total / BYTES_PER_EXTRA_CHUNK;
        if (chunks > allowed) {
            throw new WireFormatException(WireFormatException.CHUNK_LIMIT, "more than " + allowed
                    + " chunks for a message of " + total + " bytes");
        }
        expected += chunk.dataLength;
    }

    /** The decoding thread was interrupted: the call is being abandoned. */
    static final class CallInterruptedException extends RuntimeException {
        CallInterruptedException() {
            super("interrupted while waiting for data", null, false, false);
        }
    }
}

package io.switchboard.protocol.grpc;

import io.switchboard.idl.runtime.binary.BinaryReader;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The frames of one incoming message, handed from gRPC's callbacks to the thread that decodes
 * them. Flow control makes it bounded: only {@link #WINDOW} frames are requested ahead, and each
 * frame the decoder takes requests one more, so a slow decoder slows the sender instead of
 * filling memory.
 */
final class ChunkQueue implements BinaryReader.Source {
    static final int WINDOW = 4;
    private static final Object END = new Object();

    private final ArrayDeque<Object> items = new ArrayDeque<>();
    private final IntConsumer request;
    private final long idleNanos;
    private final Supplier<RuntimeException> idleError;

    ChunkQueue(IntConsumer request, Duration idle, Supplier<RuntimeException> idleError) {
        this.request = request;
        this.idleNanos = idle.toNanos();
        this.idleError = idleError;
    }

    synchronized void add(Frame frame) {
        items.add(frame);
        notifyAll();
    }

    /** The message is complete: the peer half-closed, or the call ended well. */
    synchronized void end() {
        items.add(END);
        notifyAll();
    }

    /** The call failed: the decoder gets {@code error} on its next read, ahead of any frame left. */
    synchronized void fail(RuntimeException error) {
        items.clear();
        items.add(error);
        notifyAll();
    }

    @Override
    public ByteBuffer next() {
        Object item;
        synchronized (this) {
            long deadline = System.nanoTime() + idleNanos;
            while (items.isEmpty()) {
                long wait = deadline - System.nanoTime();
                if (wait <= 0) {
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
            if (item instanceof Frame) {
                items.poll();
            }
        }
        if (item == END) {
            return null;
        }
        if (item instanceof RuntimeException e) {
            throw e;
        }
        request.accept(1);
        return ((Frame) item).data();
    }

    /** The decoding thread was interrupted: the call is being abandoned. */
    static final class CallInterruptedException extends RuntimeException {
        CallInterruptedException() {
            super("interrupted while waiting for data", null, false, false);
        }
    }
}

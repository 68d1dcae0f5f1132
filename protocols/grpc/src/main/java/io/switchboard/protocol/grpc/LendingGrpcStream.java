package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.switchboard.codec.proto.ProtoOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToIntFunction;

/**
 * The stream gRPC drains a part into, lending the buffer it is filling to the codec: packed numbers
 * go from the value straight into gRPC's (direct) buffer, one copy instead of two through the
 * codec's block ({@link ProtoOutput.LendingSink}).
 *
 * <p>grpc-java writes a message of unknown length into a chain of buffers it allocates from the
 * channel's allocator on the draining thread, and hands them to Netty only once the message is
 * written; a buffer's contents are its {@code ByteBuf}'s bytes up to the writer index. So the
 * buffer written into is the last one {@link NettyTuning#ALLOCATOR} gave this thread during a
 * write, and bytes put past its writer index, the index moved over them, are the message's next
 * bytes. Each write checks that the buffer believed current ends with the bytes just written;
 * if not (another gRPC, compression, a foreign allocator), it lends nothing for the rest of the
 * part, which then goes through the block as before.
 */
final class LendingGrpcStream extends OutputStream implements ProtoOutput.LendingSink {
    /** Bytes compared at the end of the buffer after each write. */
    private static final int CHECKED = 16;
    private static final LongAdder LENT = new LongAdder();

    private final OutputStream stream;
    private final NettyTuning.PartAllocator.Watch watch;
    private ByteBuf current;
    private boolean lending;
    private long lent;

    private LendingGrpcStream(OutputStream stream, NettyTuning.PartAllocator.Watch watch) {
        this.stream = stream;
        this.watch = watch;
    }

    /**
     * Runs {@code write} with {@code stream} wrapped, watching the buffers this thread is given;
     * returns what {@code write} returns.
     */
    static int drain(OutputStream stream, ToIntFunction<LendingGrpcStream> write) {
        try (NettyTuning.PartAllocator.Watch watch = NettyTuning.ALLOCATOR.watch()) {
            LendingGrpcStream lending = new LendingGrpcStream(stream, watch);
            int n = write.applyAsInt(lending);
            LENT.add(lending.lent);
            return n;
        }
    }

    /** Bytes lent in this JVM so far, for tests. */
    static long lentInAll() {
        return LENT.sum();
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        stream.write(b, off, len);
        if (len == 0) {
            return;
        }
        ByteBuf given = watch.takeLast();
        if (given != null) {
            current = given;
            lending = current.writerIndex() <= len;   // a new buffer holds only this write's tail
        }
        if (lending && !endsWith(b, off, len)) {
            lending = false;
            current = null;
        }
    }

    private boolean endsWith(byte[] b, int off, int len) {
        int end = current.writerIndex();
        int n = Math.min(Math.min(len, CHECKED), end);
        for (int i = 1; i <= n; i++) {
            if (current.getByte(end - i) != b[off + len - i]) {
                return false;
            }
        }
        return n > 0;
    }

    @Override
    public ByteBuffer room(int min) {
        if (!lending || current.writableBytes() < min) {
            return null;   // the next write through the block makes gRPC take its next buffer
        }
        return current.nioBuffer(current.writerIndex(), current.writableBytes());
    }

    @Override
    public void filled(int bytes) {
        current.writerIndex(current.writerIndex() + bytes);
        lent += bytes;
    }

    @Override
    public void flush() throws IOException {
        stream.flush();
    }
}

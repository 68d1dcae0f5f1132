package io.switchboard.protocol.local;

import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Deep copies of message beans through a component's generated binary codec: written and read
 * back in memory. The codec walks linked structures through a node table, so a copy of any
 * length, with cycles or shared nodes, needs no stack depth and keeps its shape; numbers keep
 * their exact bits. A large primitive array is not serialized first: the writer refers to it and
 * its bytes pass through one reusable scratch buffer into the new array.
 *
 * <p>Writer and reader may be the codecs of two class loaders' copies of the same interface, which
 * is how a call crosses class loaders within a JVM.
 */
final class MessageCopy {
    /** Bytes per piece handed to the reader; big arrays are streamed through this much memory. */
    private static final int SCRATCH_BYTES = 256 << 10;
    /** No limits in process: they protect a server from what arrives over a network. */
    private static final BinaryLimits NO_LIMITS = BinaryLimits.unlimited();

    private MessageCopy() {
    }

    /**
     * A copy of {@code message}, read as the message of {@code element}; {@code copied} (if not
     * null) is told how many bytes of the binary encoding it went through.
     */
    static <T> T copy(BinaryCodec from, Object message, BinaryCodec to, String element, Class<T> type,
                      java.util.function.LongConsumer copied) {
        BinaryWriter out = new BinaryWriter(from, Integer.MAX_VALUE);
        from.writeMessage(out, message);
        if (copied != null) {
            copied.accept(out.size());
        }
        List<BinaryWriter.Segment> segments = out.segments();
        BinaryReader in = new BinaryReader(to, new Pieces(segments), NO_LIMITS);
        T copy = in.readMessage(element, type);
        in.expectEnd();
        return copy;
    }

    /**
     * The segments as a sequence of buffers over one scratch array. The reader has finished with
     * a buffer when it asks for the next one, so the array is reused.
     */
    private static final class Pieces implements BinaryReader.Source {
        private final List<BinaryWriter.Segment> segments;
        private byte[] scratch;
        private int segment;
        private long from;

        Pieces(List<BinaryWriter.Segment> segments) {
            this.segments = segments;
        }

        @Override
        public ByteBuffer next() {
            while (segment < segments.size()) {
                BinaryWriter.Segment s = segments.get(segment);
                if (from >= s.byteLength()) {
                    segment++;
                    from = 0;
                    continue;
                }
                if (scratch == null) {
                    long total = 0;
                    for (BinaryWriter.Segment each : segments) {
                        total += each.byteLength();
                    }
                    scratch = new byte[(int) Math.max(16, Math.min(SCRATCH_BYTES, total))];
                }
                int n = s.copyTo(scratch, 0, from, scratch.length);
                from += n;
                return ByteBuffer.wrap(scratch, 0, n);
            }
            return null;
        }
    }
}

package io.switchboard.protocol.grpc;

import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormatException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One gRPC message of the bulk protocol: the protobuf encoding of {@code message Chunk { bytes
 * data = 1; uint64 offset = 2; uint64 total = 3; }} (see {@link io.switchboard.codec.binary.WireFormat#CHUNKS}).
 * Building and parsing these three fields by hand is all the protobuf this protocol needs, so no
 * protoc and no generated classes are involved. Neither direction copies the payload into a
 * per-chunk array: an outgoing frame writes the caller's primitive arrays straight into gRPC's
 * buffers through a small reused scratch array, and an incoming frame keeps views of gRPC's
 * buffers until the decoder has read them, then {@link Incoming#release() releases} them.
 */
abstract sealed class Frame permits Frame.Outgoing, Frame.Incoming {
    /** Protobuf keys: field 1 length-delimited, fields 2 and 3 varint. */
    private static final int DATA_KEY = 0x0A;
    private static final int OFFSET_KEY = 0x10;
    private static final int TOTAL_KEY = 0x18;
    /** Most bytes a chunk needs besides its data: three keys, two 10-byte varints, a 5-byte length. */
    static final int MAX_HEADER = 32;
    /** Bytes converted at a time when an outgoing frame writes a primitive array into gRPC's buffers. */
    private static final int SCRATCH_BYTES = 64 << 10;

    /** Data bytes per chunk sent: well under gRPC's default 4 MiB message limit, large enough to amortise framing. */
    static final int CHUNK_BYTES = 1 << 20;

    static final MethodDescriptor.Marshaller<Frame> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Frame frame) {
            if (!(frame instanceof Outgoing out)) {
                throw new IllegalArgumentException("a received frame cannot be sent again");
            }
            return new FrameStream(out);
        }

        @Override
        public Frame parse(InputStream stream) {
            return Incoming.parse(stream);
        }
    };

    /** Cuts an encoded message into chunks of at most {@link #CHUNK_BYTES} data bytes, lazily, numbered by offset. */
    static Iterator<Frame> split(List<BinaryWriter.Segment> segments, long totalBytes) {
        return new Iterator<>() {
            // one scratch array per message: gRPC drains each frame inside sendMessage, on the sending thread
            private final byte[] scratch = new byte[(int) Math.min(SCRATCH_BYTES, Math.max(16, totalBytes))];
            private int segment;
            private long within;
            private long offset;
            private boolean first = true;

            @Override
            public boolean hasNext() {
                // an empty message is still one (empty) chunk, so the peer sees a message and its total
                return offset < totalBytes || first;
            }

            @Override
            public Frame next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                int room = (int) Math.min(CHUNK_BYTES, totalBytes - offset);
                int startSegment = segment;
                long startWithin = within;
                int used = 0;
                // whole elements only, so that a typed array converts without splitting a value
                while (used < room && segment < segments.size()) {
                    BinaryWriter.Segment s = segments.get(segment);
                    long fit = Math.min(s.byteLength() - within, room - used) / s.width() * s.width();
                    if (fit == 0 && within < s.byteLength()) {
                        break; // the next element does not fit whole: it starts the next chunk
                    }
                    used += (int) fit;
                    within += fit;
                    if (within == s.byteLength()) {
                        segment++;
                        within = 0;
                    }
                }
                Frame f = new Outgoing(header(offset, first ? totalBytes : 0, used),
                        segments, startSegment, startWithin, used, scratch);
                offset += used;
                first = false;
                return f;
            }
        };
    }

    /** A chunk of arbitrary data, for tests that speak the wire directly. */
    static Frame chunk(long offset, long total, byte[] data) {
        return new Outgoing(header(offset, total, data.length),
                List.of(BinaryWriter.Segment.ofBytes(data)), 0, 0, data.length, new byte[Math.max(16, data.length)]);
    }

    /** A whole message as one chunk, for tests. */
    static Frame ofData(byte[] data) {
        return chunk(0, data.length, data);
    }

    /** Arbitrary protobuf bytes, for tests that send something that is not a well-formed Chunk. */
    static Frame raw(byte[] bytes) {
        return new Outgoing(bytes, List.of(), 0, 0, 0, null);
    }

    /** The fields before the data: offset and total (proto3 leaves zeros out), then the data's key and length. */
    private static byte[] header(long offset, long total, int dataLength) {
        byte[] h = new byte[MAX_HEADER];
        int at = 0;
        if (offset != 0) {
            h[at++] = OFFSET_KEY;
            at = putVarint(h, at, offset);
        }
        if (total != 0) {
            h[at++] = TOTAL_KEY;
            at = putVarint(h, at, total);
        }
        if (dataLength != 0) {
            h[at++] = DATA_KEY;
            at = putVarint(h, at, dataLength);
        }
        return java.util.Arrays.copyOf(h, at);
    }

    private static int putVarint(byte[] out, int at, long v) {
        while ((v & ~0x7FL) != 0) {
            out[at++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }

    /** A frame to send: its header bytes, then {@code dataLength} bytes of the encoded message's segments. */
    static final class Outgoing extends Frame {
        private final byte[] head;
        private final List<BinaryWriter.Segment> segments;
        private final int startSegment;
        private final long startWithin;
        private final int dataLength;
        private final byte[] scratch;

        private Outgoing(byte[] head, List<BinaryWriter.Segment> segments, int startSegment, long startWithin,
                int dataLength, byte[] scratch) {
            this.head = head;
            this.segments = segments;
            this.startSegment = startSegment;
            this.startWithin = startWithin;
            this.dataLength = dataLength;
            this.scratch = scratch;
        }

        int length() {
            return head.length + dataLength;
        }

        void writeTo(OutputStream target) throws IOException {
            target.write(head);
            int segment = startSegment;
            long within = startWithin;
            int left = dataLength;
            while (left > 0) {
                BinaryWriter.Segment s = segments.get(segment);
                int n = s.copyTo(scratch, 0, within, Math.min(left, scratch.length));
                target.write(scratch, 0, n);
                left -= n;
                within += n;
                if (within == s.byteLength()) {
                    segment++;
                    within = 0;
                }
            }
        }

        /** The whole frame as bytes, for tests. */
        byte[] toBytes() {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(length());
            try {
                writeTo(out);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return out.toByteArray();
        }
    }

    /**
     * A received chunk: its offset, its total (0 when absent), and its data as views of gRPC's
     * buffers, or the reason it is not a well-formed Chunk (reported when the decoder reaches it,
     * so that the call ends with a status that names it). Must be {@link #release() released}.
     */
    static final class Incoming extends Frame {
        final long offset;
        final long total;
        final int dataLength;
        final List<ByteBuffer> data;
        final WireFormatException error;
        private final InputStream owner;
        private final AtomicBoolean released = new AtomicBoolean();

        private Incoming(long offset, long total, int dataLength, List<ByteBuffer> data, WireFormatException error,
                InputStream owner) {
            this.offset = offset;
            this.total = total;
            this.dataLength = dataLength;
            this.data = data;
            this.error = error;
            this.owner = owner;
        }

        /** Bytes of the serialized chunk: its data and the header fields a sender writes for it. */
        long wireLength() {
            return (long) header(offset, total, dataLength).length + dataLength;
        }

        /** Gives gRPC's buffers back; the views in {@link #data} must not be read afterwards. Idempotent. */
        void release() {
            if (owner != null && released.compareAndSet(false, true)) {
                try {
                    owner.close();
                } catch (IOException ignored) {
                    // closing a detached buffer stream only drops reference counts
                }
            }
        }

        static Incoming parse(InputStream stream) {
            // gRPC's own stream can hand over its buffers (Detachable) and show them without copying
            // (HasByteBuffer); any other stream is read into one array of the exact size
            boolean views = stream instanceof Detachable && stream instanceof HasByteBuffer h && h.byteBufferSupported()
                    && stream.markSupported();
            InputStream in = views ? ((Detachable) stream).detach() : stream;
            if (views) {
                // a marked stream keeps the buffers it has skipped (else it frees each one as it passes
                // it), so the views below stay valid until release() closes the stream
                in.mark(Integer.MAX_VALUE);
            }
            long offset = 0;
            long total = 0;
            int dataLength = 0;
            List<ByteBuffer> data = List.of();
            int seen = 0;
            try {
                for (int first = in.read(); first != -1; first = in.read()) {
                    long key = varint(in, first, "key");
                    int field = key == DATA_KEY ? 1 : key == OFFSET_KEY ? 2 : key == TOTAL_KEY ? 3 : 0;
                    if (field == 0) {
                        throw WireFormatException.malformed("chunk is not a Chunk message: it has protobuf key " + key
                                + " (field " + (key >>> 3) + ", wire type " + (key & 7)
                                + "); a Chunk has data = 1 (bytes), offset = 2 and total = 3 (uint64)");
                    }
                    if ((seen & 1 << field) != 0) {
                        throw WireFormatException.malformed("chunk has field " + field + " twice");
                    }
                    seen |= 1 << field;
                    if (field == 2) {
                        offset = varint(in, in.read(), "offset");
                    } else if (field == 3) {
                        total = varint(in, in.read(), "total");
                    } else {
                        long size = varint(in, in.read(), "data length");
                        if (size < 0 || size > Integer.MAX_VALUE) {
                            // a uint64 past 2^63 reads as a negative long: never a length
                            throw WireFormatException.malformed("chunk says its data has " + Long.toUnsignedString(size)
                                    + " bytes");
                        }
                        if (size > in.available()) {
                            throw WireFormatException.malformed("chunk says its data has " + size + " bytes but carries "
                                    + in.available());
                        }
                        dataLength = (int) size;
                        data = views ? views(in, dataLength) : List.of(ByteBuffer.wrap(readExactly(in, dataLength)));
                    }
                }
                return new Incoming(offset, total, dataLength, data, null, views ? in : null);
            } catch (WireFormatException e) {
                return new Incoming(0, 0, 0, List.of(), e, views ? in : null);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static List<ByteBuffer> views(InputStream in, int length) throws IOException {
            List<ByteBuffer> parts = new ArrayList<>(Math.min(64, length / 8192 + 1));
            int left = length;
            while (left > 0) {
                ByteBuffer b = ((HasByteBuffer) in).getByteBuffer();
                if (b == null || !b.hasRemaining()) {
                    throw WireFormatException.malformed("chunk ends inside its data");
                }
                int n = Math.min(left, b.remaining());
                parts.add(b.slice().limit(n));
                for (long skipped = 0; skipped < n; ) {
                    skipped += in.skip(n - skipped);
                }
                left -= n;
            }
            return parts;
        }

        /** One array of the exact size (InputStream.readNBytes(int) would read through 8 KiB pieces and join them). */
        private static byte[] readExactly(InputStream in, int length) throws IOException {
            byte[] bytes = new byte[length];
            if (in.readNBytes(bytes, 0, length) != length) {
                throw WireFormatException.malformed("chunk ends inside its data");
            }
            return bytes;
        }

        private static long varint(InputStream in, int first, String what) throws IOException {
            long v = 0;
            int b = first;
            for (int shift = 0; ; shift += 7) {
                if (b < 0 || shift > 63) {
                    throw WireFormatException.malformed("chunk has a malformed " + what);
                }
                v |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return v;
                }
                b = in.read();
            }
        }
    }

    /** Lets gRPC copy the frame straight into its buffers (Drainable) with a known size. */
    private static final class FrameStream extends InputStream implements KnownLength, Drainable {
        private Outgoing frame;
        private byte[] copy;
        private int position;

        FrameStream(Outgoing frame) {
            this.frame = frame;
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            if (frame != null && position == 0) {
                int n = frame.length();
                frame.writeTo(target);
                frame = null;
                position = n;
                return n;
            }
            int n = available();
            target.write(bytes(), position, n);
            position += n;
            return n;
        }

        @Override
        public int available() {
            return frame != null ? frame.length() - position : copy == null ? 0 : copy.length - position;
        }

        @Override
        public int read() {
            return available() > 0 ? bytes()[position++] & 0xFF : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = Math.min(len, available());
            if (n <= 0) {
                return len == 0 ? 0 : -1;
            }
            System.arraycopy(bytes(), position, b, off, n);
            position += n;
            return n;
        }

        /** Only gRPC paths that do not drain (none in use here) read byte by byte: they get a copy. */
        private byte[] bytes() {
            if (copy == null) {
                copy = frame == null ? new byte[0] : frame.toBytes();
                frame = null;
            }
            return copy;
        }
    }
}

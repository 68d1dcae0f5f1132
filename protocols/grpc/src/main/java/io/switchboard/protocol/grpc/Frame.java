package io.switchboard.protocol.grpc;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.switchboard.idl.runtime.binary.BinaryWriter;
import io.switchboard.idl.runtime.binary.WireFormatException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One gRPC message of the bulk protocol: the protobuf encoding of {@code message Chunk { bytes
 * data = 1; }}, kept as raw bytes. Building and parsing that one field by hand is all the protobuf
 * this protocol needs, so no protoc and no generated classes are involved.
 */
record Frame(byte[] bytes, int offset, int length) {
    /** Protobuf key of field 1, wire type 2 (length-delimited). */
    private static final int DATA_KEY = 0x0A;
    /** Room kept in front of a chunk's data for the key and a varint length. */
    private static final int HEADER_ROOM = 6;

    /** Data bytes per chunk: well under gRPC's default 4 MiB message limit, large enough to amortise framing. */
    static final int CHUNK_BYTES = 1 << 20;

    static final MethodDescriptor.Marshaller<Frame> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Frame frame) {
            return new FrameStream(frame);
        }

        @Override
        public Frame parse(InputStream stream) {
            try {
                // the transport hands over a KnownLength stream: one exact allocation, one copy
                int n = stream.available();
                byte[] bytes = stream.readNBytes(n);
                byte[] rest = stream.readAllBytes();
                if (rest.length > 0) {
                    byte[] all = new byte[bytes.length + rest.length];
                    System.arraycopy(bytes, 0, all, 0, bytes.length);
                    System.arraycopy(rest, 0, all, bytes.length, rest.length);
                    bytes = all;
                }
                return new Frame(bytes, 0, bytes.length);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    };

    /** The chunk's data, without copying; a frame that is not a {@code Chunk} is malformed. */
    ByteBuffer data() {
        if (length == 0) {
            return ByteBuffer.allocate(0);
        }
        int at = offset;
        int end = offset + length;
        if ((bytes[at++] & 0xFF) != DATA_KEY) {
            throw WireFormatException.malformed("chunk is not a Chunk message: it starts with protobuf key "
                    + (bytes[offset] & 0xFF) + ", expected field 1 (bytes)");
        }
        long size = 0;
        for (int shift = 0; ; shift += 7) {
            if (at >= end || shift > 28) {
                throw WireFormatException.malformed("chunk has a malformed length");
            }
            int b = bytes[at++] & 0xFF;
            size |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                break;
            }
        }
        if (size != end - at) {
            throw WireFormatException.malformed("chunk says its data has " + size + " bytes but carries "
                    + (end - at) + (size < end - at ? " (unexpected fields after the data)" : ""));
        }
        return ByteBuffer.wrap(bytes, at, (int) size);
    }

    /** Cuts an encoded message into frames of at most {@link #CHUNK_BYTES} data bytes, lazily. */
    static Iterator<Frame> split(List<BinaryWriter.Segment> segments, long totalBytes) {
        return new Iterator<>() {
            private int segment;
            private long within;
            private long left = totalBytes;
            private boolean first = true;

            @Override
            public boolean hasNext() {
                // an empty message is still one (empty) chunk, so the peer sees a message
                return left > 0 || first;
            }

            @Override
            public Frame next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                first = false;
                int room = (int) Math.min(CHUNK_BYTES, left);
                byte[] out = new byte[HEADER_ROOM + room];
                int used = 0;
                while (used < room && segment < segments.size()) {
                    BinaryWriter.Segment s = segments.get(segment);
                    int n = s.copyTo(out, HEADER_ROOM + used, within, room - used);
                    if (n == 0 && within < s.byteLength()) {
                        break; // the next element does not fit whole: it starts the next chunk
                    }
                    used += n;
                    within += n;
                    if (within == s.byteLength()) {
                        segment++;
                        within = 0;
                    }
                }
                left -= used;
                int header = 1 + varintSize(used);
                int start = HEADER_ROOM - header;
                out[start] = DATA_KEY;
                int at = start + 1;
                int v = used;
                while ((v & ~0x7F) != 0) {
                    out[at++] = (byte) ((v & 0x7F) | 0x80);
                    v >>>= 7;
                }
                out[at] = (byte) v;
                return new Frame(out, start, header + used);
            }
        };
    }

    /** A frame of arbitrary bytes, for tests that speak the wire directly. */
    static Frame ofData(byte[] data) {
        int header = 1 + varintSize(data.length);
        byte[] out = new byte[header + data.length];
        out[0] = DATA_KEY;
        int at = 1;
        int v = data.length;
        while ((v & ~0x7F) != 0) {
            out[at++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[at] = (byte) v;
        System.arraycopy(data, 0, out, header, data.length);
        return new Frame(out, 0, out.length);
    }

    private static int varintSize(int v) {
        int n = 1;
        while ((v & ~0x7F) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    /** Lets gRPC copy the frame straight into its buffers (Drainable) with a known size. */
    private static final class FrameStream extends InputStream implements KnownLength, Drainable {
        private final Frame frame;
        private int position;

        FrameStream(Frame frame) {
            this.frame = frame;
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            int n = frame.length - position;
            target.write(frame.bytes, frame.offset + position, n);
            position = frame.length;
            return n;
        }

        @Override
        public int available() {
            return frame.length - position;
        }

        @Override
        public int read() {
            return position < frame.length ? frame.bytes[frame.offset + position++] & 0xFF : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (position >= frame.length) {
                return -1;
            }
            int n = Math.min(len, frame.length - position);
            System.arraycopy(frame.bytes, frame.offset + position, b, off, n);
            position += n;
            return n;
        }
    }
}

package io.switchboard.protocol.grpc;

import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoOutput;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * One gRPC message of a call: a part of a typed protobuf message ({@link io.switchboard.codec.proto.ProtoCodec}),
 * itself a complete protobuf encoding of the method's message type. The marshaller moves bytes
 * only: an outgoing part is drained from the writer's buffer straight into gRPC's (gRPC drains a
 * message inside {@code sendMessage}, so the buffer is reused for the next part); an incoming one
 * stays in gRPC's buffers until the reading thread merges it ({@link #readInto}), reading packed
 * numbers straight out of them.
 */
final class Part {
    static final MethodDescriptor.Marshaller<Part> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Part part) {
            return new Out(part);
        }

        @Override
        public Part parse(InputStream stream) {
            try {
                if (stream instanceof Detachable d && stream instanceof KnownLength) {
                    // keep gRPC's buffers: the reading thread copies them into its own reused array
                    // (read), so no thread allocates per part, and gives them back
                    InputStream kept = d.detach();
                    return new Part(kept, kept.available());
                }
                byte[] bytes = stream.readAllBytes();
                return new Part(bytes, bytes.length);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private final byte[] bytes;
    private final ProtoOutput out;
    private InputStream kept;
    final int length;

    /** A part of these bytes (received, or to send). */
    Part(byte[] bytes, int length) {
        this.bytes = bytes;
        this.out = null;
        this.length = length;
    }

    /** A received part still in gRPC's buffers. */
    private Part(InputStream kept, int length) {
        this.bytes = null;
        this.out = null;
        this.kept = kept;
        this.length = length;
    }

    /** A part to send: what {@code out} holds now; valid until {@code out} is reset. */
    Part(ProtoOutput out) {
        this.bytes = null;
        this.out = out;
        this.length = out.size();
    }

    /**
     * Merges the received part into {@code reader} and gives gRPC's buffers back (also when the
     * part is refused). gRPC's buffers are read in place when they show their bytes as
     * {@link ByteBuffer}s ({@link HasByteBuffer}: Netty's buffers do): packed numbers are copied
     * from them straight into the value's arrays, without first copying the part into an array.
     * Otherwise the part is copied into {@code scratch} first ({@link #read}). Reading thread only.
     */
    void readInto(ProtoCodec.Reader reader, Scratch scratch) {
        if (kept instanceof HasByteBuffer h && h.byteBufferSupported()) {
            InputStream in = kept;
            try {
                reader.readPart(new ProtoInput.Source() {
                    @Override
                    public ByteBuffer next() {
                        return h.getByteBuffer();
                    }

                    @Override
                    public void skip(int n) {
                        try {
                            if (in.skip(n) != n) {
                                throw new IOException("a part of " + length + " bytes ended early");
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                }, length);
            } finally {
                release();
            }
            return;
        }
        reader.readPart(read(scratch), 0, length);
    }

    /**
     * The received bytes, {@code [0, length)} of the returned array: the part's own array, or
     * {@code scratch}'s (grown to fit and reused for the next part), gRPC's buffers released.
     * Reading thread only.
     */
    byte[] read(Scratch scratch) {
        if (bytes != null) {
            return bytes;
        }
        if (scratch.buf.length < length) {
            scratch.buf = new byte[Math.max(length, Math.min(Integer.MAX_VALUE - 16, scratch.buf.length * 2))];
        }
        try {
            int n = kept.readNBytes(scratch.buf, 0, length);
            if (n != length) {
                throw new IOException("a part of " + length + " bytes ended after " + n);
            }
            return scratch.buf;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            release();
        }
    }

    /** Gives gRPC's buffers back, if the part still holds them. Idempotent. */
    void release() {
        InputStream k = kept;
        kept = null;
        if (k != null) {
            try {
                k.close();
            } catch (IOException ignored) {
                // closing a detached buffer stream only drops reference counts
            }
        }
    }

    /** The reused array of one reading thread. */
    static final class Scratch {
        byte[] buf = new byte[0];
    }

    /** Bytes on the wire: the part and gRPC's five-byte message prefix. */
    long wireLength() {
        return length + 5L;
    }

    /** Drains a part into gRPC's buffers without an intermediate copy. */
    private static final class Out extends InputStream implements Drainable, KnownLength {
        private final Part part;
        private boolean drained;

        Out(Part part) {
            this.part = part;
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            if (drained) {
                return 0;
            }
            drained = true;
            if (part.out != null) {
                part.out.writeTo(target);
            } else {
                target.write(part.read(new Scratch()), 0, part.length);
            }
            return part.length;
        }

        @Override
        public int available() {
            return copy != null ? copy.available() : drained ? 0 : part.length;
        }

        /** gRPC drains; reading (another consumer) copies the part once. */
        private java.io.ByteArrayInputStream copy;

        @Override
        public int read() {
            return copy().read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return copy().read(b, off, len);
        }

        private java.io.ByteArrayInputStream copy() {
            if (copy == null) {
                drained = true;
                copy = new java.io.ByteArrayInputStream(part.out != null ? part.out.toByteArray()
                        : part.read(new Scratch()), 0, part.length);
            }
            return copy;
        }
    }
}

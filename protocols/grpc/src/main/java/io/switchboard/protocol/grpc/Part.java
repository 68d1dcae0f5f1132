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
 * stays in gRPC's buffers until it is merged ({@link #readInto}: by the reading thread, or on the
 * event loop as it arrives, {@link PartQueue#readOnArrival}), reading packed
 * numbers straight out of them.
 */
final class Part {
    static final MethodDescriptor.Marshaller<Part> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Part part) {
            return part.writer != null ? new Written(part) : new Out(part);
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

    /** Parts this large or larger are read in place from gRPC's buffers ({@link #readInto}). */
    static final int IN_PLACE_BYTES = 64 << 10;

    /** The block a part of a message of several is written through into gRPC's buffers. */
    static final int BLOCK_BYTES = 64 << 10;

    private final byte[] bytes;
    private final ProtoOutput out;
    private final ProtoCodec.Writer writer;
    private final int target;
    private final byte[] block;
    private InputStream kept;
    /** The part's bytes; for a part written as gRPC takes it, -1 until then. */
    int length;

    /** A part of these bytes (received, or to send). */
    Part(byte[] bytes, int length) {
        this(bytes, null, null, 0, null, length);
    }

    /** A received part still in gRPC's buffers. */
    private Part(InputStream kept, int length) {
        this(null, null, null, 0, null, length);
        this.kept = kept;
    }

    /** A part to send: what {@code out} holds now; valid until {@code out} is reset. */
    Part(ProtoOutput out) {
        this(null, out, null, 0, null, out.size());
    }

    /**
     * The next part of {@code writer}'s message, of several, written when gRPC takes it: straight
     * into gRPC's buffers through {@code block} (reused from part to part), never whole into an
     * array of its own. gRPC takes a message inside {@code sendMessage}, unless the call is over
     * ({@link #taken}).
     */
    Part(ProtoCodec.Writer writer, int target, byte[] block) {
        this(null, null, writer, target, block, -1);
    }

    private Part(byte[] bytes, ProtoOutput out, ProtoCodec.Writer writer, int target, byte[] block, int length) {
        this.bytes = bytes;
        this.out = out;
        this.writer = writer;
        this.target = target;
        this.block = block;
        this.length = length;
    }

    /** Whether gRPC took the part (a part written as it is taken: whether it was written). */
    boolean taken() {
        return length >= 0;
    }

    /** Writes the part of {@link #Part(ProtoCodec.Writer, int, byte[])} into {@code target}. */
    private int writeTo(OutputStream sink) {
        ProtoOutput o = ProtoOutput.into(sink, block);
        writer.writePart(o, target);
        o.flush();
        length = o.size();
        return length;
    }

    /**
     * Merges the received part into {@code reader} and gives gRPC's buffers back (also when the
     * part is refused). gRPC's buffers are read in place when they show their bytes as
     * {@link ByteBuffer}s ({@link HasByteBuffer}: Netty's buffers do): packed numbers are copied
     * from them straight into the value's arrays, without first copying the part into an array.
     * Otherwise, and for a part under {@link #IN_PLACE_BYTES} (a small call's message: one copy of
     * it costs less than walking gRPC's buffers), the part is copied into {@code scratch} first
     * ({@link #read}). The reader's thread only.
     */
    void readInto(ProtoCodec.Reader reader, Scratch scratch) {
        readInto(reader, scratch, IN_PLACE_BYTES);
    }

    /** {@link #readInto(ProtoCodec.Reader, Scratch)}, reading in place parts of {@code minInPlace} bytes or more. */
    void readInto(ProtoCodec.Reader reader, Scratch scratch, int minInPlace) {
        if (length >= minInPlace && kept instanceof HasByteBuffer h && h.byteBufferSupported()) {
            InputStream in = kept;
            try {
                reader.readPart(new ProtoInput.Source() {
                    /**
                     * gRPC's current buffer, kept until its bytes are consumed: the reader asks for
                     * the next bytes several times per buffer, and Netty makes a new ByteBuffer (and
                     * an array of them) on every getByteBuffer.
                     */
                    private ByteBuffer current;

                    @Override
                    public ByteBuffer next() {
                        if (current == null) {
                            current = h.getByteBuffer();
                        }
                        return current;
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
                        ByteBuffer c = current;
                        if (c != null) {
                            if (n >= c.remaining()) {
                                current = null;
                            } else {
                                c.position(c.position() + n);
                            }
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
     * The reader's thread only.
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

    /** The reused array of one message's reader. */
    static final class Scratch {
        byte[] buf = new byte[0];
    }

    /** Bytes on the wire: the part and gRPC's five-byte message prefix; none for a part gRPC did not take. */
    long wireLength() {
        return length < 0 ? 0 : length + 5L;
    }

    /**
     * An outgoing part as gRPC's marshaller hands it on: gRPC drains it ({@link Drainable});
     * reading it instead (another consumer) makes an array of it once.
     */
    private abstract static class Outgoing extends InputStream implements Drainable {
        final Part part;
        private java.io.ByteArrayInputStream copy;

        Outgoing(Part part) {
            this.part = part;
        }

        /** The part's bytes in an array of their own, for a reader; nothing if already drained. */
        abstract byte[] bytes();

        final boolean copied() {
            return copy != null;
        }

        @Override
        public int read() {
            return copy().read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return copy().read(b, off, len);
        }

        final java.io.ByteArrayInputStream copy() {
            if (copy == null) {
                copy = new java.io.ByteArrayInputStream(bytes());
            }
            return copy;
        }
    }

    /** A part already written (into a {@link ProtoOutput}, or received): drained into gRPC's buffers without an intermediate copy. */
    private static final class Out extends Outgoing implements KnownLength {
        private boolean drained;

        Out(Part part) {
            super(part);
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            if (drained || copied()) {
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
            return copied() ? copy().available() : drained ? 0 : part.length;
        }

        @Override
        byte[] bytes() {
            if (drained) {
                return new byte[0];
            }
            drained = true;
            return part.out != null ? part.out.toByteArray() : java.util.Arrays.copyOf(part.read(new Scratch()), part.length);
        }
    }

    /**
     * A part written as gRPC drains it. Its length is known only once it is written, so it is not
     * {@link KnownLength}: gRPC's framer then collects it in its own buffers and prefixes the
     * length after, without copying it again.
     */
    private static final class Written extends Outgoing {
        Written(Part part) {
            super(part);
        }

        @Override
        public int drainTo(OutputStream target) {
            if (part.taken() || copied()) {
                return 0;
            }
            return part.writeTo(target);
        }

        @Override
        public int available() {
            return copied() ? copy().available() : 0;
        }

        @Override
        byte[] bytes() {
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            if (!part.taken()) {
                part.writeTo(bytes);
            }
            return bytes.toByteArray();
        }
    }
}

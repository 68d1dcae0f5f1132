package io.switchboard.codec.proto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes protobuf's wire format, field by field, into one growing buffer: the primitives the
 * generated codecs of the typed {@code .proto} call. Packed arrays of fixed-size numbers are one
 * tag, one length and the raw little-endian values, copied in bulk; nothing is boxed.
 *
 * <p>Lengths of nested messages come first on the wire, so a caller knows them before it writes a
 * message field ({@link #writeLengthDelimited}); the generated codecs compute them in a size pass.
 *
 * <p>An output made by {@link #into} writes into a stream instead (a transport's own buffers, say):
 * its array is a small block handed to the stream whenever it is full, so a packed array goes from
 * the value to the stream through a block that stays in the CPU's cache, never through an array of
 * the whole part.
 */
public final class ProtoOutput {
    public static final int VARINT = 0;
    public static final int FIXED64 = 1;
    public static final int LENGTH_DELIMITED = 2;
    public static final int FIXED32 = 5;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private byte[] buf;
    private int pos;
    /** Where a streaming output's full blocks go; null for an output that keeps its bytes. */
    private final OutputStream sink;
    /** Bytes handed to the sink so far. */
    private int flushed;
    /** Whether every NaN is written as Java's one canonical NaN ({@link #canonicalNaNs}). */
    private boolean canonicalNaNs;

    public ProtoOutput(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
        sink = null;
    }

    /**
     * An output that writes into {@code buffer} from its start, as {@link #ProtoOutput(int)} into
     * its own: a transport's kept array, reused rather than made (and zeroed) anew for every large
     * message. Its bytes past {@link #size()} are whatever they were; a write that does not fit
     * goes on in a larger copy ({@link #array()} then returns that one).
     *
     * <pre>{@code
     * ProtoOutput out = ProtoOutput.over(keptArray);
     * writer.writePart(out, Integer.MAX_VALUE);
     * socket.write(out.array(), 0, out.size());
     * }</pre>
     */
    public static ProtoOutput over(byte[] buffer) {
        if (buffer.length < 16) {
            throw new IllegalArgumentException("a buffer of " + buffer.length + " bytes");
        }
        return new ProtoOutput(null, buffer);
    }

    private ProtoOutput(OutputStream sink, byte[] block) {
        this.buf = block;
        this.sink = sink;
    }

    /**
     * An output that writes into {@code sink} through {@code block} (at least 16 bytes; a value
     * larger than it, a long string, grows a block of its own): {@link #flush} after the last
     * write. {@link #size} counts every byte written.
     */
    public static ProtoOutput into(OutputStream sink, byte[] block) {
        if (block.length < 16) {
            throw new IllegalArgumentException("a block of " + block.length + " bytes");
        }
        return new ProtoOutput(sink, block);
    }

    /**
     * Writes every NaN, double or float, as Java's canonical NaN ({@link Double#doubleToLongBits})
     * rather than with its own sign and payload bits; every other value stays exact (-0.0 among
     * them). For bytes that compare messages rather than carry them: XML has one NaN, so a message
     * that came over SOAP cannot keep a NaN's payload. Returns this output.
     */
    public ProtoOutput canonicalNaNs() {
        canonicalNaNs = true;
        return this;
    }

    /** Hands what a streaming output holds to its stream. */
    public void flush() {
        if (sink != null && pos > 0) {
            try {
                sink.write(buf, 0, pos);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            flushed += pos;
            pos = 0;
        }
    }

    /** The bytes written so far. */
    public byte[] toByteArray() {
        keeping();
        return Arrays.copyOf(buf, pos);
    }

    public int size() {
        return flushed + pos;
    }

    /**
     * The array a keeping output writes into, without a copy: its first {@link #size()} bytes are
     * the output. Valid until the next write, which may move the bytes to a larger array.
     */
    public byte[] array() {
        keeping();
        return buf;
    }

    /** Appends bytes encoded before as they are: a frame's header, fields encoded once and kept. */
    public void writeRaw(byte[] bytes, int from, int to) {
        ensure(to - from);
        System.arraycopy(bytes, from, buf, pos, to - from);
        pos += to - from;
    }

    /** Copies the bytes written so far to {@code target}, without an intermediate array. */
    public void writeTo(OutputStream target) throws IOException {
        keeping();
        target.write(buf, 0, pos);
    }

    /** Forgets what was written, keeping the buffer: the next part starts here. */
    public void reset() {
        keeping();
        pos = 0;
    }

    private void keeping() {
        if (sink != null) {
            throw new IllegalStateException("a streaming output keeps no bytes");
        }
    }

    public void writeTag(int field, int wireType) {
        writeVarint32((field << 3) | wireType);
    }

    public void writeVarint32(int v) {
        ensure(5);
        while ((v & ~0x7F) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    public void writeVarint64(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    /** An int32 field: negative values take ten bytes, as protobuf sign-extends them. */
    public void writeInt32(int field, int v) {
        writeTag(field, VARINT);
        writeVarint64(v);
    }

    public void writeInt64(int field, long v) {
        writeTag(field, VARINT);
        writeVarint64(v);
    }

    public void writeUInt32(int field, int v) {
        writeTag(field, VARINT);
        writeVarint32(v);
    }

    public void writeBool(int field, boolean v) {
        writeTag(field, VARINT);
        ensure(1);
        buf[pos++] = (byte) (v ? 1 : 0);
    }

    public void writeDouble(int field, double v) {
        writeTag(field, FIXED64);
        ensure(8);
        // raw bits, NaN payloads and -0.0 exact (NaNs made canonical only for comparing)
        LONGS.set(buf, pos, canonicalNaNs ? Double.doubleToLongBits(v) : Double.doubleToRawLongBits(v));
        pos += 8;
    }

    public void writeFloat(int field, float v) {
        writeTag(field, FIXED32);
        ensure(4);
        INTS.set(buf, pos, canonicalNaNs ? Float.floatToIntBits(v) : Float.floatToRawIntBits(v));
        pos += 4;
    }

    public void writeString(int field, String v) {
        int n = v.length();
        if (ProtoWriteState.utf8Length(v) == n) {
            // ASCII (no char of two or more UTF-8 bytes): written in place, without an encoded copy
            writeLengthDelimited(field, n);
            ensure(n);
            for (int i = 0; i < n; i++) {
                buf[pos + i] = (byte) v.charAt(i);
            }
            pos += n;
            return;
        }
        byte[] utf8 = v.getBytes(StandardCharsets.UTF_8);
        writeBytes(field, utf8, 0, utf8.length);
    }

    public void writeBytes(int field, byte[] v, int from, int to) {
        writeLengthDelimited(field, to - from);
        ensure(to - from);
        System.arraycopy(v, from, buf, pos, to - from);
        pos += to - from;
    }

    /** The tag and length of a length-delimited field (a message, a packed array) whose body follows. */
    public void writeLengthDelimited(int field, int length) {
        writeTag(field, LENGTH_DELIMITED);
        writeVarint32(length);
    }

    /** {@code values[from..to)} as one packed field; nothing when the range is empty (proto3 writes no empty packed field). */
    public void writePackedDoubles(int field, double[] values, int from, int to) {
        writePacked(field, values, from, to, 8);
    }

    public void writePackedFloats(int field, float[] values, int from, int to) {
        writePacked(field, values, from, to, 4);
    }

    /** A packed sfixed32 field: the raw little-endian ints. */
    public void writePackedSFixed32(int field, int[] values, int from, int to) {
        writePacked(field, values, from, to, 4);
    }

    public void writePackedSFixed64(int field, long[] values, int from, int to) {
        writePacked(field, values, from, to, 8);
    }

    /**
     * A packed field of fixed-width numbers ({@code values} a double, float, int or long array of
     * {@code width}-byte values): bulk copies through a little-endian byte-buffer view, which
     * stores raw bits, so NaN payloads and -0.0 stay exact. A streaming output copies what fits
     * its block, hands the block on, and goes on.
     */
    private void writePacked(int field, Object values, int from, int to, int width) {
        if (from == to) {
            return;
        }
        int n = to - from;
        writeLengthDelimited(field, Math.multiplyExact(n, width));
        while (sink != null && n > (buf.length - pos) / width) {
            int m = (buf.length - pos) / width;
            put(values, from, m, width);
            from += m;
            n -= m;
            flush();
        }
        ensure(n * width);
        put(values, from, n, width);
    }

    private void put(Object values, int from, int n, int width) {
        ByteBuffer le = ByteBuffer.wrap(buf, pos, n * width).slice().order(ByteOrder.LITTLE_ENDIAN);
        if (values instanceof double[] d) {
            le.asDoubleBuffer().put(d, from, n);
            if (canonicalNaNs) {
                for (int i = 0; i < n; i++) {
                    if (Double.isNaN(d[from + i])) {
                        LONGS.set(buf, pos + 8 * i, Double.doubleToLongBits(Double.NaN));
                    }
                }
            }
        } else if (values instanceof float[] f) {
            le.asFloatBuffer().put(f, from, n);
            if (canonicalNaNs) {
                for (int i = 0; i < n; i++) {
                    if (Float.isNaN(f[from + i])) {
                        INTS.set(buf, pos + 4 * i, Float.floatToIntBits(Float.NaN));
                    }
                }
            }
        } else if (values instanceof int[] i) {
            le.asIntBuffer().put(i, from, n);
        } else {
            le.asLongBuffer().put((long[]) values, from, n);
        }
        pos += n * width;
    }

    public void writePackedBools(int field, boolean[] values, int from, int to) {
        if (from == to) {
            return;
        }
        writeLengthDelimited(field, to - from);
        ensure(to - from);
        for (int i = from; i < to; i++) {
            buf[pos++] = (byte) (values[i] ? 1 : 0);
        }
    }

    /** A packed sfixed32 field of schema shorts: each widened to four little-endian bytes. */
    public void writePackedShorts(int field, short[] values, int from, int to) {
        if (from == to) {
            return;
        }
        int n = to - from;
        writeLengthDelimited(field, Math.multiplyExact(n, 4));
        ensure(n * 4);
        for (int i = from; i < to; i++) {
            INTS.set(buf, pos, (int) values[i]);
            pos += 4;
        }
    }

    /** A DateTime message field: seconds, nanos, offset seconds, each written when not zero. */
    public void writeDateTime(int field, java.time.OffsetDateTime v) {
        long seconds = v.toEpochSecond();
        int nanos = v.getNano();
        int offset = v.getOffset().getTotalSeconds();
        writeLengthDelimited(field, (seconds != 0 ? 1 + varint64Size(seconds) : 0) + (nanos != 0 ? 1 + varint64Size(nanos) : 0)
                + (offset != 0 ? 1 + varint64Size(offset) : 0));
        if (seconds != 0) {
            writeInt64(1, seconds);
        }
        if (nanos != 0) {
            writeInt32(2, nanos);
        }
        if (offset != 0) {
            writeInt32(3, offset);
        }
    }

    /** Bytes a varint of {@code v} takes. */
    public static int varint32Size(int v) {
        return v >= 0 ? (38 - Integer.numberOfLeadingZeros(v | 1)) / 7 : 5;
    }

    public static int varint64Size(long v) {
        return (70 - Long.numberOfLeadingZeros(v | 1)) / 7;
    }

    private void ensure(int more) {
        if (buf.length - pos < more && sink != null) {
            flush();
        }
        if (buf.length - pos < more) {
            long wanted = Math.max((long) buf.length * 2, (long) pos + more);
            if (wanted > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("a part over 2 GiB: the codec should have cut the message into parts");
            }
            buf = Arrays.copyOf(buf, (int) wanted);
        }
    }
}

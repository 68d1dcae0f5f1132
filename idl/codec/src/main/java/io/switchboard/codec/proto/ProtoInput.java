package io.switchboard.codec.proto;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads protobuf's wire format from one buffer, refusing what a hostile peer could send: a
 * truncated field, a length past the end of its message, a varint over ten bytes, a group, a
 * string over the limit or not UTF-8 (as protobuf's own proto3 parsers refuse it). Every length is
 * checked against what is left before anything is allocated, so a lying length cannot make the
 * reader allocate more than the input holds.
 *
 * <p>Packed fields are read in either form protobuf allows (packed, or one element per tag), and
 * several packed fields of the same number append, as a protobuf merge of parts does.
 *
 * <p>The input is one array, or a {@link Source} of buffers (a transport's own, say gRPC's network
 * buffers): then tags, lengths and scalars pass through a small window array, refilled as the
 * reader goes, and packed numbers are copied straight from the source's buffers into the value's
 * array. Positions ({@link #beginMessage}, {@link #position}) count from the input's start in
 * both forms.
 */
public final class ProtoInput {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /** The bytes of a part held elsewhere, read once in order: buffers that a transport owns. */
    public interface Source {
        /**
         * The next bytes, at least one while any are left: a buffer whose {@code position()} to
         * {@code limit()} they are. Reading it does not consume them ({@link #skip} does); it is
         * valid until the next {@code skip}.
         */
        ByteBuffer next();

        /** Consumes {@code n} bytes, as many as are left or fewer. */
        void skip(int n);
    }

    /** The window a source input starts with; it grows only for a string or bytes value larger than it. */
    static final int WINDOW_BYTES = 16 << 10;

    /** The input array, or the window over a source's bytes. */
    private byte[] buf;
    private final MessageLimits limits;
    private int pos;
    /** The end of the message being read (an index of buf): the whole input, or a nested message's end. */
    private int limit;
    /** The end of the bytes in buf: the input's end, or what the window holds. */
    private int end;
    /** The input position of buf[0]: 0 for an array, growing as a source's window moves on. */
    private int shift;
    private final Source source;
    /** Bytes the source still holds beyond the window. */
    private int sourceLeft;
    /** Decodes the strings that are not ASCII; made at the first one, reused after. */
    private CharsetDecoder utf8;

    public ProtoInput(byte[] buf, int from, int to, MessageLimits limits) {
        if (from < 0 || to > buf.length || from > to) {
            throw new IndexOutOfBoundsException(from + ".." + to + " of " + buf.length);
        }
        this.buf = buf;
        this.pos = from;
        this.limit = to;
        this.end = to;
        this.limits = limits;
        this.source = null;
    }

    /**
     * Reads the {@code length} bytes of {@code source}, through {@code window} (any array, reused
     * between inputs: {@link #window()} gives back the one in use at the end).
     */
    public ProtoInput(Source source, int length, byte[] window, MessageLimits limits) {
        if (length < 0) {
            throw new IndexOutOfBoundsException("length " + length);
        }
        // a small message needs no more window than its own size: zeroing 16 KiB per small call costs more than it reads
        this.buf = window.length >= 16 ? window : new byte[Math.max(16, Math.min(WINDOW_BYTES, length))];
        this.source = source;
        this.sourceLeft = length;
        this.limit = length;
        this.limits = limits;
    }

    /** The window array of a source input (grown, if a value needed it), for the next input. */
    public byte[] window() {
        return buf;
    }

    /**
     * Makes buf hold {@code n} bytes from pos (the caller checked that the input has them): moves
     * what is left of the window to its start, grows it if needed and reads from the source; all
     * that fits when {@code exact} is false, else only what is missing.
     */
    private void fill(int n, boolean exact) {
        int kept = end - pos;
        if (pos > 0) {
            System.arraycopy(buf, pos, buf, 0, kept);
            shift += pos;
            limit -= pos;
            pos = 0;
            end = kept;
        }
        if (n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(n, Math.min(Integer.MAX_VALUE - 16, buf.length * 2)));
        }
        int want = exact ? n - kept : Math.min(buf.length - end, sourceLeft);
        if (want > sourceLeft) {
            throw WireFormatException.malformed("the input ends inside a field at byte " + (shift + end));
        }
        while (want > 0) {
            ByteBuffer b = source.next();
            int k = Math.min(want, b.remaining());
            if (k <= 0) {
                throw WireFormatException.malformed("the input ends inside a field at byte " + (shift + end));
            }
            b.get(b.position(), buf, end, k);
            source.skip(k);
            end += k;
            sourceLeft -= k;
            want -= k;
        }
    }

    /** Consumes {@code k} bytes of the source directly (the window is empty): the window moves past them. */
    private void passed(int k) {
        source.skip(k);
        sourceLeft -= k;
        shift += k;
        limit -= k;
    }

    /** Empties a consumed window so that bytes can be read from the source directly. */
    private void emptyWindow() {
        shift += pos;
        limit -= pos;
        pos = 0;
        end = 0;
    }

    /** The next field's tag, or 0 at the end of the current message. */
    public int readTag() {
        if (pos == limit) {
            return 0;
        }
        int tag = readVarint32();
        int wireType = tag & 7;
        if (tag >>> 3 == 0 || (wireType != ProtoOutput.VARINT && wireType != ProtoOutput.FIXED64
                && wireType != ProtoOutput.LENGTH_DELIMITED && wireType != ProtoOutput.FIXED32)) {
            throw WireFormatException.malformed("invalid tag " + Integer.toUnsignedString(tag) + " at byte " + (shift + pos));
        }
        return tag;
    }

    public long readVarint64() {
        if (end - pos < 10 && source != null) {
            fill(Math.min(10, Math.min(limit, end + sourceLeft) - pos), false);
        }
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos == limit) {
                throw WireFormatException.malformed("a varint is cut off at byte " + (shift + pos));
            }
            byte b = buf[pos++];
            result |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return result;
            }
        }
        throw WireFormatException.malformed("a varint longer than ten bytes at byte " + (shift + pos));
    }

    /** A varint kept to its low 32 bits, as protobuf reads int32, uint32 and tags. */
    public int readVarint32() {
        return (int) readVarint64();
    }

    public boolean readBool() {
        return readVarint64() != 0;
    }

    public double readDouble() {
        need(8);
        double v = Double.longBitsToDouble((long) LONGS.get(buf, pos));
        pos += 8;
        return v;
    }

    public float readFloat() {
        need(4);
        float v = Float.intBitsToFloat((int) INTS.get(buf, pos));
        pos += 4;
        return v;
    }

    public long readFixed64() {
        need(8);
        long v = (long) LONGS.get(buf, pos);
        pos += 8;
        return v;
    }

    public int readFixed32() {
        need(4);
        int v = (int) INTS.get(buf, pos);
        pos += 4;
        return v;
    }

    /** The length of a length-delimited field, checked against what is left of the message. */
    public int readLength() {
        long length = readVarint64();
        if (length < 0 || length > limit - pos) {
            throw WireFormatException.malformed("a length of " + length + " at byte " + (shift + pos) + " runs past its message ("
                    + (limit - pos) + " bytes left)");
        }
        return (int) length;
    }

    public String readString() {
        return string(readLength());
    }

    /**
     * {@link #readString}, but {@code known} itself when the field holds exactly its characters,
     * all ASCII: a name that comes in every message of a connection (a service's, a method's) is
     * compared in place rather than copied each time.
     */
    public String readString(String known) {
        int length = readLength();
        if (known != null && length == known.length() && length <= limits.maxStringBytes()) {
            need(length);
            int i = 0;
            while (i < length && buf[pos + i] == known.charAt(i)) {   // a byte of UTF-8's many-byte forms is < 0, no char
                i++;
            }
            if (i == length) {
                pos += length;
                return known;
            }
        }
        return string(length);
    }

    private String string(int length) {
        if (length > limits.maxStringBytes()) {
            throw new WireFormatException(WireFormatException.STRING_LIMIT, "a string of " + length
                    + " bytes is over the limit of " + limits.maxStringBytes());
        }
        need(length);
        int stop = pos + length;
        int i = pos;
        while (i < stop && buf[i] >= 0) {
            i++;
        }
        if (i == stop) {   // ASCII, as most strings are: no decoder needed
            String ascii = new String(buf, pos, length, StandardCharsets.ISO_8859_1);
            pos = stop;
            return ascii;
        }
        try {
            if (utf8 == null) {
                utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT);
            }
            CharBuffer chars = utf8.reset().decode(ByteBuffer.wrap(buf, pos, length));
            pos = stop;
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw WireFormatException.malformed("a string at byte " + (shift + pos) + " is not UTF-8");
        }
    }

    public byte[] readBytes() {
        int length = readLength();
        if (length > limits.maxStringBytes()) {
            throw new WireFormatException(WireFormatException.STRING_LIMIT, "a byte array of " + length
                    + " bytes is over the limit of " + limits.maxStringBytes());
        }
        need(length);
        byte[] v = Arrays.copyOfRange(buf, pos, pos + length);
        pos += length;
        return v;
    }

    /** Enters a nested message of {@code length} bytes; returns what {@link #endMessage} needs. */
    public int beginMessage(int length) {
        int outer = limit;
        limit = pos + length;
        return outer + shift;
    }

    /** Leaves a nested message; it must have been read to its end. */
    public void endMessage(int outerLimit) {
        if (pos != limit) {
            throw WireFormatException.malformed("a nested message ends inside a field at byte " + (shift + pos));
        }
        limit = outerLimit - shift;
    }

    /**
     * Appends the doubles of one occurrence of a repeated double field to {@code into[0..count)},
     * growing it as needed; returns the array, the new count in {@code count[0]}.
     */
    public double[] appendDoubles(int tag, double[] into, int[] count) {
        int n;
        if ((tag & 7) == ProtoOutput.LENGTH_DELIMITED) {
            int length = readLength();
            if (length % 8 != 0) {
                throw WireFormatException.malformed("a packed double field of " + length + " bytes");
            }
            n = length / 8;
        } else if ((tag & 7) == ProtoOutput.FIXED64) {
            n = 1;
            need(8);
        } else {
            throw WireFormatException.malformed("a double field with wire type " + (tag & 7));
        }
        double[] out = grow(into, count[0], n);
        getDoubles(out, count[0], n);
        count[0] += n;
        return out;
    }

    /**
     * The number of values in one occurrence of a repeated fixed-width number field, packed or
     * one per tag ({@code single} is the wire type of the unpacked form); the reader is left at
     * the first value.
     */
    int fixedCount(int tag, int single, int width) {
        if ((tag & 7) == ProtoOutput.LENGTH_DELIMITED) {
            int length = readLength();
            if (length % width != 0) {
                throw WireFormatException.malformed("a packed field of " + length + " bytes, not a multiple of " + width);
            }
            return length / width;
        }
        if ((tag & 7) != single) {
            throw WireFormatException.malformed("a repeated number with wire type " + (tag & 7));
        }
        need(width);
        return 1;
    }

    void getDoubles(double[] into, int at, int n) {
        int w = Math.min(n, (end - pos) / 8);
        ByteBuffer.wrap(buf, pos, w * 8).slice().order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(into, at, w);
        pos += w * 8;
        if (w < n) {
            fromSource(into, at + w, n - w, 8);
        }
    }

    void getFloats(float[] into, int at, int n) {
        int w = Math.min(n, (end - pos) / 4);
        ByteBuffer.wrap(buf, pos, w * 4).slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(into, at, w);
        pos += w * 4;
        if (w < n) {
            fromSource(into, at + w, n - w, 4);
        }
    }

    void getInts(int[] into, int at, int n) {
        int w = Math.min(n, (end - pos) / 4);
        ByteBuffer.wrap(buf, pos, w * 4).slice().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(into, at, w);
        pos += w * 4;
        if (w < n) {
            fromSource(into, at + w, n - w, 4);
        }
    }

    void getLongs(long[] into, int at, int n) {
        int w = Math.min(n, (end - pos) / 8);
        ByteBuffer.wrap(buf, pos, w * 8).slice().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(into, at, w);
        pos += w * 8;
        if (w < n) {
            fromSource(into, at + w, n - w, 8);
        }
    }

    /**
     * The rest of a packed run that the window does not hold, {@code n} values of {@code width}
     * bytes (the caller checked the length against the message): a value cut at the window's end
     * is completed through the window, the others are copied from the source's buffers straight
     * into {@code into} (a bulk copy per buffer; little-endian raw bits, so NaN payloads and -0.0
     * stay exact).
     */
    private void fromSource(Object into, int at, int n, int width) {
        if (source == null) {
            throw WireFormatException.malformed("a packed field is cut off at byte " + (shift + pos));
        }
        while (n > 0) {
            if (pos < end) {
                // the window holds part of a value: complete it there and read it there
                fill(width, true);
                getOne(into, at, width);
                at++;
                n--;
                continue;
            }
            emptyWindow();
            if (sourceLeft < width) {
                throw WireFormatException.malformed("a packed field is cut off at byte " + shift);
            }
            ByteBuffer b = source.next();
            int m = Math.min(n, b.remaining() / width);
            if (m == 0) {
                // this buffer ends inside a value: that value goes through the window
                fill(width, true);
                getOne(into, at, width);
                at++;
                n--;
                continue;
            }
            ByteBuffer le = b.slice(b.position(), m * width).order(ByteOrder.LITTLE_ENDIAN);
            if (into instanceof double[] d) {
                le.asDoubleBuffer().get(d, at, m);
            } else if (into instanceof float[] f) {
                le.asFloatBuffer().get(f, at, m);
            } else if (into instanceof int[] i) {
                le.asIntBuffer().get(i, at, m);
            } else {
                le.asLongBuffer().get((long[]) into, at, m);
            }
            passed(m * width);
            at += m;
            n -= m;
        }
    }

    /** One value of a packed run from the window, which holds it. */
    private void getOne(Object into, int at, int width) {
        if (into instanceof double[] d) {
            d[at] = Double.longBitsToDouble((long) LONGS.get(buf, pos));
        } else if (into instanceof float[] f) {
            f[at] = Float.intBitsToFloat((int) INTS.get(buf, pos));
        } else if (into instanceof int[] i) {
            i[at] = (int) INTS.get(buf, pos);
        } else {
            ((long[]) into)[at] = (long) LONGS.get(buf, pos);
        }
        pos += width;
    }

    /** The end of a packed varint field's values, or -1 for one unpacked value (wire type varint). */
    int varintsEnd(int tag) {
        if ((tag & 7) == ProtoOutput.LENGTH_DELIMITED) {
            int length = readLength();
            return shift + pos + length;
        }
        if ((tag & 7) != ProtoOutput.VARINT) {
            throw WireFormatException.malformed("a repeated varint with wire type " + (tag & 7));
        }
        return -1;
    }

    int position() {
        return shift + pos;
    }

    /** Checks that a packed varint field ended exactly at its length. */
    void endVarints(int end) {
        if (shift + pos != end) {
            throw WireFormatException.malformed("a packed field's last varint runs past its length");
        }
    }

    /** Skips a field this reader does not know: protobuf's rule for fields added by a newer schema. */
    public void skipField(int tag) {
        switch (tag & 7) {
            case ProtoOutput.VARINT -> readVarint64();
            case ProtoOutput.FIXED64 -> skip(8);
            case ProtoOutput.FIXED32 -> skip(4);
            case ProtoOutput.LENGTH_DELIMITED -> skip(readLength());
            default -> throw WireFormatException.malformed("wire type " + (tag & 7));
        }
    }

    public boolean atEnd() {
        return pos == limit;
    }

    private void skip(int n) {
        if (limit - pos < n) {
            throw WireFormatException.malformed("a field is cut off at byte " + (shift + pos));
        }
        if (end - pos >= n) {
            pos += n;
            return;
        }
        // a source input: past the window, then past the rest in the source
        n -= end - pos;
        pos = end;
        emptyWindow();
        while (n > 0) {
            int k = Math.min(n, source.next().remaining());
            if (k <= 0) {
                throw WireFormatException.malformed("the input ends inside a field at byte " + shift);
            }
            passed(k);
            n -= k;
        }
    }

    /** Checks that the message holds {@code n} more bytes, and has them in buf. */
    private void need(int n) {
        if (limit - pos < n) {
            throw WireFormatException.malformed("a field is cut off at byte " + (shift + pos));
        }
        if (end - pos < n) {
            fill(n, false);
        }
    }

    private static double[] grow(double[] a, int used, int more) {
        long wanted = (long) used + more;
        if (wanted > Integer.MAX_VALUE - 16) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, "more than 2^31 elements in one list");
        }
        if (a.length >= wanted) {
            return a;
        }
        return Arrays.copyOf(a, (int) Math.max(wanted, Math.min(Integer.MAX_VALUE - 16, (long) a.length * 2)));
    }
}

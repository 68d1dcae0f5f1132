package io.switchboard.codec.proto;

import io.switchboard.codec.binary.BinaryLimits;
import io.switchboard.codec.binary.WireFormatException;
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
 */
public final class ProtoInput {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private final byte[] buf;
    private final BinaryLimits limits;
    private int pos;
    /** The end of the message being read: the whole input, or a nested message's end. */
    private int limit;
    /** Decodes the strings that are not ASCII; made at the first one, reused after. */
    private CharsetDecoder utf8;

    public ProtoInput(byte[] buf, int from, int to, BinaryLimits limits) {
        if (from < 0 || to > buf.length || from > to) {
            throw new IndexOutOfBoundsException(from + ".." + to + " of " + buf.length);
        }
        this.buf = buf;
        this.pos = from;
        this.limit = to;
        this.limits = limits;
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
            throw WireFormatException.malformed("invalid tag " + Integer.toUnsignedString(tag) + " at byte " + pos);
        }
        return tag;
    }

    public long readVarint64() {
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos == limit) {
                throw WireFormatException.malformed("a varint is cut off at byte " + pos);
            }
            byte b = buf[pos++];
            result |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return result;
            }
        }
        throw WireFormatException.malformed("a varint longer than ten bytes at byte " + pos);
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
            throw WireFormatException.malformed("a length of " + length + " at byte " + pos + " runs past its message ("
                    + (limit - pos) + " bytes left)");
        }
        return (int) length;
    }

    public String readString() {
        int length = readLength();
        if (length > limits.maxStringBytes()) {
            throw new WireFormatException(WireFormatException.STRING_LIMIT, "a string of " + length
                    + " bytes is over the limit of " + limits.maxStringBytes());
        }
        int end = pos + length;
        int i = pos;
        while (i < end && buf[i] >= 0) {
            i++;
        }
        if (i == end) {   // ASCII, as most strings are: no decoder needed
            String ascii = new String(buf, pos, length, StandardCharsets.ISO_8859_1);
            pos = end;
            return ascii;
        }
        try {
            if (utf8 == null) {
                utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT);
            }
            CharBuffer chars = utf8.reset().decode(ByteBuffer.wrap(buf, pos, length));
            pos = end;
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw WireFormatException.malformed("a string at byte " + pos + " is not UTF-8");
        }
    }

    public byte[] readBytes() {
        int length = readLength();
        if (length > limits.maxStringBytes()) {
            throw new WireFormatException(WireFormatException.STRING_LIMIT, "a byte array of " + length
                    + " bytes is over the limit of " + limits.maxStringBytes());
        }
        byte[] v = Arrays.copyOfRange(buf, pos, pos + length);
        pos += length;
        return v;
    }

    /** Enters a nested message of {@code length} bytes; returns what {@link #endMessage} needs. */
    public int beginMessage(int length) {
        int outer = limit;
        limit = pos + length;
        return outer;
    }

    /** Leaves a nested message; it must have been read to its end. */
    public void endMessage(int outerLimit) {
        if (pos != limit) {
            throw WireFormatException.malformed("a nested message ends inside a field at byte " + pos);
        }
        limit = outerLimit;
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
        ByteBuffer.wrap(buf, pos, n * 8).slice().order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(out, count[0], n);
        pos += n * 8;
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
        ByteBuffer.wrap(buf, pos, n * 8).slice().order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(into, at, n);
        pos += n * 8;
    }

    void getFloats(float[] into, int at, int n) {
        ByteBuffer.wrap(buf, pos, n * 4).slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(into, at, n);
        pos += n * 4;
    }

    void getInts(int[] into, int at, int n) {
        ByteBuffer.wrap(buf, pos, n * 4).slice().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(into, at, n);
        pos += n * 4;
    }

    void getLongs(long[] into, int at, int n) {
        ByteBuffer.wrap(buf, pos, n * 8).slice().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(into, at, n);
        pos += n * 8;
    }

    /** The end of a packed varint field's values, or -1 for one unpacked value (wire type varint). */
    int varintsEnd(int tag) {
        if ((tag & 7) == ProtoOutput.LENGTH_DELIMITED) {
            int length = readLength();
            return pos + length;
        }
        if ((tag & 7) != ProtoOutput.VARINT) {
            throw WireFormatException.malformed("a repeated varint with wire type " + (tag & 7));
        }
        return -1;
    }

    int position() {
        return pos;
    }

    /** Checks that a packed varint field ended exactly at its length. */
    void endVarints(int end) {
        if (pos != end) {
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
        need(n);
        pos += n;
    }

    private void need(int n) {
        if (limit - pos < n) {
            throw WireFormatException.malformed("a field is cut off at byte " + pos);
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

package io.switchboard.codec.binary;

import io.switchboard.idl.runtime.XsdValues;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads one message in the packed binary format ({@link WireFormat}) from a sequence of chunks,
 * as they arrive: a value may span chunks, and a packed array is copied straight from each chunk
 * into the result array. Strict: a wrong tag, a truncated message, a reference outside the node
 * table or invalid UTF-8 ends the read with a {@link WireFormatException} that names the field;
 * every count is checked against the limits before anything is allocated.
 *
 * <pre>{@code
 * BinaryReader in = new BinaryReader(codec, chunks::poll, BinaryLimits.of(64 << 20, 2_000_000));
 * EchoList request = in.readMessage(EchoList.class);
 * in.expectEnd();
 * }</pre>
 */
public final class BinaryReader {
    /** Where the chunks come from; {@code next} blocks until one is there and returns null at the end. */
    @FunctionalInterface
    public interface Source {
        ByteBuffer next();

        /**
         * The size of the whole message in bytes, once the source knows it (a chunked stream
         * announces it in its first chunk), else -1. The reader then refuses a count that the rest
         * of the message cannot hold before allocating for it, so a few bytes cannot make it
         * allocate up to the message size limit.
         */
        default long knownSize() {
            return -1;
        }
    }

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    private static final Object[] NO_NODES = {};

    private final BinaryCodec codec;
    private final Source source;
    private final BinaryLimits limits;
    private ByteBuffer buf = EMPTY;
    private long fetched;
    private boolean ended;
    private Object[] nodes = NO_NODES;
    private CharsetDecoder utf8;
    private int listDepth;

    public BinaryReader(BinaryCodec codec, Source source, BinaryLimits limits) {
        this.codec = codec;
        this.source = source;
        this.limits = limits;
    }

    /** Decodes a whole message from one array; for tests and small messages. */
    public static <T> T fromBytes(BinaryCodec codec, byte[] bytes, BinaryLimits limits, Class<T> type) {
        return fromBytes(codec, bytes, limits, null, type);
    }

    /** Decodes one message of a named element (see {@link #readMessage(String, Class)}); null names none. */
    public static <T> T fromBytes(BinaryCodec codec, byte[] bytes, BinaryLimits limits, String element, Class<T> type) {
        BinaryReader in = new BinaryReader(codec, new Source() {
            private ByteBuffer once = ByteBuffer.wrap(bytes);

            @Override
            public ByteBuffer next() {
                ByteBuffer b = once;
                once = null;
                return b;
            }

            @Override
            public long knownSize() {
                return bytes.length;
            }
        }, limits);
        T message = element == null ? in.readMessage(type) : in.readMessage(element, type);
        in.expectEnd();
        return message;
    }

    public <T> T readMessage(Class<T> type) {
        return type.cast(codec.readMessage(this, type));
    }

    /** Reads the message of a named element; see {@link BinaryCodec#readMessage(BinaryReader, String, Class)}. */
    public <T> T readMessage(String element, Class<T> type) {
        return type.cast(codec.readMessage(this, element, type));
    }

    /** Bytes consumed so far. */
    public long position() {
        return fetched - buf.remaining();
    }

    /** Fails unless the message ends here. */
    public void expectEnd() {
        if (buf.hasRemaining() || fill()) {
            long extra = buf.remaining();
            throw WireFormatException.malformed(extra + " unexpected bytes after the message, at byte " + position());
        }
    }

    /** The first byte of a response: {@link WireFormat#RESPONSE} or {@link WireFormat#DECLARED_FAULT}. */
    public int readKind() {
        return u8("response kind");
    }

    // ---- the node table

    /** Reads the node table: creates every node first, then fills them, so references need no fix-ups. */
    public void readNodes() {
        long count = readVarint("node count");
        if (count > limits.maxNodes()) {
            throw new WireFormatException(WireFormatException.NODE_LIMIT, "message declares " + count
                    + " linked nodes, more than the limit of " + limits.maxNodes());
        }
        checkBudget(count, 1, "node table");
        Object[] table = new Object[(int) count];
        for (int i = 0; i < table.length; i++) {
            long type = readVarint("node type");
            Object node = type > Integer.MAX_VALUE ? null : codec.newNode((int) type);
            if (node == null) {
                throw WireFormatException.malformed("node " + i + " has unknown node type " + type);
            }
            table[i] = node;
        }
        nodes = table;
        for (int i = 0; i < table.length; i++) {
            try {
                codec.readNode(this, table[i]);
            } catch (WireFormatException e) {
                throw e.inNode(i);
            }
        }
    }

    /**
     * A value of a required field that is not nillable: null (NULL on the wire) is refused, as an
     * XML reader refuses the element missing or nil. Generated codecs call it for such fields of
     * reference type (strings, bytes, date-times, structs, lists, references).
     */
    public <T> T required(T value, String field) {
        if (value == null) {
            throw WireFormatException.malformed(field, "required and not nillable, but the message says null");
        }
        return value;
    }

    public <T> T readRef(String field, Class<T> type) {
        int t = tag();
        if (t == WireFormat.NULL) {
            return null;
        }
        expect(t, WireFormat.REF, field);
        long i = readVarint(field);
        if (i >= nodes.length) {
            throw WireFormatException.malformed(field, "reference to node " + i + ", but the message has "
                    + nodes.length + " nodes");
        }
        Object node = nodes[(int) i];
        if (!type.isInstance(node)) {
            throw WireFormatException.malformed(field, "node " + i + " is a "
                    + node.getClass().getSimpleName() + ", expected " + type.getSimpleName());
        }
        return type.cast(node);
    }

    /** A list of references to linked nodes; a NULL entry is refused (see {@link BinaryWriter#writeRefs(List, String)}). */
    public <T> List<T> readRefs(String field, Class<T> type) {
        return readList(field, (in, f) -> required(in.readRef(f, type), f));
    }

    /** True at a STRUCT tag (the caller reads the fields), false at NULL. */
    public boolean beginStruct(String field) {
        int t = tag();
        if (t == WireFormat.NULL) {
            return false;
        }
        expect(t, WireFormat.STRUCT, field);
        return true;
    }

    /** Refuses an n-d array whose shape does not match its values; generated codecs call it. */
    public void checkNdArray(io.switchboard.idl.runtime.NdArray array, String field) {
        String problem = io.switchboard.codec.NdArrays.inconsistency(array);
        if (problem != null) {
            throw WireFormatException.malformed(field, "n-d array " + problem);
        }
    }

    /**
     * -1 at NULL; at CHOICES the element count, one nesting level deeper. Nesting past the limit
     * is refused before anything of the deeper list is read, so the generated reader's recursion
     * is bounded by the limit whatever the input. The caller reads each element with
     * {@link #readAlternative} and a value, then calls {@link #endChoices()}.
     */
    public int beginChoices(String field) {
        int t = tag();
        if (t == WireFormat.NULL) {
            return -1;
        }
        expect(t, WireFormat.CHOICES, field);
        if (++listDepth > limits.maxListDepth()) {
            throw new WireFormatException(WireFormatException.DEPTH_LIMIT, field,
                    "heterogeneous lists nested deeper than the limit of " + limits.maxListDepth() + " levels");
        }
        // every element takes at least two bytes: its alternative and a tag
        return checkBudget(readVarint(field), 2, field);
    }

    public void endChoices() {
        listDepth--;
    }

    /** The alternative number of the next list element, refused unless below {@code alternatives}. */
    public int readAlternative(String field, int alternatives) {
        long a = readVarint(field);
        if (a >= alternatives) {
            throw WireFormatException.malformed(field, "alternative " + a + " of a list type that has "
                    + alternatives);
        }
        return (int) a;
    }

    /** A list element, refused when the message says null: heterogeneous lists hold no nulls. */
    public <T> T element(T value, String field) {
        if (value == null) {
            throw WireFormatException.malformed(field, "null element in a heterogeneous list");
        }
        return value;
    }

    public <T> List<T> readList(String field, BinaryCodec.ValueReader<T> element) {
        int t = tag();
        if (t == WireFormat.NULL) {
            return null;
        }
        expect(t, WireFormat.LIST, field);
        int count = checkBudget(readVarint(field), 1, field);
        List<T> list = new ArrayList<>(Math.min(count, 1024));
        for (int i = 0; i < count; i++) {
            list.add(element.read(this, field));
        }
        return list;
    }

    // ---- scalars

    public boolean readBoolean(String field) {
        expectRequired(tag(), WireFormat.BOOL, field);
        return bool(field);
    }

    public Boolean readBooleanOrNull(String field) {
        return present(WireFormat.BOOL, field) ? bool(field) : null;
    }

    public byte readByte(String field) {
        expectRequired(tag(), WireFormat.BYTE, field);
        return (byte) u8(field);
    }

    public Byte readByteOrNull(String field) {
        return present(WireFormat.BYTE, field) ? (byte) u8(field) : null;
    }

    public short readShort(String field) {
        expectRequired(tag(), WireFormat.SHORT, field);
        return rawShort(field);
    }

    public Short readShortOrNull(String field) {
        return present(WireFormat.SHORT, field) ? rawShort(field) : null;
    }

    public int readInt(String field) {
        expectRequired(tag(), WireFormat.INT, field);
        return rawInt(field);
    }

    public Integer readIntOrNull(String field) {
        return present(WireFormat.INT, field) ? rawInt(field) : null;
    }

    public long readLong(String field) {
        expectRequired(tag(), WireFormat.LONG, field);
        return rawLong(field);
    }

    public Long readLongOrNull(String field) {
        return present(WireFormat.LONG, field) ? rawLong(field) : null;
    }

    public float readFloat(String field) {
        expectRequired(tag(), WireFormat.FLOAT, field);
        return Float.intBitsToFloat(rawInt(field));
    }

    public Float readFloatOrNull(String field) {
        return present(WireFormat.FLOAT, field) ? Float.intBitsToFloat(rawInt(field)) : null;
    }

    public double readDouble(String field) {
        expectRequired(tag(), WireFormat.DOUBLE, field);
        return Double.longBitsToDouble(rawLong(field));
    }

    public Double readDoubleOrNull(String field) {
        return present(WireFormat.DOUBLE, field) ? Double.longBitsToDouble(rawLong(field)) : null;
    }

    public String readString(String field) {
        if (!present(WireFormat.STRING, field)) {
            return null;
        }
        int length = lengthOf(field);
        if (buf.remaining() >= length && buf.hasArray()) {
            String s = decodeUtf8(buf.array(), buf.arrayOffset() + buf.position(), length, field);
            buf.position(buf.position() + length);
            return s;
        }
        byte[] bytes = new byte[length];
        readFully(bytes, field);
        return decodeUtf8(bytes, 0, length, field);
    }

    public byte[] readBytes(String field) {
        if (!present(WireFormat.BYTES, field)) {
            return null;
        }
        byte[] bytes = new byte[lengthOf(field)];
        readFully(bytes, field);
        return bytes;
    }

    public OffsetDateTime readDateTime(String field) {
        if (!present(WireFormat.DATE_TIME, field)) {
            return null;
        }
        long seconds = rawLong(field);
        int nanos = rawInt(field);
        int offset = rawInt(field);
        try {
            if (nanos < 0 || nanos > 999_999_999) {
                throw new DateTimeException("nanoseconds " + nanos);
            }
            OffsetDateTime v = OffsetDateTime.ofInstant(Instant.ofEpochSecond(seconds, nanos),
                    ZoneOffset.ofTotalSeconds(offset));
            String problem = XsdValues.dateTimeProblem(v);
            if (problem != null) {
                throw new DateTimeException(problem);
            }
            return v;
        } catch (DateTimeException e) {
            throw WireFormatException.malformed(field, "not a date-time: " + e.getMessage());
        }
    }

    public List<String> readStrings(String field) {
        return readList(field, BinaryReader::readString);
    }

    public List<byte[]> readBytesList(String field) {
        return readList(field, BinaryReader::readBytes);
    }

    public List<OffsetDateTime> readDateTimes(String field) {
        return readList(field, BinaryReader::readDateTime);
    }

    // ---- packed arrays

    public boolean[] readBooleans(String field) {
        if (!present(WireFormat.PACKED | WireFormat.BOOL, field)) {
            return null;
        }
        boolean[] v = new boolean[checkBudget(readVarint(field), 1, field)];
        for (int i = 0; i < v.length; i++) {
            v[i] = bool(field);
        }
        return v;
    }

    public byte[] readPackedBytes(String field) {
        if (!present(WireFormat.PACKED | WireFormat.BYTE, field)) {
            return null;
        }
        byte[] v = new byte[checkBudget(readVarint(field), 1, field)];
        readFully(v, field);
        return v;
    }

    public short[] readShorts(String field) {
        if (!present(WireFormat.PACKED | WireFormat.SHORT, field)) {
            return null;
        }
        short[] v = new short[checkBudget(readVarint(field), 2, field)];
        int at = 0;
        while (at < v.length) {
            int n = Math.min(v.length - at, available(field) / 2);
            if (n == 0) {
                v[at++] = rawShort(field);
                continue;
            }
            buf.asShortBuffer().get(v, at, n);
            buf.position(buf.position() + n * 2);
            at += n;
        }
        return v;
    }

    public int[] readInts(String field) {
        if (!present(WireFormat.PACKED | WireFormat.INT, field)) {
            return null;
        }
        int[] v = new int[checkBudget(readVarint(field), 4, field)];
        int at = 0;
        while (at < v.length) {
            int n = Math.min(v.length - at, available(field) / 4);
            if (n == 0) {
                v[at++] = rawInt(field);
                continue;
            }
            buf.asIntBuffer().get(v, at, n);
            buf.position(buf.position() + n * 4);
            at += n;
        }
        return v;
    }

    public long[] readLongs(String field) {
        if (!present(WireFormat.PACKED | WireFormat.LONG, field)) {
            return null;
        }
        long[] v = new long[checkBudget(readVarint(field), 8, field)];
        int at = 0;
        while (at < v.length) {
            int n = Math.min(v.length - at, available(field) / 8);
            if (n == 0) {
                v[at++] = rawLong(field);
                continue;
            }
            buf.asLongBuffer().get(v, at, n);
            buf.position(buf.position() + n * 8);
            at += n;
        }
        return v;
    }

    public float[] readFloats(String field) {
        if (!present(WireFormat.PACKED | WireFormat.FLOAT, field)) {
            return null;
        }
        float[] v = new float[checkBudget(readVarint(field), 4, field)];
        int at = 0;
        while (at < v.length) {
            int n = Math.min(v.length - at, available(field) / 4);
            if (n == 0) {
                v[at++] = Float.intBitsToFloat(rawInt(field));
                continue;
            }
            buf.asFloatBuffer().get(v, at, n);
            buf.position(buf.position() + n * 4);
            at += n;
        }
        return v;
    }

    public double[] readDoubles(String field) {
        if (!present(WireFormat.PACKED | WireFormat.DOUBLE, field)) {
            return null;
        }
        double[] v = new double[checkBudget(readVarint(field), 8, field)];
        int at = 0;
        while (at < v.length) {
            int n = Math.min(v.length - at, available(field) / 8);
            if (n == 0) {
                // a value split between two chunks
                v[at++] = Double.longBitsToDouble(rawLong(field));
                continue;
            }
            buf.asDoubleBuffer().get(v, at, n);
            buf.position(buf.position() + n * 8);
            at += n;
        }
        return v;
    }

    // ---- primitives of the format

    public long readVarint(String field) {
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = u8(field);
            result |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                if (result < 0) {
                    break;
                }
                return result;
            }
        }
        throw WireFormatException.malformed(field, "malformed varint at byte " + position());
    }

    private int tag() {
        if (!buf.hasRemaining() && !fill()) {
            throw WireFormatException.malformed("truncated message: it ends at byte " + position() + " where a field was expected");
        }
        return buf.get() & 0xFF;
    }

    private boolean present(int expected, String field) {
        int t = tag();
        if (t == WireFormat.NULL) {
            return false;
        }
        expect(t, expected, field);
        return true;
    }

    private void expect(int tag, int expected, String field) {
        if (tag != expected) {
            throw WireFormatException.malformed(field, "expected tag " + WireFormat.tagName(expected)
                    + ", got " + WireFormat.tagName(tag) + " at byte " + (position() - 1));
        }
    }

    private void expectRequired(int tag, int expected, String field) {
        if (tag == WireFormat.NULL) {
            throw WireFormatException.malformed(field, "required, but the message says null");
        }
        expect(tag, expected, field);
    }

    private boolean bool(String field) {
        int b = u8(field);
        if (b > 1) {
            throw WireFormatException.malformed(field, "boolean byte " + b + " is neither 0 nor 1");
        }
        return b == 1;
    }

    private int u8(String field) {
        if (!buf.hasRemaining() && !fill()) {
            throw truncated(field);
        }
        return buf.get() & 0xFF;
    }

    private short rawShort(String field) {
        if (buf.remaining() >= 2) {
            return buf.getShort();
        }
        return (short) (u8(field) | u8(field) << 8);
    }

    private int rawInt(String field) {
        if (buf.remaining() >= 4) {
            return buf.getInt();
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            v |= u8(field) << (8 * i);
        }
        return v;
    }

    private long rawLong(String field) {
        if (buf.remaining() >= 8) {
            return buf.getLong();
        }
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v |= (long) u8(field) << (8 * i);
        }
        return v;
    }

    /** Bytes left in the current chunk, fetching the next one if this one is used up. */
    private int available(String field) {
        if (!buf.hasRemaining() && !fill()) {
            throw truncated(field);
        }
        return buf.remaining();
    }

    private void readFully(byte[] dst, String field) {
        int at = 0;
        while (at < dst.length) {
            int n = Math.min(dst.length - at, available(field));
            buf.get(dst, at, n);
            at += n;
        }
    }

    private int lengthOf(String field) {
        long length = readVarint(field);
        if (length > limits.maxStringBytes()) {
            throw new WireFormatException(WireFormatException.STRING_LIMIT, field, length
                    + " bytes, more than the limit of " + limits.maxStringBytes() + " for one string or byte array");
        }
        return checkBudget(length, 1, field);
    }

    /**
     * A count of elements of {@code width} bytes that the rest of the message can hold, as an int:
     * checked against the size limit and, once the source knows it, against the message's own
     * size, so that a count with no bytes behind it is refused before anything is allocated.
     */
    private int checkBudget(long count, int width, String field) {
        long budget = limits.maxMessageBytes() - position();
        if (count > Integer.MAX_VALUE - 16 || count * width > budget) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, field, count
                    + " elements of " + width + " bytes exceed the message size limit of " + limits.maxMessageBytes()
                    + " bytes");
        }
        long size = source.knownSize();
        if (size >= 0 && count * width > size - position()) {
            throw WireFormatException.malformed(field, "" + count + " elements of at least " + width
                    + " bytes do not fit in the " + Math.max(0, size - position()) + " bytes left of the message");
        }
        return (int) count;
    }

    private boolean fill() {
        while (!ended) {
            ByteBuffer next = source.next();
            if (next == null) {
                ended = true;
                buf = EMPTY;
                return false;
            }
            if (!next.hasRemaining()) {
                continue;
            }
            fetched += next.remaining();
            if (fetched > limits.maxMessageBytes()) {
                throw new WireFormatException(WireFormatException.SIZE_LIMIT, "message is larger than the limit of "
                        + limits.maxMessageBytes() + " bytes");
            }
            buf = next.order(ByteOrder.LITTLE_ENDIAN);
            return true;
        }
        return false;
    }

    private WireFormatException truncated(String field) {
        return WireFormatException.malformed("truncated message: it ends at byte " + position() + " inside field " + field);
    }

    /**
     * UTF-8 into a string that {@code xs:string} can hold ({@link XsdValues}): invalid UTF-8 (which
     * includes encoded surrogates) and characters XML cannot carry are refused, so a string that
     * arrives over gRPC could also have arrived over SOAP.
     */
    private String decodeUtf8(byte[] bytes, int offset, int length, String field) {
        boolean ascii = true;
        for (int i = offset, end = offset + length; i < end; i++) {
            byte b = bytes[i];
            if (b < 0x20) {
                if (b < 0) {
                    ascii = false;
                    break;
                }
                if (b != '\t' && b != '\n' && b != '\r') {
                    throw WireFormatException.malformed(field, String.format(
                            "control character U+%04X at index %d, which a string may not hold", b, i - offset));
                }
            }
        }
        if (ascii) {
            return new String(bytes, offset, length, StandardCharsets.ISO_8859_1);
        }
        if (utf8 == null) {
            utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT);
        }
        try {
            CharBuffer chars = utf8.reset().decode(ByteBuffer.wrap(bytes, offset, length));
            String s = chars.toString();
            String problem = XsdValues.stringProblem(s);
            if (problem != null) {
                throw WireFormatException.malformed(field, problem);
            }
            return s;
        } catch (CharacterCodingException e) {
            throw WireFormatException.malformed(field, "string is not valid UTF-8");
        }
    }
}

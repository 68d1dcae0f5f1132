package io.switchboard.codec.binary;

import io.switchboard.idl.runtime.XsdValues;
import io.switchboard.idl.runtime.GraphHolder;
import io.switchboard.idl.runtime.HeterogeneousList;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes one message in the packed binary format ({@link WireFormat}) into a list of
 * {@link Segment}s. Small values are copied into blocks; a large primitive array is not copied at
 * all: its segment refers to the caller's array and its bytes are produced only when a protocol
 * copies the segment into an outgoing chunk, so the extra memory of sending stays bounded.
 *
 * <p>Generated codecs call the {@code writeX} methods; each writes a tag and a payload, and the
 * boxed overloads write {@link WireFormat#NULL} for null.
 *
 * <pre>{@code
 * BinaryWriter out = new BinaryWriter(codec, maxNodes);
 * codec.writeMessage(out, request);
 * for (BinaryWriter.Segment s : out.segments()) { ... }
 * }</pre>
 */
public final class BinaryWriter {
    /** Arrays with at least this many bytes are referenced by a segment instead of copied. */
    static final int BIG_ARRAY_BYTES = 32 << 10;
    private static final int FIRST_BLOCK = 512;
    private static final int MAX_BLOCK = 256 << 10;

    private final BinaryCodec codec;
    private final int maxNodes;
    /** A writer that only checks: it walks and refuses as an encoder does, and keeps no bytes ({@link #check}). */
    private final boolean discard;
    private final List<Segment> segments = new ArrayList<>();
    private ByteBuffer buf = ByteBuffer.allocate(FIRST_BLOCK).order(ByteOrder.LITTLE_ENDIAN);
    private long flushed;
    private IdentityIndex nodeIndex;
    private List<Object> nodeList;
    /** Where the next reference most likely points: one past the last one (true of every tree written breadth first). */
    private int nextRefGuess;
    private int listDepth;

    public BinaryWriter(BinaryCodec codec, int maxNodes) {
        this(codec, maxNodes, false);
    }

    private BinaryWriter(BinaryCodec codec, int maxNodes, boolean discard) {
        this.codec = codec;
        this.maxNodes = maxNodes;
        this.discard = discard;
    }

    /**
     * Refuses {@code message} exactly as encoding it would (a {@link WireFormatException} naming
     * the field: a lone surrogate, a required field that is null, a date-time no protocol can
     * carry, a bad heterogeneous list or n-d array, too many linked nodes) without keeping any of
     * its bytes: primitive arrays are not even read. Protocols that write another form (SOAP's XML)
     * call it before they send a byte, so that every protocol refuses the same values, up front.
     */
    public static void check(BinaryCodec codec, Object message, int maxNodes) {
        codec.writeMessage(new BinaryWriter(codec, maxNodes, true), message);
    }

    /** Encodes one message into a byte array; for tests and small messages. */
    public static byte[] toBytes(BinaryCodec codec, Object message, int maxNodes) {
        BinaryWriter out = new BinaryWriter(codec, maxNodes);
        codec.writeMessage(out, message);
        return out.toByteArray();
    }

    /** The message as written so far, as segments; the writer must not be used afterwards. */
    public List<Segment> segments() {
        flushBlock(false);
        return segments;
    }

    /** Bytes written so far. */
    public long size() {
        return flushed + buf.position();
    }

    public byte[] toByteArray() {
        long total = size();
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("message of " + total + " bytes does not fit one array");
        }
        byte[] out = new byte[(int) total];
        int at = 0;
        for (Segment s : segments()) {
            long from = 0;
            while (from < s.byteLength()) {
                int n = s.copyTo(out, at, from, out.length - at);
                at += n;
                from += n;
            }
        }
        return out;
    }

    // ---- the node table

    /**
     * Collects every linked node reachable from {@code root}, breadth first and without recursion,
     * and writes the node table: count, node types, then each node's fields. Null writes an empty
     * table.
     */
    public void writeNodes(GraphHolder root) {
        if (root == null) {
            writeVarint(0);
            return;
        }
        List<Object> nodes = new ArrayList<>();
        IdentityIndex index = IdentityIndex.collect(root, maxNodes, nodes);
        nodeIndex = index;
        nodeList = nodes;
        nextRefGuess = 1;
        writeVarint(nodes.size());
        for (Object node : nodes) {
            writeVarint(codec.nodeType(node));
        }
        for (Object node : nodes) {
            codec.writeNode(this, node);
        }
    }

    public void writeRef(Object node) {
        if (node == null) {
            tag(WireFormat.NULL);
            return;
        }
        int i;
        if (nodeList != null && nextRefGuess < nodeList.size() && nodeList.get(nextRefGuess) == node) {
            i = nextRefGuess;   // a list's or a tree's next node: no hash lookup, whose cache misses were a third of encoding
        } else {
            i = nodeIndex == null ? -1 : nodeIndex.indexOf(node);
        }
        nextRefGuess = i + 1;
        if (i < 0) {
            throw new IllegalStateException("linked node " + node.getClass().getSimpleName()
                    + " is not in the message's node table");
        }
        tag(WireFormat.REF);
        writeVarint(i);
    }

    public void writeRefs(List<?> nodes) {
        writeRefs(nodes, null);
    }

    /**
     * A list of references to linked nodes. It holds no nulls: SOAP's form of such a list (JAXB's
     * {@code IDREF}s) cannot say a nil entry, so no protocol takes one.
     */
    public void writeRefs(List<?> nodes, String field) {
        writeList(nodes, (out, node) -> {
            if (node == null) {
                throw WireFormatException.malformed(field == null ? "(a list of references)" : field,
                        "a list of linked nodes holds no nulls");
            }
            out.writeRef(node);
        });
    }

    /** Writes NULL and returns false for null; otherwise writes STRUCT, and the caller writes the fields. */
    public boolean beginStruct(Object value) {
        tag(value == null ? WireFormat.NULL : WireFormat.STRUCT);
        return value != null;
    }

    /**
     * Refuses an n-d array whose shape does not match its values before any of it is written, so
     * a receiver never sees one; generated codecs call it for {@code <sb:ndarray/>} types.
     */
    public void checkNdArray(io.switchboard.idl.runtime.NdArray array, String type) {
        String problem = io.switchboard.codec.NdArrays.inconsistency(array);
        if (problem != null) {
            // named by its type: the writer of a type does not know which field holds the value
            throw WireFormatException.malformed(type, "n-d array " + type + ": " + problem);
        }
    }

    /**
     * Writes NULL and returns false for null; otherwise CHOICES and the element count, one nesting
     * level deeper: a list nested deeper than {@link HeterogeneousList#MAX_DEPTH} (or one that
     * holds itself) is refused before it is sent. The caller writes each element's alternative
     * and value, then calls {@link #endChoices()}.
     */
    public boolean beginChoices(HeterogeneousList list) {
        if (list == null) {
            tag(WireFormat.NULL);
            return false;
        }
        if (++listDepth > HeterogeneousList.MAX_DEPTH) {
            throw new WireFormatException(WireFormatException.DEPTH_LIMIT, "heterogeneous list "
                    + list.typeName() + " nests deeper than " + HeterogeneousList.MAX_DEPTH + " levels");
        }
        tag(WireFormat.CHOICES);
        writeVarint(list.getItems().size());
        return true;
    }

    public void endChoices() {
        listDepth--;
    }

    /** The refusal of a list element that no alternative of its list type allows (null included). */
    public WireFormatException notAnAlternative(Object element, HeterogeneousList list) {
        return WireFormatException.malformed("heterogeneous list " + list.typeName() + " holds "
                + (element == null ? "a null element; such lists hold no nulls"
                        : "a " + element.getClass().getName() + ", which none of its alternatives allows"));
    }

    public <T> void writeList(List<T> list, BinaryCodec.ValueWriter<? super T> element) {
        if (list == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.LIST);
        writeVarint(list.size());
        for (T item : list) {
            element.write(this, item);
        }
    }

    // ---- scalars

    public void writeBoolean(boolean v) {
        ensure(2);
        buf.put((byte) WireFormat.BOOL).put((byte) (v ? 1 : 0));
    }

    public void writeBoolean(Boolean v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeBoolean(v.booleanValue());
        }
    }

    public void writeByte(byte v) {
        ensure(2);
        buf.put((byte) WireFormat.BYTE).put(v);
    }

    public void writeByte(Byte v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeByte(v.byteValue());
        }
    }

    public void writeShort(short v) {
        ensure(3);
        buf.put((byte) WireFormat.SHORT).putShort(v);
    }

    public void writeShort(Short v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeShort(v.shortValue());
        }
    }

    public void writeInt(int v) {
        ensure(5);
        buf.put((byte) WireFormat.INT).putInt(v);
    }

    public void writeInt(Integer v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeInt(v.intValue());
        }
    }

    public void writeLong(long v) {
        ensure(9);
        buf.put((byte) WireFormat.LONG).putLong(v);
    }

    public void writeLong(Long v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeLong(v.longValue());
        }
    }

    public void writeFloat(float v) {
        ensure(5);
        buf.put((byte) WireFormat.FLOAT).putInt(Float.floatToRawIntBits(v));
    }

    public void writeFloat(Float v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeFloat(v.floatValue());
        }
    }

    public void writeDouble(double v) {
        ensure(9);
        buf.put((byte) WireFormat.DOUBLE).putLong(Double.doubleToRawLongBits(v));
    }

    public void writeDouble(Double v) {
        if (v == null) {
            tag(WireFormat.NULL);
        } else {
            writeDouble(v.doubleValue());
        }
    }

    /**
     * The value of a required field that is not nillable, refused when null (a reader would refuse
     * the message); generated codecs call it for such fields of reference type.
     */
    public <T> T required(T value, String field) {
        if (value == null) {
            throw WireFormatException.malformed(field, "required and not nillable, but null");
        }
        return value;
    }

    public void writeString(String v) {
        writeString(v, null);
    }

    /** A string, refused (naming {@code field}) when {@code xs:string} cannot hold it: see {@link XsdValues}. */
    public void writeString(String v, String field) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        String problem = XsdValues.stringProblem(v);
        if (problem != null) {
            throw WireFormatException.malformed(field == null ? "(a string)" : field, problem);
        }
        tag(WireFormat.STRING);
        byte[] utf8 = v.getBytes(StandardCharsets.UTF_8);
        writeVarint(utf8.length);
        raw(utf8);
    }

    public void writeBytes(byte[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.BYTES);
        writeVarint(v.length);
        raw(v);
    }

    public void writeDateTime(OffsetDateTime v) {
        writeDateTime(v, null);
    }

    /** A date-time, refused (naming {@code field}) when {@code xs:dateTime} cannot say it: see {@link XsdValues}. */
    public void writeDateTime(OffsetDateTime v, String field) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        String problem = XsdValues.dateTimeProblem(v);
        if (problem != null) {
            throw WireFormatException.malformed(field == null ? "(a date-time)" : field, problem);
        }
        ensure(17);
        buf.put((byte) WireFormat.DATE_TIME).putLong(v.toEpochSecond()).putInt(v.getNano())
                .putInt(v.getOffset().getTotalSeconds());
    }

    public void writeStrings(List<String> v) {
        writeList(v, BinaryWriter::writeString);
    }

    public void writeStrings(List<String> v, String field) {
        writeList(v, (out, s) -> out.writeString(s, field));
    }

    public void writeDateTimes(List<OffsetDateTime> v, String field) {
        writeList(v, (out, d) -> out.writeDateTime(d, field));
    }

    public void writeBytesList(List<byte[]> v) {
        writeList(v, BinaryWriter::writeBytes);
    }

    public void writeDateTimes(List<OffsetDateTime> v) {
        writeList(v, BinaryWriter::writeDateTime);
    }

    // ---- packed arrays: count, then raw little-endian values

    public void writeBooleans(boolean[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.BOOL);
        writeVarint(v.length);
        for (boolean b : v) {
            ensure(1);
            buf.put((byte) (b ? 1 : 0));
        }
    }

    public void writePackedBytes(byte[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.BYTE);
        writeVarint(v.length);
        packed(v, v.length, 1);
    }

    public void writeShorts(short[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.SHORT);
        writeVarint(v.length);
        packed(v, v.length, 2);
    }

    public void writeInts(int[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.INT);
        writeVarint(v.length);
        packed(v, v.length, 4);
    }

    public void writeLongs(long[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.LONG);
        writeVarint(v.length);
        packed(v, v.length, 8);
    }

    public void writeFloats(float[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.FLOAT);
        writeVarint(v.length);
        packed(v, v.length, 4);
    }

    public void writeDoubles(double[] v) {
        if (v == null) {
            tag(WireFormat.NULL);
            return;
        }
        tag(WireFormat.PACKED | WireFormat.DOUBLE);
        writeVarint(v.length);
        packed(v, v.length, 8);
    }

    /** The first byte of a response: {@link WireFormat#RESPONSE} or {@link WireFormat#DECLARED_FAULT}. */
    public void writeKind(int kind) {
        ensure(1);
        buf.put((byte) kind);
    }

    public void writeVarint(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf.put((byte) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        buf.put((byte) v);
    }

    private void tag(int tag) {
        ensure(1);
        buf.put((byte) tag);
    }

    private void raw(byte[] bytes) {
        if (discard) {
            flushed += bytes.length;
            return;
        }
        if (bytes.length >= BIG_ARRAY_BYTES) {
            flushBlock(true);
            segments.add(new Segment(bytes, bytes.length, 1, flushedLengthOf(bytes.length, 1)));
            return;
        }
        int at = 0;
        while (at < bytes.length) {
            ensure(1);
            int n = Math.min(buf.remaining(), bytes.length - at);
            buf.put(bytes, at, n);
            at += n;
        }
    }

    private void packed(Object array, int count, int width) {
        if (discard) {
            flushed += (long) count * width;
            return;
        }
        if ((long) count * width >= BIG_ARRAY_BYTES) {
            flushBlock(true);
            segments.add(new Segment(array, count, width, flushedLengthOf(count, width)));
            return;
        }
        int at = 0;
        while (at < count) {
            ensure(width);
            int n = Math.min(count - at, buf.remaining() / width);
            Segment.copyElements(array, at, n, buf);
            at += n;
        }
    }

    private long flushedLengthOf(int count, int width) {
        long bytes = (long) count * width;
        flushed += bytes;
        return bytes;
    }

    private void ensure(int bytes) {
        if (buf.remaining() < bytes) {
            flushBlock(true);
            if (buf.remaining() < bytes) {
                buf = ByteBuffer.allocate(Math.max(bytes, FIRST_BLOCK)).order(ByteOrder.LITTLE_ENDIAN);
            }
        }
    }

    /** Ends the current block as a segment; blocks double in size up to a limit. */
    private void flushBlock(boolean more) {
        if (discard) {
            flushed += buf.position();
            buf.clear();
            return;
        }
        if (buf.position() > 0) {
            segments.add(new Segment(buf.array(), buf.position(), 1, buf.position()));
            flushed += buf.position();
            int next = Math.min(MAX_BLOCK, buf.capacity() * 2);
            buf = more ? ByteBuffer.allocate(next).order(ByteOrder.LITTLE_ENDIAN) : ByteBuffer.allocate(0);
        }
    }

    /**
     * A run of the encoded message: bytes of a block, or the values of a primitive array (then
     * {@code width} is the element size and the bytes are made only when copied out).
     */
    public static final class Segment {
        private final Object array;
        private final int count;
        private final int width;
        private final long byteLength;

        Segment(Object array, int count, int width, long byteLength) {
            this.array = array;
            this.count = count;
            this.width = width;
            this.byteLength = byteLength;
        }

        /** A segment of plain bytes, for protocols and tests that frame bytes they already have. */
        public static Segment ofBytes(byte[] bytes) {
            return new Segment(bytes, bytes.length, 1, bytes.length);
        }

        public long byteLength() {
            return byteLength;
        }

        /** Bytes per element; 1 for plain bytes. Copies never split an element. */
        public int width() {
            return width;
        }

        /**
         * Copies bytes from byte offset {@code from} of this segment into {@code dst}, at most
         * {@code maxBytes}, whole elements only; returns how many bytes were copied (0 when not
         * even one element fits).
         */
        public int copyTo(byte[] dst, int offset, long from, int maxBytes) {
            long left = byteLength - from;
            int n = (int) Math.min(left, maxBytes) / width;
            if (n == 0) {
                return 0;
            }
            ByteBuffer target = ByteBuffer.wrap(dst, offset, n * width).order(ByteOrder.LITTLE_ENDIAN);
            copyElements(array, (int) (from / width), n, target);
            return n * width;
        }

        /** Bulk copy, little-endian, through a typed view: no boxing, no per-element loop in Java. */
        static void copyElements(Object array, int from, int n, ByteBuffer target) {
            int pos = target.position();
            if (array instanceof byte[] a) {
                target.put(a, from, n);
                return;
            } else if (array instanceof double[] a) {
                target.asDoubleBuffer().put(a, from, n);
                pos += n * 8;
            } else if (array instanceof long[] a) {
                target.asLongBuffer().put(a, from, n);
                pos += n * 8;
            } else if (array instanceof int[] a) {
                target.asIntBuffer().put(a, from, n);
                pos += n * 4;
            } else if (array instanceof float[] a) {
                target.asFloatBuffer().put(a, from, n);
                pos += n * 4;
            } else if (array instanceof short[] a) {
                target.asShortBuffer().put(a, from, n);
                pos += n * 2;
            } else {
                throw new IllegalArgumentException("not a packed array: " + array.getClass());
            }
            target.position(pos);
        }
    }
}

package io.switchboard.codec.dynamic;

import io.switchboard.codec.NdArrays;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.IdentityIndex;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.message.SendChecks;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.XsdValues;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The typed protobuf wire ({@code <Name>.proto}, the convention printed at the top of that file)
 * for {@link DynamicRecord}s, driven by the interface model: what any protobuf library writes
 * for the same message, this reads to the same values, and what this writes protobuf parses.
 * Fields go out in field-number order, as protobuf's own serializers write them, so a message
 * protobuf-java parses and writes again comes back byte for byte.
 *
 * <p>Writing is a size pass, then a write pass that reads the nested messages' lengths from the
 * size pass; nothing is copied twice. Linked values go into the operation message's node table
 * ({@code sb_nodes}), collected breadth first without recursion, so a list of a million nodes
 * costs no stack. Reading takes the message in parts (their protobuf merge is the message),
 * checks every length before allocating, refuses node numbers out of range, nodes of the wrong
 * type, unset oneofs, values out of their schema type's range, lists nested past the depth limit
 * and more nodes or bytes than the limits allow.
 *
 * <pre>{@code
 * DynamicProtoCodec codec = DynamicInterface.fromSchema(schema).protoCodec();
 * byte[] bytes = codec.toBytes(request, 2_000_000);
 * DynamicRecord back = codec.fromBytes("echoList", bytes, MessageLimits.of(64 << 20, 2_000_000));
 * }</pre>
 */
public final class DynamicProtoCodec extends ProtoCodec {
    static final int NODES_NUMBER = 2046;
    static final int NULLS_NUMBER = 2047;

    private final DynamicInterface iface;
    /** Per operation message: the linked types its node table holds, in schema order (see the convention). */
    private final Map<DynamicType, List<DynamicType>> nodeTables = new HashMap<>();

    DynamicProtoCodec(DynamicInterface iface) {
        this.iface = iface;
        for (DynamicType message : iface.messages()) {
            nodeTables.put(message, linkedTypesReachableFrom(message));
        }
    }

    /** The linked types a value of {@code type} may hold, in the interface's type order (as the .proto has them). */
    private List<DynamicType> linkedTypesReachableFrom(DynamicType type) {
        Set<DynamicType> visited = new LinkedHashSet<>();
        ArrayDeque<DynamicType> work = new ArrayDeque<>(List.of(type));
        while (!work.isEmpty()) {
            for (DynamicType target : work.poll().targets) {
                if (target != null && visited.add(target)) {
                    work.add(target);
                }
            }
        }
        return iface.nodeTypes().stream().filter(visited::contains).toList();
    }

    /** The message as one protobuf message: a request, response or fault of the interface. */
    public byte[] toBytes(DynamicRecord message, int maxNodes) {
        return toBytes(message == null ? null : message.type.name(), message, maxNodes);
    }

    /**
     * Prepares {@code value}, a {@link DynamicRecord} of the message {@code message}, for writing:
     * collects its linked nodes and runs the size pass.
     *
     * @throws IllegalArgumentException not a message of this interface
     * @throws WireFormatException a value that cannot travel (a required value missing, a string
     *         XML cannot carry, an n-d array whose shape does not match, lists nested too deep),
     *         or more than {@code maxNodes} linked nodes
     */
    @Override
    public Writer writer(String message, Object value, int maxNodes) {
        DynamicType t = message == null ? null : iface.messageOrNull(message);
        if (t == null || !(value instanceof DynamicRecord r) || r.type != t) {
            throw new IllegalArgumentException("not a message " + message + " of " + iface.model().componentName() + ": "
                    + (value instanceof DynamicRecord d ? d.type.name() : value == null ? "null" : value.getClass().getName()));
        }
        Writer w = new Writer(r, maxNodes);
        w.sizePass();
        return w;
    }

    /** Reads a whole message of {@code element} (request {@code op}, {@code opResponse} or {@code opFault}). */
    @Override
    public DynamicRecord fromBytes(String element, byte[] bytes, MessageLimits limits) {
        return (DynamicRecord) super.fromBytes(element, bytes, limits);
    }

    /** A reader of one message of {@code element} that takes its parts in order. */
    @Override
    public Reader reader(String element, MessageLimits limits, long expectedBytes) {
        DynamicType t = iface.messageOrNull(element);
        if (t == null) {
            throw new IllegalArgumentException("not a message of " + iface.model().componentName() + ": " + element);
        }
        return new Reader(t, limits);
    }

    // ---------------------------------------------------------------- writing

    /**
     * One message on its way out: after the size pass ({@link #size()}), {@link #writePart} writes
     * it in parts. The same traversal runs twice, once counting and once writing, so the lengths
     * the write pass puts before nested messages are those the size pass found.
     */
    public final class Writer extends ProtoCodec.Writer {
        private final DynamicRecord message;
        private final List<DynamicType> tableTypes;
        private List<Object> nodes = new ArrayList<>();
        private IdentityIndex nodeIndex;
        private int nextGuess;
        private ProtoOutput out;   // null in the size pass
        private long size;
        private int[] sizes = new int[16];
        private int sizeCount;
        private int cursor;
        private int[] openSlots = new int[16];
        private long[] openStarts = new long[16];
        private int open;
        private int listDepth;
        /** The root's null repeated fields and elements, found in the size pass, written at the end. */
        private Nulls rootNulls;
        /** Where the next part starts: a root field and an element of it, then a node, then sb_nulls. */
        private int nextField;
        private int nextElement;
        private int nextNode;
        private boolean nullsWritten;
        private boolean started;

        private Writer(DynamicRecord message, int maxNodes) {
            this.message = message;
            this.tableTypes = nodeTables.get(message.type);
            NodeTable checked = message.type.reachesGraph ? NodeTable.checked(message, maxNodes) : null;
            if (checked != null) {   // the checks before sending collected them a moment ago
                nodes = checked.nodes();
                nodeIndex = checked.index();
            } else if (message.type.reachesGraph) {
                nodeIndex = IdentityIndex.collect(message, maxNodes, nodes);
            }
            if (message.type.reachesGraph) {
                for (Object node : nodes) {
                    if (!tableTypes.contains(((DynamicRecord) node).type)) {
                        throw new IllegalArgumentException("linked node " + ((DynamicRecord) node).type.name()
                                + " cannot be in a " + message.type.name());
                    }
                }
            }
        }

        /** The message's size in bytes, as one part. */
        @Override
        public long size() {
            return size;
        }

        @Override
        public boolean hasMore() {
            return !started || !finished();
        }

        /**
         * The next part: whole root fields, elements of a repeated root field, pieces of a packed
         * root array, node table entries and at last {@code sb_nulls}, until the part holds
         * {@code targetBytes}. Nested messages are never cut.
         */
        @Override
        public void writePart(ProtoOutput target, int targetBytes) {
            if (started && finished()) {
                throw new IllegalStateException("every part of " + message.type.name() + " was written");
            }
            started = true;
            out = target;
            int start = target.size();
            DynamicType t = message.type;
            while (!finished()) {
                int used = target.size() - start;
                if (used > 0 && used >= targetBytes) {
                    break;
                }
                if (nextField < t.fields.length) {
                    int count = elementCount(nextField);
                    if (count < 0) {
                        emitField(message, nextField, 0, Integer.MAX_VALUE, null);
                        nextField++;
                    } else {
                        int width = elementWidth(t.fields[nextField]);
                        int n = width == 0 ? 1 : Math.max(1, (targetBytes - used) / width);
                        int to = (int) Math.min(count, (long) nextElement + n);
                        emitField(message, nextField, nextElement, to, null);
                        nextElement = to;
                        if (nextElement >= count) {
                            nextField++;
                            nextElement = 0;
                        }
                    }
                } else if (nextNode < nodes.size()) {
                    emitNode(nextNode++);
                } else {
                    emitNulls(rootNulls);
                    nullsWritten = true;
                }
                skipEmpty();
            }
            out = null;
        }

        private boolean finished() {
            return nextField >= message.type.fields.length && nextNode >= nodes.size()
                    && (nullsWritten || rootNulls == null);
        }

        /** Steps over root fields that write nothing, so that no empty part trails the last one. */
        private void skipEmpty() {
            while (nextField < message.type.fields.length && nextElement == 0
                    && (message.values[nextField] == null || elementCount(nextField) == 0)) {
                nextField++;
            }
        }

        /** The elements of a root field a part may cut between; -1 for a field that goes whole. */
        private int elementCount(int i) {
            FieldModel f = message.type.fields[i];
            Object v = message.values[i];
            if (!f.repeated() || v == null || f.isScalar() && f.scalar() == ScalarType.BYTE) {
                return -1;
            }
            return v instanceof List<?> l ? l.size() : java.lang.reflect.Array.getLength(v);
        }

        /** Bytes per element of a packed field (at most, for varints); 0 for elements that are messages or strings. */
        private static int elementWidth(FieldModel f) {
            if (f.graphReference()) {
                return 5;
            }
            if (!f.isScalar()) {
                return 0;
            }
            return switch (f.scalar()) {
                case BOOLEAN -> 1;
                case SHORT, INT, FLOAT -> 4;
                case LONG, DOUBLE -> 8;
                default -> 0;
            };
        }

        /** The size pass: the same traversal as the parts, counting. */
        private void sizePass() {
            rootNulls = emitFields(message);
            for (int i = 0; i < nodes.size(); i++) {
                emitNode(i);
            }
            emitNulls(rootNulls);
            skipEmpty();
        }

        private void emitNode(int i) {
            DynamicRecord node = (DynamicRecord) nodes.get(i);
            try {
                begin(NODES_NUMBER);
                if (tableTypes.size() > 1) {
                    begin(tableTypes.indexOf(node.type) + 1);
                    emitStructBody(node);
                    end();
                } else {
                    emitStructBody(node);
                }
                end();
            } catch (WireFormatException e) {
                throw e.inNode(i);
            }
        }

        private void emitStructBody(DynamicRecord r) {
            emitNulls(emitFields(r));
        }

        /** The fields of {@code r} in number order; answers what protobuf cannot say about its repeated fields. */
        private Nulls emitFields(DynamicRecord r) {
            Nulls nulls = null;
            for (int i = 0; i < r.type.fields.length; i++) {
                nulls = emitField(r, i, 0, Integer.MAX_VALUE, nulls);
            }
            return nulls;
        }

        /** Field {@code i} of {@code r}; of a repeated field, only the elements {@code [from, to)}. */
        @SuppressWarnings("unchecked")
        private Nulls emitField(DynamicRecord r, int i, int from, int to, Nulls nulls) {
            DynamicType t = r.type;
            FieldModel f = t.fields[i];
            int number = i + 1;
            Object v = from == 0 ? DynamicRecord.check(t, i, r.values[i]) : r.values[i];
            String name = t.qualified[i];
            if (v == null) {
                if (DynamicType.requiredReference(f) || DynamicType.requiredPrimitive(f)) {
                    throw WireFormatException.malformed(name, "required, but it is not set");
                }
                if (f.repeated() && !(f.isScalar() && f.scalar() == ScalarType.BYTE)) {
                    nulls = Nulls.list(nulls, number);
                }
                return nulls;
            }
            DynamicType target = t.targets[i];
            if (f.graphReference()) {
                if (f.repeated()) {
                    List<?> refs = (List<?>) v;
                    to = Math.min(to, refs.size());
                    int[] numbers = new int[to - from];
                    for (int k = from; k < to; k++) {
                        if (refs.get(k) == null) {
                            throw WireFormatException.malformed(name, "a list of linked nodes holds no nulls");
                        }
                        numbers[k - from] = nodeNumber(refs.get(k));
                    }
                    packedVarints(number, numbers, false);
                } else {
                    uint32(number, nodeNumber(v));
                }
            } else if (target != null) {
                if (!f.repeated()) {
                    begin(number);
                    emitValue(target, v);
                    end();
                } else {
                    List<?> items = (List<?>) v;
                    to = Math.min(to, items.size());
                    for (int k = from; k < to; k++) {
                        begin(number);
                        if (items.get(k) == null) {
                            nulls = Nulls.element(nulls, number, k);
                        } else {
                            emitValue(target, items.get(k));
                        }
                        end();
                    }
                }
            } else if (!f.repeated()) {
                emitSingle(f, number, v, name, DynamicType.requiredPrimitive(f));
            } else {
                nulls = emitRepeated(f, number, v, from, to, name, nulls);
            }
            return nulls;
        }

        private void emitValue(DynamicType target, Object v) {
            if (target.heterogeneousList()) {
                emitList((DynamicList) v);
            } else {
                DynamicRecord r = (DynamicRecord) v;
                if (target.model.ndArray()) {
                    String problem = DynamicRecord.ndInconsistency(r);
                    if (problem != null) {
                        throw WireFormatException.malformed(target.name(), "n-d array " + target.name() + ": " + problem);
                    }
                }
                emitStructBody(r);
            }
        }

        private void emitList(DynamicList list) {
            if (++listDepth > HeterogeneousList.MAX_DEPTH) {
                throw new WireFormatException(WireFormatException.DEPTH_LIMIT, "heterogeneous list "
                        + list.type.name() + " nests deeper than " + HeterogeneousList.MAX_DEPTH + " levels");
            }
            DynamicType t = list.type;
            for (Object e : list) {
                int a = e == null ? -1 : t.alternativeOf(e);
                if (a < 0) {
                    throw WireFormatException.malformed(t.name(), "a heterogeneous list holds "
                            + (e == null ? "no nulls" : "no " + DynamicRecord.describe(e)));
                }
                begin(1);
                if (t.targets[a] == null) {
                    emitSingle(t.fields[a], a + 1, e, t.name() + "." + t.fields[a].name(), false);
                } else {
                    begin(a + 1);
                    emitValue(t.targets[a], e);
                    end();
                }
                end();
            }
            listDepth--;
        }

        /** One scalar; {@code implicit}: a plain proto3 field, not written when it holds the default. */
        private void emitSingle(FieldModel f, int number, Object v, String name, boolean implicit) {
            switch (f.scalar()) {
                case BOOLEAN -> {
                    boolean b = (Boolean) v;
                    if (b || !implicit) {
                        tag(number, ProtoOutput.VARINT);
                        varint64(b ? 1 : 0);
                    }
                }
                case BYTE, SHORT, INT -> {
                    int n = ((Number) v).intValue();
                    if (n != 0 || !implicit) {
                        tag(number, ProtoOutput.VARINT);
                        varint64(n);
                    }
                }
                case LONG -> {
                    long n = (Long) v;
                    if (n != 0 || !implicit) {
                        tag(number, ProtoOutput.VARINT);
                        varint64(n);
                    }
                }
                case FLOAT -> {
                    float x = (Float) v;
                    if (Float.floatToRawIntBits(x) != 0 || !implicit) {
                        if (out == null) {
                            size += tagSize(number) + 4;
                        } else {
                            out.writeFloat(number, x);
                        }
                    }
                }
                case DOUBLE -> {
                    double x = (Double) v;
                    if (Double.doubleToRawLongBits(x) != 0 || !implicit) {
                        if (out == null) {
                            size += tagSize(number) + 8;
                        } else {
                            out.writeDouble(number, x);
                        }
                    }
                }
                case STRING -> string(number, (String) v, name);
                case BYTES -> bytes(number, (byte[]) v);
                case DATE_TIME -> dateTime(number, (OffsetDateTime) v, name);
            }
        }

        private Nulls emitRepeated(FieldModel f, int number, Object v, int from, int to, String name, Nulls nulls) {
            if (f.scalar() == ScalarType.BYTE) {
                bytes(number, (byte[]) v);
                return nulls;
            }
            int end = Math.min(to, v instanceof List<?> l ? l.size() : java.lang.reflect.Array.getLength(v));
            switch (f.scalar()) {
                case BOOLEAN -> {
                    boolean[] a = (boolean[]) v;
                    if (end > from) {
                        if (out == null) {
                            size += tagSize(number) + ProtoOutput.varint32Size(end - from) + (end - from);
                        } else {
                            out.writePackedBools(number, a, from, end);
                        }
                    }
                }
                case SHORT -> {
                    short[] a = (short[]) v;
                    int[] ints = new int[end - from];
                    for (int k = from; k < end; k++) {
                        ints[k - from] = a[k];
                    }
                    packedFixed(number, ints.length, 4, () -> out.writePackedSFixed32(number, ints, 0, ints.length));
                }
                case INT -> packedFixed(number, end - from, 4, () -> out.writePackedSFixed32(number, (int[]) v, from, end));
                case LONG -> packedFixed(number, end - from, 8, () -> out.writePackedSFixed64(number, (long[]) v, from, end));
                case FLOAT -> packedFixed(number, end - from, 4, () -> out.writePackedFloats(number, (float[]) v, from, end));
                case DOUBLE -> packedFixed(number, end - from, 8,
                        () -> out.writePackedDoubles(number, (double[]) v, from, end));
                default -> {
                    List<?> items = (List<?>) v;
                    for (int k = from; k < end; k++) {
                        Object item = items.get(k);
                        if (item == null) {
                            nulls = Nulls.element(nulls, number, k);
                            begin(number);   // the default: an empty string, bytes or DateTime
                            end();
                        } else if (f.scalar() == ScalarType.STRING) {
                            string(number, (String) item, name);
                        } else if (f.scalar() == ScalarType.BYTES) {
                            bytes(number, (byte[]) item);
                        } else {
                            dateTime(number, (OffsetDateTime) item, name);
                        }
                    }
                }
            }
            return nulls;
        }

        private void emitNulls(Nulls nulls) {
            if (nulls == null) {
                return;
            }
            begin(NULLS_NUMBER);
            packedVarints(1, nulls.lists.toArray(), true);
            for (Map.Entry<Integer, IntList> e : nulls.elements.entrySet()) {
                begin(2);
                if (e.getKey() != 0) {
                    tag(1, ProtoOutput.VARINT);
                    varint64(e.getKey());
                }
                packedVarints(2, e.getValue().toArray(), true);
                end();
            }
            end();
        }

        /** The node number of a linked value: its place in the node table, from 1. */
        private int nodeNumber(Object node) {
            if (nextGuess < nodes.size() && nodes.get(nextGuess) == node) {
                return ++nextGuess;   // a list's next node: no hash lookup
            }
            int i = nodeIndex == null ? -1 : nodeIndex.indexOf(node);
            if (i < 0) {
                throw new IllegalStateException("linked node " + node + " is not in the message's node table");
            }
            nextGuess = i + 1;
            return i + 1;
        }

        // ---- the primitives, counting or writing

        private void tag(int number, int wireType) {
            if (out == null) {
                size += tagSize(number);
            } else {
                out.writeTag(number, wireType);
            }
        }

        private void varint64(long v) {
            if (out == null) {
                size += ProtoOutput.varint64Size(v);
            } else {
                out.writeVarint64(v);
            }
        }

        private void uint32(int number, int v) {
            if (v != 0) {
                tag(number, ProtoOutput.VARINT);
                if (out == null) {
                    size += ProtoOutput.varint32Size(v);
                } else {
                    out.writeVarint32(v);
                }
            }
        }

        /** A packed field of varints: uint32 node numbers, or int32 ({@code signed}: negatives take ten bytes). */
        private void packedVarints(int number, int[] values, boolean signed) {
            if (values.length == 0) {
                return;
            }
            int length = 0;
            for (int v : values) {
                length += signed ? ProtoOutput.varint64Size(v) : ProtoOutput.varint32Size(v);
            }
            if (out == null) {
                size += tagSize(number) + ProtoOutput.varint32Size(length) + length;
                return;
            }
            out.writeLengthDelimited(number, length);
            for (int v : values) {
                if (signed) {
                    out.writeVarint64(v);
                } else {
                    out.writeVarint32(v);
                }
            }
        }

        private void packedFixed(int number, int count, int width, Runnable write) {
            if (count == 0) {
                return;
            }
            if (out == null) {
                long length = (long) count * width;
                size += tagSize(number) + ProtoOutput.varint64Size(length) + length;
            } else {
                write.run();
            }
        }

        private void string(int number, String s, String name) {
            SendChecks.string(s, name);
            if (out == null) {
                int length = utf8Length(s);
                size += tagSize(number) + ProtoOutput.varint32Size(length) + length;
            } else {
                out.writeString(number, s);
            }
        }

        private void bytes(int number, byte[] b) {
            if (out == null) {
                size += tagSize(number) + ProtoOutput.varint32Size(b.length) + b.length;
            } else {
                out.writeBytes(number, b, 0, b.length);
            }
        }

        private void dateTime(int number, OffsetDateTime v, String name) {
            SendChecks.dateTime(v, name);
            begin(number);
            long seconds = v.toEpochSecond();
            int nanos = v.getNano();
            int offset = v.getOffset().getTotalSeconds();
            if (seconds != 0) {
                tag(1, ProtoOutput.VARINT);
                varint64(seconds);
            }
            if (nanos != 0) {
                tag(2, ProtoOutput.VARINT);
                varint64(nanos);
            }
            if (offset != 0) {
                tag(3, ProtoOutput.VARINT);
                varint64(offset);
            }
            end();
        }

        /** Opens a nested message field: its length comes from the size pass. */
        private void begin(int number) {
            if (out != null) {
                out.writeLengthDelimited(number, sizes[cursor++]);
                return;
            }
            size += tagSize(number);
            if (sizeCount == sizes.length) {
                sizes = Arrays.copyOf(sizes, sizes.length * 2);
            }
            if (open == openSlots.length) {
                openSlots = Arrays.copyOf(openSlots, open * 2);
                openStarts = Arrays.copyOf(openStarts, open * 2);
            }
            openSlots[open] = sizeCount++;
            openStarts[open++] = size;
        }

        private void end() {
            if (out != null) {
                return;
            }
            open--;
            long length = size - openStarts[open];
            if (length > Integer.MAX_VALUE - 16) {
                throw new WireFormatException(WireFormatException.SIZE_LIMIT, "a nested message over 2 GiB");
            }
            sizes[openSlots[open]] = (int) length;
            size += ProtoOutput.varint32Size((int) length);
        }
    }

    private static int tagSize(int number) {
        return ProtoOutput.varint32Size(number << 3);
    }

    /** The UTF-8 length of a string with no lone surrogates (checked before). */
    static int utf8Length(String s) {
        int n = 0;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** The null repeated fields and null elements of one message, by field number. */
    private static final class Nulls {
        final IntList lists = new IntList();
        final Map<Integer, IntList> elements = new java.util.TreeMap<>();

        static Nulls list(Nulls n, int number) {
            n = n == null ? new Nulls() : n;
            n.lists.add(number);
            return n;
        }

        static Nulls element(Nulls n, int number, int position) {
            n = n == null ? new Nulls() : n;
            n.elements.computeIfAbsent(number, k -> new IntList()).add(position);
            return n;
        }
    }

    private static final class IntList {
        int[] a = new int[4];
        int n;

        void add(int v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }

    // ---------------------------------------------------------------- reading

    /**
     * One message coming in: {@link #readPart} for each part in order (their protobuf merge is the
     * message), then {@link #finish}, which resolves node numbers and checks what only the whole
     * message can show.
     */
    public final class Reader extends ProtoCodec.Reader {
        private final DynamicType type;
        private final MessageLimits limits;
        private final List<DynamicType> tableTypes;
        private final State root;
        private final List<DynamicRecord> nodes = new ArrayList<>();
        /** Node numbers to resolve: where (a record and field index, or a list and position), the number, the type wanted. */
        private Object[] fixHolders = new Object[16];
        private int[] fixSlots = new int[16];
        private int[] fixNumbers = new int[16];
        private DynamicType[] fixTypes = new DynamicType[16];
        private int fixCount;
        /** Records whose required fields and n-d array shapes are checked once the message is whole. */
        private final List<DynamicRecord> toCheck = new ArrayList<>();
        /** Records read as elements that sb_nulls then made null: the empty messages on the wire, not values to check. */
        private final java.util.Set<DynamicRecord> nulled = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        private int listDepth;

        private Reader(DynamicType type, MessageLimits limits) {
            super(limits);
            this.type = type;
            this.limits = limits;
            this.tableTypes = nodeTables.get(type);
            this.root = new State(new DynamicRecord(type));
        }

        @Override
        protected void merge(ProtoInput in) {
            readFields(in, root, true);
        }

        /** The message, once every part is read. */
        @Override
        protected DynamicRecord complete() {
            close(root);
            for (int i = 0; i < fixCount; i++) {
                int n = fixNumbers[i];
                DynamicRecord node = null;
                if (n != 0) {
                    if (Integer.compareUnsigned(n, nodes.size()) > 0) {
                        throw WireFormatException.malformed(fieldName(i), "node number " + Integer.toUnsignedString(n)
                                + " is out of range: the node table holds " + nodes.size());
                    }
                    node = nodes.get(n - 1);
                    if (node.type != fixTypes[i]) {
                        throw WireFormatException.malformed(fieldName(i), "node " + n + " is a " + node.type.name()
                                + ", expected " + fixTypes[i].name());
                    }
                } else if (fixHolders[i] instanceof List<?>) {
                    throw WireFormatException.malformed(fieldName(i), "a list of linked nodes holds no nulls");
                }
                if (fixHolders[i] instanceof DynamicRecord r) {
                    r.values[fixSlots[i]] = node;
                } else {
                    @SuppressWarnings("unchecked")
                    List<Object> list = (List<Object>) fixHolders[i];
                    list.set(fixSlots[i], node);
                }
            }
            for (DynamicRecord r : toCheck) {
                if (!nulled.contains(r)) {
                    check(r);
                }
            }
            check(root.record);
            return root.record;
        }

        private String fieldName(int fix) {
            return fixHolders[fix] instanceof DynamicRecord r ? r.type.name() + "." + r.type.fields[fixSlots[fix]].name()
                    : "(a list of linked nodes)";
        }

        /** The fields of one occurrence of a message, merged into {@code s}'s record. */
        private void readFields(ProtoInput in, State s, boolean top) {
            DynamicType t = s.record.type;
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int number = tag >>> 3;
                if (number >= 1 && number <= t.fields.length) {
                    readField(in, s, number - 1, tag);
                } else if (number == NODES_NUMBER && top && !tableTypes.isEmpty()) {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, t.name() + ".sb_nodes");
                    readNode(in);
                } else if (number == NULLS_NUMBER && s.hasNulls()) {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, t.name() + ".sb_nulls");
                    int outer = in.beginMessage(in.readLength());
                    readNulls(in, s);
                    in.endMessage(outer);
                } else {
                    in.skipField(tag);
                }
            }
        }

        private void readNode(ProtoInput in) {
            if (nodes.size() >= limits.maxNodes()) {
                throw new WireFormatException(WireFormatException.NODE_LIMIT, "message holds more than "
                        + limits.maxNodes() + " linked nodes");
            }
            int index = nodes.size();
            try {
                int outer = in.beginMessage(in.readLength());
                DynamicRecord node;
                if (tableTypes.size() == 1) {
                    node = readStruct(in, tableTypes.get(0), null);
                } else {
                    node = null;
                    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                        int k = (tag >>> 3) - 1;
                        if (k >= 0 && k < tableTypes.size()) {
                            expect(tag, ProtoOutput.LENGTH_DELIMITED, type.name() + ".Node");
                            int o = in.beginMessage(in.readLength());
                            DynamicType nt = tableTypes.get(k);
                            node = readStruct(in, nt, node != null && node.type == nt ? node : null);
                            in.endMessage(o);
                        } else {
                            in.skipField(tag);
                        }
                    }
                    if (node == null) {
                        throw WireFormatException.malformed(type.name() + ".Node", "an entry of the node table has"
                                + " none of its oneof set");
                    }
                }
                in.endMessage(outer);
                nodes.add(node);
            } catch (WireFormatException e) {
                throw e.inNode(index);
            }
        }

        private void readField(ProtoInput in, State s, int i, int tag) {
            DynamicRecord r = s.record;
            DynamicType t = r.type;
            FieldModel f = t.fields[i];
            String name = t.qualified[i];
            at(name);
            DynamicType target = t.targets[i];
            s.seen(i);
            if (f.graphReference()) {
                if (f.repeated()) {
                    readVarints(in, tag, s.ints(i), name);
                } else {
                    expect(tag, ProtoOutput.VARINT, name);
                    fix(r, i, in.readVarint32(), target);
                }
                return;
            }
            if (target != null) {
                expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                int outer = in.beginMessage(in.readLength());
                if (f.repeated()) {
                    s.objects(i).add(readValue(in, target, null, name));
                } else {
                    r.values[i] = readValue(in, target, r.values[i], name);
                }
                in.endMessage(outer);
                return;
            }
            if (!f.repeated()) {
                r.values[i] = readSingle(in, tag, f.scalar(), name, r.values[i]);
                return;
            }
            switch (f.scalar()) {
                case BYTE -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    r.values[i] = in.readBytes();   // a singular bytes field: the last occurrence is the value
                }
                case BOOLEAN -> readVarints(in, tag, s.ints(i), name);
                case SHORT, INT -> readFixed32s(in, tag, s.ints(i), name);
                case LONG -> readFixed64s(in, tag, s.longs(i), name);
                case FLOAT -> readFixed32s(in, tag, s.ints(i), name);
                case DOUBLE -> s.doubles(i, in, tag, name);
                case STRING -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    s.objects(i).add(readString(in, name));
                }
                case BYTES -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    s.objects(i).add(in.readBytes());
                }
                case DATE_TIME -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    int outer = in.beginMessage(in.readLength());
                    s.objects(i).add(readDateTime(in, null, name));
                    in.endMessage(outer);
                }
            }
        }

        /** A struct or list value whose message body the input is positioned on; merged into {@code into} if given. */
        private Object readValue(ProtoInput in, DynamicType target, Object into, String name) {
            if (target.heterogeneousList()) {
                return readList(in, target, (DynamicList) into, name);
            }
            return readStruct(in, target, (DynamicRecord) into);
        }

        private DynamicRecord readStruct(ProtoInput in, DynamicType t, DynamicRecord into) {
            DynamicRecord r = into != null ? into : new DynamicRecord(t);
            State s = new State(r);
            readFields(in, s, false);
            close(s);
            if (into == null && (t.model.ndArray() || s.hasRequired)) {
                toCheck.add(r);
            }
            return r;
        }

        private DynamicList readList(ProtoInput in, DynamicType t, DynamicList into, String name) {
            if (++listDepth > limits.maxListDepth()) {
                throw new WireFormatException(WireFormatException.DEPTH_LIMIT, name,
                        "heterogeneous lists nested deeper than the limit of " + limits.maxListDepth() + " levels");
            }
            DynamicList list = into != null ? into : new DynamicList(t, 4);
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (tag >>> 3 != 1) {
                    in.skipField(tag);
                    continue;
                }
                expect(tag, ProtoOutput.LENGTH_DELIMITED, t.name() + ".elements");
                int outer = in.beginMessage(in.readLength());
                Object value = null;
                int alternative = -1;
                for (int et = in.readTag(); et != 0; et = in.readTag()) {
                    int a = (et >>> 3) - 1;
                    if (a < 0 || a >= t.fields.length) {
                        in.skipField(et);
                        continue;
                    }
                    FieldModel f = t.fields[a];
                    String alt = t.name() + "." + f.name();
                    Object merge = a == alternative ? value : null;   // the same member again merges; another replaces
                    if (t.targets[a] == null) {
                        value = readSingle(in, et, f.scalar(), alt, merge);
                    } else {
                        expect(et, ProtoOutput.LENGTH_DELIMITED, alt);
                        int o = in.beginMessage(in.readLength());
                        value = readValue(in, t.targets[a], merge, alt);
                        in.endMessage(o);
                    }
                    alternative = a;
                }
                in.endMessage(outer);
                if (value == null) {
                    throw WireFormatException.malformed(t.name() + ".elements", "element " + list.size()
                            + " has none of its oneof set");
                }
                list.add(value);
            }
            listDepth--;
            return list;
        }

        /** A single scalar; a DateTime message merges into {@code previous}. */
        private Object readSingle(ProtoInput in, int tag, ScalarType scalar, String name, Object previous) {
            switch (scalar) {
                case BOOLEAN -> {
                    expect(tag, ProtoOutput.VARINT, name);
                    return in.readBool();
                }
                case BYTE -> {
                    expect(tag, ProtoOutput.VARINT, name);
                    return (byte) inRange(in.readVarint32(), Byte.MIN_VALUE, Byte.MAX_VALUE, name);
                }
                case SHORT -> {
                    expect(tag, ProtoOutput.VARINT, name);
                    return (short) inRange(in.readVarint32(), Short.MIN_VALUE, Short.MAX_VALUE, name);
                }
                case INT -> {
                    expect(tag, ProtoOutput.VARINT, name);
                    return in.readVarint32();
                }
                case LONG -> {
                    expect(tag, ProtoOutput.VARINT, name);
                    return in.readVarint64();
                }
                case FLOAT -> {
                    expect(tag, ProtoOutput.FIXED32, name);
                    return in.readFloat();
                }
                case DOUBLE -> {
                    expect(tag, ProtoOutput.FIXED64, name);
                    return in.readDouble();
                }
                case STRING -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    return readString(in, name);
                }
                case BYTES -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    return in.readBytes();
                }
                case DATE_TIME -> {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                    int outer = in.beginMessage(in.readLength());
                    OffsetDateTime v = readDateTime(in, (OffsetDateTime) previous, name);
                    in.endMessage(outer);
                    return v;
                }
            }
            throw new AssertionError(scalar);
        }

        private OffsetDateTime readDateTime(ProtoInput in, OffsetDateTime previous, String name) {
            long seconds = previous == null ? 0 : previous.toEpochSecond();
            long nanos = previous == null ? 0 : previous.getNano();
            long offset = previous == null ? 0 : previous.getOffset().getTotalSeconds();
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int number = tag >>> 3;
                if (number >= 1 && number <= 3) {
                    expect(tag, ProtoOutput.VARINT, name);
                    long v = in.readVarint64();
                    if (number == 1) {
                        seconds = v;
                    } else if (number == 2) {
                        nanos = (int) v;
                    } else {
                        offset = (int) v;
                    }
                } else {
                    in.skipField(tag);
                }
            }
            try {
                if (nanos < 0 || nanos > 999_999_999) {
                    throw new DateTimeException("nanoseconds " + nanos + " outside 0 to 999,999,999");
                }
                OffsetDateTime v = OffsetDateTime.ofInstant(Instant.ofEpochSecond(seconds, nanos),
                        ZoneOffset.ofTotalSeconds((int) offset));
                String problem = XsdValues.dateTimeProblem(v);
                if (problem != null) {
                    throw new DateTimeException(problem);
                }
                return v;
            } catch (DateTimeException e) {
                throw WireFormatException.malformed(name, "not a date-time: " + e.getMessage());
            }
        }

        private String readString(ProtoInput in, String name) {
            String s = in.readString();
            String problem = XsdValues.stringProblem(s);
            if (problem != null) {
                throw WireFormatException.malformed(name, problem);
            }
            return s;
        }

        private void readNulls(ProtoInput in, State s) {
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int number = tag >>> 3;
                if (number == 1) {
                    readVarints(in, tag, s.nullLists(), "sb_nulls.lists");
                } else if (number == 2) {
                    expect(tag, ProtoOutput.LENGTH_DELIMITED, "sb_nulls.elements");
                    int outer = in.beginMessage(in.readLength());
                    int field = 0;
                    IntList positions = new IntList();
                    for (int et = in.readTag(); et != 0; et = in.readTag()) {
                        if (et >>> 3 == 1) {
                            expect(et, ProtoOutput.VARINT, "sb_nulls.elements.field");
                            field = in.readVarint32();
                        } else if (et >>> 3 == 2) {
                            readVarints(in, et, positions, "sb_nulls.elements.positions");
                        } else {
                            in.skipField(et);
                        }
                    }
                    in.endMessage(outer);
                    s.nullElements(field, positions);
                } else {
                    in.skipField(tag);
                }
            }
        }

        private void fix(Object holder, int slot, int number, DynamicType target) {
            if (fixCount == fixNumbers.length) {
                int n = fixCount * 2;
                fixHolders = Arrays.copyOf(fixHolders, n);
                fixSlots = Arrays.copyOf(fixSlots, n);
                fixNumbers = Arrays.copyOf(fixNumbers, n);
                fixTypes = Arrays.copyOf(fixTypes, n);
            }
            fixHolders[fixCount] = holder;
            fixSlots[fixCount] = slot;
            fixNumbers[fixCount] = number;
            fixTypes[fixCount++] = target;
        }

        /** Ends one occurrence of a message: repeated values in place, defaults for what was absent, nulls applied. */
        @SuppressWarnings("unchecked")
        private void close(State s) {
            DynamicRecord r = s.record;
            DynamicType t = r.type;
            for (int i = 0; i < t.fields.length; i++) {
                FieldModel f = t.fields[i];
                if (f.repeated() && !(f.isScalar() && f.scalar() == ScalarType.BYTE)) {
                    Object acc = s.acc == null ? null : s.acc[i];
                    if (acc != null || r.values[i] == null && !s.nullListed(i + 1)) {
                        r.values[i] = repeatedValue(f, t.targets[i], r.values[i], acc, r, i);
                    }
                } else if (r.values[i] == null && DynamicType.requiredPrimitive(f)) {
                    r.values[i] = zero(f.scalar());
                }
                if (DynamicType.requiredReference(f)) {
                    s.hasRequired = true;
                }
            }
            if (s.nullLists != null) {
                for (int k = 0; k < s.nullLists.n; k++) {
                    int number = s.nullLists.a[k];
                    int i = repeatedIndex(t, number, "sb_nulls.lists");
                    Object v = r.values[i];
                    if (v != null && (v instanceof List<?> l ? !l.isEmpty() : java.lang.reflect.Array.getLength(v) > 0)) {
                        throw WireFormatException.malformed(t.name() + "." + t.fields[i].name(),
                                "listed as null in sb_nulls, but it holds elements");
                    }
                    r.values[i] = null;
                }
            }
            if (s.nullElements != null) {
                for (Map.Entry<Integer, IntList> e : s.nullElements.entrySet()) {
                    int i = repeatedIndex(t, e.getKey(), "sb_nulls.elements");
                    String name = t.name() + "." + t.fields[i].name();
                    if (!(r.values[i] instanceof List<?>) || t.fields[i].graphReference()) {
                        throw WireFormatException.malformed(name, "sb_nulls names null elements of a field that"
                                + " cannot hold them");
                    }
                    List<Object> list = (List<Object>) r.values[i];
                    IntList positions = e.getValue();
                    for (int k = 0; k < positions.n; k++) {
                        int p = positions.a[k];
                        if (p < 0 || p >= list.size()) {
                            throw WireFormatException.malformed(name, "sb_nulls names element " + p + " of "
                                    + list.size());
                        }
                        if (list.set(p, null) instanceof DynamicRecord gone) {
                            nulled.add(gone);
                        }
                    }
                }
            }
            s.acc = null;
        }

        private int repeatedIndex(DynamicType t, int number, String what) {
            int i = number - 1;
            if (i < 0 || i >= t.fields.length || !t.fields[i].repeated()
                    || t.fields[i].isScalar() && t.fields[i].scalar() == ScalarType.BYTE) {
                throw WireFormatException.malformed(t.name() + "." + what, "field number " + number
                        + " is not a repeated field of " + t.name());
            }
            return i;
        }

        /** A repeated field's value: what it held before (an earlier occurrence) and what this one added. */
        private Object repeatedValue(FieldModel f, DynamicType target, Object before, Object acc, DynamicRecord r, int i) {
            if (f.graphReference()) {
                IntList numbers = acc == null ? new IntList() : (IntList) acc;
                List<Object> list = before == null ? new ArrayList<>(numbers.n) : castList(before);
                for (int k = 0; k < numbers.n; k++) {
                    fix(list, list.size(), numbers.a[k], target);
                    list.add(null);
                }
                return list;
            }
            if (target != null || !f.scalar().isPrimitive()) {
                List<Object> list = before == null ? new ArrayList<>() : castList(before);
                if (acc != null) {
                    list.addAll(castList(acc));
                }
                return list;
            }
            String name = r.type.name() + "." + f.name();
            switch (f.scalar()) {
                case BOOLEAN -> {
                    IntList a = acc == null ? new IntList() : (IntList) acc;
                    boolean[] old = before == null ? new boolean[0] : (boolean[]) before;
                    boolean[] v = Arrays.copyOf(old, old.length + a.n);
                    for (int k = 0; k < a.n; k++) {
                        v[old.length + k] = a.a[k] != 0;
                    }
                    return v;
                }
                case SHORT -> {
                    IntList a = acc == null ? new IntList() : (IntList) acc;
                    short[] old = before == null ? new short[0] : (short[]) before;
                    short[] v = Arrays.copyOf(old, old.length + a.n);
                    for (int k = 0; k < a.n; k++) {
                        v[old.length + k] = (short) inRange(a.a[k], Short.MIN_VALUE, Short.MAX_VALUE, name);
                    }
                    return v;
                }
                case INT -> {
                    IntList a = acc == null ? new IntList() : (IntList) acc;
                    int[] old = before == null ? new int[0] : (int[]) before;
                    int[] v = Arrays.copyOf(old, old.length + a.n);
                    System.arraycopy(a.a, 0, v, old.length, a.n);
                    return v;
                }
                case FLOAT -> {
                    IntList a = acc == null ? new IntList() : (IntList) acc;
                    float[] old = before == null ? new float[0] : (float[]) before;
                    float[] v = Arrays.copyOf(old, old.length + a.n);
                    for (int k = 0; k < a.n; k++) {
                        v[old.length + k] = Float.intBitsToFloat(a.a[k]);
                    }
                    return v;
                }
                case LONG -> {
                    LongList a = acc == null ? new LongList() : (LongList) acc;
                    long[] old = before == null ? new long[0] : (long[]) before;
                    long[] v = Arrays.copyOf(old, old.length + a.n);
                    System.arraycopy(a.a, 0, v, old.length, a.n);
                    return v;
                }
                case DOUBLE -> {
                    DoubleList a = acc == null ? new DoubleList() : (DoubleList) acc;
                    double[] old = before == null ? new double[0] : (double[]) before;
                    if (old.length == 0 && a.count[0] == a.a.length) {
                        return a.a;
                    }
                    double[] v = Arrays.copyOf(old, old.length + a.count[0]);
                    System.arraycopy(a.a, 0, v, old.length, a.count[0]);
                    return v;
                }
                default -> throw new AssertionError(f.scalar());
            }
        }

        private void check(DynamicRecord r) {
            DynamicType t = r.type;
            for (int i = 0; i < t.fields.length; i++) {
                if (r.values[i] == null && DynamicType.requiredReference(t.fields[i])) {
                    throw WireFormatException.malformed(t.name() + "." + t.fields[i].name(), "required, but absent");
                }
            }
            if (t.model.ndArray()) {
                String problem = DynamicRecord.ndInconsistency(r);
                if (problem != null) {
                    throw WireFormatException.malformed(t.name(), "n-d array " + t.name() + ": " + problem);
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Object> castList(Object o) {
        return (List<Object>) o;
    }

    private static Object zero(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> Boolean.FALSE;
            case BYTE -> (byte) 0;
            case SHORT -> (short) 0;
            case INT -> 0;
            case LONG -> 0L;
            case FLOAT -> 0f;
            case DOUBLE -> 0.0;
            default -> throw new AssertionError(s);
        };
    }

    private static int inRange(int v, int min, int max, String name) {
        if (v < min || v > max) {
            throw WireFormatException.malformed(name, v + " is outside " + min + " to " + max);
        }
        return v;
    }

    private static void expect(int tag, int wireType, String name) {
        if ((tag & 7) != wireType) {
            throw WireFormatException.malformed(name, "wire type " + (tag & 7) + ", expected " + wireType);
        }
    }

    /** Varints, packed or one per tag, into {@code into}. */
    private static void readVarints(ProtoInput in, int tag, IntList into, String name) {
        if ((tag & 7) == ProtoOutput.VARINT) {
            into.add(in.readVarint32());
            return;
        }
        expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
        int outer = in.beginMessage(in.readLength());
        while (!in.atEnd()) {
            into.add(in.readVarint32());
        }
        in.endMessage(outer);
    }

    private static void readFixed32s(ProtoInput in, int tag, IntList into, String name) {
        if ((tag & 7) == ProtoOutput.FIXED32) {
            into.add(in.readFixed32());
            return;
        }
        expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
        int length = in.readLength();
        if (length % 4 != 0) {
            throw WireFormatException.malformed(name, "a packed field of " + length + " bytes, not a multiple of 4");
        }
        for (int k = 0; k < length / 4; k++) {
            into.add(in.readFixed32());
        }
    }

    private static void readFixed64s(ProtoInput in, int tag, LongList into, String name) {
        if ((tag & 7) == ProtoOutput.FIXED64) {
            into.add(in.readFixed64());
            return;
        }
        expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
        int length = in.readLength();
        if (length % 8 != 0) {
            throw WireFormatException.malformed(name, "a packed field of " + length + " bytes, not a multiple of 8");
        }
        for (int k = 0; k < length / 8; k++) {
            into.add(in.readFixed64());
        }
    }

    private static final class LongList {
        long[] a = new long[4];
        int n;

        void add(long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }
    }

    private static final class DoubleList {
        double[] a = new double[0];
        final int[] count = new int[1];
    }

    /** What one occurrence of a message has read so far, beyond its record's values. */
    private static final class State {
        final DynamicRecord record;
        /** Per field, the values of a repeated field read in this occurrence. */
        Object[] acc;
        IntList nullLists;
        Map<Integer, IntList> nullElements;
        boolean hasRequired;

        State(DynamicRecord record) {
            this.record = record;
        }

        void seen(int i) {
            if (acc == null && record.type.fields[i].repeated()) {
                acc = new Object[record.type.fields.length];
            }
        }

        boolean hasNulls() {
            for (FieldModel f : record.type.fields) {
                if (f.repeated() && !(f.isScalar() && f.scalar() == ScalarType.BYTE)) {
                    return true;
                }
            }
            return false;
        }

        IntList ints(int i) {
            return (IntList) (acc[i] == null ? acc[i] = new IntList() : acc[i]);
        }

        LongList longs(int i) {
            return (LongList) (acc[i] == null ? acc[i] = new LongList() : acc[i]);
        }

        List<Object> objects(int i) {
            return castList(acc[i] == null ? acc[i] = new ArrayList<>() : acc[i]);
        }

        void doubles(int i, ProtoInput in, int tag, String name) {
            DoubleList d = (DoubleList) (acc[i] == null ? acc[i] = new DoubleList() : acc[i]);
            if ((tag & 7) != ProtoOutput.LENGTH_DELIMITED && (tag & 7) != ProtoOutput.FIXED64) {
                throw WireFormatException.malformed(name, "wire type " + (tag & 7) + " for a repeated double");
            }
            d.a = in.appendDoubles(tag, d.a, d.count);
        }

        IntList nullLists() {
            return nullLists == null ? nullLists = new IntList() : nullLists;
        }

        void nullElements(int field, IntList positions) {
            if (nullElements == null) {
                nullElements = new HashMap<>();
            }
            IntList all = nullElements.computeIfAbsent(field, k -> new IntList());
            for (int k = 0; k < positions.n; k++) {
                all.add(positions.a[k]);
            }
        }

        boolean nullListed(int number) {
            if (nullLists != null) {
                for (int k = 0; k < nullLists.n; k++) {
                    if (nullLists.a[k] == number) {
                        return true;
                    }
                }
            }
            return false;
        }
    }
}

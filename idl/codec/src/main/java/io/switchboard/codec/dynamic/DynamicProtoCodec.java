package io.switchboard.codec.dynamic;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoArrays;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoNulls;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.codec.proto.ProtoReadState;
import io.switchboard.codec.proto.ProtoWriteState;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import java.time.OffsetDateTime;
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

    private final DynamicInterface iface;
    /** Per operation message: the linked types its node table holds, in schema order (see the convention). */
    private final Map<DynamicType, List<DynamicType>> nodeTables = new HashMap<>();
    /** Every type a message reaches, numbered for the reference slots of {@link ProtoReadState#ref}. */
    private final Map<DynamicType, Integer> slotOfType = new HashMap<>();
    private final List<DynamicType> typesBySlot = new ArrayList<>();

    DynamicProtoCodec(DynamicInterface iface) {
        this.iface = iface;
        for (DynamicType message : iface.messages()) {
            nodeTables.put(message, linkedTypesReachableFrom(message));
            ArrayDeque<DynamicType> work = new ArrayDeque<>(List.of(message));
            while (!work.isEmpty()) {
                DynamicType t = work.poll();
                if (slotOfType.putIfAbsent(t, typesBySlot.size()) == null) {
                    typesBySlot.add(t);
                    for (DynamicType target : t.targets) {
                        if (target != null) {
                            work.add(target);
                        }
                    }
                }
            }
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
        return new Reader(t, limits, expectedBytes);
    }

    // ---------------------------------------------------------------- writing

    /**
     * One message on its way out: after the size pass ({@link #size()}), {@link #writePart} writes
     * it in parts. The same traversal runs twice, once counting and once writing, through the
     * {@link ProtoWriteState} generated codecs use: it keeps the nested messages' lengths from the
     * size pass for the write pass, numbers the linked nodes and counts how deeply lists nest.
     */
    public final class Writer extends ProtoCodec.Writer {
        private final DynamicRecord message;
        private final List<DynamicType> tableTypes;
        private final ProtoWriteState w;
        private List<Object> nodes = List.of();
        private ProtoOutput out;   // null in the size pass
        private long size;
        private int[] openSlots = new int[16];
        private long[] openStarts = new long[16];
        private int open;
        /** The root's null repeated fields and elements, found in the size pass, written at the end. */
        private ProtoNulls rootNulls;
        /** Where the next part starts: a root field and an element of it, then a node, then sb_nulls. */
        private int nextField;
        private int nextElement;
        private int nextNode;
        private boolean nullsWritten;
        private boolean started;

        private Writer(DynamicRecord message, int maxNodes) {
            this.message = message;
            this.tableTypes = nodeTables.get(message.type);
            this.w = new ProtoWriteState(maxNodes);
            if (message.type.reachesGraph) {
                nodes = w.collectNodes(message);
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
            if (finished()) {
                w.release();   // the node table's arrays, for the next message
                nodes = List.of();
            }
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
            if (!protoRepeated(f) || v == null) {
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
        private ProtoNulls emitFields(DynamicRecord r) {
            ProtoNulls nulls = null;
            for (int i = 0; i < r.type.fields.length; i++) {
                nulls = emitField(r, i, 0, Integer.MAX_VALUE, nulls);
            }
            return nulls;
        }

        /** Field {@code i} of {@code r}; of a repeated field, only the elements {@code [from, to)}. */
        private ProtoNulls emitField(DynamicRecord r, int i, int from, int to, ProtoNulls nulls) {
            DynamicType t = r.type;
            FieldModel f = t.fields[i];
            int number = i + 1;
            Object v = from == 0 ? DynamicRecord.check(t, i, r.values[i]) : r.values[i];
            String name = t.qualified[i];
            if (v == null) {
                if (DynamicType.requiredReference(f) || DynamicType.requiredPrimitive(f)) {
                    throw WireFormatException.malformed(name, "required, but it is not set");
                }
                if (protoRepeated(f)) {
                    nulls = ProtoNulls.list(nulls, number);
                }
                return nulls;
            }
            DynamicType target = t.targets[i];
            if (f.graphReference()) {
                if (f.repeated()) {
                    List<?> refs = (List<?>) v;
                    to = Math.min(to, refs.size());
                    if (to > from) {
                        int length = 0;
                        for (int k = from; k < to; k++) {
                            if (refs.get(k) == null) {
                                throw WireFormatException.malformed(name, "a list of linked nodes holds no nulls");
                            }
                            length += ProtoOutput.varint32Size(w.number(refs.get(k)));
                        }
                        if (out == null) {
                            size += ProtoWriteState.delimitedSize(number, length);
                        } else {
                            out.writeLengthDelimited(number, length);
                            for (int k = from; k < to; k++) {
                                out.writeVarint32(w.number(refs.get(k)));
                            }
                        }
                    }
                } else {
                    int n = w.number(v);
                    if (out == null) {
                        size += ProtoWriteState.uint32Size(number, n);
                    } else {
                        out.writeUInt32(number, n);
                    }
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
                            nulls = ProtoNulls.element(nulls, number, k);
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
                        throw WireFormatException.malformed(target.name(), "n-d array " + problem);
                    }
                }
                emitStructBody(r);
            }
        }

        private void emitList(DynamicList list) {
            DynamicType t = list.type;
            if (out == null) {
                w.enterList(t.name());
            }
            for (Object e : list) {
                int a = e == null ? -1 : t.alternativeOf(e);
                if (a < 0) {
                    throw WireFormatException.malformed(t.name(), "a heterogeneous list holds "
                            + (e == null ? "no nulls" : "no " + DynamicRecord.describe(e)));
                }
                begin(1);
                if (t.targets[a] == null) {
                    emitSingle(t.fields[a], a + 1, e, t.qualified[a], false);
                } else {
                    begin(a + 1);
                    emitValue(t.targets[a], e);
                    end();
                }
                end();
            }
            if (out == null) {
                w.leaveList();
            }
        }

        /** One scalar; {@code implicit}: a plain proto3 field, not written when it holds the default. */
        private void emitSingle(FieldModel f, int number, Object v, String name, boolean implicit) {
            switch (f.scalar()) {
                case BOOLEAN -> {
                    boolean b = (Boolean) v;
                    if (b || !implicit) {
                        if (out == null) {
                            size += ProtoWriteState.tagSize(number) + 1;
                        } else {
                            out.writeBool(number, b);
                        }
                    }
                }
                case BYTE, SHORT, INT -> {
                    int n = ((Number) v).intValue();
                    if (n != 0 || !implicit) {
                        if (out == null) {
                            size += ProtoWriteState.int32Size(number, n);
                        } else {
                            out.writeInt32(number, n);
                        }
                    }
                }
                case LONG -> {
                    long n = (Long) v;
                    if (n != 0 || !implicit) {
                        if (out == null) {
                            size += ProtoWriteState.int64Size(number, n);
                        } else {
                            out.writeInt64(number, n);
                        }
                    }
                }
                case FLOAT -> {
                    float x = (Float) v;
                    if (Float.floatToRawIntBits(x) != 0 || !implicit) {
                        if (out == null) {
                            size += ProtoWriteState.tagSize(number) + 4;
                        } else {
                            out.writeFloat(number, x);
                        }
                    }
                }
                case DOUBLE -> {
                    double x = (Double) v;
                    if (Double.doubleToRawLongBits(x) != 0 || !implicit) {
                        if (out == null) {
                            size += ProtoWriteState.tagSize(number) + 8;
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

        private ProtoNulls emitRepeated(FieldModel f, int number, Object v, int from, int to, String name, ProtoNulls nulls) {
            if (f.scalar() == ScalarType.BYTE) {
                bytes(number, (byte[]) v);
                return nulls;
            }
            int end = Math.min(to, v instanceof List<?> l ? l.size() : java.lang.reflect.Array.getLength(v));
            if (f.scalar().isPrimitive()) {
                if (end > from) {
                    if (out == null) {
                        int width = f.scalar() == ScalarType.BOOLEAN ? 1 : elementWidth(f);
                        size += ProtoWriteState.delimitedSize(number, (long) (end - from) * width);
                    } else {
                        switch (f.scalar()) {
                            case BOOLEAN -> out.writePackedBools(number, (boolean[]) v, from, end);
                            case SHORT -> out.writePackedShorts(number, (short[]) v, from, end);
                            case INT -> out.writePackedSFixed32(number, (int[]) v, from, end);
                            case LONG -> out.writePackedSFixed64(number, (long[]) v, from, end);
                            case FLOAT -> out.writePackedFloats(number, (float[]) v, from, end);
                            case DOUBLE -> out.writePackedDoubles(number, (double[]) v, from, end);
                            default -> throw new AssertionError(f.scalar());
                        }
                    }
                }
                return nulls;
            }
            List<?> items = (List<?>) v;
            for (int k = from; k < end; k++) {
                Object item = items.get(k);
                if (item == null) {
                    nulls = ProtoNulls.element(nulls, number, k);
                    if (out == null) {
                        size += ProtoWriteState.delimitedSize(number, 0);   // the default: an empty string, bytes or DateTime
                    } else {
                        out.writeLengthDelimited(number, 0);
                    }
                } else if (f.scalar() == ScalarType.STRING) {
                    string(number, (String) item, name);
                } else if (f.scalar() == ScalarType.BYTES) {
                    bytes(number, (byte[]) item);
                } else {
                    dateTime(number, (OffsetDateTime) item, name);
                }
            }
            return nulls;
        }

        private void emitNulls(ProtoNulls nulls) {
            if (nulls == null) {
                return;
            }
            if (out == null) {
                size += nulls.fieldSize();
            } else {
                nulls.write(out);
            }
        }

        // ---- the primitives, counting or writing

        private void string(int number, String s, String name) {
            if (out == null) {
                size += ProtoWriteState.stringSize(number, s, name);
            } else {
                out.writeString(number, s);
            }
        }

        private void bytes(int number, byte[] b) {
            if (out == null) {
                size += ProtoWriteState.delimitedSize(number, b.length);
            } else {
                out.writeBytes(number, b, 0, b.length);
            }
        }

        private void dateTime(int number, OffsetDateTime v, String name) {
            if (out == null) {
                size += ProtoWriteState.delimitedSize(number, ProtoWriteState.dateTimeBodySize(v, name));
            } else {
                out.writeDateTime(number, v);
            }
        }

        /** Opens a nested message field: its length comes from the size pass. */
        private void begin(int number) {
            if (out != null) {
                out.writeLengthDelimited(number, w.nextSize());
                return;
            }
            size += ProtoWriteState.tagSize(number);
            if (open == openSlots.length) {
                openSlots = Arrays.copyOf(openSlots, open * 2);
                openStarts = Arrays.copyOf(openStarts, open * 2);
            }
            openSlots[open] = w.reserve();
            openStarts[open++] = size;
        }

        private void end() {
            if (out != null) {
                return;
            }
            open--;
            int length = w.sized(openSlots[open], size - openStarts[open]);
            size += ProtoOutput.varint32Size(length);
        }
    }

    /** A repeated field on the wire (every list but a byte array, which is one bytes field). */
    static boolean protoRepeated(FieldModel f) {
        return f.repeated() && !(f.isScalar() && f.scalar() == ScalarType.BYTE);
    }

    // ---------------------------------------------------------------- reading

    /**
     * One message coming in: {@link #readPart} for each part in order (their protobuf merge is the
     * message), then {@link #finish}, which resolves node numbers and checks what only the whole
     * message can show. It reads through the state generated readers use: {@link ProtoReadState}
     * (node table, references, limits, strings, date-times), {@link ProtoArrays} (packed numbers,
     * copied in bulk) and {@link ProtoNulls}.
     */
    public final class Reader extends ProtoCodec.Reader implements ProtoReadState.Resolver {
        private final DynamicType type;
        private final List<DynamicType> tableTypes;
        private final ProtoReadState r;
        private final Occurrence root;

        private Reader(DynamicType type, MessageLimits limits, long expectedBytes) {
            super(limits);
            this.type = type;
            this.tableTypes = nodeTables.get(type);
            this.r = new ProtoReadState(limits, expectedBytes);
            this.root = new Occurrence(new DynamicRecord(type), true);
        }

        @Override
        protected void merge(ProtoInput in) {
            try {
                readFields(in, root);
            } catch (WireFormatException e) {
                throw r.named(e);
            }
        }

        /** The message, once every part is read. */
        @Override
        protected DynamicRecord complete() {
            try {
                close(root);
                requireAbsent(root.record, false);
                r.resolve(this);
            } catch (WireFormatException e) {
                throw r.named(e);
            }
            return root.record;
        }

        // ---- references, set once the node table is whole (ProtoReadState.Resolver)

        @Override
        public void set(Object holder, int slot, Object node) {
            DynamicRecord owner = (DynamicRecord) holder;
            int i = slot & 0xFFFF;
            DynamicType target = owner.type.targets[i];
            if (node == null) {   // a singular reference a later occurrence said null (refNull)
                owner.values[i] = null;
                return;
            }
            if (!(node instanceof DynamicRecord n) || n.type != target) {
                throw WireFormatException.malformed(owner.type.qualified[i], "refers to a node of type "
                        + ((DynamicRecord) node).type.name());
            }
            if (owner.type.fields[i].repeated()) {
                if (!(owner.values[i] instanceof List<?> l)) {
                    throw WireFormatException.malformed(owner.type.qualified[i], "a null list holds references");
                }
                castList(l).add(node);
            } else {
                owner.values[i] = node;
            }
        }

        @Override
        public String field(int slot) {
            return typesBySlot.get(slot >>> 16).qualified[slot & 0xFFFF];
        }

        @Override
        public boolean isSet(Object holder, int slot) {
            return ((DynamicRecord) holder).values[slot & 0xFFFF] != null;
        }

        // ---- the fields

        /** The fields of one occurrence of a message, merged into {@code s}'s record. */
        private void readFields(ProtoInput in, Occurrence s) {
            DynamicType t = s.record.type;
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                int number = tag >>> 3;
                if (number >= 1 && number <= t.fields.length) {
                    readField(in, s, number - 1, tag);
                } else if (number == NODES_NUMBER && s == root && !tableTypes.isEmpty()) {
                    r.at(t.name() + ".sb_nodes");
                    readNode(in, tag);
                } else if (number == ProtoNulls.FIELD && s.hasNulls()) {
                    r.at(t.name() + ".sb_nulls");
                    ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, t.name() + ".sb_nulls");
                    s.nulls = ProtoNulls.read(s.nulls, in, r);
                } else {
                    in.skipField(tag);
                }
            }
            r.at(null);
        }

        /** One entry of the node table: a new node, numbered before its fields are read. */
        private void readNode(ProtoInput in, int tag) {
            int index = r.nodeCount();
            try {
                ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, type.name() + ".sb_nodes");
                if (tableTypes.size() == 1) {
                    DynamicRecord node = new DynamicRecord(tableTypes.get(0));
                    r.addNode(node);
                    readStruct(in, node, false);
                    return;
                }
                String name = type.name() + ".sb_nodes";
                int outer = in.beginMessage(in.readLength());
                DynamicRecord node = null;
                for (int t = in.readTag(); t != 0; t = in.readTag()) {
                    int k = (t >>> 3) - 1;
                    if (k >= 0 && k < tableTypes.size()) {
                        if (node != null) {
                            throw WireFormatException.malformed(name, "a node entry with two values");
                        }
                        ProtoReadState.expect(t, ProtoOutput.LENGTH_DELIMITED, name);
                        node = new DynamicRecord(tableTypes.get(k));
                        r.addNode(node);
                        readStruct(in, node, false);
                    } else {
                        in.skipField(t);
                    }
                }
                in.endMessage(outer);
                if (node == null) {
                    throw WireFormatException.malformed(name, "a node entry with no value");
                }
            } catch (WireFormatException e) {
                throw e.inNode(index);
            }
        }

        private void readField(ProtoInput in, Occurrence s, int i, int tag) {
            DynamicRecord rec = s.record;
            DynamicType t = rec.type;
            FieldModel f = t.fields[i];
            String name = t.qualified[i];
            r.at(name);
            DynamicType target = t.targets[i];
            if (f.graphReference()) {
                if (f.repeated()) {
                    ProtoArrays.Varints refs = new ProtoArrays.Varints();
                    refs.append(in, tag, r);
                    for (int k = 0; k < refs.size(); k++) {
                        r.ref(rec, slot(t, i), refs.get(k));
                    }
                } else {
                    ProtoReadState.expect(tag, ProtoOutput.VARINT, name);
                    int number = in.readVarint32();
                    if (number != 0) {
                        r.ref(rec, slot(t, i), number);
                    } else {
                        r.refNull(rec, slot(t, i));   // in order with the references: a later occurrence wins
                    }
                }
                return;
            }
            if (target != null) {
                ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                if (f.repeated()) {
                    castList(rec.values[i]).add(readValue(in, target, null, true));
                } else {
                    rec.values[i] = readValue(in, target, rec.values[i], false);
                }
                return;
            }
            if (!f.repeated()) {
                rec.values[i] = readSingle(in, tag, f.scalar(), name, rec.values[i]);
            } else if (f.scalar() == ScalarType.BYTE) {
                ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                rec.values[i] = in.readBytes();   // a singular bytes field: the last occurrence is the value
            } else if (packed(f)) {
                s.append(i, in, tag, r);
            } else {
                ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, name);
                List<Object> list = castList(rec.values[i]);
                switch (f.scalar()) {
                    case STRING -> list.add(ProtoReadState.readString(in, name));
                    case BYTES -> list.add(in.readBytes());
                    default -> list.add(dateTimeField(in, null, name));
                }
            }
        }

        /** A struct or list value whose tag is read; merged into {@code into} if given. */
        private Object readValue(ProtoInput in, DynamicType target, Object into, boolean element) {
            if (target.heterogeneousList()) {
                return readList(in, target, (DynamicList) into);
            }
            return readStruct(in, into != null ? (DynamicRecord) into : new DynamicRecord(target), element);
        }

        /**
         * One occurrence of a struct (its tag read), merged into {@code into}. An element of a
         * repeated field ({@code element}) is checked by its owner once null elements are known.
         */
        private DynamicRecord readStruct(ProtoInput in, DynamicRecord into, boolean element) {
            int outer = in.beginMessage(in.readLength());
            Occurrence s = new Occurrence(into, false);
            readFields(in, s);
            in.endMessage(outer);
            close(s);
            if (!element) {
                checkStruct(into);
            }
            return into;
        }

        private DynamicList readList(ProtoInput in, DynamicType t, DynamicList into) {
            int outer = in.beginMessage(in.readLength());
            r.enterList(t.name());
            DynamicList list = into != null ? into : new DynamicList(t, 4);
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (tag >>> 3 != 1) {
                    in.skipField(tag);
                    continue;
                }
                ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, t.name() + ".elements");
                int element = in.beginMessage(in.readLength());
                Object value = null;
                for (int et = in.readTag(); et != 0; et = in.readTag()) {
                    int a = (et >>> 3) - 1;
                    if (a < 0 || a >= t.fields.length) {
                        in.skipField(et);
                        continue;
                    }
                    String alt = t.qualified[a];
                    // the same alternative again merges into the value (a message) or replaces it; another replaces it
                    Object merge = value != null && t.alternativeOf(value) == a ? value : null;
                    if (t.targets[a] == null) {
                        value = readSingle(in, et, t.fields[a].scalar(), alt, merge);
                    } else {
                        ProtoReadState.expect(et, ProtoOutput.LENGTH_DELIMITED, alt);
                        value = readValue(in, t.targets[a], merge, false);
                    }
                }
                in.endMessage(element);
                if (value == null) {
                    throw WireFormatException.malformed(t.name() + ".elements", "an element with no alternative set");
                }
                list.add(value);
            }
            r.leaveList();
            in.endMessage(outer);
            return list;
        }

        /** A single scalar; a DateTime message merges into {@code previous}. */
        private Object readSingle(ProtoInput in, int tag, ScalarType scalar, String name, Object previous) {
            ProtoReadState.expect(tag, wireType(scalar), name);
            return switch (scalar) {
                case BOOLEAN -> in.readBool();
                case BYTE -> ProtoReadState.toByte(in.readVarint32(), name);
                case SHORT -> ProtoReadState.toShort(in.readVarint32(), name);
                case INT -> in.readVarint32();
                case LONG -> in.readVarint64();
                case FLOAT -> in.readFloat();
                case DOUBLE -> in.readDouble();
                case STRING -> ProtoReadState.readString(in, name);
                case BYTES -> in.readBytes();
                case DATE_TIME -> dateTimeField(in, (OffsetDateTime) previous, name);
            };
        }

        private OffsetDateTime dateTimeField(ProtoInput in, OffsetDateTime previous, String name) {
            int outer = in.beginMessage(in.readLength());
            OffsetDateTime v = ProtoReadState.readDateTime(in, previous, name);
            in.endMessage(outer);
            return v;
        }

        /** Ends one occurrence of a message: packed arrays in place, defaults for what was absent, nulls applied. */
        private void close(Occurrence s) {
            DynamicRecord rec = s.record;
            DynamicType t = rec.type;
            for (int i = 0; i < t.fields.length; i++) {
                if (s.arrays != null && s.arrays[i] != null) {
                    rec.values[i] = s.array(i);
                } else if (rec.values[i] == null && packed(t.fields[i])) {
                    rec.values[i] = emptyArray(t.fields[i].scalar());   // absent: empty, unless sb_nulls says null
                } else if (rec.values[i] == null && DynamicType.requiredPrimitive(t.fields[i])) {
                    rec.values[i] = zero(t.fields[i].scalar());
                }
            }
            ProtoNulls nulls = s.nulls;
            if (nulls != null) {
                nulls.check(t.name(), t.repeatedNumbers, t.nullableElementNumbers);
                for (int i = 0; i < t.fields.length; i++) {
                    FieldModel f = t.fields[i];
                    if (!protoRepeated(f)) {
                        continue;
                    }
                    if (nullableElements(f)) {
                        nulls.applyTo(i + 1, castList(rec.values[i]), t.qualified[i]);
                    }
                    if (nulls.isNull(i + 1, rec.values[i], t.qualified[i])) {
                        rec.values[i] = null;
                    }
                }
            }
            for (int i = 0; i < t.fields.length; i++) {
                // the elements of a repeated struct field, now that null elements are known
                DynamicType target = t.targets[i];
                if (protoRepeated(t.fields[i]) && target != null && !t.fields[i].graphReference()
                        && !target.heterogeneousList() && rec.values[i] != null) {
                    for (Object e : castList(rec.values[i])) {
                        if (e != null) {
                            checkStruct((DynamicRecord) e);
                        }
                    }
                }
            }
            s.arrays = null;
        }

        /** The checks of a struct value that need it whole: required values present, an n-d array's shape. */
        private void checkStruct(DynamicRecord rec) {
            requireAbsent(rec, true);
            if (rec.type.model.ndArray()) {
                String problem = DynamicRecord.ndInconsistency(rec);
                if (problem != null) {
                    throw WireFormatException.malformed(rec.type.name(), "n-d array " + problem);
                }
            }
        }

        /** Refuses a required value that is absent; a reference is checked once references are resolved. */
        private void requireAbsent(DynamicRecord rec, boolean struct) {
            DynamicType t = rec.type;
            for (int i = 0; i < t.fields.length; i++) {
                if (!DynamicType.requiredReference(t.fields[i])) {
                    continue;
                }
                if (t.fields[i].graphReference()) {
                    r.required(rec, slot(t, i));
                } else if (rec.values[i] == null) {
                    throw WireFormatException.malformed(t.qualified[i], "required and not nillable, but absent");
                }
            }
        }
    }

    /** The reference slot of field {@code i} of {@code t}: the type's number and the field's index. */
    private int slot(DynamicType t, int i) {
        return slotOfType.get(t) << 16 | i;
    }

    /** The wire type of a single scalar. */
    private static int wireType(ScalarType s) {
        return switch (s) {
            case FLOAT -> ProtoOutput.FIXED32;
            case DOUBLE -> ProtoOutput.FIXED64;
            case STRING, BYTES, DATE_TIME -> ProtoOutput.LENGTH_DELIMITED;
            default -> ProtoOutput.VARINT;
        };
    }

    /** A repeated field whose elements may be null (a List of values that are not linked nodes). */
    static boolean nullableElements(FieldModel f) {
        return protoRepeated(f) && !packed(f) && !f.graphReference();
    }

    /** A primitive array sent packed: boolean, short, int, long, float, double. */
    private static boolean packed(FieldModel f) {
        return protoRepeated(f) && f.isScalar() && f.scalar().isPrimitive();
    }

    private static Object emptyArray(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> new boolean[0];
            case SHORT -> new short[0];
            case INT -> new int[0];
            case LONG -> new long[0];
            case FLOAT -> new float[0];
            case DOUBLE -> new double[0];
            default -> throw new AssertionError(s);
        };
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

    /** What one occurrence of a message has read so far, beyond its record's values. */
    private static final class Occurrence {
        final DynamicRecord record;
        /** A field of the operation message: its arrays are sized by the message's announced size. */
        final boolean topLevel;
        /** Per field, the accumulator of a packed number field ({@link ProtoArrays}), made at its first occurrence. */
        Object[] arrays;
        ProtoNulls nulls;

        Occurrence(DynamicRecord record, boolean topLevel) {
            this.record = record;
            this.topLevel = topLevel;
            DynamicType t = record.type;
            for (int i = 0; i < t.fields.length; i++) {
                // a List field starts empty, so that one of no elements reads back as empty, not null
                if (nullableElements(t.fields[i]) || protoRepeated(t.fields[i]) && t.fields[i].graphReference()) {
                    if (record.values[i] == null) {
                        record.values[i] = new ArrayList<>();
                    }
                }
            }
        }

        boolean hasNulls() {
            return record.type.repeatedNumbers.length > 0;
        }

        /** Appends one occurrence of packed number field {@code i}, starting from the values a merged-into record holds. */
        void append(int i, ProtoInput in, int tag, ProtoReadState r) {
            if (arrays == null) {
                arrays = new Object[record.type.fields.length];
            }
            Object a = arrays[i];
            if (a == null) {
                Object before = record.values[i];
                a = switch (record.type.fields[i].scalar()) {
                    case BOOLEAN -> { var x = new ProtoArrays.Booleans(topLevel); x.prepend((boolean[]) before); yield x; }
                    case SHORT -> { var x = new ProtoArrays.Ints(topLevel); x.prepend((short[]) before); yield x; }
                    case INT -> { var x = new ProtoArrays.Ints(topLevel); x.prepend((int[]) before); yield x; }
                    case LONG -> { var x = new ProtoArrays.Longs(topLevel); x.prepend((long[]) before); yield x; }
                    case FLOAT -> { var x = new ProtoArrays.Floats(topLevel); x.prepend((float[]) before); yield x; }
                    case DOUBLE -> { var x = new ProtoArrays.Doubles(topLevel); x.prepend((double[]) before); yield x; }
                    default -> throw new AssertionError(record.type.fields[i].scalar());
                };
                arrays[i] = a;
            }
            if (a instanceof ProtoArrays.Doubles x) {
                x.append(in, tag, r);
            } else if (a instanceof ProtoArrays.Ints x) {
                x.append(in, tag, r);
            } else if (a instanceof ProtoArrays.Longs x) {
                x.append(in, tag, r);
            } else if (a instanceof ProtoArrays.Floats x) {
                x.append(in, tag, r);
            } else {
                ((ProtoArrays.Booleans) a).append(in, tag, r);
            }
        }

        /** The array field {@code i} holds after this occurrence. */
        Object array(int i) {
            Object a = arrays[i];
            if (a instanceof ProtoArrays.Doubles x) {
                return x.toArray();
            } else if (a instanceof ProtoArrays.Ints x) {
                return record.type.fields[i].scalar() == ScalarType.SHORT ? x.toShorts(record.type.qualified[i]) : x.toArray();
            } else if (a instanceof ProtoArrays.Longs x) {
                return x.toArray();
            } else if (a instanceof ProtoArrays.Floats x) {
                return x.toArray();
            }
            return ((ProtoArrays.Booleans) a).toArray();
        }
    }
}

package io.switchboard.codec.dynamic;

import io.switchboard.idl.FieldModel;
import io.switchboard.idl.runtime.NdArray;
import io.switchboard.codec.NdArrays;
import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import io.switchboard.codec.binary.WireFormatException;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * The packed binary format ({@link io.switchboard.codec.binary.WireFormat}) for
 * {@link DynamicRecord}s, driven by the interface model: the same calls on {@link BinaryWriter}
 * and {@link BinaryReader} in the same order as a generated codec makes, so the bytes are the same.
 * Messages are told apart by element name ({@link #readMessage(BinaryReader, String, Class)}).
 *
 * <pre>{@code
 * BinaryCodec codec = DynamicInterface.fromSchema(schema).descriptor().codec(BinaryCodec.class);
 * byte[] bytes = BinaryWriter.toBytes(codec, request, 2_000_000);
 * DynamicRecord back = BinaryReader.fromBytes(codec, bytes, limits, "echoDoubles", DynamicRecord.class);
 * }</pre>
 */
public final class DynamicBinaryCodec extends BinaryCodec {
    private final DynamicInterface iface;

    DynamicBinaryCodec(DynamicInterface iface) {
        this.iface = iface;
    }

    @Override
    public void writeMessage(BinaryWriter out, Object message) {
        if (!(message instanceof DynamicRecord r) || !r.type.message()) {
            throw new IllegalArgumentException("not a message of " + iface.model().componentName() + ": "
                    + (message == null ? "null" : message instanceof DynamicRecord d ? d.type.name() : message.getClass().getName()));
        }
        out.writeNodes(r.type.reachesGraph ? r : null);
        writeFields(out, r);
    }

    @Override
    public Object readMessage(BinaryReader in, Class<?> type) {
        throw new IllegalArgumentException("messages of " + iface.model().componentName()
                + " read at run time are told apart by element name, not by class");
    }

    @Override
    public Object readMessage(BinaryReader in, String element, Class<?> type) {
        DynamicType t = iface.messageOrNull(element);
        if (t == null) {
            throw new IllegalArgumentException("not a message of " + iface.model().componentName() + ": " + element);
        }
        in.readNodes();
        DynamicRecord r = new DynamicRecord(t);
        readFields(in, r);
        return r;
    }

    @Override
    public int nodeType(Object node) {
        if (node instanceof DynamicRecord r && r.type.nodeType >= 0) {
            return r.type.nodeType;
        }
        throw new IllegalArgumentException("not a linked node of " + iface.model().componentName() + ": " + node);
    }

    @Override
    public void writeNode(BinaryWriter out, Object node) {
        writeFields(out, (DynamicRecord) node);
    }

    @Override
    public Object newNode(int type) {
        List<DynamicType> nodes = iface.nodeTypes();
        return type >= 0 && type < nodes.size() ? new DynamicRecord(nodes.get(type)) : null;
    }

    @Override
    public void readNode(BinaryReader in, Object node) {
        readFields(in, (DynamicRecord) node);
    }

    private void writeFields(BinaryWriter out, DynamicRecord r) {
        DynamicType t = r.type;
        for (int i = 0; i < t.fields.length; i++) {
            writeField(out, t, i, r.values[i]);
        }
    }

    /** A required field that is not nillable, of reference type: null is refused both ways, as in generated codecs. */
    static boolean requiredReference(FieldModel f) {
        return !f.optional() && !f.repeated() && !f.nillable() && !(f.isScalar() && f.scalar().isPrimitive());
    }

    @SuppressWarnings("unchecked")
    private void writeField(BinaryWriter out, DynamicType owner, int i, Object v) {
        FieldModel f = owner.fields[i];
        DynamicRecord.check(owner, i, v);   // a value set around set(), e.g. into a list afterwards
        if (requiredReference(f)) {
            out.required(v, owner.name() + "." + f.name());
        }
        if (f.graphReference()) {
            if (f.repeated()) {
                out.writeRefs((List<?>) v, owner.name() + "." + f.name());
            } else {
                out.writeRef(v);
            }
            return;
        }
        if (!f.isScalar()) {
            if (owner.targets[i].heterogeneousList()) {
                if (f.repeated()) {
                    out.writeList((List<DynamicList>) v, this::writeChoices);
                } else {
                    writeChoices(out, (DynamicList) v);
                }
            } else if (f.repeated()) {
                out.writeList((List<DynamicRecord>) v, this::writeStruct);
            } else {
                writeStruct(out, (DynamicRecord) v);
            }
            return;
        }
        if (v == null && DynamicType.requiredPrimitive(f)) {
            throw WireFormatException.malformed(owner.name() + "." + f.name(), "required (xs:" + f.scalar().xsdName()
                    + "), but it is not set");
        }
        if (!f.repeated()) {
            writeScalar(out, f, v, owner.name() + "." + f.name());
            return;
        }
        switch (f.scalar()) {
            case BOOLEAN -> out.writeBooleans((boolean[]) v);
            case BYTE -> out.writePackedBytes((byte[]) v);
            case SHORT -> out.writeShorts((short[]) v);
            case INT -> out.writeInts((int[]) v);
            case LONG -> out.writeLongs((long[]) v);
            case FLOAT -> out.writeFloats((float[]) v);
            case DOUBLE -> out.writeDoubles((double[]) v);
            case STRING -> out.writeStrings((List<String>) v, owner.name() + "." + f.name());
            case BYTES -> out.writeBytesList((List<byte[]>) v);
            case DATE_TIME -> out.writeDateTimes((List<OffsetDateTime>) v, owner.name() + "." + f.name());
        }
    }

    private static void writeScalar(BinaryWriter out, FieldModel f, Object v, String name) {
        switch (f.scalar()) {
            case BOOLEAN -> out.writeBoolean((Boolean) v);
            case BYTE -> out.writeByte((Byte) v);
            case SHORT -> out.writeShort((Short) v);
            case INT -> out.writeInt((Integer) v);
            case LONG -> out.writeLong((Long) v);
            case FLOAT -> out.writeFloat((Float) v);
            case DOUBLE -> out.writeDouble((Double) v);
            case STRING -> out.writeString((String) v, name);
            case BYTES -> out.writeBytes((byte[]) v);
            case DATE_TIME -> out.writeDateTime((OffsetDateTime) v, name);
        }
    }

    /**
     * A heterogeneous list as the generated codec writes it: CHOICES, the count, then each
     * element's alternative number and value; the writer refuses nesting past the depth limit.
     */
    private void writeChoices(BinaryWriter out, DynamicList v) {
        if (!out.beginChoices(v)) {
            return;
        }
        DynamicType t = v.type;
        for (Object e : v) {
            int a = e == null ? -1 : t.alternativeOf(e);
            if (a < 0) {
                throw out.notAnAlternative(e, v);   // DynamicList refuses these when added; kept as a guard
            }
            out.writeVarint(a);
            DynamicType target = t.targets[a];
            if (target == null) {
                writeScalar(out, t.fields[a], e, t.name() + "." + t.fields[a].name());
            } else if (target.heterogeneousList()) {
                writeChoices(out, (DynamicList) e);
            } else {
                writeStruct(out, (DynamicRecord) e);
            }
        }
        out.endChoices();
    }

    private DynamicList readChoices(BinaryReader in, String field, DynamicType type) {
        int count = in.beginChoices(field);
        if (count < 0) {
            return null;
        }
        DynamicList items = new DynamicList(type, Math.min(count, 1024));
        for (int i = 0; i < count; i++) {
            int a = in.readAlternative(field, type.fields.length);
            DynamicType target = type.targets[a];
            FieldModel alternative = type.fields[a];
            Object value;
            if (target == null) {
                // primitives are read as required values (NULL refused); strings and bytes are checked
                value = alternative.scalar().isPrimitive() ? readRequiredScalar(in, alternative, field)
                        : in.element(readScalar(in, alternative, field), field);
            } else if (target.heterogeneousList()) {
                value = in.element(readChoices(in, field, target), field);
            } else {
                value = in.element(readStruct(in, field, target), field);
            }
            items.add(value);
        }
        in.endChoices();
        return items;
    }

    private void writeStruct(BinaryWriter out, DynamicRecord v) {
        if (!out.beginStruct(v)) {
            return;
        }
        if (v.type.model.ndArray()) {
            out.checkNdArray(ndArray(v), v.type.name());
        }
        writeFields(out, v);
    }

    private void readFields(BinaryReader in, DynamicRecord r) {
        DynamicType t = r.type;
        for (int i = 0; i < t.fields.length; i++) {
            Object v = readField(in, t, i);
            r.values[i] = requiredReference(t.fields[i]) ? in.required(v, t.name() + "." + t.fields[i].name()) : v;
        }
    }

    private Object readField(BinaryReader in, DynamicType owner, int i) {
        FieldModel f = owner.fields[i];
        String name = owner.name() + "." + f.name();
        DynamicType target = owner.targets[i];
        if (f.graphReference()) {
            if (f.repeated()) {
                return in.readList(name, (r, field) -> r.required(node(r, field, target), field));
            }
            return node(in, name, target);
        }
        if (!f.isScalar()) {
            if (target.heterogeneousList()) {
                return f.repeated() ? in.readList(name, (r, field) -> readChoices(r, field, target))
                        : readChoices(in, name, target);
            }
            if (f.repeated()) {
                return in.readList(name, (r, field) -> readStruct(r, field, target));
            }
            return readStruct(in, name, target);
        }
        if (f.repeated()) {
            return switch (f.scalar()) {
                case BOOLEAN -> in.readBooleans(name);
                case BYTE -> in.readPackedBytes(name);
                case SHORT -> in.readShorts(name);
                case INT -> in.readInts(name);
                case LONG -> in.readLongs(name);
                case FLOAT -> in.readFloats(name);
                case DOUBLE -> in.readDoubles(name);
                case STRING -> in.readStrings(name);
                case BYTES -> in.readBytesList(name);
                case DATE_TIME -> in.readDateTimes(name);
            };
        }
        return DynamicType.requiredPrimitive(f) ? readRequiredScalar(in, f, name) : readScalar(in, f, name);
    }

    /** A single primitive that is always present: NULL on the wire is refused. */
    private static Object readRequiredScalar(BinaryReader in, FieldModel f, String name) {
        return switch (f.scalar()) {
            case BOOLEAN -> in.readBoolean(name);
            case BYTE -> in.readByte(name);
            case SHORT -> in.readShort(name);
            case INT -> in.readInt(name);
            case LONG -> in.readLong(name);
            case FLOAT -> in.readFloat(name);
            case DOUBLE -> in.readDouble(name);
            default -> readScalar(in, f, name);
        };
    }

    /** A single scalar that may be absent (null). */
    private static Object readScalar(BinaryReader in, FieldModel f, String name) {
        return switch (f.scalar()) {
            case BOOLEAN -> in.readBooleanOrNull(name);
            case BYTE -> in.readByteOrNull(name);
            case SHORT -> in.readShortOrNull(name);
            case INT -> in.readIntOrNull(name);
            case LONG -> in.readLongOrNull(name);
            case FLOAT -> in.readFloatOrNull(name);
            case DOUBLE -> in.readDoubleOrNull(name);
            case STRING -> in.readString(name);
            case BYTES -> in.readBytes(name);
            case DATE_TIME -> in.readDateTime(name);
        };
    }

    private static DynamicRecord node(BinaryReader in, String field, DynamicType target) {
        DynamicRecord node = in.readRef(field, DynamicRecord.class);
        if (node != null && node.type != target) {
            throw WireFormatException.malformed("field " + field + ": node is a " + node.type.name() + ", expected "
                    + target.name());
        }
        return node;
    }

    private DynamicRecord readStruct(BinaryReader in, String field, DynamicType target) {
        if (!in.beginStruct(field)) {
            return null;
        }
        DynamicRecord v = new DynamicRecord(target);
        readFields(in, v);
        if (target.model.ndArray()) {
            in.checkNdArray(ndArray(v), field);
        }
        return v;
    }

    /** An n-d array record (shape, values) seen as {@link NdArray}, for the shared consistency check. */
    static NdArray ndArray(DynamicRecord r) {
        return new NdArray() {
            @Override
            public int[] getShape() {
                return (int[]) r.values[0];
            }

            @Override
            public Object ndValues() {
                return r.values[1];
            }
        };
    }

    static String ndInconsistency(DynamicRecord r) {
        return NdArrays.inconsistency(ndArray(r));
    }
}

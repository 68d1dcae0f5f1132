package io.switchboard.codec.proto;

import io.switchboard.codec.message.WireFormatException;
import java.util.Arrays;

/**
 * The {@code Nulls} message of the typed convention ({@code sb_nulls = 2047}): which repeated
 * fields of a message are null rather than empty ({@code lists}), and which positions of a
 * repeated field hold null ({@code elements}: a field number and positions from 0). Built only
 * when something is null; written after the message's other fields.
 */
public final class ProtoNulls {
    public static final int FIELD = 2047;

    private int[] lists = new int[0];
    private int[] elementFields = new int[0];
    private int[][] positions = new int[0][];
    private int[] positionCounts = new int[0];

    /** Notes that repeated field {@code number} is null; returns the (possibly new) instance. */
    public static ProtoNulls list(ProtoNulls nulls, int number) {
        ProtoNulls n = nulls == null ? new ProtoNulls() : nulls;
        n.lists = Arrays.copyOf(n.lists, n.lists.length + 1);
        n.lists[n.lists.length - 1] = number;
        return n;
    }

    /** Notes that element {@code position} of repeated field {@code number} is null. */
    public static ProtoNulls element(ProtoNulls nulls, int number, int position) {
        ProtoNulls n = nulls == null ? new ProtoNulls() : nulls;
        n.addPosition(number, position);
        return n;
    }

    private void addPosition(int number, int position) {
        int k = elementFields.length - 1;
        if (k < 0 || elementFields[k] != number) {
            k++;
            elementFields = Arrays.copyOf(elementFields, k + 1);
            elementFields[k] = number;
            positions = Arrays.copyOf(positions, k + 1);
            positions[k] = new int[4];
            positionCounts = Arrays.copyOf(positionCounts, k + 1);
        }
        if (positionCounts[k] == positions[k].length) {
            positions[k] = Arrays.copyOf(positions[k], positions[k].length * 2);
        }
        positions[k][positionCounts[k]++] = position;
    }

    /** The size of field 2047 holding this, tag included. */
    public long fieldSize() {
        return ProtoWriteState.delimitedSize(FIELD, bodySize());
    }

    private int bodySize() {
        int size = 0;
        if (lists.length > 0) {
            size += (int) ProtoWriteState.delimitedSize(1, varintsSize(lists, lists.length));
        }
        for (int k = 0; k < elementFields.length; k++) {
            size += (int) ProtoWriteState.delimitedSize(2, elementsBodySize(k));
        }
        return size;
    }

    private int elementsBodySize(int k) {
        int size = elementFields[k] != 0 ? ProtoWriteState.int32Size(1, elementFields[k]) : 0;
        return size + (int) ProtoWriteState.delimitedSize(2, varintsSize(positions[k], positionCounts[k]));
    }

    private static int varintsSize(int[] values, int n) {
        int size = 0;
        for (int i = 0; i < n; i++) {
            size += values[i] < 0 ? 10 : ProtoOutput.varint32Size(values[i]);
        }
        return size;
    }

    public void write(ProtoOutput out) {
        out.writeLengthDelimited(FIELD, bodySize());
        if (lists.length > 0) {
            writeVarints(out, 1, lists, lists.length);
        }
        for (int k = 0; k < elementFields.length; k++) {
            out.writeLengthDelimited(2, elementsBodySize(k));
            if (elementFields[k] != 0) {
                out.writeInt32(1, elementFields[k]);
            }
            writeVarints(out, 2, positions[k], positionCounts[k]);
        }
    }

    private static void writeVarints(ProtoOutput out, int field, int[] values, int n) {
        out.writeLengthDelimited(field, varintsSize(values, n));
        for (int i = 0; i < n; i++) {
            out.writeVarint64(values[i]);
        }
    }

    /** Reads one occurrence of field 2047 (its tag read) and merges it into {@code nulls}. */
    public static ProtoNulls read(ProtoNulls nulls, ProtoInput in, ProtoReadState r) {
        ProtoNulls n = nulls == null ? new ProtoNulls() : nulls;
        ProtoArrays.Varints lists = new ProtoArrays.Varints();
        int outer = in.beginMessage(in.readLength());
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            switch (tag >>> 3) {
                case 1 -> lists.append(in, tag, r);
                case 2 -> {
                    ProtoReadState.expect(tag, ProtoOutput.LENGTH_DELIMITED, "Nulls.elements");
                    int inner = in.beginMessage(in.readLength());
                    int field = 0;
                    ProtoArrays.Varints at = new ProtoArrays.Varints();
                    for (int t = in.readTag(); t != 0; t = in.readTag()) {
                        switch (t >>> 3) {
                            case 1 -> {
                                ProtoReadState.expect(t, ProtoOutput.VARINT, "sb_nulls.elements.field");
                                field = in.readVarint32();
                            }
                            case 2 -> at.append(in, t, r);
                            default -> in.skipField(t);
                        }
                    }
                    in.endMessage(inner);
                    for (int i = 0; i < at.size(); i++) {
                        n.addPosition(field, at.get(i));
                    }
                }
                default -> in.skipField(tag);
            }
        }
        in.endMessage(outer);
        for (int i = 0; i < lists.size(); i++) {
            n = list(n, lists.get(i));
        }
        return n;
    }

    /** Refuses a field number that is not one of the message's repeated fields ({@code allowed}) or cannot hold null elements. */
    public void check(String type, int[] repeated, int[] nullableElements) {
        for (int f : lists) {
            if (Arrays.stream(repeated).noneMatch(x -> x == f)) {
                throw WireFormatException.malformed(type + "." + "sb_nulls", "field " + f + " is not a repeated field");
            }
        }
        for (int f : elementFields) {
            if (Arrays.stream(nullableElements).noneMatch(x -> x == f)) {
                throw WireFormatException.malformed(type + "." + "sb_nulls", "field " + f + " cannot hold null elements");
            }
        }
    }

    public boolean isNull(int number) {
        for (int f : lists) {
            if (f == number) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether repeated field {@code number} is listed as null; refused (naming {@code field}) when
     * it is, yet {@code value} (what the parts gave it: a list or an array) holds elements.
     */
    public boolean isNull(int number, Object value, String field) {
        if (!isNull(number)) {
            return false;
        }
        if (value != null && (value instanceof java.util.List<?> l ? !l.isEmpty() : java.lang.reflect.Array.getLength(value) > 0)) {
            throw WireFormatException.malformed(field, "listed as null in sb_nulls, but it holds elements");
        }
        return true;
    }

    /** Sets the null elements of field {@code number} in {@code list}, refusing positions past its end. */
    public void applyTo(int number, java.util.List<?> list, String field) {
        for (int k = 0; k < elementFields.length; k++) {
            if (elementFields[k] == number) {
                for (int i = 0; i < positionCounts[k]; i++) {
                    int p = positions[k][i];
                    if (p < 0 || list == null || p >= list.size()) {
                        throw WireFormatException.malformed(field, "null element " + p + " is outside the list");
                    }
                    list.set(p, null);
                }
            }
        }
    }
}

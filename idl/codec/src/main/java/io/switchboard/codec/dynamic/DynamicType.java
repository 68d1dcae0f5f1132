package io.switchboard.codec.dynamic;

import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One complex type of an interface read at run time (a named type or a message element), with
 * what the dynamic codecs need about it worked out once: its fields by name, the type of each
 * complex field, whether it is a node of a linked structure (and its node type number), and which
 * fields lead to linked nodes.
 *
 * <pre>{@code
 * DynamicType record = DynamicInterface.of(model).type("Record");
 * DynamicRecord r = record.newRecord().set("name", "x");
 * }</pre>
 */
public final class DynamicType {
    final ComplexTypeModel model;
    final FieldModel[] fields;
    /** The type of each complex field; null for scalars. Filled by {@link DynamicInterface}. */
    final DynamicType[] targets;
    /** Whether a field is visited when collecting linked nodes: a reference, or a value that leads to one. */
    final boolean[] visits;
    /** Each field's name as refusals give it: {@code Type.field}. */
    final String[] qualified;
    private final Map<String, Integer> index;
    /** The numbers of the fields that are repeated on the wire, and of those whose elements may be null (for sb_nulls). */
    final int[] repeatedNumbers;
    final int[] nullableElementNumbers;
    /** Node type of a recursive type (document order from 0), -1 for other types. */
    int nodeType = -1;
    /** Whether values of this type hold references to linked nodes, directly or further down. */
    boolean reachesGraph;

    DynamicType(ComplexTypeModel model) {
        this.model = model;
        List<FieldModel> f = model.fields();
        this.fields = f.toArray(FieldModel[]::new);
        this.targets = new DynamicType[fields.length];
        this.visits = new boolean[fields.length];
        this.qualified = new String[fields.length];
        for (int i = 0; i < fields.length; i++) {
            qualified[i] = model.name() + "." + fields[i].name();
        }
        this.repeatedNumbers = java.util.stream.IntStream.range(0, fields.length)
                .filter(i -> DynamicProtoCodec.protoRepeated(fields[i])).map(i -> i + 1).toArray();
        this.nullableElementNumbers = java.util.stream.IntStream.range(0, fields.length)
                .filter(i -> DynamicProtoCodec.nullableElements(fields[i])).map(i -> i + 1).toArray();
        Map<String, Integer> byName = new HashMap<>();
        for (int i = 0; i < fields.length; i++) {
            byName.put(fields[i].name(), i);
        }
        this.index = Collections.unmodifiableMap(byName);
    }

    /** The schema name: the type's, or the message element's. */
    public String name() {
        return model.name();
    }

    public ComplexTypeModel model() {
        return model;
    }

    /** Whether this is a message element (request, response or fault). */
    public boolean message() {
        return model.element();
    }

    /** Whether instances are nodes of a linked structure (the type reaches itself). */
    public boolean recursive() {
        return model.recursive();
    }

    public List<String> fieldNames() {
        return model.fields().stream().map(FieldModel::name).toList();
    }

    /** The type of a complex field, null for a scalar one. */
    public DynamicType fieldType(String field) {
        return targets[indexOf(field)];
    }

    /** A new record of this type, every field null. */
    public DynamicRecord newRecord() {
        return new DynamicRecord(this);
    }

    /**
     * A new record of this type holding {@code fields} (null: none): a {@code Map} value of a complex
     * field becomes a record of the field's type, as do the maps in a {@code List}; records,
     * {@link DynamicList}s and scalars are taken as they are. What {@code DynamicStub.call} takes
     * as arguments and a {@code DynamicHandler} may answer.
     *
     * @throws IllegalArgumentException no such field, or a value of another type, named by its path ({@code echoList.head.ddouble})
     */
    public DynamicRecord newRecord(Map<String, ?> fields) {
        return recordOf(this, fields, name());
    }

    private static DynamicRecord recordOf(DynamicType type, Map<String, ?> fields, String where) {
        DynamicRecord r = type.newRecord();
        if (fields == null) {
            return r;
        }
        for (Map.Entry<String, ?> e : fields.entrySet()) {
            String name = e.getKey();
            if (!type.index.containsKey(name)) {
                throw new IllegalArgumentException(where + " has no field '" + name + "'; its fields are "
                        + type.fieldNames());
            }
            r.set(name, valueOf(type.fieldType(name), e.getValue(), where + "." + name));
        }
        return r;
    }

    private static Object valueOf(DynamicType target, Object value, String where) {
        if (target == null || value == null || value instanceof DynamicList) {
            return value;   // a scalar, or a heterogeneous list whose elements are values already
        }
        if (value instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, ?> fields = (Map<String, ?>) m;
            return recordOf(target, fields, where);
        }
        if (value instanceof List<?> list) {
            List<Object> out = new java.util.ArrayList<>(list.size());
            for (int i = 0; i < list.size(); i++) {
                out.add(valueOf(target, list.get(i), where + "[" + i + "]"));
            }
            return out;
        }
        return value;
    }

    /**
     * Refuses a message whose required numbers or booleans are not set: a generated bean always has
     * them, so a record without one cannot be what generated code would send.
     *
     * @throws IllegalArgumentException naming the first such field
     */
    public void checkRequired(DynamicRecord message) {
        for (int i = 0; i < fields.length; i++) {
            FieldModel f = fields[i];
            if (requiredPrimitive(f) && message.values[i] == null) {
                throw new IllegalArgumentException(name() + " needs '" + f.name() + "' (xs:" + f.scalar().xsdName()
                        + "); it was not given");
            }
        }
    }

    /** Whether this is a heterogeneous list type (an {@code xs:choice} list): its values are {@link DynamicList}s. */
    public boolean heterogeneousList() {
        return model.heterogeneousList();
    }

    /**
     * A new heterogeneous list of this type holding {@code items}, in order.
     *
     * @throws IllegalArgumentException this is not a list type, or an item is null or fits no alternative
     */
    public DynamicList newList(Object... items) {
        if (!heterogeneousList()) {
            throw new IllegalArgumentException(name() + " is not a heterogeneous list type");
        }
        DynamicList list = new DynamicList(this, items.length);
        java.util.Collections.addAll(list, items);
        return list;
    }

    /**
     * The alternative of this list type that {@code element} is (its index in schema order), -1 for
     * none: a scalar by its Java class, a record or a nested list by its type.
     */
    int alternativeOf(Object element) {
        DynamicType of = element instanceof DynamicRecord r ? r.type : element instanceof DynamicList l ? l.type : null;
        for (int i = 0; i < fields.length; i++) {
            if (of != null ? targets[i] == of : targets[i] == null && DynamicRecord.scalarClass(fields[i].scalar()).isInstance(element)) {
                return i;
            }
        }
        return -1;
    }

    int indexOf(String field) {
        Integer i = index.get(field);
        if (i == null) {
            throw new IllegalArgumentException(name() + " has no field '" + field + "'; its fields are " + fieldNames());
        }
        return i;
    }

    /** Whether a scalar field is a required primitive: always present on the wire, never null. */
    /** A required field that is not nillable, of reference type: null is refused both ways, as in generated code. */
    static boolean requiredReference(FieldModel f) {
        return !f.optional() && !f.repeated() && !f.nillable() && !(f.isScalar() && f.scalar().isPrimitive());
    }

    static boolean requiredPrimitive(FieldModel f) {
        return f.isScalar() && !f.repeated() && f.scalar().isPrimitive() && !f.optional() && !f.nillable();
    }

    @Override
    public String toString() {
        return name();
    }
}

package io.switchboard.codec.dynamic;

import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.GraphHolder;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The value of a complex type of an interface read at run time: its fields by name. A record of
 * a recursive type is a node of a linked structure; records may share nodes and form cycles,
 * exactly as generated beans do, and travel in the same wire forms.
 *
 * <p>Field values, as generated beans hold them: {@code Boolean}, {@code Byte}, {@code Short},
 * {@code Integer}, {@code Long}, {@code Float}, {@code Double}, {@code String}, {@code byte[]}
 * ({@code xs:base64Binary}) and {@link OffsetDateTime} for single scalars; one primitive array
 * ({@code double[]}, {@code int[]}, {@code boolean[]}, ...) for a repeated number or boolean; a
 * {@code List} for other repeated values; a {@code DynamicRecord} of the field's type for a
 * complex value; a {@link DynamicList} of the field's type for a heterogeneous list (an
 * {@code xs:choice} list type). Null is absent (or nil). {@link #set} refuses a value of another Java type,
 * naming the field and what it expects.
 *
 * <pre>{@code
 * DynamicRecord a = stub.type("LinkEntry").newRecord().set("llong", 1L).set("sshort", (short) 1)
 *         .set("iint", 1).set("ffloat", 1f).set("ddouble", 1.0);
 * a.set("nextLink", a);                     // a cycle
 * Object back = stub.call("echoList", Map.of("head", a));
 * }</pre>
 */
public final class DynamicRecord implements GraphHolder {
    final DynamicType type;
    final Object[] values;

    DynamicRecord(DynamicType type) {
        this.type = type;
        this.values = new Object[type.fields.length];
    }

    public DynamicType type() {
        return type;
    }

    /** The value of a field; null when absent. */
    public Object get(String field) {
        return values[type.indexOf(field)];
    }

    /**
     * Sets a field, checking the value's Java type against the schema.
     *
     * @throws IllegalArgumentException no such field, or a value of another type
     */
    public DynamicRecord set(String field, Object value) {
        int i = type.indexOf(field);
        values[i] = check(type, i, value);
        return this;
    }

    /**
     * Sets a scalar field, or a repeated number or boolean, from text in its XML Schema lexical
     * form (as on the SOAP wire: {@code 1.5}, {@code -INF}, {@code NaN}, {@code true}; an array as
     * a whitespace-separated list, empty text for an empty array). For command lines and tools.
     *
     * @throws IllegalArgumentException no such field, a complex or list-of-text field, or text that is not of the type
     */
    public DynamicRecord setText(String field, String text) {
        int i = type.indexOf(field);
        FieldModel f = type.fields[i];
        if (!f.isScalar() || f.repeated() && !f.scalar().isPrimitive()) {
            throw new IllegalArgumentException("field '" + field + "' of " + type.name() + " is "
                    + (f.isScalar() ? "a list of xs:" + f.scalar().xsdName() : "of type " + f.complexType())
                    + ": it cannot be given as text");
        }
        try {
            values[i] = f.repeated() ? DynamicXml.parseList(f.scalar(), text, type.name() + "." + field)
                    : DynamicXml.parse(f.scalar(), text, type.name() + "." + field);
        } catch (jakarta.xml.bind.JAXBException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        return this;
    }

    /** The fields as a map in schema order (values as held, records not converted). */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < values.length; i++) {
            m.put(type.fields[i].name(), values[i]);
        }
        return m;
    }

    @Override
    public void switchboardVisitReferences(Consumer<Object> out) {
        // the order of the generated beans' visit: fields in schema order, references passed on,
        // values that lead to references visited in place; node tables come out identical
        for (int i = 0; i < values.length; i++) {
            Object v = values[i];
            if (v == null || !type.visits[i]) {
                continue;
            }
            boolean direct = type.fields[i].graphReference();
            if (type.fields[i].repeated()) {
                for (Object item : (List<?>) v) {
                    if (item != null) {
                        if (direct) {
                            out.accept(item);
                        } else {
                            ((DynamicRecord) item).switchboardVisitReferences(out);
                        }
                    }
                }
            } else if (direct) {
                out.accept(v);
            } else {
                ((DynamicRecord) v).switchboardVisitReferences(out);
            }
        }
    }

    /** Shallow: nested records by type only, so that cycles and long lists print briefly. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(type.name()).append('{');
        for (int i = 0; i < values.length; i++) {
            Object v = values[i];
            s.append(i == 0 ? "" : ", ").append(type.fields[i].name()).append('=');
            if (v instanceof DynamicRecord r) {
                s.append(r.type.name()).append("{...}");
            } else if (v != null && v.getClass().isArray()) {
                s.append(v.getClass().getComponentType().getSimpleName()).append('[')
                        .append(java.lang.reflect.Array.getLength(v)).append(']');
            } else if (v instanceof List<?> l) {
                s.append("list of ").append(l.size());
            } else {
                s.append(v);
            }
        }
        return s.append('}').toString();
    }

    /** The value itself when it has the Java type the schema gives the field; otherwise a clear refusal. */
    static Object check(DynamicType owner, int i, Object value) {
        if (value == null) {
            return null;
        }
        FieldModel f = owner.fields[i];
        DynamicType target = owner.targets[i];
        if (f.repeated()) {
            if (f.isScalar() && f.scalar().isPrimitive()) {
                Class<?> array = primitiveArray(f.scalar());
                if (!array.isInstance(value)) {
                    throw wrongType(owner, f, array.getSimpleName(), value);
                }
                return value;
            }
            if (!(value instanceof List<?> list)) {
                throw wrongType(owner, f, "a List of " + elementName(f, target), value);
            }
            for (int k = 0; k < list.size(); k++) {
                Object item = list.get(k);
                if (item != null && !accepts(f, target, item)) {
                    throw new IllegalArgumentException("field '" + f.name() + "' of " + owner.name() + " expects a List of "
                            + elementName(f, target) + "; item " + k + " is a " + describe(item));
                }
            }
            return value;
        }
        if (!accepts(f, target, value)) {
            throw wrongType(owner, f, elementName(f, target), value);
        }
        return value;
    }

    private static boolean accepts(FieldModel f, DynamicType target, Object value) {
        if (target != null && target.heterogeneousList()) {
            return value instanceof DynamicList l && l.type == target;
        }
        if (target != null) {
            return value instanceof DynamicRecord r && r.type == target;
        }
        return scalarClass(f.scalar()).isInstance(value);
    }

    private static String elementName(FieldModel f, DynamicType target) {
        if (target == null) {
            return scalarClass(f.scalar()).getSimpleName();
        }
        return (target.heterogeneousList() ? "DynamicList of " : "DynamicRecord of ") + target.name();
    }

    private static IllegalArgumentException wrongType(DynamicType owner, FieldModel f, String expected, Object value) {
        return new IllegalArgumentException("field '" + f.name() + "' of " + owner.name() + " expects " + expected
                + ", got " + describe(value));
    }

    static String describe(Object value) {
        if (value instanceof DynamicList l) {
            return "DynamicList of " + l.type.name();
        }
        return value instanceof DynamicRecord r ? "DynamicRecord of " + r.type.name() : value.getClass().getSimpleName();
    }

    static Class<?> scalarClass(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> Boolean.class;
            case BYTE -> Byte.class;
            case SHORT -> Short.class;
            case INT -> Integer.class;
            case LONG -> Long.class;
            case FLOAT -> Float.class;
            case DOUBLE -> Double.class;
            case STRING -> String.class;
            case BYTES -> byte[].class;
            case DATE_TIME -> OffsetDateTime.class;
        };
    }

    static Class<?> primitiveArray(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> boolean[].class;
            case BYTE -> byte[].class;
            case SHORT -> short[].class;
            case INT -> int[].class;
            case LONG -> long[].class;
            case FLOAT -> float[].class;
            case DOUBLE -> double[].class;
            default -> throw new IllegalArgumentException(s + " is not a primitive");
        };
    }

    /** An n-d array record (shape, values) seen as {@link io.switchboard.idl.runtime.NdArray}, for the shared consistency check. */
    static io.switchboard.idl.runtime.NdArray ndArray(DynamicRecord r) {
        return new io.switchboard.idl.runtime.NdArray() {
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

    /** What is wrong with an n-d array record's shape against its values, or null. */
    static String ndInconsistency(DynamicRecord r) {
        return io.switchboard.codec.NdArrays.inconsistency(ndArray(r));
    }
}

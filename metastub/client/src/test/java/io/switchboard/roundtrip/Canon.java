package io.switchboard.roundtrip;

import io.switchboard.idl.FieldModel;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Base64;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * Message values as text: for failure reports (linked nodes numbered, so cycles print), and as
 * signatures with references masked, so that two messages can be compared node by node without
 * regard to which node refers to which.
 */
final class Canon {
    private Canon() {
    }

    /** A property's try, as a failure reports it: the schema's component and seed, the message, the schema. */
    static String describe(RandomSchemas.Schema schema, long seed, DynamicRecord message) {
        return schema.component() + " (schemas from seed " + seed + "): " + describe(message) + "\nschema:\n" + schema.xsd();
    }

    /** The whole value: the message, then each linked node once, as {@code #n}. */
    static String describe(DynamicRecord message) {
        IdentityHashMap<Object, Integer> ids = new IdentityHashMap<>();
        List<DynamicRecord> nodes = new ArrayList<>();
        StringBuilder b = new StringBuilder(print(message, ids, nodes, false));
        for (int i = 0; i < nodes.size(); i++) {
            b.append("\n  #").append(i).append(" = ").append(fields(nodes.get(i), ids, nodes, false));
        }
        return b.toString();
    }

    /** A record's fields with every reference to a linked node written as {@code @}. */
    static String masked(DynamicRecord r) {
        return fields(r, new IdentityHashMap<>(), new ArrayList<>(), true);
    }

    private static String fields(DynamicRecord r, IdentityHashMap<Object, Integer> ids, List<DynamicRecord> nodes,
                                 boolean mask) {
        StringBuilder b = new StringBuilder(r.type().name()).append('{');
        List<FieldModel> fields = r.type().model().fields();
        for (int i = 0; i < fields.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(fields.get(i).name()).append('=')
                    .append(print(r.get(fields.get(i).name()), ids, nodes, mask));
        }
        return b.append('}').toString();
    }

    private static String print(Object v, IdentityHashMap<Object, Integer> ids, List<DynamicRecord> nodes, boolean mask) {
        if (v == null) {
            return "null";
        }
        if (v instanceof DynamicRecord r && r.type().recursive()) {
            if (mask) {
                return "@";
            }
            Integer id = ids.get(r);
            if (id == null) {
                ids.put(r, id = nodes.size());
                nodes.add(r);
            }
            return "#" + id;
        }
        if (v instanceof DynamicRecord r) {
            return fields(r, ids, nodes, mask);
        }
        if (v instanceof DynamicList l) {
            StringBuilder b = new StringBuilder(l.type().name()).append('[');
            for (int i = 0; i < l.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(l.alternative(i)).append(':').append(print(l.get(i), ids, nodes, mask));
            }
            return b.append(']').toString();
        }
        if (v instanceof List<?> l) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < l.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(print(l.get(i), ids, nodes, mask));
            }
            return b.append(']').toString();
        }
        if (v instanceof byte[] bytes) {
            return "b64:" + Base64.getEncoder().encodeToString(bytes);
        }
        if (v.getClass().isArray()) {
            StringBuilder b = new StringBuilder(v.getClass().getComponentType().getSimpleName()).append('[');
            for (int i = 0; i < Array.getLength(v); i++) {
                b.append(i == 0 ? "" : " ").append(scalar(Array.get(v, i)));
            }
            return b.append(']').toString();
        }
        return scalar(v);
    }

    private static String scalar(Object v) {
        if (v instanceof Double d) {
            return Double.isNaN(d) ? "NaN" : d + "(" + Long.toHexString(Double.doubleToRawLongBits(d)) + ")";
        }
        if (v instanceof Float f) {
            return Float.isNaN(f) ? "NaN" : f + "(" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
        }
        if (v instanceof String s) {
            StringBuilder b = new StringBuilder("\"");
            s.chars().forEach(c -> b.append(c >= 0x20 && c < 0x7F && c != '"' ? String.valueOf((char) c)
                    : String.format("\\u%04X", c)));
            return b.append('"').toString();
        }
        return String.valueOf(v);
    }

    /** Whether some linked node of the message is referred to twice (shared, or on a cycle). */
    static boolean sharesNodes(DynamicRecord message) {
        IdentityHashMap<Object, Integer> refs = new IdentityHashMap<>();
        java.util.ArrayDeque<Object> work = new java.util.ArrayDeque<>(List.of(message));
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        while (!work.isEmpty()) {
            Object v = work.poll();
            if (v instanceof DynamicRecord r) {
                if (r != message && r.type().recursive() && refs.merge(r, 1, Integer::sum) > 1) {
                    return true;
                }
                if (seen.put(r, true) == null) {
                    r.toMap().values().stream().filter(x -> x != null).forEach(work::add);
                }
            } else if (v instanceof List<?> l) {
                l.stream().filter(x -> x != null).forEach(work::add);
            }
        }
        return false;
    }

    /** The linked nodes a message reaches, breadth first. */
    static List<DynamicRecord> nodes(DynamicRecord message) {
        IdentityHashMap<Object, Integer> ids = new IdentityHashMap<>();
        List<DynamicRecord> nodes = new ArrayList<>();
        print(message, ids, nodes, false);
        for (int i = 0; i < nodes.size(); i++) {
            fields(nodes.get(i), ids, nodes, false);
        }
        return nodes;
    }
}

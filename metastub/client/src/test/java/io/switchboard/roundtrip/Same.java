package io.switchboard.roundtrip;

import io.switchboard.idl.FieldModel;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import java.lang.reflect.Array;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;

/**
 * Exact equality of message values, as docs/validation.md promises it: doubles and floats bit for bit
 * (-0.0 is not 0.0) except that any NaN equals any NaN (XML has one NaN), date-times with their
 * offset, null apart from empty, and linked nodes with their shape: two references to one node
 * must come back as two references to one node. Records of different types compare by field name,
 * so a request compares with its response.
 */
final class Same {
    private Same() {
    }

    /** Null when {@code expected} and {@code actual} are the same value; otherwise where they first differ. */
    static String difference(DynamicRecord expected, DynamicRecord actual) {
        Walk w = new Walk();
        w.pairs.add(new Object[] {expected, actual, "message"});
        return w.run();
    }

    private static final class Walk {
        final ArrayDeque<Object[]> pairs = new ArrayDeque<>();
        /** Linked nodes matched so far, both ways: a node may only ever match one node. */
        final IdentityHashMap<Object, Object> forward = new IdentityHashMap<>();
        final IdentityHashMap<Object, Object> backward = new IdentityHashMap<>();

        String run() {
            while (!pairs.isEmpty()) {
                Object[] p = pairs.poll();
                String d = compare(p[0], p[1], (String) p[2]);
                if (d != null) {
                    return d;
                }
            }
            return null;
        }

        private String compare(Object e, Object a, String path) {
            if (e == null || a == null) {
                return e == a ? null : path + ": expected " + show(e) + ", got " + show(a);
            }
            if (e instanceof DynamicRecord er) {
                if (!(a instanceof DynamicRecord ar)) {
                    return path + ": expected a record, got " + show(a);
                }
                Object seen = forward.get(er);
                Object seenBack = backward.get(ar);
                if (seen != null || seenBack != null) {
                    return seen == ar && seenBack == er ? null : path + ": the shape differs (a shared or cyclic node)";
                }
                forward.put(er, ar);
                backward.put(ar, er);
                for (FieldModel f : er.type().model().fields()) {
                    pairs.add(new Object[] {er.get(f.name()), ar.get(f.name()), path + "." + f.name()});
                }
                return null;
            }
            if (e instanceof DynamicList el) {
                if (!(a instanceof DynamicList al) || !el.type().name().equals(al.type().name())) {
                    return path + ": expected a list of " + el.type().name() + ", got " + show(a);
                }
                return lists(el, al, path);
            }
            if (e instanceof List<?> el) {
                return a instanceof List<?> al ? lists(el, al, path) : path + ": expected a list, got " + show(a);
            }
            if (e.getClass().isArray()) {
                if (a.getClass() != e.getClass() || Array.getLength(a) != Array.getLength(e)) {
                    return path + ": expected " + show(e) + ", got " + show(a);
                }
                for (int i = 0; i < Array.getLength(e); i++) {
                    if (!scalarEquals(Array.get(e, i), Array.get(a, i))) {
                        return path + "[" + i + "]: expected " + Array.get(e, i) + ", got " + Array.get(a, i);
                    }
                }
                return null;
            }
            return scalarEquals(e, a) ? null : path + ": expected " + show(e) + ", got " + show(a);
        }

        private String lists(List<?> e, List<?> a, String path) {
            if (e.size() != a.size()) {
                return path + ": expected " + e.size() + " elements, got " + a.size();
            }
            for (int i = 0; i < e.size(); i++) {
                pairs.add(new Object[] {e.get(i), a.get(i), path + "[" + i + "]"});
            }
            return null;
        }
    }

    static boolean scalarEquals(Object e, Object a) {
        if (e instanceof Double d && a instanceof Double b) {
            return Double.isNaN(d) ? Double.isNaN(b) : Double.doubleToRawLongBits(d) == Double.doubleToRawLongBits(b);
        }
        if (e instanceof Float d && a instanceof Float b) {
            return Float.isNaN(d) ? Float.isNaN(b) : Float.floatToRawIntBits(d) == Float.floatToRawIntBits(b);
        }
        if (e instanceof java.time.OffsetDateTime d && a instanceof java.time.OffsetDateTime b) {
            return d.equals(b);   // the instant and the offset
        }
        return Objects.equals(e, a);
    }

    private static String show(Object v) {
        if (v == null) {
            return "null";
        }
        if (v.getClass().isArray()) {
            StringBuilder b = new StringBuilder(v.getClass().getComponentType() + "[" + Array.getLength(v) + "]{");
            for (int i = 0; i < Math.min(8, Array.getLength(v)); i++) {
                b.append(i == 0 ? "" : ", ").append(Array.get(v, i));
            }
            return b.append(Array.getLength(v) > 8 ? ", ...}" : "}").toString();
        }
        if (v instanceof String s) {
            StringBuilder b = new StringBuilder("\"");
            s.chars().forEach(c -> b.append(c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : String.format("\\u%04X", c)));
            return b.append('"').toString();
        }
        return v instanceof DynamicRecord r ? "a " + r.type().name() : String.valueOf(v);
    }
}

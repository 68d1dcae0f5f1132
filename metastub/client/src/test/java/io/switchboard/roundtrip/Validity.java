package io.switchboard.roundtrip;

import io.switchboard.idl.FieldModel;
import io.switchboard.codec.dynamic.DynamicRecord;
import java.lang.reflect.Array;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The test's own account of which messages no protocol may carry, written apart from the codecs'
 * checks so that it can disagree with them: a string with a character XML 1.0 cannot hold (a lone
 * surrogate, a control character other than tab, line feed and carriage return, U+FFFE, U+FFFF),
 * a date-time outside years 1-9999 or with an offset that is not whole minutes within ±14:00, a
 * required field that is not nillable left null, a null in a list of linked nodes, an n-d array
 * whose shape and values disagree.
 * Only what the message reaches counts: nodes of a pool that nothing refers to are never sent.
 */
final class Validity {
    private Validity() {
    }

    /** Null when every protocol must carry {@code message}; otherwise the first reason it must be refused. */
    static String problem(DynamicRecord message) {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        ArrayDeque<Object> work = new ArrayDeque<>();
        work.add(message);
        while (!work.isEmpty()) {
            Object v = work.poll();
            if (v instanceof DynamicRecord r) {
                if (!seen.add(r)) {
                    continue;
                }
                String problem = record(r, work);
                if (problem != null) {
                    return problem;
                }
            } else if (v instanceof List<?> l) {
                for (Object item : l) {
                    if (item != null) {
                        work.add(item);
                    }
                }
            } else if (v instanceof String s) {
                String problem = string(s);
                if (problem != null) {
                    return problem;
                }
            } else if (v instanceof OffsetDateTime d) {
                int offset = d.getOffset().getTotalSeconds();
                if (d.getYear() < 1 || d.getYear() > 9999 || offset % 60 != 0 || Math.abs(offset) > 14 * 3600) {
                    return "date-time " + d;
                }
            }
        }
        return null;
    }

    private static String record(DynamicRecord r, ArrayDeque<Object> work) {
        for (FieldModel f : r.type().model().fields()) {
            Object v = r.get(f.name());
            boolean primitive = f.isScalar() && f.scalar().isPrimitive();
            if (v == null && !f.optional() && !f.nillable() && !f.repeated() && !primitive) {
                return "required " + r.type().name() + "." + f.name() + " is null";
            }
            if (f.graphReference() && f.repeated() && v != null && ((List<?>) v).contains(null)) {
                return "list of references " + r.type().name() + "." + f.name() + " holds a null";
            }
            if (v != null) {
                work.add(v);
            }
        }
        if (r.type().model().ndArray()) {
            int[] shape = (int[]) r.get("shape");
            Object values = r.get("values");
            if (shape == null || values == null) {
                return "n-d array without shape or values";
            }
            long size = 1;
            for (int d : shape) {
                size *= d;
            }
            if (size != Array.getLength(values)) {
                return "n-d array of shape " + java.util.Arrays.toString(shape) + " with " + Array.getLength(values) + " values";
            }
        }
        return null;
    }

    private static String string(String s) {
        for (int i = 0; i < s.length(); i++) {
            int c = s.charAt(i);
            boolean high = c >= 0xD800 && c <= 0xDBFF;
            boolean low = c >= 0xDC00 && c <= 0xDFFF;
            if (high && i + 1 < s.length() && s.charAt(i + 1) >= 0xDC00 && s.charAt(i + 1) <= 0xDFFF) {
                i++;
                continue;
            }
            if (high || low || c == 0xFFFE || c == 0xFFFF || c < 0x20 && c != 9 && c != 10 && c != 13) {
                return String.format("string with U+%04X at %d", c, i);
            }
        }
        return null;
    }
}

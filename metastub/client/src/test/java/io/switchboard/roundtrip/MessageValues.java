package io.switchboard.roundtrip;

import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.dynamic.DynamicType;
import java.lang.reflect.Array;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * jqwik arbitraries of request messages for an interface read from a schema: every field filled
 * according to its type and occurrence, with the edge values that encoders get wrong (NaN, -0.0,
 * infinities, subnormals, extreme integers, empty and null arrays, empty strings, characters
 * outside the BMP) and, now and then, a value no protocol may carry (a lone surrogate or a control
 * character, a required field left null, a date-time {@code xs:dateTime} cannot say, an n-d array
 * whose shape does not match its values), which must be refused before it is sent.
 *
 * <p>Linked nodes are drawn as pools, one per linked type, and references as indexes into them
 * ({@link Ref}), so cycles and shared nodes are as likely as lists; {@link #link} turns the draft
 * into records.
 */
final class MessageValues {
    private static final int MAX_LIST = 4;
    private static final int MAX_POOL = 6;
    private static final int MAX_CHOICE_DEPTH = 3;

    private final DynamicInterface iface;

    MessageValues(DynamicInterface iface) {
        this.iface = iface;
    }

    /** A reference, by index, into the pool of its linked type. */
    record Ref(String type, int index) {
    }

    /** A record before linking: its type and field values (references still {@link Ref}s). */
    record Draft(DynamicType type, List<Object> values) {
    }

    /** A heterogeneous list before linking. */
    record DraftList(DynamicType type, List<Object> items) {
    }

    /** The draft of a message and the pools of its linked types. */
    record Message(Draft message, Map<String, List<Draft>> pools) {
    }

    Arbitrary<DynamicRecord> request(String operation) {
        DynamicType message = iface.message(operation);
        List<DynamicType> linked = new ArrayList<>();
        for (String t : iface.model().types().keySet()) {
            if (iface.type(t).recursive()) {
                linked.add(iface.type(t));
            }
        }
        Arbitrary<Draft> draft = record(message, 0);
        if (linked.isEmpty()) {
            return draft.map(d -> link(new Message(d, Map.of())));
        }
        List<Arbitrary<List<Draft>>> pools = new ArrayList<>();
        for (DynamicType t : linked) {
            pools.add(record(t, 0).list().ofMinSize(1).ofMaxSize(MAX_POOL));
        }
        Arbitrary<Map<String, List<Draft>>> allPools = Combinators.combine(pools).as(lists -> {
            Map<String, List<Draft>> m = new HashMap<>();
            for (int i = 0; i < linked.size(); i++) {
                m.put(linked.get(i).name(), lists.get(i));
            }
            return m;
        });
        return Combinators.combine(draft, allPools).as((d, p) -> link(new Message(d, p)));
    }

    private Arbitrary<Draft> record(DynamicType type, int depth) {
        List<FieldModel> fields = type.model().fields();
        if (fields.isEmpty()) {
            return Arbitraries.just(new Draft(type, List.of()));
        }
        if (type.model().ndArray()) {
            return ndArray(type, fields);
        }
        List<Arbitrary<Object>> values = new ArrayList<>();
        for (FieldModel f : fields) {
            values.add(field(type, f, depth));
        }
        return Combinators.combine(values).as(v -> new Draft(type, v));
    }

    /** An n-d array: a shape and as many values, and now and then one value too many. */
    private Arbitrary<Draft> ndArray(DynamicType type, List<FieldModel> fields) {
        ScalarType leaf = fields.get(1).scalar();
        Arbitrary<int[]> shapes = Arbitraries.integers().between(0, 3).array(int[].class).ofMaxSize(3);
        Arbitrary<Boolean> consistent = Arbitraries.frequency(Tuple.of(39, true), Tuple.of(1, false))
                .edgeCases(e -> e.filter(ok -> ok));
        return Combinators.combine(shapes, consistent, scalar(leaf).list().ofSize(64)).as((shape, ok, pool) -> {
            int size = 1;
            for (int d : shape) {
                size *= d;
            }
            int n = ok ? size : size + 1;
            Object values = Array.newInstance(primitive(leaf), n);
            for (int i = 0; i < n; i++) {
                Array.set(values, i, pool.get(i % pool.size()));
            }
            return new Draft(type, List.of(shape, values));
        });
    }

    @SuppressWarnings("unchecked")
    private Arbitrary<Object> field(DynamicType owner, FieldModel f, int depth) {
        DynamicType target = f.isScalar() ? null : iface.type(f.complexType());
        Arbitrary<Object> one;
        if (f.graphReference()) {
            one = Arbitraries.integers().between(0, MAX_POOL - 1).map(i -> (Object) new Ref(target.name(), i));
        } else if (target != null && target.heterogeneousList()) {
            one = (Arbitrary<Object>) (Arbitrary<?>) choices(target, depth + 1);
        } else if (target != null) {
            one = (Arbitrary<Object>) (Arbitrary<?>) record(target, depth + 1);
        } else {
            one = scalar(f.scalar());
        }
        if (f.repeated() && f.graphReference()) {
            // a list of references holds no nulls (now and then one, which must be refused)
            return rarely(one.injectNull(0.01)).list().ofMaxSize(MAX_LIST).map(l -> (Object) new ArrayList<>(l)).injectNull(0.15);
        }
        if (f.repeated()) {
            if (f.isScalar() && f.scalar().isPrimitive()) {
                Arbitrary<Object> array = one.list().ofMaxSize(MAX_LIST * 2).map(l -> toArray(f.scalar(), l));
                return array.injectNull(0.15);
            }
            return one.injectNull(0.15).list().ofMaxSize(MAX_LIST).map(l -> (Object) new ArrayList<>(l)).injectNull(0.15);
        }
        boolean mayBeNull = f.optional() || f.nillable();
        boolean primitive = f.isScalar() && f.scalar().isPrimitive();
        if (mayBeNull) {
            return one.injectNull(0.2);
        }
        // a required reference left null is a caller's mistake every protocol must refuse before sending
        return primitive ? one : rarely(one.injectNull(0.01));
    }

    /**
     * Invalid values are for the random part only: jqwik mixes edge cases (null among them) into
     * far more tries than their frequency, which would drown the valid ones.
     */
    private static Arbitrary<Object> rarely(Arbitrary<Object> withNulls) {
        return withNulls.edgeCases(e -> e.filter(v -> v != null));
    }

    private Arbitrary<DraftList> choices(DynamicType type, int depth) {
        List<Arbitrary<Object>> alternatives = new ArrayList<>();
        for (FieldModel a : type.model().fields()) {
            DynamicType target = a.isScalar() ? null : iface.type(a.complexType());
            if (target == null) {
                alternatives.add(scalar(a.scalar()));
            } else if (target.heterogeneousList()) {
                if (depth < MAX_CHOICE_DEPTH) {
                    // built eagerly: the depth bound ends it, and a lazy arbitrary would make new ones per value
                    alternatives.add(choices(target, depth + 1).map(l -> (Object) l));
                }
            } else {
                alternatives.add(record(target, depth + 1).map(r -> (Object) r));
            }
        }
        return Arbitraries.oneOf(alternatives).list().ofMaxSize(MAX_LIST).map(items -> new DraftList(type, items));
    }

    static Arbitrary<Object> scalar(ScalarType s) {
        Arbitrary<?> a = switch (s) {
            case BOOLEAN -> Arbitraries.of(true, false);
            case BYTE -> Arbitraries.bytes();
            case SHORT -> Arbitraries.shorts();
            case INT -> Arbitraries.integers();
            case LONG -> Arbitraries.longs();
            case FLOAT -> Arbitraries.oneOf(Arbitraries.floats().withStandardSpecialValues().withSpecialValue(-0.0f),
                    Arbitraries.integers().map(Float::intBitsToFloat));
            case DOUBLE -> Arbitraries.oneOf(Arbitraries.doubles().withStandardSpecialValues().withSpecialValue(-0.0),
                    Arbitraries.longs().map(Double::longBitsToDouble));
            case STRING -> strings();
            case BYTES -> Arbitraries.bytes().array(byte[].class).ofMaxSize(12);
            case DATE_TIME -> dateTimes();
        };
        return a.map(v -> (Object) v);
    }

    /** Mostly text XML can carry (ASCII, other BMP characters, pairs of surrogates, markup); now and then any char. */
    private static Arbitrary<String> strings() {
        Arbitrary<String> valid = Arbitraries.strings().ofMaxLength(10)
                .withCharRange(' ', '~').withCharRange('\u00A0', '\uD7FF').withCharRange('\uE000', '\uFFFD')
                .withChars('\t', '\n', '\r', '<', '&', '>', '"', ']');
        Arbitrary<String> withPairs = Combinators.combine(valid, Arbitraries.integers().between(0x10000, 0x10FFFF))
                .as((text, cp) -> text + new String(Character.toChars(cp)) + text);
        Arbitrary<String> any = Arbitraries.strings().all().ofMaxLength(6);
        Arbitrary<String> lone = Combinators.combine(valid, Arbitraries.of('\uD800', '\uDBFF', '\uDC00', '\uDFFF'))
                .as((text, surrogate) -> text + surrogate + text);
        return Arbitraries.frequencyOf(Tuple.of(40, valid), Tuple.of(10, withPairs), Tuple.of(2, any), Tuple.of(1, lone),
                Tuple.of(6, Arbitraries.of("", " ", "\r\n", "]]>", "<a&b>", " lead and trail ")));
    }

    /** Date-times in xs:dateTime's range, and now and then one outside it (offset seconds, year 10000). */
    private static Arbitrary<OffsetDateTime> dateTimes() {
        Arbitrary<Long> seconds = Arbitraries.longs().between(Instant.parse("0001-01-02T00:00:00Z").getEpochSecond(),
                Instant.parse("9999-12-30T00:00:00Z").getEpochSecond());
        Arbitrary<Integer> nanos = Arbitraries.oneOf(Arbitraries.just(0), Arbitraries.integers().between(0, 999_999_999));
        Arbitrary<Integer> offsetMinutes = Arbitraries.integers().between(-14 * 60, 14 * 60);
        Arbitrary<OffsetDateTime> valid = Combinators.combine(seconds, nanos, offsetMinutes)
                .as((s, n, m) -> OffsetDateTime.ofInstant(Instant.ofEpochSecond(s, n), ZoneOffset.ofTotalSeconds(m * 60)));
        Arbitrary<OffsetDateTime> invalid = Arbitraries.of(
                OffsetDateTime.of(2026, 11, 24, 10, 0, 0, 0, ZoneOffset.ofTotalSeconds(3600 + 7)),
                OffsetDateTime.of(10000, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.ofHours(18)));
        return Arbitraries.frequencyOf(Tuple.of(80, valid), Tuple.of(1, invalid))
                .edgeCases(e -> e.filter(d -> d.getOffset().getTotalSeconds() % 60 == 0 && d.getYear() <= 9999
                        && Math.abs(d.getOffset().getTotalSeconds()) <= 14 * 3600));
    }

    private static Object toArray(ScalarType s, List<Object> values) {
        Object array = Array.newInstance(primitive(s), values.size());
        for (int i = 0; i < values.size(); i++) {
            Array.set(array, i, values.get(i));
        }
        return array;
    }

    private static Class<?> primitive(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> boolean.class;
            case BYTE -> byte.class;
            case SHORT -> short.class;
            case INT -> int.class;
            case LONG -> long.class;
            case FLOAT -> float.class;
            case DOUBLE -> double.class;
            default -> throw new IllegalArgumentException(s + " is not primitive");
        };
    }

    /** Records from a draft: pool nodes first, so references can point anywhere, back or forward. */
    private DynamicRecord link(Message m) {
        Map<String, List<DynamicRecord>> nodes = new HashMap<>();
        m.pools().forEach((type, drafts) -> {
            List<DynamicRecord> records = new ArrayList<>();
            for (Draft d : drafts) {
                records.add(d.type().newRecord());
            }
            nodes.put(type, records);
        });
        m.pools().forEach((type, drafts) -> {
            for (int i = 0; i < drafts.size(); i++) {
                fill(nodes.get(type).get(i), drafts.get(i), nodes);
            }
        });
        DynamicRecord message = m.message().type().newRecord();
        fill(message, m.message(), nodes);
        return message;
    }

    private void fill(DynamicRecord r, Draft d, Map<String, List<DynamicRecord>> nodes) {
        List<FieldModel> fields = d.type().model().fields();
        for (int i = 0; i < fields.size(); i++) {
            r.set(fields.get(i).name(), resolve(d.values().get(i), nodes));
        }
    }

    private Object resolve(Object v, Map<String, List<DynamicRecord>> nodes) {
        if (v instanceof Ref ref) {
            List<DynamicRecord> pool = nodes.get(ref.type());
            return pool.get(ref.index() % pool.size());
        }
        if (v instanceof Draft d) {
            DynamicRecord r = d.type().newRecord();
            fill(r, d, nodes);
            return r;
        }
        if (v instanceof DraftList l) {
            DynamicList list = l.type().newList();
            for (Object item : l.items()) {
                list.add(resolve(item, nodes));
            }
            return list;
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object item : list) {
                out.add(resolve(item, nodes));
            }
            return out;
        }
        return v;
    }
}

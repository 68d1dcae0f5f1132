package io.switchboard.testing.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;

/** Test values and exact comparisons shared by the conformance suite and the codec tests. */
public final class Values {
    private Values() {
    }

    /** Doubles that XML and binary encodings get wrong most often. */
    public static final double[] EDGE_DOUBLES = {
        0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3, Math.PI, Double.NaN, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE, Double.MIN_NORMAL,
        Math.nextDown(Double.MIN_NORMAL), 1e-310, 123456789.123456789, -2.5e300
    };

    public static final float[] EDGE_FLOATS = {
        0.0f, -0.0f, 0.1f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE,
        Float.MAX_VALUE, Float.MIN_NORMAL, 16777217f
    };

    /** Strings with characters outside the BMP, combining marks, XML-special characters. */
    public static final List<String> EDGE_STRINGS = List.of("", " leading and trailing ", "plain ascii",
            "<tag attr=\"x\">&amp;</tag>", "\uD83D\uDE00 grinning face", "\uD834\uDD1E clef", "e\u0301 combining",
            "\u4E2D\u6587", "tab\tnewline\nreturn", "]]> cdata end");

    /** Exact equality for doubles: the same bits, except that any NaN equals any NaN. */
    public static void assertSameDoubles(double[] expected, double[] actual) {
        if (expected == null) {
            assertNull(actual, "expected null array");
            return;
        }
        assertNotNull(actual, "expected an array, got null");
        assertEquals(expected.length, actual.length, "length");
        for (int i = 0; i < expected.length; i++) {
            if (Double.isNaN(expected[i])) {
                assertEquals(true, Double.isNaN(actual[i]), "NaN at " + i);
            } else {
                assertEquals(Double.doubleToRawLongBits(expected[i]), Double.doubleToRawLongBits(actual[i]),
                        "bits at " + i + ": expected " + expected[i] + " got " + actual[i]);
            }
        }
    }

    public static LinkEntry node(int i) {
        LinkEntry e = new LinkEntry();
        e.setLlong(i * 1_000_000_007L);
        e.setSshort((short) i);
        e.setIint(-i);
        e.setFfloat(i / 3f);
        e.setDdouble(i == 1 ? -0.0 : i / 7.0);
        e.setSstring(i % 3 == 0 ? null : "node " + i + " \uD83D\uDE00");
        return e;
    }

    /** A linked list of {@code n} nodes, built iteratively. */
    public static LinkEntry list(int n) {
        LinkEntry head = null;
        for (int i = n - 1; i >= 0; i--) {
            LinkEntry e = node(i);
            e.setNextLink(head);
            head = e;
        }
        return head;
    }

    /** Walks both lists side by side, iteratively; fails on the first difference. */
    public static void assertSameList(LinkEntry expected, LinkEntry actual) {
        IdentityHashMap<LinkEntry, LinkEntry> seen = new IdentityHashMap<>();
        int index = 0;
        while (expected != null) {
            assertNotNull(actual, "list ends early at node " + index);
            LinkEntry previous = seen.put(expected, actual);
            if (previous != null) {
                assertSame(previous, actual, "cycle lands on a different node at " + index);
                return;
            }
            assertEquals(expected.getLlong(), actual.getLlong(), "llong at " + index);
            assertEquals(expected.getSshort(), actual.getSshort(), "sshort at " + index);
            assertEquals(expected.getIint(), actual.getIint(), "iint at " + index);
            assertEquals(Float.floatToRawIntBits(expected.getFfloat()), Float.floatToRawIntBits(actual.getFfloat()),
                    "ffloat at " + index);
            assertEquals(Double.doubleToRawLongBits(expected.getDdouble()),
                    Double.doubleToRawLongBits(actual.getDdouble()), "ddouble at " + index);
            assertEquals(expected.getSstring(), actual.getSstring(), "sstring at " + index);
            expected = expected.getNextLink();
            actual = actual.getNextLink();
            index++;
        }
        assertNull(actual, "list goes on past " + index + " nodes");
    }

    public static int length(LinkEntry head) {
        IdentityHashMap<LinkEntry, Boolean> seen = new IdentityHashMap<>();
        int n = 0;
        for (LinkEntry e = head; e != null && seen.put(e, true) == null; e = e.getNextLink()) {
            n++;
        }
        return n;
    }

    /** A record with every field set to an awkward value. */
    public static Record fullRecord() {
        Record r = new Record();
        r.setName("r\uD83D\uDE00");
        r.setCount(-7);
        r.setFlag(true);
        r.setSmall(Byte.MIN_VALUE);
        r.setRatio(Float.NaN);
        r.setData(new byte[] {0, -1, 127, -128, 10});
        r.setWhen(OffsetDateTime.of(2026, 11, 22, 10, 15, 30, 123_000_000, ZoneOffset.ofHoursMinutes(5, 30)));
        r.setTags(new ArrayList<>(Arrays.asList("a", "", null, "\uD834\uDD1E")));
        r.setInts(new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE});
        r.setLongs(new long[] {Long.MIN_VALUE, Long.MAX_VALUE});
        r.setFloats(EDGE_FLOATS.clone());
        r.setFlags(new boolean[] {true, false, true});
        Point origin = new Point();
        origin.setX(-0.0);
        origin.setY(Double.NEGATIVE_INFINITY);
        r.setOrigin(origin);
        Point p = new Point();
        p.setX(1);
        p.setY(2);
        r.setPoints(new ArrayList<>(Arrays.asList(p, null, origin)));
        return r;
    }

    /** A record whose optional fields are all absent and whose collections are empty. */
    public static Record emptyRecord() {
        Record r = new Record();
        r.setTags(new ArrayList<>());
        r.setInts(new int[0]);
        r.setLongs(new long[0]);
        r.setFloats(new float[0]);
        r.setFlags(new boolean[0]);
        r.setPoints(new ArrayList<>());
        r.setData(new byte[0]);
        return r;
    }

    public static void assertSameRecord(Record expected, Record actual) {
        if (expected == null) {
            assertNull(actual);
            return;
        }
        assertNotNull(actual);
        assertEquals(expected.getName(), actual.getName(), "name");
        assertEquals(expected.getCount(), actual.getCount(), "count");
        assertEquals(expected.getFlag(), actual.getFlag(), "flag");
        assertEquals(expected.getSmall(), actual.getSmall(), "small");
        if (expected.getRatio() == null) {
            assertNull(actual.getRatio(), "ratio");
        } else {
            assertEquals(Float.floatToIntBits(expected.getRatio()), Float.floatToIntBits(actual.getRatio()), "ratio");
        }
        assertArrayEquals(expected.getData(), actual.getData(), "data");
        assertEquals(expected.getWhen(), actual.getWhen(), "when (instant and offset)");
        assertEquals(expected.getTags(), actual.getTags(), "tags");
        assertArrayEquals(expected.getInts(), actual.getInts(), "ints");
        assertArrayEquals(expected.getLongs(), actual.getLongs(), "longs");
        if (expected.getFloats() == null) {
            assertNull(actual.getFloats());
        } else {
            assertNotNull(actual.getFloats(), "floats");
            assertEquals(expected.getFloats().length, actual.getFloats().length);
            for (int i = 0; i < expected.getFloats().length; i++) {
                assertEquals(Float.floatToIntBits(expected.getFloats()[i]), Float.floatToIntBits(actual.getFloats()[i]),
                        "floats[" + i + "]");
            }
        }
        assertArrayEquals(expected.getFlags(), actual.getFlags(), "flags");
        assertSamePoint(expected.getOrigin(), actual.getOrigin());
        if (expected.getPoints() == null) {
            assertNull(actual.getPoints(), "points");
        } else {
            assertNotNull(actual.getPoints(), "points");
            assertEquals(expected.getPoints().size(), actual.getPoints().size(), "points size");
            for (int i = 0; i < expected.getPoints().size(); i++) {
                assertSamePoint(expected.getPoints().get(i), actual.getPoints().get(i));
            }
        }
    }

    private static void assertSamePoint(Point e, Point a) {
        if (e == null) {
            assertNull(a, "point");
            return;
        }
        assertNotNull(a, "point");
        assertEquals(Double.doubleToRawLongBits(e.getX()), Double.doubleToRawLongBits(a.getX()), "x");
        assertEquals(Double.doubleToRawLongBits(e.getY()), Double.doubleToRawLongBits(a.getY()), "y");
    }

    /** Same shape and the same bits in every value (any NaN equals any NaN). */
    public static void assertSameTensor(Tensor expected, Tensor actual) {
        if (expected == null) {
            assertNull(actual, "expected a null n-d array");
            return;
        }
        assertNotNull(actual, "expected an n-d array, got null");
        assertArrayEquals(expected.getShape(), actual.getShape(), "shape");
        assertSameDoubles(expected.getValues(), actual.getValues());
    }

    // ---- heterogeneous lists

    /** Every byte value once, in order. */
    public static byte[] allByteValues() {
        byte[] b = new byte[256];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    /**
     * A list with every alternative, edge values among them, an empty and a nested list, and a
     * list inside a struct inside the list.
     */
    public static Mixed mixedOfEveryKind() {
        Point p = new Point();
        p.setX(-0.0);
        p.setY(Double.NaN);
        Labelled withList = new Labelled();
        withList.setLabel("inner \uD83D\uDE00");
        withList.setContent(Mixed.of("deep", Mixed.of(Mixed.of()), 7L));
        Labelled withoutList = new Labelled();
        withoutList.setLabel("");
        Mixed m = Mixed.of(1.5, -0.0, Double.NaN, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
                Long.MIN_VALUE, 0L, true, false, "", "text <&> \uD834\uDD1E", new byte[0], allByteValues(), p,
                Tensor.of(new double[][] {{1, 2, 3}, {4, 5, Double.NaN}}), fullRecord(), emptyRecord(),
                withList, withoutList, Mixed.of(), Mixed.of(2.5, "x", Mixed.of(Mixed.of(3L))));
        return m;
    }

    /** A list holding a list holding ... {@code depth} lists in all (the outermost counts), with a value at the bottom. */
    public static Mixed nested(int depth) {
        Mixed m = Mixed.of("bottom", (double) depth);
        for (int i = 1; i < depth; i++) {
            m = Mixed.of(m, (long) i);
        }
        return m;
    }

    /** Same elements, same classes, same bits; nested lists compared element by element. */
    public static void assertSameMixed(Mixed expected, Mixed actual) {
        assertSameMixed(expected, actual, "list");
    }

    private static void assertSameMixed(Mixed expected, Mixed actual, String where) {
        if (expected == null) {
            assertNull(actual, where + ": expected null");
            return;
        }
        assertNotNull(actual, where + ": expected a list, got null");
        assertEquals(expected.getItems().size(), actual.getItems().size(), where + ": size");
        for (int i = 0; i < expected.getItems().size(); i++) {
            Object e = expected.getItems().get(i);
            Object a = actual.getItems().get(i);
            String at = where + "[" + i + "]";
            assertNotNull(a, at);
            assertEquals(e.getClass(), a.getClass(), at + ": class");
            if (e instanceof Double d) {
                assertSameDoubles(new double[] {d}, new double[] {(Double) a});
            } else if (e instanceof byte[] b) {
                assertArrayEquals(b, (byte[]) a, at);
            } else if (e instanceof Point p) {
                assertSamePoint(p, (Point) a);
            } else if (e instanceof Tensor t) {
                assertSameTensor(t, (Tensor) a);
            } else if (e instanceof Record r) {
                assertSameRecord(r, (Record) a);
            } else if (e instanceof Labelled l) {
                assertEquals(l.getLabel(), ((Labelled) a).getLabel(), at + ": label");
                assertSameMixed(l.getContent(), ((Labelled) a).getContent(), at + ".content");
            } else if (e instanceof Mixed nested) {
                assertSameMixed(nested, (Mixed) a, at);
            } else {
                assertEquals(e, a, at);
            }
        }
    }

    /**
     * Every message shape of the conformance suite, as generated beans, with the element each one
     * is ({@code {element, bean}}): edge doubles, empty and null arrays, records full, empty and
     * absent, long lists, a cycle, faults, n-d arrays, heterogeneous lists of every alternative
     * nested to the depth limit. What the codec tests run every codec through.
     */
    public static List<Object[]> messageShapes() {
        List<Object[]> m = new ArrayList<>();
        for (double[] values : new double[][] {Values.EDGE_DOUBLES.clone(), new double[0], null, new double[5_000]}) {
            EchoDoubles d = new EchoDoubles();
            d.setValues(values);
            m.add(new Object[] {"echoDoubles", d});
        }
        for (Record r : new Record[] {Values.fullRecord(), Values.emptyRecord(), new Record(), null}) {
            EchoRecord e = new EchoRecord();
            e.setRecord(r);
            m.add(new Object[] {"echoRecord", e});
            EchoSharedResponse s = new EchoSharedResponse();
            s.setRecord(r);
            m.add(new Object[] {"echoSharedResponse", s});
        }
        LinkEntry cycle = Values.list(4);
        cycle.getNextLink().getNextLink().getNextLink().setNextLink(cycle.getNextLink());
        for (LinkEntry head : new LinkEntry[] {Values.list(1_000), cycle, null}) {
            EchoList l = new EchoList();
            l.setHead(head);
            m.add(new Object[] {"echoList", l});
            EchoListResponse r = new EchoListResponse();
            r.setHead(head);
            m.add(new Object[] {"echoListResponse", r});
        }
        m.add(new Object[] {"ping", new Ping()});
        Divide divide = new Divide();
        divide.setDividend(Long.MIN_VALUE);
        divide.setDivisor(-1);
        m.add(new Object[] {"divide", divide});
        DivideFault fault = new DivideFault();
        fault.setReason("<division> & \"zero\" \uD83D\uDE00");
        fault.setDividend(7);
        m.add(new Object[] {"divideFault", fault});
        EchoTensor t = new EchoTensor();
        t.setTensor(Tensor.of(new double[][] {{1, -0.0}, {Double.NaN, Double.NEGATIVE_INFINITY}, {5, 6}}));
        m.add(new Object[] {"echoTensor", t});
        EchoIntTensor it = new EchoIntTensor();
        it.setTensor(IntTensor.of(new int[] {0, 3}, new int[0]));
        m.add(new Object[] {"echoIntTensor", it});
        // heterogeneous lists: every alternative, nested through lists and structs, empty, absent,
        // repeated, and nested to the depth limit
        Mixed every = Values.mixedOfEveryKind();
        Object[][] lists = {{every, null}, {Mixed.of(), null}, {null, null}, {null, new Mixed[0]},
            {Mixed.of(1L), new Mixed[] {Mixed.of(), every, Mixed.of("x")}},
            {Values.nested(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH), null}};
        for (Object[] l : lists) {
            List<Mixed> more = l[1] == null ? null : new ArrayList<>(Arrays.asList((Mixed[]) l[1]));
            EchoMixed request = new EchoMixed();
            request.setList((Mixed) l[0]);
            request.setMore(more);
            m.add(new Object[] {"echoMixed", request});
            EchoMixedResponse response = new EchoMixedResponse();
            response.setList((Mixed) l[0]);
            response.setMore(more);
            m.add(new Object[] {"echoMixedResponse", response});
        }
        return m;
    }
}

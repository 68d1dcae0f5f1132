package io.switchboard.soap.cxf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.registry.testing.RunningRegistry;
import jakarta.xml.ws.Holder;
import jakarta.xml.ws.soap.SOAPFaultException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import switchboard.echo.DivideFault_Exception;
import switchboard.echo.Echo;
import switchboard.echo.EchoPortType;
import switchboard.echo.LinkEntry;
import switchboard.echo.Mixed;
import switchboard.echo.SbGraph;
import switchboard.echo.Tensor;

/**
 * The echo component, served as a user serves it, called through the JAX-WS client CXF's
 * wsdl2java made from its WSDL in the default wrapper style: every operation, values compared bit
 * for bit, the declared fault as its typed exception, and a request the server must refuse
 * answered with a SOAP fault.
 */
class EchoCxfTest {
    /** Every kind of double XML must carry exactly: NaN, both zeros, both infinities, the smallest subnormal. */
    static final double[] HARD_DOUBLES = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
            Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE, 0.1, 1.0 / 3, -2.5e-300};

    private static RunningRegistry registry;
    private static RecordingEcho impl;
    private static String address;
    private static EchoPortType echo;
    /** A port that reads the fault of a refusal (HTTP 400) as a SOAP fault. */

    @BeforeAll
    static void start() throws Exception {
        registry = RunningRegistry.start();
        impl = new RecordingEcho();
        address = CxfClients.soapAddress(registry.serve(EchoComponent.skeleton(impl)));
        echo = CxfClients.at(new Echo(URI.create(address + "?wsdl").toURL()).getEchoSoapPort(), address);
    }

    /** The echo component, keeping the last array it received, so a test sees what reached the server. */
    static final class RecordingEcho extends EchoService {
        volatile double[] lastDoubles;

        @Override
        public double[] echoDoubles(double[] values) {
            lastDoubles = values;
            return super.echoDoubles(values);
        }
    }

    @AfterAll
    static void stop() {
        registry.close();
    }

    static List<Double> boxed(double[] values) {
        return new ArrayList<>(Arrays.stream(values).boxed().toList());
    }

    /** Equal bit for bit (Double.equals tells -0.0 from 0.0 and takes NaN as NaN), with the index that differs. */
    static void assertSameDoubles(List<Double> expected, List<Double> actual) {
        assertEquals(expected.size(), actual.size(), "length");
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(Double.doubleToLongBits(expected.get(i)), Double.doubleToLongBits(actual.get(i)),
                    "value " + i + ": " + expected.get(i) + " came back as " + actual.get(i));
        }
    }

    @Test
    void servesTheWsdlTheClientWasGeneratedFrom() throws Exception {
        CxfClients.assertServesTheGeneratedWsdl(address, "/io/switchboard/components/echo/Echo.wsdl");
    }

    @Test
    void echoDoublesKeepsEveryBit() {
        Holder<List<Double>> values = new Holder<>(boxed(HARD_DOUBLES));
        echo.echoDoubles(values);
        assertSameDoubles(boxed(HARD_DOUBLES), values.value);

        Holder<List<Double>> empty = new Holder<>(new ArrayList<>());
        echo.echoDoubles(empty);
        assertEquals(0, impl.lastDoubles.length, "an empty array arrives empty");
        assertEquals(List.of(), empty.value);

        // a wrapper-style client has no null list: CXF fills the request wrapper's list through its getter,
        // which makes an empty one, so null goes out as an empty array (zeep and the Java stub send null)
        Holder<List<Double>> absent = new Holder<>(null);
        echo.echoDoubles(absent);
        assertEquals(0, impl.lastDoubles.length);
        assertEquals(List.of(), absent.value);
    }

    private static LinkEntry node(String id, long l, short s, int i, float f, double d, String text) {
        LinkEntry e = new LinkEntry();
        e.setSbId(id);
        e.setLlong(l);
        e.setSshort(s);
        e.setIint(i);
        e.setFfloat(f);
        e.setDdouble(d);
        e.setSstring(text);
        return e;
    }

    /** The three nodes of a list, in order, each linked to the next. */
    private static List<LinkEntry> threeNodes() {
        List<LinkEntry> nodes = List.of(
                node("n0", Long.MIN_VALUE, Short.MIN_VALUE, Integer.MIN_VALUE, Float.MIN_VALUE, -0.0, "first <&>"),
                node("n1", Long.MAX_VALUE, Short.MAX_VALUE, Integer.MAX_VALUE, Float.NaN, Double.MIN_VALUE, null),
                node("n2", 0, (short) 0, 0, Float.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, "\u00e9\u4e2d\ud83d\ude00"));
        nodes.get(0).setNextLink(nodes.get(1));
        nodes.get(1).setNextLink(nodes.get(2));
        return nodes;
    }

    private static SbGraph graphOf(List<LinkEntry> nodes) {
        SbGraph graph = new SbGraph();
        graph.getLinkEntry().addAll(nodes);
        return graph;
    }

    private static void assertSameNode(LinkEntry expected, LinkEntry actual) {
        assertEquals(expected.getLlong(), actual.getLlong());
        assertEquals(expected.getSshort(), actual.getSshort());
        assertEquals(expected.getIint(), actual.getIint());
        assertEquals(Float.floatToIntBits(expected.getFfloat()), Float.floatToIntBits(actual.getFfloat()));
        assertEquals(Double.doubleToLongBits(expected.getDdouble()), Double.doubleToLongBits(actual.getDdouble()));
        assertEquals(expected.getSstring(), actual.getSstring());
    }

    @Test
    void echoListReturnsTheLinkedListWithEveryValueExact() {
        List<LinkEntry> sent = threeNodes();
        Holder<Object> head = new Holder<>(sent.get(0));
        Holder<SbGraph> graph = new Holder<>(graphOf(sent));
        echo.echoList(head, graph);

        LinkEntry node = (LinkEntry) head.value;
        for (LinkEntry expected : sent) {
            assertSameNode(expected, node);
            assertTrue(graph.value.getLinkEntry().contains(node), "every node is in the answer's node table");
            node = (LinkEntry) node.getNextLink();
        }
        assertNull(node, "the list ends where it ended");
    }

    @Test
    void echoListReturnsACycleAsACycle() {
        List<LinkEntry> sent = threeNodes();
        sent.get(2).setNextLink(sent.get(0));
        Holder<Object> head = new Holder<>(sent.get(0));
        Holder<SbGraph> graph = new Holder<>(graphOf(sent));
        echo.echoList(head, graph);

        LinkEntry first = (LinkEntry) head.value;
        LinkEntry third = (LinkEntry) ((LinkEntry) first.getNextLink()).getNextLink();
        assertSameNode(sent.get(2), third);
        assertSame(first, third.getNextLink(), "the last node links back to the first one, not to a copy");
        assertEquals(3, graph.value.getLinkEntry().size());
    }

    @Test
    void echoListOfNoListIsNoList() {
        Holder<Object> head = new Holder<>(null);
        Holder<SbGraph> graph = new Holder<>(null);
        echo.echoList(head, graph);
        assertNull(head.value);
    }

    @Test
    void emptyRunsTheOperation() {
        long before = impl.calls();
        echo.empty();
        assertEquals(before + 1, impl.calls());
    }

    private static Tensor tensor(List<Integer> shape, double... values) {
        Tensor t = new Tensor();
        t.getShape().addAll(shape);
        t.getValues().addAll(boxed(values));
        return t;
    }

    @Test
    void echoTensorKeepsShapeAndValues() {
        double[] values = Arrays.copyOf(HARD_DOUBLES, 12);
        Holder<Tensor> t = new Holder<>(tensor(List.of(3, 4), values));
        echo.echoTensor(t);
        assertEquals(List.of(3, 4), t.value.getShape());
        assertSameDoubles(boxed(values), t.value.getValues());

        Holder<Tensor> scalar = new Holder<>(tensor(List.of(), -0.0));
        echo.echoTensor(scalar);
        assertEquals(List.of(), scalar.value.getShape(), "an empty shape is a single value");
        assertSameDoubles(List.of(-0.0), scalar.value.getValues());

        Holder<Tensor> none = new Holder<>(null);
        echo.echoTensor(none);
        assertNull(none.value);
    }

    private static Mixed mixed(Object... elements) {
        Mixed m = new Mixed();
        m.getNumberOrIntegerOrFlag().addAll(Arrays.asList(elements));
        return m;
    }

    /** Same alternatives in the same order with the same values; doubles bit for bit, lists and tensors deeply. */
    private static void assertSameMixed(Mixed expected, Mixed actual) {
        List<Object> e = expected.getNumberOrIntegerOrFlag();
        List<Object> a = actual.getNumberOrIntegerOrFlag();
        assertEquals(e.size(), a.size(), "elements");
        for (int i = 0; i < e.size(); i++) {
            assertEquals(e.get(i).getClass(), a.get(i).getClass(), "alternative of element " + i);
            if (e.get(i) instanceof Mixed nested) {
                assertSameMixed(nested, (Mixed) a.get(i));
            } else if (e.get(i) instanceof Tensor t) {
                assertEquals(t.getShape(), ((Tensor) a.get(i)).getShape());
                assertSameDoubles(t.getValues(), ((Tensor) a.get(i)).getValues());
            } else {
                assertEquals(e.get(i), a.get(i), "element " + i);   // Double.equals: -0.0 is not 0.0, NaN is NaN
            }
        }
    }

    @Test
    void echoMixedKeepsEachAlternativeInOrder() {
        Mixed sent = mixed(Double.NaN, -0.0, Double.MIN_VALUE, Long.MIN_VALUE, true, false, "a < b & c", "",
                tensor(List.of(2), Double.NEGATIVE_INFINITY, 1.5),
                mixed(1L, mixed(), mixed(mixed("deep"))), Double.POSITIVE_INFINITY);
        Holder<Mixed> list = new Holder<>(sent);
        echo.echoMixed(list);
        assertSameMixed(sent, list.value);

        Holder<Mixed> empty = new Holder<>(mixed());
        echo.echoMixed(empty);
        assertEquals(List.of(), empty.value.getNumberOrIntegerOrFlag());

        Holder<Mixed> none = new Holder<>(null);
        echo.echoMixed(none);
        assertNull(none.value);
    }

    @Test
    void divideAnswersQuotientAndRemainder() throws Exception {
        long[][] cases = {{7, 2, 3, 1}, {-7, 2, -3, -1}, {Long.MIN_VALUE, -1, Long.MIN_VALUE, 0}, {0, 5, 0, 0}};
        for (long[] c : cases) {
            Holder<Long> quotient = new Holder<>();
            Holder<Long> remainder = new Holder<>();
            echo.divide(c[0], c[1], quotient, remainder);
            assertEquals(c[2], quotient.value, c[0] + " / " + c[1]);
            assertEquals(c[3], remainder.value, c[0] + " % " + c[1]);
        }
    }

    @Test
    void divideByZeroIsTheDeclaredFaultAsItsTypedException() {
        DivideFault_Exception e = assertThrows(DivideFault_Exception.class,
                () -> echo.divide(42, 0, new Holder<>(), new Holder<>()));
        assertEquals("division by zero", e.getFaultInfo().getReason());
        assertEquals(42, e.getFaultInfo().getDividend());
    }

    // ---- hostile: what a typed client can still send wrong is refused with a SOAP fault, and the operation never runs

    /** The call ended with the server's SOAP fault: code Client (the sender's), its reason saying what. */
    static void assertSendersFault(SOAPFaultException e, String saying) {
        String reason = e.getFault().getFaultString();
        assertEquals("Client", e.getFault().getFaultCodeAsQName().getLocalPart(), reason);
        assertTrue(reason.contains(saying), reason);
    }

    @Test
    void aDefaultClientReadsARefusalAsTheSendersFault() {
        // every SOAP 1.1 fault comes with HTTP 500 (WS-I BP R1126): CXF's default client reads it, no option needed
        List<LinkEntry> sent = threeNodes();
        LinkEntry stranger = node("n9", 1, (short) 1, 1, 1f, 1.0, null);
        assertSendersFault(assertThrows(SOAPFaultException.class,
                () -> echo.echoList(new Holder<>(stranger), new Holder<>(graphOf(sent)))), "n9");
    }

    @Test
    void aHeadNamingANodeTheMessageDoesNotHoldIsRefused() {
        List<LinkEntry> sent = threeNodes();
        LinkEntry stranger = node("n9", 1, (short) 1, 1, 1f, 1.0, null);
        long before = impl.calls();
        // the head refers by id to a node left out of the node table: a dangling xs:IDREF
        SOAPFaultException e = assertThrows(SOAPFaultException.class,
                () -> echo.echoList(new Holder<>(stranger), new Holder<>(graphOf(sent))));
        assertSendersFault(e, "n9");
        assertEquals(before, impl.calls(), "the operation did not run");
        echoListReturnsTheLinkedListWithEveryValueExact();   // and the server still answers
    }

    @Test
    void aLinkToANodeTheMessageDoesNotHoldIsRefused() {
        List<LinkEntry> sent = threeNodes();
        sent.get(2).setNextLink(node("n9", 1, (short) 1, 1, 1f, 1.0, null));
        long before = impl.calls();
        SOAPFaultException e = assertThrows(SOAPFaultException.class,
                () -> echo.echoList(new Holder<>(sent.get(0)), new Holder<>(graphOf(sent))));
        assertSendersFault(e, "n9");
        assertEquals(before, impl.calls(), "the operation did not run");
    }

    @Test
    void listsNestedPastTheDepthLimitAreRefused() {
        Mixed deep = mixed(1.0);
        for (int i = 0; i < 100; i++) {
            deep = mixed(deep);
        }
        long before = impl.calls();
        Holder<Mixed> tooDeep = new Holder<>(deep);
        SOAPFaultException e = assertThrows(SOAPFaultException.class, () -> echo.echoMixed(tooDeep));
        assertSendersFault(e, "64");
        assertEquals(before, impl.calls(), "the operation did not run");
    }
}

package io.switchboard.codec.dynamic;

import io.switchboard.codec.documents.InterfaceDocuments;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.codec.Graphs;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.OffsetDateTimeAdapter;
import io.switchboard.codec.StrictXmlReader;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.WireFormatException;
import jakarta.xml.bind.JAXBException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.XMLConstants;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;

/**
 * The SOAP wire form for {@link DynamicRecord}s, driven by the interface model: the element, text
 * and namespace calls JAXB makes for the generated beans, in the same order, so a message comes
 * out as the same bytes (numeric arrays as one {@code xs:list} element, other lists as {@code item}
 * wrappers with {@code xsi:nil} entries, linked nodes flat in {@code sb-graph} with {@code sb-id}
 * ids and references by id, a heterogeneous list's elements as children named by their
 * alternatives). Reading is as strict as {@link io.switchboard.codec.XmlMessages}:
 * an unknown element, a repeated or dangling id, a malformed value or more linked nodes than the
 * limit is a {@link JAXBException} that names it.
 *
 * <pre>{@code
 * XmlCodec xml = XmlCodec.of(DynamicInterface.fromSchema(schema).descriptor(), 2_000_000);
 * xml.write(request, xmlStreamWriter);
 * DynamicRecord back = xml.read(xmlStreamReader, DynamicRecord.class);
 * }</pre>
 */
public final class DynamicXml implements XmlCodec {
    // the wire form's names, as the published WSDL spells them
    static final String GRAPH_ELEMENT = InterfaceDocuments.GRAPH_ELEMENT;
    static final String ID_ATTRIBUTE = InterfaceDocuments.ID_ATTRIBUTE;
    static final String ITEM = InterfaceDocuments.LIST_ITEM;
    private static final String XSI = XMLConstants.W3C_XML_SCHEMA_INSTANCE_NS_URI;
    /** Characters of an {@code xs:list} buffered before they go to the writer. */
    private static final int LIST_CHUNK = 8192;

    private final DynamicInterface iface;
    private final String ns;
    private final int maxGraphNodes;

    DynamicXml(DynamicInterface iface, int maxGraphNodes) {
        this.iface = iface;
        this.ns = iface.model().targetNamespace();
        this.maxGraphNodes = maxGraphNodes;
    }

    // ---- writing

    @Override
    public void check(Object message) {
        MessageChecks.of(iface.descriptor()).check(message, maxGraphNodes);
    }

    @Override
    public void write(Object message, XMLStreamWriter out) throws JAXBException {
        if (!(message instanceof DynamicRecord r) || !r.type.message()) {
            throw new JAXBException("not a message of " + iface.model().componentName() + ": " + message);
        }
        try {
            check(message);
        } catch (WireFormatException e) {
            if (WireFormatException.NODE_LIMIT.equals(e.reason())) {
                throw new Graphs.GraphLimitException(e.getMessage());   // a limit, as JAXB's walk reports it
            }
            throw new JAXBException("cannot write " + r.type.name() + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException | ClassCastException e) {
            throw new JAXBException("cannot write " + r.type.name() + ": " + e.getMessage(), e);
        }
        try {
            Map<Object, String> ids = null;
            List<Object> nodes = null;
            if (r.type.reachesGraph) {
                nodes = Graphs.collect(r, maxGraphNodes);
                ids = new IdentityHashMap<>(nodes.size() * 2);
                for (int i = 0; i < nodes.size(); i++) {
                    ids.put(nodes.get(i), "n" + i);
                }
            }
            out.writeStartElement("", r.type.name(), ns);
            out.writeDefaultNamespace(ns);
            Writing writing = new Writing(ids);
            writeFields(out, r, writing);
            if (nodes != null) {
                out.writeStartElement("", GRAPH_ELEMENT, ns);
                for (Object n : nodes) {
                    DynamicRecord node = (DynamicRecord) n;
                    out.writeStartElement("", node.type.name(), ns);
                    out.writeAttribute(ID_ATTRIBUTE, ids.get(node));
                    writeFields(out, node, writing);
                    out.writeEndElement();
                }
                out.writeEndElement();
            }
            out.writeEndElement();
        } catch (XMLStreamException e) {
            throw new JAXBException("cannot write " + r.type.name() + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException | ClassCastException e) {
            throw new JAXBException("cannot write " + r.type.name() + ": " + e.getMessage(), e);
        }
    }

    private void writeFields(XMLStreamWriter out, DynamicRecord r, Writing w) throws XMLStreamException {
        DynamicType t = r.type;
        for (int i = 0; i < t.fields.length; i++) {
            FieldModel f = t.fields[i];
            Object v = DynamicRecord.check(t, i, r.values[i]);
            if (v == null) {
                if (DynamicType.requiredPrimitive(f)) {
                    throw new IllegalArgumentException("field '" + f.name() + "' of " + t.name() + " is required ("
                            + f.scalar().xsdName() + "), but it is not set");
                }
                if (f.nillable() && !f.repeated()) {
                    nil(out, f.name());
                }
                continue;
            }
            if (f.repeated() && f.isScalar() && f.scalar().isPrimitive()) {
                start(out, f.name());
                writeList(out, f.scalar(), v);
                out.writeEndElement();
            } else if (f.repeated()) {
                start(out, f.name());
                for (Object item : (List<?>) v) {
                    if (item == null) {
                        nil(out, ITEM);
                    } else {
                        writeValue(out, ITEM, f, t.targets[i], item, w);
                    }
                }
                out.writeEndElement();
            } else {
                writeValue(out, f.name(), f, t.targets[i], v, w);
            }
        }
    }

    private void writeValue(XMLStreamWriter out, String element, FieldModel f, DynamicType target, Object v,
                            Writing w) throws XMLStreamException {
        start(out, element);
        if (f.graphReference()) {
            String id = w.ids == null ? null : w.ids.get(v);
            if (id == null) {
                throw new IllegalStateException("linked node " + v + " is not in the message's node table");
            }
            out.writeCharacters(id);
        } else if (target != null && target.heterogeneousList()) {
            writeChoices(out, (DynamicList) v, w);
        } else if (target != null) {
            DynamicRecord r = (DynamicRecord) v;
            if (target.model.ndArray()) {
                String problem = DynamicRecord.ndInconsistency(r);
                if (problem != null) {
                    throw new IllegalArgumentException("n-d array " + target.name() + ": " + problem);
                }
            }
            writeFields(out, r, w);
        } else {
            text(out, print(f.scalar(), v));
        }
        out.writeEndElement();
    }

    /** The elements of a heterogeneous list, each as the element of its alternative, as JAXB writes them. */
    private void writeChoices(XMLStreamWriter out, DynamicList list, Writing w) throws XMLStreamException {
        if (++w.listDepth > HeterogeneousList.MAX_DEPTH) {
            throw new IllegalArgumentException("heterogeneous list " + list.type.name() + " nests deeper than "
                    + HeterogeneousList.MAX_DEPTH + " levels");
        }
        DynamicType t = list.type;
        for (int k = 0; k < list.size(); k++) {
            Object e = list.get(k);
            int a = e == null ? -1 : t.alternativeOf(e);
            if (a < 0) {   // DynamicList refuses these when added; kept as a guard
                throw new IllegalArgumentException("element " + k + " of heterogeneous list " + t.name() + " is "
                        + (e == null ? "null" : "a " + DynamicRecord.describe(e)) + ", which no alternative allows");
            }
            writeValue(out, t.fields[a].name(), t.fields[a], t.targets[a], e, w);
        }
        w.listDepth--;
    }

    /**
     * Text as JAXB hands it to the writer: as a char array. Woodstox (which Axis2 brings) escapes
     * the two differently ({@code <&>} comes out {@code &lt;&amp;&gt;} from an array but
     * {@code &lt;&amp;>} from a String), so the String call would change the bytes of a message.
     */
    private static void text(XMLStreamWriter out, String text) throws XMLStreamException {
        out.writeCharacters(text.toCharArray(), 0, text.length());
    }

    private void start(XMLStreamWriter out, String element) throws XMLStreamException {
        out.writeStartElement("", element, ns);
    }

    private void nil(XMLStreamWriter out, String element) throws XMLStreamException {
        out.writeStartElement("", element, ns);
        out.writeNamespace("xsi", XSI);
        out.writeAttribute("xsi", XSI, "nil", "true");
        out.writeEndElement();
    }

    /** A numeric or boolean array as one whitespace-separated list, written in pieces. */
    private static void writeList(XMLStreamWriter out, ScalarType s, Object array) throws XMLStreamException {
        int n = java.lang.reflect.Array.getLength(array);
        StringBuilder b = new StringBuilder(Math.min(LIST_CHUNK + 32, 24 * n + 1));
        for (int k = 0; k < n; k++) {
            if (k > 0) {
                b.append(' ');
            }
            switch (s) {
                case BOOLEAN -> b.append(((boolean[]) array)[k]);
                case BYTE -> b.append(((byte[]) array)[k]);
                case SHORT -> b.append(((short[]) array)[k]);
                case INT -> b.append(((int[]) array)[k]);
                case LONG -> b.append(((long[]) array)[k]);
                case FLOAT -> b.append(printFloat(((float[]) array)[k]));
                case DOUBLE -> b.append(printDouble(((double[]) array)[k]));
                default -> throw new IllegalArgumentException(s + " is not a primitive");
            }
            if (b.length() >= LIST_CHUNK) {
                out.writeCharacters(b.toString());
                b.setLength(0);
            }
        }
        if (b.length() > 0 || n == 0) {
            out.writeCharacters(b.toString());
        }
    }

    /** Lexical forms as JAXB prints them (its {@code DatatypeConverterImpl}). */
    static String print(ScalarType s, Object v) {
        return switch (s) {
            case FLOAT -> printFloat((Float) v);
            case DOUBLE -> printDouble((Double) v);
            case BYTES -> Base64.getEncoder().encodeToString((byte[]) v);
            case DATE_TIME -> new OffsetDateTimeAdapter().marshal((OffsetDateTime) v);
            default -> v.toString();
        };
    }

    private static String printDouble(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (v == Double.POSITIVE_INFINITY) {
            return "INF";
        }
        return v == Double.NEGATIVE_INFINITY ? "-INF" : String.valueOf(v);
    }

    private static String printFloat(float v) {
        if (Float.isNaN(v)) {
            return "NaN";
        }
        if (v == Float.POSITIVE_INFINITY) {
            return "INF";
        }
        return v == Float.NEGATIVE_INFINITY ? "-INF" : String.valueOf(v);
    }

    // ---- reading

    @Override
    public <T> T read(XMLStreamReader in, Class<T> type) throws JAXBException {
        if (type != DynamicRecord.class && type != Object.class) {
            throw new JAXBException("messages of an interface read at run time are DynamicRecords, not " + type.getName());
        }
        try {
            // the same checks, paths and messages as the generated codec's: see StrictXmlReader
            in = new StrictXmlReader(in, StrictXmlReader.Plan.of(iface.descriptor()), null);
            DynamicType t = ns.equals(in.getNamespaceURI()) ? iface.messageOrNull(in.getLocalName()) : null;
            if (t == null) {
                throw new JAXBException("unexpected element " + in.getName() + ": not a message of "
                        + iface.model().componentName());
            }
            Reading reading = new Reading();
            DynamicRecord r = new DynamicRecord(t);
            readFields(in, r, reading);
            reading.resolve();
            return type.cast(r);
        } catch (StrictXmlReader.Refusal e) {
            throw e.toJaxb();
        } catch (XMLStreamException e) {
            throw new JAXBException("malformed message: " + e.getMessage(), e);
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            throw new JAXBException("malformed message: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (e.getCause() instanceof XMLStreamException cause) {
                // Woodstox reports malformed XML met while reading lazily as an unchecked wrapper
                throw new JAXBException("malformed message: " + cause.getMessage(), cause);
            }
            throw e;
        }
    }

    /** Reads the children of the current element into {@code r}, up to and including its end tag. */
    private void readFields(XMLStreamReader in, DynamicRecord r, Reading reading)
            throws XMLStreamException, JAXBException {
        DynamicType t = r.type;
        boolean[] seen = new boolean[t.fields.length];
        while (in.nextTag() == XMLStreamConstants.START_ELEMENT) {
            String local = in.getLocalName();
            if (!ns.equals(in.getNamespaceURI())) {
                throw new JAXBException("unexpected element " + in.getName() + " in " + t.name());
            }
            if (t.message() && t.reachesGraph && GRAPH_ELEMENT.equals(local)) {
                readGraph(in, reading);
                continue;
            }
            Integer index = fieldIndex(t, local);
            if (index == null) {
                throw new JAXBException("unexpected element " + local + " in " + t.name() + " (line "
                        + in.getLocation().getLineNumber() + ")");
            }
            int i = index;
            if (seen[i]) {
                throw new JAXBException("element " + local + " appears twice in " + t.name());
            }
            seen[i] = true;
            FieldModel f = t.fields[i];
            DynamicType target = t.targets[i];
            if (nil(in)) {
                if (!f.nillable() || f.repeated()) {
                    throw new JAXBException("field " + t.name() + "." + local + " is not nillable");
                }
                skipToEnd(in, local);
                continue;
            }
            if (f.repeated() && f.isScalar() && f.scalar().isPrimitive()) {
                r.values[i] = parseList(f.scalar(), in.getElementText(), t.name() + "." + local);
            } else if (f.repeated()) {
                List<Object> items = new ArrayList<>();
                r.values[i] = items;
                while (in.nextTag() == XMLStreamConstants.START_ELEMENT) {
                    if (!ITEM.equals(in.getLocalName()) || !ns.equals(in.getNamespaceURI())) {
                        throw new JAXBException("unexpected element " + in.getName() + " in " + t.name() + "." + local);
                    }
                    if (nil(in)) {
                        skipToEnd(in, ITEM);
                        items.add(null);
                    } else {
                        int at = items.size();
                        items.add(null);
                        items.set(at, readValue(in, f, target, t.name() + "." + local, reading, items, at, null, -1));
                    }
                }
            } else {
                r.values[i] = readValue(in, f, target, t.name() + "." + local, reading, null, -1, r, i);
            }
        }
        for (int i = 0; i < t.fields.length; i++) {
            if (!seen[i] && !t.fields[i].optional() && !t.fields[i].repeated()) {
                // StrictXmlReader refuses this first; kept so this reader never yields a record without a required field
                throw new JAXBException("field " + t.name() + "." + t.fields[i].name() + " is required but missing");
            }
        }
        if (t.model.ndArray()) {
            String problem = DynamicRecord.ndInconsistency(r);
            if (problem != null) {
                throw new JAXBException("n-d array " + t.name() + ": " + problem);
            }
        }
    }

    /** One value at an element's start tag; a reference is left to {@link Reading#resolve}, noted by where it goes. */
    private Object readValue(XMLStreamReader in, FieldModel f, DynamicType target, String field, Reading reading,
                             List<Object> list, int listIndex, DynamicRecord owner, int fieldIndex)
            throws XMLStreamException, JAXBException {
        if (f.graphReference()) {
            String id = in.getElementText().trim();
            reading.refs.add(new Ref(id, target, field, list, listIndex, owner, fieldIndex));
            return null;
        }
        if (target != null && target.heterogeneousList()) {
            return readChoices(in, target, field, reading);
        }
        if (target != null) {
            DynamicRecord v = new DynamicRecord(target);
            readFields(in, v, reading);
            return v;
        }
        return parse(f.scalar(), in.getElementText(), field);
    }

    /**
     * The children of a heterogeneous list's element, each named by its alternative, up to the
     * list's end tag. Nesting past the limit is refused before the deeper list is read, so the
     * recursion is bounded whatever the input; a nil element is refused (lists hold no nulls).
     */
    private DynamicList readChoices(XMLStreamReader in, DynamicType t, String field, Reading reading)
            throws XMLStreamException, JAXBException {
        if (++reading.listDepth > HeterogeneousList.MAX_DEPTH) {
            throw new XmlMessages.ListDepthException("field " + field + ": heterogeneous lists nested deeper than the limit of "
                    + HeterogeneousList.MAX_DEPTH + " levels");
        }
        DynamicList list = new DynamicList(t, 4);
        while (in.nextTag() == XMLStreamConstants.START_ELEMENT) {
            String local = in.getLocalName();
            Integer a = ns.equals(in.getNamespaceURI()) ? fieldIndex(t, local) : null;
            if (a == null) {
                throw new JAXBException("unexpected element " + in.getName() + " in heterogeneous list " + t.name()
                        + " (field " + field + ")");
            }
            if (nil(in)) {
                throw new JAXBException("field " + field + ": nil element " + local + " in heterogeneous list " + t.name()
                        + "; such lists hold no nulls");
            }
            list.add(readValue(in, t.fields[a], t.targets[a], field, reading, null, -1, null, -1));
        }
        reading.listDepth--;
        return list;
    }

    private void readGraph(XMLStreamReader in, Reading reading) throws XMLStreamException, JAXBException {
        while (in.nextTag() == XMLStreamConstants.START_ELEMENT) {
            DynamicType t = ns.equals(in.getNamespaceURI()) ? iface.typeOrNull(in.getLocalName()) : null;
            if (t == null || !t.recursive()) {
                throw new JAXBException("unexpected element " + in.getName() + " in " + GRAPH_ELEMENT);
            }
            String id = in.getAttributeValue(null, ID_ATTRIBUTE);
            if (id == null) {
                throw new JAXBException(t.name() + " in " + GRAPH_ELEMENT + " has no " + ID_ATTRIBUTE);
            }
            if (++reading.nodes > maxGraphNodes) {
                throw new Graphs.GraphLimitException("message holds more than " + maxGraphNodes + " linked nodes");
            }
            DynamicRecord node = new DynamicRecord(t);
            if (reading.byId.putIfAbsent(id, node) != null) {
                throw new JAXBException("node id '" + id + "' appears twice");
            }
            readFields(in, node, reading);
        }
    }

    private static Integer fieldIndex(DynamicType t, String local) {
        try {
            return t.indexOf(local);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static boolean nil(XMLStreamReader in) {
        String v = in.getAttributeValue(XSI, "nil");
        return v != null && ("true".equals(v.trim()) || "1".equals(v.trim()));
    }

    private static void skipToEnd(XMLStreamReader in, String element) throws XMLStreamException, JAXBException {
        if (in.nextTag() != XMLStreamConstants.END_ELEMENT) {
            throw new JAXBException("nil element " + element + " has content");
        }
    }

    static Object parse(ScalarType s, String text, String field) throws JAXBException {
        String t = s == ScalarType.STRING ? text : text.trim();
        try {
            return switch (s) {
                case BOOLEAN -> parseBoolean(t);
                case BYTE -> Byte.parseByte(t);
                case SHORT -> Short.parseShort(t);
                case INT -> Integer.parseInt(t);
                case LONG -> Long.parseLong(t);
                case FLOAT -> parseFloat(t);
                case DOUBLE -> parseDouble(t);
                case STRING -> t;
                case BYTES -> Base64.getMimeDecoder().decode(t);
                case DATE_TIME -> new OffsetDateTimeAdapter().unmarshal(t);
            };
        } catch (IllegalArgumentException e) {
            throw new JAXBException("field " + field + ": not an xs:" + s.xsdName() + ": '" + abbreviate(t) + "'", e);
        }
    }

    /** An {@code xs:list} into its primitive array: one pass over the text, no boxing. */
    static Object parseList(ScalarType s, String text, String field) throws JAXBException {
        List<String> parts = new ArrayList<>();
        int n = text.length();
        int i = 0;
        while (i < n) {
            while (i < n && isXmlSpace(text.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < n && !isXmlSpace(text.charAt(i))) {
                i++;
            }
            if (i > start) {
                parts.add(text.substring(start, i));
            }
        }
        int count = parts.size();
        if (s == ScalarType.DOUBLE) {    // the bulk case: no reflection per value
            double[] a = new double[count];
            for (int k = 0; k < count; k++) {
                a[k] = parseDouble(parts.get(k), field);
            }
            return a;
        }
        Object array = java.lang.reflect.Array.newInstance(DynamicRecord.primitiveArray(s).getComponentType(), count);
        for (int k = 0; k < count; k++) {
            java.lang.reflect.Array.set(array, k, parse(s, parts.get(k), field));
        }
        return array;
    }

    private static double parseDouble(String text, String field) throws JAXBException {
        try {
            return parseDouble(text);
        } catch (NumberFormatException e) {
            throw new JAXBException("field " + field + ": not an xs:double: '" + abbreviate(text) + "'", e);
        }
    }

    private static boolean isXmlSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }

    private static Boolean parseBoolean(String t) {
        return switch (t) {
            case "true", "1" -> Boolean.TRUE;
            case "false", "0" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("not a boolean");
        };
    }

    private static double parseDouble(String t) {
        return switch (t) {
            case "INF" -> Double.POSITIVE_INFINITY;
            case "-INF" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> {
                if (t.isEmpty() || Character.isLetter(t.charAt(t.length() - 1)) && !t.endsWith("NaN")) {
                    throw new NumberFormatException("not a number");   // Java's "1d", "Infinity": not XML
                }
                yield Double.parseDouble(t);
            }
        };
    }

    private static float parseFloat(String t) {
        return switch (t) {
            case "INF" -> Float.POSITIVE_INFINITY;
            case "-INF" -> Float.NEGATIVE_INFINITY;
            case "NaN" -> Float.NaN;
            default -> {
                if (t.isEmpty() || Character.isLetter(t.charAt(t.length() - 1))) {
                    throw new NumberFormatException("not a number");
                }
                yield Float.parseFloat(t);
            }
        };
    }

    private static String abbreviate(String t) {
        return t.length() <= 40 ? t : t.substring(0, 40) + "...";
    }

    /** What writing one message keeps: the ids of its linked nodes (null without any) and the list nesting depth. */
    private static final class Writing {
        final Map<Object, String> ids;
        int listDepth;

        Writing(Map<Object, String> ids) {
            this.ids = ids;
        }
    }

    /** A reference read before its node: resolved when the whole message is read. */
    private record Ref(String id, DynamicType target, String field, List<Object> list, int listIndex,
                       DynamicRecord owner, int fieldIndex) {
    }

    private static final class Reading {
        final Map<String, DynamicRecord> byId = new HashMap<>();
        final List<Ref> refs = new ArrayList<>();
        int nodes;
        int listDepth;

        void resolve() throws JAXBException {
            for (Ref ref : refs) {
                DynamicRecord node = byId.get(ref.id);
                if (node == null) {
                    throw new JAXBException("field " + ref.field + ": reference to '" + ref.id + "', which no node has");
                }
                if (node.type != ref.target) {
                    throw new JAXBException("field " + ref.field + ": node '" + ref.id + "' is a " + node.type.name()
                            + ", expected " + ref.target.name());
                }
                if (ref.list != null) {
                    ref.list.set(ref.listIndex, node);
                } else {
                    ref.owner.values[ref.fieldIndex] = node;
                }
            }
        }
    }
}

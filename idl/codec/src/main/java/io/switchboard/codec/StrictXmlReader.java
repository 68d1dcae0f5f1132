package io.switchboard.codec;

import io.switchboard.codec.documents.InterfaceDocuments;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.idl.runtime.XsdValues;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import javax.xml.XMLConstants;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.util.StreamReaderDelegate;

/**
 * The StAX reader a SOAP message is read through: it checks each event against the wire schema
 * (see {@code io.switchboard.codec.documents.WireSchema}) as it passes, and refuses what JAXB and the text
 * parsers would take silently. Both XML codecs read through it ({@link XmlMessages} hands it to
 * JAXB, {@code DynamicXml} reads from it), so a message is refused the same way, with the same
 * path, by generated and dynamic readers.
 *
 * <p>Refused, each with the element's path ({@link MalformedXmlException}):
 * <ul>
 *   <li>an element the schema does not have there, one repeated that may not repeat, one out of
 *       the sequence's order, text among elements, an attribute other than {@code xsi:nil},
 *       {@code xsi:type} naming the declared type, and {@code sb-id} on a linked node;</li>
 *   <li>a required field missing, {@code xsi:nil} on an element that is not nillable, a nil element
 *       with content;</li>
 *   <li>{@code xs:byte}, {@code xs:short}, {@code xs:int}, {@code xs:long} values outside their
 *       range or not decimal integers (JAXB wraps {@code 2147483648} to {@code -2147483648}), in
 *       fields and in numeric lists; {@code xs:boolean} other than {@code true false 1 0};
 *       {@code xs:base64Binary} that is not base64 (JAXB skips the bad characters); an
 *       {@code xs:dateTime} outside {@link XsdValues#parseDateTime}; a string holding a lone
 *       surrogate.</li>
 * </ul>
 * Floats and doubles are left to the parsers, which already refuse what is not a number, except
 * for Java's hexadecimal form ({@code 0x1p3}), which is refused here with one comparison per
 * character: a {@code double[]} costs next to nothing more.
 *
 * <p>Checks run inside {@link #next()}: text is checked as its events pass, in pieces, so no value
 * is buffered whole (a date-time at most 64 characters). {@link #getElementText()} and
 * {@link #nextTag()} are implemented on {@link #next()}, so nothing bypasses the checks.
 */
public final class StrictXmlReader extends StreamReaderDelegate {
    private static final String XSI = XMLConstants.W3C_XML_SCHEMA_INSTANCE_NS_URI;
    private static final String XSD = XMLConstants.W3C_XML_SCHEMA_NS_URI;
    // the wire form's names, as the published WSDL spells them
    private static final String GRAPH_ELEMENT = InterfaceDocuments.GRAPH_ELEMENT;
    private static final String ID_ATTRIBUTE = InterfaceDocuments.ID_ATTRIBUTE;
    private static final String ITEM = InterfaceDocuments.LIST_ITEM;

    private final Plan plan;
    private Frame[] stack = new Frame[16];
    private int depth;
    /** The element that just ended stays on the stack until the next event, so a later error still names it. */
    private boolean popPending;
    private boolean done;
    private String rootName;
    private final TextCheck text = new TextCheck();

    /**
     * Wraps {@code in}, positioned at (or before) the start tag of a message element of
     * {@code plan}'s interface; {@code element} names the message expected, or null for any.
     *
     * @throws Refusal the message element itself is refused
     */
    public StrictXmlReader(XMLStreamReader in, Plan plan, String element) throws XMLStreamException {
        super(in);
        this.plan = plan;
        while (!in.isStartElement()) {
            int event = in.next();
            if (event == XMLStreamConstants.CHARACTERS && !in.isWhiteSpace()) {
                throw new XMLStreamException("text before the message element");
            }
        }
        openRoot(element);
    }

    /** The path of the element being read, for errors found outside this reader (JAXB's own events). */
    public String path() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            if (i > 0) {
                b.append('/');
            }
            b.append(stack[i].name);
            if (stack[i].position > 0) {
                b.append('[').append(stack[i].position).append(']');
            }
        }
        return b.length() == 0 ? rootName : b.toString();
    }

    // ---- events

    @Override
    public int next() throws XMLStreamException {
        if (popPending) {
            popPending = false;
            depth--;
            done = depth == 0;
        }
        int event;
        try {
            event = super.next();
        } catch (XMLStreamException e) {
            if (done) {
                throw e;
            }
            // the parser's own refusal (not well-formed, an illegal character such as &#xD800;): say where
            throw new Refusal(path(), "not well-formed XML: " + parserMessage(e), e);
        } catch (RuntimeException e) {
            if (done || !(e.getCause() instanceof XMLStreamException cause)) {
                throw e;
            }
            throw new Refusal(path(), "not well-formed XML: " + parserMessage(cause), e);   // Woodstox, reading lazily
        }
        if (done) {
            return event;
        }
        switch (event) {
            case START_ELEMENT -> start();
            case END_ELEMENT -> end();
            case CHARACTERS, CDATA, SPACE -> characters();
            case ENTITY_REFERENCE -> throw refuse(path(), "entity reference &" + getLocalName() + "; (DTDs are refused)");
            default -> {
                // comments and processing instructions carry no value
            }
        }
        return event;
    }

    @Override
    public int nextTag() throws XMLStreamException {
        int event = next();
        while (event == CHARACTERS && isWhiteSpace() || event == CDATA && isWhiteSpace() || event == SPACE
                || event == COMMENT || event == PROCESSING_INSTRUCTION) {
            event = next();
        }
        if (event != START_ELEMENT && event != END_ELEMENT) {
            throw new XMLStreamException("expected a start or end tag, got event " + event, getLocation());
        }
        return event;
    }

    @Override
    public String getElementText() throws XMLStreamException {
        if (getEventType() != START_ELEMENT) {
            throw new XMLStreamException("getElementText needs a start tag", getLocation());
        }
        StringBuilder b = new StringBuilder();
        int event = next();
        while (event != END_ELEMENT) {
            if (event == CHARACTERS || event == CDATA || event == SPACE) {
                b.append(getTextCharacters(), getTextStart(), getTextLength());
            } else if (event == START_ELEMENT) {
                throw new XMLStreamException("element " + getLocalName() + " inside a text-only element", getLocation());
            } else if (event == END_DOCUMENT) {
                throw new XMLStreamException("the document ends inside an element", getLocation());
            }
            event = next();
        }
        return b.toString();
    }

    private void openRoot(String element) throws XMLStreamException {
        String local = getLocalName();
        rootName = local;
        Type type = plan.ns.equals(getNamespaceURI()) ? plan.messages.get(local) : null;
        if (type == null || element != null && !element.equals(local)) {
            throw refuse(local, "unexpected element " + getName() + ": expected the message element "
                    + (element != null ? "{" + plan.ns + "}" + element : "of " + plan.componentName));
        }
        Frame f = push(local, 0);
        f.kind = Frame.STRUCT;
        f.type = type;
        f.field = null;
        f.last = -1;
        attributes(f, null, false, false);
    }

    private void start() throws XMLStreamException {
        Frame parent = stack[depth - 1];
        String local = getLocalName();
        boolean inNs = plan.ns.equals(getNamespaceURI());
        switch (parent.kind) {
            case Frame.STRUCT -> startInStruct(parent, local, inNs);
            case Frame.WRAPPER -> {
                if (!inNs || !ITEM.equals(local)) {
                    throw refuse(childPath(local), "unexpected element " + getName() + " in list " + parent.name
                            + ": its entries are " + ITEM + " elements");
                }
                Frame f = push(local, ++parent.children);
                open(f, parent.field, true, false);
            }
            case Frame.GRAPH -> {
                Type node = inNs ? parent.type.graphTypes.get(local) : null;
                if (node == null) {
                    throw refuse(childPath(local), "unexpected element " + getName() + " in " + GRAPH_ELEMENT
                            + ": its entries are the linked types " + parent.type.graphTypes.keySet());
                }
                Frame f = push(local, ++parent.children);
                f.kind = Frame.STRUCT;
                f.type = node;
                f.field = null;
                f.last = -1;
                attributes(f, new Object[] {plan.ns, node.name}, false, true);
            }
            case Frame.CHOICES -> {
                Field alternative = inNs ? parent.type.byName.get(local) : null;
                if (alternative == null) {
                    throw refuse(childPath(local), "unexpected element " + getName() + " in heterogeneous list "
                            + parent.type.name + ": its alternatives are " + parent.type.byName.keySet());
                }
                Frame f = push(local, ++parent.children);
                open(f, alternative, false, true);
            }
            default -> throw refuse(childPath(local), "unexpected element " + getName() + " inside "
                    + (parent.kind == Frame.NIL ? "a nil element" : "a value of " + describe(parent.field)));
        }
    }

    private void startInStruct(Frame parent, String local, boolean inNs) throws XMLStreamException {
        Type t = parent.type;
        int index;
        Field field = inNs ? t.byName.get(local) : null;
        if (field != null) {
            index = field.index;
        } else if (inNs && t.graphTypes != null && GRAPH_ELEMENT.equals(local)) {
            index = t.fields.length;
        } else {
            throw refuse(childPath(local), "unexpected element " + getName() + " in " + t.name
                    + (t.fields.length == 0 ? ", which has no fields" : ": its fields are " + t.byName.keySet()));
        }
        if (index == parent.last) {
            throw refuse(childPath(local), "element " + local + " appears twice in " + t.name
                    + (field != null && field.repeated ? " (a list is one element holding all its entries)" : ""));
        }
        if (index < parent.last) {
            throw refuse(childPath(local), "element " + local + " comes after "
                    + (parent.last < t.fields.length ? t.fields[parent.last].name : GRAPH_ELEMENT)
                    + "; the schema's sequence puts it before");
        }
        requireBetween(parent, parent.last + 1, index, local);
        parent.last = index;
        Frame f = push(local, 0);
        if (field == null) {
            f.kind = Frame.GRAPH;
            f.type = t;
            f.field = null;
            attributes(f, null, false, false);
        } else {
            open(f, field, false, false);
        }
    }

    /**
     * Sets up the frame of a field's element ({@code item} says it is one entry of a repeated
     * field, {@code alternative} one element of a heterogeneous list) and checks its attributes.
     */
    private void open(Frame f, Field field, boolean item, boolean alternative) throws XMLStreamException {
        f.field = field;
        f.type = field.type;
        // entries of lists are nillable, but not references: JAXB's IDREF lists cannot say nil
        boolean nillable = item && !field.graphRef || !alternative && !field.repeated && field.nillable;
        Object[] declared = field.graphRef ? null
                : field.scalar != null ? new Object[] {XSD, field.scalar.xsdName()} : new Object[] {plan.ns, field.type.name};
        boolean single = item || alternative || !field.repeated;
        if (!single) {
            declared = null;   // a list's element has an anonymous type
        }
        if (attributes(f, declared, nillable, false)) {
            f.kind = Frame.NIL;
            return;
        }
        if (!single && !field.packed) {
            f.kind = Frame.WRAPPER;
            f.children = 0;
        } else if (field.graphRef) {
            f.kind = Frame.TEXT;
            text.begin(TextCheck.NONE, false, field);
        } else if (field.type != null) {
            f.kind = field.type.list ? Frame.CHOICES : Frame.STRUCT;
            f.children = 0;
            f.last = -1;
            if (field.type.list) {
                int lists = 1;
                for (int i = 0; i < depth - 1; i++) {
                    if (stack[i].kind == Frame.CHOICES) {
                        lists++;
                    }
                }
                if (lists > HeterogeneousList.MAX_DEPTH) {
                    throw new XmlMessages.ListDepthException("field " + path()
                            + ": heterogeneous lists nested deeper than the limit of " + HeterogeneousList.MAX_DEPTH + " levels");
                }
            }
        } else {
            f.kind = Frame.TEXT;
            text.begin(TextCheck.kindOf(field.scalar), field.packed && !item && !alternative, field);
        }
    }

    /**
     * Checks the attributes of the element just opened; returns whether it is nil.
     * {@code declared} is the {@code {namespace, local name}} an {@code xsi:type} may name, null
     * when none may be named.
     */
    private boolean attributes(Frame f, Object[] declared, boolean nillable, boolean node) throws XMLStreamException {
        boolean nil = false;
        boolean id = false;
        for (int i = 0, n = getAttributeCount(); i < n; i++) {
            String ns = getAttributeNamespace(i);
            String local = getAttributeLocalName(i);
            String value = getAttributeValue(i);
            if (XSI.equals(ns) && "nil".equals(local)) {
                String v = value.strip();
                if (!v.equals("true") && !v.equals("false") && !v.equals("1") && !v.equals("0")) {
                    throw refuse(path(), "xsi:nil='" + abbreviate(value) + "' is not a boolean");
                }
                nil = v.equals("true") || v.equals("1");
            } else if (XSI.equals(ns) && "type".equals(local)) {
                String v = value.strip();
                int colon = v.indexOf(':');
                String typeNs = getNamespaceContext().getNamespaceURI(colon < 0 ? "" : v.substring(0, colon));
                String typeLocal = v.substring(colon + 1);
                if (declared == null || !declared[0].equals(typeNs) || !declared[1].equals(typeLocal)) {
                    throw refuse(path(), "xsi:type='" + abbreviate(value) + "' "
                            + (declared == null ? "is not allowed here" : "is not the declared type {" + declared[0] + "}"
                            + declared[1]));
                }
            } else if (XSI.equals(ns) && ("schemaLocation".equals(local) || "noNamespaceSchemaLocation".equals(local))) {
                continue;   // a hint for validators; it changes no value
            } else if (node && (ns == null || ns.isEmpty()) && ID_ATTRIBUTE.equals(local)) {
                id = true;
            } else {
                throw refuse(path(), "unexpected attribute " + (ns == null || ns.isEmpty() ? local : "{" + ns + "}" + local));
            }
        }
        if (node && !id) {
            throw refuse(path(), "linked node " + f.name + " has no " + ID_ATTRIBUTE + " attribute");
        }
        if (nil && !nillable) {
            Frame parent = depth > 1 ? stack[depth - 2] : null;
            if (parent != null && parent.kind == Frame.CHOICES) {
                throw refuse(path(), "nil element " + f.name + " in heterogeneous list " + parent.type.name
                        + "; such lists hold no nulls");
            }
            throw refuse(path(), "xsi:nil on an element that is not nillable" + (f.field != null && !f.field.optional
                    && !f.field.repeated ? " (a required " + describe(f.field) + ")" : ""));
        }
        return nil;
    }

    private void characters() throws XMLStreamException {
        Frame f = stack[depth - 1];
        if (f.kind == Frame.TEXT) {
            if (text.kind != TextCheck.NONE) {
                String problem = text.feed(getTextCharacters(), getTextStart(), getTextLength());
                if (problem != null) {
                    throw refuse(path(), problem);
                }
            }
            return;
        }
        if (!isWhiteSpace()) {
            char[] c = getTextCharacters();
            int start = getTextStart();
            for (int i = start, end = start + getTextLength(); i < end; i++) {
                if (c[i] != ' ' && c[i] != '\t' && c[i] != '\n' && c[i] != '\r') {
                    throw refuse(path(), f.kind == Frame.NIL ? "a nil element has content"
                            : "text '" + abbreviate(new String(c, i, Math.min(20, end - i))) + "' where only elements may be");
                }
            }
        }
    }

    private void end() throws XMLStreamException {
        Frame f = stack[depth - 1];
        if (f.kind == Frame.TEXT && text.kind != TextCheck.NONE) {
            String problem = text.end();
            if (problem != null) {
                throw refuse(path(), problem);
            }
        } else if (f.kind == Frame.STRUCT) {
            requireBetween(f, f.last + 1, f.type.fields.length, null);
        }
        popPending = true;
    }

    /** Refuses a required field of {@code f}'s type among {@code [from, to)}: those were skipped. */
    private void requireBetween(Frame f, int from, int to, String before) throws XMLStreamException {
        for (int i = from; i < Math.min(to, f.type.fields.length); i++) {
            Field skipped = f.type.fields[i];
            if (!skipped.optional && !skipped.repeated) {
                throw refuse(path() + "/" + skipped.name, "required " + describe(skipped) + " of " + f.type.name
                        + " is missing" + (before == null ? "" : " (before " + before + ")")
                        + (skipped.nillable ? "; it is nillable, so say xsi:nil=\"true\" for none" : ""));
            }
        }
    }

    private Frame push(String name, int position) {
        if (depth == stack.length) {
            stack = java.util.Arrays.copyOf(stack, depth * 2);
        }
        Frame f = stack[depth];
        if (f == null) {
            f = stack[depth] = new Frame();
        }
        f.name = name;
        f.position = position;
        depth++;
        return f;
    }

    /** The parser's message without its location lines (the path says where). */
    private static String parserMessage(XMLStreamException e) {
        String m = String.valueOf(e.getMessage());
        int location = m.indexOf("\n at [");
        return (location > 0 ? m.substring(0, location) : m).replace('\n', ' ').strip();
    }

    private String childPath(String local) {
        return path() + "/" + local;
    }

    private static String describe(Field f) {
        if (f == null) {
            return "a value";
        }
        String type = f.graphRef ? "reference to a " + f.type.name : f.scalar != null ? "xs:" + f.scalar.xsdName() : f.type.name;
        return "field " + f.name + " (" + (f.repeated ? "list of " : "") + type + ")";
    }

    static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }

    private static Refusal refuse(String path, String problem) {
        return new Refusal(path, problem);
    }

    /**
     * A message refused by the checks; unchecked so that it passes through JAXB unchanged. The
     * codecs turn it into a {@link MalformedXmlException}.
     */
    public static final class Refusal extends RuntimeException {
        private final String path;
        private final String problem;

        Refusal(String path, String problem) {
            this(path, problem, null);
        }

        /** {@code cause}: the parser's exception, kept so that what lies under it (a size limit, say) is still found. */
        Refusal(String path, String problem, Throwable cause) {
            super("field " + path + ": " + problem, cause, false, false);
            this.path = path;
            this.problem = problem;
        }

        /** The refusal in {@code t}'s causes (JAXB wraps what a reader throws in some paths), or null. */
        public static Refusal in(Throwable t) {
            for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
                if (c instanceof Refusal r) {
                    return r;
                }
                if (c instanceof jakarta.xml.bind.JAXBException j && j.getLinkedException() != null
                        && j.getLinkedException() != j.getCause()) {
                    Refusal linked = in(j.getLinkedException());
                    if (linked != null) {
                        return linked;
                    }
                }
            }
            return null;
        }

        public MalformedXmlException toJaxb() {
            return new MalformedXmlException(path, problem, this);
        }
    }

    /** One open element. */
    private static final class Frame {
        static final int STRUCT = 0;
        static final int WRAPPER = 1;
        static final int GRAPH = 2;
        static final int CHOICES = 3;
        static final int TEXT = 4;
        static final int NIL = 5;

        int kind;
        String name;
        int position;
        Type type;
        Field field;
        /** STRUCT: the index of the last field seen, -1 for none; the graph table counts as one past the fields. */
        int last;
        /** WRAPPER, GRAPH, CHOICES: children so far, for their positions in paths. */
        int children;
    }

    // ---- the plan: the wire schema of one interface, worked out once

    /** The element structure of one interface's messages; build it once per interface ({@link #of}). */
    public static final class Plan {
        /** Descriptors are long-lived singletons; weak keys let a class loader's interfaces go. */
        private static final Map<ServiceDescriptor, Plan> PLANS = Collections.synchronizedMap(new java.util.WeakHashMap<>());
        final String ns;
        final String componentName;
        final Map<String, Type> messages = new HashMap<>();
        private final Map<String, Type> types = new LinkedHashMap<>();

        private Plan(InterfaceModel model) {
            this.ns = model.targetNamespace();
            this.componentName = model.componentName();
            for (ComplexTypeModel t : model.types().values()) {
                types.put(t.name(), new Type(t));
            }
            for (OperationModel op : model.operations()) {
                for (ComplexTypeModel m : new ComplexTypeModel[] {op.request(), op.response(), op.fault()}) {
                    if (m != null) {
                        messages.put(m.name(), new Type(m));
                    }
                }
            }
            for (Type t : types.values()) {
                t.link(types);
            }
            for (Type m : messages.values()) {
                m.link(types);
                Map<String, Type> graph = graphTypes(m);
                m.graphTypes = graph.isEmpty() ? null : graph;
            }
        }

        public static Plan of(InterfaceModel model) {
            return new Plan(model);
        }

        /** The plan of a descriptor's interface, made once per descriptor. */
        public static Plan of(ServiceDescriptor descriptor) {
            return PLANS.computeIfAbsent(descriptor, d -> new Plan(d.model()));
        }

        /** The linked (recursive) types a value of {@code m} may reach: the entries of its graph table. */
        private static Map<String, Type> graphTypes(Type m) {
            Map<String, Type> result = new LinkedHashMap<>();
            Set<Type> visited = new HashSet<>();
            ArrayDeque<Type> work = new ArrayDeque<>();
            work.add(m);
            while (!work.isEmpty()) {
                for (Field f : work.poll().fields) {
                    if (f.type != null && visited.add(f.type)) {
                        if (f.type.recursive) {
                            result.put(f.type.name, f.type);
                        }
                        work.add(f.type);
                    }
                }
            }
            return Collections.unmodifiableMap(result);
        }
    }

    static final class Type {
        final String name;
        final boolean list;
        final boolean recursive;
        final Field[] fields;
        final Map<String, Field> byName = new LinkedHashMap<>();
        /** Message elements only: the types of the graph table, null when the message has none. */
        Map<String, Type> graphTypes;
        private final ComplexTypeModel model;

        Type(ComplexTypeModel model) {
            this.model = model;
            this.name = model.name();
            this.list = model.heterogeneousList();
            this.recursive = model.recursive();
            this.fields = new Field[model.fields().size()];
            for (int i = 0; i < fields.length; i++) {
                fields[i] = new Field(model.fields().get(i), i);
                byName.put(fields[i].name, fields[i]);
            }
        }

        void link(Map<String, Type> types) {
            for (int i = 0; i < fields.length; i++) {
                FieldModel f = model.fields().get(i);
                if (f.complexType() != null) {
                    fields[i].type = types.get(f.complexType());
                }
            }
        }
    }

    static final class Field {
        final String name;
        final int index;
        final ScalarType scalar;
        final boolean optional;
        final boolean repeated;
        final boolean nillable;
        final boolean graphRef;
        final boolean packed;
        Type type;

        Field(FieldModel f, int index) {
            this.name = f.name();
            this.index = index;
            this.scalar = f.scalar();
            this.optional = f.optional();
            this.repeated = f.repeated();
            this.nillable = f.nillable();
            this.graphRef = f.graphReference();
            this.packed = f.repeated() && f.isScalar() && f.scalar().isPrimitive();
        }
    }

    // ---- text

    /**
     * Checks the text of one element in pieces, as its events arrive: integers (one, or a
     * whitespace-separated list) against their type's range, booleans, base64, a date-time, and
     * strings for lone surrogates.
     */
    static final class TextCheck {
        static final int NONE = 0;
        static final int INTEGER = 1;
        static final int BOOLEAN = 2;
        static final int BASE64 = 3;
        static final int DATE_TIME = 4;
        static final int STRING = 5;
        static final int FLOATING = 6;
        private static final int MAX_DATE_TIME = 64;

        int kind;
        private boolean list;
        private Field field;
        private long min;
        private long max;
        private String typeName;
        // integers and booleans: the token being read
        private final StringBuilder token = new StringBuilder();
        private boolean inToken;
        private int tokens;
        private boolean negative;
        private int digits;
        private long value;
        private boolean overflow;
        private boolean badChar;
        // base64
        private long significant;
        private int padding;
        private char lastData;
        // strings
        private boolean pendingHigh;
        private long stringIndex;

        static int kindOf(ScalarType s) {
            return switch (s) {
                case BYTE, SHORT, INT, LONG -> INTEGER;
                case BOOLEAN -> BOOLEAN;
                case BYTES -> BASE64;
                case DATE_TIME -> DATE_TIME;
                case STRING -> STRING;
                // the parsers refuse what is not a number, except Java's hexadecimal form (0x1p3 = 8.0)
                case FLOAT, DOUBLE -> FLOATING;
            };
        }

        void begin(int kind, boolean list, Field field) {
            this.kind = kind;
            this.list = list;
            this.field = field;
            token.setLength(0);
            inToken = false;
            tokens = 0;
            significant = 0;
            padding = 0;
            lastData = 0;
            pendingHigh = false;
            stringIndex = 0;
            if (kind == INTEGER) {
                ScalarType s = field.scalar;
                typeName = "xs:" + s.xsdName();
                min = s == ScalarType.BYTE ? Byte.MIN_VALUE : s == ScalarType.SHORT ? Short.MIN_VALUE
                        : s == ScalarType.INT ? Integer.MIN_VALUE : Long.MIN_VALUE;
                max = s == ScalarType.BYTE ? Byte.MAX_VALUE : s == ScalarType.SHORT ? Short.MAX_VALUE
                        : s == ScalarType.INT ? Integer.MAX_VALUE : Long.MAX_VALUE;
            }
        }

        /** Null, or what is wrong with the text so far. */
        String feed(char[] c, int start, int length) {
            switch (kind) {
                case INTEGER, BOOLEAN -> {
                    for (int i = start, end = start + length; i < end; i++) {
                        String problem = tokenChar(c[i]);
                        if (problem != null) {
                            return problem;
                        }
                    }
                    return null;
                }
                case BASE64 -> {
                    return base64(c, start, length);
                }
                case DATE_TIME -> {
                    for (int i = start, end = start + length; i < end; i++) {
                        char ch = c[i];
                        boolean space = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
                        if (space && token.length() == 0) {
                            continue;   // leading whitespace; trailing whitespace the parser strips
                        }
                        if (token.length() >= MAX_DATE_TIME && !space) {
                            return "not an xs:dateTime: '" + abbreviate(token.toString()) + "' is too long";
                        }
                        if (token.length() < MAX_DATE_TIME) {
                            token.append(ch);
                        }
                    }
                    return null;
                }
                case STRING -> {
                    return string(c, start, length);
                }
                case FLOATING -> {
                    for (int i = start, end = start + length; i < end; i++) {
                        if ((c[i] | 0x20) == 'x') {   // one comparison per character: a double[] stays cheap
                            return "'" + c[i] + "' at character " + (stringIndex + i - start + 1) + " is not part of an xs:"
                                    + field.scalar.xsdName() + " (hexadecimal forms such as 0x1p3 are Java's, not XML's)";
                        }
                    }
                    stringIndex += length;
                    return null;
                }
                default -> {
                    return null;
                }
            }
        }

        /** Null, or what is wrong with the element's text as a whole. */
        String end() {
            switch (kind) {
                case INTEGER, BOOLEAN -> {
                    if (inToken) {
                        String problem = endToken();
                        if (problem != null) {
                            return problem;
                        }
                    }
                    if (!list && tokens != 1) {
                        return tokens == 0 ? "empty, but " + (kind == BOOLEAN ? "xs:boolean" : typeName) + " needs a value"
                                : tokens + " values where " + (kind == BOOLEAN ? "xs:boolean" : typeName) + " holds one";
                    }
                    return null;
                }
                case BASE64 -> {
                    if (significant % 4 != 0) {
                        return "not xs:base64Binary: " + significant + " base64 characters, not a multiple of 4";
                    }
                    if (padding == 1 && "AEIMQUYcgkosw048".indexOf(lastData) < 0
                            || padding == 2 && "AQgw".indexOf(lastData) < 0) {
                        return "not xs:base64Binary: '" + lastData + "' before the padding has bits that say nothing";
                    }
                    return null;
                }
                case DATE_TIME -> {
                    try {
                        XsdValues.parseDateTime(token.toString());
                        return null;
                    } catch (IllegalArgumentException e) {
                        return "not an xs:dateTime: '" + abbreviate(token.toString().strip()) + "': " + e.getMessage();
                    }
                }
                case STRING -> {
                    return pendingHigh ? String.format("lone surrogate U+%04X at index %d", (int) lastData, stringIndex - 1) : null;
                }
                default -> {
                    return null;
                }
            }
        }

        private String tokenChar(char ch) {
            if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
                return inToken ? endToken() : null;
            }
            if (!inToken) {
                inToken = true;
                token.setLength(0);
                negative = false;
                digits = 0;
                value = 0;
                overflow = false;
                badChar = false;
                if (!list && tokens > 0) {
                    return "more than one value where " + (kind == BOOLEAN ? "xs:boolean" : typeName) + " holds one";
                }
            }
            if (token.length() < 40) {
                token.append(ch);
            }
            if (kind == BOOLEAN) {
                badChar |= token.length() > 5;
                return null;
            }
            if (ch >= '0' && ch <= '9') {
                digits++;
                // accumulate negatively, as Long.parseLong does, so that Long.MIN_VALUE fits
                int d = ch - '0';
                if (!overflow) {
                    if (value < (Long.MIN_VALUE + d) / 10) {
                        overflow = true;
                    } else {
                        value = value * 10 - d;
                    }
                }
            } else if ((ch == '-' || ch == '+') && token.length() == 1) {
                negative = ch == '-';
            } else {
                badChar = true;
            }
            return null;
        }

        private String endToken() {
            inToken = false;
            tokens++;
            String where = list ? " (entry " + tokens + ")" : "";
            String t = token.toString();
            if (kind == BOOLEAN) {
                if (badChar || !(t.equals("true") || t.equals("false") || t.equals("1") || t.equals("0"))) {
                    return "'" + abbreviate(t) + "' is not an xs:boolean (true, false, 1 or 0)" + where;
                }
                return null;
            }
            if (badChar || digits == 0) {
                return "'" + abbreviate(t) + "' is not an " + typeName + " (a decimal integer)" + where;
            }
            boolean tooBig = overflow || (negative ? value < min : value == Long.MIN_VALUE || -value > max);
            if (tooBig) {
                return abbreviate(t) + " is outside the range of " + typeName + " (" + min + " to " + max + ")" + where;
            }
            return null;
        }

        private String base64(char[] c, int start, int length) {
            for (int i = start, end = start + length; i < end; i++) {
                char ch = c[i];
                if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
                    continue;
                }
                boolean data = ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '+'
                        || ch == '/';
                if (ch == '=') {
                    if (++padding > 2 || significant % 4 < 2) {
                        return "not xs:base64Binary: '=' at base64 character " + (significant + 1)
                                + ", where padding cannot be";
                    }
                } else if (!data) {
                    return String.format("not xs:base64Binary: character %s at base64 character %d",
                            ch < 0x20 || ch > 0x7E ? String.format("U+%04X", (int) ch) : "'" + ch + "'", significant + 1);
                } else if (padding > 0) {
                    return "not xs:base64Binary: data after the padding '='";
                } else {
                    lastData = ch;
                }
                significant++;
            }
            return null;
        }

        private String string(char[] c, int start, int length) {
            for (int i = start, end = start + length; i < end; i++, stringIndex++) {
                char ch = c[i];
                if (ch < 0xD800 || ch > 0xDFFF) {
                    if (pendingHigh) {
                        return String.format("lone surrogate U+%04X at index %d", (int) lastData, stringIndex - 1);
                    }
                    continue;
                }
                if (Character.isHighSurrogate(ch)) {
                    if (pendingHigh) {
                        return String.format("lone surrogate U+%04X at index %d", (int) lastData, stringIndex - 1);
                    }
                    pendingHigh = true;
                    lastData = ch;
                } else if (pendingHigh) {
                    pendingHigh = false;
                } else {
                    return String.format("lone surrogate U+%04X at index %d", (int) ch, stringIndex);
                }
            }
            return null;
        }
    }
}

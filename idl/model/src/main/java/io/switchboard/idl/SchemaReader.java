package io.switchboard.idl;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.xml.XMLConstants;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/**
 * Reads an interface XML Schema into an {@link InterfaceModel}.
 *
 * <p>Conventions (document/literal wrapped): a global element {@code op} together with a global
 * element {@code opResponse} is an operation; {@code opFault}, if present, is its declared fault.
 * An operation marked {@code oneWay="true"} in the appinfo has no response. Elements of an
 * operation wrapper become the Java method's parameters. An {@code xs:appinfo} block names the
 * component and marks operations:
 *
 * <pre>{@code
 * <xs:annotation><xs:appinfo>
 *   <sb:component xmlns:sb="urn:switchboard:idl" name="Echo">
 *     <sb:operation name="echoDoubles" idempotent="true"/>
 *   </sb:component>
 * </xs:appinfo></xs:annotation>
 * }</pre>
 *
 * <p>The supported subset: named complex types and anonymous element types whose content is one
 * {@code xs:sequence} of local {@code xs:element}s typed with the simple types of
 * {@link ScalarType} or named complex types of the same schema; {@code minOccurs} 0 or 1,
 * {@code maxOccurs} 1 or more, {@code nillable}. Anything else is refused with a
 * {@link SchemaException} naming the construct.
 *
 * <p>{@code <sb:operation name="op" byReference="true"/>} lets an in-process call share the
 * operation's request and response objects instead of copying them (see the {@code local}
 * protocol). A named complex type whose own {@code xs:annotation/xs:appinfo} holds
 * {@code <sb:ndarray/>} is a multi-dimensional array of numbers; it must be exactly
 *
 * <pre>{@code
 * <xs:complexType name="Matrix">
 *   <xs:annotation><xs:appinfo><sb:ndarray xmlns:sb="urn:switchboard:idl"/></xs:appinfo></xs:annotation>
 *   <xs:sequence>
 *     <xs:element name="shape" type="xs:int" minOccurs="0" maxOccurs="unbounded"/>
 *     <xs:element name="values" type="xs:double" minOccurs="0" maxOccurs="unbounded"/>
 *   </xs:sequence>
 * </xs:complexType>
 * }</pre>
 *
 * <p>(any number type for {@code values}): the length of each dimension, then the values in
 * row-major order. To any other reader it is a plain type of two lists, packed on the bulk
 * protocol; the compiler adds conversions from and to {@code double[][]}, {@code double[][][]}.
 *
 * <p>A named complex type whose whole content is one choice is a heterogeneous list: each element
 * of the list is one of the choice's alternatives (a scalar, a struct, an n-d array or a list type,
 * itself included, so lists nest). Alternatives need distinct types, hold no nulls and may not be
 * linked (recursive) types; {@code xs:dateTime} is not an alternative yet.
 *
 * <pre>{@code
 * <xs:complexType name="Mixed">
 *   <xs:choice minOccurs="0" maxOccurs="unbounded">
 *     <xs:element name="number" type="xs:double"/>
 *     <xs:element name="text" type="xs:string"/>
 *     <xs:element name="point" type="tns:Point"/>
 *     <xs:element name="list" type="tns:Mixed"/>
 *   </xs:choice>
 * </xs:complexType>
 * }</pre>
 *
 * <p>DTDs, external entities, imports and includes are refused: a schema never makes the reader
 * fetch anything.
 */
public final class SchemaReader {
    public static final String SWITCHBOARD_NS = "urn:switchboard:idl";
    private static final String XS = XMLConstants.W3C_XML_SCHEMA_NS_URI;

    /** Largest schema document accepted, in bytes. */
    public static final int MAX_SCHEMA_BYTES = 1 << 20;

    private SchemaReader() {
    }

    /** Reads at most {@link #MAX_SCHEMA_BYTES} and one byte more of the file: a larger one is refused unread. */
    public static InterfaceModel read(Path path) {
        try (InputStream in = Files.newInputStream(path)) {
            return read(in, path.getFileName().toString());
        } catch (IOException e) {
            throw new SchemaException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    public static InterfaceModel read(String schemaText) {
        return read(schemaText.getBytes(StandardCharsets.UTF_8), "schema");
    }

    public static InterfaceModel read(InputStream in, String sourceName) {
        try {
            byte[] bytes = in.readNBytes(MAX_SCHEMA_BYTES + 1);
            return read(bytes, sourceName);
        } catch (IOException e) {
            throw new SchemaException("cannot read " + sourceName + ": " + e.getMessage(), e);
        }
    }

    public static InterfaceModel read(byte[] bytes, String sourceName) {
        if (bytes.length > MAX_SCHEMA_BYTES) {
            throw new SchemaException(sourceName + ": schema is larger than the limit of " + MAX_SCHEMA_BYTES + " bytes");
        }
        Document doc;
        try {
            doc = SecureXml.documentBuilder().parse(new ByteArrayInputStream(bytes));
        } catch (SAXException e) {
            throw new SchemaException(sourceName + ": not a well-formed, DTD-free XML document: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new SchemaException(sourceName + ": " + e.getMessage(), e);
        }
        return new Parse(sourceName, doc, new String(bytes, StandardCharsets.UTF_8)).run();
    }

    /** One parse: the state of reading one document. */
    private static final class Parse {
        private final String source;
        private final String text;
        private final Element root;
        private String tns;
        private final Map<String, Element> namedTypes = new LinkedHashMap<>();
        private final Map<String, Element> globalElements = new LinkedHashMap<>();
        private final Map<String, Mark> marks = new LinkedHashMap<>();
        private String componentName;

        private record Mark(boolean idempotent, boolean oneWay, boolean byReference) {
        }

        Parse(String source, Document doc, String text) {
            this.source = source;
            this.text = text;
            this.root = doc.getDocumentElement();
        }

        InterfaceModel run() {
            if (!XS.equals(root.getNamespaceURI()) || !"schema".equals(root.getLocalName())) {
                throw error("the document element must be xs:schema");
            }
            tns = root.getAttribute("targetNamespace");
            if (tns.isEmpty()) {
                throw error("xs:schema needs a targetNamespace");
            }
            if (!"qualified".equals(root.getAttribute("elementFormDefault"))) {
                throw error("xs:schema must say elementFormDefault=\"qualified\"");
            }
            for (Element child : children(root)) {
                if (!XS.equals(child.getNamespaceURI())) {
                    throw error("unexpected element " + child.getTagName() + " in xs:schema");
                }
                switch (child.getLocalName()) {
                    case "annotation" -> readAppinfo(child);
                    case "complexType" -> namedTypes.put(requireName(child, "xs:complexType"), child);
                    case "element" -> globalElements.put(requireName(child, "global xs:element"), child);
                    case "import", "include", "redefine" -> throw error("xs:" + child.getLocalName()
                            + " is not supported: an interface schema is one self-contained document");
                    default -> throw error("xs:" + child.getLocalName() + " is not supported at the top level");
                }
            }
            if (componentName == null) {
                throw error("missing <sb:component name=\"...\"> in an xs:annotation/xs:appinfo block");
            }

            Map<String, ComplexTypeModel> types = new LinkedHashMap<>();
            for (Map.Entry<String, Element> e : namedTypes.entrySet()) {
                List<FieldModel> alternatives = readChoice(e.getValue(), e.getKey());
                if (alternatives != null) {
                    types.put(e.getKey(), new ComplexTypeModel(e.getKey(), false, alternatives, false, false, true));
                    continue;
                }
                List<FieldModel> fields = readFields(e.getValue(), e.getKey());
                boolean ndArray = hasTypeMark(e.getValue(), "ndarray");
                if (ndArray) {
                    checkNdArray(e.getKey(), fields);
                }
                types.put(e.getKey(), new ComplexTypeModel(e.getKey(), false, fields, false, ndArray));
            }
            Set<String> recursive = recursiveTypes(types);
            Map<String, ComplexTypeModel> marked = new LinkedHashMap<>();
            for (ComplexTypeModel t : types.values()) {
                if (t.heterogeneousList()) {
                    checkAlternatives(t, types, recursive);
                    marked.put(t.name(), t);
                    continue;
                }
                marked.put(t.name(), new ComplexTypeModel(t.name(), false, markGraph(t.fields(), recursive),
                        recursive.contains(t.name()), t.ndArray()));
            }
            List<OperationModel> operations = readOperations(recursive);
            return new InterfaceModel(componentName, tns, operations, marked, text);
        }

        private void readAppinfo(Element annotation) {
            for (Element appinfo : children(annotation)) {
                if (!"appinfo".equals(appinfo.getLocalName())) {
                    continue;
                }
                for (Element c : children(appinfo)) {
                    if (!SWITCHBOARD_NS.equals(c.getNamespaceURI()) || !"component".equals(c.getLocalName())) {
                        continue;
                    }
                    componentName = requireName(c, "sb:component");
                    if (!isJavaIdentifier(componentName)) {
                        throw error("component name '" + componentName + "' must be a Java identifier");
                    }
                    for (Element op : children(c)) {
                        if (!"operation".equals(op.getLocalName())) {
                            throw error("unexpected <" + op.getTagName() + "> in sb:component");
                        }
                        marks.put(requireName(op, "sb:operation"), new Mark(
                                bool(op, "idempotent"), bool(op, "oneWay"), bool(op, "byReference")));
                    }
                }
            }
        }

        /** Whether a complex type's own {@code xs:annotation/xs:appinfo} holds {@code <sb:mark/>}. */
        private boolean hasTypeMark(Element complexType, String mark) {
            for (Element c : children(complexType)) {
                if (!XS.equals(c.getNamespaceURI()) || !"annotation".equals(c.getLocalName())) {
                    continue;
                }
                for (Element appinfo : children(c)) {
                    if (!"appinfo".equals(appinfo.getLocalName())) {
                        continue;
                    }
                    for (Element m : children(appinfo)) {
                        if (SWITCHBOARD_NS.equals(m.getNamespaceURI()) && mark.equals(m.getLocalName())) {
                            return true;
                        }
                    }
                }
            }
            return false;
        }

        /**
         * An n-d array is exactly {@code shape} (repeated {@code xs:int}) then {@code values}
         * (repeated number): the convention a reader of the WSDL or the .proto sees as a plain
         * struct of two packed lists, so nothing outside XML Schema is needed to understand it.
         */
        private void checkNdArray(String name, List<FieldModel> fields) {
            String expected = "an <sb:ndarray/> type holds exactly <xs:element name=\"shape\" type=\"xs:int\""
                    + " minOccurs=\"0\" maxOccurs=\"unbounded\"/> then <xs:element name=\"values\" type=\"xs:double\""
                    + " (or another number type) minOccurs=\"0\" maxOccurs=\"unbounded\"/>";
            if (fields.size() != 2) {
                throw error("type " + name + ": " + expected + "; it has " + fields.size() + " elements");
            }
            FieldModel shape = fields.get(0);
            FieldModel values = fields.get(1);
            if (!"shape".equals(shape.name()) || shape.scalar() != ScalarType.INT || !shape.repeated()) {
                throw error("type " + name + ": the first element must be the shape; " + expected);
            }
            if (!"values".equals(values.name()) || values.scalar() == null || !values.scalar().isNumeric()
                    || !values.repeated()) {
                throw error("type " + name + ": the second element must be the values, numbers; " + expected);
            }
        }

        /**
         * The alternatives of a heterogeneous list type (content: one
         * {@code <xs:choice minOccurs="0" maxOccurs="unbounded">} of single, required elements), or
         * null when the type holds no {@code xs:choice}.
         */
        private List<FieldModel> readChoice(Element complexType, String owner) {
            Element choice = firstChild(complexType, "choice");
            if (choice == null) {
                return null;
            }
            String expected = "a heterogeneous list type holds exactly one <xs:choice minOccurs=\"0\""
                    + " maxOccurs=\"unbounded\"> of <xs:element name=\"...\" type=\"...\"/>";
            for (Element c : children(complexType)) {
                if (c != choice && !"annotation".equals(c.getLocalName())) {
                    throw error("in " + owner + ": xs:" + c.getLocalName() + " next to xs:choice; " + expected);
                }
            }
            if (!"0".equals(choice.getAttribute("minOccurs")) || !"unbounded".equals(choice.getAttribute("maxOccurs"))) {
                throw error("in " + owner + ": the xs:choice must say minOccurs=\"0\" maxOccurs=\"unbounded\"; " + expected);
            }
            if (hasTypeMark(complexType, "ndarray")) {
                throw error("type " + owner + ": an <sb:ndarray/> type cannot be a heterogeneous list");
            }
            List<FieldModel> alternatives = new ArrayList<>();
            Set<String> names = new HashSet<>();
            Set<String> javaTypes = new HashSet<>();
            for (Element e : children(choice)) {
                if ("annotation".equals(e.getLocalName())) {
                    continue;
                }
                if (!"element".equals(e.getLocalName())) {
                    throw error("in " + owner + ": xs:" + e.getLocalName() + " inside xs:choice is not supported; " + expected);
                }
                for (String attr : new String[] {"minOccurs", "maxOccurs"}) {
                    if (!e.getAttribute(attr).isEmpty() && !"1".equals(e.getAttribute(attr))) {
                        throw error("in " + owner + ": a choice element holds one value; " + attr + " is not supported"
                                + " (repeat the choice instead)");
                    }
                }
                if (bool(e, "nillable")) {
                    throw error("in " + owner + ": choice elements cannot be nillable: a heterogeneous list holds no nulls");
                }
                FieldModel f = readField(e, owner);
                if (!names.add(f.name())) {
                    throw error("in " + owner + ": element '" + f.name() + "' appears twice");
                }
                if (f.scalar() == ScalarType.DATE_TIME) {
                    throw error("in " + owner + ": xs:dateTime is not supported in a heterogeneous list yet"
                            + " (put it in a named complex type and use that)");
                }
                // the Java class of an element says which alternative it is, so two may not share one
                String javaType = f.isScalar() ? f.scalar().boxed() : f.complexType();
                if (!javaTypes.add(javaType)) {
                    throw error("in " + owner + ": two alternatives of the choice have the type "
                            + (f.isScalar() ? "xs:" + f.scalar().xsdName() : f.complexType())
                            + "; each alternative needs a type of its own");
                }
                alternatives.add(f);
            }
            if (alternatives.isEmpty()) {
                throw error("in " + owner + ": the xs:choice has no elements; " + expected);
            }
            return alternatives;
        }

        /** Alternatives may not be or reach linked types: list elements are values, nested as a tree. */
        private void checkAlternatives(ComplexTypeModel list, Map<String, ComplexTypeModel> types, Set<String> recursive) {
            for (FieldModel f : list.fields()) {
                if (f.complexType() == null) {
                    continue;
                }
                Deque<String> work = new ArrayDeque<>(List.of(f.complexType()));
                Set<String> seen = new HashSet<>();
                while (!work.isEmpty()) {
                    String t = work.pop();
                    if (!seen.add(t)) {
                        continue;
                    }
                    if (recursive.contains(t)) {
                        throw error("in " + list.name() + ": alternative '" + f.name() + "' " + (t.equals(f.complexType())
                                ? "is" : "reaches") + " the linked (recursive) type " + t
                                + ", which a heterogeneous list cannot hold");
                    }
                    types.get(t).fields().stream().filter(x -> x.complexType() != null)
                            .forEach(x -> work.push(x.complexType()));
                }
            }
        }

        private List<OperationModel> readOperations(Set<String> recursive) {
            Set<String> used = new HashSet<>();
            List<OperationModel> ops = new ArrayList<>();
            for (String name : globalElements.keySet()) {
                Mark mark = marks.getOrDefault(name, new Mark(false, false, false));
                boolean hasResponse = globalElements.containsKey(name + "Response");
                if (!hasResponse && !mark.oneWay()) {
                    continue;
                }
                if (hasResponse && mark.oneWay()) {
                    throw error("operation " + name + " is marked oneWay but declares " + name + "Response");
                }
                ComplexTypeModel request = elementType(name, recursive);
                ComplexTypeModel response = hasResponse ? elementType(name + "Response", recursive) : null;
                ComplexTypeModel fault = globalElements.containsKey(name + "Fault")
                        ? elementType(name + "Fault", recursive) : null;
                used.add(name);
                if (hasResponse) {
                    used.add(name + "Response");
                }
                if (fault != null) {
                    if (mark.oneWay()) {
                        throw error("one-way operation " + name + " cannot declare a fault");
                    }
                    used.add(name + "Fault");
                }
                if (!isJavaIdentifier(name)) {
                    throw error("operation name '" + name + "' must be a Java identifier");
                }
                ops.add(new OperationModel(name, request, response, fault, mark.idempotent(), mark.byReference()));
            }
            for (String name : globalElements.keySet()) {
                if (!used.contains(name)) {
                    throw error("global element '" + name + "' is not part of an operation: an operation "
                            + "needs '" + name + "' and '" + name + "Response' (or oneWay=\"true\" in its sb:operation)");
                }
            }
            for (String marked : marks.keySet()) {
                if (!used.contains(marked)) {
                    throw error("sb:operation '" + marked + "' names no operation of the schema");
                }
            }
            if (ops.isEmpty()) {
                throw error("the schema declares no operation");
            }
            return ops;
        }

        private ComplexTypeModel elementType(String name, Set<String> recursive) {
            Element el = globalElements.get(name);
            List<FieldModel> fields;
            String typeAttr = el.getAttribute("type");
            Element inline = firstChild(el, "complexType");
            if (!typeAttr.isEmpty()) {
                String typeName = complexTypeName(el, typeAttr, "element " + name);
                fields = readFields(namedTypes.get(typeName), typeName);
            } else if (inline != null) {
                fields = readFields(inline, name);
            } else {
                throw error("global element '" + name + "' needs an inline xs:complexType or a type");
            }
            return new ComplexTypeModel(name, true, markGraph(fields, recursive), false);
        }

        private List<FieldModel> readFields(Element complexType, String owner) {
            List<FieldModel> fields = new ArrayList<>();
            Set<String> names = new HashSet<>();
            for (Element c : children(complexType)) {
                switch (c.getLocalName()) {
                    case "annotation" -> { }
                    case "sequence" -> {
                        for (Element e : children(c)) {
                            if ("annotation".equals(e.getLocalName())) {
                                continue;
                            }
                            if (!"element".equals(e.getLocalName())) {
                                throw error("in " + owner + ": xs:" + e.getLocalName()
                                        + " inside xs:sequence is not supported (only xs:element)");
                            }
                            FieldModel f = readField(e, owner);
                            if (!names.add(f.name())) {
                                throw error("in " + owner + ": element '" + f.name() + "' appears twice");
                            }
                            fields.add(f);
                        }
                    }
                    case "choice" -> throw error("in " + owner + ": xs:choice is supported only as the whole content"
                            + " of a named complex type (a heterogeneous list), not of a message element");
                    default -> throw error("in " + owner + ": xs:" + c.getLocalName()
                            + " is not supported (a complex type holds one xs:sequence)");
                }
            }
            return fields;
        }

        private FieldModel readField(Element e, String owner) {
            if (e.hasAttribute("ref")) {
                throw error("in " + owner + ": element references (ref=) are not supported");
            }
            String name = requireName(e, "xs:element in " + owner);
            if (!isJavaIdentifier(name)) {
                throw error("in " + owner + ": element name '" + name + "' must be a Java identifier");
            }
            if (firstChild(e, "complexType") != null || firstChild(e, "simpleType") != null) {
                throw error("in " + owner + ": element '" + name + "' declares an anonymous type; name it");
            }
            String type = e.getAttribute("type");
            if (type.isEmpty()) {
                throw error("in " + owner + ": element '" + name + "' needs a type");
            }
            int min = occurs(e, "minOccurs", owner, name);
            int max = occurs(e, "maxOccurs", owner, name);
            if (min > 1) {
                throw error("in " + owner + ": element '" + name + "' has minOccurs " + min + " (only 0 or 1)");
            }
            if (max == 0) {
                throw error("in " + owner + ": element '" + name + "' has maxOccurs 0");
            }
            boolean nillable = bool(e, "nillable");
            boolean repeated = max > 1;
            String[] q = splitQName(type);
            String ns = e.lookupNamespaceURI(q[0]);
            if (XS.equals(ns)) {
                ScalarType scalar = ScalarType.forXsdName(q[1]).orElseThrow(() -> error("in " + owner
                        + ": element '" + name + "' has type xs:" + q[1] + ", which is not supported (supported: "
                        + java.util.Arrays.stream(ScalarType.values()).map(ScalarType::xsdName).toList() + ")"));
                return new FieldModel(name, scalar, null, min == 0, repeated, nillable, false);
            }
            String typeName = complexTypeName(e, type, "element '" + name + "' in " + owner);
            return new FieldModel(name, null, typeName, min == 0, repeated, nillable, false);
        }

        private String complexTypeName(Element context, String qname, String where) {
            String[] q = splitQName(qname);
            String ns = context.lookupNamespaceURI(q[0]);
            if (!tns.equals(ns)) {
                throw error(where + ": type " + qname + " is neither an XML Schema type nor a type of " + tns);
            }
            if (!namedTypes.containsKey(q[1])) {
                throw error(where + ": type " + qname + " is not declared in this schema");
            }
            return q[1];
        }

        private int occurs(Element e, String attr, String owner, String name) {
            String v = e.getAttribute(attr);
            if (v.isEmpty()) {
                return 1;
            }
            if ("unbounded".equals(v)) {
                return Integer.MAX_VALUE;
            }
            try {
                return Integer.parseInt(v);
            } catch (NumberFormatException ex) {
                throw error("in " + owner + ": element '" + name + "' has " + attr + "=\"" + v + "\"");
            }
        }

        private List<FieldModel> markGraph(List<FieldModel> fields, Set<String> recursive) {
            List<FieldModel> out = new ArrayList<>(fields.size());
            for (FieldModel f : fields) {
                out.add(f.asGraphReference(f.complexType() != null && recursive.contains(f.complexType())));
            }
            return out;
        }

        /** Types that lie on a cycle of the type graph (Tarjan's strongly connected components, iteratively). */
        private Set<String> recursiveTypes(Map<String, ComplexTypeModel> types) {
            Map<String, List<String>> edges = new HashMap<>();
            for (ComplexTypeModel t : types.values()) {
                // a heterogeneous list nests by value and is bounded by a depth limit, so a cycle
                // through one is not a linked structure
                edges.put(t.name(), t.fields().stream().filter(f -> f.complexType() != null)
                        .filter(f -> !types.get(f.complexType()).heterogeneousList())
                        .map(FieldModel::complexType).toList());
            }
            Map<String, Integer> index = new HashMap<>();
            Map<String, Integer> low = new HashMap<>();
            Deque<String> stack = new ArrayDeque<>();
            Set<String> onStack = new HashSet<>();
            Set<String> result = new HashSet<>();
            int[] counter = {0};
            for (String start : types.keySet()) {
                if (index.containsKey(start)) {
                    continue;
                }
                Deque<Object[]> work = new ArrayDeque<>();
                work.push(new Object[] {start, 0});
                index.put(start, counter[0]);
                low.put(start, counter[0]++);
                stack.push(start);
                onStack.add(start);
                while (!work.isEmpty()) {
                    Object[] frame = work.peek();
                    String v = (String) frame[0];
                    int i = (Integer) frame[1];
                    List<String> out = edges.get(v);
                    if (i < out.size()) {
                        frame[1] = i + 1;
                        String w = out.get(i);
                        if (!index.containsKey(w)) {
                            index.put(w, counter[0]);
                            low.put(w, counter[0]++);
                            stack.push(w);
                            onStack.add(w);
                            work.push(new Object[] {w, 0});
                        } else if (onStack.contains(w)) {
                            low.put(v, Math.min(low.get(v), index.get(w)));
                        }
                        continue;
                    }
                    work.pop();
                    if (!work.isEmpty()) {
                        String parent = (String) work.peek()[0];
                        low.put(parent, Math.min(low.get(parent), low.get(v)));
                    }
                    if (low.get(v).equals(index.get(v))) {
                        List<String> component = new ArrayList<>();
                        String w;
                        do {
                            w = stack.pop();
                            onStack.remove(w);
                            component.add(w);
                        } while (!w.equals(v));
                        if (component.size() > 1 || edges.get(v).contains(v)) {
                            result.addAll(component);
                        }
                    }
                }
            }
            return result;
        }

        private String requireName(Element e, String what) {
            String n = e.getAttribute("name");
            if (n.isEmpty()) {
                throw error(what + " needs a name");
            }
            return n;
        }

        private boolean bool(Element e, String attr) {
            String v = e.getAttribute(attr);
            return "true".equals(v) || "1".equals(v);
        }

        private String[] splitQName(String qname) {
            int colon = qname.indexOf(':');
            return colon < 0 ? new String[] {null, qname} : new String[] {qname.substring(0, colon), qname.substring(colon + 1)};
        }

        private SchemaException error(String message) {
            return new SchemaException(source + ": " + message);
        }

        private static Element firstChild(Element parent, String localName) {
            for (Element c : children(parent)) {
                if (XS.equals(c.getNamespaceURI()) && localName.equals(c.getLocalName())) {
                    return c;
                }
            }
            return null;
        }

        private static List<Element> children(Element parent) {
            List<Element> out = new ArrayList<>();
            for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
                if (n instanceof Element el) {
                    out.add(el);
                }
            }
            return out;
        }
    }

    static boolean isJavaIdentifier(String s) {
        if (s.isEmpty() || !Character.isJavaIdentifierStart(s.charAt(0))) {
            return false;
        }
        for (int i = 1; i < s.length(); i++) {
            if (!Character.isJavaIdentifierPart(s.charAt(i))) {
                return false;
            }
        }
        return !javax.lang.model.SourceVersion.isKeyword(s);
    }
}

package io.switchboard.codec.documents;

import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Writes the schema of the SOAP wire form, embedded in the WSDL. It differs from the interface
 * schema in three documented ways, each to keep values exact and depth bounded:
 * <ul>
 *   <li>a repeated number or boolean is one element holding an {@code xs:list}: absent means null,
 *       empty means an empty array;</li>
 *   <li>other repeated values sit in a wrapper element of {@code item}s, so null and empty lists
 *       differ and list entries may be nil;</li>
 *   <li>(not a difference, but worth knowing) a heterogeneous list type keeps its
 *       {@code xs:choice}: its elements are the list's children, each named by its alternative;</li>
 *   <li>values of a recursive type travel flat in the message's {@code sb-graph} element, each
 *       with an {@code sb-id}; fields holding them carry the id ({@code xs:IDREF}).</li>
 * </ul>
 *
 * <p>Every structure a request and its response may both hold has a named type: the node table
 * ({@code SbGraph}, one for every message, holding any linked type) and the wrapper of each kind of
 * list ({@code ArrayOfLinkEntry}, {@code ArrayOfString}, {@code ArrayOfIDREF}). A wrapper-style
 * JAX-WS client (CXF's default {@code wsdl2java}) maps a child element that the request and the
 * response share to one in-out parameter, which it can only do when both are of one named type;
 * anonymous types would give two classes of one name and stop its code generator.
 */
final class WireSchema {
    /** What a reader in another language needs to know of an {@code <sb:ndarray/>} type. */
    static final String NDARRAY_NOTE = "An n-dimensional array: shape holds the length of each dimension,"
            + " outermost first; values holds the product of those lengths, in row-major order (the last index"
            + " varies fastest). An empty shape is a single value.";

    /** What a reader in another language needs to know of a heterogeneous list type. */
    static final String LIST_NOTE = "A heterogeneous list: each child element is one list element, of the"
            + " alternative its name says, in order; no element is nil. Lists nest at most "
            + io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH + " deep.";

    private final InterfaceModel model;
    private final StringBuilder out = new StringBuilder();
    /** The named list wrappers the fields use, by item type, each with its type's name. */
    private final Map<String, String> listTypes = new LinkedHashMap<>();
    /** The linked types some message's node table holds. */
    private final Set<String> graphNodes = new LinkedHashSet<>();
    private final String graphType;

    WireSchema(InterfaceModel model) {
        this.model = model;
        this.graphType = freeName("SbGraph");
    }

    /** The {@code xs:schema} element, indented by {@code indent} spaces. */
    String write(int indent) {
        String tns = Xml.attr(model.targetNamespace());
        line(indent, "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" xmlns:tns=\"" + tns
                + "\" targetNamespace=\"" + tns + "\" elementFormDefault=\"qualified\">");
        for (ComplexTypeModel t : model.types().values()) {
            line(indent + 2, "<xs:complexType name=\"" + t.name() + "\">");
            if (t.heterogeneousList()) {
                choice(indent + 4, t);
                line(indent + 2, "</xs:complexType>");
                continue;
            }
            if (t.ndArray()) {
                line(indent + 4, "<xs:annotation><xs:documentation>" + NDARRAY_NOTE + "</xs:documentation></xs:annotation>");
            }
            sequence(indent + 4, t, false);
            if (t.recursive()) {
                line(indent + 4, "<xs:attribute name=\"" + InterfaceDocuments.ID_ATTRIBUTE + "\" type=\"xs:ID\" use=\"required\"/>");
            }
            line(indent + 2, "</xs:complexType>");
        }
        for (OperationModel op : model.operations()) {
            element(indent + 2, op.request());
            if (op.response() != null) {
                element(indent + 2, op.response());
            }
            if (op.fault() != null) {
                element(indent + 2, op.fault());
            }
        }
        if (!graphNodes.isEmpty()) {
            graphTable(indent + 2);
        }
        for (Map.Entry<String, String> list : listTypes.entrySet()) {
            listType(indent + 2, list.getValue(), list.getKey());
        }
        line(indent, "</xs:schema>");
        return out.toString();
    }

    /** A heterogeneous list: the interface schema's choice as it is, elements straight inside the list's element. */
    private void choice(int indent, ComplexTypeModel list) {
        line(indent, "<xs:annotation><xs:documentation>" + LIST_NOTE + "</xs:documentation></xs:annotation>");
        line(indent, "<xs:choice minOccurs=\"0\" maxOccurs=\"unbounded\">");
        for (FieldModel alternative : list.fields()) {
            line(indent + 2, "<xs:element name=\"" + alternative.name() + "\" type=\""
                    + (alternative.isScalar() ? "xs:" + alternative.scalar().xsdName() : "tns:" + alternative.complexType())
                    + "\"/>");
        }
        line(indent, "</xs:choice>");
    }

    private void element(int indent, ComplexTypeModel message) {
        line(indent, "<xs:element name=\"" + message.name() + "\">");
        line(indent + 2, "<xs:complexType>");
        sequence(indent + 4, message, !model.graphTypesReachableFrom(message).isEmpty());
        line(indent + 2, "</xs:complexType>");
        line(indent, "</xs:element>");
    }

    private void sequence(int indent, ComplexTypeModel type, boolean graphTable) {
        if (type.fields().isEmpty() && !graphTable) {
            line(indent, "<xs:sequence/>");
            return;
        }
        line(indent, "<xs:sequence>");
        for (FieldModel f : type.fields()) {
            field(indent + 2, f);
        }
        if (graphTable) {
            graphNodes.addAll(model.graphTypesReachableFrom(type));
            line(indent + 2, "<xs:element name=\"" + InterfaceDocuments.GRAPH_ELEMENT + "\" type=\"tns:" + graphType
                    + "\" minOccurs=\"0\"/>");
        }
        line(indent, "</xs:sequence>");
    }

    /**
     * The node table's type, one for every message: a message's own table holds only the types it
     * reaches (the server's reader refuses others), but one type keeps request and response alike.
     */
    private void graphTable(int indent) {
        line(indent, "<xs:complexType name=\"" + graphType + "\">");
        line(indent + 2, "<xs:choice minOccurs=\"0\" maxOccurs=\"unbounded\">");
        for (String n : graphNodes) {
            line(indent + 4, "<xs:element name=\"" + n + "\" type=\"tns:" + n + "\"/>");
        }
        line(indent + 2, "</xs:choice>");
        line(indent, "</xs:complexType>");
    }

    /** A list's wrapper: {@code item}s that may be nil, except references (a list of linked nodes holds no nulls). */
    private void listType(int indent, String name, String itemType) {
        boolean references = itemType.equals("xs:IDREF");
        line(indent, "<xs:complexType name=\"" + name + "\"><xs:sequence>");
        line(indent + 2, "<xs:element name=\"" + InterfaceDocuments.LIST_ITEM + "\" type=\"" + itemType
                + "\" minOccurs=\"0\" maxOccurs=\"unbounded\"" + (references ? "" : " nillable=\"true\"") + "/>");
        line(indent, "</xs:sequence></xs:complexType>");
    }

    /** The wrapper type of lists of {@code itemType}, named when first used. */
    private String listTypeOf(String itemType) {
        return listTypes.computeIfAbsent(itemType, t -> {
            String local = t.substring(t.indexOf(':') + 1);
            return freeName("ArrayOf" + Character.toUpperCase(local.charAt(0)) + local.substring(1));
        });
    }

    /** {@code wanted}, or it with a suffix when the interface has a type of that name already. */
    private String freeName(String wanted) {
        String name = wanted;
        for (int i = 2; model.types().containsKey(name) || listTypes.containsValue(name)
                || name.equals(graphType); i++) {
            name = wanted + i;
        }
        return name;
    }

    private void field(int indent, FieldModel f) {
        String itemType = f.graphReference() ? "xs:IDREF"
                : f.isScalar() ? "xs:" + f.scalar().xsdName() : "tns:" + f.complexType();
        if (f.isScalar() && f.repeated() && f.scalar().isPrimitive()) {
            line(indent, "<xs:element name=\"" + f.name() + "\" minOccurs=\"0\">");
            line(indent + 2, "<xs:simpleType><xs:list itemType=\"" + itemType + "\"/></xs:simpleType>");
            line(indent, "</xs:element>");
        } else if (f.repeated()) {
            line(indent, "<xs:element name=\"" + f.name() + "\" type=\"tns:" + listTypeOf(itemType) + "\" minOccurs=\"0\"/>");
        } else {
            line(indent, "<xs:element name=\"" + f.name() + "\" type=\"" + itemType + "\""
                    + (f.optional() ? " minOccurs=\"0\"" : "") + (f.nillable() ? " nillable=\"true\"" : "") + "/>");
        }
    }

    private void line(int indent, String text) {
        out.append(" ".repeat(indent)).append(text).append('\n');
    }
}

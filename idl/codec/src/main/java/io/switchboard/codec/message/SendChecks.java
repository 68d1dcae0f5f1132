package io.switchboard.codec.message;

import io.switchboard.idl.runtime.GraphHolder;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.NdArray;
import io.switchboard.idl.runtime.XsdValues;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * What no protocol may send, written once: every protocol refuses these values before it sends a
 * byte (through {@link MessageChecks}), so the failsafe may move a call from one protocol to
 * another without changing its fate. Each refusal is a {@link WireFormatException} naming the
 * field as {@code Type.field}:
 * <ul>
 * <li>a string {@code xs:string} cannot hold (a lone surrogate, a control character, U+FFFE),
 *     and a date-time {@code xs:dateTime} cannot say (see {@link XsdValues});</li>
 * <li>null in a required field that is not nillable, and in a list of linked nodes;</li>
 * <li>an n-d array whose shape does not match its values;</li>
 * <li>a heterogeneous list holding null or a value none of its alternatives allows, or nested
 *     deeper than {@link HeterogeneousList#MAX_DEPTH} (reason {@code depth-limit});</li>
 * <li>more linked nodes than the sender's limit (reason {@code node-limit}).</li>
 * </ul>
 * Numbers need no check: a bean's fields have their schema type's width and every protocol carries
 * every bit pattern (NaN payloads, -0.0, infinities). A record of an interface read at run time is
 * held to its field types when a value is set ({@code DynamicRecord}).
 *
 * <p>One instance checks one message; the walk of a {@link MessageChecks} calls it field by field.
 */
public final class SendChecks {
    private final MessageChecks walk;
    private final int maxNodes;
    private int listDepth;
    private NodeTable table;

    SendChecks(MessageChecks walk, int maxNodes) {
        this.walk = walk;
        this.maxNodes = maxNodes;
    }

    /**
     * Visits every linked node {@code root} reaches, once each and breadth first, without recursion,
     * checking each node's fields; refuses more than the sender's limit. Null (a message that
     * reaches no linked type) does nothing.
     */
    public void nodes(GraphHolder root) {
        if (root == null) {
            return;
        }
        List<Object> nodes = new ArrayList<>();
        table = new NodeTable(root, nodes, IdentityIndex.collect(root, maxNodes, nodes));
        for (int i = 0; i < nodes.size(); i++) {
            try {
                walk.checkNode(this, nodes.get(i));
            } catch (WireFormatException e) {
                throw e.inNode(i);
            }
        }
    }

    /** The node table {@link #nodes} collected, or null. */
    NodeTable nodeTable() {
        return table;
    }

    /** The value of a required field that is not nillable: refused when null. */
    public <T> T required(T value, String field) {
        if (value == null) {
            throw WireFormatException.malformed(field, "required and not nillable, but null");
        }
        return value;
    }

    /** A string, refused when {@code xs:string} cannot hold it; null passes. */
    public static void string(String v, String field) {
        if (v != null) {
            String problem = XsdValues.stringProblem(v);
            if (problem != null) {
                throw WireFormatException.malformed(field, problem);
            }
        }
    }

    public void strings(List<String> v, String field) {
        if (v != null) {
            for (String s : v) {
                string(s, field);
            }
        }
    }

    /** A date-time, refused when {@code xs:dateTime} cannot say it; null passes. */
    public static void dateTime(OffsetDateTime v, String field) {
        if (v != null) {
            String problem = XsdValues.dateTimeProblem(v);
            if (problem != null) {
                throw WireFormatException.malformed(field, problem);
            }
        }
    }

    public void dateTimes(List<OffsetDateTime> v, String field) {
        if (v != null) {
            for (OffsetDateTime d : v) {
                dateTime(d, field);
            }
        }
    }

    /**
     * A list of references to linked nodes holds no nulls: SOAP's form of such a list (JAXB's
     * {@code IDREF}s) cannot say a nil entry, so no protocol takes one.
     */
    public void refs(List<?> nodes, String field) {
        if (nodes != null) {
            for (Object node : nodes) {
                if (node == null) {
                    throw WireFormatException.malformed(field, "a list of linked nodes holds no nulls");
                }
            }
        }
    }

    /** An n-d array whose shape does not match its values, named by its type. */
    public void ndArray(NdArray array, String type) {
        String problem = io.switchboard.codec.NdArrays.inconsistency(array);
        if (problem != null) {
            // named by its type: the walk of a type does not know which field holds the value
            throw WireFormatException.malformed(type, "n-d array " + type + ": " + problem);
        }
    }

    /**
     * Enters a heterogeneous list, one nesting level deeper; false for null (nothing to check). A
     * list nested deeper than {@link HeterogeneousList#MAX_DEPTH}, or one that holds itself, is
     * refused. The caller checks each element, then calls {@link #leaveList()}.
     */
    public boolean enterList(HeterogeneousList list) {
        if (list == null) {
            return false;
        }
        if (++listDepth > HeterogeneousList.MAX_DEPTH) {
            throw new WireFormatException(WireFormatException.DEPTH_LIMIT, "heterogeneous list "
                    + list.typeName() + " nests deeper than " + HeterogeneousList.MAX_DEPTH + " levels");
        }
        return true;
    }

    public void leaveList() {
        listDepth--;
    }

    /** The refusal of a list element that no alternative of its list type allows (null included). */
    public WireFormatException notAnAlternative(Object element, HeterogeneousList list) {
        return WireFormatException.malformed("heterogeneous list " + list.typeName() + " holds "
                + (element == null ? "a null element; such lists hold no nulls"
                        : "a " + element.getClass().getName() + ", which none of its alternatives allows"));
    }
}

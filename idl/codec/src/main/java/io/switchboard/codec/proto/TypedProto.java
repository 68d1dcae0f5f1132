package io.switchboard.codec.proto;

import io.switchboard.codec.proto.ProtoFile.Field;
import io.switchboard.codec.proto.ProtoFile.Label;
import io.switchboard.codec.proto.ProtoFile.Message;
import io.switchboard.codec.proto.ProtoFile.Method;
import io.switchboard.codec.proto.ProtoFile.Service;
import io.switchboard.codec.proto.ProtoFile.Type;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.runtime.HeterogeneousList;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The typed {@code .proto} of a component: every value as ordinary protobuf, so that any gRPC
 * toolchain builds a client from the file alone. The rules are printed at the top of the file
 * ({@link #CONVENTION}); this class applies them to an {@link InterfaceModel}.
 */
final class TypedProto {
    /** The field of a message that lists its linked values (the node table). */
    static final String NODES_FIELD = "sb_nodes";
    static final int NODES_NUMBER = 2046;
    /** The field of a message that says which of its repeated fields, or which of their elements, are null. */
    static final String NULLS_FIELD = "sb_nulls";
    static final int NULLS_NUMBER = 2047;
    /** Schema fields are numbered from 1 in schema order, below the two numbers above. */
    static final int MAX_SCHEMA_FIELDS = NODES_NUMBER - 1;

    static final String DATE_TIME = "DateTime";
    static final String NULLS = "Nulls";
    static final String EMPTY = "Empty";
    /** The element message nested in a heterogeneous list's message, and its oneof. */
    static final String LIST_ELEMENT = "Element";
    static final String LIST_ELEMENTS_FIELD = "elements";
    static final String LIST_ONEOF = "value";
    /** The node message nested in an operation message whose values link more than one type. */
    static final String NODE = "Node";

    static final List<String> CONVENTION = List.of(
            "Convention (Switchboard typed protobuf, proto3; the same for every component):",
            "- A message per schema type and per operation message (request `op`, response `opResponse`,",
            "  declared fault `opFault`), named as in the schema; fields numbered from 1 in schema order.",
            "- Numbers: boolean -> bool; byte, short, int -> int32; long -> int64; float, double as such.",
            "  Repeated numbers are packed; repeated int and short are sfixed32 and long sfixed64, so that",
            "  every packed array is its raw little-endian values; a repeated byte is one `bytes` value.",
            "  A number that may be absent is `optional`; a required one is plain (0 when not set).",
            "- Strings and bytes are `optional`: absent is null, set and empty is empty.",
            "- A date-time is DateTime: seconds since 1970-01-01T00:00Z, nanoseconds, and the offset from",
            "  UTC in seconds that the value was written with (kept exactly).",
            "- A struct field is a message field: absent is null.",
            "- Null inside repeated fields: a repeated field cannot be null nor hold null, so a message with",
            "  repeated fields has `Nulls " + NULLS_FIELD + " = " + NULLS_NUMBER + "`: `lists` names the repeated fields (by number)",
            "  that are null rather than empty, `elements` the positions (from 0, in the whole list) of null",
            "  elements, which hold the default value on the wire. Absent when nothing is null.",
            "- An n-dimensional array (a type marked sb:ndarray) is `shape` (the length of each dimension,",
            "  outermost first) and `values` (all elements, row-major: the last index varies fastest).",
            "- A heterogeneous list (a type whose content is one repeated xs:choice) is a message with",
            "  `repeated Element " + LIST_ELEMENTS_FIELD + " = 1`; Element holds the choice's alternatives in `oneof "
                    + LIST_ONEOF + "`, numbered",
            "  from 1 in schema order; exactly one is set. A nested list is the list's message again; lists",
            "  nest at most " + HeterogeneousList.MAX_DEPTH + " deep.",
            "- Linked types (types that reach themselves: lists, trees, graphs) travel as a node table: the",
            "  operation message holds every linked value it reaches once, in `" + NODES_FIELD + " = " + NODES_NUMBER
                    + "` (its own linked",
            "  type, or Node with a oneof when it reaches several); a field of a linked type holds a node",
            "  number: 1 is the first entry of " + NODES_FIELD + ", 0 is null. Cycles and shared nodes keep their shape.",
            "- Large messages: a method whose messages can grow without bound (they reach a repeated field,",
            "  a list or a linked type) streams its request and its response as parts; the message is the",
            "  protobuf merge of its parts in order (concatenate them and parse, or MergeFrom each), repeated",
            "  fields and packed arrays split across parts. A small message is one part. Other methods are unary.",
            "- A declared fault ends the call with a gRPC status whose google.rpc.Status details hold the",
            "  fault message as google.protobuf.Any (type URL type.googleapis.com/PACKAGE.opFault).",
            "- Refusals: INVALID_ARGUMENT (malformed: truncated, a node number out of range, an unset oneof,",
            "  a value out of its schema type's range), RESOURCE_EXHAUSTED (over a size, node or depth limit);",
            "  the reason is in the sb-refused trailer.");

    private final InterfaceModel model;
    private final Set<String> helpers = new LinkedHashSet<>();

    private TypedProto(InterfaceModel model) {
        this.model = model;
    }

    static ProtoFile of(InterfaceModel model) {
        return new TypedProto(model).file();
    }

    private ProtoFile file() {
        List<Message> messages = new ArrayList<>();
        for (ComplexTypeModel t : model.types().values()) {
            messages.add(t.heterogeneousList() ? list(t) : struct(t, typeComment(t), List.of(), List.of()));
        }
        List<Method> methods = new ArrayList<>();
        for (OperationModel op : model.operations()) {
            messages.add(operationMessage(op.request(), "Request of " + op.name() + "."));
            String response;
            if (op.response() != null) {
                messages.add(operationMessage(op.response(), "Response of " + op.name() + "."));
                response = op.response().name();
            } else {
                helpers.add(EMPTY);
                response = EMPTY;
            }
            if (op.fault() != null) {
                messages.add(operationMessage(op.fault(), "Declared fault of " + op.name()
                        + ": sent in the details of the call's status, as google.protobuf.Any."));
            }
            List<String> comment = new ArrayList<>();
            comment.add(op.name() + (op.oneWay() ? ": one-way; the response is Empty, sent once the operation has run"
                    : op.idempotent() ? ": idempotent, may be repeated" : ""));
            if (op.fault() != null) {
                comment.add("declared fault: " + op.fault().name() + " in the status details");
            }
            boolean streams = ProtoSchemas.streams(model, op);
            comment.add(streams ? "streams: request and response as partial messages, merged in order"
                    : "unary: request and response are one message each");
            methods.add(new Method(op.name(), comment, op.request().name(), response, streams, streams));
        }
        checkNames(messages);
        messages.addAll(helperMessages());
        String component = model.componentName();
        List<String> header = new ArrayList<>();
        header.add("Component " + component + ", namespace " + model.targetNamespace() + ", over gRPC.");
        header.add("");
        header.addAll(CONVENTION);
        return new ProtoFile(ProtoSchemas.fileName(component), ProtoSchemas.protoPackage(component), header, messages,
                new Service(component, List.of(), methods));
    }

    private static List<String> typeComment(ComplexTypeModel t) {
        if (t.recursive()) {
            return List.of("A linked type: its values are entries of the node table of the operation message that"
                    + " holds them; " + t.name() + " fields hold node numbers.");
        }
        return t.ndArray() ? List.of("An n-dimensional array: shape, then values in row-major order.") : List.of();
    }

    /** An operation message: its fields, and the node table when it reaches linked types. */
    private Message operationMessage(ComplexTypeModel message, String comment) {
        List<String> nodeTypes = linkedTypesReachableFrom(message);
        List<Field> extra = new ArrayList<>();
        List<Message> nested = new ArrayList<>();
        if (nodeTypes.size() == 1) {
            extra.add(Field.message(NODES_FIELD, NODES_NUMBER, nodeTypes.get(0), Label.REPEATED,
                    "the node table: node number n is entry n - 1"));
        } else if (nodeTypes.size() > 1) {
            List<Field> members = new ArrayList<>();
            for (int i = 0; i < nodeTypes.size(); i++) {
                members.add(Field.message(lowerFirst(nodeTypes.get(i)), i + 1, nodeTypes.get(i), Label.IMPLICIT));
            }
            nested.add(Message.oneof(NODE, List.of("One linked value, of one of the types this message reaches."),
                    "node", members));
            extra.add(Field.message(NODES_FIELD, NODES_NUMBER, message.name() + "." + NODE, Label.REPEATED,
                    "the node table: node number n is entry n - 1"));
        }
        return struct(message, List.of(comment), extra, nested);
    }

    private Message struct(ComplexTypeModel type, List<String> comment, List<Field> extra, List<Message> nested) {
        if (type.fields().size() > MAX_SCHEMA_FIELDS) {
            throw new IllegalArgumentException(type.name() + " has " + type.fields().size() + " fields; protobuf numbering"
                    + " leaves room for " + MAX_SCHEMA_FIELDS);
        }
        List<Field> fields = new ArrayList<>();
        boolean repeated = false;
        for (int i = 0; i < type.fields().size(); i++) {
            FieldModel f = type.fields().get(i);
            if (f.name().equals(NODES_FIELD) || f.name().equals(NULLS_FIELD)) {
                throw new IllegalArgumentException(type.name() + ": the field name " + f.name() + " is reserved");
            }
            Field field = field(f, i + 1);
            repeated |= field.label() == Label.REPEATED;
            fields.add(field);
        }
        fields.addAll(extra);
        if (repeated) {
            helpers.add(NULLS);
            fields.add(Field.message(NULLS_FIELD, NULLS_NUMBER, NULLS, Label.IMPLICIT,
                    "null repeated fields and null elements; absent when there are none"));
        }
        return new Message(type.name(), comment, fields, List.of(), nested);
    }

    private Field field(FieldModel f, int number) {
        if (f.graphReference()) {
            return Field.of(f.name(), number, Type.UINT32, f.repeated() ? Label.REPEATED : Label.IMPLICIT,
                    "node number" + (f.repeated() ? "s" : "") + " in the node table, 0 = null");
        }
        if (f.complexType() != null) {
            return Field.message(f.name(), number, f.complexType(), f.repeated() ? Label.REPEATED : Label.IMPLICIT);
        }
        if (f.repeated()) {
            return switch (f.scalar()) {
                case BYTE -> Field.of(f.name(), number, Type.BYTES, Label.OPTIONAL, "signed bytes, one per element");
                case BOOLEAN -> Field.of(f.name(), number, Type.BOOL, Label.REPEATED);
                case SHORT, INT -> Field.of(f.name(), number, Type.SFIXED32, Label.REPEATED);
                case LONG -> Field.of(f.name(), number, Type.SFIXED64, Label.REPEATED);
                case FLOAT -> Field.of(f.name(), number, Type.FLOAT, Label.REPEATED);
                case DOUBLE -> Field.of(f.name(), number, Type.DOUBLE, Label.REPEATED);
                case STRING -> Field.of(f.name(), number, Type.STRING, Label.REPEATED);
                case BYTES -> Field.of(f.name(), number, Type.BYTES, Label.REPEATED);
                case DATE_TIME -> dateTime(f.name(), number, Label.REPEATED);
            };
        }
        boolean absentDiffers = f.optional() || f.nillable() || !f.scalar().isPrimitive();
        return single(f, number, absentDiffers ? Label.OPTIONAL : Label.IMPLICIT);
    }

    /** A single scalar value; also an alternative of a heterogeneous list (then IMPLICIT, in the oneof). */
    private Field single(FieldModel f, int number, Label label) {
        return switch (f.scalar()) {
            case BOOLEAN -> Field.of(f.name(), number, Type.BOOL, label);
            case BYTE -> Field.of(f.name(), number, Type.INT32, label, "-128 to 127");
            case SHORT -> Field.of(f.name(), number, Type.INT32, label, "-32768 to 32767");
            case INT -> Field.of(f.name(), number, Type.INT32, label);
            case LONG -> Field.of(f.name(), number, Type.INT64, label);
            case FLOAT -> Field.of(f.name(), number, Type.FLOAT, label);
            case DOUBLE -> Field.of(f.name(), number, Type.DOUBLE, label);
            case STRING -> Field.of(f.name(), number, Type.STRING, label);
            case BYTES -> Field.of(f.name(), number, Type.BYTES, label);
            // a message field has presence of its own
            case DATE_TIME -> dateTime(f.name(), number, Label.IMPLICIT);
        };
    }

    private Field dateTime(String name, int number, Label label) {
        helpers.add(DATE_TIME);
        return Field.message(name, number, DATE_TIME, label);
    }

    private Message list(ComplexTypeModel list) {
        List<Field> alternatives = new ArrayList<>();
        for (int i = 0; i < list.fields().size(); i++) {
            FieldModel a = list.fields().get(i);
            alternatives.add(a.isScalar() ? single(a, i + 1, Label.IMPLICIT)
                    : Field.message(a.name(), i + 1, a.complexType(), Label.IMPLICIT));
        }
        Message element = Message.oneof(LIST_ELEMENT, List.of("One element: exactly one alternative is set."),
                LIST_ONEOF, alternatives);
        return new Message(list.name(), List.of("A heterogeneous list."),
                List.of(Field.message(LIST_ELEMENTS_FIELD, 1, list.name() + "." + LIST_ELEMENT, Label.REPEATED)),
                List.of(), List.of(element));
    }

    private List<Message> helperMessages() {
        List<Message> result = new ArrayList<>();
        if (helpers.contains(DATE_TIME)) {
            result.add(new Message(DATE_TIME, List.of("An instant and the UTC offset it was written with."), List.of(
                    Field.of("seconds", 1, Type.INT64, Label.IMPLICIT, "seconds since 1970-01-01T00:00:00Z"),
                    Field.of("nanos", 2, Type.INT32, Label.IMPLICIT, "0 to 999,999,999"),
                    Field.of("offset_seconds", 3, Type.INT32, Label.IMPLICIT, "the offset from UTC, -64800 to 64800"))));
        }
        if (helpers.contains(NULLS)) {
            Message elements = new Message("Elements", List.of("The null elements of one repeated field."), List.of(
                    Field.of("field", 1, Type.INT32, Label.IMPLICIT, "the repeated field's number"),
                    Field.of("positions", 2, Type.INT32, Label.REPEATED, "positions from 0 in the whole list")));
            result.add(new Message(NULLS, List.of("What protobuf cannot say of repeated fields: null, not empty."), List.of(
                    Field.of("lists", 1, Type.INT32, Label.REPEATED, "numbers of repeated fields that are null"),
                    Field.message("elements", 2, NULLS + ".Elements", Label.REPEATED)), List.of(), List.of(elements)));
        }
        if (helpers.contains(EMPTY)) {
            result.add(new Message(EMPTY, List.of("The response of a one-way operation: nothing."), List.of()));
        }
        return result;
    }

    private void checkNames(List<Message> messages) {
        for (Message m : messages) {
            if (helpers.contains(m.name())) {
                throw new IllegalArgumentException("the schema name " + m.name() + " is the name of a message every"
                        + " typed .proto that needs it declares; rename it");
            }
        }
    }

    /** Linked types a value of {@code type} may hold, directly or through structs, in schema order. */
    private List<String> linkedTypesReachableFrom(ComplexTypeModel type) {
        Set<String> visited = new LinkedHashSet<>();
        Set<String> found = new LinkedHashSet<>();
        ArrayDeque<ComplexTypeModel> work = new ArrayDeque<>();
        work.add(type);
        while (!work.isEmpty()) {
            for (FieldModel f : work.poll().fields()) {
                if (f.complexType() != null && visited.add(f.complexType())) {
                    ComplexTypeModel target = model.type(f.complexType());
                    if (target.recursive()) {
                        found.add(target.name());
                    }
                    work.add(target);
                }
            }
        }
        return model.types().keySet().stream().filter(found::contains).toList();
    }

    private static String lowerFirst(String s) {
        return Character.toLowerCase(s.charAt(0)) + s.substring(1);
    }
}

package io.switchboard.codec.documents;

import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.codec.proto.ProtoFile;
import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.codec.proto.ProtoText;
import io.switchboard.idl.SchemaException;
import java.util.List;

/**
 * Writes the {@code .proto} of a component: the typed protobuf messages and service of
 * {@link ProtoSchemas#typed} (what the gRPC protocol speaks), with comments that say, field by
 * field, what protobuf itself cannot: which values may be null, the schema's own number types,
 * which fields are references into the node table. Enough for a client in another language to
 * call the component with protoc's output alone.
 */
final class ProtoWriter {
    private final InterfaceModel model;
    private final String origin;

    ProtoWriter(InterfaceModel model, String origin) {
        this.model = model;
        this.origin = origin;
    }

    /**
     * The component's {@code .proto}: every value as ordinary protobuf, the convention stated at its
     * top. Its comments also list each type's fields in schema order with what protobuf cannot say
     * (which values may be null, which numbers are bytes or shorts, which fields are references),
     * and the same above each rpc for its messages, in the notation peers read
     * ({@code name KIND|NULL}, {@code REF Type}, {@code STRUCT Type}, {@code LIST<...>}).
     */
    String write() {
        ProtoFile file;
        try {
            file = ProtoSchemas.typed(model);
        } catch (IllegalArgumentException e) {
            throw new SchemaException(e.getMessage());
        }
        String text = ProtoText.write(file, origin + ". Do not edit.");
        StringBuilder types = new StringBuilder("//\n");
        line(types, "Schema types, fields in schema order (what each field may hold):");
        List<ComplexTypeModel> nodes = model.types().values().stream().filter(ComplexTypeModel::recursive).toList();
        for (int i = 0; i < nodes.size(); i++) {
            line(types, "  node type " + i + " = " + nodes.get(i).name());
        }
        for (ComplexTypeModel t : model.types().values()) {
            if (t.heterogeneousList()) {
                StringBuilder alternatives = new StringBuilder();
                for (int i = 0; i < t.fields().size(); i++) {
                    FieldModel a = t.fields().get(i);
                    alternatives.append(i == 0 ? " " : ", ").append(i).append('=').append(a.name()).append(' ')
                            .append(a.isScalar() ? scalarKind(a) : kind(a).replace("|NULL", ""));
                }
                line(types, "  list " + t.name() + ": CHOICES of" + alternatives);
                continue;
            }
            describe(types, "  " + (t.recursive() ? "node " : "struct ") + t.name(), t);
        }
        int syntax = text.indexOf("\nsyntax = ");
        StringBuilder out = new StringBuilder(text.substring(0, syntax)).append(types).append(text.substring(syntax));
        for (OperationModel op : model.operations()) {
            StringBuilder lines = new StringBuilder();
            describe(lines, "  //   request " + op.request().name(), op.request());
            if (op.response() != null) {
                describe(lines, "  //   response " + op.response().name(), op.response());
            }
            if (op.fault() != null) {
                describe(lines, "  //   declared fault " + op.fault().name(), op.fault());
            }
            int rpc = out.indexOf("  rpc " + op.name() + "(");
            out.insert(rpc, lines);
        }
        return out.toString();
    }

    private static void line(StringBuilder p, String text) {
        p.append(text.isEmpty() ? "//" : "// " + text).append('\n');
    }

    private void describe(StringBuilder p, String head, ComplexTypeModel type) {
        String prefix = head.startsWith("  //") ? "" : "// ";
        StringBuilder s = new StringBuilder(prefix).append(head).append(':');
        if (type.fields().isEmpty()) {
            s.append(" no fields");
        }
        for (int i = 0; i < type.fields().size(); i++) {
            FieldModel f = type.fields().get(i);
            s.append(i == 0 ? " " : ", ").append(f.name()).append(' ').append(kind(f));
        }
        p.append(s).append('\n');
    }

    private String kind(FieldModel f) {
        String one;
        if (f.graphReference()) {
            one = "REF " + f.complexType();
        } else if (f.complexType() != null && model.type(f.complexType()).heterogeneousList()) {
            one = "CHOICES " + f.complexType();
        } else if (f.complexType() != null) {
            one = "STRUCT " + f.complexType();
        } else if (f.repeated() && f.scalar().isPrimitive()) {
            return "PACKED_" + scalarKind(f) + "|NULL";
        } else {
            one = scalarKind(f);
        }
        boolean nullable = f.repeated() || f.complexType() != null || !requiredPrimitive(f);
        if (f.repeated()) {
            return "LIST<" + one + "|NULL>|NULL";
        }
        return nullable ? one + "|NULL" : one;
    }

    /** A single number or boolean that is neither optional nor nillable: never null, a primitive in generated beans. */
    private static boolean requiredPrimitive(FieldModel f) {
        return f.isScalar() && !f.repeated() && f.scalar().isPrimitive() && !f.optional() && !f.nillable();
    }

    /** The schema's own number type of a scalar, in the comments' notation ({@code INT}, {@code DOUBLE}, ...). */
    private static String scalarKind(FieldModel f) {
        return switch (f.scalar()) {
            case BOOLEAN -> "BOOL";
            case BYTE -> "BYTE";
            case SHORT -> "SHORT";
            case INT -> "INT";
            case LONG -> "LONG";
            case FLOAT -> "FLOAT";
            case DOUBLE -> "DOUBLE";
            case STRING -> "STRING";
            case BYTES -> "BYTES";
            case DATE_TIME -> "DATE_TIME";
        };
    }
}

package io.switchboard.codec.proto;

import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;

/** The {@code .proto} files of a component interface, as {@link ProtoFile} values. */
public final class ProtoSchemas {
    private ProtoSchemas() {
    }

    /** Package of a component's {@code .proto}: {@code switchboard.} and the lower-case name. */
    public static String protoPackage(String componentName) {
        return "switchboard." + componentName.toLowerCase(java.util.Locale.ROOT);
    }

    /** The full name of a component's service, as its {@code .proto} declares it (gRPC's service name). */
    public static String serviceName(String componentName) {
        return protoPackage(componentName) + "." + componentName;
    }

    /** The file name of a component's {@code .proto}: its name and {@code .proto}. */
    public static String fileName(String componentName) {
        return componentName + ".proto";
    }

    /**
     * The typed file: a protobuf message per type and operation message, one service whose methods
     * carry those messages (unary, or streamed in parts: {@link #streams}); what a client in any language generates its code from. Its first
     * comment lines state the convention.
     *
     * @throws IllegalArgumentException when a schema name collides with a name the convention uses
     */
    public static ProtoFile typed(InterfaceModel model) {
        return TypedProto.of(model);
    }

    /**
     * Whether an operation's gRPC method streams partial messages (bidirectional) rather than
     * being unary: when its request or response can grow without a bound the schema sets, that is
     * when it reaches a repeated field, a heterogeneous list or a linked type. Other messages are a
     * fixed number of fields (strings and bytes held to the reader's string limit), one part
     * always, and a unary call costs less. The typed {@code .proto} declares the methods so, and
     * every codec and peer follows it.
     */
    public static boolean streams(InterfaceModel model, OperationModel op) {
        return unbounded(model, op.request(), new java.util.HashSet<>())
                || op.response() != null && unbounded(model, op.response(), new java.util.HashSet<>());
    }

    private static boolean unbounded(InterfaceModel model, io.switchboard.idl.ComplexTypeModel type,
                                     java.util.Set<String> seen) {
        if (type.recursive() || type.heterogeneousList() || !seen.add(type.name())) {
            return true;
        }
        for (io.switchboard.idl.FieldModel f : type.fields()) {
            if (f.repeated() || f.graphReference()
                    || f.complexType() != null && unbounded(model, model.type(f.complexType()), seen)) {
                return true;
            }
        }
        return false;
    }
}

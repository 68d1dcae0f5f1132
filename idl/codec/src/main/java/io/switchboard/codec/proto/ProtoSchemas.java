package io.switchboard.codec.proto;

import io.switchboard.codec.binary.WireFormat;
import io.switchboard.codec.proto.ProtoFile.Field;
import io.switchboard.codec.proto.ProtoFile.Label;
import io.switchboard.codec.proto.ProtoFile.Message;
import io.switchboard.codec.proto.ProtoFile.Method;
import io.switchboard.codec.proto.ProtoFile.Service;
import io.switchboard.codec.proto.ProtoFile.Type;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import java.util.ArrayList;
import java.util.List;

/** The {@code .proto} files of a component interface, as {@link ProtoFile} values. */
public final class ProtoSchemas {
    /** The message every operation of the chunked wire streams in both directions. */
    public static final String CHUNK = "Chunk";

    private ProtoSchemas() {
    }

    /** The file name of a component's {@code .proto}: its name and {@code .proto}. */
    public static String fileName(String componentName) {
        return componentName + ".proto";
    }

    /**
     * The typed file: a protobuf message per type and operation message, one service whose methods
     * stream those messages; what a client in any language generates its code from. Its first
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

    /**
     * The gRPC service the server speaks today: one bidirectional stream of {@code Chunk}s per
     * operation, the values in the packed binary format inside the chunks' bytes. The compiler's
     * published text says the same with the layout in comments.
     */
    public static ProtoFile chunked(InterfaceModel model) {
        String component = model.componentName();
        Message chunk = new Message(CHUNK, List.of("One piece of a request or response message."), List.of(
                Field.of("data", 1, Type.BYTES, Label.IMPLICIT, "the next bytes of the message"),
                Field.of("offset", 2, Type.UINT64, Label.IMPLICIT,
                        "byte offset of `data` within the whole message: 0, then previous offset + previous data length"),
                Field.of("total", 3, Type.UINT64, Label.IMPLICIT,
                        "first chunk only: the length of the whole message in bytes")));
        List<Method> methods = new ArrayList<>();
        for (OperationModel op : model.operations()) {
            methods.add(new Method(op.name(), List.of(op.name() + (op.oneWay() ? " (one-way: the response is empty)"
                    : op.idempotent() ? " (idempotent)" : "")), CHUNK, CHUNK, true, true));
        }
        return new ProtoFile(fileName(component), WireFormat.protoPackage(component),
                List.of("Component " + component + " over gRPC: the chunked packed binary wire."),
                List.of(chunk), new Service(component, List.of(), methods));
    }
}

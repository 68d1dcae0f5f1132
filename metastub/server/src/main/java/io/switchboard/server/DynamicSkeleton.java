package io.switchboard.server;

import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.dynamic.DynamicType;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Skeleton;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Serves a component from its interface schema alone: the server side of {@code DynamicStub}.
 * Requests arrive as {@link DynamicRecord}s, decoded from exactly the bytes a generated stub
 * sends, and go to a {@link DynamicHandler}; its answers go back in exactly the bytes a generated
 * skeleton sends. {@link ComponentServer#export} serves it on every protocol and binds it with the
 * schema, WSDL and {@code .proto} a compiled component publishes, so generated stubs and dynamic
 * ones call it alike.
 *
 * <p>An answer of the wrong type or shape, an exception other than {@link DynamicFault}, or a
 * {@code DynamicFault} the operation does not declare fails that one call as an exception thrown
 * by a generated implementation does (an {@link IllegalStateException} naming the component and
 * operation), and the server goes on serving.
 *
 * <pre>{@code
 * DynamicInterface iface = DynamicInterface.fromSchema(Path.of("echo.xsd"));   // the secure reader, with its limits
 * try (ComponentServer server = ComponentServer.builder().registry(registryUrl, secret).build()) {
 *     server.export(DynamicSkeleton.of(iface, (operation, request) -> switch (operation) {
 *         case "echoDoubles" -> request.get("values");
 *         case "echoList" -> request.get("head");
 *         default -> null;
 *     }));
 * }
 * }</pre>
 */
public final class DynamicSkeleton implements Skeleton {
    private final DynamicInterface iface;
    private final DynamicHandler handler;

    private DynamicSkeleton(DynamicInterface iface, DynamicHandler handler) {
        this.iface = Objects.requireNonNull(iface, "iface");
        this.handler = Objects.requireNonNull(handler, "handler");
    }

    /** The component {@code iface} describes, each of its operations run by {@code handler}. */
    public static DynamicSkeleton of(DynamicInterface iface, DynamicHandler handler) {
        return new DynamicSkeleton(iface, handler);
    }

    public DynamicInterface dynamicInterface() {
        return iface;
    }

    @Override
    public ServiceDescriptor descriptor() {
        return iface.descriptor();
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request) throws DeclaredFault {
        OperationModel op = operation.model();
        Object answer;
        try {
            answer = handler.handle(op.name(), (DynamicRecord) request);
        } catch (DynamicFault fault) {
            throw declared(op, fault);
        } catch (RuntimeException | Error e) {
            throw e;   // as from a generated implementation: the protocols send it as the call's error
        } catch (Exception e) {
            // only a sneaky throw gets here; sent as an error like any other undeclared exception
            throw new IllegalStateException(where(op) + " failed: " + e, e);
        }
        return op.oneWay() ? oneWayAnswer(op, answer) : response(op, answer);
    }

    private DynamicFault declared(OperationModel op, DynamicFault fault) {
        DynamicRecord info = fault.faultInfo();
        String raised = info == null ? "no fault record" : info.type().name();
        if (op.fault() == null) {
            throw new IllegalStateException(where(op) + " declares no fault, but the handler raised a DynamicFault of "
                    + raised, fault);
        }
        if (info == null || info.type() != iface.message(op.fault().name())) {
            throw new IllegalStateException(where(op) + " declares " + op.fault().name()
                    + ", but the handler raised a DynamicFault of " + raised, fault);
        }
        try {
            info.type().checkRequired(info);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where(op) + ": the handler's fault is incomplete: " + e.getMessage(), fault);
        }
        return fault;
    }

    private Object oneWayAnswer(OperationModel op, Object answer) {
        if (answer != null) {
            throw new IllegalStateException(where(op) + " is one-way: the handler must answer null, not "
                    + describe(answer));
        }
        return null;
    }

    private DynamicRecord response(OperationModel op, Object answer) {
        DynamicType type = iface.message(op.response().name());
        DynamicRecord response;
        try {
            response = toResponse(type, answer);
            type.checkRequired(response);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where(op) + ": the handler's answer (" + describe(answer) + ") does not fit "
                    + type.name() + ": " + e.getMessage(), e);
        }
        return response;
    }

    /** The reverse of what {@code DynamicStub.call} answers: see {@link DynamicHandler}. */
    private static DynamicRecord toResponse(DynamicType type, Object answer) {
        if (answer instanceof DynamicRecord r && r.type() == type) {
            return r;
        }
        if (answer == null || answer instanceof Map<?, ?>) {
            @SuppressWarnings("unchecked")
            Map<String, ?> fields = (Map<String, ?>) answer;
            return type.newRecord(fields);
        }
        List<String> fields = type.fieldNames();
        if (fields.size() != 1) {
            throw new IllegalArgumentException(type.name() + " has " + fields.size() + " fields " + fields
                    + ": answer a DynamicRecord of " + type.name() + " or a Map of its fields");
        }
        return type.newRecord(Collections.singletonMap(fields.get(0), answer));
    }

    private String where(OperationModel op) {
        return iface.model().componentName() + "." + op.name();
    }

    private static String describe(Object answer) {
        if (answer == null) {
            return "null";
        }
        return answer instanceof DynamicRecord r ? "a DynamicRecord of " + r.type().name()
                : "a " + answer.getClass().getSimpleName();
    }

    @Override
    public String toString() {
        return "DynamicSkeleton[" + iface.model().componentName() + "]";
    }
}

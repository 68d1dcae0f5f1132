package io.switchboard.client;

import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.dynamic.DynamicType;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Calls a component without generated code: operations by name, arguments by field name, over any
 * {@link Channel} (a meta-stub, so that each call picks its protocol and falls back like a
 * generated stub's; or one transport). The messages are {@link DynamicRecord}s and travel in
 * exactly the bytes a generated stub sends.
 *
 * <p>Arguments take the Java types generated beans use ({@code double[]} for a repeated double,
 * {@code Long} for {@code xs:long}, {@code List} for other repeated values); a complex argument
 * may be a {@code Map} of its fields or a {@link DynamicRecord} (needed for shared nodes and
 * cycles); a heterogeneous list is a {@link DynamicList} ({@link #newList}). What {@link #call} answers: the response's only field when it has one (as a generated
 * stub returns it), null when it has none, the whole response record otherwise. A declared fault
 * is thrown as {@link io.switchboard.codec.dynamic.DynamicFault}; an unknown operation or
 * field, a missing required value or a value of the wrong type is an
 * {@link IllegalArgumentException} that names it, before anything is sent.
 *
 * <pre>{@code
 * try (Switchboard sb = Switchboard.connect(registryUrl)) {
 *     DynamicStub echo = sb.dynamic("Echo");                       // schema from the registry entry
 *     double[] back = (double[]) echo.call("echoDoubles", Map.of("values", new double[] {1, -0.0, Double.NaN}));
 *     DynamicRecord head = echo.newRecord("LinkEntry").set("llong", 1L).set("sshort", (short) 2)
 *             .set("iint", 3).set("ffloat", 4f).set("ddouble", 5.0);
 *     head.set("nextLink", head);                                     // a cycle survives
 *     DynamicRecord same = (DynamicRecord) echo.call("echoList", Map.of("head", head));
 *     echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, "grpc")).call("empty", Map.of());
 * }
 * }</pre>
 */
public final class DynamicStub {
    private final DynamicInterface iface;
    private final Channel channel;
    private final CallOptions options;

    public DynamicStub(DynamicInterface iface, Channel channel) {
        this(iface, channel, CallOptions.DEFAULT);
    }

    private DynamicStub(DynamicInterface iface, Channel channel, CallOptions options) {
        this.iface = Objects.requireNonNull(iface, "iface");
        this.channel = Objects.requireNonNull(channel, "channel");
        this.options = Objects.requireNonNull(options, "options");
    }

    /** The same stub with these options on every call (a pinned protocol, a policy, a deadline). */
    public DynamicStub withOptions(CallOptions newOptions) {
        return new DynamicStub(iface, channel, newOptions);
    }

    public DynamicInterface dynamicInterface() {
        return iface;
    }

    public ServiceDescriptor descriptor() {
        return iface.descriptor();
    }

    /** The operations' names, in schema order. */
    public List<String> operations() {
        return iface.model().operations().stream().map(OperationModel::name).toList();
    }

    /** A new, empty record of a named complex type of the interface. */
    public DynamicRecord newRecord(String type) {
        return iface.type(type).newRecord();
    }

    /**
     * A new heterogeneous list of a list type of the interface ({@code xs:choice} list) holding
     * {@code items}; each item is one alternative (see {@link DynamicList}).
     */
    public DynamicList newList(String type, Object... items) {
        return iface.type(type).newList(items);
    }

    /**
     * Calls {@code operation} with the request fields in {@code arguments}; see the class comment
     * for what it answers.
     *
     * @throws IllegalArgumentException no such operation or field, a required value missing, a value of the wrong type
     * @throws DeclaredFault the operation's declared fault ({@link io.switchboard.codec.dynamic.DynamicFault})
     * @throws io.switchboard.protocol.SwitchboardException transport failures, remote errors, refusals, as for generated stubs
     */
    public Object call(String operation, Map<String, ?> arguments) throws DeclaredFault {
        DynamicRecord response = callForRecord(operation, arguments);
        if (response == null) {
            return null;
        }
        List<String> fields = response.type().fieldNames();
        return switch (fields.size()) {
            case 0 -> null;
            case 1 -> response.get(fields.get(0));
            default -> response;
        };
    }

    /** Like {@link #call}, but answers the whole response record (null for a one-way operation). */
    public DynamicRecord callForRecord(String operation, Map<String, ?> arguments) throws DeclaredFault {
        OperationDescriptor op = operation(operation);
        DynamicType type = iface.message(operation);
        DynamicRecord request = type.newRecord(arguments);
        type.checkRequired(request);
        return (DynamicRecord) channel.call(op, request, options);
    }

    /** Calls with a request record made beforehand ({@code dynamicInterface().request(op)}). */
    public DynamicRecord call(DynamicRecord request) throws DeclaredFault {
        String operation = request.type().name();
        OperationDescriptor op = operation(operation);
        if (request.type() != iface.message(operation)) {
            throw new IllegalArgumentException(request.type().name() + " is not a request of " + iface.model().componentName());
        }
        request.type().checkRequired(request);
        return (DynamicRecord) channel.call(op, request, options);
    }

    private OperationDescriptor operation(String operation) {
        if (operation == null || !iface.descriptor().hasOperation(operation)) {
            throw new IllegalArgumentException(iface.model().componentName() + " has no operation '" + operation
                    + "'; its operations are " + operations());
        }
        return iface.descriptor().operation(operation);
    }

    @Override
    public String toString() {
        return "DynamicStub[" + iface.model().componentName() + " over " + channel + "]";
    }

}

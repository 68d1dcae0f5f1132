package io.switchboard.server.authz;

import io.switchboard.codec.proto.ProtoSchemas;
import io.switchboard.protocol.ServerCall;
import java.util.List;

/**
 * The path a policy matches a call on. By default ({@link #COMPONENT}) the gRPC method name the
 * component's {@code .proto} declares, the same on every protocol:
 * {@code /switchboard.echo.Echo/echoDoubles}. A server whose operations act on named things (the
 * registry) adds the name, so that a rule can match it. API.
 *
 * <pre>{@code
 * CallPaths byAccount = call -> CallPaths.COMPONENT.path(call) + "/" + ((Deposit) call.request()).getAccount();
 * }</pre>
 */
@FunctionalInterface
public interface CallPaths {
    /** {@code /<package>.<Service>/<operation>}, as gRPC names the component's method. */
    CallPaths COMPONENT = call -> of(call.descriptor().name(), call.operation().name());

    /** The path of {@code call}; never null. */
    String path(ServerCall call);

    /**
     * Every path {@code call} touches, each of which the policy must allow (a registry watch of
     * several names is one path per name); by default {@link #path}.
     */
    default List<String> paths(ServerCall call) {
        return List.of(path(call));
    }

    /** {@code /<package>.<Service>/<operation>} of the interface {@code component}. */
    static String of(String component, String operation) {
        return "/" + ProtoSchemas.serviceName(component) + "/" + operation;
    }
}

package io.switchboard.cli;

import io.switchboard.client.DynamicStub;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * What {@code call} and {@code load} share: the component and operation named in the registry,
 * the request's fields as FIELD=VALUE, and the options every call carries (a pinned protocol or a
 * policy, a deadline).
 */
final class CallTarget {
    @Parameters(index = "0", description = "The component's name in the registry.")
    String name;

    @Parameters(index = "1", description = "The operation.")
    String operation;

    @Parameters(index = "2..*", arity = "0..*", description = "Request fields as FIELD=VALUE; arrays as space-separated lists.")
    List<String> fields = new ArrayList<>();

    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint.")
    String registry;

    @Option(names = "--protocol", description = "Pin the protocol of the call (soap, grpc, tcp, ...).")
    String protocol;

    @Option(names = "--policy", defaultValue = "adaptive", description = "The selection policy, by name: "
            + "adaptive (default), size[:BYTES], first-common, fixed:PROTOCOL, or one a jar on the class path adds.")
    String policy;

    @Option(names = "--deadline", paramLabel = "MS", description = "The call's deadline, every attempt included "
            + "(it travels to the component and to the calls it makes); past it: DeadlineExceededException.")
    Long deadlineMillis;

    /** The options of every call: the pinned protocol, the deadline. */
    CallOptions options() {
        CallOptions options = CallOptions.DEFAULT;
        if (protocol != null) {
            options = options.with(MetaStub.PROTOCOL, protocol);
        }
        if (deadlineMillis != null) {
            if (deadlineMillis <= 0) {
                throw new IllegalArgumentException("--deadline must be positive");
            }
            options = options.withDeadlineAfter(Duration.ofMillis(deadlineMillis));
        }
        return options;
    }

    /** Null when the operation and fields can make a request of {@code stub}, else what is wrong. */
    String problem(DynamicStub stub) {
        if (!stub.operations().contains(operation)) {
            return name + " has no operation '" + operation + "'; its operations are " + stub.operations();
        }
        for (String f : fields) {
            if (f.indexOf('=') <= 0) {
                return "expected FIELD=VALUE, got '" + f + "'";
            }
        }
        return null;
    }

    /** A new request record of the operation with the fields (as on the SOAP wire); one per thread. */
    DynamicRecord request(DynamicStub stub) {
        DynamicRecord request = stub.dynamicInterface().request(operation);
        for (String f : fields) {
            int eq = f.indexOf('=');
            request.setText(f.substring(0, eq), f.substring(eq + 1));
        }
        return request;
    }
}

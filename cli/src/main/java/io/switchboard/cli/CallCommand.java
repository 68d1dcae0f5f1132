package io.switchboard.cli;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.metastub.CallRecord;
import io.switchboard.metastub.Policies;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.client.DynamicStub;
import io.switchboard.client.Switchboard;
import java.lang.reflect.Array;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code ./switchboard call NAME OPERATION [FIELD=VALUE ...]}: calls an operation of a component
 * found in the registry, with no generated code: the interface schema comes from the registry
 * entry. Values are written as on the SOAP wire ({@code values="1.5 -0.0 NaN INF"}); the answer,
 * the protocol the meta-stub chose and the bytes on the wire are printed.
 */
@Command(name = "call", mixinStandardHelpOptions = true,
        description = "Call an operation by name, without generated code (the schema comes from the registry).")
final class CallCommand implements Callable<Integer> {
    @Mixin
    CallTarget target = new CallTarget();

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Mixin
    TokenOptions.Caller token = new TokenOptions.Caller();

    @Override
    public Integer call() {
        List<CallRecord> records = new CopyOnWriteArrayList<>();
        SelectionPolicy selection = Policies.byName(target.policy);
        try (Switchboard sb = Switchboard.builder(target.registry).policy(selection).listener(records::add).follow(false)
                .settings(token.client(tls.client())).connect()) {
            DynamicStub stub = sb.dynamic(target.name).withOptions(target.options());
            String problem = target.problem(stub);
            if (problem != null) {
                System.err.println(problem);
                return 2;
            }
            DynamicRecord request = target.request(stub);
            int status = 0;
            try {
                DynamicRecord response = stub.call(request);
                if (response != null) {
                    response.toMap().forEach((k, v) -> System.out.println(k + " = " + show(v)));
                }
            } catch (DeclaredFault fault) {
                System.out.println("declared fault " + target.operation + "Fault:");
                ((DynamicFault) fault).faultInfo().toMap().forEach((k, v) -> System.out.println("  " + k + " = " + show(v)));
                status = 4;
            }
            for (CallRecord r : records) {
                // the way, where the protocol has more than one: tcp over the Unix socket says "via unix"
                System.err.println("# " + r.protocol() + (r.via() == null ? "" : " via " + r.via()) + " (" + r.reason()
                        + "), " + r.requestWireBytes() + " bytes sent, "
                        + r.responseWireBytes() + " received, " + r.latency().toNanos() / 1000 + " µs");
            }
            return status;
        }
    }

    /** Arrays element by element (at most 20 shown), records by their fields. */
    private static String show(Object v) {
        if (v == null || !v.getClass().isArray() || v instanceof byte[]) {
            return v instanceof byte[] b ? java.util.Base64.getEncoder().encodeToString(b) : String.valueOf(v);
        }
        int n = Array.getLength(v);
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < Math.min(n, 20); i++) {
            s.append(i == 0 ? "" : ", ").append(Array.get(v, i));
        }
        return s.append(n > 20 ? ", ... (" + n + " values)]" : "]").toString();
    }
}

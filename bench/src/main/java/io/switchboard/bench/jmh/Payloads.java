package io.switchboard.bench.jmh;

import io.switchboard.components.echo.EchoDoubles;
import io.switchboard.components.echo.EchoList;
import io.switchboard.components.echo.Empty;
import io.switchboard.bench.Payload;
import io.switchboard.bench.Workload;

/**
 * The SC2000 payloads as the micro-benchmarks name them ({@code empty}, {@code doubles:N},
 * {@code list:N}): the echo component's request bean and, for Java serialization, the same data
 * as plain {@link java.io.Serializable} values. The values are those of {@code ./switchboard bench}.
 */
final class Payloads {
    private Payloads() {
    }

    /** One request: the echo operation, its request bean and the same data for Java serialization. */
    record Message(String operation, Object request, Object javaValue, int size) {
    }

    static Message message(String payload) {
        if ("empty".equals(payload)) {
            return new Message("empty", new Empty(), new double[0], 0);
        }
        int colon = payload.indexOf(':');
        String kind = colon < 0 ? "" : payload.substring(0, colon);
        switch (kind) {
            case "doubles": {
                int n = Integer.parseInt(payload.substring(colon + 1));
                double[] values = Payload.of(Workload.DOUBLES, n).doubles();
                EchoDoubles r = new EchoDoubles();
                r.setValues(values);
                return new Message("echoDoubles", r, values, n);
            }
            case "list": {
                int n = Integer.parseInt(payload.substring(colon + 1));
                Payload p = Payload.of(Workload.LIST, n);
                EchoList r = new EchoList();
                r.setHead(p.list());
                return new Message("echoList", r, p.javaList(), n);
            }
            default:
                throw new IllegalArgumentException("payload must be empty, doubles:N or list:N: " + payload);
        }
    }
}

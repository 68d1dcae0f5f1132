package io.switchboard.examples.jmh;

import io.switchboard.components.echo.EchoDoubles;
import io.switchboard.components.echo.EchoList;
import io.switchboard.components.echo.Empty;
import io.switchboard.components.echo.LinkEntry;
import io.switchboard.examples.bench.JavaLinkEntry;

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
                double[] values = doubles(n);
                EchoDoubles r = new EchoDoubles();
                r.setValues(values);
                return new Message("echoDoubles", r, values, n);
            }
            case "list": {
                int n = Integer.parseInt(payload.substring(colon + 1));
                EchoList r = new EchoList();
                r.setHead(list(n));
                return new Message("echoList", r, javaList(n), n);
            }
            default:
                throw new IllegalArgumentException("payload must be empty, doubles:N or list:N: " + payload);
        }
    }

    /** Values with full-precision text in XML, not small integers. */
    static double[] doubles(int n) {
        double[] values = new double[n];
        for (int i = 0; i < n; i++) {
            values[i] = i * 1.000001 - n / 3.0;
        }
        return values;
    }

    /** The study's list, built from the tail without recursion; 8-character strings make 34 payload bytes a node. */
    static LinkEntry list(int n) {
        LinkEntry head = null;
        for (int i = n - 1; i >= 0; i--) {
            LinkEntry e = new LinkEntry();
            e.setLlong(i * 1_000_003L);
            e.setSshort((short) i);
            e.setIint(i);
            e.setFfloat(i / 2f);
            e.setDdouble(i / 3.0);
            e.setSstring(string(i));
            e.setNextLink(head);
            head = e;
        }
        return head;
    }

    static JavaLinkEntry javaList(int n) {
        JavaLinkEntry head = null;
        for (int i = n - 1; i >= 0; i--) {
            JavaLinkEntry e = new JavaLinkEntry();
            e.llong = i * 1_000_003L;
            e.sshort = (short) i;
            e.iint = i;
            e.ffloat = i / 2f;
            e.ddouble = i / 3.0;
            e.sstring = string(i);
            e.nextLink = head;
            head = e;
        }
        return head;
    }

    private static String string(int i) {
        return Integer.toString(10_000_000 + i % 89_999_999);
    }
}

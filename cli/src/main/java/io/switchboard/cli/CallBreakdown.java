package io.switchboard.cli;

import io.switchboard.metastub.CallRecord;
import java.io.PrintStream;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Prints a demo stage's calls grouped by operation and protocol: how many, their payload, and why that protocol. */
final class CallBreakdown {
    private CallBreakdown() {
    }

    static void print(PrintStream out, String indent, Collection<CallRecord> records) {
        Map<String, List<CallRecord>> groups = new LinkedHashMap<>();
        for (CallRecord r : records) {
            groups.computeIfAbsent(r.operation() + " " + r.protocol(), k -> new java.util.ArrayList<>()).add(r);
        }
        groups.forEach((key, rs) -> out.printf("%s%-22s %-6s %4d call(s)  why: %s%n", indent, rs.get(0).operation(),
                rs.get(0).protocol(), rs.size(), rs.get(0).reason()));
    }
}

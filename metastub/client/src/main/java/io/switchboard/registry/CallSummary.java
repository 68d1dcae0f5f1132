package io.switchboard.registry;

import io.switchboard.registry.wire.CallStats;
import io.switchboard.registry.wire.CallStatsRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What one instance served, per operation and protocol, as its server counted it: the small,
 * bounded summary a component server sends with its lease renewals ({@link
 * RegistryClient#renew(String, String, java.time.Duration, CallSummary)}) and the registry's
 * console shows. The constructors refuse anything out of bounds, so a registry that reads one from
 * the wire ({@link #fromWire}) keeps only what it checked.
 *
 * @param uptimeSeconds how long the server has been counting
 * @param rows          one per operation and protocol that served a call; at most {@value #MAX_ROWS}
 */
public record CallSummary(long uptimeSeconds, List<Row> rows) {
    /** The most rows a summary holds: operations × protocols of one interface fit with room to spare. */
    public static final int MAX_ROWS = 256;
    /** A count or latency past this is not believed (about 292 years in microseconds). */
    static final long MAX_VALUE = Long.MAX_VALUE / 1000;
    private static final Pattern OPERATION = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,127}");
    private static final Pattern PROTOCOL = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    public CallSummary {
        check("uptimeSeconds", uptimeSeconds);
        Objects.requireNonNull(rows, "rows");
        if (rows.size() > MAX_ROWS) {
            throw new IllegalArgumentException("a call summary has at most " + MAX_ROWS + " rows, not " + rows.size());
        }
        rows = List.copyOf(rows);
    }

    /**
     * One operation on one protocol. Counts are since the server started; latencies (µs, null when
     * no call answered lately) are of the calls that answered without a fault in the last two
     * minutes or so.
     *
     * @param calls     every call that reached the operation, whatever its outcome (repeats included)
     * @param faults    answered with the operation's declared fault
     * @param errors    failed with an exception the operation did not declare
     * @param refusals  refused by the protocol before the operation ran (not among {@code calls})
     * @param repeats   a call id seen before: answered with the first outcome, not run again
     */
    public record Row(String operation, String protocol, long calls, long faults, long errors, long refusals,
                      long repeats, Long p50Micros, Long p90Micros, Long p99Micros, Long maxMicros) {
        public Row {
            if (operation == null || !OPERATION.matcher(operation).matches()) {
                throw new IllegalArgumentException("operation name " + shorten(operation) + " is not valid");
            }
            if (protocol == null || !PROTOCOL.matcher(protocol).matches()) {
                throw new IllegalArgumentException("protocol name " + shorten(protocol) + " is not valid");
            }
            check("calls", calls);
            check("faults", faults);
            check("errors", errors);
            check("refusals", refusals);
            check("repeats", repeats);
            if (faults + errors + repeats > calls) {
                throw new IllegalArgumentException(operation + "/" + protocol + ": faults, errors and repeats exceed calls");
            }
            checkLatency("p50Micros", p50Micros);
            checkLatency("p90Micros", p90Micros);
            checkLatency("p99Micros", p99Micros);
            checkLatency("maxMicros", maxMicros);
        }

        /** Calls that answered without a fault or error (repeats aside). */
        public long succeeded() {
            return calls - faults - errors - repeats;
        }
    }

    /** The row of {@code operation} on {@code protocol}, or null when it served no call. */
    public Row row(String operation, String protocol) {
        return rows.stream().filter(r -> r.operation.equals(operation) && r.protocol.equals(protocol)).findFirst()
                .orElse(null);
    }

    private static void check(String what, long value) {
        if (value < 0 || value > MAX_VALUE) {
            throw new IllegalArgumentException(what + " " + value + " is out of range");
        }
    }

    private static void checkLatency(String what, Long value) {
        if (value != null) {
            check(what, value);
        }
    }

    private static String shorten(String s) {
        return s == null ? "(missing)" : "'" + (s.length() <= 40 ? s : s.substring(0, 37) + "...") + "'";
    }

    /** The summary as the registry's wire carries it. */
    public static CallStats toWire(CallSummary s) {
        CallStats w = new CallStats();
        w.setUptimeSeconds(s.uptimeSeconds);
        List<CallStatsRow> rows = new ArrayList<>();
        for (Row r : s.rows) {
            CallStatsRow x = new CallStatsRow();
            x.setOperation(r.operation);
            x.setProtocol(r.protocol);
            x.setCalls(r.calls);
            x.setFaults(r.faults);
            x.setErrors(r.errors);
            x.setRefusals(r.refusals);
            x.setRepeats(r.repeats);
            x.setP50Micros(r.p50Micros);
            x.setP90Micros(r.p90Micros);
            x.setP99Micros(r.p99Micros);
            x.setMaxMicros(r.maxMicros);
            rows.add(x);
        }
        w.setRows(rows);
        return w;
    }

    /**
     * A summary read from the wire, checked: at most {@value #MAX_ROWS} rows, valid names, counts
     * and latencies in range, one row per operation and protocol.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static CallSummary fromWire(CallStats w) {
        if (w == null) {
            throw new IllegalArgumentException("the call figures are missing");
        }
        List<CallStatsRow> in = w.getRows() == null ? List.of() : w.getRows();
        if (in.size() > MAX_ROWS) {
            throw new IllegalArgumentException("a call summary has at most " + MAX_ROWS + " rows, not " + in.size());
        }
        List<Row> rows = new ArrayList<>(in.size());
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (CallStatsRow x : in) {
            if (x == null) {
                throw new IllegalArgumentException("a call summary row is missing");
            }
            Row r = new Row(x.getOperation(), x.getProtocol(), x.getCalls(), x.getFaults(), x.getErrors(),
                    x.getRefusals(), x.getRepeats(), x.getP50Micros(), x.getP90Micros(), x.getP99Micros(),
                    x.getMaxMicros());
            if (!seen.add(r.operation + "/" + r.protocol)) {
                throw new IllegalArgumentException("two rows for " + r.operation + " on " + r.protocol);
            }
            rows.add(r);
        }
        return new CallSummary(w.getUptimeSeconds(), rows);
    }
}

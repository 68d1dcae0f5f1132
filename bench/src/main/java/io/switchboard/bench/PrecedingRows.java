package io.switchboard.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The timed round trips of one cell, each row's by the row called just before it. The rows beside
 * a small cell change it: a call right after a SOAP call finds the CPU's caches as SOAP's client and
 * server left them, and a row whose own path is longer pays more for that than a raw socket does.
 * The table shows by how much, row by row, in the same run.
 *
 * <pre>{@code
 * PrecedingRows before = new PrecedingRows(Workload.EMPTY, 0);
 * before.add("tcp", "soap", 41_000);
 * String table = before.markdown(List.of("tcp", "soap"));
 * }</pre>
 */
final class PrecedingRows {
    private final Workload workload;
    private final int size;
    /** Row, then the row called before it, then that row's round trips in nanoseconds. */
    private final Map<String, Map<String, List<Long>>> byRow = new LinkedHashMap<>();

    PrecedingRows(Workload workload, int size) {
        this.workload = workload;
        this.size = size;
    }

    /** A timed round trip of {@code row} that came right after a call of {@code before}. */
    void add(String row, String before, long nanos) {
        byRow.computeIfAbsent(row, r -> new LinkedHashMap<>()).computeIfAbsent(before, b -> new ArrayList<>()).add(nanos);
    }

    boolean isEmpty() {
        return byRow.isEmpty();
    }

    /**
     * A Markdown table: one line per row of {@code rows}, one column per row called before, each
     * cell the median round trip in µs and how many calls it holds.
     */
    String markdown(List<String> rows) {
        List<String> present = rows.stream().filter(byRow::containsKey).toList();
        List<String> befores = rows.stream().filter(r -> byRow.values().stream().anyMatch(m -> m.containsKey(r))).toList();
        StringBuilder b = new StringBuilder();
        b.append("### ").append(workload.key()).append(' ').append(Report.size(size))
                .append(": median µs (calls) by the row called just before\n\n| row | ");
        befores.forEach(r -> b.append("after ").append(r).append(" | "));
        b.append("\n| --- | ").append("---: | ".repeat(befores.size())).append('\n');
        for (String row : present) {
            b.append("| ").append(row).append(" | ");
            for (String before : befores) {
                List<Long> samples = byRow.get(row).get(before);
                b.append(samples == null ? "" : String.format(Locale.ROOT, "%s (%d)",
                        Report.number(Cell.quantileMicros(samples.stream().mapToLong(Long::longValue).sorted().toArray(), 0.5)),
                        samples.size())).append(" | ");
            }
            b.append('\n');
        }
        return b.toString();
    }
}

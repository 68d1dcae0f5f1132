package io.switchboard.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes a sweep's results: {@code bench.csv} (one row per measured cell, under a fixed header
 * that scripts may rely on), {@code bench.md} (the machine, the command, and per workload a table with ratios against
 * the raw socket and SOAP of the same run) and one log-log PNG per workload.
 *
 * <pre>{@code
 * Report report = new Report(cells, machine, "./switchboard bench --quick", notes);
 * report.writeAll(Path.of("results"));
 * }</pre>
 */
public final class Report {
    /** The rows every other row is divided by, where the run has them: the floor, then the plain libraries. */
    static final List<String> BASELINES = List.of("socket", PlainGrpcPeer.NAME, BareAxis2Peer.NAME, "rmi", "soap");
    /**
     * The CSV header, fixed: scripts read the columns by these names, and some by position
     * ({@code scripts/bench-tricks.sh}), so a new column goes at the end. {@code calls_over} and
     * {@code fallbacks}: a policy row's timed calls per protocol ({@code tcp-unix:1996 grpc:4}) and
     * how many of them fell back; empty for a pinned row.
     */
    public static final String CSV_HEADER = "workload,size,protocol,median_us,p10_us,p90_us,payload_mb_per_s,wire_bytes,samples,"
            + "calls_over,fallbacks";

    private final List<Cell> cells;
    private final Machine machine;
    private final String command;
    private final List<String> notes;
    private final String asyncTable;
    private final String precedingTables;

    Report(List<Cell> cells, Machine machine, String command, List<String> notes) {
        this(cells, machine, command, notes, null);
    }

    /** @param asyncTable the async workload's table ({@link AsyncBench#table}), a section of bench.md; null for none */
    Report(List<Cell> cells, Machine machine, String command, List<String> notes, String asyncTable) {
        this(cells, machine, command, notes, asyncTable, null);
    }

    /** @param precedingTables the pinned cells by the row called before ({@link Sweep#precedingTables}); null or empty for none */
    Report(List<Cell> cells, Machine machine, String command, List<String> notes, String asyncTable, String precedingTables) {
        this.cells = cells;
        this.machine = machine;
        this.command = command;
        this.notes = notes;
        this.asyncTable = asyncTable;
        this.precedingTables = precedingTables;
    }

    /** Writes the CSV, the Markdown and the plots into {@code dir}; returns the Markdown. */
    String writeAll(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("bench.csv"), csv(), StandardCharsets.UTF_8);
        List<String> plots = new ArrayList<>();
        for (Workload w : workloads()) {
            if (w != Workload.EMPTY && cells.stream().anyMatch(c -> c.workload() == w && c.isMeasured())) {
                String file = "bench-" + w.key() + ".png";
                BitmapEncoder.saveBitmap(chart(w), dir.resolve(file).toString(), BitmapEncoder.BitmapFormat.PNG);
                plots.add(file);
            }
        }
        String md = markdown(plots);
        Files.writeString(dir.resolve("bench.md"), md, StandardCharsets.UTF_8);
        return md;
    }

    String csv() {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Cell c : cells) {
            if (!c.isMeasured()) {
                continue;   // the CSV has no column for a reason; failed and skipped cells are listed in bench.md
            }
            b.append(String.format(Locale.ROOT, "%s,%d,%s,%.1f,%.1f,%.1f,%s,%s,%d,%s,%s%n", c.workload().key(), c.size(),
                    c.protocol(), c.medianMicros(), c.p10Micros(), c.p90Micros(),
                    c.workload() == Workload.EMPTY ? "" : String.format(Locale.ROOT, "%.4g", c.payloadMegabytesPerSecond()),
                    c.wireBytes() < 0 ? "" : Long.toString(c.wireBytes()), c.samplesNanos().length,
                    c.ways() == null ? "" : c.ways().csv(), c.ways() == null ? "" : Long.toString(c.ways().fallbacks())));
        }
        return b.toString();
    }

    String markdown(List<String> plots) {
        StringBuilder b = new StringBuilder();
        b.append("# Switchboard benchmark: round trips, client and server in separate JVMs on loopback\n\n");
        b.append("Reproduce with `").append(command).append("` (").append(machine.date()).append(").\n\n");
        b.append("| machine | |\n| --- | --- |\n");
        b.append("| CPUs (nproc) | ").append(machine.cpus()).append(" × ").append(machine.cpuModel()).append(" |\n");
        b.append("| load average at start / end | ").append(machine.loadStart()).append(" / ").append(machine.loadEnd()).append(" |\n");
        b.append("| Java | ").append(machine.java()).append(" |\n");
        b.append("| client JVM flags | `").append(machine.clientFlags()).append("` (max heap ")
                .append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB) |\n");
        b.append("| server JVM flags | `").append(machine.serverFlags()).append("` |\n");
        b.append("| per cell and protocol | ").append(machine.perCell()).append(" |\n");
        b.append("| pinning | ").append(machine.pinning()).append(" |\n\n");
        b.append("Times are round trips in µs over the timed calls (median, p10, p90, min); protocols were interleaved call by call, ")
                .append("in a fresh (seeded) order every round, and every protocol of a cell has the same number of samples. ")
                .append("Each **÷ X** column divides this row's median by X's median, and its p10 by X's p10, for the same cell ")
                .append("in this run (median / p10; above 1 is slower), for the baselines present: the raw socket, plain grpc-java ")
                .append("unary (default executor), bare Axis2, Java RMI and Switchboard's SOAP. MB/s counts the payload both ways (2 × payload ÷ median; 8 bytes per double, ")
                .append("34 per node). Wire bytes: what the client sent for one request, protocol headers included ")
                .append("(counted on the client's socket, or through a counting relay for SOAP and gRPC; none for `local`, ")
                .append("the component in the client's JVM, called through a stub that copies through the protobuf codec). ")
                .append("The note of a policy row (`adaptive`, `size`) and of `tcp-lookup` counts its timed calls by the protocol that answered them, ")
                .append("tcp and gRPC by their way (`tcp-unix`, `tcp`, `grpc-unix`, `grpc`), and says how many were the ")
                .append("failsafe's fallback.\n");
        List<String> baselines = BASELINES.stream().filter(n -> cells.stream().anyMatch(c -> c.isMeasured()
                && c.protocol().equals(n))).toList();
        for (Workload w : workloads()) {
            b.append("\n## ").append(w.key()).append("\n\n");
            b.append("| size | protocol | median µs | p10 µs | p90 µs | min µs | MB/s | wire bytes | ");
            baselines.forEach(n -> b.append("÷ ").append(n).append(" | "));
            b.append("note |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ");
            baselines.forEach(n -> b.append("---: | "));
            b.append("--- |\n");
            for (Cell c : cells) {
                if (c.workload() != w) {
                    continue;
                }
                b.append("| ").append(size(c.size())).append(" | ").append(c.protocol()).append(" | ");
                if (c.isMeasured()) {
                    b.append(number(c.medianMicros())).append(" | ").append(number(c.p10Micros())).append(" | ")
                            .append(number(c.p90Micros())).append(" | ").append(number(c.minMicros())).append(" | ")
                            .append(w == Workload.EMPTY ? "" : number(c.payloadMegabytesPerSecond())).append(" | ")
                            .append(c.wireBytes() < 0 ? "" : String.format(Locale.ROOT, "%,d", c.wireBytes())).append(" | ")
                            .append(baselines.stream().map(n -> ratio(c, n) + " | ").collect(Collectors.joining()));
                    String note = (c.pinned() ? "pinned" : "") + (c.note() == null ? "" : (c.pinned() ? "; " : "") + c.note());
                    b.append(note).append(" |\n");
                } else {
                    b.append("| | | | | | ").append("| ".repeat(baselines.size())).append(c.status().name().toLowerCase(Locale.ROOT)).append(": ")
                            .append(c.note().replaceFirst("^skipped: ", "")).append(" |\n");
                }
            }
            if (plots.contains("bench-" + w.key() + ".png")) {
                b.append("\n![round-trip time, ").append(w.key()).append("](bench-").append(w.key()).append(".png)\n");
            }
        }
        if (precedingTables != null && !precedingTables.isEmpty()) {
            b.append("\n## Small cells by the row called just before\n\n")
                    .append("Each pinned cell's timed calls again, every row's median by the row whose call came right ")
                    .append("before it (the rows of a round are shuffled, so each row follows each other about equally ")
                    .append("often). A row much slower after some rows than after others pays for what their calls ")
                    .append("leave behind; the rows beside a small cell change it by that much.\n\n").append(precedingTables);
        }
        if (asyncTable != null) {
            b.append("\n## async (calls per second, both JVMs unpinned; details in async.md)\n\n").append(asyncTable);
        }
        if (!notes.isEmpty()) {
            b.append("\n## Notes\n\n");
            notes.forEach(n -> b.append("- ").append(n).append('\n'));
        }
        return b.toString();
    }

    private String ratio(Cell c, String baseline) {
        Optional<Cell> base = cells.stream().filter(o -> o.isMeasured() && o.workload() == c.workload()
                && o.size() == c.size() && o.protocol().equals(baseline)).findFirst();
        return base.map(o -> String.format(Locale.ROOT, "%.2f / %.2f", c.medianMicros() / o.medianMicros(),
                c.p10Micros() / o.p10Micros())).orElse("–");
    }

    private XYChart chart(Workload w) {
        XYChart chart = new XYChartBuilder().width(900).height(600)
                .title("Round trip, " + (w == Workload.DOUBLES ? "double[]" : "LinkEntry list") + " (median; client and server JVMs on loopback)")
                .xAxisTitle(w == Workload.DOUBLES ? "doubles" : "list nodes").yAxisTitle("round-trip time (µs)").build();
        chart.getStyler().setXAxisLogarithmic(true).setYAxisLogarithmic(true).setLegendPosition(
                org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        Map<String, List<Cell>> byProtocol = cells.stream().filter(c -> c.workload() == w && c.isMeasured())
                .collect(Collectors.groupingBy(Cell::protocol, LinkedHashMap::new, Collectors.toList()));
        byProtocol.forEach((protocol, list) -> chart.addSeries(protocol,
                list.stream().mapToDouble(Cell::size).toArray(), list.stream().mapToDouble(Cell::medianMicros).toArray())
                .setMarker(SeriesMarkers.CIRCLE));
        return chart;
    }

    private List<Workload> workloads() {
        return cells.stream().map(Cell::workload).distinct().collect(Collectors.toList());
    }

    /** 10, 100, 1000, then 10^4, 10^5 ... */
    static String size(int n) {
        if (n >= 10_000 && Integer.toString(n).matches("10+")) {
            return "10^" + (Integer.toString(n).length() - 1);
        }
        return Integer.toString(n);
    }

    static String number(double x) {
        return x < 100 ? String.format(Locale.ROOT, "%.1f", x) : String.format(Locale.ROOT, "%,.0f", x);
    }

    /**
     * The machine and settings a run was made on, as the report's header shows them.
     */
    record Machine(String date, int cpus, String cpuModel, String loadStart, String loadEnd, String java,
                   String clientFlags, String serverFlags, String perCell, String pinning) {

        static String loadAverage() {
            try {
                String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
                return f[0] + " " + f[1] + " " + f[2];
            } catch (IOException e) {
                return String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            }
        }

        static String currentCpuModel() {
            try {
                return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                        .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown CPU");
            } catch (IOException e) {
                return System.getProperty("os.arch");
            }
        }

        static String currentJava() {
            return System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ", "
                    + System.getProperty("java.vendor") + "), " + System.getProperty("os.name") + " "
                    + System.getProperty("os.version");
        }

        static String currentClientFlags() {
            List<String> args = ManagementFactory.getRuntimeMXBean().getInputArguments();
            return args.isEmpty() ? "(none: JVM defaults)" : String.join(" ", args);
        }

        static String now() {
            return ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME.withLocale(Locale.ROOT)).replaceFirst("\\.\\d+", "");
        }
    }
}

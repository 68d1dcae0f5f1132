package io.switchboard.bench;

import io.switchboard.bench.MatrixBench.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Writes the matrix workload's results beside the sweep's: {@code matrix.csv}, {@code matrix.md}
 * (times per row with the ratios to the plain Java baselines and to SOAP only, and the calls per
 * product by protocol) and {@code matrix.png} (time against n, log-log, a line per algorithm and row).
 *
 * <pre>{@code
 * new MatrixReport(results, machine, command, 4, "-Xms768m -Xmx768m -XX:+UseG1GC").writeAll(dir);
 * }</pre>
 */
final class MatrixReport {
    static final String CSV_HEADER = "algorithm,n,workers,policy,median_ms,p10_ms,p90_ms,min_ms,calls_per_product,cpu_ms,"
            + "cpu_wait_ms";
    /** The rows other rows are divided by, when they are in the run: the plain Java baselines and SOAP only. */
    static final List<String> REFERENCES = List.of("socket", "rmi", "soap");

    private final List<Result> results;
    private final Report.Machine machine;
    private final String command;
    private final int workers;
    private final String workerFlags;

    MatrixReport(List<Result> results, Report.Machine machine, String command, int workers, String workerFlags) {
        this.results = results;
        this.machine = machine;
        this.command = command;
        this.workers = workers;
        this.workerFlags = workerFlags;
    }

    String writeAll(Path dir) throws IOException {
        Files.writeString(dir.resolve("matrix.csv"), csv(), StandardCharsets.UTF_8);
        if (results.stream().anyMatch(Result::measured)) {
            BitmapEncoder.saveBitmap(chart(), dir.resolve("matrix.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        String md = markdown();
        Files.writeString(dir.resolve("matrix.md"), md, StandardCharsets.UTF_8);
        return md;
    }

    String csv() {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Result r : results) {
            if (r.measured()) {
                b.append(String.format(Locale.ROOT, "%s,%d,%d,%s,%.2f,%.2f,%.2f,%.2f,%s,%s,%s%n", r.algorithm(), r.n(), workers,
                        r.policy(), r.quantileMillis(0.5), r.quantileMillis(0.1), r.quantileMillis(0.9), r.samplesNanos()[0] / 1e6,
                        calls(r).replace(", ", " "), csvMillis(r.cpuMillis()), csvMillis(r.waitMillis())));
            }
        }
        return b.toString();
    }

    String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("# Distributed matrix multiplication: ").append(workers).append(" worker JVMs on loopback\n\n");
        b.append("Reproduce with `").append(command).append("` (").append(machine.date()).append(", load average ")
                .append(machine.loadStart()).append(" at the start of the run, ").append(machine.loadEnd()).append(" at its end; ")
                .append(machine.cpus()).append(" CPUs; manager JVM `").append(machine.clientFlags())
                .append("`, worker JVMs `").append(workerFlags).append("`).\n\n");
        b.append("Each cell: one n × n product C = A·B by the manager in the bench JVM and ").append(workers)
                .append(" worker JVMs (`MatrixBenchWorker`: a Switchboard worker bound in the bench server's registry and the ")
                .append("baselines' workers beside it), timed from the first call to the last answer (median, p10, p90, min over the ")
                .append("products; rows interleaved product by product in a fresh seeded order every round, one untimed product ")
                .append("each first and, unless `--settle 0`, more rounds of them until the JIT compilers of all the JVMs were ")
                .append("quiet; a cell's note says if they never were). A and B hold integers in [-8, 8], so the product is ")
                .append("exact and every answer is ")
                .append("compared bit for bit with the local product. The policy steers the manager's calls and, in Cannon's ")
                .append("algorithm, the workers' block shifts to each other. The rows marked *plain Java* are the baselines, with ")
                .append("no Switchboard code on their wire: the same algorithms, arithmetic and data over Java RMI (`rmi`) and over ")
                .append("a hand-written binary protocol on plain sockets (`socket`, doubles as raw 8-byte values, one connection per ")
                .append("pair of peers), served by workers of their own in the same worker JVMs, Cannon's shifts going worker to ")
                .append("worker over the same transport. Each **÷ X** column divides this row's median by X's median, and its p10 by ")
                .append("X's p10, for the same algorithm and n in this run (median / p10; above 1 is slower). Calls per product: the ")
                .append("manager's calls by protocol.");
        boolean scheduler = results.stream().anyMatch(r -> r.cpuNanos().length > 0);
        if (scheduler) {
            b.append(" **CPU ms** and **CPU wait ms**: per product (median), the CPU time all threads of the manager's and the ")
                    .append("workers' JVMs ran, and the time they were ready to run but waited for a CPU, from the kernel's ")
                    .append("per-thread scheduler figures (`/proc/PID/task/TID/schedstat`) read before and after each product ")
                    .append("(the measuring thread left out). On two CPUs the CPU time can be up to twice the product's time, ")
                    .append("and more where other threads ran while the figures were read; the wait is summed over threads.");
        }
        b.append('\n');
        List<String> references = REFERENCES.stream().filter(n -> results.stream().anyMatch(r -> r.measured()
                && r.policy().equals(n))).toList();
        for (String algorithm : List.of("simple", "cannon")) {
            b.append("\n## ").append(algorithm.equals("simple") ? "Simple parallel algorithm" : "Cannon's algorithm").append("\n\n");
            b.append("| n | policy | median ms | p10 ms | p90 ms | min ms | ");
            references.forEach(n -> b.append("÷ ").append(n).append(" | "));
            b.append(scheduler ? "CPU ms | CPU wait ms | " : "").append("calls per product | note |\n| ---: | --- | ---: | ---: | ---: | ---: | ");
            references.forEach(n -> b.append("---: | "));
            b.append(scheduler ? "---: | ---: | " : "").append("--- | --- |\n");
            for (Result r : results) {
                if (!r.algorithm().equals(algorithm)) {
                    continue;
                }
                b.append("| ").append(r.n()).append(" | ").append(r.policy())
                        .append(MatrixBench.BASELINES.contains(r.policy()) ? " *(plain Java)*" : "").append(" | ");
                if (r.measured()) {
                    b.append(number(r.quantileMillis(0.5))).append(" | ").append(number(r.quantileMillis(0.1))).append(" | ")
                            .append(number(r.quantileMillis(0.9))).append(" | ").append(number(r.samplesNanos()[0] / 1e6)).append(" | ")
                            .append(references.stream().map(n -> ratio(r, n) + " | ").collect(Collectors.joining()))
                            .append(scheduler ? mdMillis(r.cpuMillis()) + " | " + mdMillis(r.waitMillis()) + " | " : "")
                            .append(calls(r)).append(" | ").append(r.note() == null ? "" : r.note()).append(" |\n");
                } else {
                    b.append("| | | | ").append("| ".repeat(references.size() + (scheduler ? 2 : 0))).append("| ")
                            .append(r.note()).append(" |\n");
                }
            }
        }
        b.append("\n![product time against n](matrix.png)\n");
        return b.toString();
    }

    /** This row's median and p10 divided by those of {@code reference}'s row for the same algorithm and n. */
    private String ratio(Result r, String reference) {
        Optional<Result> base = results.stream().filter(o -> o.measured() && o.algorithm().equals(r.algorithm())
                && o.n() == r.n() && o.policy().equals(reference)).findFirst();
        return base.map(o -> String.format(Locale.ROOT, "%.2f / %.2f", r.quantileMillis(0.5) / o.quantileMillis(0.5),
                r.quantileMillis(0.1) / o.quantileMillis(0.1))).orElse("–");
    }

    private static String calls(Result r) {
        return r.callsByProtocol().entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    private XYChart chart() {
        XYChart chart = new XYChartBuilder().width(900).height(600)
                .title("Matrix product on " + workers + " worker JVMs (median)").xAxisTitle("n").yAxisTitle("time per product (ms)")
                .build();
        chart.getStyler().setXAxisLogarithmic(true).setYAxisLogarithmic(true)
                .setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        Map<String, List<Result>> series = results.stream().filter(Result::measured)
                .collect(Collectors.groupingBy(r -> r.algorithm() + " " + r.policy(), LinkedHashMap::new, Collectors.toList()));
        series.forEach((name, list) -> chart.addSeries(name, list.stream().mapToDouble(Result::n).toArray(),
                list.stream().mapToDouble(r -> r.quantileMillis(0.5)).toArray()).setMarker(SeriesMarkers.CIRCLE));
        return chart;
    }

    private static String csvMillis(double ms) {
        return ms < 0 ? "" : String.format(Locale.ROOT, "%.2f", ms);
    }

    private static String mdMillis(double ms) {
        return ms < 0 ? "–" : number(ms);
    }

    private static String number(double x) {
        return x < 100 ? String.format(Locale.ROOT, "%.1f", x) : String.format(Locale.ROOT, "%,.0f", x);
    }
}

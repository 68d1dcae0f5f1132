package io.switchboard.bench;

import io.switchboard.bench.PhaseBreakdown.Lane;
import io.switchboard.bench.PhaseBreakdown.Timing;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;

/**
 * Writes a phase breakdown: {@code phases.csv} (one row per protocol and segment),
 * {@code phases.md} (the table, the machine, the command) and {@code phases.png}, a Gantt chart
 * with a client, a wire and a server lane per protocol, each bar at its median start and of its
 * median length.
 *
 * <pre>{@code
 * new PhaseReport(timings, machine, "./switchboard bench --phases", notes, "LinkEntry list, 1000 nodes").writeAll(dir);
 * }</pre>
 */
final class PhaseReport {
    static final String CSV_HEADER = "protocol,segment,lane,from,to,median_us,p10_us,p90_us,start_us,calls";
    private static final Color[] PALETTE = {
        new Color(0x4e79a7), new Color(0xf28e2b), new Color(0xe15759), new Color(0x76b7b2), new Color(0x59a14f),
        new Color(0xedc948), new Color(0xb07aa1), new Color(0xff9da7), new Color(0x9c755f), new Color(0xbab0ac),
        new Color(0x1f77b4), new Color(0x2ca02c), new Color(0x8c564b), new Color(0x17becf), new Color(0xbcbd22)};

    private final List<Timing> timings;
    private final Report.Machine machine;
    private final String command;
    private final List<String> notes;
    private final String payload;

    PhaseReport(List<Timing> timings, Report.Machine machine, String command, List<String> notes, String payload) {
        this.timings = timings;
        this.machine = machine;
        this.command = command;
        this.notes = notes;
        this.payload = payload;
    }

    String writeAll(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("phases.csv"), csv(), StandardCharsets.UTF_8);
        ImageIO.write(gantt(), "png", dir.resolve("phases.png").toFile());
        String md = markdown();
        Files.writeString(dir.resolve("phases.md"), md, StandardCharsets.UTF_8);
        return md;
    }

    String csv() {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Timing t : timings) {
            b.append(String.format(Locale.ROOT, "%s,\"%s\",%s,%s,%s,%.1f,%.1f,%.1f,%.1f,%d%n", t.protocol(), t.segment(),
                    t.lane().name().toLowerCase(Locale.ROOT), t.from(), t.to(), t.medianMicros(), t.p10Micros(),
                    t.p90Micros(), t.startMicros(), t.calls()));
        }
        return b.toString();
    }

    String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("# Phase breakdown of one call: ").append(payload).append("\n\n");
        b.append("Reproduce with `").append(command).append("` (").append(machine.date()).append(").\n\n");
        b.append("| machine | |\n| --- | --- |\n");
        b.append("| CPUs (nproc) | ").append(machine.cpus()).append(" × ").append(machine.cpuModel()).append(" |\n");
        b.append("| load average at start / end | ").append(machine.loadStart()).append(" / ").append(machine.loadEnd()).append(" |\n");
        b.append("| Java | ").append(machine.java()).append(" |\n");
        b.append("| client JVM flags | `").append(machine.clientFlags()).append("` |\n");
        b.append("| server JVM flags | `").append(machine.serverFlags()).append("` |\n");
        b.append("| calls | ").append(machine.perCell()).append(" |\n");
        b.append("| pinning | ").append(machine.pinning()).append(" |\n\n");
        b.append("Both JVMs record `System.nanoTime()` (Linux `CLOCK_MONOTONIC`, one clock for the machine) at phase ")
                .append("boundaries (`io.switchboard.protocol.spi.PhaseMarks`, on only with `-Dswitchboard.phases=true`). ")
                .append("A segment runs from one boundary to the next that the protocol marks; its median and p10/p90 are over ")
                .append("the calls, its start is the median time from the caller's entry into the stub. Segments of one call ")
                .append("may overlap (SOAP streams: the server starts reading while the client still writes) and then a ")
                .append("segment between the two sides is negative. The sum of the segment medians need not equal the median ")
                .append("round trip.\n\n");
        Map<String, List<Timing>> byProtocol = byProtocol();
        for (Map.Entry<String, List<Timing>> e : byProtocol.entrySet()) {
            b.append("## ").append(e.getKey()).append("\n\n");
            b.append("| segment | lane | median µs | p10 µs | p90 µs | starts at µs | share of round trip |\n");
            b.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
            double roundTrip = e.getValue().stream().filter(t -> t.segment().equals("round trip"))
                    .mapToDouble(Timing::medianMicros).findFirst().orElse(Double.NaN);
            for (Timing t : e.getValue()) {
                boolean total = t.segment().equals("round trip");
                b.append("| ").append(total ? "**round trip**" : t.segment()).append(" | ")
                        .append(total ? "" : t.lane().name().toLowerCase(Locale.ROOT)).append(" | ")
                        .append(number(t.medianMicros())).append(" | ").append(number(t.p10Micros())).append(" | ")
                        .append(number(t.p90Micros())).append(" | ").append(total ? "" : number(t.startMicros())).append(" | ")
                        .append(total ? "" : String.format(Locale.ROOT, "%.0f %%", 100 * t.medianMicros() / roundTrip))
                        .append(" |\n");
            }
            b.append('\n');
        }
        b.append("![phases of one call, Gantt chart](phases.png)\n");
        if (!notes.isEmpty()) {
            b.append("\n## Notes\n\n");
            notes.forEach(n -> b.append("- ").append(n).append('\n'));
        }
        return b.toString();
    }

    private Map<String, List<Timing>> byProtocol() {
        return timings.stream().collect(Collectors.groupingBy(Timing::protocol, LinkedHashMap::new, Collectors.toList()));
    }

    /** Client, wire and server lanes per protocol; bars at median start, median length; a legend of segments below. */
    BufferedImage gantt() {
        Map<String, List<Timing>> byProtocol = byProtocol();
        List<String> segments = new ArrayList<>();
        timings.stream().filter(t -> !t.segment().equals("round trip")).map(Timing::segment).distinct().forEach(segments::add);
        double scale = timings.stream().mapToDouble(t -> Math.max(t.endMicros(), t.segment().equals("round trip")
                ? t.medianMicros() : 0)).max().orElse(1);
        int left = 170;
        int width = 1100;
        int plot = width - left - 30;
        int laneHeight = 18;
        int top = 50;
        int blockHeight = 3 * laneHeight + 22;
        int legendTop = top + byProtocol.size() * blockHeight + 40;
        int height = legendTop + ((segments.size() + 1) / 2) * 18 + 20;
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString("Phases of one call, " + payload + " (median start and length; µs from the call's start)", 10, 22);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        int y = top;
        for (Map.Entry<String, List<Timing>> e : byProtocol.entrySet()) {
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
            g.drawString(e.getKey(), 10, y + 12);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            for (Lane lane : Lane.values()) {
                int ly = y + lane.ordinal() * laneHeight;
                g.setColor(Color.DARK_GRAY);
                g.drawString(lane.name().toLowerCase(Locale.ROOT), 100, ly + 13);
                g.setColor(new Color(0xeeeeee));
                g.fillRect(left, ly + 2, plot, laneHeight - 4);
                for (Timing t : e.getValue()) {
                    if (t.lane() != lane || t.segment().equals("round trip") || t.medianMicros() <= 0) {
                        continue;
                    }
                    int x0 = left + (int) Math.round(plot * Math.max(0, t.startMicros()) / scale);
                    int w = Math.max(1, (int) Math.round(plot * t.medianMicros() / scale));
                    g.setColor(PALETTE[segments.indexOf(t.segment()) % PALETTE.length]);
                    g.fillRect(x0, ly + 2, w, laneHeight - 4);
                }
            }
            double roundTrip = e.getValue().stream().filter(t -> t.segment().equals("round trip"))
                    .mapToDouble(Timing::medianMicros).findFirst().orElse(0);
            int xr = left + (int) Math.round(plot * roundTrip / scale);
            g.setColor(Color.BLACK);
            g.setStroke(new BasicStroke(1.5f));
            g.drawLine(xr, y, xr, y + 3 * laneHeight);
            g.drawString(number(roundTrip) + " µs", Math.min(xr + 4, width - 70), y + 3 * laneHeight + 12);
            y += blockHeight;
        }
        g.setColor(Color.GRAY);
        for (int i = 0; i <= 5; i++) {
            int x = left + plot * i / 5;
            g.drawLine(x, y - 8, x, y - 2);
            g.drawString(number(scale * i / 5), x - 10, y + 10);
        }
        for (int i = 0; i < segments.size(); i++) {
            int lx = 10 + (i % 2) * (width / 2);
            int ly = legendTop + (i / 2) * 18;
            g.setColor(PALETTE[i % PALETTE.length]);
            g.fillRect(lx, ly, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(segments.get(i), lx + 18, ly + 11);
        }
        g.dispose();
        return image;
    }

    private static String number(double x) {
        return Double.isNaN(x) ? "–" : Math.abs(x) < 100 ? String.format(Locale.ROOT, "%.1f", x) : String.format(Locale.ROOT, "%,.0f", x);
    }
}

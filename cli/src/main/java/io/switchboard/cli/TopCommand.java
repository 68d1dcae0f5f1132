package io.switchboard.cli;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.registry.RegistryClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./switchboard top --registry URL}: the registry console's live figures as a table in the
 * terminal, refreshed every {@code --interval} seconds (the screen cleared with ANSI codes), or
 * printed once with {@code --once}. It reads {@code /console/live.json} on the registry's port.
 */
@Command(name = "top", mixinStandardHelpOptions = true,
        description = "Show every instance's calls per operation and protocol (calls, calls/s, faults, errors, "
                + "refusals, repeats, latency percentiles) as the registry's console has them, refreshed until "
                + "stopped.")
final class TopCommand implements Callable<Integer> {
    /** The largest answer read: the figures of thousands of instances fit. */
    static final int MAX_BYTES = 8 << 20;
    static final String CLEAR = "\033[H\033[2J";

    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint, as "
            + "'./switchboard registry' prints it (with several, the first).")
    String registry;

    @Option(names = "--once", description = "Print the table once and exit.")
    boolean once;

    @Option(names = "--interval", defaultValue = "2", description = "Seconds between refreshes (default ${DEFAULT-VALUE}).")
    int interval;

    @Mixin
    TlsOptions tls = new TlsOptions();

    /** The calls and the time of the report they came from, per row, for calls/s. */
    private final Map<String, double[]> previous = new HashMap<>();

    @Override
    public Integer call() throws Exception {
        if (interval < 1) {
            throw new IllegalArgumentException("--interval is at least 1 second");
        }
        URI live = liveUri(RegistryClient.split(registry).get(0));
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        TlsSettings settings = tls.settings();
        if (settings != null) {
            http.sslContext(settings.context());
        }
        HttpClient client = http.build();
        PrintStream out = System.out;
        while (true) {
            String table = table(fetch(client, live));
            if (once) {
                out.print(table);
                out.flush();
                return 0;
            }
            out.print(CLEAR + table);
            out.flush();
            Thread.sleep(interval * 1000L);
        }
    }

    /** {@code http(s)://HOST:PORT/console/live.json} of a registry's SOAP endpoint. */
    static URI liveUri(String registryUrl) {
        URI u = URI.create(registryUrl);
        if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) {
            throw new IllegalArgumentException("--registry is the registry's SOAP endpoint (http(s)://HOST:PORT/axis2/"
                    + "services/Registry), not " + registryUrl);
        }
        return URI.create(u.getScheme() + "://" + u.getRawAuthority() + "/console/live.json");
    }

    private static JsonObject fetch(HttpClient client, URI live) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(live).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        byte[] body;
        try (InputStream in = r.body()) {
            body = in.readNBytes(MAX_BYTES + 1);
        }
        if (r.statusCode() == 404) {
            throw new IllegalStateException(live + " answered 404: the registry serves no console (started with "
                    + "--no-console, or older than the console)");
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException(live + " answered HTTP " + r.statusCode());
        }
        if (body.length > MAX_BYTES) {
            throw new IllegalStateException(live + " sent more than " + MAX_BYTES + " bytes");
        }
        try {
            JsonElement e = JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
            if (!e.isJsonObject() || !"switchboard-console-live".equals(string(e.getAsJsonObject(), "format"))) {
                throw new IllegalStateException(live + " is not a Switchboard console's live figures");
            }
            return e.getAsJsonObject();
        } catch (JsonParseException | IllegalStateException | UnsupportedOperationException e) {
            throw new IllegalStateException("cannot read " + live + ": " + e.getMessage(), e);
        }
    }

    /** The table for one answer of {@code live.json}. */
    String table(JsonObject live) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"COMPONENT", "INSTANCE", "LEASE", "OPERATION", "PROTOCOL", "CALLS", "CALLS/S", "FAULTS",
            "ERRORS", "REFUSED", "REPEATS", "P50 MS", "P90 MS", "P99 MS", "MAX MS"});
        int instances = 0;
        for (JsonElement ie : live.getAsJsonArray("instances")) {
            JsonObject i = ie.getAsJsonObject();
            instances++;
            String name = string(i, "name");
            String id = string(i, "instanceId");
            String shortId = id.length() > 8 ? id.substring(0, 8) : id;
            String lease = "none";
            if (i.get("lease") != null && i.get("lease").isJsonObject()) {
                JsonObject l = i.getAsJsonObject("lease");
                lease = l.get("seconds").getAsInt() + "s (" + Math.round(l.get("renewedSecondsAgo").getAsDouble())
                        + "s ago)";
            }
            JsonElement report = i.get("report");
            if (report == null || !report.isJsonObject() || report.getAsJsonObject().getAsJsonArray("rows").isEmpty()) {
                rows.add(new String[] {name, shortId, lease, report == null || report.isJsonNull() ? "(no figures)"
                    : "(no calls)", "", "", "", "", "", "", "", "", "", "", ""});
                continue;
            }
            JsonObject rep = report.getAsJsonObject();
            double at = java.time.Instant.parse(string(rep, "receivedAt")).toEpochMilli() / 1000.0;
            for (JsonElement re : rep.getAsJsonArray("rows")) {
                JsonObject r = re.getAsJsonObject();
                long calls = r.get("calls").getAsLong();
                String key = name + "\0" + id + "\0" + string(r, "operation") + "\0" + string(r, "protocol");
                double[] before = previous.get(key);
                String rate = "-";
                if (before != null && at > before[1]) {
                    rate = String.format(Locale.ROOT, "%.1f", (calls - before[0]) / (at - before[1]));
                } else if (before != null && before.length > 2) {
                    rate = String.format(Locale.ROOT, "%.1f", before[2]);
                }
                if (before == null || at > before[1]) {
                    previous.put(key, rate.equals("-") ? new double[] {calls, at}
                            : new double[] {calls, at, Double.parseDouble(rate)});
                }
                rows.add(new String[] {name, shortId, lease, string(r, "operation"), string(r, "protocol"),
                    Long.toString(calls), rate, number(r, "faults"), number(r, "errors"), number(r, "refusals"),
                    number(r, "repeats"), ms(r, "p50Micros"), ms(r, "p90Micros"), ms(r, "p99Micros"), ms(r, "maxMicros")});
            }
        }
        StringBuilder b = new StringBuilder();
        b.append("switchboard top  ").append(clean(string(live, "registry"))).append("  ")
                .append(clean(seconds(string(live, "now")))).append("  ").append(instances)
                .append(instances == 1 ? " instance" : " instances").append('\n');
        int[] width = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int c = 0; c < row.length; c++) {
                row[c] = clean(row[c]);
                width[c] = Math.max(width[c], row[c].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < row.length; c++) {
                boolean numeric = c >= 5;
                String cell = row[c];
                String pad = " ".repeat(width[c] - cell.length());
                line.append(numeric ? pad + cell : cell + pad).append(c + 1 < row.length ? "  " : "");
            }
            b.append(line.toString().stripTrailing()).append('\n');
        }
        return b.toString();
    }

    /** An instant to the second, as people read it; anything else as it came. */
    private static String seconds(String instant) {
        try {
            return java.time.Instant.parse(instant).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        } catch (java.time.format.DateTimeParseException e) {
            return instant;
        }
    }

    private static String string(JsonObject o, String member) {
        JsonElement e = o.get(member);
        return e == null || e.isJsonNull() ? "" : e.getAsString();
    }

    private static String number(JsonObject o, String member) {
        JsonElement e = o.get(member);
        return e == null || e.isJsonNull() ? "-" : Long.toString(e.getAsLong());
    }

    private static String ms(JsonObject o, String member) {
        JsonElement e = o.get(member);
        return e == null || e.isJsonNull() ? "-" : String.format(Locale.ROOT, "%.2f", e.getAsLong() / 1000.0);
    }

    /** Without control characters: nothing the registry sends may move the cursor or recolour the terminal. */
    private static String clean(String s) {
        StringBuilder b = new StringBuilder(s.length());
        s.codePoints().forEach(c -> b.appendCodePoint(Character.isISOControl(c) ? '?' : c));
        return b.length() > 64 ? b.substring(0, 63) + "…" : b.toString();
    }
}

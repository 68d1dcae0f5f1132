package io.switchboard.registry.server;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.SchemaReader;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.WebHandler;
import io.switchboard.registry.CallSummary;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.SizedLru;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The registry's console at {@code /console}, on the registry's own port and with its TLS: every
 * component and instance, their endpoints, leases and features, each interface's operations with
 * links to its WSDL, {@code .proto} and XSD, and the call figures each instance reported with its
 * last renewal. Read-only, and it shows nothing the registry's open {@code lookup} does not (no
 * credential, no secret). The page is rendered on the server, every value escaped; a small script
 * ({@code console.js}) refreshes the figures from {@code /console/live.json} every two seconds.
 *
 * <p>Under an authorization policy the console is a read like the registry's others: every request
 * needs {@code /switchboard.registry.Registry/console} (else 403), and it shows a caller only the
 * names it may read: every name when it may {@code list}, else those it may {@code lookup}; and of
 * the registry's denials those on the names it sees.
 *
 * <ul>
 * <li>{@code /console}: the page;</li>
 * <li>{@code /console/live.json}: leases and figures of every instance (see docs/console.md);</li>
 * <li>{@code /console/schema.xsd?name=N&instance=I}, {@code /console/schema.proto?...}: the
 *     interface schema and {@code .proto} the instance published, as plain text;</li>
 * <li>{@code /console/console.js}, {@code /console/console.css}.</li>
 * </ul>
 */
final class RegistryConsole implements WebHandler {
    static final String PATH = "/console";
    private static final String HTML = "text/html; charset=utf-8";
    private static final String TEXT = "text/plain; charset=utf-8";
    private static final String JSON = "application/json; charset=utf-8";
    private static final int MAX_QUERY = 2048;
    private static final int CACHED_SCHEMAS = 64;

    private final RegistryService service;
    private final String endpoint;
    private final byte[] script;
    private final byte[] style;
    /** Interfaces read from schemas, by schema text; a schema the registry accepted reads again. */
    private final SizedLru<String, Object> interfaces = SizedLru.ofEntries(CACHED_SCHEMAS);

    /** The registry's own calls its authorization policy denied; empty without a policy. */
    private final java.util.function.Supplier<List<io.switchboard.server.ServerCallStats.Denial>> denials;

    /** Who may read the console and which names; null: no policy, everyone reads everything. */
    private final io.switchboard.server.authz.AuthorizationInterceptor authorization;

    RegistryConsole(RegistryService service, String endpoint) {
        this(service, endpoint, List::of, null);
    }

    RegistryConsole(RegistryService service, String endpoint,
                    java.util.function.Supplier<List<io.switchboard.server.ServerCallStats.Denial>> denials,
                    io.switchboard.server.authz.AuthorizationInterceptor authorization) {
        this.denials = denials;
        this.authorization = authorization;
        this.service = service;
        this.endpoint = endpoint;
        this.script = resource("console.js");
        this.style = resource("console.css");
    }

    private static byte[] resource(String name) {
        try (InputStream in = RegistryConsole.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("the console's " + name + " is missing from the class path");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the console's " + name, e);
        }
    }

    @Override
    public Response get(Request request) {
        if (request.query() != null && request.query().length() > MAX_QUERY) {
            return Response.text(414, TEXT, "query too long\n");
        }
        View view;
        try {
            view = view(request.peer());
        } catch (io.switchboard.protocol.PermissionDeniedException e) {
            return Response.text(403, TEXT, "permission denied: " + RegistryPaths.console() + "\n");
        }
        return switch (request.path()) {
            case "", "/" -> Response.text(200, HTML, page(view));
            case "/live.json" -> Response.text(200, JSON, live(view).toString());
            case "/console.js" -> new Response(200, "text/javascript; charset=utf-8", script);
            case "/console.css" -> new Response(200, "text/css; charset=utf-8", style);
            case "/schema.xsd" -> document(request.query(), true, view);
            case "/schema.proto" -> document(request.query(), false, view);
            default -> Response.notFound();
        };
    }

    /**
     * What {@code peer} may see of the registry: everything without a policy or when it may
     * {@code list}, else the names it may {@code lookup}. Visibility is asked of the policy without
     * counting a denial: a name left out is not a refused call.
     *
     * @throws io.switchboard.protocol.PermissionDeniedException the policy denies it the console (counted and logged)
     */
    private View view(io.switchboard.protocol.Peer peer) {
        if (authorization == null) {
            return View.ALL;
        }
        authorization.check("soap", peer, List.of(RegistryPaths.console()));
        io.switchboard.server.authz.AuthorizationPolicy policy = authorization.policy();
        if (policy.evaluate(peer, RegistryPaths.list()).allowed()) {
            return View.ALL;
        }
        return new View(name -> policy.evaluate(peer, RegistryPaths.lookup(name)).allowed(), false);
    }

    /** The names a console reader may see, and whether that is every one. */
    record View(java.util.function.Predicate<String> names, boolean all) {
        static final View ALL = new View(name -> true, true);

        /** The registry's denials on names this view shows; a denial of no name (a list, the console) to a view of all. */
        List<io.switchboard.server.ServerCallStats.Denial> denials(
                List<io.switchboard.server.ServerCallStats.Denial> every) {
            if (all) {
                return every;
            }
            List<io.switchboard.server.ServerCallStats.Denial> shown = new ArrayList<>();
            for (io.switchboard.server.ServerCallStats.Denial d : every) {
                String name = RegistryPaths.nameOf(d.path());
                if (name != null && names.test(name)) {
                    shown.add(d);
                }
            }
            return shown;
        }
    }

    /** The instances {@code view} shows, by name then instance id. */
    private Map<String, List<ComponentEntry>> entries(View view) {
        Map<String, List<ComponentEntry>> byName = new TreeMap<>();
        for (ComponentEntry e : service.store().list()) {
            if (view.names().test(e.name())) {
                byName.computeIfAbsent(e.name(), n -> new ArrayList<>()).add(e);
            }
        }
        byName.values().forEach(l -> l.sort((a, b) -> a.instanceId().compareTo(b.instanceId())));
        return byName;
    }

    private Response document(String query, boolean xsd, View view) {
        Map<String, String> q = query(query);
        String name = q.get("name");
        String instance = q.get("instance");
        if (name == null || instance == null) {
            return Response.text(400, TEXT, "name and instance are needed\n");
        }
        if (!view.names().test(name)) {
            return Response.notFound();   // as for a name not bound: the reader learns nothing of it
        }
        for (ComponentEntry e : service.store().lookup(name)) {
            if (e.instanceId().equals(instance)) {
                String text = xsd ? e.interfaceSchema() : e.interfaceProto();
                return text == null ? Response.notFound() : Response.text(200, TEXT, text);
            }
        }
        return Response.notFound();
    }

    private static Map<String, String> query(String query) {
        Map<String, String> out = new HashMap<>();
        if (query == null) {
            return out;
        }
        for (String pair : query.split("&", 16)) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                try {
                    out.putIfAbsent(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                } catch (IllegalArgumentException malformed) {
                    // a malformed escape: the pair is ignored
                }
            }
        }
        return out;
    }

    // ---- the live figures, as JSON ----

    JsonObject live() {
        return live(View.ALL);
    }

    private JsonObject live(View view) {
        Instant now = service.clock().instant();
        Map<String, Map<String, RegistryService.Live>> live = service.live();
        JsonObject root = new JsonObject();
        root.addProperty("format", "switchboard-console-live");
        root.addProperty("version", 1);
        root.addProperty("registry", endpoint);
        root.addProperty("now", now.toString());
        JsonArray instances = new JsonArray();
        entries(view).forEach((name, list) -> {
            for (ComponentEntry e : list) {
                RegistryService.Live l = live.getOrDefault(name, Map.of()).get(e.instanceId());
                JsonObject i = new JsonObject();
                i.addProperty("name", name);
                i.addProperty("instanceId", e.instanceId());
                JsonArray endpoints = new JsonArray();
                for (Endpoint ep : e.endpoints()) {
                    JsonObject o = new JsonObject();
                    o.addProperty("protocol", ep.protocol());
                    o.addProperty("address", ep.address());
                    endpoints.add(o);
                }
                i.add("endpoints", endpoints);
                if (e.boundAt() != null) {
                    i.addProperty("boundAt", e.boundAt().toString());
                }
                if (l == null) {
                    i.add("lease", JsonNull.INSTANCE);
                    i.add("report", JsonNull.INSTANCE);
                } else {
                    JsonObject lease = new JsonObject();
                    lease.addProperty("seconds", l.leaseSeconds());
                    lease.addProperty("renewedSecondsAgo", seconds(l.renewedAt(), now));
                    lease.addProperty("expiresInSeconds", seconds(now, l.deadline()));
                    i.add("lease", lease);
                    i.add("report", l.report() == null ? JsonNull.INSTANCE : report(l.report(), now));
                }
                instances.add(i);
            }
        });
        root.add("instances", instances);
        JsonArray denied = new JsonArray();
        for (io.switchboard.server.ServerCallStats.Denial d : view.denials(denials.get())) {
            JsonObject o = new JsonObject();
            o.addProperty("identity", d.identity());
            o.addProperty("path", d.path());
            o.addProperty("count", d.count());
            denied.add(o);
        }
        root.add("denials", denied);
        return root;
    }

    private static JsonObject report(RegistryService.Report r, Instant now) {
        JsonObject o = new JsonObject();
        o.addProperty("receivedAt", r.receivedAt().toString());
        o.addProperty("receivedSecondsAgo", seconds(r.receivedAt(), now));
        o.addProperty("uptimeSeconds", r.stats().uptimeSeconds());
        JsonArray rows = new JsonArray();
        for (CallSummary.Row row : r.stats().rows()) {
            JsonObject x = new JsonObject();
            x.addProperty("operation", row.operation());
            x.addProperty("protocol", row.protocol());
            x.addProperty("calls", row.calls());
            x.addProperty("faults", row.faults());
            x.addProperty("errors", row.errors());
            x.addProperty("refusals", row.refusals());
            x.addProperty("repeats", row.repeats());
            x.addProperty("p50Micros", row.p50Micros());
            x.addProperty("p90Micros", row.p90Micros());
            x.addProperty("p99Micros", row.p99Micros());
            x.addProperty("maxMicros", row.maxMicros());
            rows.add(x);
        }
        o.add("rows", rows);
        return o;
    }

    private static double seconds(Instant from, Instant to) {
        return Math.round(Duration.between(from, to).toMillis() / 100.0) / 10.0;
    }

    // ---- the page ----

    private String page(View view) {
        Instant now = service.clock().instant();
        Map<String, List<ComponentEntry>> byName = entries(view);
        Map<String, Map<String, RegistryService.Live>> live = service.live();
        StringBuilder b = new StringBuilder(8192);
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .append("<title>Switchboard registry console</title>")
                .append("<link rel=\"stylesheet\" href=\"/console/console.css\"></head><body>\n");
        b.append("<header><h1>Switchboard registry</h1><p>")
                .append(link(endpoint, endpoint)).append(" · ").append(link(endpoint + "?wsdl", "WSDL"))
                .append(" · ").append(plural(byName.size(), "component")).append(", ")
                .append(plural(byName.values().stream().mapToInt(List::size).sum(), "instance")).append(" · ")
                .append("<span id=\"updated\">rendered ").append(h(now.truncatedTo(ChronoUnit.SECONDS).toString()))
                .append("</span></p></header>\n<main>\n");
        if (byName.isEmpty()) {
            b.append("<p class=\"empty\">No component is bound.</p>\n");
        }
        byName.forEach((name, list) -> component(b, name, list, live.getOrDefault(name, Map.of()), now));
        denied(b, view);
        b.append("</main>\n<footer>Read-only. Figures come from each instance's lease renewals; ")
                .append("<a href=\"/console/live.json\">live.json</a>.</footer>\n")
                .append("<script src=\"/console/console.js\"></script>\n</body></html>\n");
        return b.toString();
    }

    /** The registry's denied calls per identity and path, the most denied first; nothing without any. */
    private void denied(StringBuilder b, View view) {
        List<io.switchboard.server.ServerCallStats.Denial> list = view.denials(denials.get());
        if (list.isEmpty()) {
            return;
        }
        b.append("<section class=\"denials\"><h2>Denied by the authorization policy</h2>\n<table><thead><tr>")
                .append("<th>identity</th><th>path</th><th>calls</th></tr></thead><tbody>\n");
        for (io.switchboard.server.ServerCallStats.Denial d : list) {
            b.append("<tr><td>").append(h(d.identity())).append("</td><td>").append(h(d.path())).append("</td><td>")
                    .append(d.count()).append("</td></tr>\n");
        }
        b.append("</tbody></table></section>\n");
    }

    private void component(StringBuilder b, String name, List<ComponentEntry> list,
                           Map<String, RegistryService.Live> live, Instant now) {
        b.append("<section class=\"component\" data-name=\"").append(h(name)).append("\">\n<h2>").append(h(name))
                .append("</h2>\n<h3>Instances</h3>\n<table class=\"instances\"><thead><tr><th>instance</th>")
                .append("<th>endpoints</th><th>bound</th><th>lease</th><th>features</th><th>documents</th></tr>")
                .append("</thead><tbody>\n");
        for (ComponentEntry e : list) {
            RegistryService.Live l = live.get(e.instanceId());
            b.append("<tr data-instance=\"").append(h(e.instanceId())).append("\"><td class=\"id\">")
                    .append(h(e.instanceId())).append("</td><td><ul class=\"endpoints\">");
            for (Endpoint ep : e.endpoints()) {
                b.append("<li><span class=\"protocol\">").append(h(ep.protocol())).append("</span> ")
                        .append(link(ep.address(), ep.address())).append("</li>");
            }
            b.append("</ul></td><td>").append(e.boundAt() == null ? "" : h(ago(e.boundAt(), now)) + " ago")
                    .append("</td><td class=\"lease\">").append(h(lease(e, l, now))).append("</td><td>")
                    .append(h(String.join(", ", e.features()))).append("</td><td class=\"documents\">");
            List<String> docs = new ArrayList<>();
            if (e.wsdlUrl() != null) {
                docs.add(link(e.wsdlUrl(), "WSDL"));
            }
            String q = "?name=" + url(e.name()) + "&instance=" + url(e.instanceId());
            if (e.interfaceProto() != null) {
                docs.add("<a href=\"" + h("/console/schema.proto" + q) + "\">.proto</a>");
            }
            if (e.interfaceSchema() != null) {
                docs.add("<a href=\"" + h("/console/schema.xsd" + q) + "\">XSD</a>");
            }
            b.append(String.join(" · ", docs)).append("</td></tr>\n");
        }
        b.append("</tbody></table>\n");
        interfaceOf(b, list);
        b.append("<h3>Calls</h3>\n");
        for (ComponentEntry e : list) {
            RegistryService.Live l = live.get(e.instanceId());
            RegistryService.Report r = l == null ? null : l.report();
            b.append("<table class=\"live\" data-name=\"").append(h(name)).append("\" data-instance=\"")
                    .append(h(e.instanceId())).append("\"><caption>").append(h(e.instanceId()))
                    .append(" <span class=\"report\">").append(h(reportNote(r, now))).append("</span></caption>")
                    .append("<thead><tr><th>operation</th><th>protocol</th>")
                    .append("<th title=\"calls that reached the operation, repeats included\">calls</th>")
                    .append("<th title=\"between the last two reports\">calls/s</th>")
                    .append("<th title=\"answered with the declared fault\">faults</th>")
                    .append("<th title=\"failed otherwise\">errors</th>")
                    .append("<th title=\"refused by the protocol before the operation ran\">refusals</th>")
                    .append("<th title=\"a call id seen before: the client's fallback or failover after a failure "
                            + "mid-call, answered without running again\">repeats</th>")
                    .append("<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>");
            if (r != null) {
                for (CallSummary.Row row : r.stats().rows()) {
                    b.append("<tr><td>").append(h(row.operation())).append("</td><td>").append(h(row.protocol()))
                            .append("</td><td class=\"n\">").append(row.calls()).append("</td><td class=\"n\">–")
                            .append("</td><td class=\"n\">").append(row.faults()).append("</td><td class=\"n\">")
                            .append(row.errors()).append("</td><td class=\"n\">").append(row.refusals())
                            .append("</td><td class=\"n\">").append(row.repeats()).append("</td><td class=\"n\">")
                            .append(ms(row.p50Micros())).append("</td><td class=\"n\">").append(ms(row.p90Micros()))
                            .append("</td><td class=\"n\">").append(ms(row.p99Micros())).append("</td><td class=\"n\">")
                            .append(ms(row.maxMicros())).append("</td></tr>");
                }
            }
            b.append("</tbody></table>\n");
        }
        b.append("</section>\n");
    }

    /** The operations of the first instance whose schema reads (instances of one name share an interface). */
    private void interfaceOf(StringBuilder b, List<ComponentEntry> list) {
        for (ComponentEntry e : list) {
            if (e.interfaceSchema() == null) {
                continue;
            }
            // read outside any lock, so one large schema holds up no other page; two pages may read it both
            Object read = interfaces.get(e.interfaceSchema());
            if (read == null) {
                try {
                    read = SchemaReader.read(e.interfaceSchema());
                } catch (RuntimeException ex) {   // SchemaException among them
                    read = "the interface schema cannot be read: " + ex.getMessage();
                }
                interfaces.put(e.interfaceSchema(), read);
            }
            b.append("<h3>Interface</h3>\n");
            if (read instanceof InterfaceModel m) {
                b.append("<table class=\"interface\"><thead><tr><th>operation</th><th>marks</th><th>declared fault</th>")
                        .append("</tr></thead><tbody>");
                for (OperationModel op : m.operations()) {
                    List<String> marks = new ArrayList<>();
                    if (op.idempotent()) {
                        marks.add("<span class=\"mark idempotent\">idempotent</span>");
                    }
                    if (op.oneWay()) {
                        marks.add("<span class=\"mark one-way\">one-way</span>");
                    }
                    b.append("<tr><td>").append(h(op.name())).append("</td><td>").append(String.join(" ", marks))
                            .append("</td><td>").append(op.fault() == null ? "" : h(op.fault().name()))
                            .append("</td></tr>");
                }
                b.append("</tbody></table>\n");
            } else {
                b.append("<p class=\"problem\">").append(h(String.valueOf(read))).append("</p>\n");
            }
            return;
        }
    }

    private static String lease(ComponentEntry e, RegistryService.Live l, Instant now) {
        if (!e.leased()) {
            return "none (until unbound)";
        }
        if (l == null) {
            return e.leaseSeconds() + " s, held by another registry server";
        }
        return l.leaseSeconds() + " s, renewed " + ago(l.renewedAt(), now) + " ago, runs out in "
                + ago(now, l.deadline());
    }

    private static String reportNote(RegistryService.Report r, Instant now) {
        if (r == null) {
            return "no figures: the instance has not reported any (not renewed yet, no lease, another registry "
                    + "server holds its lease, or its server predates reports)";
        }
        return "figures from " + ago(r.receivedAt(), now) + " ago, counted over " + r.stats().uptimeSeconds() + " s";
    }

    private static String plural(int n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }

    private static String ago(Instant from, Instant to) {
        long s = Math.max(0, Duration.between(from, to).toSeconds());
        return s < 120 ? s + " s" : s < 7200 ? s / 60 + " min" : s / 3600 + " h";
    }

    private static String ms(Long micros) {
        return micros == null ? "–" : String.format(java.util.Locale.ROOT, "%.2f", micros / 1000.0);
    }

    /** A link when {@code url} is http(s), else the text alone: nothing else becomes an href. */
    private static String link(String url, String text) {
        String lower = url.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("http://") || lower.startsWith("https://")) {
            return "<a href=\"" + h(url) + "\">" + h(text) + "</a>";
        }
        return h(text);
    }

    private static String url(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** Escapes text for HTML content and quoted attribute values. */
    static String h(String s) {
        StringBuilder out = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}

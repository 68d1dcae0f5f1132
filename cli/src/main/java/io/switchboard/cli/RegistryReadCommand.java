package io.switchboard.cli;

import com.google.gson.GsonBuilder;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What {@code list} and {@code lookup} share: the registry to read, how to reach it (TLS, a bearer
 * token for a registry whose policy asks who reads), and how entries are printed (a table, or JSON
 * for scripts). A command says only what it reads.
 */
abstract class RegistryReadCommand implements Callable<Integer> {
    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint.")
    String registry;

    @Option(names = "--json", description = "Print JSON for scripts.")
    boolean json;

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Mixin
    TokenOptions.Caller token = new TokenOptions.Caller();

    /** The entries this command reads. */
    abstract List<ComponentEntry> read(RegistryClient client);

    /** The exit code for an answer without entries (after printing it); 0 by default. */
    int whenEmpty() {
        return 0;
    }

    @Override
    public Integer call() {
        try (RegistryClient client = RegistryClient.connect(RegistryClient.split(registry), null,
                token.client(tls.client()))) {
            List<ComponentEntry> entries = read(client);
            if (entries.isEmpty() && !json && whenEmpty() != 0) {
                return whenEmpty();
            }
            System.out.println(json ? json(entries) : table(entries));
            return entries.isEmpty() ? whenEmpty() : 0;
        }
    }

    static String table(List<ComponentEntry> entries) {
        if (entries.isEmpty()) {
            return "(no entries)";
        }
        StringBuilder b = new StringBuilder(String.format("%-24s %-38s %-8s %s%n", "NAME", "INSTANCE", "PROTOCOL",
                "ADDRESS"));
        for (ComponentEntry e : entries) {
            for (Endpoint ep : e.endpoints()) {
                b.append(String.format("%-24s %-38s %-8s %s%n", e.name(), e.instanceId(), ep.protocol(), ep.address()));
            }
        }
        return b.toString().stripTrailing();
    }

    static String json(List<ComponentEntry> entries) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (ComponentEntry e : entries) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", e.name());
            m.put("instanceId", e.instanceId());
            m.put("boundAt", e.boundAt() == null ? null : e.boundAt().toString());
            m.put("wsdl", e.wsdlUrl());
            m.put("leaseSeconds", e.leaseSeconds());
            List<Map<String, String>> eps = new ArrayList<>();
            for (Endpoint ep : e.endpoints()) {
                eps.add(Map.of("protocol", ep.protocol(), "address", ep.address()));
            }
            m.put("endpoints", eps);
            out.add(m);
        }
        return new GsonBuilder().disableHtmlEscaping().serializeNulls().setPrettyPrinting().create().toJson(out);
    }
}

package io.switchboard.cli;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import com.google.gson.GsonBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ./switchboard list}: every entry of a registry. */
@Command(name = "list", mixinStandardHelpOptions = true, description = "List the entries of a registry.")
final class ListCommand implements Callable<Integer> {
    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint.")
    String registry;

    @Option(names = "--json", description = "Print JSON for scripts.")
    boolean json;

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Override
    public Integer call() {
        try (RegistryClient client = RegistryClient.connect(RegistryClient.split(registry), null, tls.client())) {
            List<ComponentEntry> entries = client.list();
            System.out.println(json ? EntryFormat.json(entries) : EntryFormat.table(entries));
        }
        return 0;
    }

    /** Output shared by list and lookup. */
    static final class EntryFormat {
        private EntryFormat() {
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
}

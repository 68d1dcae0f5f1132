package io.switchboard.cli;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ./switchboard lookup NAME}: the instances bound under one name. */
@Command(name = "lookup", mixinStandardHelpOptions = true, description = "Show the instances bound under a name.")
final class LookupCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "The name to look up.")
    String name;

    @Option(names = "--registry", required = true, description = "The registry's SOAP endpoint.")
    String registry;

    @Option(names = "--json", description = "Print JSON for scripts.")
    boolean json;

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Override
    public Integer call() {
        try (RegistryClient client = RegistryClient.connect(RegistryClient.split(registry), null, tls.client())) {
            List<ComponentEntry> entries = client.lookup(name);
            if (entries.isEmpty() && !json) {
                System.err.println(name + " is not bound");
                return 3;
            }
            System.out.println(json ? ListCommand.EntryFormat.json(entries) : ListCommand.EntryFormat.table(entries));
            return entries.isEmpty() ? 3 : 0;
        }
    }
}

package io.switchboard.cli;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code ./switchboard list}: every entry of a registry. */
@Command(name = "list", mixinStandardHelpOptions = true, description = "List the entries of a registry.")
final class ListCommand extends RegistryReadCommand {
    @Override
    List<ComponentEntry> read(RegistryClient client) {
        return client.list();
    }
}

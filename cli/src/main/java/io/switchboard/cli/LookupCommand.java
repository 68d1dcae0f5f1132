package io.switchboard.cli;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code ./switchboard lookup NAME}: the instances bound under one name; exit 3 when none is. */
@Command(name = "lookup", mixinStandardHelpOptions = true, description = "Show the instances bound under a name.")
final class LookupCommand extends RegistryReadCommand {
    @Parameters(index = "0", description = "The name to look up.")
    String name;

    @Override
    List<ComponentEntry> read(RegistryClient client) {
        return client.lookup(name);
    }

    @Override
    int whenEmpty() {
        return 3;
    }

    @Override
    public Integer call() {
        Integer code = super.call();
        if (code == 3 && !json) {
            System.err.println(name + " is not bound");
        }
        return code;
    }
}

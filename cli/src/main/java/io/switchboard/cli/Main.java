package io.switchboard.cli;

import io.switchboard.bench.BenchCommand;
import io.switchboard.cli.scaffold.NewCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ./switchboard} command line.
 *
 * <pre>{@code
 * ./switchboard demo
 * ./switchboard registry --port 8081
 * ./switchboard serve echo --registry http://127.0.0.1:8081/axis2/services/Registry
 * ./switchboard new /tmp/stats --component Stats --package org.acme.stats
 * }</pre>
 */
@Command(name = "switchboard", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Multi-protocol components: SOAP's reach, a binary protocol's speed, one generated stub.",
        subcommands = {DemoCommand.class, RegistryCommand.class, ServeCommand.class, ListCommand.class, BenchCommand.class,
            LookupCommand.class, CallCommand.class, LoadCommand.class, TopCommand.class, RegistryBenchCommand.class, NewCommand.class,
            CompileCommand.class, CommandLine.HelpCommand.class})
public final class Main {
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs one command as the script would, without exiting; returns its exit status. */
    public static int run(String... args) {
        TracingSetup.installFromEnvironment(args.length > 0 ? args[0] : null);   // OTEL_*: see docs/tracing.md
        CommandLine cmd = new CommandLine(new Main());
        cmd.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("error: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            return 1;
        });
        return cmd.execute(args);
    }
}

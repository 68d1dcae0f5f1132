package io.switchboard.bench.jmh;

import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * Runs the JMH micro-benchmarks of this package from {@code ./switchboard bench --jmh}: the same
 * as {@code org.openjdk.jmh.Main}, but returns an exit code instead of calling {@code System.exit}.
 * JMH forks its measuring JVMs with this JVM's class path, so run it from a plain {@code java}.
 *
 * <pre>{@code
 * ./switchboard bench --jmh Negotiation -- -f 1 -wi 3 -w 1 -i 5 -r 1
 * ./switchboard bench --jmh 'Encoder.*binary' -- -p payload=doubles:1000000 -prof gc
 * }</pre>
 */
public final class JmhLauncher {
    private JmhLauncher() {
    }

    /** Runs the benchmarks matching {@code regex} with JMH's own command-line {@code options}; 0 when all ran. */
    public static int run(String regex, List<String> options) throws RunnerException {
        List<String> args = new ArrayList<>(options);
        args.add(regex);
        CommandLineOptions cmd;
        try {
            cmd = new CommandLineOptions(args.toArray(String[]::new));
        } catch (CommandLineOptionException e) {
            System.err.println("bench --jmh: " + e.getMessage());
            return 1;
        }
        Runner runner = new Runner(cmd);
        if (cmd.shouldHelp()) {
            try {
                cmd.showHelp();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        } else if (cmd.shouldList()) {
            runner.list();
        } else if (cmd.shouldListProfilers()) {
            cmd.listProfilers();
        } else {
            runner.run();
        }
        return 0;
    }
}

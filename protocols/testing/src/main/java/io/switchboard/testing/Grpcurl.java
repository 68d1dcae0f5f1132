package io.switchboard.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * grpcurl (the Go command-line gRPC client) for the tests that check a component from outside
 * Java, run like the Python peers, with its output in files. {@code scripts/test-prerequisites.sh}
 * (run once by {@code mvn verify}) installs it with {@code go install
 * github.com/fullstorydev/grpcurl/cmd/grpcurl@}{@value #VERSION} into the checkout's
 * {@code target/tools/}; a test finding it missing fails saying so (see {@link Prerequisites}).
 *
 * <pre>{@code
 * PythonPeers.Result list = Grpcurl.run(dir, "list", Duration.ofMinutes(1), "-plaintext", "127.0.0.1:" + port, "list");
 * }</pre>
 */
public final class Grpcurl {
    public static final String VERSION = "v1.9.3";

    private Grpcurl() {
    }

    /** The grpcurl binary; fails the test (or skips it, when turned off) if it is not installed. */
    public static Path binary() {
        Path binary = PythonPeers.repositoryRoot().resolve("target/tools/grpcurl-" + VERSION).resolve("grpcurl");
        Prerequisites.require("grpcurl", Files.isExecutable(binary) ? null : "grpcurl " + VERSION
                + " is not installed at " + binary);
        return binary;
    }

    /** Runs grpcurl with {@code args} to its end within {@code limit}; output in {@code dir/NAME.out} and {@code .err}. */
    public static PythonPeers.Result run(Path dir, String name, Duration limit, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(binary().toString());
        command.addAll(List.of(args));
        return PythonPeers.run(dir, name, limit, Map.of(), command.toArray(String[]::new));
    }
}

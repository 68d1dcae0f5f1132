package io.switchboard.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/**
 * grpcurl (the Go command-line gRPC client) for the tests that check a component from outside
 * Java: installed on first use with {@code go install github.com/fullstorydev/grpcurl/cmd/grpcurl@}{@value #VERSION}
 * into the checkout's {@code target/tools/} (kept there for later runs, never a manual step), and
 * run like the Python peers, with its output in files. Where Go is absent the test is skipped
 * with a message that says so; a Go that fails to install it fails the test.
 *
 * <pre>{@code
 * PythonPeers.Result list = Grpcurl.run(dir, "list", Duration.ofMinutes(1), "-plaintext", "127.0.0.1:" + port, "list");
 * }</pre>
 */
public final class Grpcurl {
    public static final String VERSION = "v1.9.3";
    public static final String MODULE = "github.com/fullstorydev/grpcurl/cmd/grpcurl";

    private Grpcurl() {
    }

    /** The grpcurl binary, installed first if it is not in the cache; skips the test where Go is absent. */
    public static Path binary() throws IOException, InterruptedException {
        Path dir = PythonPeers.repositoryRoot().resolve("target/tools/grpcurl-" + VERSION);
        Path binary = dir.resolve("grpcurl");
        if (Files.isExecutable(binary)) {
            return binary;
        }
        String go = go();
        Assumptions.assumeTrue(go != null, "grpcurl " + VERSION + " is not installed under " + dir
                + " and Go is absent (no `go` on PATH, in $GOROOT/bin or /usr/local/go/bin), so it cannot be installed");
        Files.createDirectories(dir);
        // one install at a time (two test JVMs); the binary appears whole, by a rename
        try (FileChannel lockFile = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock ignored = lockFile.lock()) {
            if (Files.isExecutable(binary)) {
                return binary;
            }
            Path staging = Files.createTempDirectory(dir, "install-");
            PythonPeers.Result r = PythonPeers.run(staging, "go-install", Duration.ofMinutes(10),
                    Map.of("GOBIN", staging.toString(), "GOFLAGS", "-buildvcs=false"),
                    go, "install", MODULE + "@" + VERSION);
            Path built = staging.resolve("grpcurl");
            if (r.exit() != 0 || !Files.isExecutable(built)) {
                throw new AssertionError("go install " + MODULE + "@" + VERSION + " failed: " + r.report("go install"));
            }
            Files.move(built, binary, StandardCopyOption.ATOMIC_MOVE);
        }
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

    /** The go command: on PATH, in $GOROOT/bin, or /usr/local/go/bin; null when there is none. */
    static String go() {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String p : path.split(java.io.File.pathSeparator)) {
                if (!p.isEmpty()) {
                    candidates.add(Path.of(p, "go"));
                }
            }
        }
        String goroot = System.getenv("GOROOT");
        if (goroot != null) {
            candidates.add(Path.of(goroot, "bin", "go"));
        }
        candidates.add(Path.of("/usr/local/go/bin/go"));
        return candidates.stream().filter(Files::isExecutable).findFirst().map(Path::toString).orElse(null);
    }
}

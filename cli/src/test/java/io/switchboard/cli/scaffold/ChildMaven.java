package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Maven run on a project outside the reactor, as a user would, on a {@link PrivateMavenRepository}:
 * offline first, and online only when an artifact is missing that the reactor build did not need
 * (it then lands in the shared folders).
 *
 * <pre>{@code
 * String log = ChildMaven.build(projectDir, repository, logDir.resolve("maven"), "package");
 * }</pre>
 */
final class ChildMaven {
    /** Options of a JVM that lives through start-up and code run a few times: the JIT's first tier is enough. */
    static final String SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

    private ChildMaven() {
    }

    /** Runs {@code goals} in {@code dir}; returns the log of the run that succeeded, fails the test if none did. */
    static String build(Path dir, Path repository, Path logPrefix, String... goals) throws Exception {
        String offline = run(dir, repository, true, logPrefix, goals);
        if (offline.contains("BUILD SUCCESS")) {
            System.out.println("the build of " + dir.getFileName() + " ran offline");
            return offline;
        }
        assertTrue(offline.contains("in offline mode"), "the build failed:\n" + offline);
        System.out.println("the build of " + dir.getFileName() + " needs artifacts the reactor did not fetch; online");
        String online = run(dir, repository, false, logPrefix, goals);
        assertTrue(online.contains("BUILD SUCCESS"), "the build failed online too:\n" + online);
        return online;
    }

    private static String run(Path dir, Path repository, boolean offline, Path logPrefix, String... goals)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(mvn(), "-B", "-ntp", "-Dmaven.repo.local=" + repository));
        if (offline) {
            cmd.add("-o");
        }
        // the project's tests start servers and, in a Spring project, a context: a few seconds of start-up each,
        // where C2's compiles cost CPU they do not pay back (the project sets no argLine of its own)
        cmd.add("-DargLine=" + SHORT_JVM);
        cmd.addAll(List.of(goals));
        Path log = Path.of(logPrefix + (offline ? "-offline.log" : "-online.log"));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        // a short build: leaves the shared cores to the rest
        pb.environment().put("MAVEN_OPTS", SHORT_JVM);
        Process p = pb.start();
        try {
            assertTrue(p.waitFor(4, TimeUnit.MINUTES), "maven did not finish in 4 minutes: " + cmd);
        } finally {
            p.destroyForcibly();
        }
        return Files.readString(log);
    }

    /** The Maven running this build (the pom passes its home), else the one on the PATH. */
    private static String mvn() {
        String home = System.getProperty("switchboard.test.mavenHome");
        if (home != null && !home.isBlank() && !home.contains("${")) {
            Path bin = Path.of(home, "bin", "mvn");
            if (Files.isExecutable(bin)) {
                return bin.toString();
            }
        }
        return "mvn";
    }
}

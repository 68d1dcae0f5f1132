package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testing.ChildJvm;
import io.switchboard.testing.UnusedPorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/security.md's worked example, run as the page has it: its shell blocks, in order, in an
 * empty directory where {@code ../switchboard} is this build's command line; then every output
 * line the page shows must have been printed. So the page cannot drift from what the commands do.
 */
class WorkedExampleTest {
    static final String SECTION = "## A worked example: two teams, one registry";
    private static final String PAGE_PORT = "8081";
    private static final Pattern BLOCK = Pattern.compile("(?ms)^```(\\w+)\\n(.*?)^```$");

    @TempDir
    Path dir;

    @Test
    void theWorkedExampleRunsAsDocumented() throws Exception {
        // the page's registry port, moved to a free one: tests share this machine
        String port = String.valueOf(UnusedPorts.port());
        String section = section(Files.readString(securityPage(), StandardCharsets.UTF_8)).replace(PAGE_PORT, port);
        String script = blocks(section, "sh");
        List<String> shown = blocks(section, "text").lines().filter(l -> !l.isBlank()).toList();
        // a page whose example lost its steps or its output would pass vacuously
        for (String step : List.of("registry --port " + port, "--authz registry-policy.json", "serve echo",
                "--token-file team-b.jwt", "--jwt-keys")) {
            assertTrue(script.contains(step), "the example no longer shows " + step);
        }
        assertTrue(shown.size() >= 4, "the example shows no output: " + shown);
        // a server's lines are shown once it printed its last start-up line: waiting for its first one raced
        // the lines after it on a loaded machine
        for (String lastLine : List.of("up registry.log store", "up echo.log \"bound in\"")) {
            assertTrue(script.contains(lastLine), "the example shows a server's log before it is whole: no " + lastLine);
        }

        writeLauncher(dir.resolve("switchboard"));
        Path output = dir.resolve("output.txt");
        Process bash = new ProcessBuilder("bash", "-c", script).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile()).start();
        try {
            assertTrue(bash.waitFor(6, TimeUnit.MINUTES), "the example did not finish:\n" + read(output));
        } finally {
            bash.descendants().forEach(ProcessHandle::destroyForcibly);
            bash.destroyForcibly();
        }
        String printed = read(output);   // its exit status is the stopped registry's (143, SIGTERM)

        for (String line : shown) {
            assertTrue(printed.contains(line), "the page shows '" + line + "', the commands printed:\n" + printed);
        }
        // beside the page: what the example is there to show
        assertTrue(printed.contains("values = [1.5, 2.5]"), printed);
        assertEquals(4, count(printed, "error: permission denied"),
                "team B's call, team A's call of another operation, a call without a token and team B's bind of "
                        + "team A's name are each denied:\n" + printed);
        Path work = dir.resolve("worked-example");
        for (String team : List.of("team-a.jwt", "team-b.jwt")) {
            String token = Files.readString(work.resolve(team)).strip();
            assertTrue(token.split("\\.").length == 3, team + " is not a JWT");
            assertFalse(printed.contains(token), "a token was printed");
            assertFalse(printed.contains(token.substring(token.lastIndexOf('.') + 1)), "a token's signature was printed");
        }
        assertFalse(printed.contains(Files.readString(work.resolve("pw")).strip()), "the TLS password was printed");
    }

    private static Path securityPage() {
        Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        return module.getParent().resolve("docs").resolve("security.md");
    }

    /** The page's worked example, up to the next section. */
    static String section(String page) {
        int start = page.indexOf(SECTION);
        assertTrue(start >= 0, "security.md has no section '" + SECTION + "'");
        int end = page.indexOf("\n## ", start + SECTION.length());
        return page.substring(start, end < 0 ? page.length() : end);
    }

    /** The fenced blocks of one language, in order, joined. */
    static String blocks(String markdown, String language) {
        StringBuilder all = new StringBuilder();
        Matcher m = BLOCK.matcher(markdown);
        while (m.find()) {
            if (m.group(1).equals(language)) {
                all.append(m.group(2)).append('\n');
            }
        }
        return all.toString();
    }

    /** A {@code switchboard} that runs this build's command line, as the repository's launcher does. */
    private static void writeLauncher(Path file) throws IOException {
        List<String> java = ChildJvm.javaCommand(List.of("-Xmx256m"), Main.class);
        StringBuilder line = new StringBuilder("#!/usr/bin/env bash\nexec");
        for (String word : java) {
            line.append(" '").append(word.replace("'", "'\\''")).append('\'');
        }
        Files.writeString(file, line.append(" \"$@\"\n"));
        assertTrue(file.toFile().setExecutable(true));
    }

    private static int count(String text, String word) {
        int n = 0;
        for (int i = text.indexOf(word); i >= 0; i = text.indexOf(word, i + 1)) {
            n++;
        }
        return n;
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}

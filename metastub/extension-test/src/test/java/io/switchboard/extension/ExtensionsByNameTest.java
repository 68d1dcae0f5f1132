package io.switchboard.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.cli.Main;
import io.switchboard.testing.ChildJvm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A policy and a store that only this module defines (two classes and two lines in
 * {@code META-INF/services}) are accepted by name by the command line: {@code registry --store
 * journal:PATH} in its own JVM, {@code call --policy last-common} here. Nothing outside this module
 * names them.
 */
class ExtensionsByNameTest {
    @TempDir
    Path dir;

    @Test
    void theCommandLineTakesAPolicyAndAStoreFromTheClassPathByName() throws Exception {
        Path journal = dir.resolve("binds.txt");
        try (ChildJvm registry = ChildJvm.start(dir.resolve("registry.err"), Main.class,
                "registry", "--port", "0", "--store", "journal:" + journal)) {
            String url = registry.await("registry");
            try (ChildJvm echo = ChildJvm.start(dir.resolve("echo.err"), Main.class, "serve", "echo", "--registry", url)) {
                echo.await("serving");
                callThroughTheCommandLine(url, journal);
            }
        }
    }

    private void callThroughTheCommandLine(String url, Path journal) throws Exception {
        assertEquals("bind Echo", Files.readString(journal).strip(), "the registry kept the entry in the journal store");

        int before = LastCommonPolicyProvider.CHOICES.get();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        int status;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            status = Main.run("call", "Echo", "echoDoubles", "values=1.5 -0.0", "--policy", "last-common",
                    "--registry", url);
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, printed + err.toString(StandardCharsets.UTF_8));
        assertTrue(printed.contains("values = [1.5, -0.0]"), printed);
        assertEquals(before + 1, LastCommonPolicyProvider.CHOICES.get(), "the call's protocol was chosen by last-common");
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("# soap "), "the last common protocol, SOAP: " + err);
    }
}

package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class VersionProviderTest {
    /** The version the build was made from, as Maven knows it (set by the build for the tests). */
    private static final String BUILD_VERSION = System.getProperty("switchboard.test.version");

    @Test
    void versionPrintsTheBuildsVersionAndTheJavaThatRunsIt() {
        assertTrue(BUILD_VERSION != null && !BUILD_VERSION.isBlank(), "the build sets switchboard.test.version");
        String[] lines = CommandOutput.stdout(0, "--version").strip().split("\\R");
        assertEquals("switchboard " + BUILD_VERSION, lines[0]);
        assertTrue(lines[1].startsWith("Java " + System.getProperty("java.version")), lines[1]);
    }

    @Test
    void aMissingOrUnfilledVersionFileIsAnErrorNotAVersion() {
        assertThrows(IllegalStateException.class, () -> VersionProvider.versionFrom(null));
        for (String text : new String[] {"version=${project.version}\n", "version=\n", "# nothing\n"}) {
            assertThrows(IllegalStateException.class,
                    () -> VersionProvider.versionFrom(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8))),
                    text);
        }
    }
}

package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The demo's Python stage asked to skip: one line, no venv made, no process started. */
class PythonDemoTest {
    @Test
    void noPythonSkipsTheStageWithOneLine() {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        DemoStageResult result = new PythonDemo(new PrintStream(buffer, true, StandardCharsets.UTF_8))
                .run(null, "http://127.0.0.1:1/unused", "unused", null, true);
        assertNull(result.ok(), "a skipped stage is neither right nor wrong");
        assertEquals("== python: the echo component written in Python, called from Java ==\nskipped    --no-python\n\n",
                buffer.toString(StandardCharsets.UTF_8));
    }
}

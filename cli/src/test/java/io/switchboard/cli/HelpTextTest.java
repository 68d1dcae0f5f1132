package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every command's {@code --help} renders as written: picocli reads descriptions as format
 * strings, and a stray {@code %} (say "under 2% of") makes it print a warning and show the raw
 * text instead.
 */
class HelpTextTest {
    @Test
    void everyCommandsHelpRendersWithoutFormatWarnings() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int rendered = 0;
        try {
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            CommandLine main = new CommandLine(new Main());
            assertTrue(main.getUsageMessage().contains("Usage: switchboard"));
            for (Map.Entry<String, CommandLine> sub : main.getSubcommands().entrySet()) {
                String usage = sub.getValue().getUsageMessage();
                assertTrue(usage.contains("Usage: switchboard " + sub.getKey()), usage);
                rendered++;
            }
        } finally {
            System.setErr(err);
        }
        assertTrue(rendered >= 9, rendered + " subcommands");
        assertEquals("", captured.toString(StandardCharsets.UTF_8), "picocli warned while rendering help");
    }
}

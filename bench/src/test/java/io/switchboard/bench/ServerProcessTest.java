package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench server's start: its ready line read, a server that never says it is ready stopped,
 * and the client's page-size flags passed on.
 */
class ServerProcessTest {
    @TempDir
    Path dir;

    @Test
    void theReadyLinesValuesAreRead() throws Exception {
        // stdin closed by close(): the shell's read ends and it exits, as the server does on "quit"
        try (ServerProcess server = new ServerProcess(List.of("sh", "-c", "echo READY socket=4100 pid=7; read line"),
                dir.resolve("server.log"), Duration.ofSeconds(30))) {
            assertEquals("4100", server.get("socket"));
            assertEquals("7", server.get("pid"));
        }
    }

    @Test
    void aServerSilentPastTheTimeoutIsStoppedWithAReason() {
        long start = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> new ServerProcess(List.of("sleep", "600"),
                dir.resolve("server.log"), Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains("did not say it was ready within 1 s"), e.getMessage());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(60).toNanos(), "stopped, not waited out");
    }

    @Test
    void aServerThatExitsFirstSaysSo() {
        IOException e = assertThrows(IOException.class, () -> new ServerProcess(List.of("sh", "-c", "echo starting; exit 3"),
                dir.resolve("server.log"), Duration.ofSeconds(30)));
        assertTrue(e.getMessage().contains("exited before it was ready"), e.getMessage());
    }

    @Test
    void onlyThePageSizeFlagsArePassedOnToTheServer() {
        assertEquals(List.of("-XX:+UseTransparentHugePages", "-XX:LargePageSizeInBytes=2m", "-XX:-UseLargePages"),
                ServerProcess.pageSizeFlags(List.of("-Xms1g", "-XX:+UseTransparentHugePages", "-XX:+UseG1GC",
                        "-XX:LargePageSizeInBytes=2m", "-XX:-UseLargePages", "-Dnote=-XX:+UseLargePages",
                        "-XX:+UseTransparentHugePagesX", "-javaagent:x.jar=-XX:+UseLargePages")));
        assertEquals(List.of(), ServerProcess.pageSizeFlags(List.of("-Xmx2g", "-XX:+UseG1GC")));
    }
}

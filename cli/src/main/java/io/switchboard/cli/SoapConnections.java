package io.switchboard.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Counts the TCP connections established to a local port from the kernel's tables (Linux
 * {@code /proc/net/tcp} and {@code tcp6}): the registry's SOAP connections as its host sees them,
 * whichever JVM holds the other end. -1 where there are no such tables.
 */
final class SoapConnections {
    private static final String ESTABLISHED = "01";

    private SoapConnections() {
    }

    static int establishedTo(int port) {
        int n = -1;
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.isReadable(p)) {
                continue;
            }
            n = Math.max(n, 0);
            try {
                List<String> lines = Files.readAllLines(p);
                for (String line : lines.subList(1, lines.size())) {
                    String[] f = line.trim().split("\\s+");
                    String local = f[1];
                    if (Integer.parseInt(local.substring(local.indexOf(':') + 1), 16) == port && f[3].equals(ESTABLISHED)) {
                        n++;
                    }
                }
            } catch (IOException e) {
                return -1;
            }
        }
        return n;
    }
}

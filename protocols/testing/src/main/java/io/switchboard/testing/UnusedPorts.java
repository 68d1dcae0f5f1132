package io.switchboard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A TCP port for a test to give a server of another process, or to call with nothing listening:
 * one below the kernel's ephemeral range, free when chosen. A port taken with
 * {@code new ServerSocket(0)} and closed again is one the kernel hands out next to any socket
 * bound to port 0 or connecting out, and the suite's servers and clients make such sockets all the
 * time beside each other: a registry started on it later found it taken ("Failed to bind"), and
 * its clients talked to whatever had it. Below the range only a port a test names itself can
 * collide, and these are drawn at random from thousands.
 *
 * <pre>{@code
 * int port = UnusedPorts.port();
 * Process registry = new ProcessBuilder("switchboard", "registry", "--port", String.valueOf(port)).start();
 * }</pre>
 */
public final class UnusedPorts {
    /** Where the kernel's ephemeral ports begin when the system does not say (Linux's default). */
    static final int DEFAULT_EPHEMERAL_LOW = 32768;
    /** Ports below this are left to well-known and registered services. */
    static final int LOWEST = 10000;

    private UnusedPorts() {
    }

    /** A port below the ephemeral range that nothing on the loopback address listens on now. */
    public static int port() {
        int high = ephemeralLow();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, high);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // another one
            }
        }
        throw new UncheckedIOException(new IOException("no free port in " + LOWEST + "-" + (high - 1)
                + " after 200 tries"));
    }

    /** The first port of the kernel's ephemeral range ({@code ip_local_port_range}), at least {@link #LOWEST} + 1000. */
    static int ephemeralLow() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).strip();
            int low = Integer.parseInt(range.split("\\s+")[0]);
            return Math.max(low, LOWEST + 1000);
        } catch (IOException | RuntimeException notLinux) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }
}

package io.switchboard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This test process as a server sees it over a Unix socket: its uid ({@code SO_PEERCRED}), the
 * principal {@code uid:<n>} of a call without a token.
 *
 * <pre>{@code
 * assertEquals("uid:" + ThisProcess.uid(), peer.principal());
 * }</pre>
 */
public final class ThisProcess {
    private ThisProcess() {
    }

    /** This process's uid, as the kernel gives it to the other end of a Unix socket. */
    public static int uid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

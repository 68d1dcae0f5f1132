package io.switchboard.server.authz;

import io.netty.channel.epoll.Epoll;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * tcp over its Unix socket: a plain call is its process's uid ({@code SO_PEERCRED}), allowed when
 * the policy names that uid and denied when it names another; tokens as over TCP. Where epoll is
 * missing the server has no socket, and a plain call is anonymous over TCP.
 */
class TcpUnixAuthorizationTest extends AuthorizationMatrix {
    @Override
    protected String protocolName() {
        return "tcp";
    }

    @Override
    protected String plainPrincipal() {
        return Epoll.isAvailable() ? "uid:" + ownUid() : null;
    }

    private static int ownUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.switchboard.protocol.tcp;

import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.ssl.SslHandler;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.spi.CallerIdentity;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a tcp connection proves of its peer: over the Unix socket the uid of the process at the
 * other end ({@code SO_PEERCRED}, principal {@code uid:1000}), over TLS the client certificate's
 * principal, otherwise nothing (anonymous, with its address).
 */
final class ConnectionPeers {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionPeers.class);

    private ConnectionPeers() {
    }

    static Peer of(Channel channel) {
        if (channel instanceof EpollDomainSocketChannel unix) {
            DomainSocketAddress local = unix.localAddress();
            String path = local == null ? null : local.path();
            try {
                return Peer.of("uid:" + unix.peerCredentials().uid(), Peer.Authentication.UNIX_SOCKET, path);
            } catch (IOException e) {
                // the kernel always knows a connected peer; should it not, the caller proved nothing
                LOG.debug("no peer credentials on the Unix socket: {}", e.toString());
                return Peer.anonymous(path);
            }
        }
        SslHandler tls = channel.pipeline().get(SslHandler.class);
        return CallerIdentity.tlsPeer(tls == null ? null : tls.engine().getSession(), channel.remoteAddress());
    }
}

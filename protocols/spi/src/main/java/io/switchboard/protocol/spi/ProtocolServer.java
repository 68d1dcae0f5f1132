package io.switchboard.protocol.spi;

import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.Skeleton;
/**
 * The listener of one protocol in a server process. It serves any number of components on one
 * port; the listener starts with the first export.
 *
 * <pre>{@code
 * try (ProtocolServer soap = Protocols.get("soap").newServer(ServerSettings.defaults())) {
 *     Endpoint at = soap.export(EchoComponent.skeleton(new EchoImpl()));
 * }
 * }</pre>
 */
public interface ProtocolServer extends AutoCloseable {
    String protocol();

    /** Serves a component and returns where clients reach it. Exporting a name twice is an error. */
    Endpoint export(Skeleton skeleton);

    /** Stops serving one component; its endpoint refuses calls afterwards. */
    void unexport(String componentName);

    /**
     * Connections refused at TLS since the listener started: a handshake that failed (a caller
     * without a certificate the server trusts, an untrusted server for the caller, plain text on the
     * TLS port). Such a caller never reaches a component. Always 0 without TLS.
     */
    default long refusedConnections() {
        return 0;
    }

    /**
     * Connections closed or turned away at the listener's connection limit since it started: idle
     * ones displaced for new ones, new ones refused while every one was busy. 0 for a protocol
     * without such a limit.
     */
    default long shedConnections() {
        return 0;
    }

    /**
     * Serves {@code handler} at {@code path} (e.g. {@code /console}: also everything below it) on
     * this listener's port, with its TLS and limits, beside the components. Read-only resources
     * only (see {@link WebHandler}). A path taken by the protocol itself, or mounted already, is
     * refused.
     *
     * @throws UnsupportedOperationException if the protocol cannot serve HTTP pages (only SOAP does)
     */
    default void mount(String path, WebHandler handler) {
        throw new UnsupportedOperationException(protocol() + " cannot serve web pages");
    }

    /**
     * The server is about to close: its health turns NOT_SERVING, so that health checks and load
     * balancers move away; calls are still served. Does nothing by default (a protocol without a
     * health service).
     */
    default void drain() {
    }

    /**
     * Stops the listener and releases its port, as a crash of it would: calls under way are cut
     * (after a moment's grace). {@code ComponentServer.close} drains its calls before it closes its
     * listeners.
     */
    @Override
    void close();
}

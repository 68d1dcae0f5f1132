package io.switchboard.protocol.soap;

/**
 * The switches of this module's shortcuts around Jetty's and Axis2's public surface, each on unless
 * its system property is {@code false} (read once, when the class loads). With one off, the server
 * takes the public path instead: slower where the shortcut gained, the same answers. Which library
 * version each was checked against, and the test that fails when a library no longer behaves as
 * the shortcut assumes: docs/architecture.md, "Library internals we rely on".
 */
final class LibraryInternals {
    /**
     * {@link SoapHttpConnection}: Jetty's internal {@code HttpConnection} extended, and the body of
     * {@code HttpConnectionFactory.newConnection} copied, so that the thread that answered waits for
     * the connection's next request. Off: Jetty's own {@code HttpConnectionFactory}.
     */
    static final boolean CONNECTION = on("switchboard.soap.connection");

    /**
     * {@link SoapEndPoint}'s waits on the handling thread: Jetty's fill interest deferred while that
     * thread waits {@value SoapEndPoint#NEXT_REQUEST_WAIT_MILLIS} ms for the next request, and a
     * request's late body bytes awaited on the socket through a second selector. Off: every wait goes
     * through Jetty's selector.
     */
    static final boolean AWAIT_ON_THREAD = on("switchboard.soap.awaitOnThread");

    /**
     * {@link SoapPostHandler}: a POST handed to Axis2's {@code HTTPTransportUtils} directly, with a
     * message context built as {@code AxisServlet.createMessageContext} builds it. Off: a POST goes
     * to Axis2's servlet ({@link SoapServlet}), as a WSDL request does.
     */
    static final boolean DIRECT_AXIS2 = on("switchboard.soap.directAxis2");

    /**
     * {@link SoapEndPoint#doClose}'s linger after a refused request (408, 413): the end point's
     * {@code SelectionKey} cancelled behind Jetty's {@code ManagedSelector}, so that the connector
     * drains what the sender still sends before the socket closes. Off: Jetty closes at once, and a
     * sender still writing may see a reset instead of the answer.
     */
    static final boolean LINGER_AT_CLOSE = on("switchboard.soap.lingerAtClose");

    static boolean on(String property) {
        return !"false".equalsIgnoreCase(System.getProperty(property, "true").strip());
    }

    private LibraryInternals() {
    }
}

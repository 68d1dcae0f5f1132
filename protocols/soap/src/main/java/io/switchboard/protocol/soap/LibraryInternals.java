package io.switchboard.protocol.soap;

/**
 * The switches of this module's shortcuts around Jetty's and Axis2's public surface, one set per
 * server. With one off, the server takes the public path instead: slower where the shortcut
 * gained, the same answers. The provider found by name ({@code Protocols.get("soap")}) gives its
 * servers {@link #DEFAULTS}: each switch on unless its system property is {@code false} (read once,
 * when the class loads), so that {@code -Dswitchboard.soap.connection=false} or
 * {@code SWITCHBOARD_JAVA_OPTS} turns it off for a whole JVM. Which library version each was checked
 * against, and the test that fails when a library no longer behaves as the shortcut assumes:
 * docs/architecture.md, "Library internals we rely on".
 *
 * <pre>{@code
 * ProtocolServer publicPaths = new SoapProtocolProvider(LibraryInternals.OFF).newServer(ServerSettings.defaults());
 * }</pre>
 *
 * @param connection    {@link SoapHttpConnection}: Jetty's internal {@code HttpConnection} extended, and the body
 *                      of {@code HttpConnectionFactory.newConnection} copied, so that the thread that answered
 *                      waits for the connection's next request ({@code switchboard.soap.connection}). Off:
 *                      Jetty's own {@code HttpConnectionFactory}.
 * @param awaitOnThread {@link SoapEndPoint}'s waits on the handling thread: Jetty's fill interest deferred while
 *                      that thread waits {@value SoapEndPoint#NEXT_REQUEST_WAIT_MILLIS} ms for the next request,
 *                      and a request's late body bytes awaited on the socket through a second selector
 *                      ({@code switchboard.soap.awaitOnThread}). Off: every wait goes through Jetty's selector.
 * @param directAxis2   {@link SoapPostHandler}: a POST handed to Axis2's {@code HTTPTransportUtils} directly,
 *                      with a message context built as {@code AxisServlet.createMessageContext} builds it
 *                      ({@code switchboard.soap.directAxis2}). Off: a POST goes to Axis2's servlet
 *                      ({@link SoapServlet}), as a WSDL request does.
 * @param lingerAtClose {@link SoapEndPoint#doClose}'s linger after a refused request (408, 413): the end point's
 *                      {@code SelectionKey} cancelled behind Jetty's {@code ManagedSelector}, so that the
 *                      connector drains what the sender still sends before the socket closes
 *                      ({@code switchboard.soap.lingerAtClose}). Off: Jetty closes at once, and a sender still
 *                      writing may see a reset instead of the answer.
 */
record LibraryInternals(boolean connection, boolean awaitOnThread, boolean directAxis2, boolean lingerAtClose) {
    /** From the system properties, each on unless set to {@code false}. */
    static final LibraryInternals DEFAULTS = new LibraryInternals(on("switchboard.soap.connection"),
            on("switchboard.soap.awaitOnThread"), on("switchboard.soap.directAxis2"), on("switchboard.soap.lingerAtClose"));

    /** Every shortcut off: the public paths only. */
    static final LibraryInternals OFF = new LibraryInternals(false, false, false, false);

    static boolean on(String property) {
        return !"false".equalsIgnoreCase(System.getProperty(property, "true").strip());
    }
}

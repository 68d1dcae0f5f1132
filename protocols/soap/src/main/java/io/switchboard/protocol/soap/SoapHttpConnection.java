package io.switchboard.protocol.soap;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * Jetty's HTTP/1.1 connection, whose thread, once it has answered, waits a moment on the socket
 * for the connection's next request and handles it itself ({@link SoapEndPoint#awaitNextRequest}),
 * as a thread per connection does. Through Jetty's selector alone, each request of a client that
 * calls again and again costs four thread hand-offs (the selector wakes, hands selecting to a
 * reserved thread, runs the request, is woken again to watch the socket, parks): on one busy CPU
 * they cost more than the call itself. A connection that stays quiet longer than the wait goes back
 * to the selector and takes no thread, as before. Over TLS the connection reads through the TLS end
 * point and never waits.
 */
final class SoapHttpConnection extends HttpConnection {

    SoapHttpConnection(HttpConfiguration configuration, Connector connector, EndPoint endPoint) {
        super(configuration, connector, endPoint);
    }

    @Override
    public void onFillable() {
        SoapEndPoint.Turn turn = getEndPoint() instanceof SoapEndPoint e ? e.beginAwaiting() : null;
        if (turn == null) {
            super.onFillable();   // a plain fill, or one run by the waiting thread below (from fillable())
            return;
        }
        SoapEndPoint endPoint = (SoapEndPoint) getEndPoint();
        try {
            super.onFillable();
            while (endPoint.awaitNextRequest(turn)) {
                // the next request came while this thread waited, and was handled here
            }
        } finally {
            endPoint.endAwaiting(turn);
        }
    }

    /** Jetty's HTTP/1.1 factory, making {@link SoapHttpConnection}s. */
    static final class Factory extends HttpConnectionFactory {
        Factory(HttpConfiguration configuration) {
            super(configuration);
        }

        @Override
        public Connection newConnection(Connector connector, EndPoint endPoint) {
            HttpConnection connection = new SoapHttpConnection(getHttpConfiguration(), connector, endPoint);
            connection.setUseInputDirectByteBuffers(isUseInputDirectByteBuffers());
            connection.setUseOutputDirectByteBuffers(isUseOutputDirectByteBuffers());
            return configure(connection, connector, endPoint);
        }
    }
}

package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.CallerIdentity;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Answers each request of a connection whose client resumed a TLS session but is no longer
 * trusted ({@link SoapEndPoint#noLongerTrusted}) as refused, before anything reads it: a call
 * with a {@code Client}/{@code Sender} fault whose detail is {@code <sb:PermissionDenied
 * reason="unauthenticated"/>} (its client learns the call did not run), anything else with a
 * 403; then the connection closes. Such a client shows its certificate to no trust manager, so
 * the check comes after the handshake, where a close alone would reach a client already sending
 * its request as a connection lost under its call.
 */
final class UntrustedSessionRefusals extends Handler.Wrapper {
    private static final String MESSAGE = CallerIdentity.NO_LONGER_TRUSTED + "; the call did not run";
    private static final String DENIED = "<sb:PermissionDenied xmlns:sb=\"" + SoapFaults.NS
            + "\" reason=\"unauthenticated\"/>";
    private static final byte[] SOAP11 = SoapErrorHandler.fault(false, true, MESSAGE, DENIED)
            .getBytes(StandardCharsets.UTF_8);
    private static final byte[] SOAP12 = SoapErrorHandler.fault(true, true, MESSAGE, DENIED)
            .getBytes(StandardCharsets.UTF_8);

    UntrustedSessionRefusals(Handler next) {
        super(next);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        SoapEndPoint endPoint = SoapConnector.endPointOf(request);
        if (endPoint == null || !endPoint.noLongerTrusted()) {
            return super.handle(request, response, callback);
        }
        endPoint.lingerAtClose();   // the request is not read: closed over its bytes, the socket would reset the answer
        response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
        if (!HttpMethod.POST.is(request.getMethod())) {
            response.setStatus(HttpStatus.FORBIDDEN_403);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=UTF-8");
            response.write(true, ByteBuffer.wrap(MESSAGE.getBytes(StandardCharsets.UTF_8)), callback);
            return true;
        }
        String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        boolean soap12 = type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("application/soap+xml");
        response.setStatus(soap12 ? HttpStatus.BAD_REQUEST_400 : HttpStatus.INTERNAL_SERVER_ERROR_500);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, soap12 ? "application/soap+xml; charset=UTF-8"
                : "text/xml; charset=UTF-8");
        response.write(true, ByteBuffer.wrap(soap12 ? SOAP12 : SOAP11), callback);
        return true;
    }
}

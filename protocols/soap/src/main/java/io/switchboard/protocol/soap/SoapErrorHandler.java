package io.switchboard.protocol.soap;

import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * What Jetty answers by itself (a body over the size limit, a request it cannot parse) comes back
 * as a SOAP 1.1 Fault, as Axis2's own refusals do: {@code Client} for 4xx, with the
 * {@code sb:refused} detail that names the reason ({@code size-limit} for 413, {@code malformed}
 * for 400); {@code Server} for 5xx.
 */
final class SoapErrorHandler extends ErrorHandler {
    private final long maxMessageBytes;

    SoapErrorHandler(long maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        int code = response.getStatus();
        String message = (String) request.getAttribute(ERROR_MESSAGE);
        if (request.getAttribute(ERROR_EXCEPTION) instanceof HttpException e) {
            code = e.getCode();
            response.setStatus(code);
            if (message == null) {
                message = e.getReason();
            }
        }
        if (HttpStatus.hasNoBody(code) || HttpMethod.HEAD.is(request.getMethod())) {
            callback.succeeded();
            return true;
        }
        if (code == HttpStatus.PAYLOAD_TOO_LARGE_413) {
            SoapEndPoint endPoint = SoapConnector.endPointOf(request);
            if (endPoint != null) {
                endPoint.lingerAtClose();   // the unread body ends the connection: its sender may still be sending
            }
            message = "Request body exceeds the limit of " + maxMessageBytes + " bytes"
                    + (message == null ? "" : " (" + message + ")");
        } else if (message == null) {
            message = HttpStatus.getMessage(code);
        }
        String reason = code == HttpStatus.PAYLOAD_TOO_LARGE_413 ? "size-limit"
                : code == HttpStatus.BAD_REQUEST_400 ? "malformed" : null;
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/xml; charset=UTF-8");
        response.write(true, BufferUtil.toBuffer(fault(code < 500, message, reason).getBytes(StandardCharsets.UTF_8)),
                callback);
        return true;
    }

    static String fault(boolean sender, String message, String reason) {
        return fault(false, sender, message, reason == null ? null
                : "<sb:refused xmlns:sb=\"" + SoapFaults.NS + "\" reason=\"" + reason + "\"/>");
    }

    /**
     * A whole fault envelope, SOAP 1.1 or 1.2: {@code Client}/{@code Sender} or
     * {@code Server}/{@code Receiver}, the message escaped, {@code detail} (an element, as text;
     * null: none) as it is.
     */
    static String fault(boolean soap12, boolean sender, String message, String detail) {
        if (!soap12) {
            return "<?xml version='1.0' encoding='UTF-8'?><soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/"
                    + "soap/envelope/\"><soapenv:Body><soapenv:Fault><faultcode>soapenv:" + (sender ? "Client" : "Server")
                    + "</faultcode><faultstring>" + escape(message) + "</faultstring>"
                    + (detail == null ? "" : "<detail>" + detail + "</detail>")
                    + "</soapenv:Fault></soapenv:Body></soapenv:Envelope>";
        }
        return "<?xml version='1.0' encoding='UTF-8'?><soapenv:Envelope xmlns:soapenv=\"http://www.w3.org/2003/05/"
                + "soap-envelope\"><soapenv:Body><soapenv:Fault><soapenv:Code><soapenv:Value>soapenv:"
                + (sender ? "Sender" : "Receiver") + "</soapenv:Value></soapenv:Code><soapenv:Reason><soapenv:Text"
                + " xml:lang=\"en\">" + escape(message) + "</soapenv:Text></soapenv:Reason>"
                + (detail == null ? "" : "<soapenv:Detail>" + detail + "</soapenv:Detail>")
                + "</soapenv:Fault></soapenv:Body></soapenv:Envelope>";
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                default -> b.append(c < 0x20 && c != '\t' ? ' ' : c);
            }
        }
        return b.toString();
    }
}

package io.switchboard.protocol.soap;

import java.io.IOException;
import org.apache.axis2.AxisFault;
import org.apache.axis2.Constants;
import org.apache.axis2.context.MessageContext;

/** Raised (as an IOException, so it can travel through the XML parser) when a request body exceeds the limit. */
public final class RequestTooLargeException extends IOException {
    private final long limit;

    public RequestTooLargeException(String message, long limit) {
        super(message);
        this.limit = limit;
    }

    public long getLimit() {
        return limit;
    }

    /** SOAP Fault (Client/Sender) + HTTP 413, via the "axis2.http.response.state" property read by AxisHttpService. */
    public AxisFault toAxisFault(MessageContext mc) {
        if (mc != null) {
            mc.setProperty(Constants.HTTP_RESPONSE_STATE, "413");
        }
        return new AxisFault(getMessage(), SoapFaults.senderCode(mc), this);
    }

    public static RequestTooLargeException findIn(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RequestTooLargeException r) {
                return r;
            }
        }
        return null;
    }
}

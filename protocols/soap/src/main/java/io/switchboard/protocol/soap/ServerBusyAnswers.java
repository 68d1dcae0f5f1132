package io.switchboard.protocol.soap;

import java.io.IOException;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpStatus;

/**
 * A step of the SOAP client's HTTP chain: a {@code 503} that carries Switchboard's
 * {@value SoapCalls#BUSY_HEADER} header (a server's connection limits refused the request, which
 * did not run) becomes a {@link Busy} failure, which the transport reports as not delivered. Axis2
 * hands on only the status of any other answer that is not SOAP, which says nothing of whether
 * the operation ran (a proxy's 503 may follow a request it forwarded).
 */
final class ServerBusyAnswers implements ExecChainHandler {
    static final String NAME = "switchboard-busy";

    /** The server's connection limits refused the request: it did not run. */
    static final class Busy extends IOException {
        Busy(String message) {
            super(message);
        }
    }

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws IOException, HttpException {
        ClassicHttpResponse response = chain.proceed(request, scope);
        if (response.getCode() == HttpStatus.SC_SERVICE_UNAVAILABLE && response.containsHeader(SoapCalls.BUSY_HEADER)) {
            response.close();   // it said Connection: close
            throw new Busy("server busy (HTTP 503, every connection its limits allow this address is working); "
                    + "the call did not run");
        }
        return response;
    }
}

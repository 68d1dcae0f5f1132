package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.switchboard.testing.conformance.AbstractTraceContextTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The trace context travels in the {@code sb:trace} header; a bad one is ignored, never refused. */
class SoapTraceContextTest extends AbstractTraceContextTest {
    private static final String NS = "urn:switchboard:test:conformance";

    @Override
    protected String protocolName() {
        return "soap";
    }

    @Test
    void aMalformedTraceHeaderIsIgnoredAndTheCallRuns() throws Exception {
        for (String attributes : new String[] {"traceparent='00-zz'", "", "traceparent='" + PARENT + "x'",
                "traceparent='" + "0".repeat(100_000) + "'"}) {
            String body = "<?xml version='1.0' encoding='UTF-8'?>"
                    + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Header>"
                    + "<sb:trace xmlns:sb='urn:switchboard:soap' " + attributes + " tracestate='a=b'/></soapenv:Header>"
                    + "<soapenv:Body><t:ping xmlns:t=\"" + NS + "\"/></soapenv:Body></soapenv:Envelope>";
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(endpoint.address()))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "text/xml; charset=UTF-8")
                    .header("SOAPAction", "\"" + NS + "/ping\"").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertNull(seen.get(), attributes);
        }
        assertEquals(4, runs());
    }
}

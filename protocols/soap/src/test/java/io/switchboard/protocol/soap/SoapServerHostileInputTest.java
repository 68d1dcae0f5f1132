package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.RefusedException;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.Transport;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import io.switchboard.testing.conformance.Values;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bad requests sent raw over HTTP, each answered with a SOAP Fault that names the problem, and
 * each followed by a good call on the same server.
 */
class SoapServerHostileInputTest {
    private static final long LIMIT = 256 * 1024;
    private static final String NS = "urn:switchboard:test:conformance";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private static ProtocolServer server;
    private static ProtocolClient client;
    private static Transport transport;
    private static ConformanceStub stub;
    private static String url;
    private static final ConformanceImpl impl = new ConformanceImpl();

    @BeforeAll
    static void start() {
        server = new SoapProtocolProvider().newServer(ServerSettings.defaults().withMaxMessageBytes(LIMIT));
        Endpoint endpoint = server.export(ConformanceComponent.skeleton(impl));
        url = endpoint.address();
        client = new SoapProtocolProvider().newClient(ClientSettings.defaults());
        transport = client.connect(ConformanceComponent.DESCRIPTOR, endpoint);
        stub = ConformanceComponent.stub(transport);
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    @AfterEach
    void goodCallStillWorks() {
        assertEquals(3.5, stub.echoDoubles(new double[] {3.5})[0]);
    }

    private static String envelope(String body) {
        return "<?xml version='1.0' encoding='UTF-8'?>"
                + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\">"
                + "<soapenv:Body>" + body + "</soapenv:Body></soapenv:Envelope>";
    }

    private static HttpResponse<String> post(String action, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "text/xml; charset=UTF-8")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (action != null) {
            b.header("SOAPAction", "\"" + action + "\"");
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertFault(HttpResponse<String> r, String... words) {
        assertTrue(r.statusCode() >= 400, "status " + r.statusCode() + ": " + r.body());
        assertTrue(r.body().contains("Fault>"), "a SOAP Fault: " + r.body());
        for (String w : words) {
            assertTrue(r.body().contains(w), "fault should name '" + w + "': " + r.body());
        }
    }

    @Test
    void aMalformedCallIdIsRefusedBeforeTheCallRuns() throws Exception {
        for (String id : new String[] {"two words", "&lt;x/&gt;", "x".repeat(129), "caf\u00e9"}) {
            String doc = envelope("<t:increment xmlns:t=\"" + NS + "\"><t:by>1</t:by></t:increment>").replace(
                    "<soapenv:Body>", "<soapenv:Header><sb:call xmlns:sb=\"urn:switchboard:soap\" id=\"" + id
                            + "\"/></soapenv:Header><soapenv:Body>");
            assertFault(post(NS + "/increment", doc), "malformed", "sb:call");
        }
        assertEquals(0, impl.increments.get(), "no increment ran");
    }

    @Test
    void aCancelOfAMalformedCallIdFindsNothing() throws Exception {
        HttpRequest cancel = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Switchboard-Cancel", "two words").POST(HttpRequest.BodyPublishers.noBody()).build();
        assertEquals(404, HTTP.send(cancel, HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    @Test
    void entityExpansionBombIsRefused() throws Exception {
        StringBuilder dtd = new StringBuilder("<!DOCTYPE lolz [<!ENTITY lol \"lol\">");
        for (int i = 1; i < 10; i++) {
            dtd.append("<!ENTITY lol").append(i).append(" \"").append(("&lol" + (i == 1 ? "" : i - 1) + ";").repeat(10))
                    .append("\">");
        }
        dtd.append("]>");
        String doc = "<?xml version='1.0'?>" + dtd + envelope("<t:echoDoubles xmlns:t=\"" + NS
                + "\"><t:values>&lol9;</t:values></t:echoDoubles>").substring("<?xml version='1.0' encoding='UTF-8'?>".length());
        assertFault(post(NS + "/echoDoubles", doc), "DOCTYPE");
    }

    @Test
    void externalEntityIsRefusedAndNothingLeaks() throws Exception {
        String doc = "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>"
                + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Body>"
                + "<t:fail xmlns:t=\"" + NS + "\"><t:message>&xxe;</t:message></t:fail></soapenv:Body></soapenv:Envelope>";
        HttpResponse<String> r = post(NS + "/fail", doc);
        assertFault(r, "DOCTYPE");
        assertFalse(r.body().contains("root:"), "no file content in the answer");
    }

    @Test
    void malformedXmlIsRefused() throws Exception {
        assertFault(post(NS + "/echoDoubles", envelope("<t:echoDoubles xmlns:t=\"" + NS + "\"><t:values>1 2")));
        assertFault(post(NS + "/echoDoubles", "hello, world"));
    }

    /**
     * Values JAXB used to take silently (a byte of 200 became -56, invalid base64 other bytes, an
     * impossible date-time or a wrong boolean something else), each refused with the element's
     * path in {@code sb:refused/@field}; the good call after each is {@link #goodCallStillWorks}.
     */
    @Test
    void valuesOutsideTheirTypeAreRefusedNamingTheField() throws Exception {
        String required = "<t:flag>true</t:flag><t:small>1</t:small><t:ratio>1.5</t:ratio>";
        String[][] cases = {
            {"<t:flag>true</t:flag><t:small>200</t:small><t:ratio>1.5</t:ratio>", "echoRecord/record/small",
                "200 is outside the range of xs:byte"},
            {required + "<t:data>not base64!</t:data>", "echoRecord/record/data", "not xs:base64Binary"},
            {required + "<t:data>QR==</t:data>", "echoRecord/record/data", "bits that say nothing"},
            {required + "<t:when>2026-02-30T10:00:00Z</t:when>", "echoRecord/record/when", "not an xs:dateTime"},
            {required + "<t:when>2026-11-22T10:00:00+05:30:15</t:when>", "echoRecord/record/when", "not an xs:dateTime"},
            {"<t:flag>yes</t:flag><t:small>1</t:small><t:ratio>1.5</t:ratio>", "echoRecord/record/flag",
                "'yes' is not an xs:boolean"},
            {required + "<t:ints>1 2147483648</t:ints>", "echoRecord/record/ints", "(entry 2)"},
            {"<t:flag>true</t:flag><t:small>1</t:small>", "echoRecord/record/ratio",
                "ratio (xs:float) of Record is missing; it is nillable"},
        };
        for (String[] c : cases) {
            HttpResponse<String> r = post(NS + "/echoRecord", envelope("<t:echoRecord xmlns:t=\"" + NS + "\"><t:record>"
                    + c[0] + "</t:record></t:echoRecord>"));
            assertFault(r, "reason=\"malformed\"", "field=\"" + c[1] + "\"", c[2]);
            assertEquals(500, r.statusCode(), r.body());   // WS-I BP R1126: a SOAP 1.1 fault comes with 500
        }
    }

    /**
     * A sender's fault over SOAP 1.2 comes with 400, as SOAP 1.2's HTTP binding asks of a
     * {@code Sender} fault; over SOAP 1.1 (above) every fault comes with 500 (WS-I BP R1126).
     */
    @Test
    void aSoap12SendersFaultComesWith400() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/soap+xml; charset=UTF-8; action=\"" + NS + "/echoDoubles\"")
                .POST(HttpRequest.BodyPublishers.ofString("<?xml version='1.0' encoding='UTF-8'?>"
                        + "<env:Envelope xmlns:env=\"http://www.w3.org/2003/05/soap-envelope\"><env:Body>"
                        + "<t:echoDoubles xmlns:t=\"" + NS + "\"><t:values>1 abc</t:values></t:echoDoubles>"
                        + "</env:Body></env:Envelope>")).build();
        HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertFault(r, "abc", "Sender");
        assertEquals(400, r.statusCode(), r.body());
    }

    @Test
    void badValueIsRefusedNotDropped() throws Exception {
        HttpResponse<String> r = post(NS + "/echoDoubles",
                envelope("<t:echoDoubles xmlns:t=\"" + NS + "\"><t:values>1 abc</t:values></t:echoDoubles>"));
        assertFault(r, "abc");
        assertEquals(500, r.statusCode());
    }

    /**
     * A call whose operation stops at its deadline and returns: the server answers with a fault,
     * not the result. It sent the result, and a caller whose own timer had not run yet (a starved
     * machine) took it, past its deadline.
     */
    @Test
    void anOperationThatReturnsPastTheDeadlineIsAnsweredWithAFault() throws Exception {
        String call = "<?xml version='1.0' encoding='UTF-8'?>"
                + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\">"
                + "<soapenv:Header><sb:deadline xmlns:sb=\"urn:switchboard:soap\" timeout-ms=\"50\"/></soapenv:Header>"
                + "<soapenv:Body><t:spin xmlns:t=\"" + NS + "\"><t:values>1</t:values><t:maxRounds>100000</t:maxRounds>"
                + "</t:spin></soapenv:Body></soapenv:Envelope>";
        assertFault(post(NS + "/spin", call), "deadline passed while");
    }

    @Test
    void unknownOperationIsRefused() throws Exception {
        assertFault(post(NS + "/nope", envelope("<t:nope xmlns:t=\"" + NS + "\"/>")), "Operation not found");
        HttpResponse<String> wrongElement = post(NS + "/echoDoubles", envelope("<t:nope xmlns:t=\"" + NS + "\"/>"));
        assertFault(wrongElement, "nope");
    }

    @Test
    void oversizeBodyIsRefusedBeforeParsing() throws Exception {
        String big = envelope("<t:echoDoubles xmlns:t=\"" + NS + "\"><t:values>" + "1.0 ".repeat(200_000)
                + "</t:values></t:echoDoubles>");
        HttpResponse<String> r = post(NS + "/echoDoubles", big);
        assertEquals(413, r.statusCode(), r.body());
        assertFault(r, "limit of " + LIMIT + " bytes");
    }

    @Test
    void oversizeCallThroughTheStubIsARefusal() {
        double[] tooMany = new double[(int) LIMIT / 4];
        RefusedException e = assertThrows(RefusedException.class, () -> stub.echoDoubles(tooMany));
        assertTrue(e.getMessage().contains("limit"), e.getMessage());
        assertEquals("size-limit", e.reason());
    }

    @Test
    void callsFarOverTheLimitAreRefusalsEveryTimeNotBrokenPipes() {
        // about 20 times the limit, sent whole before the client reads: the server must read and drop
        // the rest after its 413, or the client sees a reset instead of the refusal
        double[] far = new double[(int) LIMIT];
        java.util.Arrays.fill(far, 1.2345678901234567);
        for (int i = 0; i < 3; i++) {
            RefusedException e = assertThrows(RefusedException.class, () -> stub.echoDoubles(far));
            assertEquals("size-limit", e.reason());
        }
    }

    @Test
    void linkedNodesOverTheServersLimitAreRefusedWithAClearError() {
        try (ProtocolServer small = new SoapProtocolProvider().newServer(ServerSettings.defaults().withMaxGraphNodes(1000));
             Transport t = client.connect(ConformanceComponent.DESCRIPTOR,
                     small.export(ConformanceComponent.skeleton(new ConformanceImpl())))) {
            ConformanceStub s = ConformanceComponent.stub(t);
            assertEquals(1000, Values.length(s.echoList(Values.list(1000))));
            RefusedException e = assertThrows(RefusedException.class, () -> s.echoList(Values.list(1001)));
            assertEquals("node-limit", e.reason());
            assertTrue(e.getMessage().contains("more than 1000 linked nodes"), e.getMessage());
            s.ping();
        }
    }

    @Test
    void compressedBodyIsRefused() throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "text/xml; charset=UTF-8").header("Content-Encoding", "gzip")
                .header("SOAPAction", "\"" + NS + "/ping\"")
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[] {31, -117, 8, 0})).build();
        HttpResponse<String> r = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        assertFault(r, "Content-Encoding");
    }

    // ---- heterogeneous lists: the server's reader bounds nesting and refuses nil elements

    private static String nestedLists(int depth) {
        return envelope("<t:echoMixed xmlns:t=\"" + NS + "\"><t:list>" + "<t:list>".repeat(depth - 1)
                + "</t:list>".repeat(depth) + "</t:echoMixed>");
    }

    @Test
    void heterogeneousListsNestedAtTheLimitAreAnswered() throws Exception {
        HttpResponse<String> r = post(NS + "/echoMixed", nestedLists(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH));
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void heterogeneousListsNestedTooDeeplyAreRefused() throws Exception {
        assertFault(post(NS + "/echoMixed", nestedLists(io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH + 1)),
                "depth-limit", "nested deeper than the limit of 64 levels");
        // far deeper: refused as well (by our limit or the parser's own), and the server stays up
        assertFault(post(NS + "/echoMixed", nestedLists(10_000)));
    }

    @Test
    void unknownOrMalformedListElementIsRefused() throws Exception {
        assertFault(post(NS + "/echoMixed", envelope("<t:echoMixed xmlns:t=\"" + NS + "\"><t:list><t:number>1</t:number>"
                + "<t:mystery>2</t:mystery></t:list></t:echoMixed>")));
        assertFault(post(NS + "/echoMixed", envelope("<t:echoMixed xmlns:t=\"" + NS + "\"><t:list><t:number>x</t:number>"
                + "</t:list></t:echoMixed>")), "x");
    }

    @Test
    void deepNestingIsRefusedWithoutExhaustingTheStack() throws Exception {
        int depth = 8_000;   // 216 KB of markup, under the size limit: only a depth bound can stop it
        String nested = "<h:x xmlns:h='urn:h'>".repeat(depth) + "</h:x>".repeat(depth);
        // in the Header, which Axiom parses whole, not in the body, which the strict binding refuses at once
        HttpResponse<String> r = post(NS + "/echoDoubles", "<?xml version='1.0' encoding='UTF-8'?>"
                + "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Header>"
                + nested + "</soapenv:Header><soapenv:Body><t:echoDoubles xmlns:t=\"" + NS + "\"><t:values>1</t:values>"
                + "</t:echoDoubles></soapenv:Body></soapenv:Envelope>");
        System.out.println("deep nesting: HTTP " + r.statusCode() + " " + r.body());
        assertFault(r, "Depth");
        assertEquals(500, r.statusCode(), "a SOAP 1.1 fault (WS-I BP R1126); its code says whose");
        assertTrue(r.body().contains("reason=\"malformed\""), r.body());
        assertFalse(r.body().contains("StackOverflowError"), r.body());
    }

    @Test
    void hugeAttributesAreRefused() throws Exception {
        String huge = "a".repeat(200_000);   // one 200 KB attribute value, under the size limit
        HttpResponse<String> one = post(NS + "/echoDoubles", envelope("<t:echoDoubles xmlns:t=\"" + NS + "\" big=\""
                + huge + "\"><t:values>1</t:values></t:echoDoubles>"));
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            many.append(" a").append(i).append("=\"x\"");   // 20,000 attributes on one element
        }
        HttpResponse<String> lots = post(NS + "/echoDoubles", envelope("<t:echoDoubles xmlns:t=\"" + NS + "\""
                + many + "><t:values>1</t:values></t:echoDoubles>"));
        System.out.println("huge attribute: HTTP " + one.statusCode() + ", 20,000 attributes: HTTP " + lots.statusCode()
                + " " + lots.body());
        // the wire schema declares no such attribute: refused by name, and the answer does not echo its 200 KB
        assertEquals(500, one.statusCode(), "an unknown attribute is refused, whatever its length");
        assertTrue(one.body().contains("reason=\"malformed\"") && one.body().contains("field=\"echoDoubles\"")
                && one.body().contains("unexpected attribute big"), one.body());
        assertTrue(one.body().length() < 4096, "the fault is short: " + one.body().length() + " characters");
        assertFault(lots, "Attribute limit (1000)");
        assertEquals(500, lots.statusCode(), "a SOAP 1.1 fault (WS-I BP R1126); its code says whose");
        assertTrue(lots.body().contains("reason=\"malformed\""), lots.body());
    }
}

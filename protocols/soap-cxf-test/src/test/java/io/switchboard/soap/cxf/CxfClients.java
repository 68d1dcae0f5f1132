package io.switchboard.soap.cxf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import jakarta.xml.ws.BindingProvider;
import java.io.InputStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.OutputKeys;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.apache.cxf.endpoint.Client;
import org.apache.cxf.frontend.ClientProxy;
import org.apache.cxf.transport.http.HTTPConduit;
import org.apache.cxf.transports.http.configuration.HTTPClientPolicy;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * What every CXF test does with a served component: find its SOAP address, check that the WSDL it
 * serves is the one wsdl2java read at build time, and aim a generated port at it.
 */
final class CxfClients {
    private static final String WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";
    private static final String SOAP_WSDL_NS = "http://schemas.xmlsoap.org/wsdl/soap/";
    /** Long enough for a loaded machine, short enough that a server that never answers fails the test. */
    private static final long RECEIVE_MILLIS = 60_000;

    private CxfClients() {
    }

    /** The SOAP endpoint the component server published for {@code entry}. */
    static String soapAddress(ComponentEntry entry) {
        for (Endpoint e : entry.endpoints()) {
            if (e.protocol().equals("soap")) {
                return e.address();
            }
        }
        throw new AssertionError("no SOAP endpoint in " + entry);
    }

    /** {@code port} sends to {@code address}, and gives up on an answer after {@value #RECEIVE_MILLIS} ms. */
    static <T> T at(T port, String address) {
        ((BindingProvider) port).getRequestContext().put(BindingProvider.ENDPOINT_ADDRESS_PROPERTY, address);
        Client client = ClientProxy.getClient(port);
        HTTPClientPolicy policy = new HTTPClientPolicy();
        policy.setConnectionTimeout(RECEIVE_MILLIS);
        policy.setReceiveTimeout(RECEIVE_MILLIS);
        ((HTTPConduit) client.getConduit()).setClient(policy);
        return port;
    }

    /**
     * The WSDL served at {@code address?wsdl} is the compiler's WSDL on the class path at
     * {@code resource} (the file wsdl2java read), element for element, except that its
     * {@code soap:address} is {@code address}.
     */
    static void assertServesTheGeneratedWsdl(String address, String resource) throws Exception {
        HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build().send(
                HttpRequest.newBuilder(URI.create(address + "?wsdl")).timeout(Duration.ofSeconds(60)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        Document served = parse(new InputSource(new StringReader(r.body())));
        Document generated;
        try (InputStream in = CxfClients.class.getResourceAsStream(resource)) {
            assertNotNull(in, "the generated WSDL " + resource + " on the class path");
            generated = parse(new InputSource(in));
        }
        assertEquals(address, soapLocation(served), "the served WSDL names the endpoint it was fetched from");
        // the differences allowed: the generated file carries a placeholder address, and the server's
        // WSDL writer (wsdl4j) lists the messages in its own order, which WSDL 1.1 gives no meaning
        soapAddressElement(generated).setAttribute("location", address);
        sortMessages(generated);
        sortMessages(served);
        assertTrue(generated.isEqualNode(served),
                () -> "served WSDL differs from " + resource + "\n--- generated\n" + text(generated) + "\n--- served\n"
                        + text(served));
    }

    private static Document parse(InputSource source) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        f.setIgnoringComments(true);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document d = f.newDocumentBuilder().parse(source);
        dropWhitespace(d.getDocumentElement());
        d.normalizeDocument();
        return d;
    }

    /** Indentation is not content: only the text between elements that is all whitespace goes. */
    private static void dropWhitespace(Node node) {
        NodeList children = node.getChildNodes();
        for (int i = children.getLength() - 1; i >= 0; i--) {
            Node c = children.item(i);
            if (c.getNodeType() == Node.TEXT_NODE && c.getNodeValue().isBlank()) {
                node.removeChild(c);
            } else if (c.getNodeType() == Node.ELEMENT_NODE) {
                dropWhitespace(c);
            }
        }
    }

    /** Sorts the messages by name, in the place they hold together (after the types, before the port type). */
    private static void sortMessages(Document d) {
        Element definitions = d.getDocumentElement();
        NodeList found = definitions.getElementsByTagNameNS(WSDL_NS, "message");
        List<Element> messages = new ArrayList<>();
        for (int i = 0; i < found.getLength(); i++) {
            messages.add((Element) found.item(i));
        }
        if (messages.isEmpty()) {
            return;
        }
        Node anchor = messages.get(messages.size() - 1).getNextSibling();
        messages.forEach(definitions::removeChild);
        messages.sort(Comparator.comparing(m -> m.getAttribute("name")));
        messages.forEach(m -> definitions.insertBefore(m, anchor));
    }

    private static Element soapAddressElement(Document d) {
        NodeList addresses = d.getElementsByTagNameNS(SOAP_WSDL_NS, "address");
        assertEquals(1, addresses.getLength(), "one soap:address");
        return (Element) addresses.item(0);
    }

    private static String soapLocation(Document d) {
        return soapAddressElement(d).getAttribute("location");
    }

    private static String text(Document d) {
        try {
            var t = TransformerFactory.newInstance().newTransformer();
            t.setOutputProperty(OutputKeys.INDENT, "yes");
            StringWriter w = new StringWriter();
            t.transform(new DOMSource(d), new StreamResult(w));
            return w.toString();
        } catch (Exception e) {
            return "(unprintable: " + e + ")";
        }
    }
}

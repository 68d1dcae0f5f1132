package io.switchboard.testing;

import io.switchboard.idl.SecureXml;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;

/**
 * What a WSDL served at {@code ?wsdl} says, read as a client reads it (no DTDs, no entities): a
 * test asks for its one {@code soap:address}, which fails unless the document is a WSDL 1.1
 * {@code definitions} with exactly one.
 */
public final class ServedWsdl {
    public static final String WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";
    public static final String SOAP_NS = "http://schemas.xmlsoap.org/wsdl/soap/";

    private ServedWsdl() {
    }

    /** The location of the document's only {@code soap:address}; an AssertionError if it is no WSDL. */
    public static String soapAddress(String document) {
        Element root;
        try {
            root = SecureXml.documentBuilder().parse(new InputSource(new StringReader(document))).getDocumentElement();
        } catch (SAXException | IOException e) {
            throw new AssertionError("not XML: " + e.getMessage() + "\n" + document, e);
        }
        if (!WSDL_NS.equals(root.getNamespaceURI()) || !"definitions".equals(root.getLocalName())) {
            throw new AssertionError("not a WSDL 1.1 definitions: " + document);
        }
        NodeList addresses = root.getElementsByTagNameNS(SOAP_NS, "address");
        List<String> locations = new ArrayList<>();
        for (int i = 0; i < addresses.getLength(); i++) {
            locations.add(((Element) addresses.item(i)).getAttribute("location"));
        }
        if (locations.size() != 1) {
            throw new AssertionError("expected one soap:address, found " + locations);
        }
        return locations.get(0);
    }
}

package io.switchboard.protocol.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** Hosts written into endpoint URIs and read back for sockets, IPv6 literals included. */
class EndpointsTest {
    @Test
    void anIpv6LiteralIsBracketedInTheUriAndUnbracketedForTheSocket() {
        String host = Endpoints.uriHost("::1");
        assertEquals("[::1]", host);
        URI uri = URI.create("tcp://" + host + ":7000/Echo");
        assertEquals(7000, uri.getPort());
        assertEquals("::1", Endpoints.socketHost(uri.getHost()));
        assertNull(Endpoints.checkNetworkAddress(uri.toString()));
    }

    @Test
    void namesAndIpv4AddressesAndBracketedLiteralsStayAsTheyAre() {
        assertEquals("example.org", Endpoints.uriHost("example.org"));
        assertEquals("127.0.0.1", Endpoints.uriHost("127.0.0.1"));
        assertEquals("[fe80::1]", Endpoints.uriHost("[fe80::1]"));
        assertEquals("127.0.0.1", Endpoints.socketHost("127.0.0.1"));
    }
}

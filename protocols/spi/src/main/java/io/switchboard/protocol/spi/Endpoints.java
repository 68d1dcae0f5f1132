package io.switchboard.protocol.spi;

import java.net.URI;
import java.net.URISyntaxException;

/** Checks of endpoint addresses shared by the protocols. */
public final class Endpoints {
    /** The longest address a registry entry keeps. */
    public static final int MAX_ADDRESS_CHARS = 2048;

    private Endpoints() {
    }

    /** Why {@code address} is not an absolute URI with a host and a port, or null when it is. */
    public static String checkNetworkAddress(String address) {
        if (address.length() > MAX_ADDRESS_CHARS) {
            return "is longer than " + MAX_ADDRESS_CHARS + " characters";
        }
        try {
            URI uri = new URI(address);
            return uri.getHost() == null || uri.getPort() <= 0 ? "needs a host and a port" : null;
        } catch (URISyntaxException e) {
            return "is not a URI";
        }
    }
}

package io.switchboard.protocol.spi;

import java.net.URI;
import java.net.URISyntaxException;

/** Checks of endpoint addresses shared by the protocols. */
public final class Endpoints {
    /** The longest address a registry entry keeps. */
    public static final int MAX_ADDRESS_CHARS = 2048;

    private Endpoints() {
    }

    /** {@code host} as a URI's authority writes it: an IPv6 literal in brackets, any other host as it is. */
    public static String uriHost(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /** A URI's host as a socket takes it: an IPv6 literal without its brackets. */
    public static String socketHost(String uriHost) {
        return uriHost.startsWith("[") && uriHost.endsWith("]") ? uriHost.substring(1, uriHost.length() - 1) : uriHost;
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

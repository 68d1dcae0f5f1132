package io.switchboard.protocol;

import java.net.URI;
import java.util.Objects;

/**
 * Where one protocol serves one component: the protocol's name and an address in that protocol's
 * form ({@code http://host:port/axis2/services/Echo} for SOAP). Registry entries hold a list of
 * these, one per protocol the server speaks.
 */
public record Endpoint(String protocol, String address) {
    public Endpoint {
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(address, "address");
        if (protocol.isBlank()) {
            throw new IllegalArgumentException("protocol name is empty");
        }
        URI.create(address);
    }

    public URI uri() {
        return URI.create(address);
    }

    @Override
    public String toString() {
        return protocol + "=" + address;
    }
}

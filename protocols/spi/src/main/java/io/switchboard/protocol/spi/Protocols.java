package io.switchboard.protocol.spi;

import java.util.List;
import java.util.Map;

/**
 * The protocols on the class path, by name.
 *
 * <pre>{@code
 * ProtocolProvider soap = Protocols.get("soap");
 * Set<String> names = Protocols.names();
 * }</pre>
 */
public final class Protocols {
    private Protocols() {
    }

    /** Every protocol on the class path, by name (loaded once). */
    public static Map<String, ProtocolProvider> all() {
        return providers().all();
    }

    public static java.util.Set<String> names() {
        return all().keySet();
    }

    public static ProtocolProvider get(String name) {
        return providers().get(name);
    }

    /**
     * The failsafe protocol ({@link ProtocolProvider#failsafe}): SOAP, unless a class path brings another.
     *
     * @throws IllegalStateException none or several on the class path
     */
    public static ProtocolProvider failsafe() {
        List<ProtocolProvider> found = all().values().stream().filter(ProtocolProvider::failsafe).toList();
        if (found.size() != 1) {
            throw new IllegalStateException("exactly one protocol on the class path must be the failsafe "
                    + "(add switchboard-protocol-soap); found " + found.stream().map(ProtocolProvider::name).toList());
        }
        return found.get(0);
    }

    /**
     * Why {@code address} is not an endpoint of {@code protocol}, or null: the protocol's own rule
     * when it is on the class path, else the network form (a registry keeps endpoints of protocols it
     * does not speak itself).
     */
    public static String checkAddress(String protocol, String address) {
        ProtocolProvider p = all().get(protocol);
        return p != null ? p.checkAddress(address) : Endpoints.checkNetworkAddress(address);
    }

    private static NamedProviders<ProtocolProvider> providers() {
        return NamedProviders.of(ProtocolProvider.class, "protocol", ProtocolProvider::name);
    }
}

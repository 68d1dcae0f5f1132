package io.switchboard.protocol.spi;

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

    private static NamedProviders<ProtocolProvider> providers() {
        return NamedProviders.of(ProtocolProvider.class, "protocol", ProtocolProvider::name);
    }
}

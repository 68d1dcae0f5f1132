package io.switchboard.protocol;

import java.util.Map;
import java.util.NoSuchElementException;
import java.util.ServiceLoader;
import java.util.TreeMap;

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

    public static Map<String, ProtocolProvider> all() {
        Map<String, ProtocolProvider> found = new TreeMap<>();
        for (ProtocolProvider p : ServiceLoader.load(ProtocolProvider.class, Protocols.class.getClassLoader())) {
            ProtocolProvider previous = found.putIfAbsent(p.name(), p);
            if (previous != null && previous.getClass() != p.getClass()) {
                throw new IllegalStateException("two protocols are named '" + p.name() + "': "
                        + previous.getClass().getName() + " and " + p.getClass().getName());
            }
        }
        return found;
    }

    public static java.util.Set<String> names() {
        return all().keySet();
    }

    public static ProtocolProvider get(String name) {
        ProtocolProvider p = all().get(name);
        if (p == null) {
            throw new NoSuchElementException("no protocol named '" + name + "' on the class path (found: " + names() + ")");
        }
        return p;
    }
}

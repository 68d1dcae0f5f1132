package io.switchboard.registry;

import java.util.Objects;

/**
 * A change to the registry as a watch reports it: an instance appeared, changed (bound again with
 * other endpoints, features or lease) or went (unbound, or its lease ran out).
 *
 * <pre>{@code
 * sb.watch("Echo", event -> System.out.println(event.kind() + " " + event.instanceId()));
 * }</pre>
 *
 * @param entry the instance as it is now, without its interface schema and .proto; for {@link
 *              Kind#GO}, as it was last seen
 */
public record RegistryEvent(Kind kind, String name, String instanceId, ComponentEntry entry) {
    /** What happened to the instance. */
    public enum Kind {
        APPEAR, CHANGE, GO;

        /** The form on the wire: {@code appear}, {@code change}, {@code go}. */
        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static Kind fromWire(String s) {
            return valueOf(s.toUpperCase(java.util.Locale.ROOT));
        }
    }

    public RegistryEvent {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(instanceId, "instanceId");
    }
}

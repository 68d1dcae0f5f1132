package io.switchboard.registry;

import io.switchboard.protocol.Endpoint;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One bound instance of a component: its name, an id that tells replicas apart, the endpoints of
 * the protocols its server speaks (in the server's order of preference), and its interface.
 *
 * @param interfaceSchema the component's interface schema as written; may be null in listings
 * @param wsdlUrl         where the WSDL is served; may be null
 * @param boundAt         when the registry accepted the entry; set by the registry
 */
public record ComponentEntry(String name, String instanceId, List<Endpoint> endpoints, String interfaceSchema,
                             String wsdlUrl, Instant boundAt) {
    public ComponentEntry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(instanceId, "instanceId");
        endpoints = List.copyOf(endpoints);
    }

    public Optional<Endpoint> endpoint(String protocol) {
        return endpoints.stream().filter(e -> e.protocol().equals(protocol)).findFirst();
    }

    public ComponentEntry withBoundAt(Instant when) {
        return new ComponentEntry(name, instanceId, endpoints, interfaceSchema, wsdlUrl, when);
    }

    /** The same entry without its interface schema, as listings show it. */
    public ComponentEntry withoutSchema() {
        return new ComponentEntry(name, instanceId, endpoints, null, wsdlUrl, boundAt);
    }
}

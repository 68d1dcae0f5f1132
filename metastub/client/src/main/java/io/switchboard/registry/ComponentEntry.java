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
 * @param interfaceProto  the component's .proto for the gRPC bulk protocol; may be null
 * @param wsdlUrl         where the WSDL is served; may be null
 * @param boundAt         when the registry accepted the entry; set by the registry
 * @param features        what the server does beyond its protocols, e.g. {@link #CALL_IDS}
 * @param leaseSeconds    how long the entry lives without a renew; 0: until it is unbound
 */
public record ComponentEntry(String name, String instanceId, List<Endpoint> endpoints, String interfaceSchema,
                             String interfaceProto, String wsdlUrl, Instant boundAt, List<String> features,
                             int leaseSeconds) {
    /** The server runs each call id at most once, so any call may be repeated on another protocol. */
    public static final String CALL_IDS = "call-ids";

    public ComponentEntry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(instanceId, "instanceId");
        endpoints = List.copyOf(endpoints);
        features = features == null ? List.of() : List.copyOf(features);
        if (leaseSeconds < 0) {
            throw new IllegalArgumentException("leaseSeconds must not be negative");
        }
    }

    public ComponentEntry(String name, String instanceId, List<Endpoint> endpoints, String interfaceSchema,
                          String interfaceProto, String wsdlUrl, Instant boundAt, List<String> features) {
        this(name, instanceId, endpoints, interfaceSchema, interfaceProto, wsdlUrl, boundAt, features, 0);
    }

    public ComponentEntry(String name, String instanceId, List<Endpoint> endpoints, String interfaceSchema,
                          String wsdlUrl, Instant boundAt) {
        this(name, instanceId, endpoints, interfaceSchema, null, wsdlUrl, boundAt, List.of(), 0);
    }

    public boolean has(String feature) {
        return features.contains(feature);
    }

    public Optional<Endpoint> endpoint(String protocol) {
        return endpoints.stream().filter(e -> e.protocol().equals(protocol)).findFirst();
    }

    /** True when the entry lives only as long as its server renews it. */
    public boolean leased() {
        return leaseSeconds > 0;
    }

    public ComponentEntry withBoundAt(Instant when) {
        return new ComponentEntry(name, instanceId, endpoints, interfaceSchema, interfaceProto, wsdlUrl, when, features,
                leaseSeconds);
    }

    public ComponentEntry withLeaseSeconds(int seconds) {
        return new ComponentEntry(name, instanceId, endpoints, interfaceSchema, interfaceProto, wsdlUrl, boundAt, features,
                seconds);
    }

    /** The same entry without its interface schema and .proto, as listings show it. */
    public ComponentEntry withoutSchema() {
        return new ComponentEntry(name, instanceId, endpoints, null, null, wsdlUrl, boundAt, features, leaseSeconds);
    }
}

package io.switchboard.registry;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.wire.EndpointInfo;
import io.switchboard.registry.wire.Entry;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/** Converts between registry entries and their wire form. */
public final class Entries {
    private Entries() {
    }

    public static Entry toWire(ComponentEntry e) {
        Entry w = new Entry();
        w.setName(e.name());
        w.setInstanceId(e.instanceId());
        List<EndpointInfo> eps = new ArrayList<>();
        for (Endpoint ep : e.endpoints()) {
            EndpointInfo i = new EndpointInfo();
            i.setProtocol(ep.protocol());
            i.setAddress(ep.address());
            eps.add(i);
        }
        w.setEndpoints(eps);
        w.setInterfaceSchema(e.interfaceSchema());
        w.setInterfaceProto(e.interfaceProto());
        w.setWsdlUrl(e.wsdlUrl());
        w.setBoundAt(e.boundAt() == null ? null : e.boundAt().atOffset(ZoneOffset.UTC));
        w.setFeatures(e.features().isEmpty() ? null : new ArrayList<>(e.features()));
        w.setLeaseSeconds(e.leased() ? e.leaseSeconds() : null);
        return w;
    }

    /**
     * The entry a wire {@code Entry} says.
     *
     * @throws IllegalArgumentException a member the schema requires is missing (name, instance id,
     *         an endpoint's protocol or address), an endpoint is empty, or the lease is negative
     */
    public static ComponentEntry fromWire(Entry w) {
        return fromWire(w, Endpoint::new);
    }

    /**
     * {@link #fromWire(Entry)} with each endpoint made by {@code endpoints} (protocol, address):
     * a client that reads the same instances again may hand back the endpoint it made before.
     */
    static ComponentEntry fromWire(Entry w, BiFunction<String, String, Endpoint> endpoints) {
        // the strict SOAP reader refuses these already; an Entry built in code gets the same answer
        String name = member(w.getName(), "a name", "the entry");
        member(w.getInstanceId(), "an instanceId", name);
        List<Endpoint> eps = new ArrayList<>();
        if (w.getEndpoints() != null) {
            for (EndpointInfo i : w.getEndpoints()) {
                if (i == null) {
                    throw new IllegalArgumentException("an endpoint of " + name + " is empty");
                }
                eps.add(endpoints.apply(member(i.getProtocol(), "a protocol", "an endpoint of " + name),
                        member(i.getAddress(), "an address", "an endpoint of " + name)));
            }
        }
        Instant boundAt = w.getBoundAt() == null ? null : w.getBoundAt().toInstant();
        List<String> features = new ArrayList<>();
        if (w.getFeatures() != null) {
            w.getFeatures().stream().filter(java.util.Objects::nonNull).forEach(features::add);
        }
        int lease = w.getLeaseSeconds() == null ? 0 : w.getLeaseSeconds();
        if (lease < 0) {
            throw new IllegalArgumentException("leaseSeconds of " + w.getName() + " is negative");
        }
        return new ComponentEntry(w.getName(), w.getInstanceId(), eps, w.getInterfaceSchema(), w.getInterfaceProto(),
                w.getWsdlUrl(), boundAt, features, lease);
    }

    private static String member(String value, String what, String of) {
        if (value == null) {
            throw new IllegalArgumentException(of + " has no " + what.substring(what.indexOf(' ') + 1));
        }
        return value;
    }

    public static List<ComponentEntry> fromWire(List<Entry> wire) {
        List<ComponentEntry> out = new ArrayList<>();
        if (wire != null) {
            for (Entry e : wire) {
                out.add(fromWire(e));
            }
        }
        return out;
    }
}

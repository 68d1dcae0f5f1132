package io.switchboard.registry.server;

import io.switchboard.idl.SchemaException;
import io.switchboard.idl.SchemaReader;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.wire.Entry;
import java.util.regex.Pattern;

/**
 * What the registry accepts as an entry: a valid name and instance id, 1 to {@value #MAX_ENDPOINTS}
 * endpoints with well-formed addresses, one on the failsafe protocol, a readable interface schema,
 * a bounded {@code .proto} and lease.
 */
final class EntryRules {
    static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.:-]{0,255}");
    static final Pattern INSTANCE = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    static final Pattern PROTOCOL = Pattern.compile("[a-z][a-z0-9-]{0,31}");
    static final int MAX_ENDPOINTS = 16;
    static final int MAX_PROTO_CHARS = 1 << 20;
    /** The longest lease granted: a day. */
    static final int MAX_LEASE_SECONDS = 86_400;

    private EntryRules() {
    }

    /** {@code entry} as a {@link ComponentEntry}; an {@link IllegalArgumentException} says what is wrong with it. */
    static ComponentEntry check(Entry entry) {
        if (entry == null) {
            throw new IllegalArgumentException("the entry is missing");
        }
        ComponentEntry e = Entries.fromWire(entry);   // refuses missing members by name
        if (!NAME.matcher(e.name()).matches()) {
            throw new IllegalArgumentException("name '" + abbreviate(e.name()) + "' is not a valid component name");
        }
        if (!INSTANCE.matcher(e.instanceId()).matches() || e.instanceId().equals(".") || e.instanceId().equals("..")) {
            throw new IllegalArgumentException("instance id '" + abbreviate(e.instanceId()) + "' is not valid");
        }
        if (e.endpoints().isEmpty() || e.endpoints().size() > MAX_ENDPOINTS) {
            throw new IllegalArgumentException("an entry needs 1 to " + MAX_ENDPOINTS + " endpoints");
        }
        for (Endpoint ep : e.endpoints()) {
            if (!PROTOCOL.matcher(ep.protocol()).matches()) {
                throw new IllegalArgumentException("protocol name '" + abbreviate(ep.protocol()) + "' is not valid");
            }
            String wrong = Protocols.checkAddress(ep.protocol(), ep.address());
            if (wrong != null) {
                throw new IllegalArgumentException("endpoint " + abbreviate(ep.address()) + " " + wrong);
            }
        }
        String failsafe = Protocols.failsafe().name();
        if (e.endpoint(failsafe).isEmpty()) {
            throw new IllegalArgumentException("an entry needs a " + failsafe + " endpoint: the protocol every party speaks");
        }
        if (e.interfaceSchema() != null) {
            try {
                SchemaReader.read(e.interfaceSchema());
            } catch (SchemaException ex) {
                throw new IllegalArgumentException("the interface schema cannot be read: " + ex.getMessage());
            }
        }
        if (e.interfaceProto() != null && e.interfaceProto().length() > MAX_PROTO_CHARS) {
            throw new IllegalArgumentException("the .proto is longer than " + MAX_PROTO_CHARS + " characters");
        }
        if (e.leaseSeconds() > MAX_LEASE_SECONDS) {
            throw new IllegalArgumentException("a lease is at most " + MAX_LEASE_SECONDS + " seconds");
        }
        return e;
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}

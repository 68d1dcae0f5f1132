package io.switchboard.registry;

import io.switchboard.idl.SchemaException;
import io.switchboard.idl.SchemaReader;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.wire.BindFault;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.RebindFault;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.Registry;
import io.switchboard.registry.wire.UnbindFault;
import io.switchboard.registry.wire.UnbindFaultException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry component: checks every write (credential, well-formed entry, readable interface
 * schema) and keeps entries in a {@link RegistryStore}. Lookups and listings are open.
 */
public final class RegistryService implements Registry {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryService.class);
    static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.:-]{0,255}");
    static final Pattern INSTANCE = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    static final Pattern PROTOCOL = Pattern.compile("[a-z][a-z0-9-]{0,31}");
    static final int MAX_ENDPOINTS = 16;
    static final int MAX_PROTO_CHARS = 1 << 20;

    private final RegistryStore store;
    private final byte[] secret;
    private final Clock clock;

    /**
     * @param secret the shared secret writes must carry, or null to accept unauthenticated writes
     *               (a warning is logged once)
     */
    public RegistryService(RegistryStore store, String secret, Clock clock) {
        this.store = store;
        this.secret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
        this.clock = clock;
        if (secret == null) {
            LOG.warn("registry accepts writes without a credential; set a shared secret to secure it");
        }
    }

    public RegistryStore store() {
        return store;
    }

    @Override
    public void bind(Entry entry, String credential) throws BindFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            throw bindFault("unauthorized", problem);
        }
        ComponentEntry e;
        try {
            e = validate(entry);
        } catch (IllegalArgumentException ex) {
            throw bindFault("invalid", ex.getMessage());
        }
        try {
            store.bind(e);
        } catch (RegistryStore.AlreadyBoundException ex) {
            throw bindFault("already-bound", ex.getMessage());
        }
        LOG.info("bound {} ({}) at {}", e.name(), e.instanceId(), e.endpoints());
    }

    @Override
    public void rebind(Entry entry, String credential) throws RebindFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            throw rebindFault("unauthorized", problem);
        }
        ComponentEntry e;
        try {
            e = validate(entry);
        } catch (IllegalArgumentException ex) {
            throw rebindFault("invalid", ex.getMessage());
        }
        store.rebind(e);
        LOG.info("rebound {} ({}) at {}", e.name(), e.instanceId(), e.endpoints());
    }

    @Override
    public int unbind(String name, String instanceId, String credential) throws UnbindFaultException {
        String problem = authorize(credential);
        if (problem != null) {
            UnbindFault f = new UnbindFault();
            f.setCode("unauthorized");
            f.setReason(problem);
            throw new UnbindFaultException(f);
        }
        int removed = store.unbind(name, instanceId);
        if (removed > 0) {
            LOG.info("unbound {} ({}): {} instance(s)", name, instanceId == null ? "all" : instanceId, removed);
        }
        return removed;
    }

    @Override
    public List<Entry> lookup(String name) {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.lookup(name)) {
            out.add(Entries.toWire(e));
        }
        return out;
    }

    @Override
    public List<Entry> listEntries() {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.list()) {
            out.add(Entries.toWire(e.withoutSchema()));
        }
        return out;
    }

    /** Null when the credential is acceptable, else why not. Compared in constant time. */
    private String authorize(String credential) {
        if (secret == null) {
            return null;
        }
        if (credential == null) {
            return "this registry needs a credential for writes";
        }
        if (!MessageDigest.isEqual(secret, credential.getBytes(StandardCharsets.UTF_8))) {
            return "the credential is not valid";
        }
        return null;
    }

    private ComponentEntry validate(Entry entry) {
        if (entry == null) {
            throw new IllegalArgumentException("the entry is missing");
        }
        ComponentEntry e = Entries.fromWire(entry);
        if (!NAME.matcher(e.name()).matches()) {
            throw new IllegalArgumentException("name '" + abbreviate(e.name()) + "' is not a valid component name");
        }
        if (!INSTANCE.matcher(e.instanceId()).matches()) {
            throw new IllegalArgumentException("instance id '" + abbreviate(e.instanceId()) + "' is not valid");
        }
        if (e.endpoints().isEmpty() || e.endpoints().size() > MAX_ENDPOINTS) {
            throw new IllegalArgumentException("an entry needs 1 to " + MAX_ENDPOINTS + " endpoints");
        }
        for (Endpoint ep : e.endpoints()) {
            if (!PROTOCOL.matcher(ep.protocol()).matches()) {
                throw new IllegalArgumentException("protocol name '" + abbreviate(ep.protocol()) + "' is not valid");
            }
            URI uri = ep.uri();
            if (uri.getHost() == null || uri.getPort() <= 0 || ep.address().length() > 2048) {
                throw new IllegalArgumentException("endpoint " + abbreviate(ep.address()) + " needs a host and a port");
            }
        }
        if (e.endpoint("soap").isEmpty()) {
            throw new IllegalArgumentException("an entry needs a soap endpoint: SOAP is the protocol every party speaks");
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
        return e.withBoundAt(clock.instant());
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private static BindFaultException bindFault(String code, String reason) {
        BindFault f = new BindFault();
        f.setCode(code);
        f.setReason(reason);
        return new BindFaultException(f);
    }

    private static RebindFaultException rebindFault(String code, String reason) {
        RebindFault f = new RebindFault();
        f.setCode(code);
        f.setReason(reason);
        return new RebindFaultException(f);
    }
}

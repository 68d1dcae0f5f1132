package io.switchboard.registry.server;

import io.switchboard.protocol.ServerCall;
import io.switchboard.registry.wire.Bind;
import io.switchboard.registry.wire.Lookup;
import io.switchboard.registry.wire.LookupLean;
import io.switchboard.registry.wire.Rebind;
import io.switchboard.registry.wire.Renew;
import io.switchboard.registry.wire.RenewWithStats;
import io.switchboard.registry.wire.Unbind;
import io.switchboard.registry.wire.Watch;
import io.switchboard.server.authz.CallPaths;
import java.util.ArrayList;
import java.util.List;

/**
 * The paths the authorization policy sees for the registry's operations: the operation and the
 * entry's name, so that a rule can say which identities may bind which names and who may watch
 * them. {@code /switchboard.registry.Registry/bind/team-a.billing}; the same for {@code rebind},
 * {@code unbind}, {@code renew} (with or without figures), {@code lookup} (lean or not); a {@code watch} is
 * one path per name it names, every one of which must be allowed, and a watch of every name is
 * {@code /switchboard.registry.Registry/watch}; {@code list} (every entry) is
 * {@code /switchboard.registry.Registry/list}. The same paths on SOAP and on the gRPC listener.
 * The console ({@code /console} on the registry's port) is {@code /switchboard.registry.Registry/console},
 * and shows a reader the names it may {@code list} or {@code lookup}.
 */
final class RegistryPaths implements CallPaths {
    /** The registry's gRPC service path, as its {@code .proto} names it. */
    static final String SERVICE = "/switchboard.registry.Registry/";
    static final RegistryPaths INSTANCE = new RegistryPaths();

    private RegistryPaths() {
    }

    @Override
    public String path(ServerCall call) {
        return paths(call).get(0);
    }

    @Override
    public List<String> paths(ServerCall call) {
        Object r = call.request();
        return switch (call.operation().name()) {
            case "bind" -> List.of(named("bind", r instanceof Bind b && b.getEntry() != null ? b.getEntry().getName() : null));
            case "rebind" -> List.of(named("rebind", r instanceof Rebind b && b.getEntry() != null ? b.getEntry().getName() : null));
            case "unbind" -> List.of(named("unbind", r instanceof Unbind u ? u.getName() : null));
            case "renew" -> List.of(named("renew", r instanceof Renew u ? u.getName() : null));
            case "renewWithStats" -> List.of(named("renew", r instanceof RenewWithStats u ? u.getName() : null));
            case "lookup" -> List.of(lookup(r instanceof Lookup l ? l.getName() : null));
            // the same read in another form: the same rule decides it
            case "lookupLean" -> List.of(lookup(r instanceof LookupLean l ? l.getName() : null));
            case "watch" -> watch(r instanceof Watch w ? w.getNames() : null);
            case "listEntries" -> List.of(list());
            default -> List.of(SERVICE + call.operation().name());
        };
    }

    static String lookup(String name) {
        return named("lookup", name);
    }

    /** The entry's name in a path of a named operation ({@code .../bind/team-a.billing}); null for one without. */
    static String nameOf(String path) {
        if (path == null || !path.startsWith(SERVICE)) {
            return null;
        }
        int slash = path.indexOf('/', SERVICE.length());
        return slash < 0 || slash == path.length() - 1 ? null : path.substring(slash + 1);
    }

    static String console() {
        return SERVICE + "console";
    }

    static String list() {
        return SERVICE + "list";
    }

    /** One path per name; the bare watch path for a watch of every name. */
    static List<String> watch(List<String> names) {
        if (names == null || names.isEmpty()) {
            return List.of(SERVICE + "watch");
        }
        List<String> out = new ArrayList<>(names.size());
        for (String n : names) {
            out.add(named("watch", n));
        }
        return out;
    }

    /** A request without a name (refused by the registry anyway) is matched on the bare operation. */
    private static String named(String operation, String name) {
        return name == null || name.isEmpty() ? SERVICE + operation : SERVICE + operation + "/" + name;
    }
}

package io.switchboard.server.authz;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A list of a rule's patterns compiled into one matcher, as gRPC's authorization policy defines
 * them: {@code abc} exact, {@code abc*} prefix, {@code *abc} suffix, {@code *} any non-empty
 * value. A value matches the list when it matches one of them. Exact values are looked up in a
 * hash set, so a long list of principals costs one lookup. Immutable.
 */
final class Patterns {
    private final Set<String> exact;
    private final String[] prefixes;
    private final String[] suffixes;
    private final boolean presence;

    private Patterns(Set<String> exact, String[] prefixes, String[] suffixes, boolean presence) {
        this.exact = exact;
        this.prefixes = prefixes;
        this.suffixes = suffixes;
        this.presence = presence;
    }

    static Patterns compile(List<String> patterns) {
        Set<String> exact = new HashSet<>();
        List<String> prefixes = new ArrayList<>();
        List<String> suffixes = new ArrayList<>();
        boolean presence = false;
        for (String p : patterns) {
            if (p.equals("*")) {
                presence = true;
            } else if (p.startsWith("*")) {
                suffixes.add(p.substring(1));   // as grpc-java: a leading star wins over a trailing one
            } else if (p.endsWith("*")) {
                prefixes.add(p.substring(0, p.length() - 1));
            } else {
                exact.add(p);
            }
        }
        return new Patterns(Set.copyOf(exact), prefixes.toArray(String[]::new), suffixes.toArray(String[]::new),
                presence);
    }

    /** Whether {@code value} (null: absent) matches one of the patterns. */
    boolean matches(String value) {
        if (value == null) {
            return false;
        }
        if (presence && !value.isEmpty()) {
            return true;
        }
        if (exact.contains(value)) {
            return true;
        }
        for (String p : prefixes) {
            if (value.startsWith(p)) {
                return true;
            }
        }
        for (String s : suffixes) {
            if (value.endsWith(s)) {
                return true;
            }
        }
        return false;
    }
}

package io.switchboard.server.authz;

import io.switchboard.protocol.Peer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Who may call what: a policy in gRPC's authorization policy form (gRFC A43, grpc-java's
 * {@code grpc-authz}), read and compiled once, then asked per call. Immutable; one instance
 * answers every call concurrently. API.
 *
 * <p>A call is a peer and a path, {@code /<package>.<Service>/<operation>} as the component's
 * {@code .proto} names it ({@code /switchboard.echo.Echo/echoDoubles}); a registry operation adds
 * the entry's name ({@code /switchboard.registry.Registry/bind/team-a.billing}). The deny rules
 * are asked first: one that matches denies. Then the allow rules: one that matches allows. A call
 * no rule allows is denied.
 *
 * <p>A rule matches when its {@code source.principals} and its {@code request.paths} both match;
 * an absent or empty list matches everything (anonymous callers included). In each list,
 * {@code abc} is an exact match, {@code abc*} a prefix, {@code *abc} a suffix and {@code *} any
 * non-empty value. Principals match only a caller that proved an identity ({@link Peer#authenticated()}):
 * {@code "*"} means any authenticated caller, and no principal pattern matches an anonymous one.
 *
 * <pre>{@code
 * AuthorizationPolicy policy = AuthorizationPolicy.parse("""
 *     {
 *       "name": "echo",
 *       "deny_rules": [{"name": "no-reset", "request": {"paths": ["/switchboard.echo.Echo/reset"]}}],
 *       "allow_rules": [
 *         {"name": "team-a", "source": {"principals": ["spiffe://example.org/team-a/*"]}},
 *         {"name": "anyone-reads", "request": {"paths": ["/switchboard.echo.Echo/echoDoubles"]}}
 *       ]
 *     }""");
 * Decision d = policy.evaluate(call.peer(), "/switchboard.echo.Echo/echoDoubles");
 * }</pre>
 */
public final class AuthorizationPolicy {
    private final String name;
    private final List<Rule> denyRules;
    private final List<Rule> allowRules;
    private final Rule[] deny;
    private final Rule[] allow;

    AuthorizationPolicy(String name, List<Rule> denyRules, List<Rule> allowRules) {
        this.name = Objects.requireNonNull(name);
        this.denyRules = List.copyOf(denyRules);
        this.allowRules = List.copyOf(allowRules);
        this.deny = denyRules.toArray(Rule[]::new);
        this.allow = allowRules.toArray(Rule[]::new);
    }

    /**
     * A policy built in code rather than read: the same rules as a file's (a name, at least one
     * allow rule, rule names unique in their list).
     */
    public static AuthorizationPolicy of(String name, List<Rule> denyRules, List<Rule> allowRules) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a policy has a name");
        }
        if (allowRules.isEmpty()) {
            throw new IllegalArgumentException("a policy has at least one allow rule");
        }
        for (List<Rule> list : List.of(denyRules, allowRules)) {
            if (list.stream().map(Rule::name).distinct().count() != list.size()) {
                throw new IllegalArgumentException("two rules of one list share a name: " + list);
            }
        }
        return new AuthorizationPolicy(name, denyRules, allowRules);
    }

    /**
     * The policy in {@code json}.
     *
     * @throws PolicyException when it does not parse or breaks the policy form; it names the line
     */
    public static AuthorizationPolicy parse(String json) {
        return PolicyReader.read(json);
    }

    /**
     * The policy in {@code file} (UTF-8).
     *
     * @throws PolicyException when it cannot be read, does not parse or breaks the policy form;
     *                         its message names the file and the line
     */
    public static AuthorizationPolicy read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | java.io.UncheckedIOException e) {
            throw new PolicyException(0, 0, "cannot read " + file + ": " + e.getMessage());
        }
        try {
            return parse(text);
        } catch (PolicyException e) {
            throw new PolicyException(e.line(), e.column(), file + ": " + e.reason());
        }
    }

    /** The policy's {@code name}. */
    public String name() {
        return name;
    }

    public List<Rule> denyRules() {
        return denyRules;
    }

    public List<Rule> allowRules() {
        return allowRules;
    }

    /** Whether {@code peer} may call {@code path}, and which rule decided it. */
    public Decision evaluate(Peer peer, String path) {
        String principal = peer.authenticated() ? peer.principal() : null;
        for (Rule r : deny) {
            if (r.matches(principal, path)) {
                return new Decision(false, name, r.name);
            }
        }
        for (Rule r : allow) {
            if (r.matches(principal, path)) {
                return new Decision(true, name, r.name);
            }
        }
        return new Decision(false, name, null);
    }

    @Override
    public String toString() {
        return "AuthorizationPolicy[" + name + ": " + denyRules.size() + " deny, " + allowRules.size() + " allow]";
    }

    /** One rule: its patterns as written, and compiled. Immutable. */
    public static final class Rule {
        private final String name;
        private final List<String> principals;
        private final List<String> paths;
        private final Patterns principalPatterns;
        private final Patterns pathPatterns;

        /**
         * @param principals the {@code source.principals} patterns; empty: any caller
         * @param paths      the {@code request.paths} patterns; empty: any path
         */
        public Rule(String name, List<String> principals, List<String> paths) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("a rule has a name");
            }
            this.name = name;
            this.principals = List.copyOf(principals);
            this.paths = List.copyOf(paths);
            this.principalPatterns = this.principals.isEmpty() ? null : Patterns.compile(this.principals);
            this.pathPatterns = this.paths.isEmpty() ? null : Patterns.compile(this.paths);
        }

        public String name() {
            return name;
        }

        public List<String> principals() {
            return principals;
        }

        public List<String> paths() {
            return paths;
        }

        /** Whether the rule matches a caller proved as {@code principal} (null: anonymous) calling {@code path}. */
        boolean matches(String principal, String path) {
            return (principalPatterns == null || principalPatterns.matches(principal))
                    && (pathPatterns == null || pathPatterns.matches(path));
        }

        @Override
        public String toString() {
            return name + "[principals " + principals + ", paths " + paths + "]";
        }
    }

    /**
     * What the policy decided for one call.
     *
     * @param allowed whether the call may go on
     * @param policy  the policy's name
     * @param rule    the rule that decided; null when none matched (denied by default)
     */
    public record Decision(boolean allowed, String policy, String rule) {
        /** Why, in a few words: {@code allowed by team-a}, {@code denied by no-reset}, {@code denied: no rule allows it}. */
        public String reason() {
            return rule == null ? "denied: no rule of policy " + policy + " allows it"
                    : (allowed ? "allowed by rule " : "denied by rule ") + rule + " of policy " + policy;
        }
    }
}

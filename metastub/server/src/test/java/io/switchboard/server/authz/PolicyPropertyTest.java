package io.switchboard.server.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchboard.protocol.Peer;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The compiled policy against a naive reference that reads the same JSON with Gson's tree model
 * and applies gRFC A43's rules literally, on random policies, callers and paths drawn from a
 * small alphabet so that patterns and values often meet.
 */
class PolicyPropertyTest {
    static final List<String> PRINCIPALS = List.of("a", "ab", "abc", "b", "ba", "spiffe://x/a", "spiffe://x/b");
    static final List<String> PATHS = List.of("/p.S/a", "/p.S/ab", "/p.S/b", "/q.T/a", "/q.T/ba");

    @Property(tries = 500)
    void theCompiledPolicyDecidesAsTheReference(@ForAll("policies") String json, @ForAll("peers") Peer peer,
                                                 @ForAll("paths") String path) {
        AuthorizationPolicy.Decision d = AuthorizationPolicy.parse(json).evaluate(peer, path);
        Reference expected = reference(json, peer, path);
        assertEquals(expected.allowed, d.allowed(), json + "\n" + peer + " " + path);
        assertEquals(expected.rule, d.rule(), json + "\n" + peer + " " + path);
    }

    @Provide
    static Arbitrary<String> policies() {
        Arbitrary<List<String>> deny = rule().list().ofMaxSize(3);
        Arbitrary<List<String>> allow = rule().list().ofMinSize(1).ofMaxSize(3);
        return Combinators.combine(deny, allow, Arbitraries.of(true, false)).as((d, a, withDeny) -> {
            StringBuilder b = new StringBuilder("{\"name\": \"random\"");
            if (withDeny) {
                b.append(", \"deny_rules\": [").append(named(d, "d")).append("]");
            }
            b.append(", \"allow_rules\": [").append(named(a, "a")).append("]}");
            return b.toString();
        });
    }

    private static String named(List<String> rules, String prefix) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            out.add(rules.get(i).replace("NAME", prefix + i));
        }
        return String.join(", ", out);
    }

    private static Arbitrary<String> rule() {
        Arbitrary<String> pattern = Arbitraries.of(PRINCIPALS).flatMap(p -> Arbitraries.of(p, p + "*", "*" + p,
                "*", p.substring(0, 1) + "*", "*" + p.substring(p.length() - 1)));
        Arbitrary<String> pathPattern = Arbitraries.of(PATHS).flatMap(p -> Arbitraries.of(p, p + "*", "*" + p,
                "*", p.substring(0, 4) + "*", "*" + p.substring(p.length() - 2)));
        Arbitrary<String> source = pattern.list().ofMaxSize(3).map(PolicyPropertyTest::quoted)
                .map(l -> "\"source\": {\"principals\": " + l + "}").injectNull(0.3);
        Arbitrary<String> request = pathPattern.list().ofMaxSize(3).map(PolicyPropertyTest::quoted)
                .map(l -> "\"request\": {\"paths\": " + l + "}").injectNull(0.3);
        return Combinators.combine(source, request).as((s, r) -> "{\"name\": \"NAME\""
                + (s == null ? "" : ", " + s) + (r == null ? "" : ", " + r) + "}");
    }

    private static String quoted(List<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a.toString();
    }

    @Provide
    static Arbitrary<Peer> peers() {
        Arbitrary<Peer> known = Arbitraries.of(PRINCIPALS).flatMap(p -> Arbitraries.of(Peer.Authentication.MUTUAL_TLS,
                Peer.Authentication.TOKEN, Peer.Authentication.UNIX_SOCKET, Peer.Authentication.IN_PROCESS)
                .map(a -> Peer.of(p, a, null)));
        return Arbitraries.frequencyOf(Tuple.of(4, known), Tuple.of(1, Arbitraries.just(Peer.anonymous("127.0.0.1:1"))));
    }

    @Provide
    static Arbitrary<String> paths() {
        return Arbitraries.of(PATHS);
    }

    record Reference(boolean allowed, String rule) {
    }

    /** A43 as written: deny rules, then allow rules, then deny; each rule's lists ORed, source and request ANDed. */
    static Reference reference(String json, Peer peer, String path) {
        JsonObject policy = JsonParser.parseString(json).getAsJsonObject();
        if (policy.has("deny_rules")) {
            for (JsonElement rule : policy.getAsJsonArray("deny_rules")) {
                if (ruleMatches(rule.getAsJsonObject(), peer, path)) {
                    return new Reference(false, rule.getAsJsonObject().get("name").getAsString());
                }
            }
        }
        for (JsonElement rule : policy.getAsJsonArray("allow_rules")) {
            if (ruleMatches(rule.getAsJsonObject(), peer, path)) {
                return new Reference(true, rule.getAsJsonObject().get("name").getAsString());
            }
        }
        return new Reference(false, null);
    }

    private static boolean ruleMatches(JsonObject rule, Peer peer, String path) {
        boolean source = true;
        if (rule.has("source")) {
            JsonArray principals = rule.getAsJsonObject("source").getAsJsonArray("principals");
            if (!principals.isEmpty()) {
                source = false;
                for (JsonElement p : principals) {
                    // a principal pattern only ever matches a caller that proved an identity
                    source |= peer.authenticated() && patternMatches(p.getAsString(), peer.principal());
                }
            }
        }
        boolean request = true;
        if (rule.has("request")) {
            JsonArray paths = rule.getAsJsonObject("request").getAsJsonArray("paths");
            if (!paths.isEmpty()) {
                request = false;
                for (JsonElement p : paths) {
                    request |= patternMatches(p.getAsString(), path);
                }
            }
        }
        return source && request;
    }

    private static boolean patternMatches(String pattern, String value) {
        if (pattern.equals("*")) {
            return !value.isEmpty();
        }
        if (pattern.startsWith("*")) {
            return value.endsWith(pattern.substring(1));
        }
        if (pattern.endsWith("*")) {
            return value.startsWith(pattern.substring(0, pattern.length() - 1));
        }
        return value.equals(pattern);
    }
}
